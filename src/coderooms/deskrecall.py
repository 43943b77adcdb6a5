"""Goal-conditioned recall of a desk's transcript, over a store (a host layer).

:mod:`coderooms.focus.discussion` ranks messages; this module feeds it. It walks a desk's
whole conversation (thread replies included) out of the store through the same bounded
pages every reader uses, folds the pinboard to mark pinned rows, embeds each message
once, and keeps the derived index in memory keyed by the desk's newest sequence, so a
second goal on an unchanged desk costs only the ranking. The log stays the only source
of truth: a new message only extends what was read (older rows are immutable), and the
index is extended by the new rows alone (:func:`extend_discussion_index`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from coderooms.errors import HostError
from coderooms.focus.discussion import (
    DeskMessage,
    DiscussionConfig,
    DiscussionIndex,
    GoalScores,
    RankedMessage,
    Vectors,
    code_mentions,
    extend_discussion_index,
    prose_outside_code,
    prose_terms,
    rank_discussion,
    score_goal,
)
from coderooms.focus.graph import CodeGraph
from coderooms.focus.runtime import Discussed, checked_budget
from coderooms.focus.text import is_code_name
from coderooms.focus.workingset import heat
from coderooms.rooms.desks import Desk
from coderooms.rooms.pins import PIN_LIMIT, fold_pins, parse_pin_directives, read_pinboard
from coderooms.rooms.records import SESSION_WINDOW, Conversation, LogMessage, SessionAuthor
from coderooms.rooms.wire import to_wire
from coderooms.store.base import READ_LIMIT_CAP, Store
from coderooms.store.errors import NoWorkingSets
from coderooms.store.worksets import WorkingSets

__all__ = [
    "DESK_RECALL_MAX_MESSAGES",
    "DeskNeedsGoal",
    "DeskRecall",
    "DeskRanking",
    "embedding_text",
]

DESK_RECALL_MAX_MESSAGES = 200_000
"""Newest messages of a desk that recall reads; older ones are left out (and counted)."""

RANKED_MESSAGES = 64
"""Messages one ranking returns at most: the candidates a focus sends or lists as left out."""

GOAL_VECTORS_KEPT = 8
"""Goal vectors a recall remembers, and goals whose scores a desk's index keeps (newest)."""
TOKEN_COUNTS_KEPT = 100_000
"""Per-row token counts a recall remembers before it forgets them all."""


TEAM_CHOICES = ("prefer", "avoid")
"""What a focus about a desk may do with the code teammates hold (``team``): prefer it
(it gains in the ranking, ``held by teammate …``) or avoid it (it is not sent, and the
ignored tail names who holds it)."""


class UnknownTeamChoice(HostError):
    """A ``team`` choice focus does not know."""

    fields = ("choice",)
    template = "team must be 'prefer' or 'avoid' (or left out), not {choice!r}"


class TeamNeedsDesk(HostError):
    """A ``team`` choice without the desk whose members it is about."""

    fields = ("choice",)
    template = (
        "team {choice!r} is about a desk's members: give the desk too (--desk, or the "
        "focus tool's desk argument), or leave team out"
    )


def checked_team(team: str | None, desk: object) -> str | None:
    """``team`` when it is a choice focus knows and a desk goes with it."""
    if team is None:
        return None
    if team not in TEAM_CHOICES:
        raise UnknownTeamChoice(team)
    if desk is None:
        raise TeamNeedsDesk(team)
    return team


class DeskNeedsGoal(HostError):
    """A desk given to a focus that brings no code for a goal (a working-set mode)."""

    fields = ("mode",)
    template = (
        "a desk goes with a goal in focus modes set and check, not mode {mode!r}; "
        "leave the desk out, or give a goal with mode set or check"
    )


Embed = Callable[[Sequence[str]], np.ndarray]
EmbedMessages = Callable[[Sequence[str]], Vectors]


def embedding_text(message: DeskMessage) -> str:
    """What a message's vector is made from: its author and its words."""
    return f"{message.author}: {message.text}"


@dataclass(frozen=True)
class DeskRanking:
    """A desk's messages ranked for a goal, with the rows they came from."""

    desk: Desk
    ranked: tuple[RankedMessage, ...]
    rows: dict[int, LogMessage]
    read: int
    """Messages the ranking considered."""
    left_unread: bool
    """True when the desk held more than :data:`DESK_RECALL_MAX_MESSAGES`."""


