"""``.coderooms/index.db``: the persisted code graph, with ordered, recorded migrations."""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import threading
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import orjson

from coderooms.index.errors import (
    CodeIndexError,
    IndexBusy,
    IndexDatabaseError,
    IndexTooNew,
    IndexUnopenable,
    UnreadableFacts,
)
from coderooms.index.facts import FileFacts, ImportFact, SymbolFact, encode_facts

__all__ = [
    "MIGRATIONS",
    "SCHEMA_VERSION",
    "connect",
    "database_error",
    "migrate",
    "encode_facts",
    "decode_facts",
    "load_facts",
    "write_file",
    "write_new_files",
    "delete_file",
    "drop_indexes",
    "get_meta",
    "set_meta",
]

SQLITE_TIMEOUT_SECONDS = 30.0

# What a migration runs when extraction learns something new: the stored facts and what
# was resolved from them go, and the next index extracts every file again.
EXTRACT_AGAIN = """
DELETE FROM files;
DELETE FROM symbols;
DELETE FROM edges;
DELETE FROM unresolved;
DELETE FROM exports;
DELETE FROM skipped;
DELETE FROM meta WHERE key = 'generation';
"""

# Each migration runs once, in order, inside one transaction, and is recorded in
# schema_migrations, so an index.db written by an older version opens in a newer one.
MIGRATIONS: tuple[tuple[int, str, str], ...] = (
    (
        1,
        "code graph",
        """
        CREATE TABLE files (
            path TEXT PRIMARY KEY,
            language TEXT NOT NULL,
            content_hash TEXT NOT NULL,
            size INTEGER NOT NULL,
            lines INTEGER NOT NULL,
            mtime_ns INTEGER NOT NULL,
            is_test INTEGER NOT NULL,
            is_generated INTEGER NOT NULL,
            is_vendored INTEGER NOT NULL,
            parse_error INTEGER NOT NULL,
            decode_replaced INTEGER NOT NULL,
            facts TEXT NOT NULL,
            uses TEXT NOT NULL
        );
        CREATE TABLE symbols (
            id TEXT PRIMARY KEY,
            path TEXT NOT NULL,
            kind TEXT NOT NULL,
            name TEXT NOT NULL,
            qualname TEXT NOT NULL,
            parent TEXT,
            start_line INTEGER NOT NULL,
            end_line INTEGER NOT NULL,
            signature TEXT NOT NULL,
            docstring TEXT NOT NULL,
            content_hash TEXT NOT NULL,
            is_test INTEGER NOT NULL,
            size_bytes INTEGER NOT NULL
        );
        CREATE INDEX symbols_by_path ON symbols(path);
        CREATE TABLE edges (
            src TEXT NOT NULL,
            dst TEXT NOT NULL,
            kind TEXT NOT NULL,
            weight REAL NOT NULL,
            origin TEXT NOT NULL
        );
        CREATE INDEX edges_by_origin ON edges(origin);
        CREATE TABLE unresolved (
            path TEXT PRIMARY KEY,
            builtin INTEGER NOT NULL,
            external INTEGER NOT NULL,
            ambiguous INTEGER NOT NULL,
            unknown INTEGER NOT NULL
        );
        CREATE TABLE skipped (
            path TEXT PRIMARY KEY,
            reason TEXT NOT NULL,
            size INTEGER NOT NULL,
            mtime_ns INTEGER NOT NULL
        );
        CREATE TABLE signals (
            path TEXT PRIMARY KEY,
            commit_count INTEGER NOT NULL,
            last_change INTEGER NOT NULL
        );
        CREATE TABLE co_changes (
            a TEXT NOT NULL,
            b TEXT NOT NULL,
            count INTEGER NOT NULL,
            PRIMARY KEY (a, b)
        ) WITHOUT ROWID;
        CREATE TABLE meta (
            key TEXT PRIMARY KEY,
            value TEXT NOT NULL
        );
        """,
    ),
    (
        2,
        "exports digests",
        """
        CREATE TABLE exports (
            path TEXT PRIMARY KEY,
            digest TEXT NOT NULL
        );
        """,
    ),
    (
        3,
        "type evidence in the facts: every file is extracted again",
        EXTRACT_AGAIN,
    ),
    (
        4,
        "call-result receivers, return and __all__ evidence, locals, self reads: extract again",
        EXTRACT_AGAIN,
    ),
    (
        5,
        "decorators in the facts; no name match to properties or nested code: extract again",
        EXTRACT_AGAIN,
    ),
    (
        6,
        "with-statement and except-clause targets in the type evidence: extract again",
        EXTRACT_AGAIN,
    ),
    (
        7,
        "calls through inherited cls()/Self methods and renamed module attributes: again",
        EXTRACT_AGAIN,
    ),
)
SCHEMA_VERSION = MIGRATIONS[-1][0]


