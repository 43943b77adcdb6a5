"""``coderooms focus``, ``seek``, ``impact`` and ``bench localize``.

Thin calls into :class:`coderooms.workspace.Workspace` (which wires the focus runtime to
the token counter and the embedding model). ``focus`` and ``seek`` bring the index up to
date first. Text output is for people; ``--json`` prints one JSON document.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import click

from coderooms.cli.app import fail, json_option, run, run_unawaited, store_of
from coderooms.cli.progress import PhaseProgress
from coderooms.errors import CoderoomsError
from coderooms.focus.impact import MAX_IMPACT_DEPTH, checked_depth
from coderooms.focus.runtime import (
    DEFAULT_BUDGET,
    DEFAULT_SEEK_LIMIT,
    Discussed,
    checked_goal,
    checked_limit,
)
from coderooms.focus.workingset import DEFAULT_SESSION_BUDGET
from coderooms.index.discover import INDEX_DIR, INDEX_FILE
from coderooms.index.errors import NotInRepository
from coderooms.sessions import (
    MODES,
    checked_arguments,
    focus_call,
    session_lines,
    working_set_lines,
)
from coderooms.workspace import Workspace

__all__ = ["register", "focus", "seek", "impact", "bench"]

IGNORED_SHOWN = 10  # how many ignored entries the text output lists
WHY_CHARS = 90
BENCH_SCRIPT = Path("benchmarks") / "localize.py"
AGENT_ENV = "CODEROOMS_AGENT"
CLI_AGENT = "cli"
"""The agent a command-line focus session belongs to when none is named."""


def register(group: click.Group) -> None:
    """Attach ``focus``, ``seek``, ``impact`` and the ``bench`` group to ``group``."""
    group.add_command(focus)
    group.add_command(seek)
    group.add_command(impact)
    group.add_command(bench)


def indexed_workspace(repo: str | None, prepare_focus: bool = False) -> Workspace:
    """The workspace of ``repo`` (None: the repository the working directory is in, see
    :func:`repository_root`), its index brought up to date, showing long work on
    stderr (a first index, or code to count and embed). An index the disk still matches
    (see :meth:`Workspace.refresh`) is not run again: a check costs a ``stat`` a file.
    ``prepare_focus`` when a focus engine follows (see :meth:`Workspace.index`). What
    the engine keeps for the next process is written while this one answers."""
    ws = Workspace.open(repo if repo is not None else repository_root(os.getcwd()))
    command = click.get_current_context(silent=True)
    if command is not None:  # closed with the command (its log copied, its files kept)
        command.call_on_close(ws.close)
    ws.report = PhaseProgress()
    ws.keep_aside = True  # a one-shot command: the process ends with the files written
    ws.refresh(prepare_focus=prepare_focus)
    return ws


_workspace = indexed_workspace


def repository_root(start: str) -> str:
    """The nearest directory at or above ``start`` that is a repository's root (it holds
    ``.git``) or already has an index. A command run in a subdirectory of a repository
    works on the whole repository, as git does, instead of indexing the subdirectory
    alone as a repository of its own; outside any, it is refused (:class:`NotInRepository`)
    rather than indexing whatever directory it was run in."""
    here = os.path.abspath(start)
    probe = here
    while True:
        if os.path.exists(os.path.join(probe, ".git")) or os.path.isfile(
            os.path.join(probe, INDEX_DIR, INDEX_FILE)
        ):
            return probe
        parent = os.path.dirname(probe)
        if parent == probe:
            raise NotInRepository(here)
        probe = parent


def _shown(name: str) -> str:
    """A node id or path as one line of text: a line break or another control character
    in a file's name (git allows them) is written as its escape, so it cannot break the
    line it is listed on."""
    if name.isprintable():
        return name
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode() for c in name)


def _clip(text: str, width: int = WHY_CHARS) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def _print_focus(data: dict[str, Any], show_context: bool) -> None:
    budget = data["budget"]
    click.echo(f"focus: {len(data['focus_set'])} items, {budget['used']}/{budget['limit']} tokens")
    for item in data["focus_set"]:
        click.echo(
            f"  {item['salience']:.4f} {item['tokens']:>6} tok  {item['render']:<8} "
            f"{_shown(item['id'])}:{item['start_line']}-{item['end_line']}"
        )
        click.echo(f"        why: {_clip(item['why'])}")
    ignored = data["ignored"]
    click.echo(f"ignored: {len(ignored)}")
    for entry in ignored[:IGNORED_SHOWN]:
        detail = f" ({_shown(entry['detail'])})" if entry.get("detail") else ""
        click.echo(f"  {entry['salience']:.4f} {entry['why']:<14} {_shown(entry['what'])}{detail}")
    if len(ignored) > IGNORED_SHOWN:
        click.echo(f"  … {len(ignored) - IGNORED_SHOWN} more (see --json)")
    verdict = data["sufficiency"]
    click.echo(
        f"sufficiency: {verdict['state']} "
        f"(captured {verdict['captured_salience_mass']:.0%}): {verdict['why']}"
    )
    for line in session_lines(data):
        click.echo(line)
    for line in _team_lines(data):
        click.echo(line)
    if data.get("discussion") is not None:
        from coderooms.mcp.render import render_discussion

        click.echo("")
        click.echo(render_discussion(data["discussion"]))
    if show_context and data.get("context"):
        click.echo("")
        click.echo(data["context"], nl=False)


def _team_lines(data: dict[str, Any]) -> list[str]:
    """The team's lines (see ``mcp.render.team_lines``), imported only when there is a
    team: the MCP rendering brings pydantic, which a plain focus does not need."""
    if data.get("team") is None:
        return []
    from coderooms.mcp.render import team_lines

    return team_lines(data)


@click.command()
@click.argument("goal", required=False)
@click.option(
    "--repo",
    default=None,
    type=click.Path(),
    help="Repository root (default: the repository the working directory is in).",
)
@click.option(
    "--budget",
    default=DEFAULT_BUDGET,
    show_default=True,
    type=int,
    help="Token budget for the focus set.",
)
@click.option(
    "--mode",
    default="set",
    show_default=True,
    type=click.Choice(list(MODES)),
    help="set: the focus set and its code; check: the verdict without the code; "
    "status, pin, unpin, drop, reset: the --session working set.",
)
@click.option(
    "--session",
    default=None,
    metavar="ID",
    help="A focus session: what it already holds is named, not resent, and kept in the "
    "store (--db) between calls.",
)
@click.option(
    "--agent",
    "agent_id",
    default=CLI_AGENT,
    show_default=True,
    envvar=AGENT_ENV,
    metavar="ID",
    help="The agent the session belongs to (default $CODEROOMS_AGENT, else cli).",
)
@click.option("--node", default=None, metavar="ID", help="The node to pin, unpin or drop.")
@click.option(
    "--session-budget",
    default=None,
    type=int,
    help=f"Tokens the session may hold resident (default {DEFAULT_SESSION_BUDGET}).",
)
@click.option(
    "--desk",
    "desk_ref",
    metavar="DESK",
    help="Also bring what this desk discussed about GOAL (messages outside its newest "
    "window), in the same budget, and rank the code those messages name higher; reads "
    "the store --db names.",
)
@click.option(
    "--team",
    type=click.Choice(["prefer", "avoid"]),
    default=None,
    help="With --desk: prefer the code the desk's other members hold in their focus "
    "sessions (it ranks higher) or avoid it (it is not sent; the ignored tail names who "
    "holds it).",
)
@json_option("Print one JSON document.")
@click.option(
    "--context/--no-context",
    "show_context",
    default=True,
    show_default=True,
    help="In set mode, print the focus set's code after the list (text output); "
    "--no-context prints the list only.",
)
@click.pass_context
def focus(
    ctx: click.Context,
    goal: str | None,
    repo: str | None,
    budget: int,
    mode: str,
    session: str | None,
    agent_id: str,
    node: str | None,
    session_budget: int | None,
    desk_ref: str | None,
    team: str | None,
    as_json: bool,
    show_context: bool,
) -> None:
    """The code worth loading for GOAL within a token budget, what was left out and why,
    and whether that is enough. Indexes REPO first when needed. With --session, focus
    remembers what the session was sent: status lists it with its heat, pin keeps a node
    (--node) or the goal from paging out, drop and reset let go of it. With --desk (modes
    set and check), what the desk said about the goal comes too, in the same budget."""
    try:
        if team is not None:
            from coderooms.deskrecall import checked_team

            checked_team(team, desk_ref)
        # refused before a store or an index is opened for the call
        checked_arguments(mode, session, goal, budget, session_budget, node)
        if session is not None or team is not None:  # kept under it, or looked up by it
            from coderooms.store.sql import require_identifier

            require_identifier("the agent id (--agent)", agent_id)
        opened: list[Workspace] = []

        async def in_workspace(call: Any) -> Any:
            if not opened:
                opened.append(_workspace(repo, prepare_focus=True))
            return call(opened[0])

        sets = store_of(ctx).working_sets() if session is not None else None

        async def code(
            code_budget: int,
            desk_pins: tuple[str, ...] = (),
            discussed: Discussed = (),
            elsewhere: Mapping[str, str] | None = None,
        ) -> dict[str, Any]:
            out: dict[str, Any] = await focus_call(
                sets,
                in_workspace,
                agent_id,
                mode,
                session=session,
                goal=goal,
                budget=code_budget,
                node=node,
                session_budget=session_budget,
                desk_pins=desk_pins,
                discussed=discussed,
                elsewhere=elsewhere,
            )
            return out

        if desk_ref is None:
            # Without a session's store nothing is awaited: no event loop (see run_unawaited)
            data = (run if sets is not None else run_unawaited)(code(budget))
        else:
            data = run(
                _focus_with_desk(
                    ctx, in_workspace, code, goal, budget, mode, desk_ref, agent_id, team
                )
            )
    except CoderoomsError as err:
        fail(err)
    if as_json:
        click.echo(json.dumps(data, indent=2))
    elif mode in ("set", "check"):
        _print_focus(data, show_context and mode == "set")
    else:
        for line in [*working_set_lines(data), *_team_lines(data)]:
            click.echo(line)


async def _focus_with_desk(
    ctx: click.Context,
    in_workspace: Any,
    code: Any,
    goal: str | None,
    budget: int,
    mode: str,
    desk_ref: str,
    agent_id: str,
    team: str | None,
) -> dict[str, Any]:
    from coderooms.deskrecall import DeskRecall, focus_with_desk

    store = store_of(ctx, existing=True, read_only=True)
    desk = (await store.desks()).resolve(desk_ref)
    return await focus_with_desk(
        store,
        desk,
        agent_id,
        goal,
        budget,
        mode,
        code,
        DeskRecall.with_model,
        in_workspace,
        team,
    )


@click.command()
@click.argument("query")
@click.option(
    "--repo",
    default=None,
    type=click.Path(),
    help="Repository root (default: the repository the working directory is in).",
)
@click.option(
    "--limit",
    default=DEFAULT_SEEK_LIMIT,
    show_default=True,
    type=int,
    help="How many ranked nodes to list.",
)
@json_option("Print one JSON document.")
def seek(query: str, repo: str | None, limit: int, as_json: bool) -> None:
    """Files and symbols ranked by salience for QUERY (no code, no budget)."""
    try:
        checked_limit(limit)  # before a first seek indexes the repository
        checked_goal("query", query)
        result = _workspace(repo, prepare_focus=True).seek(query, limit=limit)
    except CoderoomsError as err:
        fail(err)
    data = result.to_json()
    if as_json:
        click.echo(json.dumps(data, indent=2))
        return
    for item in data["results"]:
        click.echo(
            f"  {item['salience']:.4f}  {_shown(item['id'])}:{item['start_line']}-{item['end_line']}"
        )
        click.echo(f"          why: {_clip(item['why'])}")
    click.echo(f"ignored: {len(data['ignored'])} more above the relevance floor")
    verdict = data["sufficiency"]
    click.echo(f"sufficiency: {verdict['state']}: {verdict['why']}")


@click.command()
@click.argument("target")
@click.option(
    "--repo",
    default=None,
    type=click.Path(),
    help="Repository root (default: the repository the working directory is in).",
)
@click.option(
    "--depth",
    default=2,
    show_default=True,
    type=int,
    help=f"How many dependency steps to follow (1-{MAX_IMPACT_DEPTH}).",
)
@json_option("Print one JSON document.")
def impact(target: str, repo: str | None, depth: int, as_json: bool) -> None:
    """What depends on TARGET (a path, a symbol id, a qualified or plain name): callers,
    importers, subclasses and tests, up to --depth steps away. A name several symbols
    carry lists them, each with its direct dependents, to ask again by id."""
    try:
        checked_depth(depth)  # before a first impact indexes the repository
        result = _workspace(repo).impact(target, depth=depth)
    except CoderoomsError as err:
        fail(err)
    data: dict[str, Any] = result.to_json()
    if as_json:
        click.echo(json.dumps(data, indent=2))
        return
    if data["target"] is None:
        from coderooms.mcp.render import candidates_text  # pydantic: only when asked

        click.echo(candidates_text(data))
        return
    by_name = sum(1 for item in data["impacted"] if item["edge"] == "name_match")
    click.echo(
        f"impact of {data['target']} (depth {depth}): {len(data['impacted'])} dependents"
        f" ({len(data['impacted']) - by_name} resolved, {by_name} by name only)"
    )
    for item in data["impacted"]:
        click.echo(f"  {item['distance']}  {_shown(item['id'])}  ({item['why']}, {item['edge']})")
    if data["ignored"]:
        click.echo(f"ignored: {len(data['ignored'])}")
        for entry in data["ignored"][:IGNORED_SHOWN]:
            click.echo(f"  {entry['why']:<13} {_shown(entry['what'])}")


@click.group()
def bench() -> None:
    """Measure coderooms on public benchmark data (development use)."""


@bench.command(context_settings={"ignore_unknown_options": True})
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
def localize(args: tuple[str, ...]) -> None:
    """Focus localization quality on the SWE-bench development set, beside BM25 (runs
    benchmarks/localize.py from a source checkout; pass its options after the command,
    e.g. --repo psf/requests, --cv, --without semantic, --out results.json)."""
    import importlib.util

    script = Path.cwd() / BENCH_SCRIPT
    if not script.is_file():
        fail(f"{BENCH_SCRIPT} not found here; run this from a coderooms source checkout")
    spec = importlib.util.spec_from_file_location("coderooms_localize", script)
    if spec is None or spec.loader is None:
        fail(f"cannot load {script}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up here
    spec.loader.exec_module(module)
    status = module.main(list(args))
    if status:
        raise SystemExit(status)
