"""A conversation tail yields exactly the rows of the view it wraps, however it was
topped up."""

from __future__ import annotations

import asyncio

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from coderooms.errors import PageNotDescending
from coderooms.mcp.tail import TAIL_FETCH_PAGE, TAIL_PROBE_PAGE, ConversationTail, TailCache
from coderooms.rooms.memory import MemoryLog
from coderooms.rooms.pins import PIN_LIMIT, PIN_SCAN, read_pinboard
from coderooms.rooms.records import Agent, Conversation, LogMessage, SessionPage
from coderooms.rooms.session import SessionLog, walk_log
from coderooms.rooms.threads import THREAD_INDEX_LIMIT, THREAD_INDEX_SCAN, read_thread_index

BOB = Agent("bob", "bob")


class CountingLog:
    """A view that counts the reads that reach it."""

    def __init__(self, log: MemoryLog) -> None:
        self.log = log
        self.reads = 0
        self.asked: list[int] = []

    async def read_before(self, before: int | None, limit: int):  # type: ignore[no-untyped-def]
        self.reads += 1
        self.asked.append(limit)
        return await self.log.read_before(before, limit)


async def _walk(log: SessionLog, before: int | None, scan: int) -> list[int]:
    return [row.sequence async for row in walk_log(log, before, scan)]


@settings(max_examples=150, deadline=None)
@given(
    batches=st.lists(st.lists(st.integers(1, 3), max_size=40), min_size=1, max_size=6),
    capacity=st.integers(1, 50),
    probes=st.lists(
        st.tuples(st.one_of(st.none(), st.integers(0, 400)), st.integers(1, 120)), max_size=6
    ),
)
def test_a_tail_walks_exactly_like_its_view(
    batches: list[list[int]], capacity: int, probes: list[tuple[int | None, int]]
) -> None:
    async def scenario() -> None:
        log = MemoryLog()
        tail = ConversationTail(log, capacity)
        sequence = 0
        for batch in batches:
            for gap in batch:
                sequence += gap
                log.append(LogMessage(sequence, BOB, f"row {sequence}"))
            assert await tail.refresh() == (log.rows[-1].sequence if len(log) else None)
            for before, scan in probes or [(None, 200)]:
                assert await _walk(tail, before, scan) == await _walk(log, before, scan)

    asyncio.run(scenario())


def test_a_topped_up_tail_reads_only_the_new_rows_and_answers_from_memory() -> None:
    async def scenario() -> None:
        memory = MemoryLog([LogMessage(i, BOB, f"row {i}") for i in range(1, 101)])
        view = CountingLog(memory)
        tail = ConversationTail(view, 50)
        await tail.refresh()
        view.reads = 0
        assert await _walk(tail, None, 50) == list(range(100, 50, -1))
        assert view.reads == 0
        memory.append(LogMessage(101, BOB, "row 101"))
        assert await tail.refresh() == 101
        assert view.reads == 1
        view.reads = 0
        assert await _walk(tail, None, 80) == list(range(101, 21, -1))
        assert view.reads >= 1  # past the held rows, the walk goes back to the view

    asyncio.run(scenario())


def test_a_warm_refresh_asks_for_a_probe_page_first_and_full_pages_after() -> None:
    async def scenario() -> None:
        memory = MemoryLog([LogMessage(i, BOB, f"row {i}") for i in range(1, 101)])
        view = CountingLog(memory)
        tail = ConversationTail(view, 1000)
        await tail.refresh()
        assert view.asked == [TAIL_FETCH_PAGE]
        view.asked = []
        memory.append(LogMessage(101, BOB, "row 101"))
        assert await tail.refresh() == 101
        assert view.asked == [TAIL_PROBE_PAGE]
        view.asked = []
        for i in range(102, 102 + TAIL_PROBE_PAGE + 5):
            memory.append(LogMessage(i, BOB, f"row {i}"))
        await tail.refresh()
        assert view.asked == [TAIL_PROBE_PAGE, TAIL_FETCH_PAGE]
        assert await _walk(tail, None, 1000) == await _walk(memory, None, 1000)

    asyncio.run(scenario())


def test_the_cache_drops_the_least_recently_used_tail() -> None:
    cache = TailCache(entries=2, capacity=10)
    log = MemoryLog()
    first = cache.tail("a", log)
    second = cache.tail("b", log)
    assert cache.tail("a", log) is first
    cache.tail("c", log)  # "b" is now the least recently used
    assert cache.tail("a", log) is first
    assert cache.tail("b", log) is not second


ENG = Conversation("eng", "Engineering")


@settings(max_examples=40, deadline=None)
@given(
    batches=st.lists(
        st.lists(
            st.tuples(
                st.sampled_from(["eng", "ops"]),
                st.integers(0, 300),
                st.sampled_from(["text", " ", "!pin", "!unpin ^3"]),
            ),
            max_size=160,
        ),
        min_size=1,
        max_size=5,
    ),
    capacity=st.sampled_from([THREAD_INDEX_SCAN, THREAD_INDEX_SCAN + 40, PIN_SCAN]),
)
def test_a_tails_thread_index_and_pinboard_are_what_its_view_reads(
    batches: list[list[tuple[str, int, str]]], capacity: int
) -> None:
    async def scenario() -> None:
        log = MemoryLog()
        tail = ConversationTail(log, capacity)
        for batch in batches:
            for chat_id, back, kind in batch:
                rows = log.rows
                parent = rows[-back].sequence if 0 < back <= len(rows) else None
                content = f"row {len(rows)}" if kind == "text" else kind
                log.add(BOB, content, chat_id=chat_id, parent=parent)
            await tail.refresh()
            for limit in (THREAD_INDEX_LIMIT, 50):
                assert tail.thread_lines(ENG, limit) == await read_thread_index(log, ENG, limit)
            board = tail.pinboard(ENG, PIN_LIMIT)
            if capacity >= PIN_SCAN or len(log) <= capacity:
                assert board == await read_pinboard(log, ENG)
            else:  # holding fewer rows than the board's scan, it leaves the board to the walk
                assert board is None
            assert tail.pinboard(Conversation("eng", "Engineering", 1), PIN_LIMIT) is None

    asyncio.run(scenario())


def test_a_tail_holding_rows_out_of_order_leaves_the_index_to_the_walk() -> None:
    class Shuffled:
        async def read_before(self, before: int | None, limit: int) -> SessionPage:
            rows = (LogMessage(3, BOB, "c"), LogMessage(5, BOB, "e"), LogMessage(4, BOB, "d"))
            return SessionPage(rows if before is None else ())

    async def scenario() -> None:
        tail = ConversationTail(Shuffled(), 100)
        await tail.refresh()
        assert tail.thread_lines(Conversation("General", "General"), 5) is None
        with pytest.raises(PageNotDescending):
            await read_thread_index(tail, Conversation("General", "General"), 5)

    asyncio.run(scenario())


def test_a_tail_that_holds_too_few_rows_of_a_longer_view_leaves_the_index_to_the_walk() -> None:
    async def scenario() -> None:
        log = MemoryLog([LogMessage(i, BOB, f"row {i}") for i in range(1, 400)])
        tail = ConversationTail(log, 100)
        await tail.refresh()
        assert tail.thread_lines(Conversation("General", "General"), 5) is None

    asyncio.run(scenario())
