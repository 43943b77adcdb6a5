"""A very deep directory in a tree without git (issue 17): the walk keeps its own stack,
goes at most WALK_MAX_DEPTH levels down, and counts what lies below as too_deep."""

from __future__ import annotations

import inspect
import json
import os
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from coderooms.cli import main
from coderooms.index.discover import WALK_MAX_DEPTH, list_files

LEVELS = 300
"""Deeper than the walk goes, and than the stack the walk may use below (os.walk recursed
once per level). Not deeper than Python's recursion limit: pytest's clean-up removes the
tree with shutil.rmtree, which recurses too."""
STACK_ALLOWANCE = 100
"""Frames the walk may use on top of its caller's, whatever the depth of the tree."""


@pytest.fixture(scope="module")
def deep(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("deep")
    (root / "top.py").write_text("def g():\n    return 2\n")
    here = str(root)
    for level in range(1, LEVELS + 1):
        here = os.path.join(here, "d")
        os.mkdir(here)
        if level == 3:
            Path(here, "near.py").write_text("from top import g\n\ndef h():\n    return g()\n")
    Path(here, "bottom.py").write_text("def f():\n    return 1\n")
    return root


def test_the_walk_stops_at_its_depth_bound_and_counts_the_rest(deep: Path) -> None:
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(len(inspect.stack(0)) + STACK_ALLOWANCE)
    try:
        listing = list_files(str(deep))  # a walk recursing per level runs out of stack
    finally:
        sys.setrecursionlimit(limit)
    assert sorted(listing.files) == ["d/d/d/near.py", "top.py"]
    [skipped] = listing.skipped
    assert skipped.reason == "too_deep"
    assert skipped.path == "/".join(["d"] * (WALK_MAX_DEPTH + 1))


def test_every_code_command_works_on_a_deep_tree(
    deep: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(deep)
    runner = CliRunner()
    for args in (
        ["index", "--json"],
        ["focus", "h calls g", "--no-context"],
        ["seek", "h"],
        ["graph", "show", "top.py"],
        ["impact", "top.py"],
    ):
        result = runner.invoke(main, args)
        assert result.exit_code == 0, (args, result.stderr, result.exception)
        if args[0] == "index":
            assert json.loads(result.stdout)["skipped"] == {"too_deep": 1}
        if args[0] == "impact":
            assert "d/d/d/near.py" in result.stdout
