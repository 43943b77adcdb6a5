"""The focus runtime: ``focus``, ``seek`` and ``impact`` over one code graph.

A :class:`FocusEngine` is built once per indexed graph (it holds the lexical indexes,
the node embeddings and the graph's transition matrix) and then answers goals quickly.
It reads code through the texts handed in and counts tokens with the counter handed in:
hosts (the workspace, the CLI, the benchmark) wire ``coderooms.tokens`` and
``coderooms.embeddings`` into it.
"""

from __future__ import annotations

import copy
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal, Protocol

from coderooms.focus.errors import (
    BlankGoal,
    GoalNotText,
    GoalTooLong,
    InvalidBudget,
    InvalidLimit,
    InvalidMode,
    counts_to,
)
from coderooms.focus.graph import CodeGraph
from coderooms.focus.impact import ImpactResult, impact
from coderooms.focus.packing import (
    CountsJoined,
    CountsWithin,
    Ignored,
    Packing,
    RenderCache,
    TokenCounter,
    candidate_rows,
    pack_to_budget,
)
from coderooms.focus.salience import (
    BuiltIndex,
    Embedder,
    KnownWork,
    LazyTexts,
    Report,
    Salience,
    SalienceConfig,
    SalienceIndex,
    check_rank_time_only,
    file_scores,
    rank,
    text_key,
)
from coderooms.focus.sufficiency import Sufficiency, judge, knee, unmatched
from coderooms.focus.text import without_lone_surrogates

Mode = Literal["set", "check"]
Discussed = tuple[tuple[str, str], ...]
"""Code a desk's messages about the goal name: (node id, why), best first."""

DEFAULT_BUDGET = 8_000
MAX_BUDGET = 1_000_000
DEFAULT_SEEK_LIMIT = 20
MAX_SEEK_LIMIT = 500
MAX_GOAL_CHARS = 100_000
"""The longest focus goal or seek query read: an issue with its logs fits (SWE-bench Lite
statements reach 25k characters); a whole file or dump does not."""
SALIENCE_DIGITS = 4


class SourceReader(Protocol):
    def read_text(self, path: str) -> str: ...


def checked_goal(what: str, goal: str) -> str:
    """The goal as ranked: refused when blank or too long; a character no text can hold
    (a lone surrogate, from bytes that were not UTF-8) becomes U+FFFD, as does a NUL
    (no store can keep one in a session's goals)."""
    if not isinstance(goal, str):  # a library caller's None or bytes: typed, not AttributeError
        raise GoalNotText(what, type(goal).__name__)
    if len(goal) > MAX_GOAL_CHARS:
        raise GoalTooLong(what, len(goal), MAX_GOAL_CHARS)
    if not goal.strip():
        raise BlankGoal(what)
    return without_lone_surrogates(goal).replace("\0", "\ufffd")


def checked_budget(budget: object) -> int:
    if not counts_to(budget, MAX_BUDGET):
        raise InvalidBudget(budget, MAX_BUDGET)
    return budget


def checked_limit(limit: object) -> int:
    """A seek's number of results, refused unless 1 to :data:`MAX_SEEK_LIMIT`."""
    if not counts_to(limit, MAX_SEEK_LIMIT):
        raise InvalidLimit("limit", limit, MAX_SEEK_LIMIT)
    return limit


def checked_mode(mode: str) -> Mode:
    if mode == "set":
        return "set"
    if mode == "check":
        return "check"
    raise InvalidMode(mode)


def _by_salience(entry: Ignored) -> tuple[bool, float]:
    """Single nodes by salience, most first; a summary of many nodes after them."""
    return entry.nodes > 1, -entry.salience


def _ignored_counts(reasons: Iterable[tuple[str, int]]) -> dict[str, Any]:
    """``ignored_total`` and ``ignored_by_reason`` of (reason, nodes) pairs."""
    by_reason: Counter[str] = Counter()
    for why, nodes in reasons:
        by_reason[why] += nodes
    return {
        "ignored_total": sum(by_reason.values()),
        "ignored_by_reason": dict(sorted(by_reason.items())),
    }


def ignored_view(data: dict[str, Any], limit: int) -> dict[str, Any]:
    """``data`` (a ``to_json()`` form) with its ignored list cut to the ``limit`` most
    salient entries, and ``ignored_total`` and ``ignored_by_reason`` counting them all."""
    ignored: list[dict[str, Any]] = data.get("ignored", [])
    ranked = sorted(ignored, key=lambda entry: -float(entry.get("salience", 0.0)))
    counts = _ignored_counts((str(entry.get("why", "")), 1) for entry in ignored)
    return {**data, "ignored": ranked[:limit], **counts}


