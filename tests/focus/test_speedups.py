"""Shortcuts taken for speed give what the plain way gives: the best scores found by
partitioning first, and a graph whose edges are made only when first read."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from coderooms.focus.graph import CodeEdge, CodeGraph, DeferredEdges
from coderooms.focus.lexical import top_ranked


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
