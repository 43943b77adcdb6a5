"""The embedded default store: one SQLite file in WAL mode.

Layout: ``messages`` is the append-only log (``sequence`` is the rowid, so SQLite assigns
strictly increasing sequences); ``chat_key`` folds every General alias of ``chat_id`` to
``''`` so one index, ``(chat_key, sequence)``, serves a desk's rows newest-first, and
``(parent, sequence)`` serves a thread. Roster and desks live in small tables and are
read back as the core's snapshots (``Roster``, ``DeskSet``), which validate every change
before it commits.

Schema changes are ordered :data:`MIGRATIONS`; ``schema_migrations`` records which ran,
so a file written by an older coderooms opens (and is upgraded) in a newer one.

Writers take SQLite's write lock up front (``BEGIN IMMEDIATE``) and wait up to
:data:`BUSY_TIMEOUT_MS` for it, so several processes can post at once: each post reads,
validates and appends inside one transaction, and nothing is lost or duplicated.
``synchronous=NORMAL`` keeps commits fast; in WAL mode that survives a crash of the
process but may lose the last commits on power loss.

Reads run their (short, indexed) statements directly on the caller's thread, on a
connection of their own: in WAL mode a reader never waits for a writer, and
``benchmarks/rooms.py`` measured a hop to a worker thread making a desk page slower in
every run (median 0.20-0.23 ms direct, 0.27-0.35 ms via a thread). Writes may wait for
another process's lock, so they run on a worker thread (see :class:`SQLiteStore`).
Opening a file that needs no migration only reads it: no write lock, and a file that
is refused (another application's, a newer coderooms's) is left exactly as it was.
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
import threading
import unicodedata
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import quote

import anyio.to_thread

from coderooms.datadir import make_dirs
from coderooms.errors import InvalidBound
from coderooms.rooms.chat import is_general_chat
from coderooms.rooms.desks import GENERAL_DESK, Desk, DeskMember, DeskOrder, DeskSet
from coderooms.rooms.records import (
    PAGE_SIZE,
    Agent,
    Conversation,
    LogMessage,
    Operator,
    Person,
    Sequence,
    SessionAuthor,
    SessionPage,
    System,
)
from coderooms.rooms.roster import Roster, RosterMember, RosterPerson
from coderooms.rooms.session import SessionLog, is_blank
from coderooms.store.base import (
    MESSAGE_BYTES_CAP,
    READ_LIMIT_CAP,
    AuthorRef,
    CodePinSnapshot,
    Store,
    parse_author_ref,
)
from coderooms.store.errors import (
    AgentExists,
    BlankIdentifier,
    BlankMessage,
    CorruptDatabase,
    DeskConflict,
    DeskMembership,
    GeneralDeskMembership,
    ImportOrderError,
    InvalidAuthor,
    InvalidIdentifier,
    InvalidText,
    MessageTooLarge,
    MultilineName,
    NewerSchema,
    ParentInOtherDesk,
    PersonExists,
    ReadOnlyStore,
    RetiredAuthor,
    StoreBusy,
    StoreError,
    StoreLocation,
    UnknownAuthor,
    UnknownParent,
)

__all__ = [
    "BUSY_TIMEOUT_MS",
    "MIGRATIONS",
    "VIEW_PAGE_ROWS",
    "VIEW_PAGE_ROWS_MAX",
    "Migration",
    "SQLiteStore",
    "apply_migrations",
]

FOREIGN_DATABASE = "it is a SQLite database of another application"
"""Why a SQLite file that coderooms did not make is refused (before anything is written)."""
BUSY_TIMEOUT_MS = 10_000
"""How long a writer waits for another process's write lock before giving up."""

MAX_SEQUENCE = 2**63 - 1
"""SQLite integers are signed 64-bit: the largest sequence the file can hold."""

VIEW_PAGE_ROWS = 64
"""The most rows a conversation view returns on a fresh read. A window-30 channel read
needs about 40 desk rows, so it decodes 64 rows instead of the walk's 512; a deeper read
simply takes more pages (the port allows short pages, and the walk's scan cap counts
rows, not reads, so the projection is the same)."""

VIEW_PAGE_ROWS_MAX = PAGE_SIZE
"""The most rows a conversation view returns on a read that continues where its previous
read stopped. Each such read may return twice as many rows as the one before, so a long
scan (2,048 rows for a search) takes 7 queries instead of 32 while a short projection
still decodes only :data:`VIEW_PAGE_ROWS`."""

