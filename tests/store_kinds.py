"""Stores of every kind for the parametrized suites (the fixtures are in conftest.py)."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from coderooms.store.base import Store
from coderooms.store.scratch import ScratchCluster
from coderooms.store.sqlite import SQLiteStore

STORE_KINDS = ("sqlite", "postgres")
"""The store implementations every parametrized suite runs against."""
TEST_DATABASE = "coderooms_tests"
"""The PostgreSQL database the tests' stores live in, one schema each."""

_databases = itertools.count()


def next_database() -> str:
    """A name for one more test database (or SQLite file) this session."""
    return f"t{next(_databases)}"


class StoreMaker:
    """Makes empty stores of one kind for a test, and closes them all at its end."""

    def __init__(self, kind: str, request: pytest.FixtureRequest, tmp_path: Path) -> None:
        self.kind = kind
        self._request = request
        self._tmp_path = tmp_path
        self._opened: list[Store] = []
        self._where: dict[int, str] = {}

    def __call__(self) -> Store:
        """A new, empty store."""
        if self.kind == "sqlite":
            where = str(self._tmp_path / f"rooms-{next_database()}.db")
        else:
            cluster: ScratchCluster = self._request.getfixturevalue("pg_cluster")
            where = cluster.create_schema(TEST_DATABASE, next_database())
        return self._open(where)

    def again(self, store: Store) -> Store:
        """Another handle on the same store (another process, another host)."""
        return self._open(self._where[id(store)])

    def url(self, store: Store) -> str:
        """What ``open_store`` and ``--db`` take for this store."""
        where = self._where[id(store)]
        return where if self.kind == "postgres" else f"sqlite:///{where}"

    def _open(self, where: str) -> Store:
        store: Store
        if self.kind == "sqlite":
            store = SQLiteStore(where)
        else:
            from coderooms.store.postgres import PostgresStore

            store = PostgresStore(where)
        self._opened.append(store)
        self._where[id(store)] = where
        return store

    def close(self) -> None:
        for store in self._opened:
            store.close()
