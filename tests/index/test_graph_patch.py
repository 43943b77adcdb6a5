"""After an indexing run, the graph is the graph before it with the files the run
changed read again: equal, row for row and node for node, to one read whole."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import pytest

from coderooms import workspace
from coderooms.focus.graph import CodeGraph, EdgeColumns, NodeTable
from coderooms.index import db
from coderooms.workspace import GRAPH_CACHE_FILE, Workspace, _build_graph, _graph_rows

_T = TypeVar("_T")

BASE = {
    "shop/__init__.py": "",
    "shop/cart.py": (
        "class Cart:\n    def __init__(self):\n        self.items = []\n\n"
        "    def add_item(self, sku, quantity):\n        self.items.append((sku, quantity))\n"
    ),
    "shop/pricing.py": (
        "from shop.cart import Cart\n\n\ndef price_of(cart):\n"
        "    return sum(q for _, q in cart.items)\n"
    ),
    "shop/shipping.py": "def route_parcel(weight):\n    return weight > 10\n",
    "tests/test_cart.py": "from shop.cart import Cart\n\n\ndef test_add():\n    Cart().add_item('a', 1)\n",
}
EDITS: dict[str, Callable[[Path], None]] = {
    "body rewritten": lambda root: (root / "shop/shipping.py").write_text(
        "def route_parcel(weight):\n    return weight > 20\n"
    ),
    "name others call added": lambda root: (root / "shop/cart.py").write_text(
        BASE["shop/cart.py"] + "\n\ndef total(cart):\n    return len(cart.items)\n"
    ),
    "call to another file added": lambda root: (root / "shop/shipping.py").write_text(
        "from shop.pricing import price_of\n\n\ndef route_parcel(weight, cart):\n"
        "    return price_of(cart) > weight\n"
    ),
    "file deleted": lambda root: (root / "shop/pricing.py").unlink(),
    "file added": lambda root: (root / "shop/stock.py").write_text(
        "from shop.cart import Cart\n\n\ndef restock(cart: Cart):\n    cart.add_item('x', 2)\n"
    ),
}


def _whole(ws: Workspace) -> CodeGraph:
    with ws._reading() as conn:
        return _build_graph(_graph_rows(conn))


def _read_then_indexed(make_repo: Callable[..., Path], *edits: str) -> tuple[Path, Workspace]:
    """A repository indexed and its graph read, then indexed again after each edit."""
    root = make_repo(BASE)
    ws = Workspace.open(root)
    ws.index()
    ws.graph()
    for edit in edits:
        EDITS[edit](root)
        ws.index()
    return root, ws


def _edited(
    make_repo: Callable[..., Path], edit: str, first: Callable[[Workspace], _T]
) -> tuple[Path, Workspace, _T, db.GenerationDelta]:
    """A repository indexed, what ``first`` makes of its workspace then, and the index
    after ``edit``, with the delta of that run."""
    root = make_repo(BASE)
    ws = Workspace.open(root)
    ws.index()
    made = first(ws)
    EDITS[edit](root)
    ws.index()
    with ws._reading() as conn:
        delta = db.GenerationDelta.read(conn)
    assert delta is not None
    return root, ws, made, delta


def _not_read_whole(*_: object) -> None:
    raise AssertionError("the graph was read whole")


def _same(mine: CodeGraph, theirs: CodeGraph) -> None:
    assert mine.nodes == theirs.nodes
    assert EdgeColumns.of(mine.edges) == EdgeColumns.of(theirs.edges)
    assert tuple(mine.edges) == tuple(theirs.edges)
    assert (mine.signals, mine.co_changes, mine.head_time) == (
        theirs.signals,
        theirs.co_changes,
        theirs.head_time,
    )


@pytest.mark.parametrize("edit", sorted(EDITS))
@pytest.mark.parametrize("process", ["same process", "new process"])
def test_the_graph_after_a_run_patched_from_the_one_before_equals_the_graph_read_whole(
    make_repo: Callable[..., Path], edit: str, process: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    root, ws, before, delta = _edited(make_repo, edit, Workspace.graph)
    assert delta.paths  # what the patch reads again
    reader = ws if process == "same process" else Workspace.open(root)
    whole = _whole(ws)
    with monkeypatch.context() as patched:
        patched.setattr(workspace, "_graph_rows", _not_read_whole)
        after = reader.graph()
    _same(after, whole)
    assert after != before
    kept = {n.id: n for n in before.nodes}
    if process == "same process":  # nodes of files the run did not touch are taken over
        untouched = [n for n in after.nodes if n.path not in delta.paths]
        assert untouched and all(kept[n.id] is n for n in untouched)
        # and the graph says which: runs of the very nodes of the graph before.
        assert isinstance(after.nodes, NodeTable) and after.nodes.taken is not None
        assert after.nodes.taken.before() is before.nodes
        carried = {
            here + k: there + k for here, there, n in after.nodes.taken.runs for k in range(n)
        }
        assert sorted(carried) == [
            i for i, n in enumerate(after.nodes) if n.path not in delta.paths
        ]
        assert all(after.nodes[i] is before.nodes[j] for i, j in carried.items())


@pytest.mark.parametrize("edit", sorted(EDITS))
def test_an_index_built_on_the_one_before_carries_the_rows_the_graph_took(
    make_repo: Callable[..., Path], edit: str
) -> None:
    """Each row of a node the graph took as it was is carried over from the index before
    (as looking its id up there gives), without a lookup; the edited files' rows are not."""
    _, ws, first, delta = _edited(make_repo, edit, Workspace.focus_engine)
    second = ws.focus_engine()
    carried = second.index._taken_rows(first.index)
    assert carried is not None
    for row, node in enumerate(second.index.nodes):
        looked_up = first.index.position.get(node.id, -1)
        assert int(carried[row]) == (-1 if node.path in delta.paths else looked_up)


def test_a_delta_that_does_not_follow_the_kept_graph_is_not_patched_from(
    make_repo: Callable[..., Path],
) -> None:
    root, ws = _read_then_indexed(make_repo, "body rewritten", "file added")
    # two runs: the kept graph is two generations old
    _same(Workspace.open(root).graph(), _whole(ws))
    _same(ws.graph(), _whole(ws))


def test_a_delta_that_is_not_one_reads_the_graph_whole(make_repo: Callable[..., Path]) -> None:
    root, ws = _read_then_indexed(make_repo, "file added")
    with ws._reading() as conn:
        db.set_meta(conn, db.DELTA_KEY, "[1, 2")
        assert db.GenerationDelta.read(conn) is None
    (root / ".coderooms" / GRAPH_CACHE_FILE).unlink()
    _same(ws.graph(), _whole(ws))


@pytest.mark.parametrize("count", [0, 1, 2, workspace.MAX_SCANNED_ORIGINS + 1])
def test_the_edges_of_the_changed_files_are_found_by_scan_or_by_lookup_alike(
    count: int,
) -> None:
    origins = ("a.py", "b.py", "a.py", "c.py", "d.py", "b.py", "a.py", "e.py") * 3
    paths = frozenset(["a.py", "b.py", "d.py", "e.py", "z.py"][:count])
    assert workspace._made_by(origins, paths) == [
        at for at, origin in enumerate(origins) if origin in paths
    ]
