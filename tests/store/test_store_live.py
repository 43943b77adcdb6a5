"""What both stores promise to writers and readers in several processes or hosts:
idempotent posts, waiting for new rows, sequences that readers see in commit order,
and (PostgreSQL) reads that outlive a server restart."""

from __future__ import annotations

import asyncio
import multiprocessing
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from coderooms.store import (
    IdempotencyKeyReused,
    InvalidIdempotencyKey,
    StoreStopping,
    StoreUnavailable,
    open_store,
)
from coderooms.store.base import WAIT_MAX_S, Store
from coderooms.store.scratch import ScratchCluster
from store_kinds import StoreMaker

WRITERS = 4
POSTS_EACH = 150
SETTLE_S = 0.5
"""How long a post is left waiting for a held lock before it is told to stop waiting."""
PROMPT_S = 3.0
"""A generous bound on a write that must give up at once (it takes a slice of 50 ms)."""


async def staffed(store: Store) -> Store:
    await store.add_agent("ada")
    await store.add_agent("bo")
    await store.create_desk("eng")
    return store


async def test_a_retried_post_with_its_key_returns_the_row_it_wrote(new_store: StoreMaker) -> None:
    store = await staffed(new_store())
    first = await store.post("agent:ada", "deploy at 5", desk="eng", idempotency_key="k-1")
    again = await store.post("agent:ada", "deploy at 5", desk="eng", idempotency_key="k-1")
    other = new_store.again(store)
    from_elsewhere = await other.post("agent:ada", "deploy at 5", desk="eng", idempotency_key="k-1")
    assert first == again == from_elsewhere
    assert await store.last_sequence() == first.sequence
    second = await store.post("agent:ada", "deploy at 5", desk="eng", idempotency_key="k-2")
    assert second.sequence == first.sequence + 1


async def test_a_key_reused_for_another_post_is_refused(new_store: StoreMaker) -> None:
    store = await staffed(new_store())
    first = await store.post("agent:ada", "one", desk="eng", idempotency_key="k")
    for author, content, desk in (
        ("agent:ada", "two", "eng"),
        ("agent:ada", "one", "General"),
    ):
        with pytest.raises(IdempotencyKeyReused) as caught:
            await store.post(author, content, desk=desk, idempotency_key="k")
        assert caught.value.sequence == first.sequence
    assert await store.last_sequence() == first.sequence
    # another author's "k" is a key of its own (keys are kept per author)
    theirs = await store.post("agent:bo", "one", desk="eng", idempotency_key="k")
    assert theirs.sequence == first.sequence + 1


@pytest.mark.parametrize("key", ["", "   ", "x" * 201])
async def test_a_blank_or_overlong_key_is_refused(new_store: StoreMaker, key: str) -> None:
    store = await staffed(new_store())
    with pytest.raises(InvalidIdempotencyKey):
        await store.post("agent:ada", "one", idempotency_key=key)
    assert await store.last_sequence() is None


async def test_a_wait_returns_at_once_when_rows_are_there(new_store: StoreMaker) -> None:
    store = await staffed(new_store())
    posted = await store.post("agent:ada", "hi")
    started = time.monotonic()
    assert await store.wait_for_rows(None, 5.0) == posted.sequence
    assert await store.wait_for_rows(posted.sequence - 1, 5.0) == posted.sequence
    assert time.monotonic() - started < 1.0


async def test_a_wait_times_out_with_the_newest_sequence(new_store: StoreMaker) -> None:
    store = await staffed(new_store())
    posted = await store.post("agent:ada", "hi")
    started = time.monotonic()
    assert await store.wait_for_rows(posted.sequence, 0.3) == posted.sequence
    assert 0.3 <= time.monotonic() - started < 3.0


async def test_a_wait_wakes_for_a_post_through_another_handle(new_store: StoreMaker) -> None:
    store = await staffed(new_store())
    other = new_store.again(store)  # another process on this host, or another host
    await other.roster()

    async def post_later() -> int:
        await asyncio.sleep(0.3)
        return (await other.post("agent:bo", "@ada ping")).sequence

    started = time.monotonic()
    waited, posted = await asyncio.gather(store.wait_for_rows(None, 10.0), post_later())
    assert waited == posted
    assert time.monotonic() - started < 3.0


