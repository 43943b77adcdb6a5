"""The embedded default store: one SQLite file in WAL mode.

Layout: ``messages`` is the append-only log (``sequence`` is the rowid, so SQLite assigns
strictly increasing sequences); ``chat_key`` folds every General alias of ``chat_id`` to
``''`` so one index, ``(chat_key, sequence)``, serves a desk's rows newest-first, and
``(parent, sequence)`` serves a thread. Roster and desks live in small tables and are
read back as the core's snapshots (``Roster``, ``DeskSet``), which validate every change
before it commits.

Schema changes are ordered :data:`MIGRATIONS`; ``schema_migrations`` records which ran,
so a file written by an older coderooms opens (and is upgraded) in a newer one. The
PostgreSQL store keeps the same tables with a migration list of its own
(``coderooms.store.postgres.MIGRATIONS``): a new table is a step appended to each. The
validation, roster and desk rules and conversation views both stores run are in
:mod:`coderooms.store.sql`.

Writers take SQLite's write lock up front (``BEGIN IMMEDIATE``) and wait up to
:data:`BUSY_TIMEOUT_MS` for it, so several processes can post at once: each post reads,
validates and appends inside one transaction, and nothing is lost or duplicated.
``synchronous=NORMAL`` keeps commits fast; in WAL mode that survives a crash of the
process but may lose the last commits on power loss.

Reads run their (short, indexed) statements directly on the caller's thread, on a
connection of their own: in WAL mode a reader never waits for a writer, and
``benchmarks/rooms.py`` measured a hop to a worker thread making a desk page slower in
every run (median 0.20-0.23 ms direct, 0.27-0.35 ms via a thread). Writes may wait for
another process's lock: one that would wait runs on a worker thread (see
:class:`SQLiteStore`).
Opening a file that needs no migration only reads it: no write lock, and a file that
is refused (another application's, a newer coderooms's) is left exactly as it was.
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import quote

import anyio.to_thread

from coderooms.datadir import make_dirs
from coderooms.rooms.desks import DeskSet
from coderooms.rooms.records import LogMessage, Sequence, SessionAuthor
from coderooms.rooms.roster import Roster
from coderooms.store.errors import (
    CorruptDatabase,
    ImportOrderError,
    InvalidText,
    NewerSchema,
    ReadOnlyStore,
    StoreBusy,
    StoreError,
    StoreLocation,
    StoreStopping,
)
from coderooms.store.sql import (
    CODE_PIN_TABLE,
    MAX_SEQUENCE,
    Clock,
    Db,
    Migration,
    SqlStore,
    _author_columns,
    _require_text,
    chat_key,
    utc_now,
)
from coderooms.store.worksets import WORKSET_STAMP, WORKSET_TABLES

__all__ = [
    "BUSY_TIMEOUT_MS",
    "MIGRATIONS",
    "SQLiteStore",
    "apply_migrations",
]

FOREIGN_DATABASE = "it is a SQLite database of another application"
"""Why a SQLite file that coderooms did not make is refused (before anything is written)."""
BUSY_TIMEOUT_MS = 10_000
"""How long a writer waits for another process's write lock before giving up."""
WAIT_SLICE_MS = 50
"""A write waiting for another process's lock on a worker thread waits in slices of this
length, so that closing the store (Ctrl-C) stops the wait at the end of a slice instead
of closing the connection under it, which crashes the process."""

_BUSY = object()  # a write that would have to wait for another process's lock

MMAP_BYTES = 256 * 1024 * 1024
"""How much of the file SQLite reads through a memory map rather than ``read`` calls.
A desk's rows are spread over the whole table, so a long desk scan touches a different
page for almost every row; mapped, each of those is a memory access instead of a system
call and a copy into SQLite's own small page cache. Pages come from the operating
system's file cache either way, so this costs address space, not memory."""


IMPORT_BATCH = 50_000
"""Rows handed to SQLite per ``executemany`` during a bulk import."""

_T = TypeVar("_T")


