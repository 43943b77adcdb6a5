"""What an index built on the one before carries over equals what it would build whole:
the transition matrix with only the rows an edit touched made again, and the BM25 term
columns read through the renumbered documents with the counted ones held apart, after
edits that add, change and delete nodes, edges and documents."""

from __future__ import annotations

from pathlib import Path
from typing import Any
from unittest import mock

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from coderooms import embeddings, tokens
from coderooms.focus import lexical, salience
from coderooms.focus.carried import Feed, carried_transition, touched_rows, transition_of
from coderooms.focus.lexical import BM25, CountedBM25, DocumentCounts, TermColumns
from coderooms.focus.runtime import FocusEngine
from coderooms.workspace import Workspace

NAMES = tuple(f"n{k:02d}" for k in range(12))  # ids sort as their rows do
STRENGTHS = (0.0, 0.25, 0.5, 1.0)
Edge = tuple[str, str, float]


def _feed(ids: list[str], edges: list[Edge], pairs: list[Edge], backward: float) -> Feed:
    """The feed of a graph of ``ids`` (sorted: each id's row is its place) whose edges and
    co-change pairs name their ends by id (an id not among them: no node)."""
    row = {name: at for at, name in enumerate(ids)}

    def ends(items: list[Edge], end: int) -> np.ndarray:
        return np.asarray([row.get(item[end], -1) for item in items], dtype=np.int64)

    def weights(items: list[Edge]) -> np.ndarray:
        return np.asarray([item[2] for item in items], dtype=np.float64)

    return Feed(
        len(ids),
        ends(edges, 0),
        ends(edges, 1),
        weights(edges),
        ends(pairs, 0),
        ends(pairs, 1),
        weights(pairs),
        backward,
    )


edges_of = st.lists(
    st.tuples(st.sampled_from(NAMES), st.sampled_from(NAMES), st.sampled_from(STRENGTHS)),
    max_size=40,
)


@st.composite
def edited_graph(draw: st.DrawFn) -> tuple[Feed, Feed, np.ndarray, np.ndarray, np.ndarray]:
    """A graph and the graph after an edit: ids gone and new, edges dropped and added
    (landing anywhere among those kept), the same co-change pairs; with the renumbering
    of the rows by id and the positions of the edges dropped and landed."""
    before_ids = sorted(draw(st.sets(st.sampled_from(NAMES), min_size=1)))
    after_ids = sorted(draw(st.sets(st.sampled_from(NAMES), min_size=1)))
    old_edges = draw(edges_of)
    dropped = sorted(draw(st.sets(st.integers(0, max(len(old_edges) - 1, 0)))))
    dropped = [at for at in dropped if at < len(old_edges)]
    new_edges: list[tuple[Edge, bool]] = [
        (edge, False) for at, edge in enumerate(old_edges) if at not in dropped
    ]
    for edge in draw(edges_of):
        new_edges.insert(draw(st.integers(0, len(new_edges))), (edge, True))
    landed = [at for at, (_, added) in enumerate(new_edges) if added]
    pairs = draw(edges_of)
    backward = draw(st.sampled_from((0.6, 0.0, 1.0)))
    before = _feed(before_ids, old_edges, pairs, backward)
    after = _feed(after_ids, [edge for edge, _ in new_edges], pairs, backward)
    where = {name: at for at, name in enumerate(after_ids)}
    renumber = np.asarray([where.get(name, -1) for name in before_ids], dtype=np.int64)
    return (
        before,
        after,
        renumber,
        np.asarray(dropped, dtype=np.int64),
        np.asarray(landed, dtype=np.int64),
    )


def _same_matrix(mine: sp.csr_matrix, theirs: sp.csr_matrix) -> None:
    for part in ("data", "indices", "indptr"):
        a, b = getattr(mine, part), getattr(theirs, part)
        assert a.dtype == b.dtype and a.tobytes() == b.tobytes(), part
    assert mine.shape == theirs.shape


@settings(max_examples=300, deadline=None)
@given(edited_graph(), st.integers(1, 4))
def test_a_carried_transition_matrix_is_the_matrix_built_whole(
    edit: tuple[Feed, Feed, np.ndarray, np.ndarray, np.ndarray], times: int
) -> None:
    before, after, renumber, dropped, landed = edit
    previous = transition_of(before)
    touched = touched_rows(before, after, renumber, dropped, landed)
    carried = carried_transition(previous, renumber, touched, transition_of(after, touched))
    assert carried is not None
    _same_matrix(carried, transition_of(after))