def test_the_longest_wait_is_bounded() -> None:
    assert 0 < WAIT_MAX_S <= 60


def _write(url: str, writer: int, count: int) -> None:
    async def go() -> None:
        store = open_store(url)
        try:
            for n in range(count):
                await store.post("agent:ada", f"w{writer} n{n}", idempotency_key=f"{writer}-{n}")
        finally:
            store.close()

    asyncio.run(go())


async def test_concurrent_writers_lose_nothing_and_readers_see_commit_order(
    new_store: StoreMaker,
) -> None:
    store = await staffed(new_store())
    url = new_store.url(store)
    context = multiprocessing.get_context("spawn")
    writers = [context.Process(target=_write, args=(url, w, POSTS_EACH)) for w in range(WRITERS)]
    for process in writers:
        process.start()
    # a reader polling the tail while they write: each newly seen row is above every
    # row it saw before (a row numbered earlier but committed later would break this)
    seen: list[int] = []
    newest = 0
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        page = await store.read_before(None, 4096)
        fresh = [m.sequence for m in page.messages if m.sequence > newest]
        below = [m.sequence for m in page.messages if m.sequence <= newest]
        assert set(below) <= set(seen)  # nothing new appeared below what it had seen
        seen.extend(sorted(fresh))
        newest = max(seen, default=0)
        if len(seen) == WRITERS * POSTS_EACH:
            break
        await asyncio.sleep(0.005)
    for process in writers:
        process.join(60)
        assert process.exitcode == 0
    rows = list(reversed((await store.read_before(None, 4096)).messages))
    assert [m.sequence for m in rows] == list(range(1, WRITERS * POSTS_EACH + 1))
    assert len({m.content for m in rows}) == WRITERS * POSTS_EACH
    assert seen == [m.sequence for m in rows]


async def test_a_read_survives_a_server_restart_and_a_write_to_a_stopped_one_is_reported(
    pg_cluster: ScratchCluster,
) -> None:
    from coderooms.store.postgres import PostgresStore

    # its own cluster: the restart cuts everyone; durable, so a crash keeps what committed
    with ScratchCluster() as cluster:
        store = PostgresStore(cluster.url(), pool_wait_s=1.0)
        try:
            await store.add_agent("ada")
            posted = await store.post("agent:ada", "before the restart")
            cluster.restart()
            assert await store.message(posted.sequence) == posted  # retried, not refused
            keyed = await store.post("agent:ada", "after", idempotency_key="a")
            cluster.halt()
            with pytest.raises(StoreUnavailable, match="cannot reach the store"):
                await store.post("agent:ada", "while it is down")
            with pytest.raises(StoreUnavailable):
                await store.message(keyed.sequence)
        finally:
            store.close()


async def test_a_post_says_whether_it_is_a_replay_of_an_earlier_one(new_store: StoreMaker) -> None:
    store = await staffed(new_store())
    first, replayed = await store.post_or_replay(
        "agent:ada", "ship", desk="eng", idempotency_key="k"
    )
    assert not replayed
    again, replayed = await store.post_or_replay(
        "agent:ada", "ship", desk="eng", idempotency_key="k"
    )
    assert (again, replayed) == (first, True)
    other = await new_store.again(store).post_or_replay(
        "agent:ada", "ship", desk="eng", idempotency_key="k"
    )
    assert other == (first, True)
    unkeyed = await store.post_or_replay("agent:ada", "ship", desk="eng")
    assert unkeyed[1] is False and unkeyed[0].sequence == first.sequence + 1


