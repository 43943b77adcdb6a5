"""Goal-conditioned salience: one deterministic score per node of a code graph.

1. Seeds: the ranked lists of the signals in :mod:`coderooms.focus.signals` (BM25 over
   whole files and over single functions, names the repository defines, dotted names
   and paths, traceback frames, messages found verbatim in the code, file names, and,
   when an embedder is given, static-embedding similarity), fused by weighted
   Reciprocal Rank Fusion.
2. Graph: personalized PageRank from the fused seeds over relation-weighted edges,
   followed both ways, so neighbours of the seeds gain and unrelated hubs do not.
3. Signals: recency and change frequency from git; penalties for tests, vendored and
   generated code. Each one is written into the node's ``why``.

:class:`SalienceIndex` holds what does not depend on the goal (built once per graph);
:func:`rank` does the per-goal work.
"""

from __future__ import annotations

import bisect
import math
import operator
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from itertools import compress, repeat
from typing import Any, Literal, TypeVar, cast, overload

import numpy as np
import scipy.sparse as sp

from coderooms.focus import documents as docs
from coderooms.focus.carried import (
    MAX_COPY_RUNS,
    Feed,
    carried_transition,
    spans_copied,
    touched_rows,
    transition_of,
)
from coderooms.focus.documents import FILE_TEXT_CAP_CHARS, KEY_SIZE
from coderooms.focus.errors import UnknownSignal
from coderooms.focus.graph import (
    CodeGraph,
    CodeNode,
    DeferredEdges,
    EdgeColumns,
    EdgePatch,
    NodeTable,
)
from coderooms.focus.lexical import CountedBM25, DocumentCounts
from coderooms.focus.signals import SIGNAL_NAMES, SIGNALS, Query
from coderooms.focus.signals._names import MAX_NAME_DEFINITIONS
from coderooms.focus.signals.paths import MAX_TAIL_PARTS

Embedder = Callable[[Sequence[str]], np.ndarray]
RowArray = Literal["file", "symbol", "dangling"]
_T = TypeVar("_T")
EdgeEnds = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]
"""Per edge of a graph, in its order: the row of its source and of its target (-1: no
node of the index), its strength (its relation's weight times its own) and whether it
is an import."""
Report = Callable[[str, int, int], None]
"""Told of long work as it goes: (phase, done, total); a phase ends when done == total."""
COUNTING_PHASE = "counting terms"
EMBEDDING_PHASE = "embedding code"
REPORT_EVERY = 500  # documents counted between two reports
EMBED_BATCH = 2048  # texts embedded between two reports (rows do not depend on batching)

MAX_TOUCHED_SHARE = 0.5
"""Share of the rows an edit may touch for the index built on the one before to carry
the others' rows of the transition matrix; past it the matrix is built whole."""
MAX_KEY_SCANS = 512  # keys looked up by a scan of the previous keys; more: a table of them
# (on sympy's 40k keys a scan takes about 20 us, a table of them 10-17 ms)
SOURCE_PRIOR_FLOOR = 0.9
WHY_FLOOR = 0.02  # reasons are written for nodes scoring at least this share of the best
FILE_CHILD_SHARE = 1.0  # how much of a file's best symbol score counts toward the file
PAGERANK_ITERATIONS = 30
PAGERANK_TOLERANCE = 1e-5
# The walk stops once a step moves less than this much of its unit mass (L1): each step
# shrinks the change by the restart's factor, so the scores are then within about two
# thirds of it of the fixed point. 1e-9 took 19-21 steps on sympy, 1e-5 takes 10-11; on
# the 128 development instances every figure is the same at 1e-9, 1e-6, 1e-5, 1e-4 and
# 1e-3, and sympy's focus answers are byte-identical at 1e-5 (at 1e-4 the order of their
# ignored tails moves).
LAYOUT_AFTER_WALKS = 1
"""Walks an index takes in the graph's own row order before it lays the walk out for
locality (see :class:`WalkLayout`): a process that answers once, as the command line
does, never pays for the layout (40 ms on sympy); a server gains on every later walk."""
LAYOUT_MIN_ROWS = 5_000  # a smaller graph's rank vector is near in any order
SUM_ORDER_MARGIN = 4.0  # times n·eps of a sum: 4x how far two orders' sums can be apart
EDGE_PREFIX = "edge:"  # names an edge kind in an ablation
STANDALONE_SCRIPTS = "standalone_scripts"  # names the standalone-script prior in an ablation
ROOM_SEED_WEIGHT = 1.0
"""Weight of the code a team's discussion of the goal names (``rank``'s ``room_seeds``),
fused as one more ranked list: half of what naming a symbol in the goal itself earns."""


def _default_signal_weights() -> dict[str, float]:
    return {signal.name: signal.default_weight for signal in SIGNALS}


def _default_edge_weights() -> dict[str, float]:
    return {
        "contains": 1.0,
        "calls": 0.6,
        "name_match": 0.3,  # a call tied by its name only (see index.resolve)
        "references": 0.4,
        "inherits": 0.6,
        "imports": 0.25,
        "tests": 0.3,
        "co_change": 0.3,
    }


@dataclass(frozen=True, slots=True)
class SalienceConfig:
    """Every weight of the ranking; defaults are calibrated on the development split."""

    rrf_k: float = 20.0  # 10-60 all within one dev instance of each other; 100 was worse
    file_context: float = 0.5  # how much a symbol's score leans on its file's strength
    weighted_query: bool = True  # title and prose count more than code and log blocks
    signal_weights: Mapping[str, float] = field(default_factory=_default_signal_weights)
    restart: float = 0.6  # PageRank restart probability: how strongly seeds stay put
    backward: float = 0.6  # weight of an edge followed against its direction
    edge_weights: Mapping[str, float] = field(default_factory=_default_edge_weights)
    test_penalty: float = 0.3
    vendored_penalty: float = 0.2
    generated_penalty: float = 0.2
    nested_vendor_dirs: frozenset[str] = frozenset({"packages", "_vendor", "vendored", "_vendored"})
    auxiliary_penalty: float = 0.3  # documentation, examples and benchmarks
    auxiliary_dirs: frozenset[str] = frozenset(
        {"doc", "docs", "example", "examples", "bench", "benchmark", "benchmarks"}
    )
    document_penalty: float = 0.3  # prose and configuration files (no parsed code)
    code_languages: frozenset[str] = frozenset(
        {"python", "javascript", "typescript", "tsx", "go", "rust", "java", "c", "cpp"}
    )
    standalone_scripts: bool = True  # hold back Python files in no package that nothing imports
    recency_weight: float = 0.05
    recency_half_life_days: float = 180.0
    frequency_weight: float = 0.05

    def weight(self, signal: str) -> float:
        return float(self.signal_weights.get(signal, 0.0))

    def without(self, *names: str) -> SalienceConfig:
        """This configuration with the named signals (see :data:`SIGNAL_NAMES`), edge
        kinds (``edge:calls``) or the standalone-script prior switched off: an ablation."""
        signals = dict(self.signal_weights)
        edges = dict(self.edge_weights)
        standalone = self.standalone_scripts
        for name in names:
            if name == STANDALONE_SCRIPTS:
                standalone = False
            elif name in signals:
                signals[name] = 0.0
            elif name.startswith(EDGE_PREFIX) and name[len(EDGE_PREFIX) :] in edges:
                edges[name[len(EDGE_PREFIX) :]] = 0.0
            else:
                known = list(SIGNAL_NAMES) + [EDGE_PREFIX + kind for kind in sorted(edges)]
                raise UnknownSignal(name, ", ".join([*known, STANDALONE_SCRIPTS]))
        return replace(
            self, signal_weights=signals, edge_weights=edges, standalone_scripts=standalone
        )


@dataclass(frozen=True, slots=True)
class Salience:
    """Per-goal result: scores (summing to 1) over ``index.nodes`` and the reasons."""

    scores: np.ndarray
    why: dict[int, list[str]]
    seeded: int  # nodes that got any seed weight
    precise_cues: int  # goal cues that resolved to code (names, paths, frames, literals)
    term_coverage: float  # share of goal terms found anywhere in the index
    file_strength: np.ndarray | None = None  # per row, for file rows: the file's rank score
    named: frozenset[int] = frozenset()  # rows of the files the goal names by their path


def _module_suffixes(path: str) -> list[str]:
    """``src/pkg/sub/mod.py`` → ``pkg.sub.mod``-style endings: ``mod``, ``sub.mod``, …"""
    stem = path.rsplit(".", 1)[0]
    parts = [p for p in stem.split("/") if p]
    if parts and parts[-1] == "__init__":
        parts = parts[:-1]
    return [".".join(parts[i:]) for i in range(len(parts))]


@dataclass(frozen=True, slots=True)
class KnownWork:
    """The costly goal-independent work of an index, as plain arrays: the term counts of
    its file and symbol documents and its embedding rows, each under a key that names
    what it was computed from. A later index of the same repository takes every document
    and row whose key it finds instead of computing it again; a host may keep this on
    disk so that a new process starts from it."""

    file_documents: DocumentCounts
    symbol_documents: DocumentCounts
    embedding_keys: tuple[bytes, ...] = ()
    embeddings: np.ndarray | None = None
    token_counts: Mapping[bytes, int] = field(default_factory=dict)  # by text_key(text)
    # Per node id, the keys of its document (NO_KEY: none) and of its embedding text, when
    # the work was made for the nodes of one graph (a cold run's): an index over that
    # graph built from nothing else takes them instead of hashing its nodes again.
    node_keys: Mapping[str, tuple[bytes, bytes]] = field(default_factory=dict)
    # The rows of ``embedding_keys`` while they are still being made elsewhere (then
    # ``embeddings`` is None): asked for once an index needs them (see :meth:`settled`),
    # as the last step of its build, so that they are made meanwhile. None from it: no
    # rows could be made (an index then embeds its nodes itself).
    later: Callable[[], np.ndarray | None] | None = None

    @classmethod
    def nothing(cls) -> KnownWork:
        """No work known: every document is counted and every row embedded."""
        empty = np.zeros(0, dtype=np.int64)
        documents = DocumentCounts((), (), np.zeros(1, dtype=np.int64), empty, empty)
        return cls(documents, documents)

    def without_embeddings(self) -> KnownWork:
        return replace(self, embedding_keys=(), embeddings=None, later=None)

    def settled(self) -> KnownWork:
        """This work with its rows in hand: those made elsewhere waited for, if any."""
        if self.later is None:
            return self
        rows = self.later()
        if rows is None:
            return self.without_embeddings()
        return replace(self, embeddings=rows, later=None)


@dataclass(frozen=True, slots=True)
class BuiltIndex:
    """What a :class:`SalienceIndex` works out from its graph before any goal, as plain
    data: the lexical indexes, the name and path tables, the transition matrix, the prior
    and the embedding rows. A host may keep it beside the index: :meth:`SalienceIndex.
    restored` makes of it, without counting, embedding or walking the graph, an index that
    ranks bit for bit as the one :meth:`SalienceIndex.built` took it from. The documents
    and embedding rows are in it, under the keys of ``document_keys`` and
    ``embedding_keys``: a restored index lends them by row to the index of the next edit."""

    node_ids: tuple[str, ...]  # the rows, in order: what a restoring graph must hold
    file_rows: list[int]
    symbol_rows: list[int]
    file_of_path: dict[str, int]
    file_row_of: np.ndarray
    file_documents: DocumentCounts  # the term counts BM25 weighs; keys: in document_keys
    symbol_documents: DocumentCounts
    definitions: dict[str, list[int]]
    qualnames: dict[str, list[int]]
    path_tails: dict[str, list[int]]
    module_ends: dict[str, list[int]]
    stems: dict[str, list[int]]
    symbols_by_file: dict[int, list[int]]
    children: dict[str, list[int]]  # rows, in source order
    transition: tuple[np.ndarray, np.ndarray, np.ndarray]  # CSR data, indices, indptr
    transposed: tuple[np.ndarray, np.ndarray, np.ndarray]
    has_out: np.ndarray
    imported: tuple[str, ...]
    packaged: bool
    prior: np.ndarray
    source_rows: list[int]
    embeddings: np.ndarray | None
    document_keys: bytes = b""  # per row, joined: see SalienceIndex.row_keys
    embedding_keys: bytes = b""