MMAP_BYTES = 256 * 1024 * 1024
"""How much of the file SQLite reads through a memory map rather than ``read`` calls.
A desk's rows are spread over the whole table, so a long desk scan touches a different
page for almost every row; mapped, each of those is a memory access instead of a system
call and a copy into SQLite's own small page cache. Pages come from the operating
system's file cache either way, so this costs address space, not memory."""

AUTHOR_CACHE_CAP = 4096
"""Distinct authors a store keeps decoded; rows by the same author share one record."""

IMPORT_BATCH = 50_000
"""Rows handed to SQLite per ``executemany`` during a bulk import."""

_T = TypeVar("_T")


@dataclass(frozen=True, slots=True)
class Migration:
    """One schema step; ``version`` orders them and is recorded once it has run."""

    version: int
    name: str
    statements: tuple[str, ...]


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
        "code pin snapshots",
        (
            # What a pinned code node was when a row pinned it (its content hash and
            # signature), so the pinboard can say whether it changed since. The pin
            # itself lives in the row; this only remembers the code it pointed at.
            """CREATE TABLE code_pins (
                sequence INTEGER NOT NULL,
                node TEXT NOT NULL,
                content_hash TEXT NOT NULL,
                signature TEXT NOT NULL,
                PRIMARY KEY (sequence, node)
            ) WITHOUT ROWID""",
        ),
    ),
)
"""Every schema step, oldest first. Append new steps; never edit one that shipped."""

SCHEMA_VERSION = MIGRATIONS[-1].version

CODE_PIN_QUERY_BATCH = 500
"""Sequences one code-pin lookup asks for at a time (SQLite bounds a statement's
parameters)."""

_COLUMNS = "sequence, chat_id, parent, author, content, posted_at"

POSTED_AT_FORMAT = "%Y-%m-%dT%H:%M:%SZ"
"""How a row's post time is written: UTC to the second, ISO 8601."""

Clock = Callable[[], datetime]
"""Where a store gets the time a row is posted (an aware datetime; tests pass a fixed one)."""


def utc_now() -> datetime:
    """The host's current time, in UTC: the default :data:`Clock`."""
    return datetime.now(UTC)


def posted_at_text(moment: datetime) -> str:
    """``moment`` as a stored post time (converted to UTC; a naive one is taken as UTC)."""
    if moment.tzinfo is not None:
        moment = moment.astimezone(UTC)
    return moment.strftime(POSTED_AT_FORMAT)


def chat_key(chat_id: str | None) -> str:
    """The indexed desk key of a stored chat id: ``''`` for every General alias."""
    return "" if is_general_chat(chat_id) else str(chat_id)


def conversation_keys(desk_id: str, desk_name: str) -> tuple[str, ...]:
    """The chat keys whose rows are in the desk {desk_id, desk_name} (see ``in_desk``)."""
    return tuple(sorted({chat_key(desk_id), chat_key(desk_name)}))


def _author_columns(author: SessionAuthor) -> tuple[str, str | None, str]:
    if isinstance(author, Agent):
        return "agent", author.id, author.label
    if isinstance(author, Person):
        return "person", author.id, author.label
    if isinstance(author, System):
        return "system", author.kind, author.label
    return "operator", None, "operator"


_AUTHOR_TYPES: dict[str, type[Agent] | type[Person] | type[System]] = {
    "agent": Agent,
    "person": Person,
    "system": System,
}


def _author(author_type: str, author_id: str | None, label: str) -> SessionAuthor:
    """The record an ``authors`` row describes."""
    if author_type == "operator":
        return Operator()
    record = _AUTHOR_TYPES.get(author_type)
    if record is None or author_id is None:
        key = (author_type, author_id, label)
        raise CorruptDatabase("the log", f"a row has an unreadable author {key!r}")
    return record(author_id, label)


# A page decodes up to thousands of rows; a frozen dataclass's ``__init__`` sets each
# slot through ``object.__setattr__``, about twice the cost of the slots' own setters.
# Rows read back from the store were validated when posted, so ``_page`` fills the slots
# directly. ``LogMessage`` has no ``__post_init__``; a test pins that and checks that
# both ways build equal messages.
_blank_message = object.__new__
_set_sequence = LogMessage.sequence.__set__  # type: ignore[attr-defined]
_set_author = LogMessage.author.__set__  # type: ignore[attr-defined]
_set_content = LogMessage.content.__set__  # type: ignore[attr-defined]
_set_chat = LogMessage.chat_id.__set__  # type: ignore[attr-defined]
_set_parent = LogMessage.parent.__set__  # type: ignore[attr-defined]
_set_posted_at = LogMessage.posted_at.__set__  # type: ignore[attr-defined]

