"""Fill a token budget with the most salient code, and account for everything left out.

``pack_to_budget`` walks candidates best first. Each one is rendered as the agent will
read it — the full source, or a signature skeleton when the full source does not fit —
and loaded when it fits; otherwise it is skipped and the walk goes on. Code is never
paid for twice: a method whose class (or a function whose file) is loaded in full is a
duplicate, and loading a container absorbs the pieces of it already loaded.

Every candidate ends up either in ``loaded`` or in ``ignored`` with a reason; nodes under
the relevance floor are summed up in one ``below_floor`` entry.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal, Protocol, runtime_checkable

import numpy as np

from coderooms.focus.graph import CodeNode
from coderooms.focus.salience import WHY_FLOOR, Salience, SalienceIndex

TokenCounter = Callable[[str], int]


@runtime_checkable
class CountsWithin(Protocol):
    """A token counter that can also stop early: ``within(text, limit)`` is the exact
    count when it is at most ``limit``, else any number above ``limit`` and at most the
    count. The packer asks each candidate only whether it fits in the room left, so a
    long file that cannot fit is not counted to its end."""

    def __call__(self, text: str) -> int: ...

    def within(self, text: str, limit: int) -> int: ...


@runtime_checkable
class CountsJoined(Protocol):
    """A token counter that can count texts joined end to end from their own counts:
    ``joined(texts, counts)``, ``counts`` the exact count of each of ``texts``, is the
    count of ``"".join(texts)``. The packer checks that its context block fits without
    counting the block, a text no goal made before, again."""

    def __call__(self, text: str) -> int: ...

    def joined(self, texts: Sequence[str], counts: Sequence[int]) -> int: ...


Render = Literal["full", "skeleton"]
IgnoreReason = Literal[
    "over_budget",
    "duplicate_of",
    "below_floor",
    "penalized_test",
    "over_candidate_limit",
    "held_by_teammate",
    "not_indexed",  # a file the goal names that the index left out (detail: why)
]

RELATIVE_FLOOR = WHY_FLOOR  # a candidate scores at least this share of the best score
MAX_CANDIDATES = 300
TEST_LOAD_RATIO = 0.25  # test code is loaded only when it scores this share of the best
MAX_SIGNATURE_LINES = 6
FULL_FILE_MAX_SHARE = 0.25  # a whole file is loaded only when it takes at most this share
SKELETON_MAX_SHARE = 0.02  # an outline is loaded only when it takes at most this share
SKELETON_MIN_ALLOWANCE = 160  # … or at most this many tokens, whichever is more
DOCSTRING_SUMMARY_CHARS = 160
EXCERPT_MAX_CHARS = 400  # the head of a file with no outline, shown in place of one


@dataclass(frozen=True, slots=True)
class Loaded:
    node: CodeNode
    salience: float
    tokens: int
    render: Render
    text: str
    why: str


@dataclass(frozen=True, slots=True)
class Ignored:
    what: str
    why: IgnoreReason
    salience: float
    detail: str = ""  # the id a duplicate sits inside, the node count behind below_floor
    nodes: int = 1  # how many nodes the entry stands for (below_floor sums up many)


@dataclass(frozen=True, slots=True)
class Kept:
    """A candidate already resident in the agent's working set, unchanged: not sent again."""

    node: CodeNode
    salience: float
    tokens: int  # what sending it again would have cost
    render: Render
    in_view: bool = False  # it took its tokens of the budget (see ``resident_in_budget``)