@dataclass(frozen=True, slots=True)
class FocusResult:
    goal: str
    mode: Mode
    packing: Packing
    sufficiency: Sufficiency
    covered: frozenset[str]  # ids whose full code is in the context block

    @property
    def budget_used(self) -> int:
        return self.packing.used

    def covered_ids(self) -> frozenset[str]:
        return self.covered

    def context(self) -> str:
        return self.packing.block()

    def to_json(self, ignored_limit: int | None = None) -> dict[str, Any]:
        """The result as JSON-ready data. With ``ignored_limit``, the ignored tail is cut
        to its most salient entries and counted in full (see :func:`ignored_view`)."""
        entries = self.packing.ignored
        if ignored_limit is not None:
            entries = tuple(sorted(entries, key=_by_salience)[:ignored_limit])
        out: dict[str, Any] = {
            "goal": self.goal,
            "mode": self.mode,
            "budget": {
                "limit": self.packing.limit,
                "used": self.packing.used,
                "left": self.packing.left,
            },
            "focus_set": [
                {
                    "id": item.node.id,
                    "path": item.node.path,
                    "kind": item.node.kind,
                    "name": item.node.name,
                    "start_line": item.node.start_line,
                    "end_line": item.node.end_line,
                    "salience": round(item.salience, SALIENCE_DIGITS),
                    "tokens": item.tokens,
                    "render": item.render,
                    "why": item.why,
                }
                for item in self.packing.loaded
            ],
            "ignored": [
                {
                    "what": entry.what,
                    "why": entry.why,
                    "salience": round(entry.salience, SALIENCE_DIGITS),
                    **({"detail": entry.detail} if entry.detail else {}),
                }
                for entry in entries
            ],
            "sufficiency": {
                "state": self.sufficiency.state,
                "captured_salience_mass": self.sufficiency.captured_salience_mass,
                "why": self.sufficiency.why,
            },
        }
        if ignored_limit is not None:
            out.update(_ignored_counts((e.why, e.nodes) for e in self.packing.ignored))
        if self.mode == "set":
            out["context"] = self.context()
        return out


@dataclass(frozen=True, slots=True)
class SeekResult:
    query: str
    results: tuple[dict[str, Any], ...]
    ignored: tuple[dict[str, Any], ...]
    sufficiency: Sufficiency

    def to_json(self) -> dict[str, Any]:
        return {
            "query": self.query,
            "results": list(self.results),
            "ignored": list(self.ignored),
            "sufficiency": {
                "state": self.sufficiency.state,
                "captured_salience_mass": self.sufficiency.captured_salience_mass,
                "why": self.sufficiency.why,
            },
        }


class CountMemo:
    """A token counter that remembers the count of each text it has counted, by the
    text's digest: counting large files is most of a first focus, and a count kept by
    the host (``known``) spares a new process the same work."""

    def __init__(
        self,
        count_tokens: TokenCounter,
        known: Mapping[bytes, int],
        floors: Mapping[bytes, int] | None = None,
    ) -> None:
        """``floors``: floors of texts kept by the host, as :attr:`floors` holds them."""
        self.count_tokens = count_tokens
        self.counts: dict[bytes, int] = dict(known)
        self.added = 0  # texts counted (or first found past a limit) here, not known before
        # floors of texts counted only until they passed a limit (see CountsWithin)
        self.floors: dict[bytes, int] = dict(floors) if floors is not None else {}
        self._within = count_tokens.within if isinstance(count_tokens, CountsWithin) else None

    def __call__(self, text: str) -> int:
        key = text_key(text)
        count = self.counts.get(key)
        if count is None:
            count = self.counts[key] = self.count_tokens(text)
            self.added += 1
        return count

    def within(self, text: str, limit: int) -> int:
        """The count of ``text`` when it is at most ``limit``, else a floor above it (see
        :class:`~coderooms.focus.packing.CountsWithin`); a counter that cannot stop early
        counts the whole text."""
        key = text_key(text)
        count = self.counts.get(key)
        if count is not None:
            return count
        floor = self.floors.get(key, 0)
        if floor > limit:
            return floor
        if self._within is None:
            return self(text)
        count = self._within(text, limit)
        if count <= limit:
            self.counts[key] = count
            self.added += 1
        else:
            # A first floor is new to the host; a raised one is kept with the next save.
            self.added += key not in self.floors
            self.floors[key] = count
        return count

    def joined(self, texts: Sequence[str], counts: Sequence[int]) -> int:
        """The count of ``texts`` joined, ``counts`` being theirs (see
        :class:`~coderooms.focus.packing.CountsJoined`): from the counts when the counter
        can join them, else counted (and remembered) as one text."""
        if isinstance(self.count_tokens, CountsJoined):
            return self.count_tokens.joined(texts, counts)
        return self("".join(texts))


