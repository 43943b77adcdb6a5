"""A cold build commits without copying its write-ahead log into index.db on the way:
a thread of its own copies it (see :func:`coderooms.index.db.commit_checkpointing_aside`)."""

from __future__ import annotations

import shutil
import sqlite3
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from coderooms.index import db
from coderooms.workspace import Workspace

JOIN_S = 30.0  # far past a checkpoint of a few MB: a thread still alive then is stuck
ROWS = 20_000  # enough rows for several MB of log
SLOW_CHECKPOINT_S = 0.5  # far longer than the rest of a tiny cold index takes


def _rows_in_file_alone(path: Path, scratch: Path) -> int:
    """Rows of ``skipped`` in the database file ``path`` without its log (copied alone)."""
    copy = scratch / "alone.db"
    shutil.copyfile(path, copy)
    conn = sqlite3.connect(copy)
    try:
        tables = {name for (name,) in conn.execute("SELECT name FROM sqlite_master")}
        if "skipped" not in tables:
            return 0
        (count,) = conn.execute("SELECT COUNT(*) FROM skipped").fetchone()
        return int(count)
    finally:
        conn.close()


def test_the_log_is_copied_aside_and_later_commits_checkpoint_again(tmp_path: Path) -> None:
    path = tmp_path / "index.db"
    conn = db.connect(str(path))
    conn.execute("BEGIN IMMEDIATE")
    conn.executemany(
        "INSERT INTO skipped VALUES (?, ?, ?, ?)", [(f"f{i}", "binary", i, i) for i in range(ROWS)]
    )
    thread = db.commit_checkpointing_aside(conn)
    thread.join(JOIN_S)
    assert not thread.is_alive()
    # Committed, and copied out of the log: the database file alone holds every row.
    assert conn.execute("SELECT COUNT(*) FROM skipped").fetchone() == (ROWS,)
    assert _rows_in_file_alone(path, tmp_path) == ROWS
    # The connection checkpoints its own commits again, as SQLite does by default.
    assert conn.execute("PRAGMA wal_autocheckpoint").fetchone() == (db.WAL_AUTOCHECKPOINT_PAGES,)
    conn.close()


def test_a_cold_index_is_in_index_db_once_its_checkpoint_is_done(
    make_repo: Callable[..., Path],
) -> None:
    root = make_repo({f"pkg/mod{i}.py": f"def f{i}():\n    return {i}\n" for i in range(8)})
    ws = Workspace.open(root)
    summary = ws.index(workers=1)
    for thread in threading.enumerate():
        if thread.name == "coderooms-checkpoint":
            thread.join(JOIN_S)
            assert not thread.is_alive()
    copy = root / "copy"
    copy.mkdir()
    shutil.copyfile(root / ".coderooms" / "index.db", copy / "index.db")
    conn = sqlite3.connect(copy / "index.db")
    (files,) = conn.execute("SELECT COUNT(*) FROM files").fetchone()
    conn.close()
    assert files == summary.files == 8
    ws.close()


def test_closing_the_workspace_waits_for_its_checkpoint(
    make_repo: Callable[..., Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    # A slow checkpoint (its connection waits): a copy or delete of the index right after
    # the close must not race it removing index.db-wal.
    connect = sqlite3.connect

    def slow(*args: Any, **kwargs: Any) -> sqlite3.Connection:
        if threading.current_thread().name == "coderooms-checkpoint":
            time.sleep(SLOW_CHECKPOINT_S)
        return connect(*args, **kwargs)

    monkeypatch.setattr(sqlite3, "connect", slow)
    root = make_repo({"pkg/a.py": "def alpha():\n    return 1\n"})
    with Workspace.open(root) as ws:
        ws.index(workers=1)
    assert not [t for t in threading.enumerate() if t.name == "coderooms-checkpoint"]
    assert not (root / ".coderooms" / "index.db-wal").exists()
    shutil.copytree(root, root.parent / "copy")  # what raced before


SLOW_START_S = 0.3  # long enough for a waiter to reach the thread before it starts


def test_a_waiter_never_joins_a_checkpoint_that_has_not_started(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Two workspaces on one index in one process: the one closing first waits for the
    # other's checkpoint, which may be between being listed and being started.
    starting = threading.Event()

    class SlowStart(threading.Thread):
        def start(self) -> None:
            if self.name == "coderooms-checkpoint":
                starting.set()
                time.sleep(SLOW_START_S)
            super().start()

    monkeypatch.setattr(db.threading, "Thread", SlowStart)
    path = tmp_path / "index.db"
    conn = db.connect(str(path))
    conn.execute("BEGIN IMMEDIATE")
    conn.execute("INSERT INTO skipped VALUES ('f', 'binary', 1, 1)")
    committer = threading.Thread(target=db.commit_checkpointing_aside, args=(conn,))
    committer.start()
    assert starting.wait(JOIN_S)
    db.wait_for_checkpoints(str(path))  # raised "cannot join thread before it is started"
    committer.join(JOIN_S)
    conn.close()
