"""The thread index: fold_threads, read_thread_index and search_threads."""

from __future__ import annotations

import asyncio

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from session_fakes import CountingLog, fed_in_batches

from coderooms.errors import InvalidBound, InvalidPattern, PageNotDescending
from coderooms.rooms.context import ThreadLine
from coderooms.rooms.memory import MemoryLog
from coderooms.rooms.ranking import MatchKind
from coderooms.rooms.records import Agent, Conversation, LogMessage
from coderooms.rooms.search import SearchPattern
from coderooms.rooms.threads import (
    THREAD_INDEX_LIMIT,
    THREAD_INDEX_SCAN,
    THREAD_OPENING_CHARS,
    ThreadHit,
    ThreadIndexFold,
    fold_threads,
    read_thread_index,
    search_threads,
)
from coderooms.rooms.wire import from_wire, to_wire

ADA = Agent("ada", "Ada")
ENG = Conversation("eng", "Engineering")


def msg(sequence: int, content: str, chat_id: str = "eng", parent: int | None = None) -> LogMessage:
    return LogMessage(sequence, ADA, content, chat_id=chat_id, parent=parent)


def test_constants() -> None:
    assert (THREAD_INDEX_LIMIT, THREAD_OPENING_CHARS, THREAD_INDEX_SCAN) == (5, 60, 256)


def test_fold_counts_direct_replies_and_orders_by_latest_activity() -> None:
    rows = [
        msg(1, "first topic"),
        msg(2, "second topic"),
        msg(3, "reply to first", parent=1),
        msg(4, "reply to the reply", parent=3),
        msg(5, "third topic"),
        msg(6, "late reply to first", parent=1),
    ]
    assert fold_threads(rows, ENG, 10) == [
        ThreadLine(1, "first topic", 2, 6),
        ThreadLine(5, "third topic", 0, 5),
        ThreadLine(2, "second topic", 0, 2),
    ]
    assert fold_threads(rows, ENG, 1) == [ThreadLine(1, "first topic", 2, 6)]


def test_blank_rows_neither_open_nor_count() -> None:
    rows = [
        msg(1, "   "),
        msg(2, "reply to blank", parent=1),
        msg(3, "root"),
        msg(4, "\n", parent=3),
    ]
    assert fold_threads(rows, ENG, 10) == [ThreadLine(3, "root", 0, 3)]


def test_replies_to_roots_outside_the_slice_are_ignored() -> None:
    assert fold_threads([msg(9, "orphan", parent=2)], ENG, 10) == []


def test_only_rows_of_the_desk_count() -> None:
    rows = [
        msg(1, "ours"),
        msg(2, "theirs", chat_id="ops"),
        msg(3, "by name", chat_id="Engineering"),
    ]
    assert [line.root for line in fold_threads(rows, ENG, 10)] == [3, 1]


def test_opening_is_collapsed_and_cut() -> None:
    long = "word " * 30
    [line] = fold_threads([msg(1, "  a\n\n b  "), msg(2, long)], ENG, 10)[1:]
    assert line.opening == "a b"
    [line] = fold_threads([msg(2, long)], ENG, 10)
    assert line.opening == " ".join(long.split())[:THREAD_OPENING_CHARS] + "…"


def test_zero_limit_or_thread_scope_folds_nothing() -> None:
    rows = [msg(1, "topic")]
    assert fold_threads(rows, ENG, 0) == []
    assert fold_threads(rows, Conversation("eng", "Engineering", 1), 10) == []
    with pytest.raises(InvalidBound):
        fold_threads(rows, ENG, -1)


def test_thread_line_and_hit_wire_forms() -> None:
    line = ThreadLine(3, "opening", 2, 9)
    wire = {"root": 3, "opening": "opening", "replies": 2, "latest": 9, "landed": None}
    assert to_wire(line) == wire
    assert from_wire(ThreadLine, wire) == line
    hit = ThreadHit(line, 850, MatchKind.PREFIX)
    assert to_wire(hit) == {"line": wire, "score": 850, "kind": "prefix"}
    assert from_wire(ThreadHit, to_wire(hit)) == hit


async def test_read_thread_index_reads_only_the_tail() -> None:
    log = MemoryLog([msg(1, "old thread")])
    for sequence in range(2, THREAD_INDEX_SCAN + 2):
        log.append(msg(sequence, "chatter", chat_id="ops"))
    log.append(msg(THREAD_INDEX_SCAN + 2, "new thread"))
    log.append(msg(THREAD_INDEX_SCAN + 3, "reply", parent=1))  # its root is out of reach
    counting = CountingLog(log)
    lines = await read_thread_index(counting, ENG)
    assert lines == [ThreadLine(THREAD_INDEX_SCAN + 2, "new thread", 0, THREAD_INDEX_SCAN + 2)]
    assert counting.requests == [(None, THREAD_INDEX_SCAN)]


