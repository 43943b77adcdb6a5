"""Blast radius: what depends on a target, walked backwards over dependency edges.

Bounded twice: by ``depth`` (edges away from the target) and by
:data:`MAX_IMPACT_NODES`. Whatever a bound cut off is listed, with the bound that cut it.

Calling a class runs its constructor, but the graph files such calls under the class
node. So when the walk reaches a constructor (:func:`is_constructor`) it goes on from
the constructor's class as well: what depends on the class is listed one step further
out, as depending on the class. The class itself is listed only if it depends on the
target through an edge of its own.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass, replace
from typing import Any

from coderooms.focus.errors import (
    AbsolutePathTarget,
    AmbiguousTarget,
    DirectoryTarget,
    FocusError,
    InvalidLimit,
    TargetTooLong,
    UnknownTarget,
    counts_to,
)
from coderooms.focus.graph import CodeGraph, CodeNode

MAX_IMPACT_DEPTH = 6
MAX_IMPACT_NODES = 200
MAX_AMBIGUOUS_SHOWN = 5
MAX_IMPACT_CANDIDATES = 20
"""Symbols an ambiguous impact target lists (the rest are counted in its ignored tail)."""
MAX_TARGET_CHARS = 1_000
"""Longest target resolved; a path, qualified name or node id is far shorter."""
TARGET_SHOWN_CHARS = 60
"""How much of an over-long target its error quotes."""
DEPENDENCY_KINDS = ("calls", "name_match", "references", "inherits", "imports", "tests")
NAME_MATCH_KIND = "name_match"  # the one dependency kind not resolved through evidence

PYTHON_CONSTRUCTORS = frozenset({"__init__", "__new__", "__post_init__"})
JS_LANGUAGES = frozenset({"javascript", "typescript", "tsx"})
CLASS_NAMED_CONSTRUCTOR_LANGUAGES = frozenset({"java"})
_WINDOWS_ABSOLUTE = re.compile(r"[A-Za-z]:[\\/]")


@dataclass(frozen=True, slots=True)
class Impacted:
    node: CodeNode
    distance: int
    via: str  # edge kind that reached it
    reached_from: str  # id of the node it depends on

    @property
    def edge(self) -> str:
        """``resolved`` when evidence ties it to what it depends on, ``name_match`` when
        only a name does (a call on a receiver of unknown type)."""
        return NAME_MATCH_KIND if self.via == NAME_MATCH_KIND else "resolved"


@dataclass(frozen=True, slots=True)
class ImpactCandidate:
    """One of the symbols an ambiguous target names, and how many depend on it directly."""

    node: CodeNode
    dependents: int

    def to_json(self) -> dict[str, Any]:
        n = self.node
        return {
            "id": n.id,
            "path": n.path,
            "kind": n.kind,
            "name": n.name,
            "qualname": n.qualname,
            "start_line": n.start_line,
            "end_line": n.end_line,
            "dependents": self.dependents,
        }


@dataclass(frozen=True, slots=True)
class ImpactResult:
    """A blast radius; or, when the target names several symbols (``target`` None),
    those symbols as ``candidates`` to ask again by id, and nothing impacted."""

    target: CodeNode | None
    depth: int
    impacted: tuple[Impacted, ...]
    ignored: tuple[tuple[str, str], ...]  # (id, "beyond_depth" | "over_limit")
    asked: str = ""  # the target as given
    candidates: tuple[ImpactCandidate, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "target": self.target.id if self.target is not None else None,
            "asked": self.asked,
            "candidates": [c.to_json() for c in self.candidates],
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
                    "edge": i.edge,
                }
                for i in self.impacted
            ],
            "ignored": [{"what": what, "why": why} for what, why in self.ignored],
        }


def is_constructor(graph: CodeGraph, node: CodeNode) -> CodeNode | None:
    """The class ``node`` constructs, or None when ``node`` is not a constructor.

    A constructor is a method directly inside a class named ``__init__``, ``__new__`` or
    ``__post_init__`` (Python), ``constructor`` (JavaScript, TypeScript) or like its
    class (Java)."""
    if node.kind != "method" or node.parent is None:
        return None
    owner = graph.node(node.parent)
    if owner is None or owner.kind != "class":
        return None
    if node.language == "python":
        found = node.name in PYTHON_CONSTRUCTORS
    elif node.language in JS_LANGUAGES:
        found = node.name == "constructor"
    elif node.language in CLASS_NAMED_CONSTRUCTOR_LANGUAGES:
        found = node.name == owner.name
    else:
        found = False
    return owner if found else None


def _shown(target: str) -> str:
    """``target`` cut to what an error message quotes."""
    if len(target) <= TARGET_SHOWN_CHARS:
        return target
    return target[:TARGET_SHOWN_CHARS] + "…"


def _is_absolute(path: str) -> bool:
    return path.startswith("/") or _WINDOWS_ABSOLUTE.match(path) is not None


def _normal_path(path: str) -> str:
    """``path`` without ``./`` steps, repeated or trailing slashes (``""``: the root)."""
    return "/".join(part for part in path.split("/") if part not in ("", "."))


def _ambiguous(target: str, matches: list[CodeNode]) -> AmbiguousTarget:
    ordered = _shallowest_first(matches)
    shown = ", ".join(n.id for n in ordered[:MAX_AMBIGUOUS_SHOWN])
    if len(ordered) > MAX_AMBIGUOUS_SHOWN:
        shown += f" and {len(ordered) - MAX_AMBIGUOUS_SHOWN} more"
    return AmbiguousTarget(target, shown)


def _shallowest_first(matches: list[CodeNode]) -> list[CodeNode]:
    """A top-level symbol before methods of that name, then by id."""
    return sorted(matches, key=lambda n: (n.qualname.count("."), n.id))


def _unresolved(graph: CodeGraph, target: str, path: str) -> FocusError:
    """The error for a ``target`` that names no node; ``path`` as a path would read."""
    if _is_absolute(path):
        return AbsolutePathTarget(target)
    prefix = _normal_path(path)
    prefix = prefix + "/" if prefix else ""
    files = sorted(n.path for n in graph.nodes if n.kind == "file" and n.path.startswith(prefix))
    if files and path:
        return DirectoryTarget(target, len(files), files[0])
    return UnknownTarget(target)


def resolve_target(graph: CodeGraph, target: str) -> CodeNode:
    """The one node ``target`` names (see :func:`target_matches`); a target naming
    several symbols is an :class:`AmbiguousTarget`."""
    matches = target_matches(graph, target)
    if len(matches) > 1:
        raise _ambiguous(target, matches)
    return matches[0]


def target_matches(graph: CodeGraph, target: str) -> list[CodeNode]:
    """The nodes ``target`` names: a node id, a file path, a qualified name
    (``Class.method``), ``path::qualname`` or a plain name; at least one.

    A path may start with ``./`` and end with ``/``. A plain name names every symbol of
    that name; a qualified name every symbol of that qualified name (or, if none, of
    that name). Several come shallowest first. Absolute paths are refused: the graph
    does not know where the repository is, so the caller makes them relative.
    Directories are refused too."""
    if len(target) > MAX_TARGET_CHARS:
        raise TargetTooLong(len(target), MAX_TARGET_CHARS, _shown(target))
    exact = graph.node(target)
    if exact is not None:
        return [exact]
    text = target.strip()
    if not text:
        raise UnknownTarget(target)
    symbols = [n for n in graph.nodes if n.kind != "file"]
    if ":" in text and not _WINDOWS_ABSOLUTE.match(text):
        path, _, qual = text.replace("::", ":").partition(":")
        path = _normal_path(path)
        node = graph.node(f"{path}::{qual}")
        found = [node] if node else [n for n in symbols if n.path == path and n.qualname == qual]
        if found:
            return _shallowest_first(found)
        raise _unresolved(graph, target, text.partition(":")[0])
    if "/" in text:
        node = graph.node(_normal_path(text))
        if node is not None:
            return [node]
        raise _unresolved(graph, target, text)
    found = [n for n in symbols if n.qualname == text] if "." in text else []
    found = found or [n for n in symbols if n.name == text]
    if found:
        return _shallowest_first(found)
    raise _unresolved(graph, target, text)


@dataclass(frozen=True, slots=True)
class DependencyMaps:
    """A graph's edges as the walk reads them: each node's dependents (id, edge kind)
    and children, sorted. Built once, they serve any number of impact questions on the
    same graph."""

    dependents: dict[str, list[tuple[str, str]]]
    children: dict[str, list[str]]


def dependency_maps(graph: CodeGraph) -> DependencyMaps:
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
    return DependencyMaps(dependents, children)


def checked_depth(depth: object) -> int:
    """An impact's number of steps, refused unless 1 to :data:`MAX_IMPACT_DEPTH`."""
    if not counts_to(depth, MAX_IMPACT_DEPTH):
        raise InvalidLimit("depth", depth, MAX_IMPACT_DEPTH)
    return depth