AuthorOf = Callable[[int], SessionAuthor]
"""A store's decoder from an ``authors`` reference to its record."""


def _row_message(row: tuple[Any, ...], author_of: AuthorOf) -> LogMessage:
    sequence, chat_id, parent, author, content, posted_at = row
    return LogMessage(sequence, author_of(author), content, chat_id, parent, posted_at)


def _page(
    rows: list[tuple[Any, ...]], limit: int, authors: dict[int, SessionAuthor], author_of: AuthorOf
) -> SessionPage:
    """A page from rows already newest-first; a full page points below its oldest row.

    The same as mapping :func:`_row_message` over ``rows``, with the store's decoded
    authors looked up in place: a page holds hundreds of rows by a handful of authors."""
    cached = authors.get
    built: list[LogMessage] = []
    keep = built.append
    for sequence, chat_id, parent, author, content, posted_at in rows:
        message = _blank_message(LogMessage)
        _set_sequence(message, sequence)
        _set_author(message, cached(author) or author_of(author))
        _set_content(message, content)
        _set_chat(message, chat_id)
        _set_parent(message, parent)
        _set_posted_at(message, posted_at)
        keep(message)
    messages = tuple(built)
    next_before = messages[-1].sequence if messages and len(messages) >= limit else None
    return SessionPage(messages, next_before)


IDENTIFIER_MAX_CHARS = 64
"""The longest agent, person or desk id a store accepts."""
IDENTIFIER_SHOWN_CHARS = 40
"""How much of a refused id its error message repeats."""
_IDENTIFIER = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_\-]*")


def _require_identifier(what: str, value: str) -> None:
    """Refuse an id that cannot be mentioned (``@id``) or written as an author
    (``agent:id``): spaces, slashes, colons, dots (a dot ends a mention), line breaks, or
    more than
    :data:`IDENTIFIER_MAX_CHARS` characters. Ids already stored are left as they are."""
    if len(value) <= IDENTIFIER_MAX_CHARS and _IDENTIFIER.fullmatch(value):
        return
    _require_text(what, value)
    shown = value if len(value) <= IDENTIFIER_SHOWN_CHARS else value[:IDENTIFIER_SHOWN_CHARS] + "…"
    raise InvalidIdentifier(what, repr(shown), IDENTIFIER_MAX_CHARS)


def _require_one_line(what: str, value: str | None) -> None:
    """Refuse a name, label or description that could break the lines it is shown in: a
    line break (also U+2028/U+2029) or another control character (Unicode class Cc)."""
    _require_text(what, value)
    if value is not None and any(unicodedata.category(c) in _BREAKING for c in value):
        raise MultilineName(what)


_BREAKING = frozenset({"Cc", "Zl", "Zp"})


def _require_text(what: str, value: str | None) -> None:
    """Refuse text SQLite cannot store as UTF-8 (lone surrogates: undecodable bytes a
    command line carried in, or a JSON ``\\ud800`` escape) with one typed error naming
    the field. Every write checks its text with this before touching the database."""
    if value is None:
        return
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidText(what) from None


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


def _check_limit(limit: int) -> int:
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 0:
        raise InvalidBound("limit", limit)
    return min(limit, READ_LIMIT_CAP)


def _ceiling(before: Sequence | None) -> int:
    """The largest sequence a read below ``before`` may return (-1: none)."""
    if before is None:
        return MAX_SEQUENCE
    return max(-1, min(before - 1, MAX_SEQUENCE))


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


