"""Shortcuts taken for speed give what the plain way gives: the best scores found by
partitioning first, a graph whose edges are made only when first read, BM25 weighed from
document arrays, and the transition matrix read from edge columns."""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from coderooms.focus.carried import spans_copied
from coderooms.focus.graph import CodeEdge, CodeGraph, CodeNode, DeferredEdges, EdgeColumns
from coderooms.focus.lexical import BM25, DocumentCounts, top_ranked
from coderooms.focus.salience import SalienceIndex


def _plain_top_ranked(scores: np.ndarray, limit: int) -> list[int]:
    rows = sorted((i for i in range(len(scores)) if scores[i] > 0), key=lambda i: (-scores[i], i))
    return rows[:limit]


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.sampled_from([0.0, -1.0, 0.25, 0.5, 0.5, 1.0, 2.0, 3.5]), max_size=60),
    st.integers(min_value=0, max_value=70),
)
def test_top_ranked_gives_the_best_scores_ties_by_index(values: list[float], limit: int) -> None:
    scores = np.asarray(values, dtype=np.float64)
    assert top_ranked(scores, limit) == _plain_top_ranked(scores, limit)


def test_deferred_edges_are_made_once_when_first_read_and_equal_the_edges() -> None:
    edges = (CodeEdge("a.py", "b.py", "imports"), CodeEdge("a.py::f", "b.py::g", "calls", 0.5))
    made: list[int] = []

    def make() -> tuple[CodeEdge, ...]:
        made.append(1)
        return edges

    deferred = DeferredEdges(make)
    graph = CodeGraph(nodes=(), edges=deferred)
    assert made == []
    assert list(graph.edges) == list(edges)
    assert len(deferred) == 2 and deferred[1] == edges[1] and deferred[:1] == edges[:1]
    assert made == [1]
    assert deferred == edges and deferred == list(edges) and deferred != edges[:1]
    assert graph == CodeGraph(nodes=(), edges=edges)
    assert hash(deferred) == hash(edges)


_TERMS = st.lists(st.sampled_from(["cart", "item", "depot", "sum", "x", "order"]), max_size=8)


@settings(max_examples=200, deadline=None)
@given(st.lists(_TERMS, max_size=12))
def test_bm25_from_document_arrays_equals_bm25_from_counts_bit_for_bit(
    documents: list[list[str]],
) -> None:
    counted = [Counter(terms) for terms in documents]
    # The arrays number terms in another order than they first occur, as reused ones do.
    vocabulary = sorted({term for terms in documents for term in terms}, reverse=True)
    number = {term: i for i, term in enumerate(vocabulary)}
    sizes = [len(counts) for counts in counted]
    arrays = DocumentCounts(
        tuple(bytes([i]) for i in range(len(counted))),
        tuple(vocabulary),
        np.concatenate([[0], np.cumsum(sizes, dtype=np.int64)]).astype(np.int64),
        np.asarray([number[t] for counts in counted for t in counts], dtype=np.int64),
        np.asarray([n for counts in counted for n in counts.values()], dtype=np.int64),
    )
    fast = BM25.from_documents(arrays).parts()
    plain = BM25.from_counts(counted).parts()
    assert (fast.terms, fast.columns, fast.shape, fast.size) == (
        plain.terms,
        plain.columns,
        plain.shape,
        plain.size,
    )
    for name in ("idf", "data", "indices", "indptr"):
        mine, theirs = getattr(fast, name), getattr(plain, name)
        assert mine.dtype == theirs.dtype and mine.tobytes() == theirs.tobytes(), name


def _plain_transition(index: SalienceIndex) -> sp.csr_matrix:
    """The transition matrix built edge by edge, as the ranking index once did."""
    n = len(index.nodes)
    weights = index.config.edge_weights
    rows: list[int] = []
    cols: list[int] = []
    data: list[float] = []
    for edge in index.graph.edges:
        a, b = index.position.get(edge.src, -1), index.position.get(edge.dst, -1)
        w = weights.get(edge.kind, 0.0) * edge.weight
        if a < 0 or b < 0 or a == b or w <= 0:
            continue
        rows += [a, b]
        cols += [b, a]
        data += [w, w * index.config.backward]
    for path_a, path_b, together in index.graph.co_changes:
        a, b = index.file_of_path.get(path_a), index.file_of_path.get(path_b)
        w = weights.get("co_change", 0.0) * math.log1p(together)
        if a is None or b is None or a == b or w <= 0:
            continue
        rows += [a, b]
        cols += [b, a]
        data += [w, w]
    matrix = sp.csr_matrix((data, (rows, cols)), shape=(n, n), dtype=np.float64)
    out = np.asarray(matrix.sum(axis=1)).ravel()
    inverse = np.divide(1.0, out, out=np.zeros_like(out), where=out > 0)
    return sp.csr_matrix(sp.diags(inverse) @ matrix)