@dataclass
class _Derived:
    newest: int
    rows: list[LogMessage]
    index: DiscussionIndex
    pins: frozenset[int]
    markers: list[LogMessage]
    """The rows that carry pin markers, oldest first."""
    truncated: bool
    scores: dict[str, GoalScores] = field(default_factory=dict)
    """The latest goals' scores over this index (a focus ranks twice per goal)."""


class DeskRecall:
    """Ranks desk messages for goals, keeping each desk's derived index between calls.

    ``embed`` (texts → one row each) adds the meaning signal; without it ranking is
    lexical and structural only. ``embed_messages``, when given, embeds the messages
    instead (the same vectors, as factors: :func:`coderooms.embeddings.embed_factored`)."""

    def __init__(
        self,
        embed: Embed | None = None,
        config: DiscussionConfig | None = None,
        *,
        embed_messages: EmbedMessages | None = None,
    ):
        self._embed = embed
        self._embed_messages: EmbedMessages | None = embed_messages or embed
        self._config = config or DiscussionConfig()
        self._derived: dict[str, _Derived] = {}
        self._goals: dict[str, np.ndarray] = {}
        self._tokens: dict[int, int] = {}
        self._symbols: tuple[CodeGraph, Callable[[str], Iterable[tuple[str, str]]]] | None = None
        self._mentions: tuple[CodeGraph, CodeMentions] | None = None
        self._last_ranking: tuple[_Derived, tuple[Any, ...], DeskRanking] | None = None

    @classmethod
    def with_model(cls, config: DiscussionConfig | None = None) -> DeskRecall:
        """A recall with the shipped embedding model: goals embedded as
        :func:`coderooms.embeddings.embed` does, messages kept as token counts
        (:func:`coderooms.embeddings.embed_factored`, the same vectors)."""
        from coderooms import embeddings

        return cls(embeddings.embed, config, embed_messages=embeddings.embed_factored)

    def forget_goals(self) -> None:
        """Drop the remembered goal vectors and goal scores (a benchmark times the next
        ranking as a new goal's)."""
        self._goals.clear()
        self._last_ranking = None
        for derived in self._derived.values():
            derived.scores.clear()

    def _goal_vector(self, goal: str) -> np.ndarray | None:
        """The goal's vector, remembered for the few latest goals (a focus over a desk
        ranks twice with one goal)."""
        if self._embed is None:
            return None
        vector = self._goals.pop(goal, None)
        if vector is None:
            vector = np.asarray(self._embed([goal])[0])
        self._goals[goal] = vector
        while len(self._goals) > GOAL_VECTORS_KEPT:
            del self._goals[next(iter(self._goals))]
        return vector

    def tokens_of(self, row: LogMessage, count_tokens: Callable[[str], int]) -> int:
        """Tokens of a row's content, counted once per row (rows never change)."""
        cost = self._tokens.get(row.sequence)
        if cost is None:
            cost = self._tokens[row.sequence] = count_tokens(row.content)
            if len(self._tokens) > TOKEN_COUNTS_KEPT:
                self._tokens.clear()
        return cost

    def symbols_of(self, graph: CodeGraph) -> Callable[[str], Iterable[tuple[str, str]]]:
        """:func:`symbols_by_file` of ``graph``, kept while the graph is the same object."""
        if self._symbols is None or self._symbols[0] is not graph:
            self._symbols = (graph, symbols_by_file(graph))
        return self._symbols[1]

    def mentions_of(self, graph: CodeGraph) -> CodeMentions:
        """:func:`mention_map` of ``graph``, kept while the graph is the same object."""
        if self._mentions is None or self._mentions[0] is not graph:
            self._mentions = (graph, mention_map(graph))
        return self._mentions[1]

    async def _newer_rows(
        self, store: Store, desk: Desk, above: int | None, cap: int
    ) -> tuple[list[LogMessage], bool]:
        """The desk's rows above sequence ``above`` (all when None), oldest first, at most
        ``cap`` of the newest; and whether older ones were left."""
        log = store.conversation_log(Conversation(desk.id, desk.name))
        rows: list[LogMessage] = []
        before = None
        while True:
            page = await log.read_before(before, READ_LIMIT_CAP)
            for row in page.messages:
                if above is not None and row.sequence <= above:
                    return rows[::-1], False
                if len(rows) >= cap:
                    return rows[::-1], True
                rows.append(row)
            if page.next_before is None or not page.messages:
                return rows[::-1], False
            before = page.next_before

    async def _derive(self, store: Store, desk: Desk) -> _Derived:
        key = f"{id(store)}:{desk.id}"
        known = self._derived.get(key)
        newest = await store.last_sequence()
        if known is not None and newest is not None and known.newest == newest:
            return known
        if known is not None and not known.truncated:
            fresh, _ = await self._newer_rows(
                store, desk, known.newest, DESK_RECALL_MAX_MESSAGES - len(known.rows)
            )
            if not fresh:
                known.newest = newest if newest is not None else known.newest
                return known  # the same rows: its goal scores still hold
            rows = known.rows + fresh
            truncated = False
        else:
            rows, truncated = await self._newer_rows(store, desk, None, DESK_RECALL_MAX_MESSAGES)
            known = None
        start = len(known.index.messages) if known is not None else 0
        # the pinboard is a fold over the rows that carry pin markers: only new rows are
        # read for markers, and the fold runs over the markers alone
        markers = (known.markers if known is not None else []) + [
            row for row in rows[start:] if parse_pin_directives(row)
        ]
        pins = frozenset(pin.sequence for pin in fold_pins(markers, PIN_LIMIT))
        added = [
            DeskMessage(
                sequence=row.sequence,
                author=row.author.label,
                text=row.content,
                parent=row.parent,
                posted_at=row.posted_at,
                pinned=row.sequence in pins,
            )
            for row in rows[start:]
        ]
        vectors = None
        if self._embed_messages is not None:
            vectors = self._embed_messages([embedding_text(m) for m in added])
        # a new post extends the index (older rows never change); a pin marker may pin
        # an older row, so the pinned set is given whole
        index = extend_discussion_index(
            known.index if known is not None else None, added, vectors, pinned=pins
        )
        derived = _Derived(
            newest=newest if newest is not None else -1,
            rows=rows,
            index=index,
            pins=pins,
            markers=markers,
            truncated=truncated,
        )
        self._derived[key] = derived
        return derived

    async def rank(
        self,
        store: Store,
        desk: Desk,
        goal: str,
        *,
        code_names: dict[str, str] | None = None,
        exclude: frozenset[int] = frozenset(),
        limit: int | None = None,
    ) -> DeskRanking:
        """``desk``'s messages ranked for ``goal``, best first, leaving out ``exclude``
        (the caller's current window, say). Code names no message writes change nothing,
        so a ranking asked again with only those is the one just made."""
        derived = await self._derive(store, desk)
        named = {n: node for n, node in (code_names or {}).items() if derived.index.naming(n)}
        key = (goal, exclude, limit, tuple(sorted(named.items())), derived.newest)
        last = self._last_ranking
        if last is not None and last[0] is derived and last[1] == key:
            return last[2]
        scores = derived.scores.get(goal)
        if scores is None:
            scores = score_goal(
                derived.index, goal, goal_vector=self._goal_vector(goal), config=self._config
            )
            derived.scores[goal] = scores
            while len(derived.scores) > GOAL_VECTORS_KEPT:
                del derived.scores[next(iter(derived.scores))]
        ranked = rank_discussion(
            derived.index,
            goal,
            code_names=named or None,
            config=self._config,
            exclude=exclude,
            limit=RANKED_MESSAGES if limit is None else min(limit, RANKED_MESSAGES),
            scores=scores,
        )
        rows: dict[int, LogMessage] = {}
        for r in ranked:  # rows and the index's messages share their order
            at = derived.index.position(r.sequence)
            assert at is not None, "a ranked message is one of the index's"
            rows[r.sequence] = derived.rows[at]
        ranking = DeskRanking(
            desk=desk,
            ranked=tuple(ranked),
            rows=rows,
            read=len(derived.rows),
            left_unread=derived.truncated,
        )
        self._last_ranking = (derived, key, ranking)
        return ranking


