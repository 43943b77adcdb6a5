"""Another process holding the write lock: a waiting write stalls only its own caller,
reads never wait for it, a read-only file still serves reads, and a file that is refused
is left exactly as it was."""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from coderooms.rooms.records import Conversation, SessionQuery
from coderooms.rooms.session import project_session
from coderooms.store import CorruptDatabase, ReadOnlyStore, SQLiteStore, open_store
from coderooms.store import sqlite as sqlite_store
from coderooms.store.sqlite import BUSY_TIMEOUT_MS

CODEROOMS = str(Path(sys.executable).parent / "coderooms")
SETTLE_S = 0.3
"""How long the held lock is kept before anything is asserted about the waiting post."""
PROMPT_S = 2.0
"""A generous bound on an answer that must not wait for the lock (it takes milliseconds)."""


@contextmanager
def write_lock_held(path: Path) -> Iterator[None]:
    """Another connection (as another process would) holding the file's write lock."""
    other = sqlite3.connect(path, isolation_level=None, timeout=0)
    other.execute("BEGIN IMMEDIATE")
    other.execute("INSERT INTO people (id, label) VALUES ('holder', 'Holder')")
    try:
        yield
    finally:
        other.execute("ROLLBACK")
        other.close()


async def staffed(path: Path) -> None:
    with SQLiteStore(path) as store:
        await store.add_agent("ada")
        await store.post("agent:ada", "hello there")


async def test_a_post_waiting_for_the_lock_does_not_stall_the_event_loop(tmp_path: Path) -> None:
    path = tmp_path / "rooms.db"
    await staffed(path)
    with SQLiteStore(path) as store:
        with write_lock_held(path):
            post = asyncio.create_task(store.post("agent:ada", "waits for the lock"))
            ticks = 0
            loop = asyncio.get_running_loop()
            started = loop.time()
            while loop.time() - started < SETTLE_S:
                await asyncio.sleep(0.01)
                ticks += 1
            # the loop kept running while the post waited, and reads answered
            assert ticks >= 5
            page = await asyncio.wait_for(store.read_before(None, 10), PROMPT_S)
            assert [m.content for m in page.messages] == ["hello there"]
            assert [m.id for m in (await store.roster()).members] == ["ada"]
            assert not post.done()
        posted = await asyncio.wait_for(post, 30)
        assert posted.content == "waits for the lock"
        assert (await store.last_sequence()) == posted.sequence