def test_an_edit_touches_only_the_rows_of_the_edges_it_changed() -> None:
    ids = ["a", "b", "c", "d", "e"]
    edges: list[Edge] = [("a", "b", 1.0), ("c", "d", 0.5), ("d", "e", 1.0), ("b", "x", 1.0)]
    before = _feed(ids, edges, [("a", "e", 1.0)], 0.6)
    # c -> d dropped; b -> x kept, and x (no node before) is one now
    after_edges: list[Edge] = [("a", "b", 1.0), ("d", "e", 1.0), ("b", "x", 1.0)]
    after = _feed([*ids, "x"], after_edges, [("a", "e", 1.0)], 0.6)
    renumber = np.arange(5, dtype=np.int64)
    touched = touched_rows(before, after, renumber, np.asarray([1]), np.zeros(0, np.int64))
    assert touched.tolist() == [False, True, True, True, False, True]


documents_of = st.lists(
    st.dictionaries(st.sampled_from(("x", "y", "z", "w", "v", "u")), st.integers(1, 4)),
    max_size=12,
)


def _counted(documents: list[dict[str, int]], terms: dict[str, int]) -> DocumentCounts:
    """``documents`` as arrays, numbering new terms after those of ``terms`` (kept)."""
    ids: list[int] = []
    counts: list[int] = []
    ptr = [0]
    for document in documents:
        for term, count in document.items():
            ids.append(terms.setdefault(term, len(terms)))
            counts.append(count)
        ptr.append(len(ids))
    return DocumentCounts(
        tuple(f"{d}".encode() for d in range(len(documents))),
        tuple(terms),
        np.asarray(ptr, dtype=np.int64),
        np.asarray(ids, dtype=np.int64),
        np.asarray(counts, dtype=np.int64),
    )


@st.composite
def edited_documents(draw: st.DrawFn) -> list[tuple[list[dict[str, int]], list[int]]]:
    """Documents, then edits of them: each keeps some documents (in order, or once out of
    order, or one twice), drops the others and counts new ones anywhere among them; per
    document after an edit, the one before it was taken from (-1: counted anew)."""
    first = draw(documents_of)
    series: list[tuple[list[dict[str, int]], list[int]]] = [(first, [-1] * len(first))]
    for _ in range(draw(st.integers(1, 4))):
        docs = series[-1][0]
        kept = sorted(draw(st.sets(st.integers(0, max(len(docs) - 1, 0)))))
        kept = [at for at in kept if at < len(docs)]
        if kept and draw(st.booleans()):
            kept.append(kept[0])  # lent twice: the second is held apart
        if len(kept) > 1 and draw(st.booleans()):
            kept[0], kept[-1] = kept[-1], kept[0]
        entries: list[tuple[dict[str, int], int]] = [(docs[at], at) for at in kept]
        for document in draw(documents_of):
            entries.insert(draw(st.integers(0, len(entries))), (document, -1))
        series.append(([doc for doc, _ in entries], [at for _, at in entries]))
    return series


@settings(max_examples=300, deadline=None)
@given(edited_documents(), st.lists(st.sampled_from(("x", "y", "z", "w", "t")), max_size=6))
def test_carried_term_columns_are_the_columns_made_whole_and_score_alike(
    series: list[tuple[list[dict[str, int]], list[int]]], query: list[str]
) -> None:
    terms: dict[str, int] = {}
    previous: CountedBM25 | None = None
    for documents, lent in series:
        counted = _counted(documents, terms)
        handed = (previous, np.asarray(lent, dtype=np.int64)) if previous is not None else None
        bm25 = CountedBM25(counted, dict(terms), handed)
        columns, whole = bm25.columns(), TermColumns.whole(counted)
        for at in range(len(terms)):
            for mine, theirs in zip(columns.column(at), whole.column(at), strict=True):
                assert mine.tolist() == theirs.tolist()
                assert mine.dtype.kind == theirs.dtype.kind
            assert columns.frequency(at) == whole.frequency(at)
        plain = BM25.from_documents(counted)
        assert bm25.scores(query).tobytes() == plain.scores(query).tobytes()
        for term in query:
            assert bm25.document_frequency(term) == plain.document_frequency(term)
            assert bm25.documents_with(term).tolist() == plain.documents_with(term).tolist()
        previous = bm25