# --- one budget for code and discussion ------------------------------------------------

DISCUSSION_SHARE = 0.25
"""The most of a focus budget the desk's messages may take; code gets the rest."""
DISCUSSION_MAX_MESSAGES = 10
"""Messages one focus sends at most."""
DISCUSSION_FLOOR = 0.4
"""A message scoring below this share of the best message's score is not sent."""
DISCUSSION_SCORE_DIGITS = 4


@dataclass(frozen=True)
class Discussion:
    """The messages one focus sends, and the ranked ones it left out, with why."""

    desk: Desk
    sent: tuple[tuple[RankedMessage, LogMessage, int], ...]
    """(ranking, row, tokens) of each message sent, best first."""
    ignored: tuple[tuple[RankedMessage, str], ...]
    read: int
    left_unread: bool

    @property
    def tokens(self) -> int:
        return sum(tokens for _, _, tokens in self.sent)


def choose_messages(
    ranking: DeskRanking, allowance: int, count_tokens: Callable[[LogMessage], int]
) -> Discussion:
    """The best messages of ``ranking`` that fit ``allowance`` tokens, each costing
    ``count_tokens(row)``; the others listed with the reason they stayed out."""
    sent: list[tuple[RankedMessage, LogMessage, int]] = []
    ignored: list[tuple[RankedMessage, str]] = []
    top = ranking.ranked[0].score if ranking.ranked else 0.0
    used = 0
    for ranked in ranking.ranked:
        if ranked.score < DISCUSSION_FLOOR * top:
            ignored.append((ranked, "below_floor"))
            continue
        if len(sent) >= DISCUSSION_MAX_MESSAGES:
            ignored.append((ranked, "over_candidate_limit"))
            continue
        row = ranking.rows[ranked.sequence]
        cost = count_tokens(row)
        if used + cost > allowance:
            ignored.append((ranked, "over_budget"))
            continue
        used += cost
        sent.append((ranked, row, cost))
    return Discussion(ranking.desk, tuple(sent), tuple(ignored), ranking.read, ranking.left_unread)


