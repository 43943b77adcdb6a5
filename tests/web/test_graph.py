"""The focus view's picture: which nodes and edges it draws, deterministically."""

from __future__ import annotations

from coderooms.focus.graph import CodeEdge
from coderooms.web.graph_svg import GRAPH_NEIGHBOURS, neighbourhood, neighbourhood_svg


def test_neighbours_are_the_most_connected_first_and_capped() -> None:
    edges = [CodeEdge("a", f"n{i:02d}", "calls") for i in range(GRAPH_NEIGHBOURS + 5)]
    edges += [CodeEdge("b", "n07", "calls"), CodeEdge("n09", "b", "imports")]
    shown, neighbours, kept = neighbourhood(["a", "b"], edges)
    assert shown == ["a", "b"]
    assert neighbours[:2] == ["n07", "n09"]  # two links each
    assert len(neighbours) == GRAPH_NEIGHBOURS
    assert all(e.src in {"a", "b", *neighbours} and e.dst in {"a", "b", *neighbours} for e in kept)


def test_an_edge_seen_twice_is_drawn_once_and_self_loops_not_at_all() -> None:
    edge = CodeEdge("a", "b", "calls")
    _, _, kept = neighbourhood(["a", "b"], [edge, edge, CodeEdge("a", "a", "calls")])
    assert kept == [edge]


def test_the_same_focus_draws_the_same_picture() -> None:
    edges = [CodeEdge("x.py::f", "y.py::g", "calls"), CodeEdge("y.py", "y.py::g", "contains")]
    first = neighbourhood_svg(["x.py::f"], edges)
    assert first == neighbourhood_svg(["x.py::f"], list(reversed(edges)))
    assert "<title>x.py::f —calls→ y.py::g</title>" in first


def test_node_ids_are_escaped_in_the_picture() -> None:
    svg = neighbourhood_svg(["<script>x</script>"], [])
    assert "<script>" not in svg and "&lt;script&gt;" in svg
