"""Index runs that race, wait on a lock, or meet odd directories, files and names."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner
from index_fixtures import Files, cold_dump, commit_all, dump
from test_cli import cli

from coderooms.index import db, discover, indexer
from coderooms.index.errors import (
    IndexBusy,
    IndexDirectoryUnwritable,
    WorkspacePathNotUtf8,
)
from coderooms.workspace import Workspace

FILES: Files = {
    f"pkg/m{i}.py": f"from pkg.m{(i + 1) % 6} import f{(i + 1) % 6}\n\n\n"
    f"def f{i}():\n    return f{(i + 1) % 6}()\n\n\nclass C{i}:\n    def run(self):\n"
    f"        return f{i}()\n"
    for i in range(6)
}
AS_ROOT = os.geteuid() == 0


# --- two runs at once -------------------------------------------------------------------


def test_two_runs_on_a_fresh_repository_both_succeed(
    make_repo: Callable[..., Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = make_repo(FILES)
    (root / ".coderooms").mkdir()
    conn = db.connect(str(root / ".coderooms" / "index.db"))  # an empty, migrated index
    # Both runs list the files while this connection holds the write lock, then wait
    # for it: the one that gets it second must see the first one's work.
    conn.execute("BEGIN IMMEDIATE")
    listed = threading.Barrier(3)
    list_files = indexer.list_files

    def listing_then_meet(path: str) -> discover.Listing:
        found = list_files(path)
        listed.wait(timeout=10)
        return found

    monkeypatch.setattr(indexer, "list_files", listing_then_meet)
    errors: list[BaseException] = []

    def one_run() -> None:
        try:
            with Workspace.open(root) as ws:
                ws.index(workers=1)
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=one_run) for _ in range(2)]
    for t in threads:
        t.start()
    listed.wait(timeout=10)
    time.sleep(0.3)  # both are now waiting for the lock
    conn.execute("COMMIT")
    conn.close()
    for t in threads:
        t.join(timeout=60)
    monkeypatch.undo()
    assert errors == []
    assert dump(root) == cold_dump(root, tmp_path)
    with Workspace.open(root) as ws:
        assert ws.index(workers=1).changed["parsed"] == 0


def test_a_held_write_lock_is_busy_not_damage(
    make_repo: Callable[..., Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    root = make_repo(FILES)
    Workspace.open(root).index(workers=1)
    monkeypatch.setattr(db, "SQLITE_TIMEOUT_SECONDS", 0.1)
    path = str(root / ".coderooms" / "index.db")
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        with pytest.raises(IndexBusy) as err:
            Workspace.open(root).index(workers=1)
        assert err.value.path == path
        assert "another process is writing" in str(err.value)
        assert "delete" not in str(err.value)
        result = CliRunner().invoke(cli(), ["index", str(root)])
        assert result.exit_code == 1
        assert result.output.startswith("error: another process is writing the index")
        assert result.output.count("\n") == 1
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert Workspace.open(root).index(workers=1).files == len(FILES)


# --- the index directory ----------------------------------------------------------------


def test_index_directory_that_cannot_be_created(make_repo: Callable[..., Path]) -> None:
    root = make_repo(FILES)
    (root / ".coderooms").write_text("not a directory\n")
    with pytest.raises(IndexDirectoryUnwritable) as err:
        Workspace.open(root).index(workers=1)
    assert err.value.path == str(root / ".coderooms")
    assert "index.db" not in str(err.value) and "delete" not in str(err.value)
    result = CliRunner().invoke(cli(), ["index", str(root)])
    assert result.exit_code == 1
    assert result.output.startswith("error: cannot create or write the index directory")
    assert result.output.count("\n") == 1


def test_index_directory_permission_error_names_the_os_reason(
    make_repo: Callable[..., Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    root = make_repo(FILES)

    def denied(path: str, *args: object, **kwargs: object) -> None:
        raise PermissionError(13, "Permission denied", path)

    monkeypatch.setattr(os, "makedirs", denied)
    with pytest.raises(IndexDirectoryUnwritable) as err:
        Workspace.open(root).index(workers=1)
    assert err.value.reason == "Permission denied"
    assert not (root / ".coderooms").exists()


# --- directories and special files the walk meets ---------------------------------------


def test_fifo_is_counted_and_never_opened(make_repo: Callable[..., Path]) -> None:
    root = make_repo(FILES)
    os.mkfifo(root / "pipe.py")  # opening it for reading would block the run
    summary = Workspace.open(root).index(workers=1)
    assert summary.skipped == {"not_a_file": 1}
    assert summary.files == len(FILES)


def test_directory_git_cannot_open_is_counted(
    make_repo: Callable[..., Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    root = make_repo(FILES, use_git=True)
    run_git = discover.run_git

    def warning_git(path: str, *args: str) -> subprocess.CompletedProcess[bytes]:
        done = run_git(path, *args)
        if "ls-files" in args:  # what git prints for a mode-000 directory
            done.stderr += b"warning: could not open directory 'secret/': Permission denied\n"
        return done

    monkeypatch.setattr(discover, "run_git", warning_git)
    summary = Workspace.open(root).index(workers=1)
    assert summary.skipped == {"unreadable": 1}
    assert summary.files == len(FILES)


def test_unreadable_directory_is_counted(
    make_repo: Callable[..., Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    root = make_repo({**FILES, "secret/hidden.py": "x = 1\n"})
    scandir = os.scandir
    closed = os.fspath(root / "secret")

    def refusing(path: str) -> Iterator[os.DirEntry[str]]:
        if os.fspath(path) == closed:
            raise PermissionError(13, "Permission denied", path)
        return scandir(path)

    monkeypatch.setattr(os, "scandir", refusing)
    summary = Workspace.open(root).index(workers=1)
    assert summary.skipped == {"unreadable": 1}
    assert summary.files == len(FILES)


@pytest.mark.skipif(AS_ROOT, reason="root reads a mode-000 directory anyway")
@pytest.mark.parametrize("use_git", [False, True])
def test_mode_000_directory_is_counted(make_repo: Callable[..., Path], use_git: bool) -> None:
    root = make_repo({**FILES, "secret/hidden.py": "x = 1\n"}, use_git=use_git)
    (root / "secret").chmod(0)
    try:
        summary = Workspace.open(root).index(workers=1)
    finally:
        (root / "secret").chmod(0o755)
    assert summary.skipped.get("unreadable", 0) >= 1


# --- names that are not UTF-8 -----------------------------------------------------------


def test_root_path_that_is_not_utf8_is_refused(tmp_path: Path) -> None:
    raw = os.fsencode(tmp_path) + b"/repo\xff"
    os.mkdir(raw)
    with pytest.raises(WorkspacePathNotUtf8) as err:
        Workspace.open(os.fsdecode(raw))
    assert err.value.path.endswith("repo\\xff")
    with pytest.raises(WorkspacePathNotUtf8):
        Workspace.open(raw)  # type: ignore[arg-type]
    result = CliRunner().invoke(cli(), ["index", os.fsdecode(raw)])
    assert result.exit_code == 1
    assert result.output.startswith("error: the path ")
    assert "not valid UTF-8" in result.output and result.output.count("\n") == 1


def _make(raw: bytes, text: bytes = b"def odd():\n    pass\n") -> None:
    fd = os.open(raw, os.O_CREAT | os.O_WRONLY, 0o644)
    try:
        os.write(fd, text)
    finally:
        os.close(fd)


@pytest.mark.parametrize("use_git", [False, True])
def test_names_inside_that_are_not_utf8_are_skipped(
    make_repo: Callable[..., Path], use_git: bool
) -> None:
    root = make_repo(FILES, use_git=use_git)
    base = os.fsencode(root)
    _make(base + b"/bad\xff.py")
    os.mkdir(base + b"/dir\xfe")
    _make(base + b"/dir\xfe/inner.py")
    if use_git:
        commit_all(root, "odd names", 1_700_000_100)
    summary = Workspace.open(root).index(workers=1)
    assert summary.skipped == {"undecodable_path": 2}
    assert summary.files == len(FILES)
    assert Workspace.open(root).index(workers=1).skipped == {"undecodable_path": 2}


def test_directory_symlink_with_a_name_that_is_not_utf8(make_repo: Callable[..., Path]) -> None:
    root = make_repo(FILES)
    os.symlink(b"pkg", os.fsencode(root) + b"/link\xff")
    summary = Workspace.open(root).index(workers=1)
    assert summary.skipped == {"undecodable_path": 1}