def connect(path: str) -> sqlite3.Connection:
    """Open (creating if needed) and migrate the index database at ``path``."""
    try:
        conn = sqlite3.connect(
            path, timeout=SQLITE_TIMEOUT_SECONDS, isolation_level=None, check_same_thread=False
        )
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
        conn.execute("PRAGMA foreign_keys=OFF")
        migrate(conn, path)
    except sqlite3.DatabaseError as exc:
        raise database_error(path, exc) from exc
    return conn


WAL_AUTOCHECKPOINT_PAGES = 1000
"""SQLite's default: a commit that leaves the write-ahead log past this many pages copies
it into the database file (see :func:`commit_checkpointing_aside`)."""


def commit_checkpointing_aside(conn: sqlite3.Connection) -> threading.Thread:
    """COMMIT the open transaction of ``conn`` without copying the write-ahead log into
    the database file there and then: a thread of its own copies it (a passive
    checkpoint, on a connection of its own), outside the GIL, while this one goes on.
    A cold build logs the whole index (about 100 MB on sympy): copying and syncing it
    took 0.25-0.29 s of its commit's 0.28-0.33 s. A checkpoint that fails leaves the
    log to the next one (any connection's commit or close makes it); readers read
    through the log meanwhile. The thread is not a daemon: a process ends with its
    log copied, and :func:`wait_for_checkpoints` (a workspace's close) waits for it."""
    (_, _, path) = conn.execute("PRAGMA database_list").fetchone()
    conn.execute("PRAGMA wal_autocheckpoint=0")
    try:
        conn.execute("COMMIT")
    finally:
        conn.execute(f"PRAGMA wal_autocheckpoint={WAL_AUTOCHECKPOINT_PAGES}")

    def checkpoint() -> None:
        with contextlib.suppress(sqlite3.Error):
            other = sqlite3.connect(path, timeout=SQLITE_TIMEOUT_SECONDS, isolation_level=None)
            try:
                other.execute("PRAGMA wal_checkpoint(PASSIVE)")
            finally:
                other.close()

    thread = threading.Thread(target=checkpoint, name="coderooms-checkpoint")
    with _checkpoints_lock:  # started under the lock: a waiter never joins it unstarted
        _checkpoints.setdefault(path, []).append(thread)
        thread.start()
    return thread


# Checkpoint threads started by this process, by database path, until waited for.
_checkpoints: dict[str, list[threading.Thread]] = {}
_checkpoints_lock = threading.Lock()


def wait_for_checkpoints(path: str) -> None:
    """Return once every checkpoint this process started on the database at ``path``
    has ended: whoever closes a workspace may then copy or delete its files (the log
    is removed as the checkpoint's connection closes)."""
    real = os.path.realpath(path)
    with _checkpoints_lock:
        threads = [
            thread
            for key in [key for key in _checkpoints if os.path.realpath(key) == real]
            for thread in _checkpoints.pop(key)
        ]
    for thread in threads:
        thread.join()


def database_error(path: str, exc: sqlite3.DatabaseError) -> CodeIndexError:
    """The typed error for a failure of the database at ``path``: a lock another process
    held past the timeout is not damage, so it never says to delete the index."""
    code = getattr(exc, "sqlite_errorcode", 0) & 0xFF
    if code == sqlite3.SQLITE_BUSY:
        return IndexBusy(path)
    if code in _NOT_OPENABLE:
        reason = "it is a directory" if os.path.isdir(path) else str(exc)
        return IndexUnopenable(path, reason)
    return IndexDatabaseError(path, str(exc))