@contextmanager
def write_lock_held(new_store: StoreMaker, store: Store) -> Iterator[None]:
    """Another process's writer holding the store's write lock."""
    url = new_store.url(store)
    if new_store.kind == "sqlite":
        other = sqlite3.connect(url.removeprefix("sqlite:///"), isolation_level=None)
        other.execute("BEGIN IMMEDIATE")
        try:
            yield
        finally:
            other.execute("ROLLBACK")
            other.close()
        return
    import psycopg

    from coderooms.store.postgres import WRITE_LOCK_KEY

    with psycopg.connect(url, autocommit=True) as other:
        other.execute("SELECT pg_advisory_lock(%s)", (WRITE_LOCK_KEY,))
        try:
            yield
        finally:
            other.execute("SELECT pg_advisory_unlock(%s)", (WRITE_LOCK_KEY,))


async def test_a_write_waiting_for_the_lock_gives_up_when_told_to_stop_waiting(
    new_store: StoreMaker,
) -> None:
    store = await staffed(new_store())
    newest = (await store.post("agent:ada", "before", desk="eng")).sequence
    with write_lock_held(new_store, store):
        waiting = asyncio.create_task(store.post("agent:ada", "waits", desk="eng"))
        await asyncio.sleep(SETTLE_S)
        assert not waiting.done()  # it waits for the lock
        started = time.monotonic()
        await asyncio.to_thread(store.stop_waiting)  # PostgreSQL: cancels on the server
        with pytest.raises(StoreStopping, match="nothing written"):
            await asyncio.wait_for(waiting, PROMPT_S)
        assert time.monotonic() - started < PROMPT_S
        # from then on, a write that finds the lock taken does not wait at all
        with pytest.raises(StoreStopping):
            await asyncio.wait_for(store.post("agent:ada", "later", desk="eng"), PROMPT_S)
    assert await store.last_sequence() == newest  # neither was written
    # one that finds the lock free still writes
    posted = await store.post("agent:ada", "after", desk="eng")
    assert posted.sequence == newest + 1


@pytest.mark.parametrize(
    "url",
    [
        "postgresql://alice:TopSecret99@[::1/rooms",  # the driver quotes the whole URL
        "postgresql://alice:Top%ZZSecret99@db.invalid:5432/rooms",  # the bad %-token
        "postgresql://alice@db.invalid/rooms?password=Top%ZZSecret99",
    ],
)
def test_a_password_never_reaches_an_error_message(url: str) -> None:
    pytest.importorskip("psycopg")
    from coderooms.store.postgres import PostgresStore

    with pytest.raises(StoreUnavailable) as caught:
        PostgresStore(url)
    assert "Secret99" not in str(caught.value) and "ZZSecret" not in str(caught.value)
    assert "***" in str(caught.value)


CODEROOMS = str(Path(sys.executable).with_name("coderooms"))