class LazyTexts(Mapping[str, str]):
    """The texts of ``paths``, each made by ``read`` when first asked for and kept (a
    host may hand the index texts it reads from files only when they are needed)."""

    def __init__(self, paths: Iterable[str], read: Callable[[str], str]) -> None:
        self._paths = dict.fromkeys(paths)
        self._read = read
        self._texts: dict[str, str] = {}

    def __getitem__(self, path: str) -> str:
        text = self._texts.get(path)
        if text is None:
            if path not in self._paths:
                raise KeyError(path)
            text = self._texts[path] = self._read(path)
        return text

    def __contains__(self, path: object) -> bool:
        return path in self._paths

    def read_so_far(self) -> Mapping[str, str]:
        """The texts made until now, by path."""
        return self._texts

    def take(self, texts: Mapping[str, str]) -> None:
        """Keep ``texts`` (of some of the paths) as if they had been made here."""
        self._texts.update((path, text) for path, text in texts.items() if path in self._paths)

    def __iter__(self) -> Iterator[str]:
        return iter(self._paths)

    def __len__(self) -> int:
        return len(self._paths)


def _same_layout(graph: CodeGraph, before: CodeGraph) -> bool:
    """Whether ``graph`` holds the ids of ``before``, of the same kinds, in the same order,
    known without making a node (both lazy node tables): an index over it then has the
    rows of an index over ``before``. (A symbol's id holds its file's path.)"""
    nodes, old = graph.nodes, before.nodes
    if not isinstance(nodes, NodeTable) or not isinstance(old, NodeTable):
        return False
    return _same_items(nodes.ids, old.ids) and _same_items(nodes.kinds, old.kinds)


def _same_items(a: Sequence[str], b: Sequence[str]) -> bool:
    return a is b or (len(a) == len(b) and all(map(operator.eq, a, b)))


def _nodes_by_id(
    graph: CodeGraph,
) -> tuple[tuple[CodeNode, ...], Sequence[str], Sequence[str], np.ndarray | None]:
    """The graph's nodes sorted by id (stably: a repeated id keeps the graph's order),
    with their ids and kinds in that order, and where each sits in the graph. From a
    lazy node table the order is sorted from its ids alone, and the ids and kinds are
    picked without asking a node; from another graph the places are not kept (None)."""
    nodes = graph.nodes
    if isinstance(nodes, NodeTable) and len(nodes) > 1:
        ids = nodes.ids
        order = sorted(range(len(ids)), key=ids.__getitem__)
        pick = operator.itemgetter(*order)
        places = np.fromiter(order, np.int64, len(order))
        return nodes.picked(order), pick(ids), pick(nodes.kinds), places
    ordered = tuple(sorted(nodes, key=lambda n: n.id))
    return ordered, tuple(n.id for n in ordered), tuple(n.kind for n in ordered), None


@dataclass(frozen=True, slots=True)
class _Layout:
    """An index's rows: its nodes in id order, their ids and kinds, where each sits in
    the graph (None: not known) and, for an index laid out from the one before (see
    :func:`_carried_layout`), per row the row there of the very same node (-1: made
    anew)."""

    nodes: tuple[CodeNode, ...]
    ids: Sequence[str]
    kinds: Sequence[str]
    places: np.ndarray | None
    there: np.ndarray | None = None


def _carried_layout(graph: CodeGraph, previous: SalienceIndex) -> _Layout | None:
    """The rows :func:`_nodes_by_id` gives, from ``previous``'s: the nodes the graph took
    from ``previous``'s graph (see :class:`TakenNodes`) keep their order there, and the
    few made anew (an edited file's) are placed among them by their ids. None when that
    is not known, or an id repeats (a stable sort then orders the twins by place)."""
    nodes, before = graph.nodes, previous.graph.nodes
    taken = nodes.taken if isinstance(nodes, NodeTable) else None
    old = previous._layout_rows
    if taken is None or taken.before() is not before or old is None or old.places is None:
        return None
    if not isinstance(nodes, NodeTable) or len(previous.position) != len(old.nodes):
        return None
    ids = nodes.ids
    to_here = np.full(len(before), -1, dtype=np.int64)  # a place there to its place here
    for here, there, length in taken.runs:
        to_here[there : there + length] = np.arange(here, here + length, dtype=np.int64)
    placed = to_here[old.places]  # per row there: its node's place here (-1: not taken)
    kept = np.flatnonzero(placed >= 0)
    carried = placed[kept]
    made = np.ones(len(ids), dtype=np.bool_)
    made[carried] = False
    fresh = sorted(np.flatnonzero(made).tolist(), key=ids.__getitem__)
    old_ids, kept_rows = old.ids, kept.tolist()
    at: list[int] = []  # per fresh node: how many carried rows come before it
    for k, place in enumerate(fresh):
        name = ids[place]
        spot = bisect.bisect_left(range(len(kept_rows)), name, key=lambda j: old_ids[kept_rows[j]])
        after = spot < len(kept_rows) and old_ids[kept_rows[spot]] == name
        if after or (k and ids[fresh[k - 1]] == name):
            return None  # a repeated id
        at.append(spot)
    size = len(ids)
    fresh_rows = np.asarray(at, dtype=np.int64) + np.arange(len(fresh), dtype=np.int64)
    is_fresh = np.zeros(size, dtype=np.bool_)
    is_fresh[fresh_rows] = True
    places = np.empty(size, dtype=np.int64)
    places[fresh_rows] = fresh
    places[~is_fresh] = carried
    row_there = np.full(size, -1, dtype=np.int64)
    row_there[~is_fresh] = kept
    # Rows there that follow each other here too: the runs each table is copied in.
    gaps = (np.flatnonzero(np.diff(kept) != 1) + 1).tolist()
    bounds = sorted({0, len(kept_rows), *at, *gaps})

    def spliced(old_rows: tuple[_T, ...], made: list[_T]) -> tuple[_T, ...]:
        return _spliced_rows(old_rows, kept_rows, bounds, at, made)

    return _Layout(
        spliced(old.nodes, [nodes[place] for place in fresh]),
        spliced(tuple(old.ids), [ids[place] for place in fresh]),
        spliced(tuple(old.kinds), [nodes.kinds[place] for place in fresh]),
        places,
        row_there,
    )


def _spliced_rows(
    old: tuple[_T, ...], kept: list[int], bounds: list[int], at: list[int], fresh: list[_T]
) -> tuple[_T, ...]:
    """``old[kept[j]]`` for each ``j`` in order, with ``fresh[k]`` put before the
    ``at[k]``-th of them (``at`` ascending), copied in the runs between ``bounds``
    (ascending, from 0 to ``len(kept)``: each run's rows follow each other in ``old``)."""
    out: list[_T] = []
    k = 0
    for a, b in zip(bounds, [*bounds[1:], None], strict=True):
        while k < len(at) and at[k] == a:
            out.append(fresh[k])
            k += 1
        if b is not None:
            out.extend(old[kept[a] : kept[a] + b - a])
    return tuple(out)


def _picked(nodes: Sequence[CodeNode], rows: list[int]) -> Sequence[CodeNode]:
    """``nodes[row]`` for each of ``rows``, in order (of a tuple, in one step)."""
    if isinstance(nodes, tuple) and len(rows) > 1:
        return cast(tuple[CodeNode, ...], operator.itemgetter(*rows)(nodes))
    return [nodes[row] for row in rows]


class _NodesInOrder(Sequence[CodeNode]):
    """``nodes`` in the order ``order`` gives (row i is ``nodes[order[i]]``), each read
    from ``nodes`` when asked for: a restored index does not make every node of a graph
    that makes them lazily."""

    def __init__(self, nodes: Sequence[CodeNode], order: list[int]) -> None:
        self._nodes = nodes
        self._order = order

    @overload
    def __getitem__(self, row: int) -> CodeNode: ...
    @overload
    def __getitem__(self, row: slice) -> Sequence[CodeNode]: ...
    def __getitem__(self, row: int | slice) -> CodeNode | Sequence[CodeNode]:
        if isinstance(row, slice):
            return tuple(self._nodes[at] for at in self._order[row])
        return self._nodes[self._order[row]]

    def __len__(self) -> int:
        return len(self._order)

    def __iter__(self) -> Iterator[CodeNode]:
        return map(self._nodes.__getitem__, self._order)


class _ChildrenOf(Mapping[str, list[CodeNode]]):
    """Parent id to its children, from their rows (see :attr:`BuiltIndex.children`),
    each list made when first asked for."""

    def __init__(self, rows: Mapping[str, list[int]], nodes: Sequence[CodeNode]) -> None:
        self._rows = rows
        self._nodes = nodes
        self._made: dict[str, list[CodeNode]] = {}

    def __getitem__(self, parent: str) -> list[CodeNode]:
        kids = self._kids(parent)
        if kids is None:
            raise KeyError(parent)
        return kids

    @overload
    def get(self, parent: str, /) -> list[CodeNode] | None: ...
    @overload
    def get(self, parent: str, /, default: list[CodeNode] | _T) -> list[CodeNode] | _T: ...
    def get(self, parent: str, /, default: object = None) -> object:
        """The children of ``parent``, else ``default``: without raising and catching a
        KeyError for each node with no children (most nodes), as Mapping.get would."""
        kids = self._kids(parent)
        return default if kids is None else kids

    def _kids(self, parent: str) -> list[CodeNode] | None:
        kids = self._made.get(parent)
        if kids is None:
            rows = self._rows.get(parent)
            if rows is None:
                return None
            kids = self._made[parent] = [self._nodes[row] for row in rows]
        return kids

    def __iter__(self) -> Iterator[str]:
        return iter(self._rows)

    def __len__(self) -> int:
        return len(self._rows)


