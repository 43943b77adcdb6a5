"""Property: whatever sequence of edits, adds and deletes, an incremental index equals a
cold index of the same tree."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from index_fixtures import cold_dump, dump, write_files

from coderooms.workspace import Workspace

NAMES = ("alpha", "beta", "gamma")
PATHS = ("pkg/__init__.py", "pkg/one.py", "pkg/two.py", "other/three.py", "tests/test_one.py")


@st.composite
def module_text(draw: st.DrawFn) -> str:
    """A small module: some imports, some definitions, calls between them."""
    lines = []
    for target in draw(
        st.lists(st.sampled_from(["pkg.one", "pkg.two", "other.three", "pkg"]), max_size=2)
    ):
        name = draw(st.sampled_from(NAMES))
        lines.append(f"from {target} import {name}")
    if draw(st.booleans()):
        lines.append("from pkg import one")
    for name in draw(st.lists(st.sampled_from(NAMES), max_size=3)):
        called = draw(st.sampled_from(NAMES))
        lines.append(f"\n\ndef {name}():\n    return {called}()")
    if draw(st.booleans()):
        base = draw(st.sampled_from(["Base", "one.Base", "object"]))
        lines.append(
            f"\n\nclass Base({base}):\n    def run(self):\n        return self.{draw(st.sampled_from(NAMES))}()"
        )
    if draw(st.booleans()):
        lines.append("\n\ndef test_it():\n    return alpha() or one.beta()")
    return "\n".join(lines) + "\n"


step = st.tuples(st.sampled_from(PATHS), st.one_of(st.none(), module_text()))


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    start=st.lists(st.tuples(st.sampled_from(PATHS), module_text()), min_size=1, max_size=4),
    steps=st.lists(step, min_size=1, max_size=3),
)
def test_incremental_equals_cold(
    start: list[tuple[str, str]], steps: list[tuple[str, str | None]]
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        scratch = Path(tmp)
        root = scratch / "repo"
        root.mkdir()
        copies = scratch / "copies"
        copies.mkdir()
        write_files(root, dict(start))
        ws = Workspace.open(root)
        ws.index(workers=1)
        for path, content in steps:
            if content is None:
                (root / path).unlink(missing_ok=True)
            else:
                write_files(root, {path: content})
            ws.index(workers=1)
            assert dump(root) == cold_dump(root, copies)
        ws.close()
        shutil.rmtree(root)
