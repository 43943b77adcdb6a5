"""The in-memory code graph the focus algorithms work on.

Pure data: the code indexer (``coderooms.index``) builds a :class:`CodeGraph` from
``index.db``; everything in ``coderooms.focus`` reads it and never touches a file.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

NodeKind = Literal["file", "module", "class", "function", "method"]
EdgeKind = Literal[
    "contains", "imports", "calls", "name_match", "references", "inherits", "tests", "co_change"
]
"""``name_match``: a call only its name ties to a candidate (its receiver's type is not
known); every other dependency kind is resolved through evidence."""


@dataclass(frozen=True, slots=True)
class CodeNode:
    """One file or symbol. Ids are stable and readable: ``pkg/mod.py`` for a file,
    ``pkg/mod.py::Class.method`` for a symbol (``#2`` suffix for a same-named twin)."""

    id: str
    kind: NodeKind
    path: str
    name: str
    qualname: str
    language: str
    start_line: int
    end_line: int
    signature: str = ""
    docstring: str = ""
    content_hash: str = ""
    parent: str | None = None
    size_bytes: int = 0
    is_test: bool = False
    is_generated: bool = False
    is_vendored: bool = False


@dataclass(frozen=True, slots=True)
class CodeEdge:
    src: str
    dst: str
    kind: EdgeKind
    weight: float = 1.0


@dataclass(frozen=True, slots=True)
class FileSignals:
    """Git signals for one file; zeros when the repository has no git history."""

    path: str
    commit_count: int = 0
    last_change: int = 0  # unix seconds of the newest commit touching the file


@dataclass(frozen=True, slots=True)
class CodeGraph:
    nodes: tuple[CodeNode, ...]
    edges: tuple[CodeEdge, ...]
    signals: tuple[FileSignals, ...] = ()
    co_changes: tuple[tuple[str, str, int], ...] = ()  # (path_a, path_b, commits together)
    head_time: int = 0  # unix seconds of HEAD (0 without git): the "now" for recency
    _by_id: dict[str, CodeNode] = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self) -> None:
        self._by_id.update((n.id, n) for n in self.nodes)

    def node(self, node_id: str) -> CodeNode | None:
        return self._by_id.get(node_id)
