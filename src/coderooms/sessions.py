"""The modes of the one ``focus`` verb, for the CLI and the MCP server alike.

:func:`focus_call` loads the agent session's working set from the store, runs the mode
(``set`` and ``check`` through the workspace's focus runtime, the rest on the working
set itself), saves what changed and returns the answer's wire form. Without a session,
``set`` and ``check`` answer as a stateless focus does.

A call that changes a session saves only if nobody changed it since the call read it
(:meth:`~coderooms.store.worksets.WorkingSets.save_if`); otherwise it reads it again and
redoes its work on what it finds, up to :data:`SAVE_ATTEMPTS` times. Two hosts updating
one session at once both take effect, one after the other.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Literal, Protocol, TypeVar

from coderooms.focus.discussion import code_mentions
from coderooms.focus.errors import (
    InvalidMode,
    InvalidSession,
    MissingArgument,
    NotInWorkingSet,
    NotPinned,
    SessionContended,
    TooManyPins,
    UnknownPinTarget,
    UnknownSession,
    UnusedArgument,
)
from coderooms.focus.runtime import Discussed, checked_budget, checked_goal
from coderooms.focus.session import check_session_budget, session_status
from coderooms.focus.workingset import (
    DEFAULT_SESSION_BUDGET,
    MAX_PINS,
    MAX_SESSION_ID_CHARS,
    WorkingSet,
    dropped,
    named_in_post,
    with_pins,
    without_pins,
)

if TYPE_CHECKING:  # the store package is loaded by whoever hands one in
    from coderooms.store.worksets import WorkingSets

__all__ = [
    "MODES",
    "SESSION_MODES",
    "FocusMode",
    "checked_arguments",
    "checked_session",
    "focus_call",
]

FocusMode = Literal["set", "check", "status", "pin", "unpin", "drop", "reset"]
MODES: tuple[FocusMode, ...] = ("set", "check", "status", "pin", "unpin", "drop", "reset")
SESSION_MODES = frozenset({"status", "pin", "unpin", "drop", "reset"})
"""Modes that act on a working set, so need a session."""
NODE_MODES = frozenset({"pin", "unpin", "drop"})  # the modes a node argument is for

T = TypeVar("T")

SAVE_ATTEMPTS = 5
"""Times a call that changes a session reads it, works on it and tries to save it, while
other calls keep changing it first, before it gives up (:class:`SessionContended`)."""


class SessionWorkspace(Protocol):
    """The face of :class:`coderooms.workspace.Workspace` focus sessions use."""

    def focus(
        self,
        goal: str,
        budget: int = ...,
        mode: str = ...,
        discussed: Discussed = ...,
        elsewhere: Mapping[str, str] | None = ...,
    ) -> Any: ...

    def focus_session(
        self,
        state: WorkingSet,
        goal: str,
        budget: int = ...,
        mode: str = ...,
        discussed: Discussed = ...,
        elsewhere: Mapping[str, str] | None = ...,
    ) -> Any: ...

    def focus_engine(self) -> Any: ...


InWorkspace = Callable[[Callable[[SessionWorkspace], T]], Awaitable[T]]
"""Runs a call on the workspace the way the host wants (on a worker thread, under its
lock) and hands back its value."""


def checked_session(session: object) -> str:
    if (
        not isinstance(session, str)
        or not session.strip()
        or len(session) > MAX_SESSION_ID_CHARS
        or any(ord(c) < 32 for c in session)
    ):
        raise InvalidSession(session, MAX_SESSION_ID_CHARS)
    return session


async def _existing(sets: WorkingSets, agent: str, session: str) -> WorkingSet:
    found = await sets.load(agent, session)
    if found is None:
        raise UnknownSession(session, agent)
    return found


async def _updated(
    sets: WorkingSets,
    agent: str,
    session: str,
    change: Callable[[WorkingSet | None], Awaitable[tuple[WorkingSet | None, T]]],
    first: WorkingSet | None = None,
) -> T:
    """Run ``change`` on the session's stored working set and save what it returns (None:
    nothing to save) only if the session is still as ``change`` saw it; on a change
    made meanwhile, read it again and run ``change`` anew. ``first``: the working set as
    the caller just read it, for the first attempt."""
    for attempt in range(SAVE_ATTEMPTS):
        before = first if attempt == 0 and first is not None else await sets.load(agent, session)
        after, out = await change(before)
        if after is None or after == before or await sets.save_if(after, before):
            return out
    raise SessionContended(session, agent, SAVE_ATTEMPTS)


def _summary(mode: str, done: str, ws: WorkingSet | None, engine: Any) -> dict[str, Any]:
    return {
        "mode": mode,
        "done": done,
        "working_set": None if ws is None else session_status(engine, ws),
    }


def checked_arguments(
    mode: str,
    session: str | None,
    goal: str | None,
    budget: int,
    session_budget: int | None,
    node: str | None = None,
) -> None:
    """Refuse what :func:`focus_call` would refuse of its arguments alone, before a host
    opens anything for the call (a first call indexes the repository; a session's
    first call creates its store), and what it would silently ignore."""
    if mode not in MODES:
        raise InvalidMode(mode)
    if node is not None and mode not in NODE_MODES:
        raise UnusedArgument("a node", "in the modes pin, unpin and drop")
    if session_budget is not None:
        if session is None:
            raise UnusedArgument("a session budget", "with a session")
        check_session_budget(session_budget)
    if session is not None:
        checked_session(session)
    if mode in ("set", "check"):
        if goal is None:
            raise MissingArgument(mode, "a goal")
        checked_goal("goal", goal)
        checked_budget(budget)


async def focus_call(
    sets: WorkingSets | None,
    in_workspace: InWorkspace[Any],
    agent: str,
    mode: str,
    *,
    session: str | None = None,
    goal: str | None = None,
    budget: int = 8000,
    node: str | None = None,
    session_budget: int | None = None,
    ignored_limit: int | None = None,
    desk_pins: tuple[str, ...] = (),
    discussed: Discussed = (),
    elsewhere: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """One ``focus`` call in ``mode`` for ``agent`` (see the module docstring).

    ``discussed`` is the code a desk's messages about the goal name (node id, why): it
    gains in the ranking of set and check. ``elsewhere`` is code a teammate holds (node
    id to who holds it) that set and check do not send.

    ``desk_pins`` are code nodes pinned on the desk the call is about (``!pin @node``):
    in a session they count as pinned for the call (never paged out) without becoming
    the session's own pins, so unpinning them on the desk lets them go."""
    checked_arguments(mode, session, goal, budget, session_budget, node)
    if mode in ("set", "check"):
        assert goal is not None
        if session is None:
            text = goal
            plain: dict[str, Any] = await in_workspace(
                lambda ws: ws.focus(
                    text, budget=budget, mode=mode, discussed=discussed, elsewhere=elsewhere
                ).to_json(ignored_limit)
            )
            return plain
    if session is None:
        raise MissingArgument(mode, "a session (the working set it acts on)")
    if sets is None:
        raise MissingArgument(mode, "a store to keep the session in")
    if mode in ("set", "check"):
        assert goal is not None
        text = goal

        async def focused(found: WorkingSet | None) -> tuple[WorkingSet | None, Any]:
            state = found
            if state is None:
                state = WorkingSet(agent, session, session_budget or DEFAULT_SESSION_BUDGET)
            elif session_budget is not None:
                state = replace(state, budget=session_budget)
            borrowed = [n for n in dict.fromkeys(desk_pins) if n not in state.pinned_nodes]
            current = with_pins(state, nodes=borrowed) if borrowed else state
            answer = await in_workspace(
                lambda ws: ws.focus_session(
                    current,
                    text,
                    budget=budget,
                    mode=mode,
                    discussed=discussed,
                    elsewhere=elsewhere,
                )
            )
            if mode != "set":
                return None, answer
            return (
                without_pins(answer.state, nodes=borrowed) if borrowed else answer.state
            ), answer

        answer = await _updated(sets, agent, session, focused)
        out: dict[str, Any] = answer.to_json(ignored_limit)
        return out
    if mode == "reset":
        if not await sets.delete(agent, session):
            raise UnknownSession(session, agent)
        return _summary(mode, f"focus session {session!r} forgotten", None, None)
    if mode == "status":
        state = await _existing(sets, agent, session)  # an unknown one: before any index
        engine = await in_workspace(lambda ws: ws.focus_engine())
        return _summary(mode, f"focus session {session!r}", state, engine)
    if mode in ("unpin", "drop"):
        await _existing(sets, agent, session)  # an unknown one: before any index
    engine = await in_workspace(lambda ws: ws.focus_engine())

    def changed(state: WorkingSet) -> tuple[WorkingSet, str]:
        if mode == "pin":
            if len(state.pinned_nodes) + len(state.pinned_goals) >= MAX_PINS:
                raise TooManyPins(MAX_PINS)
            if node is not None:
                if engine.graph.node(node) is None:
                    raise UnknownPinTarget(node)
                return with_pins(state, nodes=[node]), f"pinned {node}"
            if goal is not None:
                return with_pins(state, goals=[goal]), "pinned the goal"
            raise MissingArgument(mode, "a node id or a goal to pin")
        if mode == "unpin":
            if node is not None:
                if node not in state.pinned_nodes:
                    raise NotPinned(node, session)
                return without_pins(state, nodes=[node]), f"unpinned {node}"
            if goal is not None:
                if goal not in state.pinned_goals:
                    raise NotPinned(goal, session)
                return without_pins(state, goals=[goal]), "unpinned the goal"
            raise MissingArgument(mode, "a node id or a goal to unpin")
        if node is None:  # drop
            raise MissingArgument(mode, "the id of a resident node")
        if state.get(node) is None:
            raise NotInWorkingSet(node, session)
        return dropped(without_pins(state, nodes=[node]), [node]), f"dropped {node}"

    async def change(found: WorkingSet | None) -> tuple[WorkingSet | None, tuple[WorkingSet, str]]:
        if found is None:
            if mode != "pin":  # only a pin may start a session
                raise UnknownSession(session, agent)
            found = WorkingSet(agent, session, session_budget or DEFAULT_SESSION_BUDGET)
        state, done = changed(found)
        return state, (state, done)

    state, done = await _updated(sets, agent, session, change)
    return _summary(mode, done, state, engine)