@dataclass(frozen=True, slots=True)
class Packing:
    limit: int
    loaded: tuple[Loaded, ...]
    ignored: tuple[Ignored, ...]
    candidates: tuple[str, ...]  # every candidate id, best first
    kept: tuple[Kept, ...] = ()  # resident candidates, best first

    @property
    def used(self) -> int:
        """Tokens sent: the loaded items (kept items are not sent again)."""
        return sum(item.tokens for item in self.loaded)

    @property
    def left(self) -> int:
        return self.limit - self.used - self.held

    @property
    def held(self) -> int:
        """Tokens of the budget that kept items take (see ``resident_in_budget``)."""
        return sum(k.tokens for k in self.kept if k.in_view)

    def block(self) -> str:
        """The context block: loaded items grouped by file, in source order."""
        return "".join(item.text for item in self._in_block_order())

    def block_tokens(self, count_tokens: TokenCounter) -> int:
        """The token count of :meth:`block` (from the items' own counts when
        ``count_tokens`` can join them: see :class:`CountsJoined`)."""
        if not isinstance(count_tokens, CountsJoined):
            return count_tokens(self.block())
        order = self._in_block_order()
        return count_tokens.joined([i.text for i in order], [i.tokens for i in order])

    def _in_block_order(self) -> list[Loaded]:
        return sorted(self.loaded, key=lambda i: (i.node.path, i.node.start_line, i.node.id))


def _signature(
    lines: Sequence[str], node: CodeNode, indent: str = "", docstring: bool = False
) -> list[str]:
    out: list[str] = []
    start = max(node.start_line - 1, 0)
    for line in lines[start : start + MAX_SIGNATURE_LINES]:
        out.append(indent + line.strip() if not out else indent + "    " + line.strip())
        if line.rstrip().endswith(":") or line.rstrip().endswith("{"):
            break
    if docstring and node.docstring:
        summary = node.docstring.strip().splitlines()[0][:DOCSTRING_SUMMARY_CHARS]
        out.append(f'{indent}    """{summary}"""')
    return out


def skeleton(index: SalienceIndex, node: CodeNode) -> str:
    """Signatures only: the node's own (with its docstring's first line), then its direct
    children's; the methods of a class inside a file outline are listed by name. (A
    file that defines nothing has no outline: :func:`render` shows its first lines.)"""
    lines = index.lines(node.path)
    out = [] if node.kind == "file" else _signature(lines, node, docstring=True)
    indent = "" if node.kind == "file" else "    "
    for child in index.children_of(node.id):
        out.extend(_signature(lines, child, indent))
        if node.kind == "file" and child.kind == "class":
            names = [g.name for g in index.children_of(child.id)]
            if names:
                out.append("    # methods: " + ", ".join(names))
    return "\n".join(out) + ("\n    ..." if node.kind != "file" else "")


def _head(lines: list[str]) -> list[str]:
    """The first lines of a file, :data:`EXCERPT_MAX_CHARS` in all (the last one cut)."""
    out: list[str] = []
    room = EXCERPT_MAX_CHARS
    for line in lines:
        if room <= 0:
            break
        out.append(line[:room])
        room -= len(line) + 1
    return out


def _header(node: CodeNode, suffix: str) -> str:
    label = node.path if node.kind == "file" else node.id  # the id tells twins apart
    return f"# {label} lines {node.start_line}-{node.end_line}{suffix}\n"


def ancestors(index: SalienceIndex, node: CodeNode) -> list[str]:
    out = []
    seen = {node.id}
    parent = node.parent
    while parent and parent not in seen:
        out.append(parent)
        seen.add(parent)
        row = index.position.get(parent)  # as the graph's: the last node of a repeated id
        parent = index.nodes[row].parent if row is not None else None
    if node.kind != "file" and node.path not in out and node.path in index.file_of_path:
        out.append(index.nodes[index.file_of_path[node.path]].id)
    return out


def candidate_rows(salience: Salience) -> tuple[list[int], float]:
    """Rows above the relevance floor, best first (ties by row), and the floor itself."""
    scores = salience.scores
    if scores.size == 0 or float(scores.max()) <= 0:
        return [], 0.0
    floor = RELATIVE_FLOOR * float(scores.max())
    rows = np.flatnonzero(scores >= floor)
    order = np.lexsort((rows, -scores[rows]))
    return [int(r) for r in rows[order]], floor


RenderCache = dict[tuple[str, str], tuple[str, int, bool]]
"""Per (node id, render): its text, its token count, and whether that count is exact
(else a floor past the limit it was counted to)."""