MIGRATIONS: tuple[Migration, ...] = (
    Migration(
        1,
        "log and roster",
        (
            """CREATE TABLE messages (
                sequence INTEGER PRIMARY KEY,
                chat_id TEXT,
                parent INTEGER,
                author_type TEXT NOT NULL,
                author_id TEXT,
                author_label TEXT NOT NULL,
                content TEXT NOT NULL
            )""",
            """CREATE TABLE agents (
                position INTEGER PRIMARY KEY,
                id TEXT NOT NULL UNIQUE,
                name TEXT,
                retired INTEGER NOT NULL DEFAULT 0
            )""",
            """CREATE TABLE people (
                position INTEGER PRIMARY KEY,
                id TEXT NOT NULL UNIQUE,
                label TEXT NOT NULL
            )""",
            "CREATE TABLE meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL)",
            "INSERT INTO meta (key, value) VALUES ('generation', 0)",
        ),
    ),
    Migration(
        2,
        "desks",
        (
            """CREATE TABLE desks (
                position INTEGER PRIMARY KEY,
                id TEXT NOT NULL UNIQUE,
                name TEXT NOT NULL,
                description TEXT,
                responder_mode TEXT NOT NULL DEFAULT 'lead'
            )""",
            """CREATE TABLE desk_members (
                position INTEGER PRIMARY KEY,
                desk_id TEXT NOT NULL REFERENCES desks (id),
                agent_id TEXT NOT NULL,
                retired INTEGER NOT NULL DEFAULT 0,
                UNIQUE (desk_id, agent_id)
            )""",
            """CREATE TABLE desk_orders (
                desk_id TEXT PRIMARY KEY REFERENCES desks (id),
                ordered TEXT NOT NULL
            )""",
        ),
    ),
    Migration(
        3,
        "desk and thread indexes",
        (
            "ALTER TABLE messages ADD COLUMN chat_key TEXT NOT NULL DEFAULT ''",
            # lower() folds ASCII only, exactly like is_general_chat.
            """UPDATE messages SET chat_key = CASE
                WHEN chat_id IS NULL OR chat_id = '' OR lower(chat_id) IN ('main', 'general')
                THEN '' ELSE chat_id END""",
            "CREATE INDEX messages_by_chat ON messages (chat_key, sequence)",
            "CREATE INDEX messages_by_parent ON messages (parent, sequence) "
            "WHERE parent IS NOT NULL",
        ),
    ),
    Migration(
        4,
        "covering desk index",
        (
            # A desk's rows are spread thinly through the log: read through the plain
            # (chat_key, sequence) index, every row cost one more lookup in the table.
            # Carrying the columns a page needs in the index itself lets a desk walk read
            # its rows in order, as a whole-log walk does, for roughly twice the bytes.
            "DROP INDEX messages_by_chat",
            "CREATE INDEX messages_by_chat ON messages (chat_key, sequence, chat_id, parent, "
            "author_type, author_id, author_label, content)",
        ),
    ),
    Migration(
        5,
        "authors by reference",
        (
            # Each row named its author in three text columns; a page decoded all three
            # for every row although a log has a handful of authors. Rows now carry one
            # integer into this table, and a store decodes each author once.
            """CREATE TABLE authors (
                ref INTEGER PRIMARY KEY,
                author_type TEXT NOT NULL,
                author_id TEXT,
                label TEXT NOT NULL
            )""",
            "CREATE UNIQUE INDEX authors_by_value ON authors "
            "(author_type, coalesce(author_id, ''), label)",
            """INSERT INTO authors (author_type, author_id, label)
                SELECT author_type, author_id, author_label FROM messages
                GROUP BY author_type, coalesce(author_id, ''), author_label
                ORDER BY min(sequence)""",
            """CREATE TABLE messages_by_ref (
                sequence INTEGER PRIMARY KEY,
                chat_id TEXT,
                chat_key TEXT NOT NULL DEFAULT '',
                parent INTEGER,
                author INTEGER NOT NULL,
                content TEXT NOT NULL
            )""",
            """INSERT INTO messages_by_ref (sequence, chat_id, chat_key, parent, author, content)
                SELECT m.sequence, m.chat_id, m.chat_key, m.parent, a.ref, m.content
                FROM messages AS m JOIN authors AS a
                ON a.author_type = m.author_type
                AND coalesce(a.author_id, '') = coalesce(m.author_id, '')
                AND a.label = m.author_label
                ORDER BY m.sequence""",
            "DROP TABLE messages",
            "ALTER TABLE messages_by_ref RENAME TO messages",
            "CREATE INDEX messages_by_chat ON messages "
            "(chat_key, sequence, chat_id, parent, author, content)",
            "CREATE INDEX messages_by_parent ON messages (parent, sequence) "
            "WHERE parent IS NOT NULL",
        ),
    ),
    Migration(
        6,
        "post times",
        (
            # When each row was posted (UTC, ISO 8601), from the host's clock. Rows
            # written before this step have none (NULL), and say so where they are shown.
            "ALTER TABLE messages ADD COLUMN posted_at TEXT",
            "DROP INDEX messages_by_chat",
            "CREATE INDEX messages_by_chat ON messages "
            "(chat_key, sequence, chat_id, parent, author, content, posted_at)",
        ),
    ),
    Migration(
        7,
        "post idempotency keys",
        (
            # A client-chosen key per post: a retried post finds its row here instead
            # of writing it twice (the PostgreSQL store has the same table).
            "CREATE TABLE post_keys (key TEXT PRIMARY KEY, sequence INTEGER NOT NULL)",
        ),
    ),
    # What each agent session's focus holds (see coderooms.store.worksets).
    Migration(8, "focus working sets", WORKSET_TABLES),
    Migration(9, "code pin snapshots", (CODE_PIN_TABLE + " WITHOUT ROWID",)),
    Migration(10, "focus working set stamps", WORKSET_STAMP),
)
"""Every schema step, oldest first. Append new steps; never edit one that shipped."""

