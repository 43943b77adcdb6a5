"""The validated backward walk: paging, the scan cap, and every malformed page."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from session_fakes import ALICE, CountingLog, ScriptedLog, page, row

from coderooms.errors import (
    CursorAfterOldest,
    CursorDidNotAdvance,
    DuplicateSequence,
    EmptyPageCursor,
    InvalidBound,
    PageNotDescending,
    PageOutOfRange,
    PageTooLarge,
    ReadError,
    SessionError,
)
from coderooms.rooms.memory import MemoryLog
from coderooms.rooms.records import PAGE_SIZE, SCAN_LIMIT, Conversation, LogMessage, SessionPage
from coderooms.rooms.session import LogWalk, ScanWindow, interior_pages, walk_log


async def collect(walk: LogWalk) -> list[int]:
    return [r.sequence async for r in walk]


def memory_log(count: int) -> MemoryLog:
    return MemoryLog(LogMessage(s, ALICE, f"m{s}", chat_id="eng") for s in range(1, count + 1))


async def test_a_single_page_walk_yields_newest_first_and_ends_when_no_cursor() -> None:
    log = ScriptedLog(page([9, 7, 3]))
    walk = walk_log(log, None)
    assert await collect(walk) == [9, 7, 3]
    assert log.requests == [(None, PAGE_SIZE)]
    assert walk.exhausted and not walk.reached_cap and walk.scanned == 3


async def test_pages_follow_the_advertised_cursor_in_order() -> None:
    log = ScriptedLog(page([20, 19], next_before=19), page([15, 12], next_before=10), page([4]))
    walk = walk_log(log, 21)
    assert await collect(walk) == [20, 19, 15, 12, 4]
    assert log.requests == [(21, PAGE_SIZE), (19, PAGE_SIZE), (10, PAGE_SIZE)]


async def test_the_before_cursor_is_exclusive() -> None:
    assert await collect(walk_log(memory_log(5), 3)) == [2, 1]


async def test_an_empty_page_without_cursor_ends_the_walk() -> None:
    walk = walk_log(ScriptedLog(page([])), None)
    assert await collect(walk) == []
    assert walk.exhausted and walk.scanned == 0


async def test_multi_page_walk_over_a_memory_log_reads_whole_pages() -> None:
    log = CountingLog(memory_log(1200))
    walk = walk_log(log, None)
    assert await collect(walk) == list(range(1200, 0, -1))
    assert log.requests == [(None, 512), (689, 512), (177, 512)]
    assert walk.exhausted and walk.scanned == 1200


async def test_the_scan_cap_stops_the_walk_successfully() -> None:
    log = CountingLog(memory_log(3000))
    walk = walk_log(log, None)
    rows = await collect(walk)
    assert rows == list(range(3000, 3000 - SCAN_LIMIT, -1))
    assert walk.reached_cap and not walk.exhausted and walk.scanned == SCAN_LIMIT
    assert [limit for _, limit in log.requests] == [512, 512, 512, 512]


async def test_each_read_asks_only_for_what_the_cap_leaves() -> None:
    log = CountingLog(memory_log(1000))
    walk = walk_log(log, None, scan_limit=700)
    assert len(await collect(walk)) == 700
    assert log.requests == [(None, 512), (489, 188)]
    assert walk.reached_cap


async def test_short_pages_count_raw_rows_toward_the_cap() -> None:
    log = ScriptedLog(page([10, 9], next_before=9), page([8, 7], next_before=7), page([6]))
    walk = walk_log(log, None, scan_limit=4)
    assert await collect(walk) == [10, 9, 8, 7]
    assert log.requests == [(None, 4), (9, 2)]
    assert walk.reached_cap and walk.scanned == 4


async def test_a_zero_scan_limit_reads_nothing() -> None:
    log = ScriptedLog()
    walk = walk_log(log, None, scan_limit=0)
    assert await collect(walk) == []
    assert log.requests == [] and walk.reached_cap


def test_a_negative_scan_limit_is_refused() -> None:
    with pytest.raises(InvalidBound) as err:
        walk_log(ScriptedLog(), None, scan_limit=-1)
    assert (err.value.name, err.value.value) == ("scan_limit", -1)


async def test_a_consumer_may_stop_early_without_further_reads() -> None:
    log = ScriptedLog(page([10, 9], next_before=9), page([8]))
    walk = walk_log(log, None)
    async for r in walk:
        assert r.sequence == 10
        break
    assert log.requests == [(None, PAGE_SIZE)]


async def test_a_finished_walk_yields_nothing_more() -> None:
    log = ScriptedLog(page([3]))
    walk = walk_log(log, None)
    assert await collect(walk) == [3]
    assert await collect(walk) == []
    assert len(log.requests) == 1


# --- malformed pages -------------------------------------------------------------------


async def walk_error(log: ScriptedLog, before: int | None = None) -> SessionError:
    with pytest.raises(SessionError) as err:
        await collect(walk_log(log, before))
    return err.value


async def test_a_page_longer_than_requested_is_refused() -> None:
    rows = list(range(PAGE_SIZE + 1, 0, -1))
    err = await walk_error(ScriptedLog(page(rows)))
    assert err == PageTooLarge(PAGE_SIZE, PAGE_SIZE + 1)
    assert (err.requested, err.actual) == (PAGE_SIZE, PAGE_SIZE + 1)  # type: ignore[attr-defined]


async def test_too_large_is_checked_against_the_capped_request() -> None:
    log = ScriptedLog(page([10, 9, 8]))
    with pytest.raises(PageTooLarge) as err:
        await collect(walk_log(log, None, scan_limit=2))
    assert (err.value.requested, err.value.actual) == (2, 3)


async def test_an_empty_page_may_not_advertise_a_cursor() -> None:
    err = await walk_error(ScriptedLog(page([], next_before=5)))
    assert err == EmptyPageCursor(5)
    assert err.next_before == 5  # type: ignore[attr-defined]


async def test_a_row_at_or_above_the_cursor_is_out_of_range() -> None:
    assert await walk_error(ScriptedLog(page([10])), before=10) == PageOutOfRange(10, 10)
    assert await walk_error(ScriptedLog(page([9, 12])), before=10) == PageOutOfRange(12, 10)


async def test_rows_must_strictly_descend() -> None:
    assert await walk_error(ScriptedLog(page([3, 5]))) == PageNotDescending(3, 5)


async def test_a_row_repeated_within_a_page_is_a_duplicate() -> None:
    assert await walk_error(ScriptedLog(page([5, 5]))) == DuplicateSequence(5)


async def test_a_row_repeated_across_pages_is_a_duplicate_before_out_of_range() -> None:
    log = ScriptedLog(page([10, 9], next_before=9), page([9]))
    assert await walk_error(log) == DuplicateSequence(9)


async def test_a_cursor_that_does_not_move_older_is_refused() -> None:
    err = await walk_error(ScriptedLog(page([9], next_before=10)), before=10)
    assert err == CursorDidNotAdvance(10, 10)
    assert (err.before, err.next_before) == (10, 10)  # type: ignore[attr-defined]
    assert await walk_error(ScriptedLog(page([9], next_before=12)), before=10) == (
        CursorDidNotAdvance(10, 12)
    )


async def test_a_cursor_newer_than_the_oldest_row_is_refused() -> None:
    err = await walk_error(ScriptedLog(page([9, 8], next_before=9)))
    assert err == CursorAfterOldest(9, 8)
    assert (err.next_before, err.oldest) == (9, 8)  # type: ignore[attr-defined]


async def test_a_cursor_equal_to_the_oldest_row_or_older_is_fine() -> None:
    log = ScriptedLog(page([9, 8], next_before=8), page([7], next_before=2), page([1]))
    assert await collect(walk_log(log, None)) == [9, 8, 7, 1]


async def test_validation_follows_the_stated_order() -> None:
    # too large wins over a bad row
    assert await walk_error(ScriptedLog(page([50] * (PAGE_SIZE + 1)))) == PageTooLarge(
        PAGE_SIZE, PAGE_SIZE + 1
    )
    # out of range wins over not descending
    assert await walk_error(ScriptedLog(page([5, 12])), before=10) == PageOutOfRange(12, 10)
    # a bad row wins over a bad cursor
    assert await walk_error(ScriptedLog(page([3, 5], next_before=9))) == PageNotDescending(3, 5)
    # did-not-advance wins over after-oldest
    assert await walk_error(ScriptedLog(page([9, 8], next_before=10)), before=10) == (
        CursorDidNotAdvance(10, 10)
    )


async def test_a_page_is_validated_before_any_of_its_rows_is_used() -> None:
    log = ScriptedLog(page([9, 8, 12]))
    seen: list[int] = []
    with pytest.raises(PageOutOfRange):
        async for r in walk_log(log, 10):
            seen.append(r.sequence)
    assert seen == []


async def test_a_failing_read_is_wrapped_with_its_source() -> None:
    source = OSError("disk unplugged")
    with pytest.raises(ReadError) as err:
        await collect(walk_log(ScriptedLog(source), None))
    assert err.value.__cause__ is source
    assert "disk unplugged" in str(err.value)


async def test_a_read_failing_on_a_later_page_is_wrapped_too() -> None:
    source = RuntimeError("connection reset")
    log = ScriptedLog(page([5], next_before=5), source)
    with pytest.raises(ReadError) as err:
        await collect(walk_log(log, None))
    assert err.value.__cause__ is source


async def test_a_read_that_returns_something_else_than_a_page_is_a_read_error() -> None:
    class WrongLog:
        async def read_before(self, before: int | None, limit: int) -> SessionPage:
            return [row(1)]  # type: ignore[return-value]

    with pytest.raises(ReadError) as err:
        await collect(walk_log(WrongLog(), None))
    assert isinstance(err.value.__cause__, TypeError)


# --- rows a page at a time ----------------------------------------------------------------


async def rows_by_page(walk: LogWalk) -> list[list[int]]:
    pages: list[list[int]] = []
    while rows := await walk.next_rows():
        pages.append([r.sequence for r in rows])
    return pages


async def test_next_rows_hands_out_whole_pages_in_walk_order() -> None:
    log = ScriptedLog(page([20, 19], next_before=19), page([15, 12], next_before=10), page([4]))
    walk = walk_log(log, 21)
    assert await rows_by_page(walk) == [[20, 19], [15, 12], [4]]
    assert log.requests == [(21, PAGE_SIZE), (19, PAGE_SIZE), (10, PAGE_SIZE)]
    assert walk.exhausted and walk.scanned == 5
    assert await walk.next_rows() == ()
    assert len(log.requests) == 3


async def test_next_rows_respects_the_scan_cap_like_async_for() -> None:
    log = CountingLog(memory_log(3000))
    walk = walk_log(log, None)
    pages = await rows_by_page(walk)
    assert [len(p) for p in pages] == [512, 512, 512, 512]
    assert [s for p in pages for s in p] == list(range(3000, 3000 - SCAN_LIMIT, -1))
    assert walk.reached_cap and [limit for _, limit in log.requests] == [512] * 4


async def test_next_rows_continues_after_rows_taken_one_at_a_time() -> None:
    log = ScriptedLog(page([10, 9, 8], next_before=8), page([5]))
    walk = walk_log(log, None)
    assert (await anext(walk)).sequence == 10
    assert [r.sequence for r in await walk.next_rows()] == [9, 8]
    assert len(log.requests) == 1
    assert [r.sequence async for r in walk] == [5]


async def test_next_rows_raises_what_the_page_checks_raise() -> None:
    with pytest.raises(PageOutOfRange):
        await walk_log(ScriptedLog(page([9, 8, 12])), 10).next_rows()
    log = ScriptedLog(page([10, 9], next_before=9), page([9]))
    walk = walk_log(log, None)
    await walk.next_rows()
    with pytest.raises(DuplicateSequence):
        await walk.next_rows()


def reference_check(pages: list[list[int]], before: int | None) -> SessionError | None:
    """The page checks spelled out row by row, as the walk states them: the first failure
    across pages, or None."""
    seen: set[int] = set()
    for sequences in pages:
        previous: int | None = None
        for sequence in sequences:
            if sequence in seen:
                return DuplicateSequence(sequence)
            if before is not None and sequence >= before:
                return PageOutOfRange(sequence, before)
            if previous is not None and previous <= sequence:
                return PageNotDescending(previous, sequence)
            seen.add(sequence)
            previous = sequence
        before = sequences[-1]  # each scripted page advertises its oldest row
    return None


@settings(max_examples=300)
@given(
    st.lists(st.lists(st.integers(0, 12), min_size=1, max_size=5), min_size=1, max_size=4),
    st.none() | st.integers(0, 14),
)
async def test_row_checks_find_the_first_bad_row_whatever_the_page(
    pages: list[list[int]], before: int | None
) -> None:
    answers = [page(p, next_before=p[-1]) for p in pages[:-1]] + [page(pages[-1])]
    walk = walk_log(ScriptedLog(*answers), before)
    expected = reference_check(pages, before)
    if expected is None:
        assert await collect(walk) == [s for p in pages for s in p]
    else:
        with pytest.raises(SessionError) as err:
            await collect(walk)
        assert err.value == expected


async def test_interior_pages_keep_a_desk_or_a_thread_and_stop_below_the_root() -> None:
    older = [LogMessage(seq, ALICE, f"old {seq}", "eng") for seq in range(1, PAGE_SIZE + 1)]
    root = PAGE_SIZE + 1
    rows = [
        *older,
        LogMessage(root, ALICE, "root", "eng"),
        LogMessage(root + 1, ALICE, "reply", "eng", parent=root),
        LogMessage(root + 2, ALICE, "elsewhere", "ops"),
        LogMessage(root + 3, ALICE, "top level", "Engineering"),
        LogMessage(root + 4, ALICE, "a reply in another desk", "ops", parent=root),
    ]

    async def seen(scope: Conversation | None, log: object) -> list[int]:
        pages = interior_pages(log, scope, None, SCAN_LIMIT)  # type: ignore[arg-type]
        return [row.sequence async for page in pages for row in page]

    everything = await seen(None, MemoryLog(rows))
    assert everything == [row.sequence for row in reversed(rows)]
    desk = await seen(Conversation("eng", "Engineering"), MemoryLog(rows))
    assert desk == [root + 3, root + 1, root, *range(PAGE_SIZE, 0, -1)]
    counting = CountingLog(MemoryLog(rows))
    thread = await seen(Conversation("eng", "Engineering", thread_root=root), counting)
    assert thread == [root + 1, root]
    # the first page reaches below the root, so the older page is never read
    assert len(counting.requests) == 1


def test_a_scan_window_keeps_the_newest_rows_and_says_which_one_left() -> None:
    window = ScanWindow(2)
    assert window.newest is None
    assert [window.take(row(s)) for s in (1, 2)] == [None, None]
    assert window.take(row(5)) == row(1)
    assert window.newest == 5
    with pytest.raises(PageNotDescending):
        window.take(row(5))
    assert ScanWindow(0).take(row(1)) == row(1)
    with pytest.raises(InvalidBound):
        ScanWindow(-1)
