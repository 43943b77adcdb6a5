"""A small file nested far too deeply for tree-sitter's queries (whose time grows with
the square of nesting depth) is skipped with a counted reason, and fast."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

from index_fixtures import write_files

from coderooms.index.extract import NESTING_WORK_CAP, nesting_work

CODEROOMS = str(Path(sys.executable).parent / "coderooms")
DEPTH = 64 * 1024
INDEX_BOUND_S = 60.0
"""A generous bound: the repository below indexes in about a second; before nesting was
bounded, its deep file alone kept tree-sitter busy for minutes."""


def test_a_deeply_nested_file_is_skipped_with_its_reason_and_the_rest_indexed(
    tmp_path: Path,
) -> None:
    root = tmp_path / "repo"
    write_files(
        root,
        {
            "pkg/deep.py": "x = " + "f(" * DEPTH + ")" * DEPTH + "\n",
            "web/deep.js": "const x = " + "[\n" * DEPTH + "]\n" * DEPTH + ";\n",
            "pkg/ok.py": "def fine(value):\n    return [value, (value, {value: 1})]\n",
        },
    )
    started = time.monotonic()
    done = subprocess.run(
        [CODEROOMS, "index", str(root), "--json"],
        capture_output=True,
        text=True,
        timeout=INDEX_BOUND_S * 2,
    )
    elapsed = time.monotonic() - started
    assert done.returncode == 0, done.stderr
    assert elapsed < INDEX_BOUND_S
    summary = json.loads(done.stdout)
    assert summary["skipped"].get("too_deeply_nested") == 2
    assert summary["parsed_files"] == 1 and summary["symbols"] >= 1
    lines = subprocess.run(
        [CODEROOMS, "index", str(root)], capture_output=True, text=True, timeout=120
    )
    assert "too_deeply_nested 2" in lines.stdout + lines.stderr


def test_nesting_work_sums_the_depth_each_bracket_opens() -> None:
    assert nesting_work(b"f(a)") <= NESTING_WORK_CAP
    flat = b"f(a)\n" * 200_000  # many brackets, none nested
    assert nesting_work(flat) == 200_000
    deep = b"[" * 5000 + b"]" * 5000
    assert nesting_work(deep) == 5000 * 5001 // 2 > NESTING_WORK_CAP
    # closing brackets that open nothing (say in a string) do not hide what follows
    assert nesting_work(b")" * 5000 + deep) == nesting_work(deep)