_PATHS = ["a.py", "b.py", "pkg/c.py"]
_IDS = _PATHS + ["a.py::f", "b.py::g", "pkg/c.py::h", "gone.py::x"]
_EDGE = st.tuples(
    st.sampled_from(_IDS),
    st.sampled_from(_IDS),
    st.sampled_from(["calls", "imports", "contains", "name_match", "tests", "unknown"]),
    st.sampled_from([0.5, 1.0, 1.0, 3.0, 0.1]),
)


@settings(max_examples=150, deadline=None)
@given(
    st.lists(_EDGE, max_size=30),
    st.lists(st.tuples(st.sampled_from(_PATHS + ["gone.py"]), st.sampled_from(_PATHS)), max_size=4),
)
def test_the_transition_read_from_edge_columns_equals_the_one_built_edge_by_edge(
    edges: list[tuple[str, str, str, float]], pairs: list[tuple[str, str]]
) -> None:
    nodes = [CodeNode(p, "file", p, p, p, "python", 1, 9) for p in _PATHS]
    nodes += [
        CodeNode(i, "function", i.split("::")[0], i[-1], i[-1], "python", 2, 3, parent=i[:4])
        for i in _IDS
        if "::" in i and not i.startswith("gone")
    ]
    plain = tuple(CodeEdge(s, d, k, w) for s, d, k, w in edges)  # type: ignore[arg-type]
    columns = EdgeColumns(*(zip(*edges, strict=True) if edges else ((), (), (), ())))
    co_changes = tuple((a, b, n + 1) for n, (a, b) in enumerate(pairs))
    deferred = CodeGraph(
        tuple(nodes),
        DeferredEdges(
            lambda: plain,
            lambda: EdgeColumns(columns.src, columns.dst, columns.kind, columns.weight),
        ),
        co_changes=co_changes,
    )
    index = SalienceIndex(deferred, {p: "" for p in _PATHS})
    expected = _plain_transition(
        SalienceIndex(
            CodeGraph(tuple(nodes), plain, co_changes=co_changes), {p: "" for p in _PATHS}
        )
    )
    mine = index.transition
    for name in ("data", "indices", "indptr"):
        assert getattr(mine, name).tobytes() == getattr(expected, name).tobytes(), name


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.integers(0, 99), max_size=30),
    st.lists(st.lists(st.integers(0, 99), max_size=4), max_size=3),
    st.lists(st.tuples(st.booleans(), st.integers(0, 40), st.integers(0, 8)), max_size=12),
    st.booleans(),
)
def test_document_spans_copied_in_runs_equal_a_gather_of_every_entry(
    old_values: list[int],
    fresh_values: list[list[int]],
    spans: list[tuple[bool, int, int]],
    narrow: bool,
) -> None:
    """Documents taken from an earlier index and counted anew, copied in runs of spans
    that follow each other: what gathering every entry of old-then-fresh gives."""
    old = np.asarray(old_values, dtype=np.int32 if narrow else np.int64)
    fresh = [np.asarray(values, dtype=np.int64) for values in fresh_values]
    total = len(old) + sum(len(part) for part in fresh)
    starts: list[int] = []
    lengths: list[int] = []
    for follows, start, length in spans:
        begin = starts[-1] + lengths[-1] if follows and starts else min(start, total)
        starts.append(begin)
        lengths.append(min(length, total - begin))
    start_array = np.asarray(starts, dtype=np.int64)
    length_array = np.asarray(lengths, dtype=np.int64)
    ptr = np.zeros(len(starts) + 1, dtype=np.int64)
    np.cumsum(length_array, out=ptr[1:])
    every = np.repeat(start_array - ptr[:-1], length_array) + np.arange(int(ptr[-1]))
    want = np.concatenate([old, *fresh]).astype(np.int64)[every]
    got = spans_copied(old, fresh, start_array, length_array, ptr)
    assert got.dtype == np.int64 and got.tolist() == want.tolist()


def test_the_places_of_many_ids_are_those_of_each() -> None:
    paths = ["a.py", "b.py", "a.py"]  # a repeated id: its last place, as at() tells
    graph = CodeGraph([CodeNode(p, "file", p, p, p, "python", 1, 9) for p in paths], [])
    asked = ["b.py", "a.py", "missing.py"]
    assert graph.at_each(asked) == [graph.at(i) for i in asked] == [1, 2, None]
