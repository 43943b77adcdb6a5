"""The PostgreSQL store: one database that agents on many hosts share, live.

The tables and every rule are :class:`~coderooms.store.sql.SqlStore`'s, the same as the
SQLite store's; this module supplies connections, transactions, sequence assignment,
bulk import, its own ordered :data:`MIGRATIONS` (recorded in ``schema_migrations``, as
SQLite's are) and a live feed of new rows.

**Sequences in commit order.** A ``serial`` column hands out numbers when a transaction
asks, not when it commits: a reader could see row 8 (committed) while row 7 (numbered
first, committed later) is still invisible, and then miss it for good once its cursor
passed 7. So every write transaction first takes one transaction-scoped advisory lock
(:data:`WRITE_LOCK_KEY`) and numbers its row ``max(sequence) + 1`` under it. PostgreSQL
makes a commit visible before it releases the transaction's locks, so the next writer
can only number its row after the previous row is visible: a reader that saw N never
later sees a new row below N. An advisory lock rather than ``LOCK TABLE``: it
serializes only our writers, never a reader, ``VACUUM`` or an index build, and roster
and desk changes take the same lock, so their read-validate-write is as safe as in
SQLite's single-writer file. Writers wait at most :data:`LOCK_TIMEOUT_MS` for it.

**Connections.** A pool (:data:`POOL_MAX` connections, autocommit) serves reads on the
caller's thread, like SQLite's; writes run on a worker thread. Every connection has a
connect timeout and a statement timeout. A read that meets a dropped connection or a
restarting server is retried (:data:`READ_ATTEMPTS`); a write is retried only if it
failed before it could have written anything, or when it carries an idempotency key.
Otherwise it is reported as :class:`~coderooms.store.errors.StoreUnavailable`: it may or
may not have happened, and a retry with the same key settles which.

**Live.** Each post sends ``NOTIFY`` on :data:`NOTIFY_CHANNEL` inside its transaction
(delivered at commit, in commit order). A store that waits for rows
(:meth:`~coderooms.store.base.Store.wait_for_rows`) keeps one extra connection that
``LISTEN`` s, and wakes its waiters when a notification arrives from any host.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import re
import threading
import time
import urllib.parse
from collections.abc import Callable, Iterable, Iterator
from typing import Any, TypeVar

import anyio.to_thread
import psycopg
import psycopg.conninfo
import psycopg.errors
from psycopg_pool import ConnectionPool, PoolTimeout

from coderooms.rooms.desks import DeskSet
from coderooms.rooms.records import LogMessage, Sequence, SessionAuthor
from coderooms.rooms.roster import Roster
from coderooms.store.errors import (
    CorruptDatabase,
    ImportOrderError,
    NewerSchema,
    ReadOnlyDatabase,
    SchemaMissing,
    StoreBusy,
    StoreError,
    StoreNotFound,
    StoreStopping,
    StoreUnavailable,
    ValueTooLarge,
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
from coderooms.store.urls import redacted_url
from coderooms.store.worksets import WORKSET_STAMP_POSTGRES, WORKSET_TABLES

__all__ = [
    "CANCEL_TIMEOUT_S",
    "CONNECT_TIMEOUT_S",
    "LOCK_TIMEOUT_MS",
    "MIGRATIONS",
    "NOTIFY_CHANNEL",
    "POOL_MAX",
    "READ_ATTEMPTS",
    "STATEMENT_TIMEOUT_MS",
    "WRITE_LOCK_KEY",
    "PostgresStore",
    "apply_migrations",
    "redacted_url",
]

POOL_MIN = 1
"""Connections a store keeps open while idle."""
POOL_MAX = 8
"""Connections a store opens at most; a call waits up to :data:`POOL_WAIT_S` for one."""
POOL_WAIT_S = 10.0
"""How long a call waits for a free pooled connection before giving up."""
POOL_LOG_LEVEL = logging.ERROR
"""The pool's own log (``psycopg.pool``) below this is not shown: its warnings of lost
and failed connections reached the terminal of every command as stray lines, while the
command's one error line says the same with the store's location."""
POOL_RECONNECT_S = 2.0
"""How long the pool keeps trying to replace a lost connection before it waits to be
asked again (its own retries back off to half a minute and more; see _connection)."""
CONNECT_TIMEOUT_S = 10
"""How long opening one connection may take."""
STATEMENT_TIMEOUT_MS = 30_000
"""The longest one statement may run (a runaway query is cancelled, not waited on)."""
LOCK_TIMEOUT_MS = 10_000
"""How long a writer waits for the write lock before :class:`StoreBusy`."""
CANCEL_TIMEOUT_S = 2.0
"""How long :meth:`PostgresStore.stop_waiting` gives the server to take each cancel."""
READ_ATTEMPTS = 3
"""How many times a read is tried when the connection drops or the server restarts."""
RETRY_PAUSE_S = 0.2
"""Pause before a retry (doubled each time)."""
WRITE_LOCK_KEY = 0x636F_6465_726F_6F6D
"""The advisory lock every write transaction holds ("coderoom" in ASCII)."""
MIGRATION_LOCK_KEY = WRITE_LOCK_KEY + 1
"""The advisory lock a migration holds, so two hosts opening a new database at once
do not both run it."""
NOTIFY_CHANNEL = "coderooms_log"
"""The channel a post notifies (payload: its sequence)."""
LISTEN_WAKE_S = 1.0
"""How often the listening thread looks up from the socket (to notice a close)."""
LISTEN_POLL_S = 1.0
"""How often a waiter asks the log itself anyway: rows posted while the listening
connection was being re-opened are still found within this."""

FOREIGN_DATABASE = "it holds tables named like coderooms's but no coderooms schema record"
_OUR_TABLES = ("messages", "authors", "agents", "people", "desks", "meta")

_T = TypeVar("_T")

_TOKEN_TABLES = {False: ("mcp_agent_tokens", "agent_id"), True: ("person_tokens", "person_id")}
"""Where each kind of token is kept: an agent's bearer token, a person's sign-in token."""

MIGRATIONS: tuple[Migration, ...] = (
    Migration(
        1,
        "rooms",
        (
            # The SQLite store's tables at its version 7, in PostgreSQL's types.
            """CREATE TABLE authors (
                ref INTEGER GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
                author_type TEXT NOT NULL,
                author_id TEXT,
                label TEXT NOT NULL
            )""",
            "CREATE UNIQUE INDEX authors_by_value ON authors "
            "(author_type, coalesce(author_id, ''), label)",
            """CREATE TABLE messages (
                sequence BIGINT PRIMARY KEY CHECK (sequence >= 0),
                chat_id TEXT,
                chat_key TEXT NOT NULL DEFAULT '',
                parent BIGINT,
                author INTEGER NOT NULL REFERENCES authors (ref),
                content TEXT NOT NULL,
                posted_at TEXT
            )""",
            # No content in the index (a btree entry holds about 2.7 kB at most): a desk
            # page reads its rows from the table, which for 64 rows is well under 1 ms.
            "CREATE INDEX messages_by_chat ON messages (chat_key, sequence)",
            "CREATE INDEX messages_by_parent ON messages (parent, sequence) "
            "WHERE parent IS NOT NULL",
            "CREATE TABLE post_keys (key TEXT PRIMARY KEY, sequence BIGINT NOT NULL)",
            """CREATE TABLE agents (
                position INTEGER GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
                id TEXT NOT NULL UNIQUE,
                name TEXT,
                retired INTEGER NOT NULL DEFAULT 0
            )""",
            """CREATE TABLE people (
                position INTEGER GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
                id TEXT NOT NULL UNIQUE,
                label TEXT NOT NULL
            )""",
            "CREATE TABLE meta (key TEXT PRIMARY KEY, value BIGINT NOT NULL)",
            "INSERT INTO meta (key, value) VALUES ('generation', 0)",
            """CREATE TABLE desks (
                position INTEGER GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
                id TEXT NOT NULL UNIQUE,
                name TEXT NOT NULL,
                description TEXT,
                responder_mode TEXT NOT NULL DEFAULT 'lead'
            )""",
            """CREATE TABLE desk_members (
                position INTEGER GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
                desk_id TEXT NOT NULL REFERENCES desks (id),
                agent_id TEXT NOT NULL,
                retired INTEGER NOT NULL DEFAULT 0,
                UNIQUE (desk_id, agent_id)
            )""",
            """CREATE TABLE desk_orders (
                desk_id TEXT PRIMARY KEY REFERENCES desks (id),
                ordered TEXT NOT NULL
            )""",
            # The HTTP server's bearer tokens (SQLite keeps them beside the store's
            # tables with their own record; here they are simply part of the schema).
            """CREATE TABLE mcp_agent_tokens (
                agent_id TEXT PRIMARY KEY,
                token_sha256 TEXT NOT NULL UNIQUE,
                issued_at BIGINT NOT NULL
            )""",
        ),
    ),
    Migration(
        2,
        "focus working sets and code pin snapshots",
        # PostgreSQL's REAL is single precision: a salience would not read back equal.
        (
            *(t.replace(" REAL ", " DOUBLE PRECISION ") for t in WORKSET_TABLES),
            CODE_PIN_TABLE,
            # The web UI's sign-in tokens for people, beside the agents' bearer tokens.
            """CREATE TABLE person_tokens (
                person_id TEXT PRIMARY KEY,
                token_sha256 TEXT NOT NULL UNIQUE,
                issued_at BIGINT NOT NULL
            )""",
        ),
    ),
    Migration(3, "focus working set stamps", WORKSET_STAMP_POSTGRES),
)
"""Every PostgreSQL schema step, oldest first. Append new steps; never edit one that
shipped. (Versions count on their own: they need not match the SQLite list's.)"""

SCHEMA_VERSION = MIGRATIONS[-1].version


@functools.lru_cache(maxsize=512)
def _pg_sql(sql: str) -> str:
    """A shared statement (``?`` placeholders) in the driver's form (``%s``)."""
    return sql.replace("%", "%%").replace("?", "%s")


class _PgDb:
    """A connection inside a transaction, taking the shared statements' ``?`` form."""

    __slots__ = ("connection",)

    def __init__(self, connection: psycopg.Connection[Any]) -> None:
        self.connection = connection

    def execute(self, sql: str, params: tuple[Any, ...] | list[Any] = ()) -> Any:
        return self.connection.execute(_pg_sql(sql), params)  # type: ignore[arg-type]


def _inspect(connection: psycopg.Connection[Any], location: str) -> set[int]:
    """The migration versions this database has recorded; refuses a database whose
    tables are someone else's, or written by a newer coderooms."""
    ((recorded_table,),) = connection.execute(
        "SELECT to_regclass('schema_migrations') IS NOT NULL"
    ).fetchall()
    if not recorded_table:
        clashes = connection.execute(
            "SELECT table_name FROM information_schema.tables "
            "WHERE table_schema = current_schema() AND table_name = ANY(%s)",
            (list(_OUR_TABLES),),
        ).fetchall()
        if clashes:
            raise CorruptDatabase(location, FOREIGN_DATABASE)
        return set()
    recorded = dict(connection.execute("SELECT version, name FROM schema_migrations").fetchall())
    newest = max(recorded, default=0)
    if newest > SCHEMA_VERSION:
        raise NewerSchema(location, newest, SCHEMA_VERSION)
    ours = {migration.version: migration.name for migration in MIGRATIONS}
    if any(ours.get(version) != name for version, name in recorded.items()):
        raise CorruptDatabase(location, FOREIGN_DATABASE)
    return set(recorded)


def apply_migrations(connection: psycopg.Connection[Any], target: int | None = None) -> list[int]:
    """Run every migration the database lacks, up to ``target`` (default: all), each
    in its own transaction under :data:`MIGRATION_LOCK_KEY`; the versions applied."""
    applied: list[int] = []
    for migration in MIGRATIONS:
        if target is not None and migration.version > target:
            break
        with connection.transaction():
            connection.execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATION_LOCK_KEY,))
            connection.execute(
                "CREATE TABLE IF NOT EXISTS schema_migrations ("
                "version INTEGER PRIMARY KEY, name TEXT NOT NULL, "
                "applied_at TIMESTAMPTZ NOT NULL DEFAULT now())"
            )
            done = connection.execute(
                "SELECT 1 FROM schema_migrations WHERE version = %s", (migration.version,)
            ).fetchone()
            if done is None:
                for statement in migration.statements:
                    connection.execute(statement)  # type: ignore[arg-type]
                connection.execute(
                    "INSERT INTO schema_migrations (version, name) VALUES (%s, %s)",
                    (migration.version, migration.name),
                )
                applied.append(migration.version)
    return applied