async def test_a_write_runs_in_place_when_the_lock_is_free_and_waits_on_a_thread_when_not(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "rooms.db"
    await staffed(path)
    hops: list[object] = []
    run_sync = sqlite_store.anyio.to_thread.run_sync

    async def counted(work: Any, *args: Any) -> Any:
        hops.append(work)
        return await run_sync(work, *args)

    monkeypatch.setattr(sqlite_store.anyio.to_thread, "run_sync", counted)
    with SQLiteStore(path) as store:
        await store.post("agent:ada", "in place")
        assert hops == []  # nothing held the lock: no hop to a worker thread
        for round_ in range(2):  # the second after a write that found the lock taken
            with write_lock_held(path):
                post = asyncio.create_task(store.post("agent:ada", f"waited {round_}"))
                await asyncio.sleep(SETTLE_S)
                assert not post.done()  # still waiting for the lock, not refused
            assert (await asyncio.wait_for(post, 30)).content == f"waited {round_}"
            assert len(hops) == round_ + 1
            # the in-place attempt's own no-wait setting never outlives it
            assert store._db.execute("PRAGMA busy_timeout").fetchone() == (BUSY_TIMEOUT_MS,)
        await store.post("agent:ada", "in place again")
        assert len(hops) == 2
        page = await store.read_before(None, 10)
        assert [m.content for m in page.messages] == [
            "in place again",
            "waited 1",
            "waited 0",
            "in place",
            "hello there",
        ]


@pytest.mark.parametrize(
    ("signum", "status", "line"),
    [(signal.SIGINT, 130, "error: interrupted"), (signal.SIGTERM, 143, "error: terminated")],
    ids=["ctrl-c", "term"],
)
def test_a_post_stopped_while_it_waits_for_the_lock_ends_with_one_line_and_writes_nothing(
    tmp_path: Path, signum: int, status: int, line: str
) -> None:
    # Ctrl-C used to close the store under the worker thread still waiting in SQLite for
    # the lock: the process died of a segfault (status 139), every time.
    path = tmp_path / "rooms.db"
    asyncio.run(staffed(path))
    with write_lock_held(path):
        process = subprocess.Popen(
            [CODEROOMS, "--db", str(path), "post", "--as", "agent:ada", "never written"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        time.sleep(PROMPT_S)  # started, and waiting for the lock
        assert process.poll() is None
        process.send_signal(signum)
        out, err = process.communicate(timeout=BUSY_TIMEOUT_MS / 1000 / 2)
    assert (process.returncode, err.strip(), out) == (status, line, "")
    with SQLiteStore(path) as store:
        page = asyncio.run(store.read_before(None, 10))
    assert [m.content for m in page.messages] == ["hello there"]
    assert sqlite3.connect(path).execute("PRAGMA integrity_check").fetchone() == ("ok",)


async def test_opening_a_current_store_takes_no_write_lock(tmp_path: Path) -> None:
    path = tmp_path / "rooms.db"
    await staffed(path)
    with write_lock_held(path):
        loop = asyncio.get_running_loop()
        started = loop.time()
        for read_only in (False, True):
            with SQLiteStore(path, read_only=read_only) as store:
                log = store.conversation_log(Conversation("General", "General"))
                history = await project_session(
                    log, SessionQuery(Conversation("General", "General"))
                )
                assert [m.content for m in history] == ["hello there"]
        assert loop.time() - started < PROMPT_S


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", "from coderooms.launch import main; main()", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
    )


async def test_read_and_search_answer_while_another_process_writes(tmp_path: Path) -> None:
    path = tmp_path / "rooms.db"
    await staffed(path)
    with write_lock_held(path):
        read = _cli("--db", str(path), "read", "--as", "ada", "--desk", "General", cwd=tmp_path)
        found = _cli("--db", str(path), "search", "hello", cwd=tmp_path)
    assert read.returncode == 0, read.stderr
    assert "hello there" in read.stdout
    assert found.returncode == 0, found.stderr
    assert "hello there" in found.stdout


@contextmanager
def read_only_place(directory: Path, file: Path) -> Iterator[None]:
    """``file`` and its directory made unwritable, as on a read-only mount: by the
    immutable attribute for root (whom modes do not stop), else by file modes."""
    if os.geteuid() == 0:
        chattr = shutil.which("chattr")
        if chattr is None:
            pytest.skip("root, and no chattr to make a file read-only")
        made = subprocess.run([chattr, "+i", str(file), str(directory)], capture_output=True)
        if made.returncode != 0:
            pytest.skip("root, and chattr +i is not allowed here")
        try:
            yield
        finally:
            subprocess.run([chattr, "-i", str(file), str(directory)], check=True)
        return
    file.chmod(0o444)
    directory.chmod(0o555)
    try:
        yield
    finally:
        directory.chmod(0o755)
        file.chmod(0o644)


async def test_a_read_only_store_answers_every_read_only_command(tmp_path: Path) -> None:
    home = tmp_path / "ro"
    home.mkdir()
    path = home / "rooms.db"
    await staffed(path)
    with SQLiteStore(path) as store:
        await store.create_desk("eng")
        await store.add_desk_member("eng", "ada")
    before = path.read_bytes()
    with read_only_place(home, path):
        commands = [
            ("read", "--as", "ada", "--desk", "General"),
            ("search", "hello"),
            ("pins", "--desk", "General"),
            ("threads", "--desk", "General"),
            ("pick", "desks", "eng"),
            ("desk", "list"),
            ("agent", "list"),
            ("person", "list"),
        ]
        for command in commands:
            done = _cli("--db", str(path), *command, cwd=tmp_path)
            assert done.returncode == 0, (command, done.stderr)
            assert done.stderr == "", command
        with SQLiteStore(path, read_only=True) as store:
            with pytest.raises(ReadOnlyStore):
                await store.post("agent:ada", "no")
        refused = _cli("--db", str(path), "post", "--as", "agent:ada", "hi", cwd=tmp_path)
        assert refused.returncode == 1
        assert refused.stderr.startswith("error: ") and refused.stderr.count("\n") == 1
    assert path.read_bytes() == before


def _foreign(path: Path, statements: list[str]) -> bytes:
    with sqlite3.connect(path) as other:
        for statement in statements:
            other.execute(statement)
    other.close()
    return path.read_bytes()


@pytest.mark.parametrize(
    "statements",
    [
        ["CREATE TABLE invoices (id INTEGER)"],
        # many frameworks keep a table of this name: it does not make the file ours
        [
            "CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT)",
            "INSERT INTO schema_migrations VALUES (1, 'create users')",
            "CREATE TABLE users (id INTEGER)",
        ],
        [
            "CREATE TABLE schema_migrations (version TEXT PRIMARY KEY)",
            "INSERT INTO schema_migrations VALUES ('20240101120000')",
        ],
    ],
    ids=["other tables", "a schema_migrations of its own", "text versions"],
)
def test_a_refused_file_is_left_byte_for_byte_as_it_was(
    tmp_path: Path, statements: list[str]
) -> None:
    path = tmp_path / "other.db"
    before = _foreign(path, statements)
    with pytest.raises(CorruptDatabase, match="another application"):
        open_store(str(path))
    done = _cli("--db", str(path), "init", cwd=tmp_path)
    assert done.returncode == 1
    assert "another application" in done.stderr and done.stderr.count("\n") == 1
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["other.db"]