def impact(
    graph: CodeGraph, target: str, depth: int = 2, maps: DependencyMaps | None = None
) -> ImpactResult:
    """What depends on ``target`` up to ``depth`` steps away. A target naming several
    symbols is answered with those symbols (each with its count of direct dependents),
    the most depended on first, for the caller to ask again by id. ``maps`` are the
    graph's :func:`dependency_maps`, when the caller keeps them."""
    depth = checked_depth(depth)
    matches = target_matches(graph, target)
    if maps is None:
        maps = dependency_maps(graph)
    dependents, children = maps.dependents, maps.children
    if len(matches) == 1:
        return replace(_walk(graph, matches[0], depth, dependents, children), asked=target)
    counted = [
        ImpactCandidate(node, len(_walk(graph, node, 1, dependents, children).impacted))
        for node in matches
    ]
    # The most depended on first; ties keep the shallowest-first order of the matches.
    counted.sort(key=lambda c: -c.dependents)
    listed = tuple(counted[:MAX_IMPACT_CANDIDATES])
    ignored = tuple((c.node.id, "over_limit") for c in counted[MAX_IMPACT_CANDIDATES:])
    return ImpactResult(None, depth, (), ignored, asked=target, candidates=listed)


def _walk(
    graph: CodeGraph,
    root: CodeNode,
    depth: int,
    dependents: dict[str, list[tuple[str, str]]],
    children: dict[str, list[str]],
) -> ImpactResult:
    """The blast radius of ``root`` over the reverse dependency and contains maps."""

    def walked_with(node: CodeNode) -> list[str]:
        """``node`` and, for a constructor, its class: the ids whose dependents are its."""
        owner = is_constructor(graph, node)
        return [node.id] if owner is None else [node.id, owner.id]

    # A file or class is depended on through its parts as well.
    sources = [root.id]
    stack = [root.id]
    while stack:
        for child in children.get(stack.pop(), []):
            sources.append(child)
            stack.append(child)
    for source in list(sources):
        node = graph.node(source)
        if node is not None:
            sources.extend(walked_with(node)[1:])
    seen = set(sources)  # ids that are the target or listed
    expanded = set(sources)  # ids whose dependents are walked
    frontier = sorted(expanded)
    impacted: list[Impacted] = []
    ignored: list[tuple[str, str]] = []
    for distance in range(1, depth + 2):
        nxt: list[str] = []
        # Each dependent at this distance, once: by a resolved edge when it has one.
        reached: dict[str, tuple[str, str]] = {}  # id -> (edge kind, what it depends on)
        for node_id in frontier:
            for src, kind in dependents.get(node_id, []):
                if src in seen:
                    continue
                known = reached.get(src)
                if known is None or (known[0] == NAME_MATCH_KIND != kind):
                    reached[src] = (kind, node_id)
        # Resolved dependents first: when MAX_IMPACT_NODES cuts, name matches go first.
        for src in sorted(reached, key=lambda i: reached[i][0] == NAME_MATCH_KIND):
            seen.add(src)
            node = graph.node(src)
            if node is None:
                continue
            kind, node_id = reached[src]
            if distance > depth:
                ignored.append((src, "beyond_depth"))
            elif len(impacted) >= MAX_IMPACT_NODES:
                ignored.append((src, "over_limit"))
            else:
                impacted.append(Impacted(node, distance, kind, node_id))
                for walked in walked_with(node):
                    if walked not in expanded:
                        expanded.add(walked)
                        nxt.append(walked)
        frontier = sorted(nxt)
    return ImpactResult(root, depth, tuple(impacted), tuple(ignored), asked=root.id)