class SalienceIndex:
    """The goal-independent part of ranking, built once per code graph."""

    # Rows per key (see _build_tables): a symbol's name and qualified name, a file's
    # path endings and module endings.
    definitions: Mapping[str, list[int]]
    qualnames: Mapping[str, list[int]]
    path_tails: Mapping[str, list[int]]
    module_ends: Mapping[str, list[int]]

    def __init__(
        self,
        graph: CodeGraph,
        texts: Mapping[str, str],
        embedder: Embedder | None = None,
        config: SalienceConfig | None = None,
        previous: SalienceIndex | None = None,
        known: KnownWork | None = None,
        report: Report | None = None,
    ) -> None:
        """``previous``, an index of an earlier graph of the same repository, lends its
        tokenised documents and embedding rows to every node whose code is unchanged:
        re-indexing after an edit then costs about what the edit touched. ``known`` lends
        the same from :meth:`known_work` of an index built elsewhere (its embedding rows
        must come from ``embedder``). The result equals an index built from nothing.

        A file node's ``content_hash``, when set, must fingerprint the text handed in for
        it: documents and rows are known by it, so that a reused one needs no text.
        ``report`` hears of the counting and embedding done here (none when all is known)."""
        self.graph = graph
        self.config = config or SalienceConfig()
        self.nodes: Sequence[CodeNode]
        layout = _carried_layout(graph, previous) if previous is not None else None
        layout_of = layout or _Layout(*_nodes_by_id(graph))
        self._layout_rows: _Layout | None = layout_of
        self.nodes, ids, kinds = layout_of.nodes, layout_of.ids, layout_of.kinds
        self._order = layout_of.places
        self.texts: Mapping[str, str] = LazyTexts(
            texts, lambda path: texts[path][:FILE_TEXT_CAP_CHARS]
        )
        self.embedder: Embedder | None = embedder
        self._report = report
        as_before = previous is not None and _same_layout(graph, previous.graph)
        laid_out = previous if as_before else None
        if laid_out is not None:
            # The same ids of the same kinds in the same order (an edit inside functions):
            # the row tables are the previous index's, which no one changes.
            self.position: dict[str, int] = laid_out.position
            self.file_rows: list[int] = laid_out.file_rows
            self.symbol_rows: list[int] = laid_out.symbol_rows
            self.file_of_path: dict[str, int] = laid_out.file_of_path
            self.file_row_of: np.ndarray = laid_out.file_row_of
        elif previous is not None and layout is not None and layout.there is not None:
            self._rows_after(previous, layout.there, ids, kinds)
        else:  # each a pass of the interpreter's own loops over the ids and kinds
            count = len(ids)
            self.position = dict(zip(ids, range(count), strict=True))  # a repeated id: its last
            self.file_rows = list(compress(range(count), map(_FILE_KIND.__eq__, kinds)))
            self.symbol_rows = list(compress(range(count), map(_SYMBOL_KINDS.__contains__, kinds)))
            self.file_of_path = {self.nodes[i].path: i for i in self.file_rows}
            paths = map(operator.attrgetter("path"), self.nodes)
            self.file_row_of = np.fromiter(
                map(self.file_of_path.get, paths, range(count)), np.int64, count
            )  # a row outside every file: its own
        self._lines: dict[str, list[str]] = {}
        self._file_keys: dict[str, bytes] = {}
        self._row_arrays: dict[str, np.ndarray] = {}
        self._fresh_documents = 0  # documents counted here, not taken from known work
        self._known: Callable[[], KnownWork] | None = None  # for a restored index
        self._unchanged_files: set[str] = set()  # paths as in ``previous``, text known
        self._there = np.full(len(self.nodes), -1, dtype=np.int64)  # per row: its row there
        self._id_there: np.ndarray | None = None  # per row: its id's row there (-1: none)
        self._counted: dict[str, DocumentCounts] = {}  # see file_documents
        self._kept_documents: tuple[DocumentCounts, DocumentCounts] | None = None
        self._kept_keys: tuple[bytes, bytes] | None = None  # a restored index's, joined
        # Rows whose node and file are as in ``previous``: their keys are its keys.
        same = 0  # rows carried over from ``previous`` (see _unchanged_rows)
        old_documents: tuple[bytes, ...] = ()
        old_embeddings: tuple[bytes, ...] = ()
        self._term_ids: dict[str, dict[str, int]] = {}  # per document kind: term -> its id
        # per document kind: per document, the lender's document it was taken from (-1: none)
        self._lent_from: dict[str, np.ndarray] = {}
        lender: SalienceIndex | None = None  # built in this process: lends rows by row
        if previous is not None:
            old_documents, old_embeddings = previous.row_keys()
            same = self._unchanged_rows(previous, ids)
            lends_rows = embedder is None or (
                previous.embedder is embedder and previous.embeddings is not None
            )
            if same and lends_rows:  # a restored index holds its documents and rows too
                lender, known = previous, None
            else:
                known = previous.known_work()
                if previous.embedder is not embedder:
                    known = known.without_embeddings()
        nodes = self.nodes
        told = known.node_keys if known is not None and previous is None else {}
        file_keys = self._carried_keys(
            old_documents, self.file_rows, _told(told, 0, nodes, lambda n: self._file_key(n.path))
        )
        symbol_keys = self._carried_keys(
            old_documents, self.symbol_rows, _told(told, 0, nodes, self._symbol_key)
        )
        if lender is not None:
            self.file_documents = self._borrowed_documents(
                "file", file_keys, self._file_counts, lender
            )
            self.symbol_documents = self._borrowed_documents(
                "symbol", symbol_keys, self._symbol_counts, lender
            )
        else:
            self.file_documents = self._documents(
                "file", file_keys, self._file_counts, known.file_documents if known else None
            )
            self.symbol_documents = self._documents(
                "symbol",
                symbol_keys,
                self._symbol_counts,
                known.symbol_documents if known else None,
            )
        document_keys = [NO_KEY] * len(self.nodes)
        for rows, keys in ((self.file_rows, file_keys), (self.symbol_rows, symbol_keys)):
            for row, key in zip(rows, keys, strict=True):
                document_keys[row] = key
        self.document_keys: tuple[bytes, ...] = tuple(document_keys)  # per row; NO_KEY: none
        self.reused_keys = same  # rows whose keys were taken from ``previous``
        self.file_bm25 = CountedBM25(
            self.file_documents, self._term_ids.get("file"), self._lent_bm25(lender, "file")
        )
        self.symbol_bm25 = CountedBM25(
            self.symbol_documents, self._term_ids.get("symbol"), self._lent_bm25(lender, "symbol")
        )
        self._build_tables(previous if same else None)
        self._ends: EdgeEnds | None = self._edge_ends(previous)
        self._fed: Feed | None = None
        self.transition = self._transition(previous)
        self._spreading: tuple[sp.csr_matrix, np.ndarray] | None = None
        _, dst_rows, _, imports = self._ends
        targets = dst_rows[imports & (dst_rows >= 0)]
        self._imported = frozenset(self.nodes[int(row)].path for row in np.unique(targets))
        self._facts: dict[str, tuple[bool, bool]] = {}
        self._packaged = any(p.rsplit("/", 1)[-1] == "__init__.py" for p in self.file_of_path)
        self.prior = self._prior(previous)
        # Files a verbatim search looks in: code that is not a test, an example or prose.
        self.source_rows = [i for i in self.file_rows if self.prior[i] >= SOURCE_PRIOR_FLOOR]
        self._notes: dict[int, list[str]] = {}
        self._within: dict[str, tuple[str, ...]] = {}  # see within
        self._derived: dict[str, Any] = {}
        self._walks = 0
        self._layout: WalkLayout | None = None
        self.embeddings: np.ndarray | None = None
        self.embedding_keys: tuple[bytes, ...] = ()  # per row: what its embedding is of
        self.fresh_embeddings = 0  # rows computed here, not taken from known work
        if embedder is not None and self.nodes:
            if known is not None:  # rows made elsewhere meanwhile: needed now
                known = known.settled()
            if len(old_embeddings) == len(previous.nodes if previous else ()):
                keys = self._carried_keys(
                    old_embeddings, None, _told(told, 1, nodes, self._embed_key)
                )
            else:
                keys = tuple(self._embed_key(node) for node in self.nodes)
            if lender is not None and lender.embedder is embedder and lender.embeddings is not None:
                self.embeddings = self._borrowed_embeddings(
                    embedder, lender.embeddings, lender.embedding_keys, keys
                )
            else:
                self.embeddings = self._embed_all(embedder, known, keys)

    def _rows_after(
        self, previous: SalienceIndex, there: np.ndarray, ids: Sequence[str], kinds: Sequence[str]
    ) -> None:
        """The row tables (position, file and symbol rows, each row's file row) of rows laid
        out from ``previous``'s (see :func:`_carried_layout`; ``there``: per row, its row
        there, -1 for a node made anew; no id repeats): up to the first row that moved
        they are ``previous``'s; past it each is made again, and a carried row's file row
        is its file row there, renumbered. The same tables as made from every row."""
        count = len(ids)
        moved = np.flatnonzero(there != np.arange(count, dtype=np.int64))
        first = int(moved[0]) if moved.size else count
        kept = np.flatnonzero(there >= 0)
        gone = np.ones(len(previous.nodes), dtype=np.bool_)
        gone[there[kept]] = False
        old_ids = previous._layout_rows.ids if previous._layout_rows is not None else None
        if old_ids is None:
            old_ids = [node.id for node in previous.nodes]
        position = previous.position.copy()
        for row in np.flatnonzero(gone).tolist():
            del position[old_ids[row]]
        position.update(zip(ids[first:], range(first, count), strict=True))
        self.position = position
        tail = range(first, count)
        old_files, old_symbols = previous.file_rows, previous.symbol_rows
        self.file_rows = old_files[: bisect.bisect_left(old_files, first)]
        self.file_rows += compress(tail, map(_FILE_KIND.__eq__, kinds[first:]))
        self.symbol_rows = old_symbols[: bisect.bisect_left(old_symbols, first)]
        self.symbol_rows += compress(tail, map(_SYMBOL_KINDS.__contains__, kinds[first:]))
        self.file_of_path = {self.nodes[i].path: i for i in self.file_rows}
        to_here = np.full(len(previous.nodes), -1, dtype=np.int64)
        to_here[there[kept]] = kept
        file_row_of = np.full(count, -1, dtype=np.int64)
        old_file = previous.file_row_of[there[kept]]
        # A row outside every file was its own file row: a file of its path may be new.
        file_row_of[kept] = np.where(old_file == there[kept], -1, to_here[old_file])
        get = self.file_of_path.get
        for row in np.flatnonzero(file_row_of < 0).tolist():
            file_row_of[row] = get(self.nodes[row].path, row)
        self.file_row_of = file_row_of

    def _lent_bm25(
        self, lender: SalienceIndex | None, kind: Literal["file", "symbol"]
    ) -> tuple[CountedBM25, np.ndarray] | None:
        """The lender's BM25 of ``kind`` and where each document here was taken from
        there, when the documents were borrowed from it (their terms keep their ids)."""
        lent = self._lent_from.get(kind)
        if lender is None or lent is None:
            return None
        return (lender.file_bm25 if kind == "file" else lender.symbol_bm25), lent

    def _carried_keys(
        self, old: tuple[bytes, ...], rows: list[int] | None, make: Callable[[int], bytes]
    ) -> tuple[bytes, ...]:
        """Per row of ``rows`` (of every row when None): for a row carried over from the
        index built on (see :meth:`_unchanged_rows`) the key of its row there, from
        ``old`` (that index's keys, per row); for another, ``make(row)``."""
        there = self._there if rows is None else self._there[np.asarray(rows, dtype=np.int64)]
        keys = np.empty(len(there), dtype=object)
        carried = there >= 0
        if carried.any():
            keys[carried] = np.asarray(old, dtype=object)[there[carried]]
        for at in np.flatnonzero(~carried).tolist():
            keys[at] = make(at if rows is None else rows[at])
        return tuple(keys.tolist())

    def _build_tables(self, previous: SalienceIndex | None) -> None:
        """The name, path and children tables: for an index built on ``previous`` (an
        index of the graph before, some of whose rows are carried over: see
        :meth:`_unchanged_rows`), ``previous``'s renumbered but for the keys of the nodes
        that changed; else built whole. An edit then costs about what it touched, not a
        pass over every symbol of the repository."""
        nodes = self.nodes
        edit = _RowEdit.between(previous, self) if previous is not None else None
        tables: list[Mapping[str, list[int]] | None] = [None] * len(_TABLE_KEYS)
        if previous is not None and edit is not None:
            before = (
                previous.definitions,
                previous.qualnames,
                previous.path_tails,
                previous.module_ends,
            )
            for k, table in enumerate(before):
                # Made of the rows alone: a table holding its index would be a cycle.
                whole = partial(_whole_table, k, nodes, self.symbol_rows, self.file_rows)
                tables[k] = edit.renumbered(table, _TABLE_KINDS[k], _TABLE_KEYS[k], whole)
        if None in tables:
            built = _whole_tables(nodes, self.symbol_rows, self.file_rows)
            tables = [built[k] if table is None else table for k, table in enumerate(tables)]
        self.definitions, self.qualnames, self.path_tails, self.module_ends = (
            cast(Mapping[str, list[int]], table) for table in tables
        )
        self.stems: dict[str, list[int]] = defaultdict(list)  # read whole by its signal
        for i in self.file_rows:
            stem = nodes[i].path.rsplit("/", 1)[-1].rsplit(".", 1)[0].lower()
            self.stems[stem].append(i)
        self.symbols_by_file: dict[int, list[int]] = _grouped_rows(
            self.row_array("symbol"), self.file_row_of
        )
        children = None
        if previous is not None and edit is not None:
            children = edit.children(previous, self)
        self._children: Mapping[str, list[CodeNode]] = (
            children if children is not None else self._whole_children()
        )

    def _whole_children(self) -> dict[str, list[CodeNode]]:
        children: dict[str, list[CodeNode]] = defaultdict(list)
        for node in self.nodes:
            key = self.child_key(node)
            if key is not None:
                children[key].append(node)
        for kids in children.values():
            kids.sort(key=_source_order)
        return children

    def child_key(self, node: CodeNode) -> str | None:
        """The id whose child ``node`` is here (see :meth:`children_of`), or None."""
        if node.parent:
            return node.parent
        return node.path if node.kind != "file" and node.path in self.file_of_path else None

    def _unchanged_rows(self, previous: SalienceIndex, ids: Sequence[str]) -> int:
        """How many rows are carried over from ``previous``, each kept in :attr:`_there`
        as its row there: a node equal to the one of its id there inside a file equal to
        its file there (a hash of its text is known). Every key of such a row is the key
        it had (documents and embedding texts are made of the node, its file's text and
        the symbols that text defines). ``ids``: the rows' ids."""
        documents, _ = previous.row_keys()
        if len(documents) != len(previous.nodes):
            return 0
        old_nodes, nodes = previous.nodes, self.nodes
        carried = self._taken_rows(previous)
        if carried is not None:
            # The rows of the nodes the graph took from previous's graph: the very nodes
            # there. The others (an edited file's) are looked up by id and compared.
            there = carried.copy()
            equal = carried >= 0
            get = previous.position.get
            for row in np.flatnonzero(~equal).tolist():
                old = there[row] = get(ids[row], -1)
                equal[row] = old >= 0 and old_nodes[old] == nodes[row]
        else:
            there = np.fromiter(map(previous.position.get, ids, repeat(-1)), np.int64, len(ids))
            # A node the graph took from the graph before is the very node there; the
            # others (an edited file's) are compared.
            found = np.flatnonzero(there >= 0)
            olds = _picked(old_nodes, there[found].tolist())
            mine = _picked(nodes, found.tolist())
            same = np.fromiter(map(operator.is_, olds, mine), np.bool_, len(olds))
            for at in np.flatnonzero(~same).tolist():
                same[at] = olds[at] == mine[at]
            equal = np.zeros(len(nodes), dtype=np.bool_)
            equal[found] = same
        self._id_there = there
        file_known = np.zeros(len(nodes), dtype=np.bool_)  # per file row: unchanged, hashed
        files = self.row_array("file")
        file_known[files] = equal[files] & np.fromiter(
            (bool(nodes[row].content_hash) for row in self.file_rows), np.bool_, len(files)
        )
        kept = np.flatnonzero(equal & file_known[self.file_row_of])
        self._unchanged_files = {nodes[int(row)].path for row in np.flatnonzero(file_known)}
        self._there = np.full(len(nodes), -1, dtype=np.int64)
        self._there[kept] = there[kept]
        return len(kept)

    def _taken_rows(self, previous: SalienceIndex) -> np.ndarray | None:
        """Per row: the row in ``previous`` of the very node the graph took from the
        graph ``previous`` is over (-1: a node made anew), from the runs the graph says
        it took (see :class:`TakenNodes`) and where each row sits in either graph; None
        when that is not known, or when an id repeats (a lookup by id then gives the
        last row of the id, which a run need not)."""
        nodes, before = self.graph.nodes, previous.graph.nodes
        taken = nodes.taken if isinstance(nodes, NodeTable) else None
        if taken is None or taken.before() is not before:
            return None
        laid = self._layout_rows
        if laid is not None and laid.there is not None:  # laid out from previous's rows
            return laid.there
        if self._order is None or previous._order is None:
            return None
        if len(self.position) != len(self.nodes) or len(previous.position) != len(before):
            return None
        from_before = np.full(len(nodes), -1, dtype=np.int64)
        for here, there, length in taken.runs:
            from_before[here : here + length] = np.arange(there, there + length, dtype=np.int64)
        row_there = np.empty(len(before), dtype=np.int64)
        row_there[previous._order] = np.arange(len(before), dtype=np.int64)
        placed = from_before[self._order]
        return np.where(placed >= 0, row_there[placed], -1)

    def carry_texts(self, previous: SalienceIndex) -> None:
        """Take from ``previous`` (the index this one was built on) the texts and lines it
        read of files unchanged here (known by their hash)."""
        files = self._unchanged_files
        if isinstance(previous.texts, LazyTexts) and isinstance(self.texts, LazyTexts):
            read = previous.texts.read_so_far()
            self.texts.take({path: read[path] for path in files.intersection(read)})
        self._lines.update((path, previous._lines[path]) for path in files & previous._lines.keys())

    def unchanged(self, node_id: str) -> bool:
        """Whether the node of ``node_id`` and its file's text are as in the index this
        one was built on: what was worked out from its code (its render) holds here."""
        row = self.position.get(node_id)
        return row is not None and bool(self._there[row] >= 0)

    @property
    def file_documents(self) -> DocumentCounts:
        """The term counts of the file rows, under their keys."""
        return self._documents_of("file")

    @file_documents.setter
    def file_documents(self, documents: DocumentCounts) -> None:
        self._counted["file"] = documents

    @property
    def symbol_documents(self) -> DocumentCounts:
        """The term counts of the symbol rows, under their keys."""
        return self._documents_of("symbol")

    @symbol_documents.setter
    def symbol_documents(self, documents: DocumentCounts) -> None:
        self._counted["symbol"] = documents

    def _documents_of(self, kind: Literal["file", "symbol"]) -> DocumentCounts:
        """A restored index's documents take their keys from its row keys when first
        asked for (a ranking does not need them)."""
        documents = self._counted.get(kind)
        if documents is None:
            assert self._kept_documents is not None
            kept = self._kept_documents[0 if kind == "file" else 1]
            keys, _ = self.row_keys()
            documents = replace(kept, keys=tuple(keys[row] for row in self._rows_of(kind)))
            self._counted[kind] = documents
        return documents

    def row_keys(self) -> tuple[tuple[bytes, ...], tuple[bytes, ...]]:
        """Per row, the key of its document (:data:`NO_KEY` for a row without one) and of
        its embedding text; empty when not known (an index restored from an older file,
        or without embeddings)."""
        if self._kept_keys is not None:
            documents, embeddings = self._kept_keys
            self.document_keys = _split_keys(documents)
            self.embedding_keys = _split_keys(embeddings)
            self._kept_keys = None
        return self.document_keys, self.embedding_keys

    def built(self) -> BuiltIndex:
        """What this index derived before any goal (see :class:`BuiltIndex`)."""
        transposed, has_out = self.spreading()
        document_keys, embedding_keys = self.row_keys()
        return BuiltIndex(
            tuple(n.id for n in self.nodes),
            list(self.file_rows),
            list(self.symbol_rows),
            dict(self.file_of_path),
            self.file_row_of,
            _kept_form(self.file_documents),
            _kept_form(self.symbol_documents),
            dict(self.definitions),
            dict(self.qualnames),
            dict(self.path_tails),
            dict(self.module_ends),
            dict(self.stems),
            dict(self.symbols_by_file),
            {
                parent: [self.position[kid.id] for kid in kids]
                for parent, kids in self._children.items()
            },
            (self.transition.data, self.transition.indices, self.transition.indptr),
            (transposed.data, transposed.indices, transposed.indptr),
            has_out,
            tuple(sorted(self._imported)),
            self._packaged,
            self.prior,
            list(self.source_rows),
            self.embeddings,
            b"".join(document_keys),
            b"".join(embedding_keys),
        )

    @classmethod
    def restored(
        cls,
        graph: CodeGraph,
        texts: Mapping[str, str],
        built: BuiltIndex,
        embedder: Embedder | None = None,
        config: SalienceConfig | None = None,
        known: Callable[[], KnownWork] | None = None,
    ) -> SalienceIndex:
        """The index :meth:`built` took ``built`` from, over ``graph`` (which must hold
        the same nodes: refused otherwise) and its ``texts``, with the same ``embedder``
        and ``config``. Nothing is counted or embedded. ``known`` hands over, when a later
        index asks for it, the work ``built`` was derived from (none without it)."""
        index = cls.__new__(cls)
        index.graph = graph
        index.config = config or SalienceConfig()
        # Rows are the nodes in id order; each is read from the graph when first asked
        # for (a graph may make its nodes lazily: see NodeTable).
        index.position = dict(zip(built.node_ids, range(len(built.node_ids)), strict=True))
        order = graph.at_each(built.node_ids)
        if len(graph.ids()) != len(order) or len(index.position) != len(order) or None in order:
            raise ValueError("the graph does not hold the nodes the index was built over")
        index.nodes = _NodesInOrder(graph.nodes, cast(list[int], order))
        index._order = np.asarray(order, dtype=np.int64)
        index._layout_rows = None  # an edit after it sorts its rows
        index.texts = LazyTexts(texts, lambda path: texts[path][:FILE_TEXT_CAP_CHARS])
        index.embedder = embedder
        index._report = None
        index.file_rows = built.file_rows
        index.symbol_rows = built.symbol_rows
        index.file_of_path = built.file_of_path
        index.file_row_of = built.file_row_of
        index._lines = {}
        index._unchanged_files = set()
        index._there = np.full(len(index.nodes), -1, dtype=np.int64)
        index._id_there = None
        index._file_keys = {}
        index._fresh_documents = 0
        index._term_ids = {}
        index._lent_from = {}
        index._known = known or KnownWork.nothing
        index._kept_documents = (built.file_documents, built.symbol_documents)
        index._counted = {}
        index.file_bm25 = CountedBM25(built.file_documents)
        index.symbol_bm25 = CountedBM25(built.symbol_documents)
        index.definitions = defaultdict(list, built.definitions)
        index.qualnames = defaultdict(list, built.qualnames)
        index.path_tails = defaultdict(list, built.path_tails)
        index.module_ends = defaultdict(list, built.module_ends)
        index.stems = defaultdict(list, built.stems)
        index.symbols_by_file = defaultdict(list, built.symbols_by_file)
        index._children = _ChildrenOf(built.children, index.nodes)
        size = (len(index.nodes), len(index.nodes))
        index.transition = sp.csr_matrix(built.transition, shape=size)
        index._spreading = (sp.csr_matrix(built.transposed, shape=size), built.has_out)
        index._imported = frozenset(built.imported)
        index._ends = None  # an edit after it reads every edge once
        index._fed = None
        index._facts = {}
        index._packaged = built.packaged
        index.prior = built.prior
        index.source_rows = built.source_rows
        index._notes = {}
        index._within = {}
        index._row_arrays = {}
        index._derived = {}
        index._walks = 0
        index._layout = None
        index.embeddings = built.embeddings if embedder is not None else None
        index.embedding_keys = ()
        index.document_keys = ()
        index._kept_keys = (built.document_keys, built.embedding_keys)
        index.reused_keys = 0
        index.fresh_embeddings = 0
        return index

    def known_work(self) -> KnownWork:
        """What a later index may reuse (see :class:`KnownWork`)."""
        if self._known is not None:  # restored: the work it was derived from, lent
            return self._known()
        return KnownWork(
            _compacted(self.file_documents),
            _compacted(self.symbol_documents),
            self.embedding_keys,
            self.embeddings,
        )

    @property
    def fresh_work(self) -> int:
        """Documents tokenised and rows embedded here rather than taken from known work."""
        return self._fresh_documents + self.fresh_embeddings

    def row_array(self, kind: RowArray) -> np.ndarray:
        """Rows as an array, made once: ``file`` and ``symbol`` are :attr:`file_rows` and
        :attr:`symbol_rows`, ``dangling`` the rows with no edge out."""
        array = self._row_arrays.get(kind)
        if array is None:
            array = self._row_arrays[kind] = self._rows_of_kind(kind)
        return array

    def _rows_of_kind(self, kind: RowArray) -> np.ndarray:
        if kind == "file" or kind == "symbol":
            return np.asarray(self.file_rows if kind == "file" else self.symbol_rows, np.int64)
        return np.flatnonzero(~self.spreading()[1])  # dangling

    def walk_layout(self) -> WalkLayout | None:
        """The walk laid out for locality, once this index has walked
        :data:`LAYOUT_AFTER_WALKS` times in its own order (None until then); counts a walk."""
        big = len(self.nodes) >= LAYOUT_MIN_ROWS
        if self._layout is None and big and self._walks >= LAYOUT_AFTER_WALKS:
            transposed, _ = self.spreading()
            self._layout = WalkLayout.of(transposed, self.row_array("dangling"))
        self._walks += 1
        return self._layout

    def derived(self, key: str, compute: Callable[[], _T]) -> _T:
        """What ``compute`` works out of this index alone (no goal), kept under ``key``:
        a signal's tables, made on its first goal rather than on every one."""
        if key not in self._derived:
            self._derived[key] = compute()
        return cast(_T, self._derived[key])

    def notes_of(self, row: int) -> list[str]:
        """The penalty notes of a row (see :meth:`penalty_notes`), worked out once."""
        notes = self._notes.get(row)
        if notes is None:
            notes = self._notes[row] = self.penalty_notes(row)
        return notes

    def children_of(self, node_id: str) -> list[CodeNode]:
        """Direct children in source order (top-level symbols for a file)."""
        return self._children.get(node_id, [])

    def within(self, node_id: str) -> tuple[str, ...]:
        """The id of a node and those of every node inside it, worked out once: what an
        agent holds when it holds the node in full (a session asks for it on every call
        of each node it holds)."""
        found = self._within.get(node_id)
        if found is None:
            ids: list[str] = []
            stack = [node_id]
            while stack:
                inner = stack.pop()
                ids.append(inner)
                stack.extend(c.id for c in self.children_of(inner))
            found = self._within[node_id] = tuple(ids)
        return found

    # --- documents ---------------------------------------------------------------------

    def lines(self, path: str) -> list[str]:
        lines = self._lines.get(path)
        if lines is None:
            lines = self._lines[path] = self.texts.get(path, "").splitlines()
        return lines

    def body(self, node: CodeNode) -> str:
        lines = self.lines(node.path)
        if node.kind == "file":
            return "\n".join(lines)
        return docs.body_of(lines, node.start_line, node.end_line)

    def _file_key(self, path: str) -> bytes:
        """Names a file's text: by the index's hash of it when the graph has one."""
        key = self._file_keys.get(path)
        if key is None:
            row = self.file_of_path.get(path)
            content_hash = self.nodes[row].content_hash if row is not None else ""
            text = "" if content_hash else self.texts.get(path, "")
            key = self._file_keys[path] = docs.file_key(path, content_hash, text)
        return key

    def _symbol_key(self, node: CodeNode) -> bytes:
        of_file = self._file_key(node.path)
        return docs.symbol_key(node.qualname, node.path, node.start_line, node.end_line, of_file)

    def _file_counts(self, node: CodeNode) -> Counter[str]:
        """Term counts of a file: its path and its text."""
        return Counter(docs.file_terms(node.path, self.texts.get(node.path, "")))

    def _symbol_counts(self, node: CodeNode) -> Counter[str]:
        """Term counts of a symbol: its name (twice), its path and its body."""
        return Counter(docs.symbol_terms(node.qualname, node.path, self.body(node)))

    def _rows_of(self, kind: Literal["file", "symbol"]) -> list[int]:
        return self.file_rows if kind == "file" else self.symbol_rows

    def _terms_of(self, kind: Literal["file", "symbol"]) -> dict[str, int]:
        """Term to id of this index's ``kind`` documents (made once, when first asked)."""
        term_ids = self._term_ids.get(kind)
        if term_ids is None:
            documents = self.file_documents if kind == "file" else self.symbol_documents
            term_ids = self._term_ids[kind] = {t: i for i, t in enumerate(documents.terms)}
        return term_ids

    def _documents(
        self,
        kind: Literal["file", "symbol"],
        keys: tuple[bytes, ...],
        counts_of: Callable[[CodeNode], Counter[str]],
        known: DocumentCounts | None,
    ) -> DocumentCounts:
        """The documents of the ``kind`` rows, named by ``keys``: those ``known`` holds
        under the same key are taken from it, the others counted."""
        nodes = self.nodes
        rows = self._rows_of(kind)
        if known is not None and keys == known.keys:
            return known
        at = known.positions() if known is not None else {}
        todo = sum(1 for key in keys if key not in at)
        if self._report is not None and todo:
            self._report(COUNTING_PHASE, 0, todo)  # told as it starts, not after a share
        counted_here = 0
        term_ids: dict[str, int] = {t: i for i, t in enumerate(known.terms)} if known else {}
        self._term_ids[kind] = term_ids
        ids: list[np.ndarray] = []
        counts: list[np.ndarray] = []
        for row, key in zip(rows, keys, strict=True):
            found = at.get(key)
            if known is not None and found is not None:
                start, end = int(known.ptr[found]), int(known.ptr[found + 1])
                ids.append(known.ids[start:end])
                counts.append(known.counts[start:end])
                continue
            counted = counts_of(nodes[row])
            self._fresh_documents += 1
            counted_here += 1
            if self._report is not None and (
                counted_here % REPORT_EVERY == 0 or counted_here == todo
            ):
                self._report(COUNTING_PHASE, counted_here, todo)
            new = [term_ids.setdefault(term, len(term_ids)) for term in counted]
            ids.append(np.asarray(new, dtype=np.int64))
            counts.append(np.fromiter(counted.values(), dtype=np.int64, count=len(counted)))
        ptr = np.zeros(len(keys) + 1, dtype=np.int64)
        np.cumsum([len(part) for part in ids], out=ptr[1:])
        return DocumentCounts(
            keys,
            tuple(term_ids),
            ptr,
            np.concatenate(ids).astype(np.int64) if ids else np.zeros(0, dtype=np.int64),
            np.concatenate(counts).astype(np.int64) if counts else np.zeros(0, dtype=np.int64),
        )

    def _borrowed_documents(
        self,
        kind: Literal["file", "symbol"],
        keys: tuple[bytes, ...],
        counts_of: Callable[[CodeNode], Counter[str]],
        lender: SalienceIndex,
    ) -> DocumentCounts:
        """As :meth:`_documents`, from the documents of ``lender`` (an index of the graph
        before, built in this process): an unchanged row takes the document of its row
        there, another the document ``lender`` holds under its key, else it is counted.
        The arrays are gathered in one step instead of document by document."""
        old = lender.file_documents if kind == "file" else lender.symbol_documents
        at_row = np.full(len(lender.nodes), -1, dtype=np.int64)
        at_row[lender.row_array(kind)] = np.arange(old.size, dtype=np.int64)
        rows = self._rows_of(kind)
        there = self._there[self.row_array(kind)]  # same's rows, as an array
        source = np.where(there >= 0, at_row[there], -1)
        term_ids = dict(lender._terms_of(kind))
        self._term_ids[kind] = term_ids
        fresh_ids: list[np.ndarray] = []
        fresh_counts: list[np.ndarray] = []
        fresh_at: list[int] = []  # positions in ``rows`` of the documents counted here
        unlent = np.flatnonzero(source < 0).tolist()
        position = _key_finder(old.keys, len(unlent))
        for at in unlent:
            found = position(keys[at])
            if found is not None:
                source[at] = found
                continue
            counted = counts_of(self.nodes[rows[at]])
            self._fresh_documents += 1
            fresh_at.append(at)
            new = [term_ids.setdefault(term, len(term_ids)) for term in counted]
            fresh_ids.append(np.asarray(new, dtype=np.int64))
            fresh_counts.append(np.fromiter(counted.values(), dtype=np.int64, count=len(counted)))
        lengths = np.zeros(len(rows), dtype=np.int64)
        starts = np.zeros(len(rows), dtype=np.int64)
        lent = source >= 0
        starts[lent] = old.ptr[source[lent]]
        lengths[lent] = old.ptr[source[lent] + 1] - old.ptr[source[lent]]
        if fresh_at:
            sizes = np.asarray([len(part) for part in fresh_ids], dtype=np.int64)
            lengths[fresh_at] = sizes
            starts[fresh_at] = len(old.ids) + np.cumsum(sizes) - sizes
        ptr = np.zeros(len(rows) + 1, dtype=np.int64)
        np.cumsum(lengths, out=ptr[1:])
        ids = spans_copied(old.ids, fresh_ids, starts, lengths, ptr)
        counts = spans_copied(old.counts, fresh_counts, starts, lengths, ptr)
        self._lent_from[kind] = source
        return DocumentCounts(keys, tuple(term_ids), ptr, ids, counts)

    def _borrowed_embeddings(
        self,
        embedder: Embedder,
        old: np.ndarray,
        old_keys: tuple[bytes, ...],
        keys: tuple[bytes, ...],
    ) -> np.ndarray:
        """As :meth:`_embed_all`, from the rows ``old`` (named by ``old_keys``) of an index
        built in this process with the same embedder: a row carried over (see
        :meth:`_unchanged_rows`) takes its row there, another the row held under its key,
        else it is embedded."""
        self.embedding_keys = keys
        source = self._there.copy()
        missing: dict[bytes, list[int]] = {}
        unlent = np.flatnonzero(source < 0).tolist()
        position = _key_finder(old_keys, len(unlent))
        for at in unlent:
            found = position(keys[at])
            if found is not None:
                source[at] = found
            else:
                missing.setdefault(keys[at], []).append(at)
        texts = {key: self._embed_text(self.nodes[rows[0]]) for key, rows in missing.items()}
        fresh = sorted(set(texts.values()))
        self.fresh_embeddings = len(fresh)
        if not fresh:
            kept = np.empty((len(keys), old.shape[1]), dtype=old.dtype)
            _copy_rows(old, source, kept)
            return kept
        unit = self._embedded(embedder, fresh)
        out = np.empty((len(keys), old.shape[1]), dtype=np.result_type(unit, old))
        _copy_rows(old, source, out)
        text_row = {text: j for j, text in enumerate(fresh)}
        for key, rows in missing.items():
            out[rows] = unit[text_row[texts[key]]]
        return out

    def _embedded(self, embedder: Embedder, texts: list[str]) -> np.ndarray:
        """Unit rows of ``texts`` (at least one), embedded ``EMBED_BATCH`` at a time, each
        batch told to the report."""
        report = self._report
        if report is not None:
            report(EMBEDDING_PHASE, 0, len(texts))
        batches = []
        for start in range(0, len(texts), EMBED_BATCH):
            batches.append(np.asarray(embedder(texts[start : start + EMBED_BATCH])))
            if report is not None:
                report(EMBEDDING_PHASE, min(start + EMBED_BATCH, len(texts)), len(texts))
        return docs.unit_rows(np.concatenate(batches))

    def _embed_key(self, node: CodeNode) -> bytes:
        """Names a node's embedding text; for a symbol whose text takes in its body, by
        its place in its file's text (the body itself is then not needed)."""
        if node.kind == "file":
            return _digest(self._embed_text(node))
        of_file = self._file_key(node.path)
        return docs.symbol_embed_key(
            self._embed_head(node), node.start_line, node.end_line, of_file
        )

    def _embed_all(
        self, embedder: Embedder, known: KnownWork | None, keys: tuple[bytes, ...]
    ) -> np.ndarray:
        """Unit rows, one per node (named by ``keys``); a row ``known`` holds under the
        same key is kept."""
        self.embedding_keys = keys
        if known is not None and known.embeddings is not None and keys == known.embedding_keys:
            return known.embeddings
        at: dict[bytes, int] = {}
        if known is not None and known.embeddings is not None:
            held = known.embedding_keys  # a key held twice: its first row
            at = dict(zip(reversed(held), range(len(held) - 1, -1, -1), strict=True))
            there = list(map(at.get, keys))
            if None not in there:  # every row known (a first focus after a cold run)
                self.fresh_embeddings = 0
                taken: np.ndarray = np.asarray(known.embeddings)[np.asarray(there, dtype=np.int64)]
                return taken
        missing = {key: i for i, key in enumerate(keys) if key not in at}
        texts = {key: self._embed_text(self.nodes[i]) for key, i in missing.items()}
        fresh = sorted(set(texts.values()))
        self.fresh_embeddings = len(fresh)
        parts: list[np.ndarray] = []
        if fresh:
            parts.append(self._embedded(embedder, fresh))
        if at and known is not None and known.embeddings is not None:
            parts.append(np.asarray(known.embeddings))
        dtype = np.result_type(*parts)
        width = parts[0].shape[1]
        out = np.empty((len(keys), width), dtype=dtype)
        reused = [i for i, key in enumerate(keys) if key in at]
        if reused and known is not None and known.embeddings is not None:
            out[reused] = known.embeddings[[at[keys[i]] for i in reused]]
        if fresh:
            text_row = {text: j for j, text in enumerate(fresh)}
            unit = parts[0]
            rows = [i for i, key in enumerate(keys) if key in missing]
            out[rows] = unit[[text_row[texts[keys[i]]] for i in rows]]
        return out

    def _embed_head(self, node: CodeNode) -> str:
        return docs.embed_head(node.path, node.qualname, node.signature, node.docstring)

    def _embed_text(self, node: CodeNode) -> str:
        if node.kind == "file":
            names = (c.name for c in self.children_of(node.id))
            return docs.file_embed_text(node.path, node.docstring, names)
        head = self._embed_head(node)
        short = len(head) < docs.EMBED_TEXT_CAP_CHARS
        return docs.symbol_embed_text(head, self.body(node) if short else "")

    # --- graph -------------------------------------------------------------------------

    def _edge_ends(self, previous: SalienceIndex | None) -> EdgeEnds:
        """What ranking reads of every edge (see :data:`EdgeEnds`): from ``previous``'s
        when the graph's edges say how they follow from its graph's (an edit), else read
        off every edge."""
        patch = self._patch_from(previous)
        if previous is not None and previous._ends is not None and patch is not None:
            return self._patched_ends(previous, previous._ends, patch)
        return self._ends_of(EdgeColumns.of(self.graph.edges))

    def _patch_from(self, previous: SalienceIndex | None) -> EdgePatch | None:
        """How this graph's edges follow from ``previous``'s graph's, when they do and
        ``previous`` read them with the same weights (see :class:`EdgePatch`)."""
        edges = self.graph.edges
        patch = edges.patch if isinstance(edges, DeferredEdges) else None
        if (
            previous is not None
            and patch is not None
            and patch.before is previous.graph.edges
            and previous._ends is not None
            and previous.config.edge_weights == self.config.edge_weights
        ):
            return patch
        return None

    def _ends_of(self, edges: EdgeColumns) -> EdgeEnds:
        count = len(edges.src)
        position = self.position.get
        weights = self.config.edge_weights
        src = np.fromiter(map(position, edges.src, repeat(-1)), np.int64, count)
        dst = np.fromiter(map(position, edges.dst, repeat(-1)), np.int64, count)
        kind_weight = np.fromiter(map(weights.get, edges.kind, repeat(0.0)), np.float64, count)
        strength = kind_weight * np.fromiter(edges.weight, np.float64, count)
        imports = np.fromiter((kind == "imports" for kind in edges.kind), np.bool_, count)
        return src, dst, strength, imports

    def _patched_ends(self, previous: SalienceIndex, ends: EdgeEnds, patch: EdgePatch) -> EdgeEnds:
        """``previous``'s edge ends for the edges ``patch`` keeps, renumbered to the rows
        here, with those of the edges it adds: equal to reading every edge again."""
        kept = np.ones(len(ends[0]), dtype=np.bool_)
        kept[np.asarray(patch.dropped, dtype=np.int64)] = False
        total = int(kept.sum()) + len(patch.landed)
        landed = np.zeros(total, dtype=np.bool_)
        landed[np.asarray(patch.landed, dtype=np.int64)] = True
        position = self.position.get
        renumber = self._renumber_from(previous)
        added = self._ends_of(patch.added)
        old_columns: EdgeColumns | None = None
        out: list[np.ndarray] = []
        for end, (old, new) in enumerate(zip(ends, added, strict=True)):
            column = np.empty(total, dtype=old.dtype)
            moved = old[kept]
            if end < 2:  # a row: renumbered; an end that was no node here may be one now
                lost = np.flatnonzero(moved < 0)
                moved = renumber[moved]
                if lost.size:
                    old_columns = old_columns or EdgeColumns.of(previous.graph.edges)
                    names = old_columns.src if end == 0 else old_columns.dst
                    at_old = np.flatnonzero(kept)[lost]
                    moved[lost] = [position(names[int(i)], -1) for i in at_old]
            column[~landed] = moved
            column[landed] = new
            out.append(column)
        return out[0], out[1], out[2], out[3]

    def _renumber_from(self, previous: SalienceIndex) -> np.ndarray:
        """Per row of ``previous``: the row here of its id (-1: none). When no id repeats
        on either side, the other way round of where each row's id sits there (see
        :meth:`_unchanged_rows`), rather than a lookup of every id there."""
        there = self._id_there
        if there is not None and len(there) == len(self.nodes) and self._unique_ids(previous):
            renumber = np.full(len(previous.nodes), -1, dtype=np.int64)
            found = np.flatnonzero(there >= 0)
            renumber[there[found]] = found
            return renumber
        old_ids = [node.id for node in previous.nodes]
        return np.fromiter(map(self.position.get, old_ids, repeat(-1)), np.int64, len(old_ids))

    def _feed(self) -> Feed:
        """What the transition matrix is made of (see :class:`Feed`), kept for the index
        built on this one."""
        if self._fed is None:
            assert self._ends is not None
            src, dst, strength, _ = self._ends
            co_change = self.config.edge_weights.get("co_change", 0.0)
            rows = self.file_of_path.get
            pairs = self.graph.co_changes
            self._fed = Feed(
                len(self.nodes),
                src,
                dst,
                strength,
                np.fromiter((rows(a, -1) for a, _, _ in pairs), np.int64, len(pairs)),
                np.fromiter((rows(b, -1) for _, b, _ in pairs), np.int64, len(pairs)),
                np.fromiter(
                    (co_change * math.log1p(n) for _, _, n in pairs), np.float64, len(pairs)
                ),
                self.config.backward,
            )
        return self._fed

    def _transition(self, previous: SalienceIndex | None = None) -> sp.csr_matrix:
        """The transition matrix: for an index built on ``previous`` whose edges follow
        from its edges (an edit), ``previous``'s but for the rows the edit touched (see
        :mod:`coderooms.focus.carried`); else built whole. The same matrix either way."""
        feed = self._feed()
        patch = self._patch_from(previous)
        if previous is None or patch is None or previous._fed is None:
            return transition_of(feed)
        if previous.config.backward != self.config.backward or not self._unique_ids(previous):
            return transition_of(feed)
        renumber = self._renumber_from(previous)
        dropped = np.asarray(patch.dropped, dtype=np.int64)
        landed = np.asarray(patch.landed, dtype=np.int64)
        if len(previous._fed.pair_a) != len(feed.pair_a) or (
            previous.graph.co_changes is not self.graph.co_changes
            and previous.graph.co_changes != self.graph.co_changes
        ):
            return transition_of(feed)
        touched = touched_rows(previous._fed, feed, renumber, dropped, landed)
        if int(touched.sum()) > MAX_TOUCHED_SHARE * len(touched):
            return transition_of(feed)
        fresh = transition_of(feed, touched)
        carried = carried_transition(previous.transition, renumber, touched, fresh)
        return carried if carried is not None else transition_of(feed)

    def _unique_ids(self, previous: SalienceIndex) -> bool:
        """Whether no id repeats here or in ``previous`` (rows then renumber in order)."""
        return len(self.position) == len(self.nodes) and len(previous.position) == len(
            previous.nodes
        )

    def spreading(self) -> tuple[sp.csr_matrix, np.ndarray]:
        """The transition matrix transposed (how rank flows into each node) and which
        nodes have an edge out: what every PageRank walk reads, worked out once."""
        if self._spreading is None:
            transposed = sp.csr_matrix(self.transition.T.tocsr())
            has_out = np.asarray(self.transition.sum(axis=1)).ravel() > 0
            self._spreading = (transposed, has_out)
        return self._spreading

    def _prior(self, previous: SalienceIndex | None = None) -> np.ndarray:
        """Per-node multiplier from penalties and git signals (goal-independent). A row
        unchanged since ``previous`` keeps its value there when nothing else it reads has
        changed (the signals, the packages, what is imported)."""
        config = self.config
        prior = np.ones(len(self.nodes), dtype=np.float64)
        rows: Iterable[int] = range(len(self.nodes))
        if previous is not None and self._prior_inputs() == previous._prior_inputs():
            lent = self._there >= 0
            prior[lent] = previous.prior[self._there[lent]]
            rows = np.flatnonzero(~lent).tolist()
        signals = {s.path: s for s in self.graph.signals}
        max_count = max((s.commit_count for s in self.graph.signals), default=0)
        head = self.graph.head_time
        # The factors below read only these fields, which the nodes of one file mostly
        # share: each distinct combination is worked out once, in the same order.
        known: dict[tuple[str, str, bool, bool, bool], float] = {}
        for i in rows:
            node = self.nodes[i]
            facts = (node.path, node.language, node.is_test, node.is_vendored, node.is_generated)
            value = known.get(facts)
            if value is not None:
                prior[i] = value
                continue
            if node.is_test:
                prior[i] *= config.test_penalty
            if self._is_vendored(node):
                prior[i] *= config.vendored_penalty
            if node.is_generated:
                prior[i] *= config.generated_penalty
            if self.is_auxiliary(node) or self.is_standalone_script(node):
                prior[i] *= config.auxiliary_penalty
            if node.language and node.language not in config.code_languages:
                prior[i] *= config.document_penalty
            signal = signals.get(node.path)
            if signal is not None and head and signal.last_change:
                age_days = max(head - signal.last_change, 0) / 86_400
                recency = 0.5 ** (age_days / config.recency_half_life_days)
                prior[i] *= 1.0 + config.recency_weight * recency
            if signal is not None and max_count:
                frequency = math.log1p(signal.commit_count) / math.log1p(max_count)
                prior[i] *= 1.0 + config.frequency_weight * frequency
            known[facts] = float(prior[i])
        return prior

    def _prior_inputs(self) -> tuple[object, ...]:
        """What a node's prior reads beyond the node itself."""
        packages = frozenset(p for p in self.file_of_path if p.rsplit("/", 1)[-1] == "__init__.py")
        return (
            self.config,
            self.graph.signals,
            self.graph.head_time,
            self._packaged,
            self._imported,
            packages,
        )

    def _is_vendored(self, node: CodeNode) -> bool:
        """Marked by the index, or inside a ``packages``-like directory nested in a Python
        package (``requests/packages/urllib3``: a copy of someone else's library)."""
        return node.is_vendored or self._path_facts(node.path)[0]

    def _path_facts(self, path: str) -> tuple[bool, bool]:
        """(in a nested vendor directory, among docs and examples) for a path, once."""
        facts = self._facts.get(path)
        if facts is None:
            parts = path.split("/")[:-1]
            vendored = False
            for depth, part in enumerate(parts):
                if part in self.config.nested_vendor_dirs and depth > 0:
                    parent = "/".join(parts[:depth]) + "/__init__.py"
                    if parent in self.file_of_path:
                        vendored = True
                        break
            auxiliary = any(part in self.config.auxiliary_dirs for part in parts)
            facts = self._facts[path] = (vendored, auxiliary)
        return facts

    def is_auxiliary(self, node: CodeNode) -> bool:
        return self._path_facts(node.path)[1]

    def is_standalone_script(self, node: CodeNode) -> bool:
        """A Python file outside every package of a packaged repository that no file
        imports: a maintenance script or a build file, not the code the project ships.
        (Learnt from the repository's own layout and imports, not from a list of names.)"""
        if not self.config.standalone_scripts or node.language != "python":
            return False
        if not self._packaged or node.is_test or self._is_vendored(node):
            return False
        folder = node.path.rsplit("/", 1)[0] + "/" if "/" in node.path else ""
        return folder + "__init__.py" not in self.file_of_path and node.path not in self._imported

    def penalty_notes(self, row: int) -> list[str]:
        node = self.nodes[row]
        notes = []
        if self.is_auxiliary(node):
            notes.append(f"documentation/example code ×{self.config.auxiliary_penalty:g}")
        elif self.is_standalone_script(node):
            notes.append(f"standalone script, in no package ×{self.config.auxiliary_penalty:g}")
        if node.language and node.language not in self.config.code_languages:
            notes.append(f"not code ({node.language}) ×{self.config.document_penalty:g}")
        if node.is_test:
            notes.append(f"test code ×{self.config.test_penalty:g}")
        if self._is_vendored(node):
            notes.append(f"vendored ×{self.config.vendored_penalty:g}")
        if node.is_generated:
            notes.append(f"generated ×{self.config.generated_penalty:g}")
        return notes