CodeMentions = Mapping[str, tuple[str, ...]]
"""A name a message may write for code (an id, a path, a qualified or a code-shaped
name) to the node ids it stands for."""
MENTION_MAX_NODES = 3
"""A name standing for more nodes than this (``__init__``, ``setUp``) says too little."""
DISCUSSED_MAX_NODES = 8
"""Code nodes the messages a focus sends may lift in its code ranking at most."""
DISCUSSED_SHARED_TERMS = 3
"""Goal terms a message's prose (its words outside code) must share with the goal for
the code it names to gain: a message that only names code matching the goal's words
says nothing the code ranking did not already weigh. A short goal asks for at most
half of its own terms."""


def mention_map(graph: CodeGraph) -> dict[str, tuple[str, ...]]:
    """What each of ``graph``'s nodes may be called in a message: a file by its path, a
    symbol by its id, its qualified name and (spelled as code) its own name."""
    found: dict[str, list[str]] = {}
    for node in graph.nodes:
        if node.kind in FILE_KINDS:
            keys = {node.id, node.path}
        else:
            qualname = node.qualname
            keys = {node.id, node.id.partition("#")[0]}
            keys.update(k for k in (qualname, node.name) if _code_name(k))
        for key in keys:
            found.setdefault(key, []).append(node.id)
    return {
        key: tuple(sorted(set(ids)))
        for key, ids in found.items()
        if len(set(ids)) <= MENTION_MAX_NODES
    }


def _code_name(name: str) -> bool:
    return len(name) >= MIN_CODE_NAME and is_code_name(name)


