"""A new process trusts the stamp the last indexing run kept, and only that run's."""

from __future__ import annotations

import shutil
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

from coderooms.index import indexer
from coderooms.workspace import STAMP_FILE, Workspace

FILES = {"pkg/__init__.py": "", "pkg/a.py": "def alpha():\n    return 1\n"}


def _indexed(make_repo: Callable[..., Path]) -> Path:
    root = make_repo(FILES)
    with Workspace.open(root) as ws:
        ws.index(workers=1)
    assert (root / ".coderooms" / STAMP_FILE).is_file()
    return root


def _no_indexer(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*_: object, **__: object) -> None:
        raise AssertionError("the indexer ran")

    monkeypatch.setattr(indexer, "run", refuse)
    monkeypatch.setattr(indexer, "update", refuse)  # what refresh runs


def test_a_new_process_over_an_unchanged_index_runs_no_indexer(
    make_repo: Callable[..., Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _indexed(make_repo)
    _no_indexer(monkeypatch)
    with Workspace.open(root) as ws:
        assert ws.refresh() is False
        assert "def alpha" in ws.focus("alpha").context()


def test_an_edit_made_between_two_processes_is_seen(make_repo: Callable[..., Path]) -> None:
    root = _indexed(make_repo)
    (root / "pkg/a.py").write_text("def beta():\n    return 2\n")
    with Workspace.open(root) as ws:
        assert ws.refresh() is True
        assert "def beta" in ws.focus("beta").context()
    with Workspace.open(root) as ws:  # and the run kept the stamp of the new index
        assert ws.refresh() is False


def test_a_stamp_of_another_index_generation_is_not_trusted(
    make_repo: Callable[..., Path],
) -> None:
    root = _indexed(make_repo)
    with sqlite3.connect(root / ".coderooms" / "index.db") as conn:
        conn.execute("UPDATE meta SET value = 'another' WHERE key = 'generation'")
    conn.close()
    with Workspace.open(root) as ws:
        assert ws.refresh() is True


@pytest.mark.parametrize("content", [b"", b"\x00garbage", b"\xe3\x00\x00\x00\x00"])
def test_a_damaged_stamp_is_ignored(make_repo: Callable[..., Path], content: bytes) -> None:
    root = _indexed(make_repo)
    (root / ".coderooms" / STAMP_FILE).write_bytes(content)
    with Workspace.open(root) as ws:
        assert ws.refresh() is True
    with Workspace.open(root) as ws:
        assert ws.refresh() is False


def test_a_copied_repository_checks_its_own_files(
    make_repo: Callable[..., Path], tmp_path: Path
) -> None:
    root = _indexed(make_repo)
    copy = tmp_path / "copy"
    shutil.copytree(root, copy, copy_function=shutil.copy2)  # the stamp names the original
    (copy / "pkg/a.py").write_text("def gamma():\n    return 3\n")
    with Workspace.open(copy) as ws:
        assert ws.refresh() is True
        assert "def gamma" in ws.focus("gamma").context()