def render(
    index: SalienceIndex,
    node: CodeNode,
    kind: Render,
    count_tokens: TokenCounter,
    cache: RenderCache | None = None,
    limit: int | None = None,
) -> tuple[str, int]:
    """The text an item puts in the context block, and its token count (memoized: it
    does not depend on the goal). With a ``limit``, a counter that can stop early (see
    :class:`CountsWithin`) may return, for a text of more tokens than ``limit``, a number
    above ``limit`` short of the count: enough to tell that it does not fit."""
    key = (node.id, kind)
    known = cache.get(key) if cache is not None else None
    if known is not None:
        text, tokens, exact = known
        if exact or (limit is not None and tokens > limit):
            return text, tokens
    else:
        text = _render_text(index, node, kind)
    exact = True
    if limit is not None and isinstance(count_tokens, CountsWithin):
        tokens = count_tokens.within(text, max(limit, 0))
        exact = tokens <= limit  # past the limit it may be a floor only
    else:
        tokens = count_tokens(text)
    if cache is not None:
        cache[key] = (text, tokens, exact)
    return text, tokens


def _render_text(index: SalienceIndex, node: CodeNode, kind: Render) -> str:
    if kind == "full":
        body, suffix = index.body(node), ""
    elif node.kind == "file" and not index.children_of(node.id):
        head = _head(index.lines(node.path))  # no outline: the first lines stand in
        body, suffix = "\n".join(head), f" (the first {len(head)} lines only)"
    else:
        body, suffix = skeleton(index, node), " (signatures only)"
    return _header(node, suffix) + body + "\n"


