"""MemoryLog: a well-formed in-memory SessionLog."""

from __future__ import annotations

import pytest
from session_fakes import ALICE, row

from coderooms.errors import InvalidBound, SequenceOrderError
from coderooms.rooms.memory import MemoryLog
from coderooms.rooms.records import LogMessage, Operator, SessionPage


async def test_pages_come_back_newest_first_with_a_cursor_while_older_rows_remain() -> None:
    log = MemoryLog([row(s) for s in (2, 4, 6, 8, 10)])
    first = await log.read_before(None, 2)
    assert [m.sequence for m in first.messages] == [10, 8]
    assert first.next_before == 8
    second = await log.read_before(8, 2)
    assert [m.sequence for m in second.messages] == [6, 4]
    last = await log.read_before(4, 2)
    assert last == SessionPage((row(2),), None)


async def test_the_before_bound_is_exclusive_and_may_fall_between_rows() -> None:
    log = MemoryLog([row(s) for s in (2, 4, 6)])
    assert [m.sequence for m in (await log.read_before(6, 10)).messages] == [4, 2]
    assert [m.sequence for m in (await log.read_before(5, 10)).messages] == [4, 2]
    assert (await log.read_before(2, 10)) == SessionPage((), None)


async def test_a_zero_limit_returns_an_empty_page_without_cursor() -> None:
    log = MemoryLog([row(1)])
    assert await log.read_before(None, 0) == SessionPage((), None)


async def test_a_negative_limit_is_refused() -> None:
    with pytest.raises(InvalidBound):
        await MemoryLog().read_before(None, -1)


def test_add_assigns_the_next_sequence() -> None:
    log = MemoryLog()
    first = log.add(ALICE, "hello", chat_id="eng")
    second = log.add(Operator(), "hi", chat_id="eng", parent=first.sequence)
    assert (first.sequence, second.sequence, second.parent) == (1, 2, 1)
    log.append(LogMessage(10, ALICE, "jump"))
    assert log.add(ALICE, "next").sequence == 11
    assert len(log) == 4 and log.rows[-1].content == "next"


def test_rows_out_of_order_are_refused() -> None:
    log = MemoryLog([row(5)])
    with pytest.raises(SequenceOrderError) as err:
        log.append(row(5))
    assert (err.value.sequence, err.value.latest) == (5, 5)
    with pytest.raises(SequenceOrderError):
        MemoryLog([row(3), row(2)])
    with pytest.raises(SequenceOrderError, match="negative"):
        MemoryLog([row(-1)])