def _whole_tables(
    nodes: Sequence[CodeNode], symbol_rows: list[int], file_rows: list[int]
) -> tuple[dict[str, list[int]], ...]:
    """The tables of :data:`_TABLE_KEYS`, built from every row (in one pass per kind of
    row: this runs for every index not built on another)."""
    definitions: dict[str, list[int]] = defaultdict(list)
    qualnames: dict[str, list[int]] = defaultdict(list)
    for i in symbol_rows:
        node = nodes[i]
        definitions[node.name].append(i)
        qualnames[node.qualname].append(i)
    path_tails: dict[str, list[int]] = defaultdict(list)
    module_ends: dict[str, list[int]] = defaultdict(list)
    for i in file_rows:
        node = nodes[i]
        for tail in _path_tails(node):
            path_tails[tail].append(i)
        for suffix in _module_suffixes(node.path):
            module_ends[suffix].append(i)
    return definitions, qualnames, path_tails, module_ends


def _whole_table(
    which: int, nodes: Sequence[CodeNode], symbol_rows: list[int], file_rows: list[int]
) -> dict[str, list[int]]:
    """The one table of :data:`_TABLE_KEYS` at ``which``, built from every row of its kind
    (a renumbered table read whole needs only itself)."""
    keys_of = _TABLE_KEYS[which]
    table: dict[str, list[int]] = defaultdict(list)
    for i in symbol_rows if _TABLE_KINDS[which] is _SYMBOL_KINDS else file_rows:
        for key in keys_of(nodes[i]):
            table[key].append(i)
    return table