def test_past_the_bound_held_apart_the_columns_are_made_whole(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    terms: dict[str, int] = {}
    before = CountedBM25(_counted([{"x": 1}, {"y": 2}], terms), dict(terms))
    before.columns()
    after_docs = _counted([{"x": 1}, {"z": 1, "x": 2}], terms)
    lent = np.asarray([0, -1], dtype=np.int64)
    carried = CountedBM25(after_docs, dict(terms), (before, lent))
    assert carried.columns().to_now is not None  # carried: the counted one held apart
    monkeypatch.setattr(lexical, "MAX_HELD_ENTRIES", 1)
    whole = CountedBM25(after_docs, dict(terms), (before, lent))
    assert whole.columns().to_now is None  # made whole when first asked
    assert whole.scores(["x", "z"]).tobytes() == carried.scores(["x", "z"]).tobytes()


FILES = {
    "pkg/__init__.py": "",
    "pkg/one.py": "from pkg.two import gamma\n\n\ndef alpha():\n    return gamma()\n\n\n"
    "def beta():\n    return alpha()\n",
    "pkg/two.py": "def gamma():\n    return 1\n\n\nclass Base:\n    def run(self):\n"
    "        return gamma()\n",
    "pkg/three.py": "from pkg.one import beta\n\n\ndef delta():\n    return beta()\n",
}
EDITS: tuple[tuple[str, str | None], ...] = (
    ("pkg/one.py", FILES["pkg/one.py"] + "\n\ndef added():\n    return beta()\n"),  # a node
    ("pkg/two.py", FILES["pkg/two.py"].replace("return 1", "return 2")),  # a body
    ("pkg/one.py", FILES["pkg/one.py"].replace("def beta", "def renamed")),  # gone, new
    ("pkg/four.py", "from pkg.two import Base\n\n\ndef epsilon():\n    return Base()\n"),
    ("pkg/three.py", None),  # a file gone, and the edges into it
)


def test_every_structure_an_edit_carries_equals_the_one_built_whole(tmp_path: Path) -> None:
    """Through the workspace's edit path: each edit's index lays its rows out, renumbers
    its row tables, patches its transition matrix and follows its term columns from the
    index before (each checked to be carried), all equal to what is built from every
    row, and the engine answers as one built from nothing over the same files."""
    root = tmp_path / "repo"
    for path, text in FILES.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text, encoding="utf-8")
    ws = Workspace.open(root)
    ws.index(workers=1)
    ws.focus_engine()
    patched: list[bool] = []
    made = salience.carried_transition

    def spy(*args: Any) -> sp.csr_matrix | None:
        out = made(*args)
        patched.append(out is not None)
        return out

    with (
        mock.patch.object(salience, "MAX_TOUCHED_SHARE", 1),
        mock.patch.object(salience, "carried_transition", spy),
    ):
        for path, text in EDITS:
            if text is None:
                (root / path).unlink()
            else:
                (root / path).write_text(text, encoding="utf-8")
            ws.index(workers=1)
            index = ws.focus_engine().index
            laid = index._layout_rows
            assert laid is not None and laid.there is not None
            nodes, ids, kinds, places = salience._nodes_by_id(index.graph)
            assert (laid.nodes, tuple(laid.ids), tuple(laid.kinds)) == (nodes, ids, kinds)
            assert places is not None and laid.places is not None
            assert laid.places.tolist() == places.tolist()
            files = [row for row, kind in enumerate(kinds) if kind == "file"]
            assert index.position == {name: row for row, name in enumerate(ids)}
            assert index.file_rows == files
            assert index.symbol_rows == [
                row for row, kind in enumerate(kinds) if kind in ("class", "function", "method")
            ]
            of_path = {nodes[row].path: row for row in files}
            assert index.file_row_of.tolist() == [
                of_path.get(node.path, row) for row, node in enumerate(nodes)
            ]
            assert patched.pop() is True
            _same_matrix(index.transition, transition_of(index._feed()))
            for bm25 in (index.file_bm25, index.symbol_bm25):
                whole = TermColumns.whole(bm25.documents)
                for at in range(len(bm25.documents.terms)):
                    mine, theirs = bm25.columns().column(at), whole.column(at)
                    assert [a.tolist() for a in mine] == [b.tolist() for b in theirs]
            cold = FocusEngine.from_reader(
                ws.graph(), ws, tokens.count_tokens, embeddings.embed
            )  # built from nothing over the same graph
            for goal in ("alpha returns the wrong value", "Base.run calls gamma"):
                assert (
                    ws.focus_engine().focus(goal, 400).to_json() == cold.focus(goal, 400).to_json()
                )
                assert ws.focus_engine().seek(goal).to_json() == cold.seek(goal).to_json()
    ws.close()
