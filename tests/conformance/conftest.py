"""The conformance suite runs against every SessionLog implementation registered here.

A factory takes well-formed rows (strictly increasing sequences, oldest first) and
returns a log that holds exactly those rows under exactly those sequences. Hosts add
their own entry (for example ``"sqlite"``) to :data:`LOG_FACTORIES`; the PostgreSQL
store, which needs the session's cluster, is added by :func:`make_log` itself.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from coderooms.rooms.memory import MemoryLog
from coderooms.rooms.records import LogMessage
from coderooms.rooms.session import SessionLog
from coderooms.store.base import Store
from coderooms.store.sqlite import SQLiteStore
from store_kinds import TEST_DATABASE, next_database

LogFactory = Callable[[list[LogMessage]], SessionLog]


def sqlite_log(rows: list[LogMessage]) -> SessionLog:
    """A private in-memory SQLite store holding exactly ``rows`` (bulk import)."""
    store = SQLiteStore(":memory:")
    store.import_messages(rows)
    return store


LOG_FACTORIES: dict[str, LogFactory] = {
    "memory": MemoryLog,
    "sqlite": sqlite_log,
}


def postgres_log(url: str) -> LogFactory:
    """Bulk import into a fresh PostgreSQL store (closed when the session ends)."""

    def make(rows: list[LogMessage]) -> SessionLog:
        from coderooms.store.postgres import PostgresStore

        store = PostgresStore(url)
        store.import_messages(rows)
        _opened.append(store)
        return store

    return make


_opened: list[SessionLog] = []


@pytest.fixture(params=[*sorted(LOG_FACTORIES), "postgres"])
def make_log(request: pytest.FixtureRequest) -> Iterator[LogFactory]:
    if request.param == "postgres":
        # each factory call is a fresh schema: pg_url is per test, so ask per call
        cluster = request.getfixturevalue("pg_cluster")
        yield lambda rows: postgres_log(cluster.create_schema(TEST_DATABASE, next_database()))(rows)
        while _opened:
            store = _opened.pop()
            assert isinstance(store, Store)
            store.close()
        return
    factory: LogFactory = LOG_FACTORIES[request.param]
    yield factory
