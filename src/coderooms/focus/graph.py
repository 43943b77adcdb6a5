"""The in-memory code graph the focus algorithms work on.

Pure data: the code indexer (``coderooms.index``) builds a :class:`CodeGraph` from
``index.db``; everything in ``coderooms.focus`` reads it and never touches a file.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from itertools import compress
from typing import Literal, cast, overload

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
class EdgeColumns:
    """Edges as four parallel columns, in edge order: what ranking reads of every edge,
    without an object per edge."""

    src: Sequence[str]
    dst: Sequence[str]
    kind: Sequence[str]
    weight: Sequence[float]

    @classmethod
    def of(cls, edges: Sequence[CodeEdge]) -> EdgeColumns:
        """The columns of ``edges``: made once by a :class:`DeferredEdges` that was given
        them, else read off the edges."""
        if isinstance(edges, DeferredEdges):
            return edges.columns()
        return cls(
            tuple(e.src for e in edges),
            tuple(e.dst for e in edges),
            tuple(e.kind for e in edges),
            tuple(e.weight for e in edges),
        )


@dataclass(frozen=True, slots=True)
class EdgePatch:
    """How a graph's edges follow from an earlier graph's (``before``): the earlier
    edges but those at the positions ``dropped``, in their order, with the ``added``
    edges at the positions ``landed`` (ascending) of the result. A ranking index of the
    earlier graph derives what it reads of the edges from this instead of reading them
    all."""

    dropped: Sequence[int]
    landed: Sequence[int]
    added: EdgeColumns
    before: Sequence[CodeEdge] | None = None


class DeferredEdges(Sequence[CodeEdge]):
    """Edges made by ``make`` when first read, then kept: a graph loaded only to rank
    from a kept index (which holds the transition matrix) never builds its edges. Equal
    to any sequence of the same edges. With ``columns``, the same edges as columns (see
    :class:`EdgeColumns`), which a new ranking index reads instead of the edges. With
    ``patch``, how they follow from an earlier graph's (see :class:`EdgePatch`)."""

    def __init__(
        self,
        make: Callable[[], Sequence[CodeEdge]],
        columns: Callable[[], EdgeColumns] | None = None,
        patch: EdgePatch | None = None,
    ) -> None:
        self.patch = patch
        self._make: Callable[[], Sequence[CodeEdge]] | None = make
        self._edges: tuple[CodeEdge, ...] = ()
        self._make_columns = columns
        self._columns: EdgeColumns | None = None

    def columns(self) -> EdgeColumns:
        if self._columns is None:
            if self._make_columns is not None and self._make is not None:
                self._columns = self._make_columns()
            else:
                self._columns = EdgeColumns.of(self._all())
            self._make_columns = None
        return self._columns

    def _all(self) -> tuple[CodeEdge, ...]:
        if self._make is not None:
            self._edges = tuple(self._make())
            self._make = None
        return self._edges

    @overload
    def __getitem__(self, at: int) -> CodeEdge: ...
    @overload
    def __getitem__(self, at: slice) -> Sequence[CodeEdge]: ...
    def __getitem__(self, at: int | slice) -> CodeEdge | Sequence[CodeEdge]:
        return self._all()[at]

    def __len__(self) -> int:
        return len(self._all())

    def __iter__(self) -> Iterator[CodeEdge]:
        return iter(self._all())

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Sequence) and self._all() == tuple(other)

    def __hash__(self) -> int:
        return hash(self._all())

    def __repr__(self) -> str:
        return f"DeferredEdges({self._all()!r})"


@dataclass(frozen=True, slots=True)
class FileSignals:
    """Git signals for one file; zeros when the repository has no git history."""

    path: str
    commit_count: int = 0
    last_change: int = 0  # unix seconds of the newest commit touching the file


@dataclass(frozen=True, slots=True)
class TakenNodes:
    """Which nodes a :class:`NodeTable` took as they were from an earlier one (``before``,
    held weakly: the new table keeps no earlier graph alive): per run (its place here,
    its place there, its length), the nodes here at ``place .. place + length`` are the
    very nodes there from its place on. A ranking index built on one over the earlier
    table carries those rows over without a lookup per id."""

    before: Callable[[], NodeTable | None]
    runs: tuple[tuple[int, int, int], ...]