class FocusEngine:
    def __init__(
        self,
        graph: CodeGraph,
        texts: Mapping[str, str],
        count_tokens: TokenCounter,
        embedder: Embedder | None = None,
        config: SalienceConfig | None = None,
        previous: FocusEngine | None = None,
        known: KnownWork | None = None,
        report: Report | None = None,
    ) -> None:
        """``previous``, the engine of an earlier graph of the same repository, or
        ``known``, the work of one kept by the host, lends the work done for code that has
        not changed (see :class:`SalienceIndex`); ``report`` hears of the work done."""
        counted: Mapping[bytes, int] = known.token_counts if known is not None else {}
        if previous is not None and previous.count_tokens is count_tokens:
            counted = previous.counter.counts
        earlier = previous.index if previous is not None else None
        index = SalienceIndex(graph, texts, embedder, config, earlier, known, report)
        self._start(graph, index, count_tokens, counted)
        if previous is not None and previous.count_tokens is count_tokens:
            # Renders of code that did not change, with the texts they were made of.
            index.carry_texts(previous.index)
            self._renders.update(
                (key, value) for key, value in previous._renders.items() if index.unchanged(key[0])
            )

    def _start(
        self,
        graph: CodeGraph,
        index: SalienceIndex,
        count_tokens: TokenCounter,
        counted: Mapping[bytes, int],
    ) -> None:
        self.graph = graph
        self.count_tokens = count_tokens
        self.counter: CountMemo = CountMemo(count_tokens, counted)
        self.index: SalienceIndex = index
        self._renders: RenderCache = {}
        self._last: tuple[tuple[str, Discussed], Salience] | None = None
        self._weights: SalienceConfig | None = None

    def reweighted(self, config: SalienceConfig) -> FocusEngine:
        """An engine over the same index that ranks with ``config``'s rank-time weights
        (see :data:`~coderooms.focus.salience.RANK_TIME_FIELDS`): an ablation or a weight
        search without building the index again."""
        check_rank_time_only(self.index.config, config)
        twin = copy.copy(self)  # shares the index and the render cache
        twin._last = None
        twin._weights = config
        return twin

    def prepare(self) -> None:
        """Work out now what every ranking reads but the index derives on first use (how
        rank flows along the graph), so that the first goal does not wait for it: a host
        calls this once it has the engine, before any goal comes."""
        self.index.spreading()

    def forget(self) -> None:
        """Drop the remembered ranking of the last goal (a benchmark times the next one)."""
        self._last = None

    @classmethod
    def from_reader(
        cls,
        graph: CodeGraph,
        reader: SourceReader,
        count_tokens: TokenCounter,
        embedder: Embedder | None = None,
        config: SalienceConfig | None = None,
        previous: FocusEngine | None = None,
        known: KnownWork | None = None,
        report: Report | None = None,
    ) -> FocusEngine:
        """An engine reading the files of ``graph`` through ``reader`` when it needs
        them (code reused from ``previous`` or ``known`` is not read again)."""
        texts = LazyTexts(graph.file_paths(), reader.read_text)
        return cls(graph, texts, count_tokens, embedder, config, previous, known, report)

    @classmethod
    def restored(
        cls,
        graph: CodeGraph,
        reader: SourceReader,
        count_tokens: TokenCounter,
        built: BuiltIndex,
        embedder: Embedder | None = None,
        known: Callable[[], KnownWork] | None = None,
        token_counts: Mapping[bytes, int] | None = None,
        token_floors: Mapping[bytes, int] | None = None,
    ) -> FocusEngine:
        """The engine whose index :meth:`SalienceIndex.built` gave ``built``, over the same
        ``graph`` and ``embedder`` (see :meth:`SalienceIndex.restored`): it answers as
        that engine did, with nothing counted or embedded first. ``token_counts`` and
        ``token_floors`` are counts and floors kept by the host (see :class:`CountMemo`)."""
        texts = LazyTexts(graph.file_paths(), reader.read_text)
        index = SalienceIndex.restored(graph, texts, built, embedder, None, known)
        engine = cls.__new__(cls)
        engine._start(graph, index, count_tokens, token_counts or {})
        if token_floors:
            engine.counter.floors.update(token_floors)
        return engine

    # --- ranking -----------------------------------------------------------------------

    def salience(self, goal: str, discussed: Discussed = ()) -> Salience:
        """The goal's ranking; ``discussed`` (node id, reason) best first is the code a
        desk's messages about the goal name, which gains (unknown ids are passed over)."""
        key = (goal, discussed)
        if self._last is not None and self._last[0] == key:
            return self._last[1]
        position = self.index.position
        seeds = [(position[node], why) for node, why in discussed if node in position]
        result = rank(self.index, goal, self._weights, room_seeds=seeds)
        self._last = (key, result)
        return result

    def rank_files(self, goal: str, discussed: Discussed = ()) -> list[str]:
        scores = file_scores(self.index, self.salience(goal, discussed))
        return [p for p in sorted(scores, key=lambda p: (-scores[p], p)) if scores[p] > 0]

    def rank_functions(self, goal: str, discussed: Discussed = ()) -> list[str]:
        sal = self.salience(goal, discussed)
        rows = [
            r
            for r in self.index.symbol_rows
            if self.index.nodes[r].kind in ("function", "method") and sal.scores[r] > 0
        ]
        rows.sort(key=lambda r: (-float(sal.scores[r]), self.index.nodes[r].id))
        return [self.index.nodes[r].id for r in rows]

    # --- surfaces ----------------------------------------------------------------------

    def focus(
        self,
        goal: str,
        budget: int = DEFAULT_BUDGET,
        mode: str = "set",
        discussed: Discussed = (),
        elsewhere: Mapping[str, str] | None = None,
    ) -> FocusResult:
        """The code worth loading for ``goal`` in ``budget`` tokens; ``discussed`` as
        :meth:`salience` takes it, ``elsewhere`` (code a teammate holds, by who holds
        it) not sent, as :func:`pack_to_budget` takes it."""
        goal = checked_goal("goal", goal)
        budget = checked_budget(budget)
        chosen = checked_mode(mode)
        sal = self.salience(goal, discussed)
        packing = pack_to_budget(
            self.index, sal, budget, self.counter, self._renders, elsewhere=elsewhere
        )
        verdict = judge(packing, sal, self.index)
        covered: set[str] = set()
        for item in packing.loaded:
            if item.render == "full":
                stack = [item.node.id]
                while stack:
                    node_id = stack.pop()
                    covered.add(node_id)
                    stack.extend(c.id for c in self.index.children_of(node_id))
        return FocusResult(goal, chosen, packing, verdict, frozenset(covered))

    def seek(self, query: str, limit: int = DEFAULT_SEEK_LIMIT) -> SeekResult:
        limit = checked_limit(limit)
        query = checked_goal("query", query)
        sal = self.salience(query)
        rows, _floor = candidate_rows(sal)
        results = tuple(self._describe(sal, r) for r in rows[:limit])
        ignored = tuple(
            {
                "what": self.index.nodes[r].id,
                "why": "over_limit",
                "salience": round(float(sal.scores[r]), SALIENCE_DIGITS),
            }
            for r in rows[limit:]
        )
        weak = unmatched(sal, self.index, bool(rows), "query")
        if weak is not None:
            verdict = weak
        else:
            curve = [float(sal.scores[r]) for r in rows]
            head = knee(curve)
            mass = round(sum(curve[:limit]) / sum(curve), 4)
            if head <= limit:
                verdict = Sufficiency(
                    "sufficient" if rows[limit:] else "saturated",
                    mass,
                    f"the {head} results ahead of the salience knee are all listed",
                )
            else:
                verdict = Sufficiency(
                    "gathering",
                    mass,
                    f"{head - limit} results ahead of the knee lie past the limit",
                )
        return SeekResult(query, results, ignored, verdict)

    def impact(self, target: str, depth: int = 2) -> ImpactResult:
        return impact(self.graph, target, depth)

    def _describe(self, sal: Salience, row: int) -> dict[str, Any]:
        node = self.index.nodes[row]
        return {
            "id": node.id,
            "path": node.path,
            "kind": node.kind,
            "name": node.name,
            "start_line": node.start_line,
            "end_line": node.end_line,
            "salience": round(float(sal.scores[row]), SALIENCE_DIGITS),
            "why": "; ".join(sal.why.get(row, [])),
        }


def with_unindexed(result: FocusResult, unindexed: Mapping[str, str]) -> FocusResult:
    """``result`` telling of the files its goal names that the index left out (path to
    why: ``oversized``, ``submodule`` …): each is in the ignored tail as ``not_indexed``,
    and the verdict says so, since no budget can bring them."""
    if not unindexed:
        return result
    listed = tuple(Ignored(path, "not_indexed", 0.0, why) for path, why in unindexed.items())
    packing = replace(result.packing, ignored=result.packing.ignored + listed)
    named = ", ".join(f"{path} ({why})" for path, why in unindexed.items())
    verdict = replace(
        result.sufficiency,
        why=f"{result.sufficiency.why}; the goal names files the index left out, which no "
        f"budget brings: {named}",
    )
    return replace(result, packing=packing, sufficiency=verdict)