def _url_options(url: str) -> str:
    """The ``options`` a libpq URL sets already (``?options=-csearch_path%3Droom1``)."""
    try:
        return str(psycopg.conninfo.conninfo_to_dict(url).get("options") or "")
    except psycopg.ProgrammingError:
        return ""  # refused with its reason when the store connects


def _reason(err: BaseException) -> str:
    text = " ".join(str(err).split())
    return text or type(err).__name__


def _secrets(url: str) -> list[str]:
    """The password ``url`` carries, as written and decoded (longest first), in its
    ``user:password@`` part or a ``password=`` parameter: what a message must not repeat
    (the driver's own errors quote the URL, or the token it could not read)."""
    found: set[str] = set()
    for pattern in (r"://[^/@:]*:([^/@]*)@", r"(?i)password=([^&\s]*)"):
        for raw in re.findall(pattern, url):
            found.update({raw, urllib.parse.unquote(raw)})
    return sorted((s for s in found if s), key=len, reverse=True)


def scrubbed(text: str, url: str) -> str:
    """``text`` with the password of ``url`` replaced by ``***`` wherever it appears."""
    for secret in _secrets(url):
        text = text.replace(secret, "***")
    return redacted_url(text)


logging.getLogger("psycopg.pool").setLevel(POOL_LOG_LEVEL)