# Failures to open or write the file that are no damage to it: a read-only file or mount
# (READONLY), permissions (PERM, AUTH), no file to be had at the path (CANTOPEN).
_NOT_OPENABLE = frozenset(
    {sqlite3.SQLITE_READONLY, sqlite3.SQLITE_PERM, sqlite3.SQLITE_AUTH, sqlite3.SQLITE_CANTOPEN}
)


def migrate(conn: sqlite3.Connection, path: str) -> None:
    conn.execute(
        "CREATE TABLE IF NOT EXISTS schema_migrations ("
        "version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)"
    )
    done = {row[0] for row in conn.execute("SELECT version FROM schema_migrations")}
    newest = max(done, default=0)
    if newest > SCHEMA_VERSION:
        raise IndexTooNew(path, newest, SCHEMA_VERSION)
    for version, name, sql in MIGRATIONS:
        if version in done:
            continue
        conn.execute("BEGIN IMMEDIATE")
        try:
            # Another process may have applied it while this one waited for the lock.
            if not conn.execute(
                "SELECT 1 FROM schema_migrations WHERE version = ?", (version,)
            ).fetchone():
                for statement in sql.split(";"):
                    if statement.strip():
                        conn.execute(statement)
                conn.execute(
                    "INSERT INTO schema_migrations(version, name, applied_at) VALUES (?, ?, ?)",
                    (version, name, datetime.now(UTC).isoformat(timespec="seconds")),
                )
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise


# --- facts (de)serialisation --------------------------------------------------------


def decode_facts(row: tuple[Any, ...], symbols: list[SymbolFact]) -> FileFacts:
    (
        path,
        language,
        content_hash,
        size,
        lines,
        is_test,
        is_generated,
        is_vendored,
        parse_error,
        decode_replaced,
        blob,
    ) = row
    try:
        data = orjson.loads(str(blob))
        imports = [
            ImportFact(
                module=m, names=tuple((a, b) for a, b in names), alias=alias, level=level, line=line
            )
            for m, names, alias, level, line in data["i"]
        ]
        calls = [(o, r, n, c) for o, r, n, c in data["c"]]
        refs = [(o, r, n) for o, r, n in data["r"]]
        bases = [(o, b) for o, b in data["b"]]
        types = [(o, v, e) for o, v, e in data.get("t", ())]
    except (ValueError, TypeError, KeyError) as exc:
        raise UnreadableFacts(str(path)) from exc
    facts = FileFacts(
        path=str(path),
        language=str(language),
        content_hash=str(content_hash),
        size=int(size),
        lines=int(lines),
        is_test=bool(is_test),
        parse_error=bool(parse_error),
        decode_replaced=bool(decode_replaced),
        is_generated=bool(is_generated),
        is_vendored=bool(is_vendored),
    )
    facts.symbols = symbols
    facts.imports = imports
    facts.calls = calls
    facts.refs = refs
    facts.bases = bases
    facts.types = types
    return facts


FACT_COLUMNS = (
    "path, language, content_hash, size, lines, is_test, is_generated, is_vendored, "
    "parse_error, decode_replaced, facts"
)
SYMBOL_COLUMNS = (
    "id, kind, name, qualname, parent, start_line, end_line, signature, docstring, "
    "content_hash, is_test, size_bytes"
)


def symbol_from_row(row: tuple[Any, ...]) -> SymbolFact:
    sid, kind, name, qualname, parent, start, end, sig, doc, chash, is_test, size = row
    return SymbolFact(
        id=str(sid),
        kind=str(kind),
        name=str(name),
        qualname=str(qualname),
        parent=None if parent is None else str(parent),
        start_line=int(start),
        end_line=int(end),
        signature=str(sig),
        docstring=str(doc),
        content_hash=str(chash),
        is_test=bool(is_test),
        size_bytes=int(size),
    )