class NodeTable(Sequence[CodeNode]):
    """Nodes made by ``make`` from their position when first read, then kept: a graph
    loaded to rank from a kept index (which holds what ranking reads of every node) makes
    only the few hundred nodes an answer names. ``ids`` and ``kinds`` are the nodes' ids
    and kinds in order, known without making a node; ``made`` may hand over nodes made
    already (None where not). Equal to any sequence of the same nodes."""

    def __init__(
        self,
        ids: Sequence[str],
        kinds: Sequence[str],
        make: Callable[[int], CodeNode],
        made: list[CodeNode | None] | None = None,
    ) -> None:
        if len(ids) != len(kinds) or (made is not None and len(made) != len(ids)):
            raise ValueError("a node table needs one kind (and one made node) per id")
        self.ids = ids
        self.kinds = kinds
        self.taken: TakenNodes | None = None  # set by the builder of an edit's graph
        self._make = make
        self._made: list[CodeNode | None] = made if made is not None else [None] * len(ids)

    def _node(self, at: int) -> CodeNode:
        node = self._made[at]
        if node is None:
            node = self._made[at] = self._make(at)
        return node

    @overload
    def __getitem__(self, at: int) -> CodeNode: ...
    @overload
    def __getitem__(self, at: slice) -> Sequence[CodeNode]: ...
    def __getitem__(self, at: int | slice) -> CodeNode | Sequence[CodeNode]:
        if isinstance(at, slice):
            made = self._made[at]
            if all(made):  # made already (a node is always true): no call per node
                return tuple(cast(list[CodeNode], made))
            return tuple(self._node(i) for i in range(*at.indices(len(self._made))))
        if at < 0:
            at += len(self._made)
        if not 0 <= at < len(self._made):
            raise IndexError("node table index out of range")
        return self._node(at)

    def __len__(self) -> int:
        return len(self._made)

    def picked(self, order: Sequence[int]) -> tuple[CodeNode, ...]:
        """The nodes at the positions ``order`` gives, in that order (each made if it was
        not): what indexing every one of them would give, without checking each place.
        The nodes made already are picked in one step (a node is always true)."""
        if len(order) < 2:
            return tuple(map(self._node, order))
        made = operator.itemgetter(*order)(self._made)
        if all(made):
            return cast(tuple[CodeNode, ...], made)
        picked = list(made)
        for at in compress(range(len(picked)), map(operator.not_, picked)):  # not made yet
            picked[at] = self._node(order[at])
        return tuple(picked)

    def __iter__(self) -> Iterator[CodeNode]:
        return map(self._node, range(len(self._made)))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Sequence) and tuple(self) == tuple(other)

    def __hash__(self) -> int:
        return hash(tuple(self))

    def __repr__(self) -> str:
        return f"NodeTable({tuple(self)!r})"


@dataclass(frozen=True, slots=True)
class CodeGraph:
    nodes: Sequence[CodeNode]  # a tuple, or nodes made when first read (NodeTable)
    edges: Sequence[CodeEdge]  # a tuple, or edges made when first read (DeferredEdges)
    signals: tuple[FileSignals, ...] = ()
    co_changes: tuple[tuple[str, str, int], ...] = ()  # (path_a, path_b, commits together)
    head_time: int = 0  # unix seconds of HEAD (0 without git): the "now" for recency
    _at: dict[str, int] = field(default_factory=dict, compare=False, repr=False)

    def _where(self) -> dict[str, int]:
        """Id to its place in :attr:`nodes`, made when first asked for (a graph made for
        an edit's ranking index may never be asked)."""
        if not self._at and len(self.nodes):
            ids = self.ids()
            self._at.update(zip(ids, range(len(ids)), strict=True))  # a repeated id: its last
        return self._at

    def node(self, node_id: str) -> CodeNode | None:
        at = self._where().get(node_id)
        return None if at is None else self.nodes[at]

    def at(self, node_id: str) -> int | None:
        """Where the node of ``node_id`` is in :attr:`nodes`, or None."""
        return self._where().get(node_id)

    def at_each(self, node_ids: Iterable[str]) -> list[int | None]:
        """:meth:`at` of each of ``node_ids``, in order (in one pass over them)."""
        return list(map(self._where().get, node_ids))

    def ids(self) -> Sequence[str]:
        """The nodes' ids, in order (without making the nodes of a :class:`NodeTable`)."""
        if isinstance(self.nodes, NodeTable):
            return self.nodes.ids
        return tuple(n.id for n in self.nodes)

    def file_paths(self) -> list[str]:
        """The paths of the file nodes, in order (a file node's id is its path)."""
        if isinstance(self.nodes, NodeTable):
            table = self.nodes
            return list(compress(table.ids, map("file".__eq__, table.kinds)))
        return [n.path for n in self.nodes if n.kind == "file"]