@pytest.mark.parametrize(
    ("signum", "status", "line"),
    [(signal.SIGINT, 130, "error: interrupted"), (signal.SIGTERM, 143, "error: terminated")],
    ids=["ctrl-c", "term"],
)
async def test_a_post_stopped_while_it_waits_for_the_lock_writes_nothing_on_either_store(
    new_store: StoreMaker, signum: int, status: int, line: str
) -> None:
    # On PostgreSQL the stopped post said "interrupted", then was written once the other
    # writer let go (its thread kept waiting), and Ctrl-C took the whole 10 s lock wait.
    store = await staffed(new_store())
    newest = (await store.post("agent:ada", "before", desk="eng")).sequence
    with write_lock_held(new_store, store):
        process = subprocess.Popen(
            [CODEROOMS, "--db", new_store.url(store), "post", "--as", "agent:ada", "never"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        await asyncio.sleep(2 * SETTLE_S + 1.0)  # started, and waiting for the lock
        assert process.poll() is None
        started = time.monotonic()
        process.send_signal(signum)
        out, err = await asyncio.to_thread(process.communicate, timeout=30)
        assert time.monotonic() - started < PROMPT_S
        await asyncio.sleep(SETTLE_S)  # a write still running would commit once let go
    assert (process.returncode, err.strip(), out) == (status, line, "")
    await asyncio.sleep(SETTLE_S)
    assert await store.last_sequence() == newest


async def test_a_server_that_went_away_is_said_at_once_and_used_again_once_back(
    pg_cluster: ScratchCluster,
) -> None:
    # each call waited the pool's 10 s and said only "couldn't get a connection", and
    # calls kept failing for 20-30 s after the server was back (the pool's backoff)
    from coderooms.store.postgres import PostgresStore

    with ScratchCluster() as cluster:
        store = PostgresStore(cluster.url())
        try:
            await store.add_agent("ada")
            posted = await store.post("agent:ada", "before the outage")
            cluster.halt()
            for _ in range(2):
                started = time.monotonic()
                with pytest.raises(StoreUnavailable) as caught:
                    await store.message(posted.sequence)
                assert time.monotonic() - started < PROMPT_S
                assert "couldn't get a connection" not in str(caught.value)
            cluster.resume()
            assert await store.message(posted.sequence) == posted  # the first call after
            after = await store.post("agent:ada", "after the outage")
            assert after.sequence == posted.sequence + 1
        finally:
            store.close()


def test_postgres_failures_that_are_no_outage_say_what_they_are(
    pg_cluster: ScratchCluster,
) -> None:
    # an index row too large was "cannot reach the store" (and retried as an outage); a
    # role without privileges was told to check a file's permissions
    import psycopg

    from coderooms.store.errors import ReadOnlyDatabase, ValueTooLarge
    from coderooms.store.postgres import PostgresStore

    store = PostgresStore(pg_cluster.create_schema("coderooms_tests", "failures"))
    try:
        too_large = psycopg.errors.ProgramLimitExceeded("index row size 6024 exceeds maximum 2704")
        assert isinstance(store._failure(too_large), ValueTooLarge)
        assert not store._retryable(too_large)
        refused = store._failure(psycopg.errors.InsufficientPrivilege("permission denied"))
        assert isinstance(refused, ReadOnlyDatabase) and "GRANT" in str(refused)
    finally:
        store.close()


def test_a_url_selecting_a_schema_that_does_not_exist_says_to_create_it(
    pg_cluster: ScratchCluster,
) -> None:
    # init blamed the database and quoted SQL; reads said to run init, which then failed
    from coderooms.store.errors import SchemaMissing

    url = pg_cluster.url("coderooms_tests", "no_such_room")
    for existing in (False, True):
        with pytest.raises(SchemaMissing, match="CREATE SCHEMA"):
            open_store(url, existing=existing)


@pytest.mark.parametrize(
    "value",
    ["host=/tmp/pg port=5432 dbname=rooms user=me", "dbname=rooms password=hunter2"],
)
def test_a_postgres_connection_string_never_becomes_a_sqlite_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    # init said "store ready" and made a SQLite file named host=/tmp/...: nothing shared
    from coderooms.store.errors import UnsupportedStoreUrl

    monkeypatch.chdir(tmp_path)
    with pytest.raises(UnsupportedStoreUrl, match="postgresql://USER@HOST") as caught:
        open_store(value)
    assert "hunter2" not in str(caught.value)
    assert list(tmp_path.iterdir()) == []


async def test_idempotency_keys_are_kept_per_author_on_every_surface(new_store: StoreMaker) -> None:
    # the MCP service kept an agent's key as "ID:KEY" and the CLI kept it raw: a retry
    # on the other surface wrote the post twice, and `--key reviewer:zz` took reviewer's
    from coderooms.mcp.service import RoomService

    store = await staffed(new_store())
    service = RoomService(store)
    served = await service.post("ada", "deploy at 5", idempotency_key="k1")
    again = await store.post("agent:ada", "deploy at 5", idempotency_key="k1")  # the CLI
    assert again.sequence == served.sequence
    theirs = await store.post("agent:ada", "mine", idempotency_key="bo:zz")
    own = await service.post("bo", "bo's own", idempotency_key="zz")
    assert own.sequence == theirs.sequence + 1
    person = await store.post("operator", "by hand", idempotency_key="k1")
    assert person.sequence == own.sequence + 1  # another author: another namespace
    with pytest.raises(IdempotencyKeyReused, match="idempotency key 'k1' already wrote"):
        await store.post("agent:ada", "something else", idempotency_key="k1")