SCHEMA_VERSION = MIGRATIONS[-1].version


_SQLITE_BUSY, _SQLITE_LOCKED, _SQLITE_READONLY, _SQLITE_CANTOPEN = 5, 6, 8, 14
"""SQLite's primary result codes (the low byte of an extended code)."""


def _sqlite_failure(path: str, err: sqlite3.Error) -> StoreError:
    """The store error a person can act on for a SQLite failure on ``path``."""
    code = getattr(err, "sqlite_errorcode", None)
    primary = code & 0xFF if isinstance(code, int) else None
    text = str(err)
    if primary in (_SQLITE_BUSY, _SQLITE_LOCKED) or "locked" in text or "busy" in text:
        return StoreBusy(path, BUSY_TIMEOUT_MS)
    if primary == _SQLITE_READONLY or "readonly database" in text:
        return ReadOnlyStore(path)
    if primary == _SQLITE_CANTOPEN or "unable to open database file" in text:
        return StoreLocation(
            path, "SQLite cannot open or create the file (check that its directory is writable)"
        )
    return CorruptDatabase(path, text)


def apply_migrations(connection: sqlite3.Connection, target: int | None = None) -> list[int]:
    """Run every migration the file lacks, up to ``target`` (default: all), each in its
    own write transaction; returns the versions applied. Safe when several processes
    open the same new file at once."""
    connection.execute(
        "CREATE TABLE IF NOT EXISTS schema_migrations ("
        "version INTEGER PRIMARY KEY, name TEXT NOT NULL, "
        "applied_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now')))"
    )
    applied: list[int] = []
    for migration in MIGRATIONS:
        if target is not None and migration.version > target:
            break
        connection.execute("BEGIN IMMEDIATE")
        try:
            done = connection.execute(
                "SELECT 1 FROM schema_migrations WHERE version = ?", (migration.version,)
            ).fetchone()
            if done is None:
                for statement in migration.statements:
                    connection.execute(statement)
                connection.execute(
                    "INSERT INTO schema_migrations (version, name) VALUES (?, ?)",
                    (migration.version, migration.name),
                )
                applied.append(migration.version)
            connection.execute("COMMIT")
        except BaseException:
            connection.execute("ROLLBACK")
            raise
    return applied


def _committed(db: sqlite3.Connection, work: Callable[[sqlite3.Connection], _T]) -> _T:
    """``work`` in the write transaction just begun on ``db``: committed, or rolled back
    when it raises."""
    try:
        result = work(db)
    except BaseException:
        db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")
    return result


