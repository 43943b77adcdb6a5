"""What every MCP tool does, independent of the transport that carried the call.

A :class:`RoomService` answers for one caller (an agent id) at a time: it checks that
the caller is an active agent, that it belongs to the desk it names (General: every
active agent), and then calls the same library functions the CLI calls. Results are the
typed models of :mod:`coderooms.mcp.schemas`; refusals are
:class:`~coderooms.mcp.errors.ServeError` subclasses whose message says why.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass, replace
from typing import Any, Literal, Protocol, TypeVar

import anyio.to_thread

from coderooms.codepins import (
    NodeState,
    check_node_pins,
    node_pins_in,
    node_states,
    snapshot_node_pins,
)
from coderooms.deskrecall import DeskRecall, checked_team, focus_with_desk
from coderooms.errors import UnknownDesk
from coderooms.focus.envelope import enveloped_impact, enveloped_seek
from coderooms.focus.impact import MAX_IMPACT_DEPTH
from coderooms.focus.runtime import Discussed, checked_goal, checked_limit, ignored_view
from coderooms.mcp.errors import (
    ArgumentOutOfRange,
    NotADeskMember,
    NoWorkspace,
    ThreadNotInDesk,
    check_caller,
)
from coderooms.mcp.framing import escape_text
from coderooms.mcp.schemas import (
    AuthorOut,
    DeskOut,
    DispatchOut,
    FocusOut,
    HitOut,
    InboxOut,
    MentionOut,
    MessageOut,
    PickHitOut,
    PickOut,
    PinOut,
    PinsOut,
    PostOut,
    ReadOut,
    SearchOut,
    ThreadOut,
    ThreadsOut,
)
from coderooms.mcp.tail import ConversationTail, TailCache
from coderooms.rooms.briefing import (
    BrevityPolicy,
    SessionInitialization,
    TeamBriefing,
)
from coderooms.rooms.chat import in_desk, is_general_chat
from coderooms.rooms.context import Pin, ThreadLine, initialize_session_with_context
from coderooms.rooms.desks import GENERAL_DESK_ID, Desk, DeskSet
from coderooms.rooms.dispatch import (
    HOP_LIMIT,
    MentionDispatchContext,
    MentionDispatchInput,
    MentionDispatchPolicy,
    NoDispatchReason,
    mention_dispatch_decision,
)
from coderooms.rooms.mentions import AgentTarget, DeskTarget, EveryoneTarget, resolve_mentions
from coderooms.rooms.pins import PIN_LIMIT, PIN_SCAN, read_pinboard
from coderooms.rooms.ranking import (
    SELECT_LIMIT,
    Hit,
    Pattern,
    desk_candidates,
    pick_agents_matching,
    pick_people_matching,
    rank_matching,
    regex_source,
)
from coderooms.rooms.records import (
    MAX_WINDOW,
    SCAN_LIMIT,
    SESSION_WINDOW,
    Agent,
    Conversation,
    LogMessage,
    Operator,
    Person,
    SessionAuthor,
    SessionQuery,
)
from coderooms.rooms.roster import Roster
from coderooms.rooms.search import (
    MAX_HITS,
    SEARCH_LIMIT,
    SEARCH_SCAN,
    SearchPattern,
    SearchQuery,
    checked_query,
    compile_regex,
    search_messages,
)
from coderooms.rooms.session import walk_log
from coderooms.rooms.threads import (
    THREAD_INDEX_LIMIT,
    THREAD_INDEX_SCAN,
    read_thread_index,
    search_threads,
)
from coderooms.sessions import FocusMode, focus_call, ground_named_residents
from coderooms.skimmer import SkimResult
from coderooms.skimmer import skim as skim_output
from coderooms.store.base import Store, author_filter
from coderooms.store.errors import NoWorkingSets, ParentInOtherDesk, UnknownParent
from coderooms.store.worksets import WorkingSets

__all__ = [
    "INBOX_LIMIT",
    "INBOX_SCAN",
    "INBOX_WAIT_MAX_S",
    "MAX_HITS",
    "MAX_WINDOW",
    "READ_TEXT_BUDGET",
    "RoomService",
    "fit_text_budget",
    "WorkspaceLike",
    "escaped_briefing",
    "read_out",
]

_T = TypeVar("_T")

_FOCUS_FIELDS: dict[str, Any] = {
    name: None for name, field in FocusOut.model_fields.items() if not field.exclude
}
"""The fields of a focus answer, null where its mode has none."""

INBOX_SCAN = 2048
"""Sequences one room_inbox call covers after its cursor; the rest waits for the next."""
INBOX_WAIT_MAX_S = 25.0
"""The longest room_inbox may wait for a mention (under common HTTP client timeouts)."""
INBOX_LIMIT = 50
"""Mentions one room_inbox call returns at most; the cursor stops at the last one."""
IGNORED_LISTED = 20
"""Ignored candidates a focus, seek or impact result lists (the most salient first);
the rest are counted by reason, so every candidate is still accounted for."""
TURN_CACHE_ENTRIES = 256
"""Turn contexts (history, thread index, pinboard) kept per server, least recent dropped."""
TAIL_CONVERSATIONS = 64
"""Conversations whose newest rows a server keeps in memory, least recent dropped."""
TAIL_ROWS = max(SCAN_LIMIT, PIN_SCAN, THREAD_INDEX_SCAN, SEARCH_SCAN)
"""Rows kept per conversation: as many as the longest walk a tool makes reads."""
READ_TEXT_BUDGET = 128 * 1024
"""Characters of message text one room_read (or room_inbox) answer holds at most. When
its messages hold more, the longest are cut to one equal share and each cut is marked;
a read of a single message shows it whole (up to the store's 1 MiB message cap)."""
CUT_MARK = (
    "\n[… cut by coderooms: {shown:,} of {total:,} characters shown; room_read "
    "desk={desk} thread={sequence} before={after} window=1 shows message {sequence} whole]"
)
"""What ends a message cut to fit :data:`READ_TEXT_BUDGET`."""


def _cut_mark(shown: int, total: int, sequence: int, desk_id: str) -> str:
    return CUT_MARK.format(
        shown=shown, total=total, desk=desk_id, sequence=sequence, after=sequence + 1
    )


PickKind = Literal["agents", "people", "desks"]
T = TypeVar("T")


class WorkspaceLike(Protocol):
    """The face of :class:`coderooms.workspace.Workspace` the focus tools use."""

    def focus(
        self,
        goal: str,
        budget: int = ...,
        mode: str = ...,
        discussed: Any = ...,
        elsewhere: Any = ...,
    ) -> Any: ...

    def focus_session(
        self,
        state: Any,
        goal: str,
        budget: int = ...,
        mode: str = ...,
        discussed: Any = ...,
        elsewhere: Any = ...,
    ) -> Any: ...

    def seek(self, query: str, limit: int = ...) -> Any: ...

    def impact(self, target: str, depth: int = ...) -> Any: ...

    def focus_engine(self) -> Any: ...

    def graph(self) -> Any: ...

    def node(self, node_id: str) -> Any: ...


def author_out(author: SessionAuthor) -> AuthorOut:
    if isinstance(author, Agent):
        return AuthorOut(type="agent", id=author.id, label=author.label)
    if isinstance(author, Person):
        return AuthorOut(type="person", id=author.id, label=author.label)
    if isinstance(author, Operator):
        return AuthorOut(type="operator", id="operator", label="operator")
    return AuthorOut(type="system", id=author.kind, label=author.label)


def desk_out(desk: Desk) -> DeskOut:
    return DeskOut(id=desk.id, name=desk.name)


def thread_out(line: ThreadLine) -> ThreadOut:
    return ThreadOut(
        root=line.root,
        opening=line.opening,
        replies=line.replies,
        latest=line.latest,
        landed=line.landed,
    )


def pin_out(pin: Pin, state: NodeState | None = None) -> PinOut:
    return PinOut(
        sequence=pin.sequence,
        pinned_at=pin.pinned_at,
        pinned_by=author_out(pin.pinned_by),
        label=pin.label,
        note=pin.note,
        excerpt=pin.excerpt,
        posted_at=pin.posted_at,
        node=pin.node,
        signature=state.signature if state is not None else None,
        changed=state.changed if state is not None else None,
    )


def read_out(
    viewer_id: str,
    desk: Desk,
    thread: int | None,
    init: SessionInitialization,
    dispatch: MentionDispatchContext | None = None,
) -> ReadOut:
    """One turn's context as the room_read answer (and ``coderooms read``'s text, through
    :func:`~coderooms.mcp.render.render_read`): the briefing escaped, the dispatch
    sentence only when ``dispatch`` may dispatch, the viewer's own rows as ``assistant``."""
    offered = dispatch is not None and dispatch.may_dispatch
    briefing = escaped_briefing(init.briefing)
    text = briefing.system_text_with_dispatch(dispatch if offered else None)
    contents = fit_text_budget([(row.sequence, desk.id, row.content) for row in init.history])
    history = [
        MessageOut(
            sequence=row.sequence,
            author=author_out(row.author),
            role="assistant"
            if isinstance(row.author, Agent) and row.author.id == viewer_id
            else "user",
            content=content,
            posted_at=row.posted_at,
        )
        for row, content in zip(init.history, contents, strict=True)
    ]
    return ReadOut(
        agent_id=viewer_id,
        desk=desk_out(desk),
        thread=thread,
        briefing=text,
        dispatch_offered=offered,
        threads=[thread_out(line) for line in init.context.threads],
        pins=[pin_out(pin) for pin in init.context.pins],
        history=history,
        latest=history[-1].sequence if history else None,
    )


def fit_text_budget(
    messages: list[tuple[int, str, str]], budget: int = READ_TEXT_BUDGET
) -> list[str]:
    """The contents of ``messages`` (sequence, desk id, content) with at most ``budget``
    characters between them, marks included: every message longer than one share is
    cut to that share (the largest for which the total fits) and marked with how to read
    it whole. A single message, or messages that fit already, come back unchanged."""
    contents = [content for _, _, content in messages]
    if len(messages) <= 1 or sum(map(len, contents)) <= budget:
        return contents
    longest = max(map(len, contents))
    # the most each message's mark could take, whatever share it is cut to
    marks = [len(_cut_mark(longest, longest, seq, desk)) for seq, desk, _ in messages]

    def total(share: int) -> int:
        return sum(
            min(len(c), share) + (mark if len(c) > share else 0)
            for c, mark in zip(contents, marks, strict=True)
        )

    low, high = 0, longest
    while low < high:  # the largest share whose total fits
        middle = (low + high + 1) // 2
        if total(middle) <= budget:
            low = middle
        else:
            high = middle - 1
    return [
        content
        if len(content) <= low
        else content[:low] + _cut_mark(low, len(content), sequence, desk_id)
        for sequence, desk_id, content in messages
    ]


def _check_range(name: str, value: int, low: int, high: int) -> int:
    if not low <= value <= high:
        raise ArgumentOutOfRange(name, value, low, high)
    return value


class _TurnCache:
    """Turn contexts by query and briefing, each valid while its conversation's newest row
    is the same one.

    The log is append-only, so a conversation whose newest row has not changed holds the
    same rows, and ``initialize_session_with_context`` (a deterministic fold of those rows)
    would return the same value: reusing it is exact, and checking costs one indexed read.
    """

    def __init__(self, capacity: int) -> None:
        self._capacity = capacity
        self._entries: OrderedDict[Hashable, tuple[int | None, SessionInitialization]] = (
            OrderedDict()
        )

    def get(self, key: Hashable, newest: int | None) -> SessionInitialization | None:
        found = self._entries.get(key)
        if found is None or found[0] != newest:
            return None
        self._entries.move_to_end(key)
        return found[1]

    def put(self, key: Hashable, newest: int | None, value: SessionInitialization) -> None:
        self._entries[key] = (newest, value)
        self._entries.move_to_end(key)
        while len(self._entries) > self._capacity:
            self._entries.popitem(last=False)


@dataclass(frozen=True, slots=True)
class _Snapshot:
    roster: Roster
    desks: DeskSet


class RoomService:
    """Every tool, for a caller named on each call.

    ``workspace`` is a zero-argument callable returning the indexed workspace (or None
    when this server has no repository); it is called on the first focus call, so a
    server that never focuses never indexes. That first call (indexing, building the
    focus engine) always runs on a worker thread. With ``offload`` every later focus,
    seek and impact does too, so one caller's focus never stalls another's room calls
    (the HTTP server); without it they run on the event loop, which saves two thread
    hand-offs per call when one client is all there is (stdio).
    """

    def __init__(
        self,
        store: Store,
        workspace: Callable[[], WorkspaceLike | None] | None = None,
        dispatch: MentionDispatchPolicy | None = None,
        offload: bool = True,
    ) -> None:
        self.store = store
        self.offload = offload
        self._workspace_factory = workspace
        self._workspace: WorkspaceLike | None = None
        self._workspace_lock = threading.Lock()
        self.dispatch = dispatch if dispatch is not None else MentionDispatchPolicy()
        self._turns = _TurnCache(TURN_CACHE_ENTRIES)
        self._tails = TailCache(TAIL_CONVERSATIONS, TAIL_ROWS)
        self._recall: DeskRecall | None = None

    # --- who may do what ----------------------------------------------------------------

    async def admit(self, agent_id: str) -> None:
        """Refuse a caller that is not on the roster or is retired (tools that touch no
        room still serve only members)."""
        await self._caller(agent_id)

    async def skim(self, agent_id: str, text: str, goal: str, budget: int) -> SkimResult:
        """Skim verbose output for a member. With ``offload`` the work runs on a worker
        thread: a 10 MB log takes seconds, and another agent's call must not wait on it."""
        await self._caller(agent_id)
        if self.offload:
            return await anyio.to_thread.run_sync(skim_output, text, goal, budget)
        return skim_output(text, goal, budget)

    async def _caller(self, agent_id: str) -> _Snapshot:
        roster, desks = await self.store.snapshots()
        check_caller(roster, agent_id)
        return _Snapshot(roster, desks)

    @staticmethod
    def _member_desk(agent_id: str, ref: str, snap: _Snapshot) -> Desk:
        desk = snap.desks.resolve(ref)
        if agent_id not in snap.desks.active_order(desk.id, snap.roster):
            raise NotADeskMember(agent_id, desk.id)
        return desk

    async def _conversation(
        self, agent_id: str, desk_ref: str, thread: int | None, snap: _Snapshot
    ) -> tuple[Desk, Conversation]:
        desk = self._member_desk(agent_id, desk_ref, snap)
        if thread is not None:
            row = await self.store.message(thread)
            if row is None or not in_desk(row.chat_id, desk.id, desk.name):
                raise ThreadNotInDesk(thread, desk.id)
        return desk, Conversation(desk.id, desk.name, thread)

    # --- rooms --------------------------------------------------------------------------

    async def read(
        self,
        agent_id: str,
        desk: str = GENERAL_DESK_ID,
        thread: int | None = None,
        before: int | None = None,
        window: int = SESSION_WINDOW,
    ) -> ReadOut:
        _check_range("window", window, 1, MAX_WINDOW)
        if before is not None and before < 0:  # it read as "no messages yet"
            raise ArgumentOutOfRange("before", before, 0, "the newest sequence")
        snap = await self._caller(agent_id)
        found, conversation = await self._conversation(agent_id, desk, thread, snap)
        briefing = TeamBriefing.from_snapshots(agent_id, found.id, snap.roster, snap.desks)
        query = SessionQuery(conversation, before=before, window=window)
        init = await self._turn(query, briefing)
        return read_out(agent_id, found, thread, init, MentionDispatchContext(self.dispatch, 0))

    async def _log(self, conversation: Conversation) -> ConversationTail:
        """The conversation's rows, topped up with everything posted since the last call."""
        tail = self._tails.tail(conversation, self.store.conversation_log(conversation))
        await tail.refresh()
        return tail

    async def _turn(self, query: SessionQuery, briefing: TeamBriefing) -> SessionInitialization:
        log = await self._log(query.conversation)
        newest = log.newest
        key = (query, briefing)
        init = self._turns.get(key, newest)
        if init is None:
            conversation = query.conversation
            threads = log.thread_lines(conversation, THREAD_INDEX_LIMIT)
            pins = log.pinboard(conversation, PIN_LIMIT) if query.before is None else None
            init = await initialize_session_with_context(log, query, briefing, threads, pins)
            self._turns.put(key, newest, init)
        return init

    async def post(
        self,
        agent_id: str,
        content: str,
        desk: str = GENERAL_DESK_ID,
        reply_to: int | None = None,
        idempotency_key: str | None = None,
        hop: int = 0,
    ) -> PostOut:
        _check_range("hop", hop, 0, HOP_LIMIT)
        snap = await self._caller(agent_id)
        found = self._member_desk(agent_id, desk, snap)
        code_pins = []
        if self._workspace_factory is not None and node_pins_in(content):
            # A pin of code this server cannot find is refused before anything is written.
            workspace = await anyio.to_thread.run_sync(self._workspace_now)
            code_pins = check_node_pins(content, workspace)
        try:
            row, replayed = await self.store.post_or_replay(
                f"agent:{agent_id}",
                content,
                desk=found.id,
                parent=reply_to,
                # the store keeps keys per author: one agent's never answers for another's
                idempotency_key=idempotency_key,
            )
        except ParentInOtherDesk:
            # Saying the parent is elsewhere would tell a non-member that a message exists
            # in a desk it cannot read: to it, the parent is as unknown as a missing one.
            parent = await self.store.message(reply_to) if reply_to is not None else None
            if parent is None or self._row_desk(agent_id, parent, snap, {}) is None:
                raise UnknownParent(reply_to) from None
            raise
        if not replayed:  # a retry's pins and grounding were done by the post it repeats
            await snapshot_node_pins(self.store, row.sequence, code_pins)
            await ground_named_residents(self._working_sets(), agent_id, content)
        return PostOut(
            sequence=row.sequence,
            desk=desk_out(found),
            parent=row.parent,
            author=author_out(row.author),
            over_brevity_budget=BrevityPolicy().overrun(content),
            posted_at=row.posted_at,
            dispatch=self._dispatched(row, found, snap, hop) if self.dispatch.enabled else None,
        )

    def _dispatched(self, row: LogMessage, desk: Desk, snap: _Snapshot, hop: int) -> DispatchOut:
        """The one turn ``row`` asks of another agent by mentioning it (the room's
        mention dispatch), or why none: the host that runs that agent starts it."""
        assert isinstance(row.author, Agent)
        conversation = Conversation(desk.id, desk.name, row.parent)
        mentions = resolve_mentions(row.content, snap.roster, snap.desks, row.author)
        reply = MentionDispatchInput(
            row.sequence, conversation, row.author.id, row.content, tuple(mentions), hop
        )
        decision = mention_dispatch_decision(self.dispatch, reply, snap.roster)
        if isinstance(decision, NoDispatchReason):
            return DispatchOut(to=None, hop=None, why=decision.sentence)
        return DispatchOut(
            to=decision.target_id,
            hop=decision.child_hop,
            why=f"the first agent this post mentions is @{decision.target_id}: one turn of it "
            "is asked for",
        )

    async def post_as_person(
        self, person_id: str, content: str, desk: str, reply_to: int | None = None
    ) -> LogMessage:
        """A person's post (the web UI's), with the code pins it makes checked against
        the indexed code and snapshotted, as an agent's are: a pin of code this server
        cannot find is refused before anything is written."""
        code_pins = []
        if self._workspace_factory is not None and node_pins_in(content):
            workspace = await anyio.to_thread.run_sync(self._workspace_now)
            code_pins = check_node_pins(content, workspace)
        row = await self.store.post(f"person:{person_id}", content, desk=desk, parent=reply_to)
        await snapshot_node_pins(self.store, row.sequence, code_pins)
        return row

    async def search(
        self,
        agent_id: str,
        query: str,
        desk: str = GENERAL_DESK_ID,
        thread: int | None = None,
        author: str | None = None,
        before: int | None = None,
        limit: int = SEARCH_LIMIT,
    ) -> SearchOut:
        _check_range("limit", limit, 1, MAX_HITS)
        snap = await self._caller(agent_id)
        found, conversation = await self._conversation(agent_id, desk, thread, snap)
        pattern = SearchPattern.parse(checked_query(query))
        wanted = author_filter(snap.roster, author)
        hits = await search_messages(
            await self._log(conversation),
            SearchQuery(pattern, conversation, wanted, before, limit),
        )
        return SearchOut(
            query=query,
            pattern="regex" if regex_source(query) is not None else "text",
            desk=desk_out(found),
            thread=thread,
            hits=[
                HitOut(
                    sequence=hit.sequence,
                    desk_id=found.id,
                    parent=hit.parent,
                    author=author_out(hit.author),
                    excerpt=hit.excerpt,
                    score=hit.score,
                    kind=hit.kind.value,
                    posted_at=hit.posted_at,
                )
                for hit in hits
            ],
        )

    async def threads(
        self,
        agent_id: str,
        desk: str = GENERAL_DESK_ID,
        query: str | None = None,
        limit: int = THREAD_INDEX_LIMIT,
    ) -> ThreadsOut:
        _check_range("limit", limit, 1, MAX_HITS)
        snap = await self._caller(agent_id)
        found, conversation = await self._conversation(agent_id, desk, None, snap)
        log = await self._log(conversation)
        if query is None or not query.strip():
            lines = log.thread_lines(conversation, limit)
            if lines is None:
                lines = await read_thread_index(log, conversation, limit)
            return ThreadsOut(
                desk=desk_out(found), query=None, threads=[thread_out(x) for x in lines]
            )
        pattern = SearchPattern.parse(checked_query(query))
        hits = await search_threads(log, conversation, pattern, limit)
        return ThreadsOut(
            desk=desk_out(found),
            query=query,
            threads=[thread_out(hit.line) for hit in hits],
            scores=[hit.score for hit in hits],
        )

    async def pins(
        self, agent_id: str, desk: str = GENERAL_DESK_ID, thread: int | None = None
    ) -> PinsOut:
        snap = await self._caller(agent_id)
        found, conversation = await self._conversation(agent_id, desk, thread, snap)
        log = await self._log(conversation)
        board = log.pinboard(conversation, PIN_LIMIT)
        if board is None:
            board = await read_pinboard(log, conversation)
        states = await node_states(self.store, board, await self._node_lookup(board))
        return PinsOut(
            desk=desk_out(found),
            thread=thread,
            pins=[pin_out(p, states.get((p.sequence, p.node or ""))) for p in board],
        )

    async def _node_lookup(self, board: list[Pin]) -> WorkspaceLike | None:
        """The workspace, when this server has one and a board pins code."""
        if self._workspace_factory is None or not any(p.node for p in board):
            return None
        if self._workspace is None:
            await anyio.to_thread.run_sync(self._workspace_now)
        return self._workspace

    async def pick(
        self, agent_id: str, kind: PickKind, query: str, limit: int = SELECT_LIMIT
    ) -> PickOut:
        _check_range("limit", limit, 1, MAX_HITS)
        snap = await self._caller(agent_id)
        source = regex_source(checked_query(query))
        pattern = (
            Pattern.regex(compile_regex(source)) if source is not None else Pattern.text(query)
        )
        hits: list[Hit]
        if kind == "agents":
            hits = pick_agents_matching(pattern, snap.roster, limit)
        elif kind == "people":
            hits = pick_people_matching(pattern, snap.roster, limit)
        else:
            # only desks the caller belongs to: the others' names, descriptions and very
            # existence are not its to see (as room_read refuses to read them)
            own = [
                candidate
                for candidate in desk_candidates(snap.desks)
                if agent_id in snap.desks.active_order(candidate.id, snap.roster)
            ]
            hits = rank_matching(pattern, own, limit)
        return PickOut(
            kind=kind,
            query=query,
            hits=[
                PickHitOut(
                    id=hit.candidate.id,
                    label=hit.candidate.label,
                    detail=hit.candidate.detail,
                    field=hit.field.value,
                    kind=hit.match.kind.value,
                    score=hit.match.score,
                )
                for hit in hits
            ],
        )

    async def inbox(self, agent_id: str, since: int | None = None, wait: float = 0) -> InboxOut:
        """Rows after ``since`` that mention the caller, oldest first, in its desks.

        With ``wait`` (seconds, at most :data:`INBOX_WAIT_MAX_S`) a call that finds no
        mention waits for new rows (from any process or host the store reaches) and
        looks again, until one mentions the caller or the time is up.

        One call covers at most ``INBOX_SCAN`` sequences after the cursor (the newest
        ``INBOX_SCAN`` when no cursor is given) and at most ``INBOX_LIMIT`` mentions; the
        returned cursor is where the next call picks up, so nothing is skipped.

        The cursor advances only over what the caller may read: it is the sequence of a
        row in one of its desks (the last mention returned, or the newest readable row
        covered), or, when the scan stopped short of the log's end, the end of the
        scanned range (``since + INBOX_SCAN``, worked out from the caller's own cursor).
        It is never the sequence of a row in a desk the caller cannot see.
        """
        if since is not None and since < 0:
            raise ArgumentOutOfRange("since", since, 0, "the newest sequence")
        if since is not None:
            # a cursor past the log's end (from another store, say) would hide every
            # mention still to come: refused, naming where the log ends
            newest = await self.store.last_sequence() or 0
            if since > newest:
                raise ArgumentOutOfRange("since", since, 0, newest)
        if not 0 <= wait <= INBOX_WAIT_MAX_S:
            raise ArgumentOutOfRange("wait", wait, 0, INBOX_WAIT_MAX_S)
        deadline = time.monotonic() + wait
        while True:
            out, covered = await self._inbox_once(agent_id, since)
            left = deadline - time.monotonic()
            if out.mentions or out.more or left <= 0:
                return out
            # past what this scan covered: rows the caller may not read wake it once
            since = out.cursor if out.cursor is not None else since
            await self.store.wait_for_rows(covered, left)
            if time.monotonic() >= deadline:
                return (await self._inbox_once(agent_id, since))[0]

    async def _inbox_once(self, agent_id: str, since: int | None) -> tuple[InboxOut, int | None]:
        """One scan after ``since``, and the newest sequence it covered."""
        snap = await self._caller(agent_id)
        last = await self.store.last_sequence()
        if last is None or (since is not None and since >= last):
            empty = InboxOut(agent_id=agent_id, since=since, cursor=since, more=False, mentions=[])
            return empty, last
        start = since if since is not None else max(0, last - INBOX_SCAN)
        ceiling = min(last, start + INBOX_SCAN)
        member_of: dict[str, Desk | None] = {}
        found: list[MentionOut] = []
        readable: int | None = None  # the newest covered row the caller may read
        async for row in walk_log(self.store, ceiling + 1, INBOX_SCAN):
            if row.sequence <= start:
                break
            if readable is None and self._row_desk(agent_id, row, snap, member_of) is not None:
                readable = row.sequence
            mention = self._mention(agent_id, row, snap, member_of)
            if mention is not None:
                found.append(mention)
        found.reverse()
        shown = fit_text_budget([(m.sequence, m.desk.id, m.content) for m in found[:INBOX_LIMIT]])
        found[:INBOX_LIMIT] = [
            m.model_copy(update={"content": c}) for m, c in zip(found, shown, strict=False)
        ]
        if len(found) > INBOX_LIMIT:
            found = found[:INBOX_LIMIT]
            cut = InboxOut(
                agent_id=agent_id, since=since, cursor=found[-1].sequence, more=True, mentions=found
            )
            return cut, ceiling
        if ceiling < last:  # the range ends where the caller's cursor says, not at a row
            cursor: int | None = ceiling
        else:
            cursor = readable if readable is not None else since
        out = InboxOut(
            agent_id=agent_id, since=since, cursor=cursor, more=ceiling < last, mentions=found
        )
        return out, ceiling

    def _row_desk(
        self, agent_id: str, row: LogMessage, snap: _Snapshot, member_of: dict[str, Desk | None]
    ) -> Desk | None:
        key = "" if is_general_chat(row.chat_id) else str(row.chat_id)
        if key not in member_of:
            try:
                desk = snap.desks.resolve(key or GENERAL_DESK_ID)
            except UnknownDesk:
                member_of[key] = None
            else:
                members = snap.desks.active_order(desk.id, snap.roster)
                member_of[key] = desk if agent_id in members else None
        return member_of[key]

    def _mention(
        self, agent_id: str, row: LogMessage, snap: _Snapshot, member_of: dict[str, Desk | None]
    ) -> MentionOut | None:
        if isinstance(row.author, Agent) and row.author.id == agent_id:
            return None
        if "@" not in row.content:
            return None
        desk = self._row_desk(agent_id, row, snap, member_of)
        if desk is None:
            return None
        # the author record, not its bare id: a person may share an agent's id, and
        # then its mention of that agent is no self-mention
        writer = row.author if isinstance(row.author, Agent | Person) else None
        how: Literal["agent", "desk", "everyone"] | None = None
        for mention in resolve_mentions(row.content, snap.roster, snap.desks, writer):
            if mention.quiet:  # a repeat, or past MENTION_CAP: it pings no one
                continue
            target = mention.target
            if isinstance(target, AgentTarget) and target.id == agent_id:
                how = "agent"
                break
            if how is not None:
                continue
            if isinstance(target, DeskTarget):
                if agent_id in snap.desks.active_order(target.id, snap.roster):
                    how = "desk"
            elif isinstance(target, EveryoneTarget):
                how = "everyone"
        if how is None:
            return None
        return MentionOut(
            sequence=row.sequence,
            desk=desk_out(desk),
            parent=row.parent,
            author=author_out(row.author),
            how=how,
            content=row.content,
            posted_at=row.posted_at,
        )

    # --- focus --------------------------------------------------------------------------

    def prepare_workspace(self) -> threading.Thread | None:
        """Open the workspace and build its focus engine now, on a thread of its own, so
        that the first focus finds them ready (room calls go on meanwhile; a focus that
        comes first waits for this work instead of doing it again). A failure keeps
        nothing: the first call that needs the workspace opens it again and reports why."""
        if self._workspace_factory is None:
            return None

        def run() -> None:
            try:
                self._workspace_now()
            except Exception:  # noqa: BLE001  # met again, and told, by the first focus call
                return

        thread = threading.Thread(target=run, name="coderooms-prepare", daemon=True)
        thread.start()
        return thread

    def _workspace_now(self) -> WorkspaceLike:
        with self._workspace_lock:
            if self._workspace is None and self._workspace_factory is not None:
                workspace = self._workspace_factory()
                if workspace is not None:
                    workspace.focus_engine()  # built once, here, off the event loop
                self._workspace = workspace
            if self._workspace is None:
                raise NoWorkspace()
            return self._workspace

    async def in_workspace(self, call: Callable[[WorkspaceLike], T]) -> T:
        """``call(workspace)`` under the workspace lock, on a worker thread with
        ``offload`` (the web UI's focus view runs through here, as the tools do)."""
        return await self._in_workspace(call)

    async def _in_workspace(self, call: Callable[[WorkspaceLike], T]) -> T:
        if self._workspace is None:
            await anyio.to_thread.run_sync(self._workspace_now)

        def run() -> T:
            workspace = self._workspace_now()
            with self._workspace_lock:
                return call(workspace)

        if self.offload:
            return await anyio.to_thread.run_sync(run)
        return run()

    # focus, seek and impact answer in their wire form (the FocusOut, SeekOut and ImpactOut
    # schemas, which tests hold them to) straight from the workspace's own JSON: a served
    # focus builds no model only to dump it again.

    async def focus(
        self,
        agent_id: str,
        goal: str | None,
        mode: FocusMode = "set",
        budget: int = 8000,
        *,
        session: str | None = None,
        node: str | None = None,
        session_budget: int | None = None,
        desk: str | None = None,
        team: str | None = None,
    ) -> dict[str, Any]:
        """A focus call in any mode (see :func:`coderooms.sessions.focus_call`); with a
        session, the working set kept in this server's store; with a desk (modes set and
        check), the desk's discussion of the goal beside the code, in the same budget;
        ``team`` prefers or avoids what the desk's other members hold."""
        checked_team(team, desk)
        snap = await self._caller(agent_id)

        async def code(
            code_budget: int,
            desk_pins: tuple[str, ...] = (),
            discussed: Discussed = (),
            elsewhere: Mapping[str, str] | None = None,
        ) -> dict[str, Any]:
            out: dict[str, Any] = await focus_call(
                self._working_sets(),
                self._in_workspace,
                agent_id,
                mode,
                session=session,
                goal=goal,
                budget=code_budget,
                node=node,
                session_budget=session_budget,
                ignored_limit=IGNORED_LISTED,
                desk_pins=desk_pins,
                discussed=discussed,
                elsewhere=elsewhere,
            )
            return out

        if desk is None:
            return {**_FOCUS_FIELDS, **await code(budget)}
        target = self._member_desk(agent_id, desk, snap)
        out = await focus_with_desk(
            self.store,
            target,
            agent_id,
            goal,
            budget,
            mode,
            code,
            self._desk_recall,
            self._in_workspace,
            team,
        )
        return {**_FOCUS_FIELDS, **out}  # every mode's answer carries every field

    def _working_sets(self) -> WorkingSets | None:
        try:
            return self.store.working_sets()
        except NoWorkingSets:
            return None

    def _desk_recall(self) -> DeskRecall:
        if self._recall is None:
            self._recall = DeskRecall.with_model()
        return self._recall

    async def seek(self, agent_id: str, query: str, limit: int = 20) -> dict[str, Any]:
        checked_limit(limit)  # before a first call opens (and indexes) the workspace
        checked_goal("query", query)
        await self._caller(agent_id)
        return await self._in_workspace(
            lambda ws: enveloped_seek(
                ignored_view(ws.seek(query, limit=limit).to_json(), IGNORED_LISTED)
            )
        )

    async def impact(self, agent_id: str, target: str, depth: int = 2) -> dict[str, Any]:
        _check_range("depth", depth, 1, MAX_IMPACT_DEPTH)
        await self._caller(agent_id)
        return await self._in_workspace(
            lambda ws: enveloped_impact(
                ignored_view(ws.impact(target, depth=depth).to_json(), IGNORED_LISTED)
            )
        )


def escaped_briefing(briefing: TeamBriefing) -> TeamBriefing:
    """The briefing with every roster- and desk-supplied field escaped, so a name with a
    line break or a tag in it cannot forge a heading or a data frame in the briefing."""

    def safe(text: str | None) -> str | None:
        return None if text is None else escape_text(text)

    return replace(
        briefing,
        viewer_id=escape_text(briefing.viewer_id),
        desk_id=escape_text(briefing.desk_id),
        desk_name=escape_text(briefing.desk_name),
        teammates=tuple(
            replace(
                mate,
                id=escape_text(mate.id),
                label=escape_text(mate.label),
                role=safe(mate.role),
                description=safe(mate.description),
            )
            for mate in briefing.teammates
        ),
    )