def session_lines(out: dict[str, Any]) -> list[str]:
    """Readable lines for the session part of a set or check answer: resident, page
    out, the session budget and the signals (none when the answer has no session)."""
    session = out.get("session")
    if session is None:
        return []
    budget = session["budget"]
    lines = [
        f"Session {session['id']} (call {session['call']}): {budget['used']}/"
        f"{budget['limit']} tokens resident, {budget['left']} left; "
        f"{session['tokens_saved']} tokens not resent"
    ]
    for kept in out["resident"]:
        lines.append(
            f"- resident {kept['id']} (sent by call {kept['loaded_by']}, "
            f"{kept['tokens_saved']} tokens saved)"
        )
    for gone in out["page_out"]:
        lines.append(f"- page out {gone['id']} (heat {gone['heat']}): {gone['why']}")
    signals = out["signals"]
    if signals["thrash"] is not None:
        lines.append(signals["thrash"]["why"])
    for stale in signals["stale"]:
        resent = "new code sent" if stale["resent"] else "not resent"
        lines.append(
            f"stale: {stale['id']} {stale['why']} (sent by call {stale['loaded_by']}; {resent})"
        )
    if signals["goal_drift"] is not None:
        lines.append("goal drift: " + signals["goal_drift"]["why"])
    return lines