def _grouped_rows(rows: np.ndarray, owner_of: np.ndarray) -> dict[int, list[int]]:
    """``rows`` (ascending) by their owner (``owner_of[row]``), each owner's rows in
    order, the owners in the order of their first row: what appending each row to its
    owner's list gives, grouped by one stable sort instead of a step per row."""
    grouped: dict[int, list[int]] = defaultdict(list)
    if rows.size == 0:
        return grouped
    owners = owner_of[rows]
    order = np.argsort(owners, kind="stable")
    sorted_owners = owners[order]
    by_owner = rows[order]
    starts = np.flatnonzero(np.r_[True, sorted_owners[1:] != sorted_owners[:-1]]).tolist()
    ends = [*starts[1:], len(rows)]
    listed = by_owner.tolist()
    keys = sorted_owners[starts].tolist()
    for k in np.argsort(by_owner[starts], kind="stable").tolist():  # by their first row
        grouped[keys[k]] = listed[starts[k] : ends[k]]
    return grouped


def _source_order(node: CodeNode) -> tuple[int, str]:
    return node.start_line, node.id


def _path_tails(node: CodeNode) -> list[str]:
    """The endings of a file's path a goal may name it by (``b.py``, ``a/b.py``, …)."""
    parts = node.path.split("/")
    return ["/".join(parts[-keep:]) for keep in range(1, min(len(parts), MAX_TAIL_PARTS) + 1)]