class SQLiteStore(SqlStore):
    """A :class:`~coderooms.store.base.Store` in one SQLite file (or ``:memory:``).

    A file store holds two connections. Reads use one of them on the caller's thread: in
    WAL mode a reader never waits for a writer, so a read is never stuck behind another
    process's write. Writes use the other, one at a time. A write that finds the write
    lock free runs in place, on the caller's thread: it waits for nothing, and a hop to a
    worker thread and back costs more than a small write (a post took 0.04 ms in place
    against 0.11-0.17 ms with the hop).
    A write that would wait runs on a worker thread instead: waiting up to
    :data:`BUSY_TIMEOUT_MS` for another process's lock, it holds up only the task that
    asked for it, never the event loop the rest of a server runs on. (An in-memory store
    has one connection and nothing to wait for: it writes in place.)

    With ``read_only`` (a command that only reads) the file is opened without write
    access at all, so a read-only file or mount serves every read; a file that still
    needs a migration is opened for writing instead, which upgrades it.
    """

    schema_version = SCHEMA_VERSION

    def __init__(
        self, path: str | Path, clock: Clock | None = None, *, read_only: bool = False
    ) -> None:
        self.path = self.location = str(path)
        self._clock = clock if clock is not None else utc_now
        self.read_only = False
        self._init_caches()
        self._write_lock = threading.Lock()
        self._closing = False  # close() was called: a write waiting for the lock gives up
        self._stopping = False  # stop_waiting() was called: the same, the store stays open
        memory = self.path == ":memory:"
        if not memory:
            self._make_directory()
        if read_only and not memory and Path(self.path).exists():
            reader = self._open_without_writing()
            if reader is not None:
                self._db = self._reader = reader
                self.read_only = True
                return
        self._db = self._connect(self.path)
        try:
            self._open()
            self._reader = self._db if memory else self._connect(self.path)
            if self._reader is not self._db:
                self._configure(self._reader)
        except BaseException:
            self._db.close()
            raise

    def _connect(self, target: str, *, uri: bool = False) -> sqlite3.Connection:
        try:
            connection = sqlite3.connect(
                target, uri=uri, isolation_level=None, check_same_thread=False, timeout=0
            )
            connection.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        except sqlite3.Error as err:
            failure = _sqlite_failure(self.path, err)
            if isinstance(failure, CorruptDatabase):
                failure = CorruptDatabase(self.path, f"cannot open it: {err}")
            raise failure from None
        return connection

    def _make_directory(self) -> None:
        """Create the file's directory if missing; a path that cannot hold a file is a
        :class:`StoreLocation` error naming the part in the way."""
        path = Path(self.path)
        try:
            if path.is_dir():
                raise StoreLocation(self.path, "it is a directory, not a database file")
            make_dirs(path.parent)
        except OSError as err:
            for ancestor in reversed(path.parents):
                if ancestor.exists() and not ancestor.is_dir():
                    raise StoreLocation(self.path, f"{ancestor} is not a directory") from None
            reason = f"cannot create directory {path.parent} ({err.strerror or err})"
            raise StoreLocation(self.path, reason) from None

    def _open_without_writing(self) -> sqlite3.Connection | None:
        """A connection that cannot write, on a store at the current schema; None when
        the file needs a migration first. Where even SQLite's shared-memory file cannot be
        created (a read-only mount) the file is read as immutable: nothing can be writing
        to it there."""
        location = "file:" + quote(os.path.abspath(self.path))
        for mode in ("?mode=ro", "?mode=ro&immutable=1"):
            connection = self._connect(location + mode, uri=True)
            try:
                due = self._inspect(connection)
                self._configure(connection)
            except sqlite3.DatabaseError as err:
                connection.close()
                if getattr(err, "sqlite_errorcode", None) == _SQLITE_CANTOPEN:
                    continue  # no shared memory: try the immutable reading
                raise _sqlite_failure(self.path, err) from None
            except BaseException:
                connection.close()
                raise
            if due:
                connection.close()
                return None
            return connection
        return None

    def _inspect(self, connection: sqlite3.Connection) -> bool:
        """Whether the file needs migrations, found by reading only (no lock, no write):
        a file another application made, or a newer coderooms, is refused here, before
        anything could change it."""
        tables = {
            name
            for (name,) in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
        }
        if not tables:
            return True
        if "schema_migrations" not in tables:
            raise CorruptDatabase(self.path, FOREIGN_DATABASE)
        columns = [row[1] for row in connection.execute("PRAGMA table_info(schema_migrations)")]
        if columns[:2] != ["version", "name"]:
            raise CorruptDatabase(self.path, FOREIGN_DATABASE)
        recorded = dict(connection.execute("SELECT version, name FROM schema_migrations"))
        if any(not isinstance(version, int) for version in recorded):
            raise CorruptDatabase(self.path, FOREIGN_DATABASE)
        newest = max(recorded, default=0)
        if newest > SCHEMA_VERSION:
            raise NewerSchema(self.path, newest, SCHEMA_VERSION)
        ours = {migration.version: migration.name for migration in MIGRATIONS}
        if any(ours.get(version) != name for version, name in recorded.items()):
            raise CorruptDatabase(self.path, FOREIGN_DATABASE)
        return set(recorded) != set(ours)

    @staticmethod
    def _configure(connection: sqlite3.Connection) -> None:
        """Per-connection settings (none of them touches the file)."""
        connection.execute("PRAGMA synchronous = NORMAL")
        connection.execute("PRAGMA foreign_keys = ON")
        connection.execute(f"PRAGMA mmap_size = {MMAP_BYTES}")

    def _open(self) -> None:
        try:
            due = self._inspect(self._db)
            if due or self._db.execute("PRAGMA journal_mode").fetchone() != ("wal",):
                self._db.execute("PRAGMA journal_mode = WAL")
            self._configure(self._db)
            if due:
                apply_migrations(self._db)
        except sqlite3.DatabaseError as err:
            raise _sqlite_failure(self.path, err) from None

    # --- plumbing -------------------------------------------------------------------------

    def close(self) -> None:
        """Close both connections, once a write running on a worker thread (one left
        behind by Ctrl-C, say) has stopped: one that waits for the lock gives up within
        :data:`WAIT_SLICE_MS`, and nothing it meant to write is written."""
        self._closing = True
        with self._write_lock:
            if self._reader is not self._db:
                self._reader.close()
            self._db.close()

    def stop_waiting(self) -> None:
        """From now on a write that has to wait for another process's lock gives up
        within :data:`WAIT_SLICE_MS`, as :class:`StoreStopping`, writing nothing: for a
        process on its way out. One that finds the lock free still writes."""
        self._stopping = True

    @contextmanager
    def _guard(self) -> Iterator[None]:
        """Turn SQLite failures into store errors a person can act on. Text that reached
        SQLite without :func:`_require_text` (it cannot be encoded) is refused the same
        way, naming no field."""
        try:
            yield
        except sqlite3.DatabaseError as err:
            if isinstance(err, sqlite3.IntegrityError):
                raise
            raise _sqlite_failure(self.path, err) from None
        except UnicodeEncodeError:
            raise InvalidText("a value written to the store") from None

    async def _writing(
        self, work: Callable[[sqlite3.Connection], _T], *, idempotent: bool = False
    ) -> _T:
        """Run ``work`` in one write transaction, off the caller's thread for a file."""
        if self.read_only:
            raise ReadOnlyStore(self.path)
        if self._reader is self._db:
            return self._write_now(work)
        done = self._write_if_free(work)
        if done is not _BUSY:
            return done  # type: ignore[return-value]
        return await anyio.to_thread.run_sync(self._write_now, work)

    def _write_if_free(self, work: Callable[[sqlite3.Connection], _T]) -> _T | object:
        """``work`` in one write transaction on this thread when no one holds the write
        lock (this store's or SQLite's), else :data:`_BUSY` at once, with nothing done:
        a write that need not wait costs no hop to a worker thread and back."""
        if not self._write_lock.acquire(blocking=False):
            return _BUSY
        try:
            with self._guard():
                if not self._began(0):
                    return _BUSY  # another process writes: wait for it on a thread
                return _committed(self._db, work)
        finally:
            self._write_lock.release()

    def _write_now(self, work: Callable[[sqlite3.Connection], _T]) -> _T:
        """One write transaction holding SQLite's write lock from its first statement."""
        with self._write_lock, self._guard():
            self._begin_waiting()
            return _committed(self._db, work)

    def _begin_waiting(self) -> None:
        """Begin a write transaction, waiting up to :data:`BUSY_TIMEOUT_MS` for another
        process's write lock, in slices of :data:`WAIT_SLICE_MS` between which a store
        being closed or told to stop waiting gives up (SQLite's own wait cannot be
        interrupted)."""
        if self._reader is self._db:  # in memory: no other process, nothing to wait for
            self._db.execute("BEGIN IMMEDIATE")
            return
        deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
        while not self._began(WAIT_SLICE_MS):
            if self._closing or self._stopping:
                raise StoreStopping(self.path)
            if time.monotonic() >= deadline:
                raise StoreBusy(self.path, BUSY_TIMEOUT_MS)

    def _began(self, wait_ms: int) -> bool:
        """Whether a write transaction began on the write connection, waiting at most
        ``wait_ms`` for another process's lock (False: it still holds it). SQLite's own
        wait is set for this attempt only, then put back to :data:`BUSY_TIMEOUT_MS`."""
        db = self._db
        db.execute(f"PRAGMA busy_timeout = {wait_ms}")
        try:
            db.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as err:
            if err.sqlite_errorcode & 0xFF == sqlite3.SQLITE_BUSY:
                return False
            raise
        finally:
            db.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        return True

    def _append_row(self, db: Db, row: tuple[Any, ...]) -> Sequence:
        # the rowid: one past the largest, under SQLite's one write lock
        cursor = db.execute(
            "INSERT INTO messages (chat_id, chat_key, parent, author, content, posted_at) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            row,
        )
        sequence = cursor.lastrowid
        assert sequence is not None
        return int(sequence)

    def _query(self, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        with self._guard():
            return self._reader.execute(sql, params).fetchall()

    def _snapshots(self, db: Db | None = None) -> tuple[Roster, DeskSet]:
        """Roster and desks, reloaded only when a change bumped the generation counter.

        ``db`` is a write transaction's connection; without it the tables are read on
        the reading connection, in one read transaction, so they agree with each other."""
        if db is not None:
            return self._snapshots_in(db)
        with self._guard():
            self._reader.execute("BEGIN")
            try:
                return self._snapshots_in(self._reader)
            finally:
                self._reader.execute("COMMIT")

    def import_messages(self, messages: Iterable[LogMessage]) -> int:
        if self.read_only:
            raise ReadOnlyStore(self.path)
        refs: dict[SessionAuthor, int] = {}  # this transaction's: dropped if it rolls back

        def append(db: sqlite3.Connection) -> int:
            count = 0
            ((latest,),) = db.execute("SELECT coalesce(max(sequence), -1) FROM messages")
            batch: list[tuple[Any, ...]] = []
            for message in messages:
                if not latest < message.sequence <= MAX_SEQUENCE:
                    raise ImportOrderError(message.sequence, latest)
                latest = message.sequence
                ref = refs.get(message.author)
                if ref is None:
                    for value in _author_columns(message.author):
                        _require_text(f"the author of imported message {message.sequence}", value)
                    ref = refs[message.author] = self._author_ref(db, message.author)
                batch.append(
                    (
                        message.sequence,
                        message.chat_id,
                        chat_key(message.chat_id),
                        message.parent,
                        ref,
                        message.content,
                        message.posted_at,
                    )
                )
                if len(batch) >= IMPORT_BATCH:
                    count += self._insert_rows(db, batch)
                    batch = []
            count += self._insert_rows(db, batch)
            return count

        count = self._write_now(append)
        for author, ref in refs.items():
            self._committed_ref(author, ref)
        return count

    @staticmethod
    def _insert_rows(db: sqlite3.Connection, batch: list[tuple[Any, ...]]) -> int:
        try:
            db.executemany(
                "INSERT INTO messages (sequence, chat_id, chat_key, parent, author, content, "
                "posted_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                batch,
            )
        except UnicodeEncodeError:
            # found only on failure: checking every row up front would slow every import
            for sequence, chat_id, _, _, _, content, _ in batch:
                _require_text(f"the desk of imported message {sequence}", chat_id)
                _require_text(f"the content of imported message {sequence}", content)
            raise
        return len(batch)
