"""The SQLite file: opening, URLs, migrations, corruption and several writing processes."""

from __future__ import annotations

import asyncio
import multiprocessing
import sqlite3
from pathlib import Path

import pytest

from coderooms.rooms.records import Agent, Conversation, LogMessage, Operator, Person, System
from coderooms.store import (
    DEFAULT_STORE_PATH,
    CorruptDatabase,
    NewerSchema,
    SQLiteStore,
    UnsupportedStoreUrl,
    open_store,
)
from coderooms.store.sqlite import BUSY_TIMEOUT_MS, MIGRATIONS, MMAP_BYTES, apply_migrations

WRITERS = 4
POSTS_PER_WRITER = 60


def test_open_store_defaults_to_coderooms_rooms_db_under_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    with open_store() as store:
        assert isinstance(store, SQLiteStore)
    assert (tmp_path / DEFAULT_STORE_PATH).is_file()


def test_sqlite_urls_take_everything_after_the_third_slash_as_the_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    with open_store("sqlite:///rel/rooms.db"):
        pass
    with open_store(f"sqlite:///{tmp_path / 'abs.db'}"):
        pass
    with open_store(str(tmp_path / "bare.db")):
        pass
    assert (tmp_path / "rel" / "rooms.db").is_file()
    assert (tmp_path / "abs.db").is_file()
    assert (tmp_path / "bare.db").is_file()


@pytest.mark.parametrize("url", ["mysql://x/y", "sqlite:///", "sqlite:x"])
def test_unsupported_urls_are_refused(url: str) -> None:
    with pytest.raises(UnsupportedStoreUrl, match="cannot open store"):
        open_store(url)


def test_wal_mode_and_busy_timeout_are_set(tmp_path: Path) -> None:
    with SQLiteStore(tmp_path / "rooms.db") as store:
        assert store._db.execute("PRAGMA journal_mode").fetchone() == ("wal",)
        assert store._db.execute("PRAGMA busy_timeout").fetchone() == (BUSY_TIMEOUT_MS,)


def test_reads_go_through_a_memory_map(tmp_path: Path) -> None:
    with SQLiteStore(tmp_path / "rooms.db") as store:
        assert store._db.execute("PRAGMA mmap_size").fetchone() == (MMAP_BYTES,)


def test_a_file_that_is_not_sqlite_is_a_corrupt_database(tmp_path: Path) -> None:
    path = tmp_path / "rooms.db"
    path.write_bytes(b"this is certainly not a database" * 200)
    with pytest.raises(CorruptDatabase, match="not a usable coderooms database"):
        open_store(f"sqlite:///{path}")


def test_another_applications_sqlite_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "other.db"
    with sqlite3.connect(path) as other:
        other.execute("CREATE TABLE invoices (id INTEGER)")
    with pytest.raises(CorruptDatabase, match="another application"):
        SQLiteStore(path)


def test_a_file_from_a_newer_coderooms_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "rooms.db"
    SQLiteStore(path).close()
    with sqlite3.connect(path) as db:
        db.execute("INSERT INTO schema_migrations (version, name) VALUES (999, 'future')")
    with pytest.raises(NewerSchema, match="upgrade coderooms"):
        SQLiteStore(path)


def test_migrations_are_ordered_and_recorded_once(tmp_path: Path) -> None:
    versions = [m.version for m in MIGRATIONS]
    assert versions == sorted(set(versions))
    path = tmp_path / "rooms.db"
    SQLiteStore(path).close()
    SQLiteStore(path).close()
    with sqlite3.connect(path) as db:
        recorded = [v for (v,) in db.execute("SELECT version FROM schema_migrations ORDER BY 1")]
        assert apply_migrations(db) == []
    assert recorded == versions