_FILE_KIND = "file"
_FILE_KINDS = frozenset({_FILE_KIND})
_SYMBOL_KINDS = frozenset({"class", "function", "method"})
# The row tables an index built on another renumbers (see SalienceIndex._build_tables):
# definitions, qualnames, path_tails and module_ends; the rows each is of, and the keys
# each row is listed under.
_TABLE_KINDS = (_SYMBOL_KINDS, _SYMBOL_KINDS, _FILE_KINDS, _FILE_KINDS)
_TABLE_KEYS: tuple[Callable[[CodeNode], Iterable[str]], ...] = (
    lambda node: (node.name,),
    lambda node: (node.qualname,),
    _path_tails,
    lambda node: _module_suffixes(node.path),
)
MAX_RENUMBERED_KEYS = 4_096
"""Keys a renumbered table holds apart from the table it renumbers (their rows changed
in the edits since that table was built whole); past this it is built whole again."""


@dataclass(frozen=True, slots=True)
class _RowEdit:
    """How the rows of an index relate to those of the index it was built on:
    ``renumber`` takes a row there to its row here (-1: its node changed or went),
    ``gone`` lists the rows there and ``fresh`` the rows here whose node is not carried
    over (see :meth:`SalienceIndex._unchanged_rows`)."""

    before: Sequence[CodeNode]
    after: Sequence[CodeNode]
    renumber: np.ndarray
    gone: list[int]
    fresh: list[int]

    @classmethod
    def between(cls, previous: SalienceIndex, index: SalienceIndex) -> _RowEdit | None:
        """``index``'s rows against ``previous``'s, from the rows ``index`` carried over;
        None when two rows carried one row (a repeated id can)."""
        there = index._there
        renumber = np.full(len(previous.nodes), -1, dtype=np.int64)
        carried = np.flatnonzero(there >= 0)
        renumber[there[carried]] = carried
        if int(np.count_nonzero(renumber >= 0)) != len(carried):
            return None
        gone = np.flatnonzero(renumber < 0).tolist()
        fresh = np.flatnonzero(there < 0).tolist()
        return cls(previous.nodes, index.nodes, renumber, gone, fresh)

    def renumbered(
        self,
        table: Mapping[str, list[int]],
        kinds: frozenset[str],
        keys_of: Callable[[CodeNode], Iterable[str]],
        whole: Callable[[], dict[str, list[int]]],
    ) -> Mapping[str, list[int]] | None:
        """``table`` (rows there, of the nodes of ``kinds``, each listed under the keys
        ``keys_of`` gives) as it reads here: equal to ``whole()``, which builds it from
        every row; None when too many keys have changed since it was built whole."""
        base, to_now, apart = table, self.renumber, {}
        if isinstance(table, _RenumberedRows):
            base, apart = table.base, table.apart
            to_now = np.where(table.to_now >= 0, self.renumber[table.to_now], -1)
        fresh: dict[str, list[int]] = defaultdict(list)
        for row in self.fresh:
            node = self.after[row]
            if node.kind in kinds:
                for key in keys_of(node):
                    fresh[key].append(row)
        changed = set(apart).union(fresh)
        for row in self.gone:
            node = self.before[row]
            if node.kind in kinds:
                changed.update(keys_of(node))
        if len(changed) > MAX_RENUMBERED_KEYS:
            return None
        # A key no changed node is listed under keeps its rows, renumbered: each of them
        # was carried over.
        held: dict[str, list[int]] = {}
        for key in changed:
            rows = [row for row in self.renumber[table.get(key, [])].tolist() if row >= 0]
            rows += fresh.get(key, ())
            rows.sort()
            held[key] = rows
        return _RenumberedRows(base, to_now, held, whole)

    def children(
        self, previous: SalienceIndex, index: SalienceIndex
    ) -> dict[str, list[CodeNode]] | None:
        """``index``'s children table (see :meth:`SalienceIndex.children_of`) from
        ``previous``'s: the lists of the ids a changed node is the child of made again,
        the others taken; None when ``previous`` does not hold its table as lists."""
        before = previous._children
        if not isinstance(before, dict):
            return None
        went: dict[str, list[CodeNode]] = defaultdict(list)  # by value: ids may repeat
        for row in self.gone:
            node = self.before[row]
            key = previous.child_key(node)
            if key is not None:
                went[key].append(node)
        fresh: dict[str, list[CodeNode]] = defaultdict(list)
        for row in self.fresh:
            node = self.after[row]
            key = index.child_key(node)
            if key is not None:
                fresh[key].append(node)
        children: dict[str, list[CodeNode]] = defaultdict(list, before)
        for key in set(went).union(fresh):
            kids = list(before.get(key, ()))
            for node in went.get(key, ()):
                if node not in kids:
                    return None  # not the table it was built from: built whole
                kids.remove(node)
            kids += fresh.get(key, ())
            if kids:
                kids.sort(key=_source_order)
                children[key] = kids
            else:
                children.pop(key, None)
        return children