def working_set_lines(out: dict[str, Any]) -> list[str]:
    """Readable lines for status, pin, unpin, drop and reset."""
    lines = [out["done"]]
    ws = out.get("working_set")
    if ws is None:
        return lines
    budget = ws["budget"]
    lines.append(
        f"{len(ws['resident'])} resident nodes after {ws['calls']} calls: {budget['used']}/"
        f"{budget['limit']} tokens, {budget['left']} left"
    )
    for node in ws["resident"]:
        pin = " pinned" if node["pinned"] else ""
        lines.append(
            f"- {node['heat']:.4f} heat {node['tokens']:>6} tok {node['render']:<8} "
            f"{node['id']} (call {node['loaded_by']}, {node['accesses']} accesses){pin}"
        )
    pins = ws["pins"]
    lines.append(f"pins: {len(pins['nodes'])} nodes, {len(pins['goals'])} goals")
    lines += [f"- node {n}" for n in pins["nodes"]] + [f"- goal {g}" for g in pins["goals"]]
    for stale in ws["stale"]:
        lines.append(f"stale: {stale['id']} {stale['why']}")
    return lines


async def ground_named_residents(sets: WorkingSets | None, agent: str, content: str) -> int:
    """An agent's post names code it holds: each of its sessions' residents the post
    names (by id, qualified name, or a name spelled as code) is grounded once more.
    Returns how many sessions changed."""
    if sets is None:
        return 0
    words = code_mentions(content)

    async def grounded(found: WorkingSet | None) -> tuple[WorkingSet | None, bool]:
        after = None if found is None else named_in_post(found, words)
        return (None, False) if after is None or after is found else (after, True)

    changed = 0
    for ws in await sets.of_agents([agent]):
        changed += await _updated(sets, agent, ws.session, grounded, first=ws)
    return changed