class SQLiteStore(Store):
    """A :class:`~coderooms.store.base.Store` in one SQLite file (or ``:memory:``).

    A file store holds two connections. Reads use one of them on the caller's thread: in
    WAL mode a reader never waits for a writer, so a read is never stuck behind another
    process's write. Writes use the other, on a worker thread, one at a time: a write
    that waits up to :data:`BUSY_TIMEOUT_MS` for another process's lock holds up only the
    task that asked for it, never the event loop the rest of a server runs on. (An
    in-memory store has one connection and nothing to wait for: it writes in place.)

    With ``read_only`` (a command that only reads) the file is opened without write
    access at all, so a read-only file or mount serves every read; a file that still
    needs a migration is opened for writing instead, which upgrades it.
    """

    def __init__(
        self, path: str | Path, clock: Clock | None = None, *, read_only: bool = False
    ) -> None:
        self.path = str(path)
        self._clock = clock if clock is not None else utc_now
        self.read_only = False
        # generation, roster, desks: one tuple, replaced whole, so a read on one thread
        # never sees the roster of one generation beside the desks of another
        self._snapshot: tuple[int | None, Roster, DeskSet] = (
            None,
            Roster(()),
            DeskSet((GENERAL_DESK,)),
        )
        # ``authors`` rows never change once written, so a decoded one stays right.
        self._authors: dict[int, SessionAuthor] = {}
        # and the reverse, for posting: only references whose row is committed
        self._author_refs: dict[tuple[str, str | None, str], int] = {}
        self._write_lock = threading.Lock()
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
        if self._reader is not self._db:
            self._reader.close()
        self._db.close()

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

    async def _writing(self, work: Callable[[sqlite3.Connection], _T]) -> _T:
        """Run ``work`` in one write transaction, off the caller's thread for a file."""
        if self.read_only:
            raise ReadOnlyStore(self.path)
        if self._reader is self._db:
            return self._write_now(work)
        return await anyio.to_thread.run_sync(self._write_now, work)

    def _write_now(self, work: Callable[[sqlite3.Connection], _T]) -> _T:
        """One write transaction holding SQLite's write lock from its first statement."""
        with self._write_lock, self._guard():
            db = self._db
            db.execute("BEGIN IMMEDIATE")
            try:
                result = work(db)
            except BaseException:
                db.execute("ROLLBACK")
                raise
            db.execute("COMMIT")
            return result

    def _query(self, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        with self._guard():
            return self._reader.execute(sql, params).fetchall()

    def _author_of(self, ref: int) -> SessionAuthor:
        """The author an ``authors`` reference names, decoded once per store."""
        found = self._authors.get(ref)
        if found is not None:
            return found
        with self._guard():
            row = self._reader.execute(
                "SELECT author_type, author_id, label FROM authors WHERE ref = ?", (ref,)
            ).fetchone()
        if row is None:
            raise CorruptDatabase(self.path, f"a row names author {ref!r}, which is not stored")
        author = _author(*row)
        if len(self._authors) >= AUTHOR_CACHE_CAP:
            self._authors.clear()
        self._authors[ref] = author
        return author

    def _page(self, rows: list[tuple[Any, ...]], limit: int) -> SessionPage:
        return _page(rows, limit, self._authors, self._author_of)

    def _author_ref(self, db: sqlite3.Connection, author: SessionAuthor) -> int:
        """The ``authors`` reference of ``author``, added if new (inside a write). A
        reference this store saw committed is reused without asking SQLite; one added
        now is remembered by :meth:`_committed_ref` once its transaction commits."""
        columns = _author_columns(author)
        known = self._author_refs.get(columns)
        if known is not None:
            return known
        author_type, author_id, label = columns
        db.execute(
            "INSERT OR IGNORE INTO authors (author_type, author_id, label) VALUES (?, ?, ?)",
            (author_type, author_id, label),
        )
        ((ref,),) = db.execute(
            "SELECT ref FROM authors WHERE author_type = ? AND coalesce(author_id, '') = ? "
            "AND label = ?",
            (author_type, author_id or "", label),
        )
        return int(ref)

    def _committed_ref(self, author: SessionAuthor, ref: int) -> None:
        """Remember ``author``'s reference; call only after the write that used it
        committed (an author row, once committed, never changes or goes away)."""
        if len(self._author_refs) >= AUTHOR_CACHE_CAP:
            self._author_refs.clear()
        self._author_refs[_author_columns(author)] = ref

    def _snapshots(self, db: sqlite3.Connection | None = None) -> tuple[Roster, DeskSet]:
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

    def _snapshots_in(self, db: sqlite3.Connection) -> tuple[Roster, DeskSet]:
        (generation,) = db.execute("SELECT value FROM meta WHERE key = 'generation'").fetchone()
        known, roster, desks = self._snapshot
        if generation != known:
            roster, desks = self._load_roster(db), self._load_desks(db)
            self._snapshot = (generation, roster, desks)
        return roster, desks

    @staticmethod
    def _changed(db: sqlite3.Connection) -> None:
        db.execute("UPDATE meta SET value = value + 1 WHERE key = 'generation'")

    @staticmethod
    def _load_roster(db: sqlite3.Connection) -> Roster:
        agents = db.execute("SELECT id, name, retired FROM agents ORDER BY position")
        members: list[RosterMember] = []
        retired: list[str] = []
        for agent_id, name, is_retired in agents:
            members.append(RosterMember(agent_id, name))
            if is_retired:
                retired.append(agent_id)
        people = db.execute("SELECT id, label FROM people ORDER BY position")
        return Roster(
            tuple(members), tuple(RosterPerson(i, lbl) for i, lbl in people), tuple(retired)
        )

    def _load_desks(self, db: sqlite3.Connection) -> DeskSet:
        added = tuple(
            Desk(desk_id, name, description, (), mode)
            for desk_id, name, description, mode in db.execute(
                "SELECT id, name, description, responder_mode FROM desks ORDER BY position"
            )
        )
        additions: list[DeskMember] = []
        retired: list[DeskMember] = []
        for desk_id, agent_id, is_retired in db.execute(
            "SELECT desk_id, agent_id, retired FROM desk_members ORDER BY position"
        ):
            additions.append(DeskMember(desk_id, agent_id))
            if is_retired:
                retired.append(DeskMember(desk_id, agent_id))
        orders = tuple(
            DeskOrder(desk_id, self._stored_order(desk_id, ordered))
            for desk_id, ordered in db.execute(
                "SELECT o.desk_id, o.ordered FROM desk_orders o "
                "JOIN desks d ON d.id = o.desk_id ORDER BY d.position"
            )
        )
        return DeskSet((GENERAL_DESK,), added, tuple(additions), orders, tuple(retired))

    def _stored_order(self, desk_id: str, ordered: object) -> tuple[str, ...]:
        """A desk's member order as stored: a JSON list of agent ids, else the file is
        damaged (:class:`CorruptDatabase`), never a traceback."""
        try:
            members = json.loads(ordered) if isinstance(ordered, str | bytes) else None
        except ValueError:
            members = None
        if not isinstance(members, list) or not all(isinstance(m, str) for m in members):
            reason = f"the member order of desk {desk_id!r} is not a JSON list of agent ids"
            raise CorruptDatabase(self.path, reason)
        return tuple(members)

    # --- the log ----------------------------------------------------------------------------

    async def read_before(self, before: Sequence | None, limit: int) -> SessionPage:
        return self.read_before_now(before, limit)

    def read_before_now(self, before: Sequence | None, limit: int) -> SessionPage:
        """The blocking body of :meth:`read_before`."""
        limit = _check_limit(limit)
        if limit == 0:
            return SessionPage(())
        rows = self._query(
            f"SELECT {_COLUMNS} FROM messages WHERE sequence <= ? ORDER BY sequence DESC LIMIT ?",
            (_ceiling(before), limit),
        )
        return self._page(rows, limit)

    def conversation_log(self, conversation: Conversation) -> SessionLog:
        return _ConversationView(self, conversation)

    async def message(self, sequence: Sequence) -> LogMessage | None:
        if not 0 <= sequence <= MAX_SEQUENCE:
            return None
        rows = self._query(f"SELECT {_COLUMNS} FROM messages WHERE sequence = ?", (sequence,))
        return _row_message(rows[0], self._author_of) if rows else None

    async def last_sequence(self) -> Sequence | None:
        ((newest,),) = self._query("SELECT max(sequence) FROM messages")
        return int(newest) if newest is not None else None

    async def post(
        self,
        author: AuthorRef,
        content: str,
        *,
        desk: str = GENERAL_DESK.id,
        parent: Sequence | None = None,
    ) -> LogMessage:
        if is_blank(content):
            raise BlankMessage()
        try:
            size = len(content.encode("utf-8"))
        except UnicodeEncodeError:
            raise InvalidText("the message content") from None
        if size > MESSAGE_BYTES_CAP:
            raise MessageTooLarge(size, MESSAGE_BYTES_CAP)
        if isinstance(author, str):
            _require_text("the author", author)
        try:
            wanted = parse_author_ref(author)
        except ValueError:
            raise InvalidAuthor(author) from None
        for value in _author_columns(wanted)[1:]:
            _require_text("the author", value)
        _require_text("the desk", desk)

        def append(db: sqlite3.Connection) -> tuple[LogMessage, int]:
            roster, desks = self._snapshots(db)
            stored = self._roster_author(wanted, roster)
            target = desks.resolve(desk)
            chat_id = None if target.is_general else target.id
            if parent is not None:
                found = (
                    db.execute(
                        "SELECT chat_key FROM messages WHERE sequence = ?", (parent,)
                    ).fetchone()
                    if 0 <= parent <= MAX_SEQUENCE
                    else None
                )
                if found is None:
                    raise UnknownParent(parent)
                if found[0] not in conversation_keys(target.id, target.name):
                    raise ParentInOtherDesk(parent, target.id)
            ref = self._author_ref(db, stored)
            posted_at = posted_at_text(self._clock())
            cursor = db.execute(
                "INSERT INTO messages (chat_id, chat_key, parent, author, content, posted_at) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                (chat_id, chat_key(chat_id), parent, ref, content, posted_at),
            )
            sequence = cursor.lastrowid
            assert sequence is not None
            return LogMessage(sequence, stored, content, chat_id, parent, posted_at), ref

        message, ref = await self._writing(append)
        self._committed_ref(message.author, ref)
        return message

    @staticmethod
    def _roster_author(author: SessionAuthor, roster: Roster) -> SessionAuthor:
        if isinstance(author, Agent):
            member = roster.member(author.id)
            if member is None:
                raise UnknownAuthor(f"agent {author.id!r}")
            if roster.is_retired(author.id):
                raise RetiredAuthor(author.id)
            return Agent(member.id, member.label)
        if isinstance(author, Person):
            person = roster.person(author.id)
            if person is None:
                raise UnknownAuthor(f"person {author.id!r}")
            return Person(person.id, person.label)
        if isinstance(author, System) and not author.kind.strip():
            raise InvalidAuthor(f"system:{author.kind}")
        return author

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

    # --- code pins ----------------------------------------------------------------------------

    async def record_code_pins(self, snapshots: Iterable[CodePinSnapshot]) -> None:
        rows = [(x.sequence, x.node, x.content_hash, x.signature) for x in snapshots]
        if not rows:
            return
        if self.read_only:
            raise ReadOnlyStore(self.path)

        def record(db: sqlite3.Connection) -> None:
            db.executemany(
                "INSERT OR REPLACE INTO code_pins (sequence, node, content_hash, signature) "
                "VALUES (?, ?, ?, ?)",
                rows,
            )

        await self._writing(record)

    async def code_pins(self, sequences: Iterable[Sequence]) -> list[CodePinSnapshot]:
        wanted = sorted(set(sequences))
        found: list[CodePinSnapshot] = []
        for start in range(0, len(wanted), CODE_PIN_QUERY_BATCH):
            batch = wanted[start : start + CODE_PIN_QUERY_BATCH]
            marks = ", ".join("?" * len(batch))
            found.extend(
                CodePinSnapshot(*row)
                for row in self._query(
                    "SELECT sequence, node, content_hash, signature FROM code_pins "
                    f"WHERE sequence IN ({marks}) ORDER BY sequence, node",
                    tuple(batch),
                )
            )
        return found

    # --- roster -------------------------------------------------------------------------------

    async def roster(self) -> Roster:
        return self._snapshots()[0]

    async def add_agent(self, agent_id: str, name: str | None = None) -> RosterMember:
        if not agent_id.strip():
            raise BlankIdentifier("an agent id")
        _require_identifier("the agent id", agent_id)
        _require_one_line("the agent name", name)
        member = RosterMember(agent_id, name if name is not None and name.strip() else None)

        def add(db: sqlite3.Connection) -> None:
            roster, _ = self._snapshots(db)
            if roster.member(agent_id) is not None:
                raise AgentExists(agent_id)
            Roster((*roster.members, member), roster.people, roster.retired).validate()
            db.execute("INSERT INTO agents (id, name) VALUES (?, ?)", (member.id, member.name))
            self._changed(db)

        await self._writing(add)
        return member

    async def retire_agent(self, agent_id: str) -> None:
        _require_text("the agent id", agent_id)

        def retire(db: sqlite3.Connection) -> None:
            roster, _ = self._snapshots(db)
            if roster.member(agent_id) is None:
                raise UnknownAuthor(f"agent {agent_id!r}")
            db.execute("UPDATE agents SET retired = 1 WHERE id = ?", (agent_id,))
            self._changed(db)

        await self._writing(retire)

    async def add_person(self, person_id: str, label: str) -> RosterPerson:
        if not person_id.strip():
            raise BlankIdentifier("a person id")
        if not label.strip():
            raise BlankIdentifier("a person's label")
        _require_identifier("the person id", person_id)
        _require_one_line("the person's label", label)
        person = RosterPerson(person_id, label)

        def add(db: sqlite3.Connection) -> None:
            roster, _ = self._snapshots(db)
            if roster.person(person_id) is not None:
                raise PersonExists(person_id)
            Roster(roster.members, (*roster.people, person), roster.retired).validate()
            db.execute("INSERT INTO people (id, label) VALUES (?, ?)", (person.id, person.label))
            self._changed(db)

        await self._writing(add)
        return person

    # --- desks --------------------------------------------------------------------------------

    async def desks(self) -> DeskSet:
        return self._snapshots()[1]

    async def create_desk(
        self, desk_id: str, name: str | None = None, description: str | None = None
    ) -> Desk:
        if not desk_id.strip():
            raise BlankIdentifier("a desk id")
        if name is not None and not name.strip():
            raise BlankIdentifier("a desk name")
        _require_identifier("the desk id", desk_id)
        _require_one_line("the desk name", name)
        _require_one_line("the desk description", description)
        desk = Desk(desk_id, name if name is not None else desk_id, description)

        def create(db: sqlite3.Connection) -> None:
            _, desks = self._snapshots(db)
            grown = DeskSet(
                desks.declared, (*desks.added, desk), desks.additions, desks.orders, desks.retired
            )
            grown.validate()
            for other in desks.desks():
                for value in {desk.id, desk.name}:
                    if value in (other.id, other.name):
                        raise DeskConflict(value, other.id)
            db.execute(
                "INSERT INTO desks (id, name, description, responder_mode) VALUES (?, ?, ?, ?)",
                (desk.id, desk.name, desk.description, desk.responder_mode),
            )
            self._changed(db)

        await self._writing(create)
        return desk

    def _member_desk(self, desks: DeskSet, ref: str) -> Desk:
        desk = desks.resolve(ref)
        if desk.is_general:
            raise GeneralDeskMembership()
        return desk

    async def add_desk_member(self, desk: str, agent_id: str) -> None:
        _require_text("the desk", desk)
        _require_text("the agent id", agent_id)

        def add(db: sqlite3.Connection) -> None:
            roster, desks = self._snapshots(db)
            target = self._member_desk(desks, desk)
            self._roster_author(Agent(agent_id, agent_id), roster)
            if agent_id in desks.members(target.id):
                raise DeskMembership(target.id, agent_id, "is already a member of")
            updated = db.execute(
                "UPDATE desk_members SET retired = 0 WHERE desk_id = ? AND agent_id = ?",
                (target.id, agent_id),
            )
            if updated.rowcount == 0:
                db.execute(
                    "INSERT INTO desk_members (desk_id, agent_id) VALUES (?, ?)",
                    (target.id, agent_id),
                )
            order = self._order_of(desks, target.id)
            if order is not None:
                self._store_order(db, target.id, (*order, agent_id))
            self._load_desks(db).validate()
            self._changed(db)

        await self._writing(add)

    async def retire_desk_member(self, desk: str, agent_id: str) -> None:
        _require_text("the desk", desk)
        _require_text("the agent id", agent_id)

        def retire(db: sqlite3.Connection) -> None:
            _, desks = self._snapshots(db)
            target = self._member_desk(desks, desk)
            if agent_id not in desks.members(target.id):
                raise DeskMembership(target.id, agent_id, "is not a member of")
            db.execute(
                "UPDATE desk_members SET retired = 1 WHERE desk_id = ? AND agent_id = ?",
                (target.id, agent_id),
            )
            order = self._order_of(desks, target.id)
            if order is not None:
                self._store_order(db, target.id, tuple(a for a in order if a != agent_id))
            self._load_desks(db).validate()
            self._changed(db)

        await self._writing(retire)

    async def set_desk_order(self, desk: str, ordered: Iterable[str]) -> None:
        wanted = tuple(ordered)
        _require_text("the desk", desk)
        for agent_id in wanted:
            _require_text("an agent id in the order", agent_id)

        def store(db: sqlite3.Connection) -> None:
            _, desks = self._snapshots(db)
            target = self._member_desk(desks, desk)
            self._store_order(db, target.id, wanted)
            self._load_desks(db).validate()  # as written so far (rolls back on error)
            self._changed(db)

        await self._writing(store)

    @staticmethod
    def _order_of(desks: DeskSet, desk_id: str) -> tuple[str, ...] | None:
        return next((o.ordered for o in desks.orders if o.desk_id == desk_id), None)

    @staticmethod
    def _store_order(db: sqlite3.Connection, desk_id: str, ordered: tuple[str, ...]) -> None:
        db.execute(
            "INSERT INTO desk_orders (desk_id, ordered) VALUES (?, ?) "
            "ON CONFLICT (desk_id) DO UPDATE SET ordered = excluded.ordered",
            (desk_id, json.dumps(list(ordered))),
        )


class _ConversationView:
    """The rows one conversation can use, newest first, straight from an index.

    A desk view holds the rows whose chat id is in the desk; a thread view holds the
    thread's root and its direct replies within that desk. Pages follow the
    :class:`~coderooms.rooms.session.SessionLog` contract of the whole log: at most
    :data:`VIEW_PAGE_ROWS` rows on a fresh read, and on a read from the cursor the
    previous page advertised, up to twice the previous page's allowance (at most
    :data:`VIEW_PAGE_ROWS_MAX`). Where the last page ended is all a view remembers, and
    it only ever changes how many rows a page holds, never which rows a walk sees.
    """

    def __init__(self, store: SQLiteStore, conversation: Conversation) -> None:
        self._store = store
        self._keys = conversation_keys(conversation.desk_id, conversation.desk_name)
        self._root = conversation.thread_root
        self._resume: Sequence | None = None
        """The cursor the last page advertised (None: none)."""
        self._allowance = VIEW_PAGE_ROWS
        """The most rows the last page could hold."""

    async def read_before(self, before: Sequence | None, limit: int) -> SessionPage:
        return self.read_before_now(before, limit)

    def read_before_now(self, before: Sequence | None, limit: int) -> SessionPage:
        continues = before is not None and before == self._resume
        allowance = min(2 * self._allowance, VIEW_PAGE_ROWS_MAX) if continues else VIEW_PAGE_ROWS
        limit = min(_check_limit(limit), allowance)
        if limit == 0:
            return SessionPage(())
        page = self._read(before, limit)
        self._resume, self._allowance = page.next_before, allowance
        return page

    def _read(self, before: Sequence | None, limit: int) -> SessionPage:
        ceiling = _ceiling(before)
        if self._root is None:
            # One index range per chat key. Once ``limit`` rows are in hand, a later key
            # only needs its rows newer than the oldest of them: nothing older can make
            # the page, so it is never fetched (a desk's rows mostly sit under one key).
            rows: list[tuple[Any, ...]] = []
            floor = -1
            for key in self._keys:
                rows.extend(
                    self._store._query(
                        f"SELECT {_COLUMNS} FROM messages WHERE chat_key = ? AND sequence <= ? "
                        "AND sequence > ? ORDER BY sequence DESC LIMIT ?",
                        (key, ceiling, floor, limit),
                    )
                )
                if len(self._keys) > 1:
                    rows.sort(key=_sequence_of, reverse=True)
                    del rows[limit:]
                if len(rows) == limit:
                    floor = _sequence_of(rows[-1])
        elif not 0 <= self._root <= MAX_SEQUENCE:
            rows = []
        else:
            marks = ", ".join("?" * len(self._keys))
            rows = self._newest(
                [
                    (
                        f"SELECT {_COLUMNS} FROM messages WHERE parent = ? AND sequence <= ? "
                        f"AND chat_key IN ({marks}) ORDER BY sequence DESC LIMIT ?",
                        (self._root, ceiling, *self._keys, limit),
                    ),
                    (
                        f"SELECT {_COLUMNS} FROM messages WHERE sequence = ? AND sequence <= ? "
                        f"AND chat_key IN ({marks})",
                        (self._root, ceiling, *self._keys),
                    ),
                ],
                limit,
            )
        return self._store._page(rows, limit)

    def _newest(
        self, queries: list[tuple[str, tuple[Any, ...]]], limit: int
    ) -> list[tuple[Any, ...]]:
        """The newest ``limit`` rows across queries that each answer newest-first."""
        if len(queries) == 1:
            return self._store._query(*queries[0])
        merged: list[tuple[Any, ...]] = []
        for sql, params in queries:
            merged.extend(self._store._query(sql, params))
        merged.sort(key=_sequence_of, reverse=True)
        return merged[:limit]


def _sequence_of(row: tuple[Any, ...]) -> int:
    return int(row[0])
