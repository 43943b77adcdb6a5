"""The conformance suite runs against every SessionLog implementation registered here.

A factory takes well-formed rows (strictly increasing sequences, oldest first) and
returns a log that holds exactly those rows under exactly those sequences. Hosts add
their own entry (for example ``"sqlite"``) to :data:`LOG_FACTORIES`.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from coderooms.rooms.memory import MemoryLog
from coderooms.rooms.records import LogMessage
from coderooms.rooms.session import SessionLog
from coderooms.store.sqlite import SQLiteStore

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


@pytest.fixture(params=sorted(LOG_FACTORIES))
def make_log(request: pytest.FixtureRequest) -> LogFactory:
    factory: LogFactory = LOG_FACTORIES[request.param]
    return factory