async def test_a_file_written_at_schema_version_1_opens_and_upgrades(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    db = sqlite3.connect(path, isolation_level=None)
    assert apply_migrations(db, target=1) == [1]
    db.execute("INSERT INTO agents (id, name) VALUES ('ada', 'Ada')")
    db.executemany(
        "INSERT INTO messages (sequence, chat_id, parent, author_type, author_id, "
        "author_label, content) VALUES (?, ?, ?, 'agent', 'ada', 'Ada', ?)",
        [(1, "eng", None, "root"), (2, "main", None, "hello"), (3, "eng", 1, "reply")],
    )
    db.close()

    with SQLiteStore(path) as store:
        with sqlite3.connect(path) as check:
            assert [v for (v,) in check.execute("SELECT version FROM schema_migrations")] == [
                m.version for m in MIGRATIONS
            ]
        general = await store.conversation_log(Conversation("General", "General")).read_before(
            None, 10
        )
        assert [m.sequence for m in general.messages] == [2]
        thread = store.conversation_log(Conversation("eng", "eng", thread_root=1))
        old_rows = (await thread.read_before(None, 10)).messages
        assert [m.sequence for m in old_rows] == [3, 1]
        assert [m.posted_at for m in old_rows] == [None, None]  # written before times were
        await store.create_desk("eng")
        posted = await store.post("agent:ada", "after the upgrade", desk="eng", parent=1)
        assert posted == LogMessage(
            4, Agent("ada", "Ada"), "after the upgrade", "eng", 1, posted.posted_at
        )
        assert posted.posted_at is not None


async def test_a_file_at_version_4_moves_its_authors_into_the_authors_table(
    tmp_path: Path,
) -> None:
    path = tmp_path / "v4.db"
    db = sqlite3.connect(path, isolation_level=None)
    assert apply_migrations(db, target=4) == [1, 2, 3, 4]
    db.execute("INSERT INTO agents (id, name) VALUES ('ada', 'Ada')")
    db.executemany(
        "INSERT INTO messages (sequence, chat_id, chat_key, parent, author_type, author_id, "
        "author_label, content) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        [
            (1, "eng", "eng", None, "agent", "ada", "Ada", "root"),
            (2, None, "", None, "operator", None, "operator", "from the operator"),
            (3, "eng", "eng", 1, "person", "bo", "Bo", "reply"),
            (4, None, "", None, "system", "deploy", "Deploy bot", "deployed"),
            (5, "eng", "eng", 1, "agent", "ada", "Ada (renamed)", "later"),
            (6, None, "", None, "operator", None, "operator", "again"),
        ],
    )
    db.close()

    with SQLiteStore(path) as store:
        page = await store.read_before(None, 10)
        assert [(m.sequence, m.author, m.content, m.chat_id, m.parent) for m in page.messages] == [
            (6, Operator(), "again", None, None),
            (5, Agent("ada", "Ada (renamed)"), "later", "eng", 1),
            (4, System("deploy", "Deploy bot"), "deployed", None, None),
            (3, Person("bo", "Bo"), "reply", "eng", 1),
            (2, Operator(), "from the operator", None, None),
            (1, Agent("ada", "Ada"), "root", "eng", None),
        ]
        posted = await store.post("agent:ada", "after the upgrade")
        assert posted.author == Agent("ada", "Ada")
        assert (await store.message(posted.sequence)) == posted
    with sqlite3.connect(path) as check:
        authors = check.execute("SELECT ref, author_type, author_id, label FROM authors").fetchall()
        columns = [row[1] for row in check.execute("PRAGMA table_info(messages)")]
    # one row per distinct author, in order of first appearance; the post reused Ada's
    assert authors == [
        (1, "agent", "ada", "Ada"),
        (2, "operator", None, "operator"),
        (3, "person", "bo", "Bo"),
        (4, "system", "deploy", "Deploy bot"),
        (5, "agent", "ada", "Ada (renamed)"),
    ]
    assert columns == [
        "sequence",
        "chat_id",
        "chat_key",
        "parent",
        "author",
        "content",
        "posted_at",
    ]


def test_a_row_naming_a_missing_author_is_a_corrupt_database(tmp_path: Path) -> None:
    path = tmp_path / "rooms.db"
    SQLiteStore(path).close()
    with sqlite3.connect(path) as db:
        db.execute(
            "INSERT INTO messages (sequence, chat_key, author, content) VALUES (1, '', 42, 'x')"
        )
    with SQLiteStore(path) as store, pytest.raises(CorruptDatabase, match="author 42"):
        asyncio.run(store.read_before(None, 5))


def test_a_log_whose_authors_table_is_gone_is_a_corrupt_database(tmp_path: Path) -> None:
    path = tmp_path / "rooms.db"
    with SQLiteStore(path) as store:
        asyncio.run(store.post("operator", "hello"))
    with sqlite3.connect(path) as db:
        db.execute("DROP TABLE authors")
    with SQLiteStore(path) as store, pytest.raises(CorruptDatabase, match="no such table"):
        asyncio.run(store.read_before(None, 5))


def _writer(path: str, writer: int, posts: int, start: multiprocessing.synchronize.Event) -> None:
    async def run() -> None:
        store = SQLiteStore(path)
        start.wait()
        for i in range(posts):
            await store.post(f"agent:w{writer}", f"w{writer}-{i}", desk="eng")
        store.close()

    asyncio.run(run())


async def test_several_processes_posting_at_once_lose_and_duplicate_nothing(tmp_path: Path) -> None:
    path = tmp_path / "rooms.db"
    with SQLiteStore(path) as store:
        for writer in range(WRITERS):
            await store.add_agent(f"w{writer}")
        await store.create_desk("eng")
    context = multiprocessing.get_context("spawn")
    start = context.Event()
    workers = [
        context.Process(target=_writer, args=(str(path), w, POSTS_PER_WRITER, start))
        for w in range(WRITERS)
    ]
    for worker in workers:
        worker.start()
    start.set()
    for worker in workers:
        worker.join(timeout=120)
    assert [w.exitcode for w in workers] == [0] * WRITERS

    with SQLiteStore(path) as store:
        page = await store.read_before(None, WRITERS * POSTS_PER_WRITER + 10)
    rows = list(reversed(page.messages))
    assert [m.sequence for m in rows] == list(range(1, WRITERS * POSTS_PER_WRITER + 1))
    assert sorted(m.content for m in rows) == sorted(
        f"w{w}-{i}" for w in range(WRITERS) for i in range(POSTS_PER_WRITER)
    )
    for writer in range(WRITERS):
        mine = [m.content for m in rows if m.author.id == f"w{writer}"]  # type: ignore[union-attr]
        assert mine == [f"w{writer}-{i}" for i in range(POSTS_PER_WRITER)]
