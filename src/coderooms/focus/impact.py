"""Blast radius: what depends on a target, walked backwards over dependency edges.

Bounded twice: by ``depth`` (edges away from the target) and by
:data:`MAX_IMPACT_NODES`. Whatever a bound cut off is listed, with the bound that cut it.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from coderooms.focus.errors import AmbiguousTarget, InvalidLimit, UnknownTarget
from coderooms.focus.graph import CodeGraph, CodeNode

MAX_IMPACT_DEPTH = 6
MAX_IMPACT_NODES = 200
MAX_AMBIGUOUS_SHOWN = 5
DEPENDENCY_KINDS = ("calls", "references", "inherits", "imports", "tests")


@dataclass(frozen=True, slots=True)
class Impacted:
    node: CodeNode
    distance: int
    via: str  # edge kind that reached it
    reached_from: str  # id of the node it depends on


@dataclass(frozen=True, slots=True)
class ImpactResult:
    target: CodeNode
    depth: int
    impacted: tuple[Impacted, ...]
    ignored: tuple[tuple[str, str], ...]  # (id, "beyond_depth" | "over_limit")

    def to_json(self) -> dict[str, Any]:
        return {
            "target": self.target.id,
            "depth": self.depth,
            "impacted": [
                {
                    "id": i.node.id,
                    "path": i.node.path,
                    "kind": i.node.kind,
                    "name": i.node.name,
                    "start_line": i.node.start_line,
                    "end_line": i.node.end_line,
                    "distance": i.distance,
                    "why": f"{i.via} {i.reached_from}",
                }
                for i in self.impacted
            ],
            "ignored": [{"what": what, "why": why} for what, why in self.ignored],
        }


def resolve_target(graph: CodeGraph, target: str) -> CodeNode:
    """A node id, a file path, a qualified name (``Class.method``) or a plain name."""
    exact = graph.node(target)
    if exact is not None:
        return exact
    text = target.strip()
    for field_name in ("qualname", "name"):
        matches = sorted(
            (n for n in graph.nodes if n.kind != "file" and getattr(n, field_name) == text),
            key=lambda n: n.id,
        )
        if ":" in text:
            path, _, qual = text.replace("::", ":").partition(":")
            matches = [n for n in graph.nodes if n.path == path and n.qualname == qual]
        if len(matches) == 1:
            return matches[0]
        if len(matches) > 1:
            shown = ", ".join(n.id for n in matches[:MAX_AMBIGUOUS_SHOWN])
            raise AmbiguousTarget(target, shown)
    raise UnknownTarget(target)


def impact(graph: CodeGraph, target: str, depth: int = 2) -> ImpactResult:
    if not isinstance(depth, int) or isinstance(depth, bool) or not 1 <= depth <= MAX_IMPACT_DEPTH:
        raise InvalidLimit("depth", depth, MAX_IMPACT_DEPTH)
    root = resolve_target(graph, target)
    dependents: dict[str, list[tuple[str, str]]] = defaultdict(list)
    children: dict[str, list[str]] = defaultdict(list)
    for edge in graph.edges:
        if edge.kind in DEPENDENCY_KINDS:
            dependents[edge.dst].append((edge.src, edge.kind))
        elif edge.kind == "contains":
            children[edge.src].append(edge.dst)
    for key in dependents:
        dependents[key].sort()
    for key in children:
        children[key].sort()

    # A file or class is depended on through its parts as well.
    sources = [root.id]
    stack = [root.id]
    while stack:
        for child in children.get(stack.pop(), []):
            sources.append(child)
            stack.append(child)
    seen = set(sources)
    frontier = sorted(sources)
    impacted: list[Impacted] = []
    ignored: list[tuple[str, str]] = []
    for distance in range(1, depth + 2):
        nxt: list[str] = []
        for node_id in frontier:
            for src, kind in dependents.get(node_id, []):
                if src in seen:
                    continue
                seen.add(src)
                node = graph.node(src)
                if node is None:
                    continue
                if distance > depth:
                    ignored.append((src, "beyond_depth"))
                elif len(impacted) >= MAX_IMPACT_NODES:
                    ignored.append((src, "over_limit"))
                else:
                    impacted.append(Impacted(node, distance, kind, node_id))
                    nxt.append(src)
        frontier = sorted(nxt)
    return ImpactResult(root, depth, tuple(impacted), tuple(ignored))