def about_goal(text: str, goal_terms: frozenset[str]) -> bool:
    """Whether a message's prose is about the goal (see :data:`DISCUSSED_SHARED_TERMS`)."""
    needed = min(DISCUSSED_SHARED_TERMS, max(1, len(goal_terms) // 2))
    return len(prose_outside_code(text) & goal_terms) >= needed


def discussed_code(
    messages: Iterable[tuple[int, str]], mentions: CodeMentions, goal: str
) -> Discussed:
    """The code the ``messages`` (sequence, text), best first, name, each node with the
    first message naming it (``discussed in message #N``); only messages whose prose is
    :func:`about_goal` count. A name counts once per message, its longest spelling
    first, so ``Session.send`` does not also stand for every other ``send``."""
    out: dict[str, str] = {}
    goal_terms = frozenset(prose_terms(goal))
    for sequence, text in messages:
        if not about_goal(text, goal_terms):
            continue
        taken: list[str] = []
        for word in sorted(code_mentions(text), key=lambda w: (-len(w), w)):
            ids = mentions.get(word)
            if not ids or any(t.endswith(("." + word, "::" + word, "/" + word)) for t in taken):
                continue
            taken.append(word)
            for node_id in ids:
                out.setdefault(node_id, f"discussed in message #{sequence}")
                if len(out) >= DISCUSSED_MAX_NODES:
                    return tuple(out.items())
    return tuple(out.items())


def code_names_of(
    focus_json: dict[str, Any], symbols_in: Callable[[str], Iterable[tuple[str, str]]] | None = None
) -> dict[str, str]:
    """The names a message may use for the code in a focus answer: each item's own name
    (``resolve_redirects``) and qualified name (``Session.resolve_redirects``); for a
    whole file, those of the symbols ``symbols_in(path)`` lists as (qualname, id)."""
    names: dict[str, str] = {}

    def add(qualified: str, node_id: str) -> None:
        for key in (qualified, qualified.rpartition(".")[2]):
            if key not in names and _code_name(key):
                names[key] = node_id

    for item in focus_json.get("focus_set", []):
        node_id = str(item.get("id", ""))
        if item.get("kind") in FILE_KINDS:
            for qualified, symbol_id in symbols_in(str(item["path"])) if symbols_in else ():
                add(qualified, symbol_id)
        else:
            add(node_id.rpartition("::")[2].partition("#")[0], node_id)
    return names


def symbols_by_file(graph: CodeGraph) -> Callable[[str], Iterable[tuple[str, str]]]:
    """``symbols_in`` for :func:`code_names_of` over ``graph``: a file's symbols."""
    by_file: dict[str, list[tuple[str, str]]] = {}
    for node in graph.nodes:
        if node.kind not in FILE_KINDS:
            by_file.setdefault(node.path, []).append((node.qualname, node.id))
    return lambda path: by_file.get(path, ())


MIN_CODE_NAME = 4
"""Shorter code names (``get``, ``run``) say too little to tie a message to code."""
FILE_KINDS = frozenset({"file", "module"})
"""Focus items whose name is a file's: a message naming ``pins`` is not about pins.py."""


def discussion_json(discussion: Discussion) -> dict[str, Any]:
    """The wire form of the messages a focus sends (under ``discussion`` in its answer)."""
    return {
        "desk": {"id": discussion.desk.id, "name": discussion.desk.name},
        "considered": discussion.read,
        "older_unread": discussion.left_unread,
        "tokens": discussion.tokens,
        "messages": [
            {
                "sequence": row.sequence,
                "parent": row.parent,
                "author": author_json(row.author),
                "posted_at": row.posted_at,
                "score": round(ranked.score, DISCUSSION_SCORE_DIGITS),
                "tokens": tokens,
                "why": "; ".join(ranked.reasons),
                "content": row.content,
            }
            for ranked, row, tokens in discussion.sent
        ],
    }


def author_json(author: SessionAuthor) -> dict[str, Any]:
    """An author as the rooms' wire forms give it (type, id, label)."""
    out: dict[str, Any] = to_wire(author)
    return out


def with_discussion(
    focus_json: dict[str, Any], discussion: Discussion, budget: int
) -> dict[str, Any]:
    """A focus answer with the desk's messages beside its code, in one budget: the
    budget counts both, the ignored tail lists the messages left out (``message #N``),
    and the sufficiency says what the discussion added."""
    out = dict(focus_json)
    used = int(focus_json["budget"]["used"]) + discussion.tokens
    out["budget"] = {"limit": budget, "used": used, "left": budget - used}
    extra = [
        {"what": f"message #{ranked.sequence}", "why": why, "salience": round(ranked.score, 4)}
        for ranked, why in discussion.ignored
    ]
    out["ignored"] = list(focus_json.get("ignored", [])) + extra
    if "ignored_total" in focus_json:
        by_reason = dict(focus_json.get("ignored_by_reason", {}))
        for _, why in discussion.ignored:
            by_reason[why] = by_reason.get(why, 0) + 1
        out["ignored_by_reason"] = dict(sorted(by_reason.items()))
        out["ignored_total"] = int(focus_json["ignored_total"]) + len(discussion.ignored)
    sufficiency = dict(focus_json["sufficiency"])
    sent = len(discussion.sent)
    sufficiency["why"] = (
        f"{sufficiency['why']}; desk {discussion.desk.name}: {sent} of "
        f"{discussion.read} messages sent"
        + (f", {len(discussion.ignored)} more ranked but left out" if discussion.ignored else "")
        + (" (older messages unread)" if discussion.left_unread else "")
    )
    out["sufficiency"] = sufficiency
    out["discussion"] = discussion_json(discussion)
    return out


async def window_sequences(
    store: Store, desk: Desk, window: int = SESSION_WINDOW
) -> frozenset[int]:
    """The sequences of a desk's newest ``window`` messages: what a turn already shows
    (``room_read``'s default window), so recall does not send them again."""
    log = store.conversation_log(Conversation(desk.id, desk.name))
    page = await log.read_before(None, window)
    return frozenset(row.sequence for row in page.messages)


async def focus_over_desk(
    store: Store,
    desk: Desk,
    recall: DeskRecall,
    goal: str | None,
    budget: int,
    mode: str,
    code_focus: Callable[[int, Discussed], Awaitable[dict[str, Any]]],
    count_tokens: Callable[[str], int] | None = None,
    symbols_in: Callable[[str], Iterable[tuple[str, str]]] | None = None,
    mentions: CodeMentions | None = None,
) -> dict[str, Any]:
    """One focus answer holding code and the desk's discussion of ``goal``, in one budget.

    The desk's messages (outside the newest window) are ranked first and the best that
    fit :data:`DISCUSSION_SHARE` of ``budget`` reserve their tokens; ``code_focus`` (the
    workspace's focus, given a budget) packs the code into the rest; then the messages
    are ranked again knowing which code is salient (a message naming a function in the
    focus set gains) and chosen within the reserve. With ``mentions``, the code the
    reserved messages name (:func:`discussed_code`) gains in the code ranking too. In
    check mode the messages are listed without their content."""
    if mode not in ("set", "check") or goal is None or not goal.strip():
        raise DeskNeedsGoal(mode)
    budget = checked_budget(budget)
    if count_tokens is None:
        from coderooms.tokens import count_tokens as default_counter

        count_tokens = default_counter
    counter: Callable[[str], int] = count_tokens

    def cost(row: LogMessage) -> int:
        return recall.tokens_of(row, counter)

    window = await window_sequences(store, desk)
    first = await recall.rank(store, desk, goal, exclude=window)
    reserved = choose_messages(first, int(budget * DISCUSSION_SHARE), cost)
    reserve = reserved.tokens
    discussed: Discussed = ()
    if mentions:
        discussed = discussed_code(
            ((r.sequence, row.content) for r, row, _ in reserved.sent), mentions, goal
        )
    code = await code_focus(max(1, budget - reserve), discussed)
    names = code_names_of(code, symbols_in)
    ranking = (
        await recall.rank(store, desk, goal, code_names=names, exclude=window) if names else first
    )
    discussion = choose_messages(ranking, reserve, cost)
    out = with_discussion(code, discussion, budget)
    if mode == "check":
        for message in out["discussion"]["messages"]:
            message["content"] = None
    return out


# --- a desk's shared working set ------------------------------------------------------

TEAM_RESIDENTS_LISTED = 20
"""Teammates' resident nodes a focus lists at most, hottest first (all are counted)."""


async def team_residents(
    sets: WorkingSets | None, teammates: Iterable[str]
) -> tuple[dict[str, Any], dict[str, list[str]]]:
    """What the desk's other members hold in their focus sessions: who, which node, how
    hot, hottest first (``team`` in a focus answer), so two agents do not explore the
    same code twice; and, for every node held, who holds it."""
    entries: list[dict[str, Any]] = []
    for ws in await sets.of_agents(teammates) if sets is not None else []:
        for resident in ws.resident:
            entries.append(
                {
                    "agent": ws.agent,
                    "session": ws.session,
                    "id": resident.id,
                    "heat": heat(resident, ws.calls),
                    "tokens": resident.tokens,
                    "goal": resident.goal,
                }
            )
    entries.sort(key=lambda e: (-e["heat"], e["agent"], e["session"], e["id"]))
    holders: dict[str, set[str]] = {}
    for entry in entries:
        holders.setdefault(entry["id"], set()).add(entry["agent"])
    view = {
        "members": sorted(set(teammates)),
        "resident_total": len(entries),
        "resident": entries[:TEAM_RESIDENTS_LISTED],
    }
    return view, {node: sorted(agents) for node, agents in holders.items()}


def mark_team_held(focus_json: dict[str, Any], holders: dict[str, list[str]]) -> None:
    """Name, on each focus set item and resident a teammate also holds, who holds it
    (``held_by``)."""
    for key in ("focus_set", "resident"):
        for item in focus_json.get(key) or []:
            if item.get("id") in holders:
                item["held_by"] = holders[item["id"]]


CodeFocus = Callable[
    [int, tuple[str, ...], Discussed, Mapping[str, str] | None], Awaitable[dict[str, Any]]
]
"""A focus of the code alone: (budget, code pinned on the desk, code the desk's messages
about the goal name, code teammates hold that is not to be sent) to its answer."""


async def focus_with_desk(
    store: Store,
    desk: Desk,
    caller: str,
    goal: str | None,
    budget: int,
    mode: str,
    code: CodeFocus,
    recall: Callable[[], DeskRecall],
    in_workspace: Callable[[Callable[[Any], Any]], Awaitable[Any]],
    team: str | None = None,
) -> dict[str, Any]:
    """A focus call about ``desk`` (CLI ``--desk``, the MCP tool's ``desk``): the code
    pinned on the desk counts as pinned in the caller's session, set and check bring the
    desk's discussion of the goal in the same budget (:func:`focus_over_desk`), status
    shows the session alone, and every answer carries ``team``, what the desk's other
    members hold, with ``held_by`` on what they share with the caller.

    ``team`` (see :data:`TEAM_CHOICES`): ``prefer`` ranks what teammates hold higher,
    after what the desk's messages name; ``avoid`` sends none of it."""
    team = checked_team(team, desk)
    conversation = Conversation(desk.id, desk.name)
    board = await read_pinboard(store.conversation_log(conversation), conversation)
    pinned = tuple(p.node for p in board if p.node is not None)
    roster, desks = await store.roster(), await store.desks()
    teammates = [a for a in desks.active_order(desk.id, roster) if a != caller]
    try:
        sets: WorkingSets | None = store.working_sets()
    except NoWorkingSets:
        sets = None
    residents, holders = await team_residents(sets, teammates)
    held: Discussed = ()
    elsewhere: dict[str, str] | None = None
    if team == "prefer":  # the hottest first, as the team view lists them
        order = dict.fromkeys(entry["id"] for entry in residents["resident"])
        order.update(dict.fromkeys(sorted(holders)))
        held = tuple((node, "held by teammate " + ", ".join(holders[node])) for node in order)
    elif team == "avoid":
        elsewhere = {node: ", ".join(agents) for node, agents in holders.items()}

    async def with_pins(code_budget: int, discussed: Discussed = ()) -> dict[str, Any]:
        known = {node for node, _ in discussed}
        ranked = (*discussed, *(h for h in held if h[0] not in known))
        return await code(code_budget, pinned, ranked, elsewhere)

    if mode == "status":
        out = await with_pins(budget)
    else:
        ranker = recall()
        symbols, mentions = await in_workspace(
            lambda ws: (ranker.symbols_of(ws.graph()), ranker.mentions_of(ws.graph()))
        )
        out = await focus_over_desk(
            store,
            desk,
            ranker,
            goal,
            budget,
            mode,
            with_pins,
            symbols_in=symbols,
            mentions=mentions,
        )
    mark_team_held(out, holders)
    out["team"] = {**residents, "code_pins": list(pinned), "choice": team}
    return out