class _RenumberedRows(Mapping[str, list[int]]):
    """A row table (rows per key, ascending) of an index built on another, as
    :meth:`_RowEdit.renumbered` makes it: the table ``base`` of an earlier index read
    through ``to_now`` (a row there to its row here), but for the keys held ``apart``
    with their rows here (an empty list: the key is gone). Renumbering every key would
    cost what building the table does; a lookup renumbers one key's rows. Iterated, it
    is built whole (``whole``), once."""

    def __init__(
        self,
        base: Mapping[str, list[int]],
        to_now: np.ndarray,
        apart: dict[str, list[int]],
        whole: Callable[[], dict[str, list[int]]],
    ) -> None:
        self.base = base
        self.to_now = to_now
        self.apart = apart
        self._make_whole: Callable[[], dict[str, list[int]]] | None = whole
        self._whole: dict[str, list[int]] | None = None

    def __getitem__(self, key: str) -> list[int]:
        # get, not [key]: the tables are defaultdicts, which would take the key.
        if self._whole is not None:
            rows = self._whole.get(key)
        else:
            rows = self.apart.get(key)
            if rows is None:
                old = self.base.get(key)
                rows = None if old is None else cast(list[int], self.to_now[old].tolist())
        if not rows:
            raise KeyError(key)
        return rows

    def _built_whole(self) -> dict[str, list[int]]:
        if self._whole is None:
            assert self._make_whole is not None
            self._whole, self._make_whole = self._make_whole(), None
        return self._whole

    def __iter__(self) -> Iterator[str]:
        return iter(self._built_whole())

    def __len__(self) -> int:
        return len(self._built_whole())


def _copy_rows(old: np.ndarray, source: np.ndarray, out: np.ndarray) -> None:
    """``out[i] = old[source[i]]`` for each ``i`` whose ``source[i]`` is not negative,
    copied in runs of rows that follow each other in both: an edit leaves a few long
    runs, which copy at the speed of memory (a gather row by row is slower)."""
    at = np.flatnonzero(source >= 0)
    if at.size == 0:
        return
    rows = source[at]
    breaks = np.flatnonzero((np.diff(at) != 1) | (np.diff(rows) != 1)) + 1
    if len(breaks) >= MAX_COPY_RUNS:
        out[at] = old[rows]
        return
    starts = [0, *breaks.tolist()]
    ends = [*breaks.tolist(), len(at)]
    for start, end in zip(starts, ends, strict=True):
        here, there = int(at[start]), int(rows[start])
        out[here : here + end - start] = old[there : there + end - start]


_digest = docs.digest


NO_KEY = bytes(KEY_SIZE)


def _split_keys(joined: bytes) -> tuple[bytes, ...]:
    return tuple(joined[at : at + KEY_SIZE] for at in range(0, len(joined), KEY_SIZE))