_NOT_CONNECTION_FAILURES = (
    psycopg.errors.QueryCanceled,
    psycopg.errors.LockNotAvailable,
    psycopg.errors.ProgramLimitExceeded,
)
"""Operational errors of one statement, not of the connection: never retried."""


class PostgresStore(SqlStore):
    """A :class:`~coderooms.store.base.Store` in one PostgreSQL database.

    ``url`` is a libpq URL (``postgresql://user@host:port/db``, with ``?host=/dir`` for
    a unix socket). With ``existing`` a database that coderooms has not set up yet is
    :class:`~coderooms.store.errors.StoreNotFound` instead of being set up.
    """

    schema_version = SCHEMA_VERSION

    def __init__(
        self,
        url: str,
        clock: Clock | None = None,
        *,
        existing: bool = False,
        pool_wait_s: float = POOL_WAIT_S,
    ) -> None:
        self.url = url
        self.location = redacted_url(url)
        self._clock = clock if clock is not None else utc_now
        self.read_only = False
        self._init_caches()
        self._listener: threading.Thread | None = None
        self._closing = threading.Event()
        self._write_lock = threading.Lock()
        self._stopping = threading.Event()  # stop_waiting() was called
        self._degraded = False  # the pool's connections failed: connect directly (see _connection)
        self._lock_waiters: set[psycopg.Connection[Any]] = set()  # waiting for WRITE_LOCK_KEY
        self._waiting_guard = threading.Lock()
        options = f"-c statement_timeout={STATEMENT_TIMEOUT_MS} -c lock_timeout={LOCK_TIMEOUT_MS}"
        given = _url_options(url)
        if given:  # the URL's own (a search_path, say) come first; ours are the bounds
            options = f"{given} {options}"
        self._connect_args: dict[str, Any] = {
            "autocommit": True,
            "connect_timeout": CONNECT_TIMEOUT_S,
            "options": options,
            "application_name": "coderooms",
        }
        self._open(existing)
        self._pool: ConnectionPool[psycopg.Connection[Any]] = ConnectionPool(
            url,
            min_size=POOL_MIN,
            max_size=POOL_MAX,
            timeout=pool_wait_s,
            kwargs=self._connect_args,
            open=False,
            name="coderooms",
            reconnect_timeout=POOL_RECONNECT_S,
        )
        try:
            self._pool.open(wait=True, timeout=CONNECT_TIMEOUT_S)
        except PoolTimeout:
            self._pool.close()
            raise StoreUnavailable(self.location, "no connection within the timeout") from None

    def _connect(self) -> psycopg.Connection[Any]:
        try:
            return psycopg.connect(self.url, **self._connect_args)
        except psycopg.OperationalError as err:
            raise StoreUnavailable(self.location, self._why(err)) from None
        except psycopg.ProgrammingError as err:  # a URL libpq cannot parse
            raise StoreUnavailable(self.location, self._why(err)) from None

    def _open(self, existing: bool) -> None:
        """Check the schema and run missing migrations, on a connection of its own."""
        with self._connect() as connection:
            try:
                if connection.execute("SELECT current_schema()").fetchone() == (None,):
                    raise SchemaMissing(self.location)  # search_path names none that exists
                recorded = _inspect(connection, self.location)
                if not recorded and existing:
                    raise StoreNotFound(self.location)
                if recorded != {m.version for m in MIGRATIONS}:
                    apply_migrations(connection)
            except psycopg.OperationalError as err:
                raise StoreUnavailable(self.location, self._why(err)) from None
            except psycopg.errors.InsufficientPrivilege as err:
                raise ReadOnlyDatabase(self.location) from err
            except psycopg.DatabaseError as err:
                raise CorruptDatabase(self.location, self._why(err)) from None

    def close(self) -> None:
        """Close the pool, once a write waiting for the write lock (one left behind by
        Ctrl-C, say) has given up: it is cancelled, rolled back, and writes nothing."""
        self._closing.set()
        self.stop_waiting()
        self._pool.close()
        if self._listener is not None:
            self._listener.join(LISTEN_WAKE_S * 2)

    def stop_waiting(self) -> None:
        """From now on a write waiting for :data:`WRITE_LOCK_KEY` gives up at once, as
        :class:`StoreStopping`, its transaction rolled back: the ones waiting now are
        cancelled on the server; later ones that find the lock taken do not wait. One
        that finds it free still writes."""
        self._stopping.set()
        with self._waiting_guard:  # a writer leaves the set only once its cancel is sent
            for connection in self._lock_waiters:
                with contextlib.suppress(psycopg.Error):
                    connection.cancel_safe(timeout=CANCEL_TIMEOUT_S)

    def _take_write_lock(self, connection: psycopg.Connection[Any]) -> None:
        """Wait for :data:`WRITE_LOCK_KEY` in the open transaction, unless the store has
        been told to stop waiting (:meth:`stop_waiting`)."""
        with self._waiting_guard:
            self._lock_waiters.add(connection)
        try:
            if not self._stopping.is_set():
                connection.execute("SELECT pg_advisory_xact_lock(%s)", (WRITE_LOCK_KEY,))
                return
            taken = connection.execute(
                "SELECT pg_try_advisory_xact_lock(%s)", (WRITE_LOCK_KEY,)
            ).fetchone()
            if not (taken and taken[0]):
                raise StoreStopping(self.location)
        finally:
            with self._waiting_guard:
                self._lock_waiters.discard(connection)

    def _why(self, err: BaseException) -> str:
        """What went wrong, in the driver's words, never with the URL's password."""
        return scrubbed(_reason(err), self.url)

    # --- transport ------------------------------------------------------------------------

    def _failure(self, err: psycopg.Error) -> StoreError:
        if isinstance(err, psycopg.errors.LockNotAvailable):
            return StoreBusy(self.location, LOCK_TIMEOUT_MS)
        if isinstance(err, psycopg.errors.InsufficientPrivilege):
            return ReadOnlyDatabase(self.location)
        if isinstance(err, psycopg.errors.ProgramLimitExceeded):
            return ValueTooLarge(self.location, self._why(err))
        if isinstance(err, psycopg.OperationalError | psycopg.InterfaceError):
            return StoreUnavailable(self.location, self._why(err))
        return CorruptDatabase(self.location, self._why(err))

    @staticmethod
    def _retryable(err: BaseException) -> bool:
        """A dropped connection, a server shutting down or starting, no connection."""
        if isinstance(err, PoolTimeout):
            return False  # it has waited its whole allowance for a connection already
        if isinstance(err, _NOT_CONNECTION_FAILURES):
            return False
        return isinstance(err, psycopg.OperationalError | psycopg.InterfaceError)

    @contextlib.contextmanager
    def _connection(self) -> Iterator[psycopg.Connection[Any]]:
        """A pooled connection; while the pool cannot give one (the server went away, and
        the pool waits to try again), a connection of its own: a call while the server
        is down says why at once instead of waiting :data:`POOL_WAIT_S` for the pool,
        and the first call once it is back is answered."""
        if not self._degraded:
            with self._pool.connection() as connection:
                yield connection
            return
        connection = psycopg.connect(self.url, **self._connect_args)
        try:
            yield connection
        finally:
            connection.close()
        if self._pool.get_stats().get("pool_available", 0) > 0:
            self._degraded = False  # the pool has connections again
        else:
            self._pool.check()  # the server answers: let the pool grow back

    def _note_failure(self, err: BaseException) -> None:
        """A connection that failed (the server stopped or restarted): the pool's own
        connections are suspect until it has a working one again."""
        if self._retryable(err):
            self._degraded = True

    def _reading(self, work: Callable[[psycopg.Connection[Any]], _T]) -> _T:
        """Run a read on a pooled connection, retried when the connection fails."""
        pause = RETRY_PAUSE_S
        for attempt in range(READ_ATTEMPTS):
            try:
                with self._connection() as connection:
                    return work(connection)
            except (psycopg.Error, PoolTimeout) as err:
                self._note_failure(err)
                if not self._retryable(err) or attempt == READ_ATTEMPTS - 1:
                    if isinstance(err, PoolTimeout):
                        raise StoreUnavailable(self.location, self._why(err)) from None
                    raise self._failure(err) from None
                self._pool.check()  # drop every idle connection the restart killed
                time.sleep(pause)
                pause *= 2
        raise AssertionError("unreachable")

    def _query(self, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        statement = _pg_sql(sql)
        return self._reading(lambda c: c.execute(statement, params).fetchall())  # type: ignore[arg-type]

    async def _writing(self, work: Callable[[Db], _T], *, idempotent: bool = False) -> _T:
        return await anyio.to_thread.run_sync(self._write_now, work, idempotent)

    def _write_now(self, work: Callable[[Db], _T], idempotent: bool = False) -> _T:
        """One write transaction under :data:`WRITE_LOCK_KEY`. Retried on a failed
        connection only while nothing can have been written, or when ``idempotent``."""
        pause = RETRY_PAUSE_S
        for attempt in range(READ_ATTEMPTS):
            wrote = False
            try:
                with self._write_lock, self._connection() as connection:
                    with connection.transaction():
                        self._take_write_lock(connection)
                        wrote = True
                        return work(_PgDb(connection))
            except (psycopg.Error, PoolTimeout) as err:
                self._note_failure(err)
                if isinstance(err, psycopg.errors.QueryCanceled) and self._stopping.is_set():
                    raise StoreStopping(self.location) from None  # rolled back: none written
                safe = not wrote or idempotent
                if not (safe and self._retryable(err)) or attempt == READ_ATTEMPTS - 1:
                    if isinstance(err, PoolTimeout):
                        raise StoreUnavailable(self.location, self._why(err)) from None
                    if isinstance(err, psycopg.errors.UniqueViolation | psycopg.DataError):
                        raise CorruptDatabase(self.location, self._why(err)) from None
                    raise self._failure(err) from None
                self._pool.check()
                time.sleep(pause)
                pause *= 2
        raise AssertionError("unreachable")

    def _snapshots(self, db: Db | None = None) -> tuple[Roster, DeskSet]:
        if db is not None:
            return self._snapshots_in(db)
        known = self._snapshot[0]
        ((generation,),) = self._query("SELECT value FROM meta WHERE key = 'generation'")
        if generation == known:
            return self._snapshot[1], self._snapshot[2]

        def load(connection: psycopg.Connection[Any]) -> tuple[Roster, DeskSet]:
            with connection.transaction():
                connection.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
                return self._snapshots_in(_PgDb(connection))

        return self._reading(load)

    def _append_row(self, db: Db, row: tuple[Any, ...]) -> Sequence:
        # numbered under the write lock (see the module's docstring), one past the newest
        ((sequence,),) = db.execute(
            "INSERT INTO messages (sequence, chat_id, chat_key, parent, author, content, "
            "posted_at) SELECT coalesce(max(sequence), 0) + 1, ?::text, ?::text, ?::bigint, "
            "?::integer, ?::text, ?::text FROM messages RETURNING sequence",
            row,
        ).fetchall()
        db.execute("SELECT pg_notify(?, ?)", (NOTIFY_CHANNEL, str(sequence)))
        return int(sequence)

    # --- bulk import ----------------------------------------------------------------------

    def import_messages(self, messages: Iterable[LogMessage]) -> int:
        refs: dict[SessionAuthor, int] = {}

        def append(db: Db) -> int:
            # a maintenance call: a million rows may take longer than one statement may
            db.execute("SET LOCAL statement_timeout = 0")
            ((latest,),) = db.execute("SELECT coalesce(max(sequence), -1) FROM messages").fetchall()
            # checked whole before COPY starts: nothing else can run on the
            # connection while it streams, and a refused row must import nothing
            rows = list(messages)
            for message in rows:
                if not latest < message.sequence <= MAX_SEQUENCE:
                    raise ImportOrderError(message.sequence, latest)
                latest = message.sequence
                if message.author not in refs:
                    for value in _author_columns(message.author):
                        _require_text(f"the author of imported message {message.sequence}", value)
                    refs[message.author] = self._author_ref(db, message.author)
                _require_text(f"the desk of imported message {message.sequence}", message.chat_id)
                _require_text(
                    f"the content of imported message {message.sequence}", message.content
                )
            with db.connection.cursor().copy(
                "COPY messages (sequence, chat_id, chat_key, parent, author, content, "
                "posted_at) FROM STDIN"
            ) as copy:
                for message in rows:
                    copy.write_row(
                        (
                            message.sequence,
                            message.chat_id,
                            chat_key(message.chat_id),
                            message.parent,
                            refs[message.author],
                            message.content,
                            message.posted_at,
                        )
                    )
            if rows:
                db.execute("SELECT pg_notify(?, ?)", (NOTIFY_CHANNEL, str(latest)))
            return len(rows)

        count = self._write_now(append)
        for author, ref in refs.items():
            self._committed_ref(author, ref)
        if count:
            self._wake_waiters()
        return count

    # --- the live feed --------------------------------------------------------------------

    _wait_poll_s = LISTEN_POLL_S

    def _waiting(self) -> None:
        """Start the listening thread the first time someone waits for rows."""
        if self._listener is None and not self._closing.is_set():
            self._listener = threading.Thread(
                target=self._listen, name="coderooms-listen", daemon=True
            )
            self._listener.start()

    def _listen(self) -> None:
        """``LISTEN`` on its own connection; wake the waiters on each notification. A
        dropped connection is opened again (waiters poll meanwhile)."""
        pause = RETRY_PAUSE_S
        while not self._closing.is_set():
            try:
                with psycopg.connect(self.url, **self._connect_args) as connection:
                    connection.execute(f"LISTEN {NOTIFY_CHANNEL}")
                    pause = RETRY_PAUSE_S
                    self._wake_waiters()  # rows may have landed while it was away
                    while not self._closing.is_set():
                        for _ in connection.notifies(timeout=LISTEN_WAKE_S, stop_after=1):
                            self._wake_waiters()
            except psycopg.Error:
                with contextlib.suppress(Exception):
                    self._closing.wait(pause)
                pause = min(pause * 2, LISTEN_POLL_S * 4)

    # --- tokens of the HTTP server ----------------------------------------------------------

    def set_token(self, holder: str, digest: str, issued_at: int, *, person: bool = False) -> None:
        """Store the token hash of agent ``holder`` (a person's web sign-in token with
        ``person``), replacing its earlier one."""
        table, column = _TOKEN_TABLES[person]

        def store(db: Db) -> None:
            db.execute(
                f"INSERT INTO {table} ({column}, token_sha256, issued_at) "
                f"VALUES (?, ?, ?) ON CONFLICT ({column}) DO UPDATE SET "
                "token_sha256 = excluded.token_sha256, issued_at = excluded.issued_at",
                (holder, digest, issued_at),
            )

        self._write_now(store)

    def token_holder(self, digest: str, *, person: bool = False) -> str | None:
        """The agent (with ``person``: the person) whose token hashes to ``digest``."""
        table, column = _TOKEN_TABLES[person]
        rows = self._query(f"SELECT {column} FROM {table} WHERE token_sha256 = ?", (digest,))
        return str(rows[0][0]) if rows else None