async def test_read_thread_index_limits_and_skips_threads() -> None:
    log = CountingLog(MemoryLog([msg(i, f"topic {i}") for i in range(1, 10)]))
    assert [line.root for line in await read_thread_index(log, ENG)] == [9, 8, 7, 6, 5]
    assert [line.root for line in await read_thread_index(log, ENG, 2)] == [9, 8]
    log.requests.clear()
    assert await read_thread_index(log, ENG, 0) == []
    assert await read_thread_index(log, Conversation("eng", "Engineering", 3)) == []
    assert log.requests == []


async def test_search_threads_ranks_openings() -> None:
    log = MemoryLog(
        [
            msg(1, "deploy"),
            msg(2, "plan the deploy window"),
            msg(3, "lunch"),
            msg(4, "redeploy the cache"),
            msg(5, "reply that moves thread two", parent=2),
        ]
    )
    hits = await search_threads(log, ENG, SearchPattern.text("deploy"), 10)
    assert [(h.line.root, h.kind) for h in hits] == [
        (1, MatchKind.EXACT),
        (2, MatchKind.WORD_PREFIX),
        (4, MatchKind.SUBSTRING),
    ]
    assert hits[1].line == ThreadLine(2, "plan the deploy window", 1, 5)
    assert len(await search_threads(log, ENG, SearchPattern.text("deploy"), 1)) == 1
    by_regex = await search_threads(log, ENG, SearchPattern.regex("^re"), 10)
    assert [h.line.root for h in by_regex] == [4]


async def test_search_threads_equal_scores_keep_latest_activity_first() -> None:
    log = MemoryLog([msg(1, "alpha"), msg(2, "alpha"), msg(3, "reply", parent=1)])
    hits = await search_threads(log, ENG, SearchPattern.text("alpha"), 10)
    assert [h.line.root for h in hits] == [1, 2]


async def test_search_threads_reads_nothing_when_it_cannot_answer() -> None:
    log = CountingLog(MemoryLog([msg(1, "topic")]))
    thread = Conversation("eng", "Engineering", 1)
    assert await search_threads(log, ENG, SearchPattern.text("topic"), 0) == []
    assert await search_threads(log, thread, SearchPattern.text("topic"), 5) == []
    assert await search_threads(log, ENG, SearchPattern.text("  "), 5) == []
    with pytest.raises(InvalidPattern):
        await search_threads(log, ENG, SearchPattern.regex("[z-a]"), 5)
    assert log.requests == []


# --- kept up to date row by row ---------------------------------------------------------

_row_specs = st.lists(
    st.tuples(
        st.sampled_from(["eng", "Engineering", "ops", None]),
        st.sampled_from(["a topic", "another", "  ", "x" * 70]),
        st.integers(min_value=0, max_value=40),  # 0: a root, else a parent some rows back
        st.integers(min_value=1, max_value=3),  # the gap to the previous sequence
    ),
    max_size=60,
)


def _rows_of(specs: list[tuple[str | None, str, int, int]]) -> list[LogMessage]:
    rows: list[LogMessage] = []
    sequence = 0
    for chat_id, content, back, gap in specs:
        sequence += gap
        parent = rows[-back].sequence if back and len(rows) >= back else None
        rows.append(LogMessage(sequence, ADA, content, chat_id=chat_id, parent=parent))
    return rows


@settings(max_examples=200, deadline=None)
@given(_row_specs, st.integers(min_value=1, max_value=25), st.data())
def test_a_fold_fed_in_batches_lists_what_folding_its_scan_lists(
    specs: list[tuple[str | None, str, int, int]], scan: int, data: st.DataObject
) -> None:
    rows = _rows_of(specs)
    fold = ThreadIndexFold(ENG, scan)
    for taken in fed_in_batches(fold.extend, rows, data):
        limit = data.draw(st.integers(min_value=0, max_value=8))
        assert fold.lines(limit) == fold_threads(rows[max(0, taken - scan) : taken], ENG, limit)
        assert fold.newest == rows[taken - 1].sequence


@settings(max_examples=30, deadline=None)
@given(st.lists(st.sampled_from(["topic", "reply"]), min_size=250, max_size=300))
def test_a_fold_of_the_default_scan_equals_reading_the_index(kinds: list[str]) -> None:
    log = MemoryLog()
    for n, kind in enumerate(kinds):
        parent = n - 3 if kind == "reply" and n > 3 else None
        log.add(ADA, f"{kind} {n}", chat_id="eng", parent=parent)
    fold = ThreadIndexFold(ENG)
    fold.extend(log.rows)
    assert fold.lines() == asyncio.run(read_thread_index(log, ENG))


def test_a_fold_refuses_a_row_not_newer_than_the_last_and_lists_nothing_for_a_thread() -> None:
    fold = ThreadIndexFold(ENG)
    fold.extend([msg(1, "root"), msg(2, "other")])
    with pytest.raises(PageNotDescending):
        fold.extend([msg(2, "again")])
    assert ThreadIndexFold(Conversation("eng", "Engineering", 1)).lines() == []
    with pytest.raises(InvalidBound):
        fold.lines(-1)
