"""Property: through the whole path an edit takes in one workspace (re-index, the graph
patched from the one before, the engine built on the previous one), what the engine
holds after any series of edits equals, bit for bit, what a cold index and a cold engine
of the same tree hold, and both answer alike; a new process patching the graph from the
cache and its delta, and the engine from the built index kept for the cache's generation,
holds the same."""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path
from unittest import mock

from fixture_repo import assert_same_built
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from coderooms import embeddings, tokens
from coderooms.focus import salience
from coderooms.focus.graph import CodeGraph, EdgeColumns
from coderooms.focus.lexical import TermColumns
from coderooms.focus.runtime import FocusEngine
from coderooms.workspace import Workspace

NAMES = ("alpha", "beta", "gamma")
PATHS = ("pkg/__init__.py", "pkg/one.py", "pkg/two.py", "other/three.py", "tests/test_one.py")
GOALS = ("alpha returns the wrong value", "Base.run calls beta", "pkg/two.py gamma")


@st.composite
def module_text(draw: st.DrawFn) -> str:
    """A small module: imports, definitions and calls between them (edges in and out)."""
    lines = []
    for target in draw(
        st.lists(st.sampled_from(["pkg.one", "pkg.two", "other.three"]), max_size=2)
    ):
        lines.append(f"from {target} import {draw(st.sampled_from(NAMES))}")
    for name in draw(st.lists(st.sampled_from(NAMES), max_size=3)):
        called = draw(st.sampled_from(NAMES))
        lines.append(f"\n\ndef {name}():\n    return {called}()")
    if draw(st.booleans()):
        called = draw(st.sampled_from(NAMES))
        lines.append(f"\n\nclass Base:\n    def run(self):\n        return {called}()")
    return "\n".join(lines) + "\n"


def _write(root: Path, path: str, text: str | None) -> None:
    target = root / path
    if text is None:
        target.unlink(missing_ok=True)
        return
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text, encoding="utf-8")


def _answers(engine: FocusEngine) -> list[str]:
    return [json.dumps([engine.focus(g, 300).to_json(), engine.seek(g).to_json()]) for g in GOALS]


def _same_graph(mine: CodeGraph, theirs: CodeGraph) -> None:
    assert mine.nodes == theirs.nodes
    assert EdgeColumns.of(mine.edges) == EdgeColumns.of(theirs.edges)


def _same_columns(engine: FocusEngine) -> None:
    """The BM25 term columns the engine's index holds (carried from the index before,
    made whole, or not made yet) equal those made whole from its documents."""
    for bm25 in (engine.index.file_bm25, engine.index.symbol_bm25):
        columns, whole = bm25.columns(), TermColumns.whole(bm25.documents)
        for at in range(len(bm25.documents.terms)):
            mine, theirs = columns.column(at), whole.column(at)
            assert [part.tolist() for part in mine] == [part.tolist() for part in theirs]


def _cold(root: Path, scratch: Path) -> tuple[Workspace, FocusEngine]:
    """A copy of ``root`` indexed and its engine built from nothing."""
    if scratch.exists():
        shutil.rmtree(scratch)
    shutil.copytree(root, scratch, ignore=shutil.ignore_patterns(".coderooms"))
    cold = Workspace.open(scratch)
    cold.index(workers=1)
    engine = FocusEngine.from_reader(cold.graph(), cold, tokens.count_tokens, embeddings.embed)
    return cold, engine


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    start=st.lists(st.tuples(st.sampled_from(PATHS), module_text()), min_size=2, max_size=4),
    steps=st.lists(
        st.tuples(st.sampled_from(PATHS), st.one_of(st.none(), module_text())),
        min_size=1,
        max_size=3,
    ),
)
def test_after_any_edits_the_engine_is_bit_for_bit_a_cold_build(
    start: list[tuple[str, str]], steps: list[tuple[str, str | None]]
) -> None:
    # Every edit carries the transition matrix's untouched rows, however many it touched.
    with tempfile.TemporaryDirectory() as tmp, mock.patch.object(salience, "MAX_TOUCHED_SHARE", 1):
        root = Path(tmp) / "repo"
        for path, text in start:
            _write(root, path, text)
        ws = Workspace.open(root)
        ws.index(workers=1)
        ws.focus_engine()
        for path, text in steps:
            _write(root, path, text)
            # Indexed outright: refresh's stamp may miss a file removed and written back
            # within one tick of the file system's clock (its directory's time unmoved).
            ws.index(workers=1)
            engine = ws.focus_engine()
            cold, fresh = _cold(root, Path(tmp) / "cold")
            _same_graph(ws.graph(), cold.graph())
            _same_columns(engine)
            assert_same_built(engine.index.built(), fresh.index.built())
            assert _answers(engine) == _answers(fresh)
            _same_columns(engine)
            # A new process: the graph from graph.cache and graph.delta, the engine from
            # the built index kept for the cached generation, patched by row.
            elsewhere = Workspace.open(root)
            _same_graph(elsewhere.graph(), cold.graph())
            restored = elsewhere.focus_engine()
            assert _answers(restored) == _answers(fresh)
            _same_columns(restored)  # after the answers: the columns they made or carried
            assert_same_built(restored.index.built(), fresh.index.built())
            elsewhere.close()
            cold.close()
        ws.close()


def test_an_edit_inside_functions_keeps_the_row_tables_and_equals_a_cold_build(
    tmp_path: Path,
) -> None:
    """An edit that leaves every id and kind in place (a body changed, a comment added)
    gives the next index the previous one's row tables; one that adds a function does
    not; both hold what a cold build holds."""
    root = tmp_path / "repo"
    _write(root, "pkg/one.py", "def alpha():\n    return beta()\n\n\ndef beta():\n    return 1\n")
    _write(root, "pkg/two.py", "from pkg.one import alpha\n\n\ndef gamma():\n    return alpha()\n")
    ws = Workspace.open(root)
    ws.index(workers=1)
    before = ws.focus_engine()
    steps = (
        ("def alpha():\n    return beta() + 1  # body only\n\n\ndef beta():\n    return 2\n", True),
        ("def alpha():\n    return beta()\n\n\ndef beta():\n    return 1\n\n\ndef delta():\n"
         "    return alpha()\n", False),
    )  # fmt: skip
    for text, kept in steps:
        _write(root, "pkg/one.py", text)
        ws.index(workers=1)
        engine = ws.focus_engine()
        assert engine is not before
        shared = (engine.index.position, engine.index.file_rows, engine.index.file_row_of)
        old = (before.index.position, before.index.file_rows, before.index.file_row_of)
        assert all(a is b for a, b in zip(shared, old, strict=True)) is kept
        cold, fresh = _cold(root, tmp_path / "cold")
        assert_same_built(engine.index.built(), fresh.index.built())
        assert engine.index.position == fresh.index.position
        assert list(engine.index.file_row_of) == list(fresh.index.file_row_of)
        assert _answers(engine) == _answers(fresh)
        cold.close()
        before = engine
    ws.close()