def _key_finder(keys: tuple[bytes, ...], lookups: int) -> Callable[[bytes], int | None]:
    """Where a key first sits in ``keys``, or None, for ``lookups`` keys to come: for a
    few (an edit's), a compare of each against the first eight bytes of every key at
    once, then of the whole key where those match; for many, a table of them all."""
    if lookups > MAX_KEY_SCANS:
        first: dict[bytes, int] = {}
        for at, key in enumerate(keys):
            first.setdefault(key, at)
        return first.get
    joined = b"".join(keys)
    if len(joined) != KEY_SIZE * len(keys):  # not all of one size: looked up one by one
        return lambda key: keys.index(key) if key in keys else None
    heads = np.frombuffer(joined, dtype=np.uint64)[:: KEY_SIZE // 8]  # one word per key

    def scan(key: bytes) -> int | None:
        if len(key) != KEY_SIZE:
            return None
        (head,) = np.frombuffer(key[:8], dtype=np.uint64)
        for at in np.flatnonzero(heads == head).tolist():
            if keys[at] == key:
                return int(at)
        return None

    return scan


def _told(
    told: Mapping[str, tuple[bytes, bytes]],
    part: int,
    nodes: Sequence[CodeNode],
    make: Callable[[CodeNode], bytes],
) -> Callable[[int], bytes]:
    """The key of row ``i``: part ``part`` of what ``told`` holds for its node (see
    :attr:`KnownWork.node_keys`), else made by ``make``."""

    def key(i: int) -> bytes:
        node = nodes[i]
        pair = told.get(node.id)
        return make(node) if pair is None else pair[part]

    return key


def text_key(text: str) -> bytes:
    """The key a text is known by in :class:`KnownWork` (its digest)."""
    return _digest(text)


def _compacted(documents: DocumentCounts) -> DocumentCounts:
    """The same documents with only the terms they hold (an index built on earlier ones
    carries the terms of documents that have gone)."""
    used = np.flatnonzero(np.bincount(documents.ids, minlength=len(documents.terms)))
    if len(used) == len(documents.terms):
        return documents
    renumber = np.zeros(len(documents.terms), dtype=np.int64)
    renumber[used] = np.arange(len(used), dtype=np.int64)
    terms = tuple(documents.terms[int(t)] for t in used)
    return replace(documents, terms=terms, ids=renumber[documents.ids])


def _kept_form(documents: DocumentCounts) -> DocumentCounts:
    """The documents as a :class:`BuiltIndex` keeps them: only the terms they hold, ids
    and counts in 32 bits, no keys (the index's row keys name them)."""
    compacted = _compacted(documents)
    return replace(
        compacted,
        keys=(),
        ids=compacted.ids.astype(np.int32),
        counts=compacted.counts.astype(np.int32),
    )


NAMED_FILE_NOTE = "named in the goal: no penalty for prose, configuration or docs"

# --- per-goal ranking ----------------------------------------------------------------


@dataclass(slots=True)
class _Fusion:
    size: int
    k: float
    scores: np.ndarray = field(init=False)
    why: dict[int, list[str]] = field(default_factory=lambda: defaultdict(list))
    lists: int = 0

    def __post_init__(self) -> None:
        self.scores = np.zeros(self.size, dtype=np.float64)

    def add(self, ranked: Sequence[tuple[int, str]], weight: float) -> None:
        """Fuse one ranked list of (row, reason); a row counts at its first rank only."""
        if weight <= 0 or not ranked:
            return
        self.lists += 1
        seen: set[int] = set()
        rank = 0
        for row, reason in ranked:
            if row in seen:
                continue
            seen.add(row)
            self.scores[row] += weight / (self.k + rank + 1)
            if rank < 10 and reason:
                self.why[row].append(reason)
            rank += 1


def _prior_for_goal(index: SalienceIndex, named: list[int]) -> np.ndarray:
    """The index's prior, except that a file the goal names by its path is not held down
    for being configuration or prose, or for sitting among docs and examples: whoever
    wrote ``tox.ini`` or ``docs/usage.rst`` in the goal wants that file. (Test, vendored
    and generated files keep their penalties.)"""
    config = index.config
    prior = index.prior
    for row in sorted(set(named)):
        node = index.nodes[row]
        lift = 1.0
        if node.language and node.language not in config.code_languages:
            lift /= config.document_penalty
        if index.is_auxiliary(node) or index.is_standalone_script(node):
            lift /= config.auxiliary_penalty
        if lift != 1.0:
            if prior is index.prior:
                prior = prior.copy()
            prior[row] *= lift
    return prior


def _personalized_pagerank(index: SalienceIndex, seeds: np.ndarray) -> np.ndarray:
    """r ← restart·p + (1 − restart)·(Tᵀr + dangling·p) from r = p until it moves less
    than the tolerance. Each step is worked in place, in the same operations on the same
    values as that formula (so bit for bit the same result), without a new array for
    each of its terms; from the index's second walk on, over its rows laid out for
    locality (see :class:`WalkLayout`), again bit for bit the same."""
    p = seeds / seeds.sum()
    layout = index.walk_layout()
    if layout is not None:
        return layout.walk(p, index.config.restart)
    transition_t, _ = index.spreading()
    return _walk(transition_t, index.row_array("dangling"), p, index.config.restart)


def _walk(
    transition_t: sp.csr_matrix,
    dangling_rows: np.ndarray,
    p: np.ndarray,
    restart: float,
    inverse: np.ndarray | None = None,
) -> np.ndarray:
    """The walk of :func:`_personalized_pagerank` from the restart distribution ``p``.
    With ``inverse`` (see :class:`WalkLayout`), the rows are in another order, and each
    step stops or goes on as the sum of its movement in the original order says: that
    sum is taken only when the sum in this order is too near the tolerance to tell."""
    r = p.copy()
    restarted = restart * p
    nxt = np.empty_like(p)
    moved = np.empty_like(p)
    for _ in range(PAGERANK_ITERATIONS):
        spread = transition_t @ r
        dangling = float(r[dangling_rows].sum())
        np.multiply(p, dangling, out=nxt)
        nxt += spread
        nxt *= 1.0 - restart
        nxt += restarted
        np.subtract(nxt, r, out=moved)
        np.abs(moved, out=moved)
        r, nxt = nxt, r
        if _has_settled(moved, inverse):
            break
    return np.asarray(r)


def _has_settled(moved: np.ndarray, inverse: np.ndarray | None) -> bool:
    """Whether the movement ``moved`` (non-negative), summed in the graph's row order
    (``moved`` is laid out by ``inverse`` when given), is below the tolerance. The sums
    of n non-negative numbers in two orders are at most n·eps of the sum apart: farther
    than :data:`SUM_ORDER_MARGIN` times that from the tolerance, either decides the same."""
    total = float(moved.sum())
    if inverse is None:
        return total < PAGERANK_TOLERANCE
    margin = SUM_ORDER_MARGIN * len(moved) * float(np.finfo(np.float64).eps) * total
    if abs(total - PAGERANK_TOLERANCE) > margin:
        return total < PAGERANK_TOLERANCE
    return float(moved[inverse].sum()) < PAGERANK_TOLERANCE  # too near: as the graph sums


@dataclass(frozen=True, slots=True)
class WalkLayout:
    """The walk's matrix with its rows and columns renumbered so that linked nodes sit
    near each other (reverse Cuthill-McKee over the links): each product then reads the
    rank vector from nearby memory, about 1.6x faster on sympy. Every row keeps its
    entries in their order and every step works on the same values, so the walk's
    result is the same, bit for bit: ``order[i]`` is the graph row laid at ``i``,
    ``inverse`` the other way round."""

    order: np.ndarray
    inverse: np.ndarray
    transposed: sp.csr_matrix
    dangling: np.ndarray  # the dangling rows' places, in the graph's order of them

    @classmethod
    def of(cls, transposed: sp.csr_matrix, dangling_rows: np.ndarray) -> WalkLayout:
        from scipy.sparse.csgraph import reverse_cuthill_mckee  # a server's, not a CLI's

        n = transposed.shape[0]
        links = sp.csr_matrix(
            (
                np.ones(len(transposed.indices), dtype=np.int32),
                transposed.indices,
                transposed.indptr,
            ),
            shape=transposed.shape,
        )
        order = np.asarray(reverse_cuthill_mckee((links + links.T).tocsr(), True), np.int64)
        inverse = np.empty(n, dtype=np.int64)
        inverse[order] = np.arange(n, dtype=np.int64)
        lengths = np.diff(transposed.indptr)[order]
        ptr = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(lengths, out=ptr[1:])
        gather = np.repeat(transposed.indptr[:-1][order] - ptr[:-1], lengths) + np.arange(
            int(ptr[-1]), dtype=np.int64
        )
        index_type = transposed.indices.dtype
        laid = sp.csr_matrix(
            (
                transposed.data[gather],
                inverse[transposed.indices[gather]].astype(index_type),
                ptr.astype(index_type),
            ),
            shape=transposed.shape,
        )
        return cls(order, inverse, laid, inverse[dangling_rows])

    def walk(self, p: np.ndarray, restart: float) -> np.ndarray:
        """The walk from ``p`` (in the graph's row order), in the graph's row order."""
        laid = _walk(self.transposed, self.dangling, p[self.order], restart, self.inverse)
        return np.asarray(laid[self.inverse])


def _file_strength(index: SalienceIndex, scores: np.ndarray) -> np.ndarray:
    """Per file row: its own score plus the best score of the symbols inside it."""
    best = np.zeros(len(index.nodes), dtype=np.float64)
    rows = index.row_array("symbol")
    if rows.size:
        np.maximum.at(best, index.file_row_of[rows], scores[rows])
    strength = np.zeros(len(index.nodes), dtype=np.float64)
    files = index.row_array("file")
    strength[files] = scores[files] + FILE_CHILD_SHARE * best[files]
    return strength


def _weigh_by_file(
    index: SalienceIndex, scores: np.ndarray, strength: np.ndarray, share: float
) -> np.ndarray:
    """Code inside the strongest files gains: a symbol keeps ``1 - share`` of its score
    and earns ``share`` in proportion to its file's strength against the best file."""
    top = float(strength.max())
    if top <= 0:
        return scores
    relative = strength[index.file_row_of] / top
    factor = np.ones(len(index.nodes), dtype=np.float64)
    rows = index.row_array("symbol")
    factor[rows] = (1.0 - share) + share * relative[rows]
    return scores * factor


RANK_TIME_FIELDS = ("rrf_k", "file_context", "weighted_query", "signal_weights")
"""The weights :func:`rank` reads per goal; every other field shapes the index itself."""


def check_rank_time_only(built: SalienceConfig, config: SalienceConfig) -> None:
    """Refuse a ``config`` that differs from ``built`` beyond the rank-time weights."""
    if replace(config, **{f: getattr(built, f) for f in RANK_TIME_FIELDS}) != built:
        raise ValueError("only the rank-time weights may differ from the index's config")


def rank(
    index: SalienceIndex,
    goal: str,
    config: SalienceConfig | None = None,
    room_seeds: Sequence[tuple[int, str]] = (),
) -> Salience:
    """Score every node of the index for ``goal``. ``config`` may change the weights
    :func:`rank` reads (:data:`RANK_TIME_FIELDS`) and nothing else (a refusal otherwise):
    one index then serves many weightings, as an ablation or a weight search needs.
    ``room_seeds``, (row, reason) best first, is the code the team's messages about the
    goal name: one more seed list, for the rows and their files, at
    :data:`ROOM_SEED_WEIGHT`."""
    n = len(index.nodes)
    if config is None:
        config = index.config
    else:
        check_rank_time_only(index.config, config)
    query = Query(goal, config.weighted_query)
    fusion = _Fusion(n, config.rrf_k)
    if n == 0:
        return Salience(np.zeros(0), {}, 0, 0, 0.0)
    precise = 0
    named: list[int] = []
    for signal in SIGNALS:
        weight = config.weight(signal.name)
        if weight <= 0:
            continue
        seeds = signal.rank(index, query)
        fusion.add(seeds, weight)
        if signal.to_files:
            fusion.add([(int(index.file_row_of[row]), why) for row, why in seeds], weight)
        if signal.precise:
            precise += len(seeds)
        if signal.names_files:
            named.extend(row for row, _ in seeds)
    # A name the goal writes as code (`fact`) that this code defines is a precise cue, even
    # one too common to rank as strongly as a compound name does
    precise += sum(
        1
        for name in dict.fromkeys(query.cues.names)
        if 0 < len(index.definitions.get(name, ())) <= MAX_NAME_DEFINITIONS
    )
    if room_seeds:
        fusion.add(room_seeds, ROOM_SEED_WEIGHT)
        own = {row for row, _ in room_seeds}
        files = [(int(index.file_row_of[row]), why) for row, why in room_seeds]
        fusion.add([(f, why) for f, why in files if f not in own], ROOM_SEED_WEIGHT)
    prior = _prior_for_goal(index, named)
    seeds_mass = fusion.scores * prior
    terms = set(query.terms)
    known = sum(1 for t in terms if index.file_bm25.document_frequency(t) > 0)
    coverage = known / len(terms) if terms else 0.0
    seeded = int(np.count_nonzero(seeds_mass))
    if seeded == 0:
        return Salience(np.zeros(n), {}, 0, precise, coverage)
    scores = _personalized_pagerank(index, seeds_mass) * prior
    scores = scores / scores.sum()
    strength = _file_strength(index, scores)
    if config.file_context > 0:
        scores = _weigh_by_file(index, scores, strength, config.file_context)
        scores = scores / scores.sum()
    why: dict[int, list[str]] = {}
    for found in np.flatnonzero(scores >= WHY_FLOOR * float(scores.max())):
        row = int(found)
        reasons = list(fusion.why.get(row, []))
        if not reasons:
            reasons = ["linked in the code graph to what the goal names"]
        notes = index.notes_of(row)
        if prior[row] != index.prior[row]:
            lifted = ("not code", "documentation/example", "standalone script")
            notes = [NAMED_FILE_NOTE] + [n for n in notes if not n.startswith(lifted)]
        why[row] = reasons + notes
    return Salience(scores, why, seeded, precise, coverage, strength, frozenset(named))


def file_scores(index: SalienceIndex, salience: Salience) -> dict[str, float]:
    """Rank files: own score plus the best of their symbols (a file is as relevant as
    the most relevant code inside it)."""
    if salience.file_strength is None:
        return {index.nodes[row].path: 0.0 for row in index.file_rows}
    strength = salience.file_strength
    return {index.nodes[row].path: float(strength[row]) for row in index.file_rows}
