"""Live updates: the change feed the pages listen to, and its event stream."""

from __future__ import annotations

import asyncio

import anyio
from starlette.testclient import TestClient
from web_harness import Room

from coderooms.web.feed import ChangeFeed


def test_the_feed_yields_each_new_newest_sequence(room: Room) -> None:
    first = room.post("agent:alice", "one")

    async def watch() -> list[int | None]:
        feed = ChangeFeed(room.store, interval=0.01)
        seen: list[int | None] = []
        async with anyio.create_task_group() as tasks:

            async def later() -> None:
                await anyio.sleep(0.05)
                await room.store.post("agent:bob", "two")

            tasks.start_soon(later)
            async for newest in feed.changes(first.sequence, lifetime=2.0):
                seen.append(newest)
                break
        return seen

    seen = asyncio.run(watch())
    assert seen == [first.sequence + 1]


def test_the_feed_ends_after_its_lifetime(room: Room) -> None:
    async def watch() -> list[int | None]:
        feed = ChangeFeed(room.store, interval=0.01)
        return [x async for x in feed.changes(None, lifetime=0.05)]

    assert asyncio.run(watch()) == []  # an empty log: nothing to tell


def test_waiters_share_one_read_per_interval(room: Room) -> None:
    reads = 0
    original = room.store.last_sequence

    async def counted():  # type: ignore[no-untyped-def]
        nonlocal reads
        reads += 1
        return await original()

    room.store.last_sequence = counted  # type: ignore[method-assign]

    async def many() -> None:
        feed = ChangeFeed(room.store, interval=10.0)
        await asyncio.gather(*(feed.latest() for _ in range(20)))

    asyncio.run(many())
    assert reads == 1


def test_the_event_stream_announces_a_post_after_the_cursor(room: Room, client: TestClient) -> None:
    first = room.post("agent:alice", "one")
    room.post("agent:alice", "two")
    with client.stream("GET", f"/desk/General/events?after={first.sequence}") as response:
        assert response.headers["content-type"].startswith("text/event-stream")
        lines = []
        for line in response.iter_lines():
            lines.append(line)
            if line.startswith("data:"):
                break
    assert lines[0] == "retry: 1000"
    assert "event: change" in lines
    assert lines[-1] == f"data: {first.sequence + 1}"


def test_the_event_stream_needs_a_session(anonymous: TestClient) -> None:
    response = anonymous.get("/desk/General/events", follow_redirects=False)
    assert response.status_code == 303


def test_a_page_listens_from_the_newest_row_it_was_rendered_with(
    room: Room, client: TestClient
) -> None:
    assert 'data-live="/desk/General/events"' in client.get("/desk/General").text  # empty log
    room.post("agent:alice", "in general")
    newest = room.post("agent:alice", "in eng", desk="eng")
    html = client.get("/desk/General").text
    assert f'data-live="/desk/General/events?after={newest.sequence}"' in html
    assert f'data-live="/events?after={newest.sequence}"' in client.get("/").text
    assert "data-live" not in client.get(f"/desk/General?before={newest.sequence}").text


async def test_a_closed_feed_ends_every_stream_at_once(room: Room) -> None:
    # `up` stopped with a page open: its event stream held the stop until it was cut off
    # (5-7 s) and uvicorn logged a traceback for each open page
    import time

    feed = ChangeFeed(room.store, interval=0.01)

    async def close_soon() -> None:
        await anyio.sleep(0.2)
        feed.close()

    started = time.monotonic()
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(close_soon)
        async for _ in feed.changes(None, lifetime=60):
            pass
    assert time.monotonic() - started < 2