def pack_to_budget(
    index: SalienceIndex,
    salience: Salience,
    budget: int,
    count_tokens: TokenCounter,
    cache: RenderCache | None = None,
    resident: Mapping[str, tuple[Render, int]] | None = None,
    resident_in_budget: bool = False,
    elsewhere: Mapping[str, str] | None = None,
) -> Packing:
    """``resident`` maps the ids of unchanged code the agent already holds to how it was
    sent and its tokens: such a candidate is :class:`Kept`, is not sent again, and its
    pieces are duplicates of it (it holds them when it was sent in full). With
    ``resident_in_budget`` it still takes its tokens of ``budget`` (the budget bounds
    the goal's whole view, held or sent); without, it costs nothing.

    ``elsewhere`` maps the ids of code a teammate holds to who holds it (a focus that
    avoids a teammate's code): such a candidate is not sent, and the ignored tail names
    the teammate (``held_by_teammate``)."""
    rows, floor = candidate_rows(salience)
    held = resident if resident is not None else {}
    others = elsewhere if elsewhere is not None else {}
    kept: dict[str, Kept] = {}
    scores = salience.scores
    top = float(scores.max()) if scores.size else 0.0
    loaded: dict[str, Loaded] = {}
    ignored: list[Ignored] = []
    used = 0
    lineage: dict[str, list[str]] = {}  # ancestors by node id: each loaded item is asked again
    # Per node id, the loaded items inside it, in the order they were loaded (as ``loaded``
    # holds them): what a candidate would absorb, without asking every loaded item.
    beneath: dict[str, dict[str, None]] = defaultdict(dict)

    def above(node: CodeNode) -> list[str]:
        found = lineage.get(node.id)
        if found is None:
            found = lineage[node.id] = ancestors(index, node)
        return found

    def load(item: Loaded) -> None:
        loaded[item.node.id] = item
        for ancestor in above(item.node):
            beneath[ancestor][item.node.id] = None

    def unload(key: str) -> Loaded:
        gone = loaded.pop(key)
        for ancestor in above(gone.node):
            del beneath[ancestor][key]
        return gone

    for position, row in enumerate(rows):
        node = index.nodes[row]
        score = float(scores[row])
        why = "; ".join(salience.why.get(row, [])) or "linked to the goal"
        if position >= MAX_CANDIDATES:
            ignored.append(Ignored(node.id, "over_candidate_limit", score))
            continue
        if node.id in others and node.id not in held:
            ignored.append(Ignored(node.id, "held_by_teammate", score, others[node.id]))
            continue
        holder = next(
            (
                a
                for a in above(node)
                if (a in loaded and loaded[a].render == "full")
                or (a in held and held[a][0] == "full")  # held in full, ranked lower or not
            ),
            None,
        )
        if holder is not None:
            ignored.append(Ignored(node.id, "duplicate_of", score, holder))
            continue

        def keep(node: CodeNode = node, score: float = score) -> None:
            nonlocal used
            how, tokens = held[node.id]
            in_view = resident_in_budget and used + tokens <= budget
            kept[node.id] = Kept(node, score, tokens, how, in_view)
            if in_view:
                used += tokens

        if node.id in held and held[node.id][0] == "full":
            keep()
            continue
        if node.is_test and score < TEST_LOAD_RATIO * top:
            ignored.append(Ignored(node.id, "penalized_test", score))
            continue
        inside = list(beneath.get(node.id, ()))
        absorbed = sum(loaded[key].tokens for key in inside if loaded[key].render == "full")
        room = budget - used + absorbed
        if node.kind == "file":  # a whole file takes at most its share of the budget
            room = min(room, math.floor(FULL_FILE_MAX_SHARE * budget))
        full, full_tokens = render(index, node, "full", count_tokens, cache, room)
        fits = full_tokens <= room
        if fits:
            for key in inside:
                gone = unload(key)
                used -= gone.tokens
                ignored.append(Ignored(key, "duplicate_of", gone.salience, node.id))
            load(Loaded(node, score, full_tokens, "full", full, why))
            used += full_tokens
            continue
        if node.id in held:  # its outline is held; the full code does not fit
            keep()
            continue
        allowance = max(SKELETON_MAX_SHARE * budget, SKELETON_MIN_ALLOWANCE)
        if row in salience.named:  # asked for by name: its head may take a file's share
            allowance = max(allowance, FULL_FILE_MAX_SHARE * budget)
        outline_room = min(budget - used, math.floor(allowance))
        outline, outline_tokens = render(index, node, "skeleton", count_tokens, cache, outline_room)
        if full_tokens > room and outline_tokens >= full_tokens:
            # the full code's count may be a floor only: count on as far as the outline's
            _, full_tokens = render(index, node, "full", count_tokens, cache, outline_tokens)
        if outline_tokens < full_tokens and outline_tokens <= outline_room:
            load(Loaded(node, score, outline_tokens, "skeleton", outline, why))
            used += outline_tokens
            continue
        ignored.append(Ignored(node.id, "over_budget", score))
    below = np.flatnonzero((scores > 0) & (scores < floor)) if scores.size else np.zeros(0)
    if below.size:
        ignored.append(
            Ignored(
                f"{below.size} more nodes",
                "below_floor",
                float(scores[below].sum()),
                f"each under {floor:.4f}",
                int(below.size),
            )
        )
    items = tuple(sorted(loaded.values(), key=lambda i: (-i.salience, i.node.id)))
    packing = Packing(
        budget,
        items,
        tuple(ignored),
        tuple(index.nodes[r].id for r in rows),
        tuple(kept.values()),
    )
    return _trim_to_block(packing, count_tokens)


def _trim_to_block(packing: Packing, count_tokens: TokenCounter) -> Packing:
    """Token counts of pieces may differ from the count of their concatenation at the
    seams; drop the least salient items until the block itself fits (beside the kept
    items' share, when they take one)."""
    room = packing.limit - packing.held
    while packing.loaded and packing.block_tokens(count_tokens) > room:
        last = packing.loaded[-1]
        packing = Packing(
            packing.limit,
            packing.loaded[:-1],
            (Ignored(last.node.id, "over_budget", last.salience), *packing.ignored),
            packing.candidates,
            packing.kept,
        )
    return packing
