"""A picture of a focus set's neighbourhood in the code graph, as inline SVG.

The focus set sits on an inner ring, the nodes its edges reach on an outer ring, and a
line joins every pair an edge of the index joins, labelled (on hover) with the edge's
kind: which calls, imports or containments tie each loaded item to the rest. Layout is
a pure function of the ids, so the same focus draws the same picture.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable

from coderooms.focus.graph import CodeEdge
from coderooms.web.html import Markup, tag

__all__ = ["GRAPH_FOCUS_NODES", "GRAPH_NEIGHBOURS", "neighbourhood", "neighbourhood_svg"]

GRAPH_FOCUS_NODES = 24
"""Focus-set items drawn at most (the most salient first)."""
GRAPH_NEIGHBOURS = 24
"""Neighbours drawn at most (the most connected to the focus set first)."""
SIZE = 680
INNER_RADIUS = 160
OUTER_RADIUS = 250
LABEL_CHARS = 22


def neighbourhood(
    focus_ids: list[str], edges: Iterable[CodeEdge]
) -> tuple[list[str], list[str], list[CodeEdge]]:
    """The focus nodes drawn, their neighbours drawn and the edges among all of them."""
    shown = focus_ids[:GRAPH_FOCUS_NODES]
    inside = set(shown)
    unique = sorted(set(edges), key=lambda e: (e.src, e.dst, e.kind))
    links: Counter[str] = Counter()
    for edge in unique:
        for end, other in ((edge.src, edge.dst), (edge.dst, edge.src)):
            if end in inside and other not in inside:
                links[other] += 1
    neighbours = sorted(links, key=lambda node: (-links[node], node))[:GRAPH_NEIGHBOURS]
    drawn = inside | set(neighbours)
    kept = [e for e in unique if e.src in drawn and e.dst in drawn and e.src != e.dst]
    return shown, neighbours, kept


def _ring(ids: list[str], radius: float) -> dict[str, tuple[float, float]]:
    centre = SIZE / 2
    count = max(len(ids), 1)
    return {
        node: (
            round(centre + radius * math.cos(2 * math.pi * i / count - math.pi / 2), 1),
            round(centre + radius * math.sin(2 * math.pi * i / count - math.pi / 2), 1),
        )
        for i, node in enumerate(ids)
    }


def _label(node_id: str) -> str:
    name = node_id.rsplit("::", 1)[-1].rsplit("/", 1)[-1]
    return name if len(name) <= LABEL_CHARS else name[: LABEL_CHARS - 1] + "…"


def neighbourhood_svg(focus_ids: list[str], edges: Iterable[CodeEdge]) -> Markup:
    shown, neighbours, kept = neighbourhood(focus_ids, edges)
    at = {**_ring(shown, INNER_RADIUS if neighbours else INNER_RADIUS / 1.5)}
    at.update(_ring(neighbours, OUTER_RADIUS))
    lines = [
        tag(
            "line",
            tag("title", f"{edge.src} —{edge.kind}→ {edge.dst}"),
            x1=at[edge.src][0],
            y1=at[edge.src][1],
            x2=at[edge.dst][0],
            y2=at[edge.dst][1],
            cls=f"edge {edge.kind}",
        )
        for edge in kept
    ]
    nodes = []
    for node in [*shown, *neighbours]:
        x, y = at[node]
        role = "focus" if node in shown else "near"
        nodes.append(
            tag(
                "g",
                tag("title", node),
                tag("circle", cx=x, cy=y, r=7 if role == "focus" else 5),
                tag("text", _label(node), x=x, y=y - 10, text_anchor="middle"),
                cls=f"node {role}",
            )
        )
    return tag(
        "svg",
        tag("g", *lines, cls="edges"),
        tag("g", *nodes, cls="nodes"),
        xmlns="http://www.w3.org/2000/svg",
        viewBox=f"0 0 {SIZE} {SIZE}",
        role="img",
        aria_label=f"{len(shown)} focus nodes, {len(neighbours)} neighbours, {len(kept)} edges",
        cls="graph",
    )