def load_facts(conn: sqlite3.Connection, path: str) -> FileFacts | None:
    row = conn.execute(f"SELECT {FACT_COLUMNS} FROM files WHERE path = ?", (path,)).fetchone()
    if row is None:
        return None
    symbols = [
        symbol_from_row(r)
        for r in conn.execute(
            f"SELECT {SYMBOL_COLUMNS} FROM symbols WHERE path = ? ORDER BY start_line, id", (path,)
        )
    ]
    return decode_facts(row, symbols)


def write_file(
    conn: sqlite3.Connection, facts: FileFacts, mtime_ns: int, *, replace: bool = True
) -> None:
    """Store one file and its symbols (``replace=False``: the file is not stored yet)."""
    if replace:
        conn.execute("DELETE FROM symbols WHERE path = ?", (facts.path,))
    write_new_files(conn, [(facts, mtime_ns)])


def write_new_files(conn: sqlite3.Connection, files: list[tuple[FileFacts, int]]) -> None:
    """Store files not stored yet (each with its mtime) and their symbols, in two
    statements: a cold build writes its files in batches."""
    conn.executemany(
        "INSERT OR REPLACE INTO files VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
        [
            (
                facts.path,
                facts.language,
                facts.content_hash,
                facts.size,
                facts.lines,
                mtime_ns,
                int(facts.is_test),
                int(facts.is_generated),
                int(facts.is_vendored),
                int(facts.parse_error),
                int(facts.decode_replaced),
                facts.encoded or encode_facts(facts),
                facts.uses,
            )
            for facts, mtime_ns in files
        ],
    )
    conn.executemany(
        "INSERT INTO symbols VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
        [
            (
                s.id,
                facts.path,
                s.kind,
                s.name,
                s.qualname,
                s.parent,
                s.start_line,
                s.end_line,
                s.signature,
                s.docstring,
                s.content_hash,
                int(s.is_test),
                s.size_bytes,
            )
            for facts, _ in files
            for s in facts.symbols
        ],
    )


def delete_file(conn: sqlite3.Connection, path: str) -> None:
    for table in ("files", "symbols", "unresolved", "exports"):
        conn.execute(f"DELETE FROM {table} WHERE path = ?", (path,))
    conn.execute("DELETE FROM edges WHERE origin = ?", (path,))


def drop_indexes(conn: sqlite3.Connection, tables: tuple[str, ...]) -> list[str]:
    """Drop the secondary indexes of ``tables`` and return the statements that rebuild
    them: a bulk load into empty tables then builds each index once, not row by row."""
    marks = ",".join("?" * len(tables))
    found = conn.execute(
        "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL "
        f"AND tbl_name IN ({marks}) ORDER BY name",
        tables,
    ).fetchall()
    for name, _ in found:
        conn.execute(f'DROP INDEX "{name}"')
    return [str(sql) for _, sql in found]


DELTA_KEY = "delta"  # meta: what the last run changed (see GenerationDelta)


@dataclass(frozen=True, slots=True)
class GenerationDelta:
    """What one indexing run changed: going from generation ``before`` to ``after``,
    only the files in ``paths`` have other rows in files and symbols, or other edges of
    that origin (signals and co-changes are not covered: read them whole). A reader
    holding the graph of ``before`` patches those files' rows instead of reading all."""

    before: str
    after: str
    paths: tuple[str, ...]

    def encoded(self) -> str:
        return json.dumps([self.before, self.after, list(self.paths)])

    @classmethod
    def read(cls, conn: sqlite3.Connection) -> GenerationDelta | None:
        """The delta of the last run, or None (a cold build, an older index, or a value
        that is not one)."""
        try:
            before, after, paths = json.loads(get_meta(conn, DELTA_KEY) or "null")
        except (TypeError, ValueError):
            return None
        if not (isinstance(before, str) and isinstance(after, str) and isinstance(paths, list)):
            return None
        if not all(isinstance(path, str) for path in paths):
            return None
        return cls(before, after, tuple(paths))


def get_meta(conn: sqlite3.Connection, key: str, default: str = "") -> str:
    row = conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
    return str(row[0]) if row else default


def set_meta(conn: sqlite3.Connection, key: str, value: str) -> None:
    conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (key, value))
