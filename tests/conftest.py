"""Fixtures every test directory shares: the stores the parametrized suites run over.

The PostgreSQL half runs on a throwaway cluster this session starts and stops
(:class:`~coderooms.store.scratch.ScratchCluster`); each store a test makes lives in a
schema of its own in one database. Without the server binaries the PostgreSQL half is
skipped with the reason, except where ``CODEROOMS_REQUIRE_POSTGRES=1`` says it must run
(CI), where it fails instead.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from coderooms.store.scratch import ScratchCluster, ScratchUnavailable
from store_kinds import STORE_KINDS, TEST_DATABASE, StoreMaker, next_database

REQUIRE_POSTGRES_ENV = "CODEROOMS_REQUIRE_POSTGRES"


@pytest.fixture(scope="session")
def pg_cluster() -> Iterator[ScratchCluster]:
    """A running throwaway PostgreSQL cluster for the whole session."""
    cluster = ScratchCluster(durable=False)
    try:
        cluster.start()
    except ScratchUnavailable as why:
        if os.environ.get(REQUIRE_POSTGRES_ENV) == "1":
            pytest.fail(f"{REQUIRE_POSTGRES_ENV}=1 but {why}")
        pytest.skip(f"PostgreSQL half skipped: {why}")
    try:
        cluster.create_database(TEST_DATABASE)
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture
def pg_url(pg_cluster: ScratchCluster) -> str:
    """The URL of a fresh, migrated, empty PostgreSQL store."""
    return pg_cluster.create_schema(TEST_DATABASE, next_database())


@pytest.fixture(params=STORE_KINDS)
def new_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[StoreMaker]:
    """A maker of empty stores, once per store implementation."""
    maker = StoreMaker(request.param, request, tmp_path)
    try:
        yield maker
    finally:
        maker.close()
