"""project_session over malformed logs, the narrowing fold, and projection properties.

The behaviour every well-formed log must give lives in tests/conformance/.
"""

from __future__ import annotations

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from session_fakes import ALICE, ScriptedLog, page, row

from coderooms.errors import (
    CursorDidNotAdvance,
    DuplicateSequence,
    InvalidBound,
    PageTooLarge,
    ReadError,
)
from coderooms.rooms.chat import in_desk
from coderooms.rooms.memory import MemoryLog
from coderooms.rooms.records import (
    Agent,
    Conversation,
    LogMessage,
    Person,
    SessionPage,
    SessionQuery,
)
from coderooms.rooms.session import narrow_to_roots_and_first_replies, project_session

ENG = Conversation("eng", "Eng")


# --- errors reach the caller ------------------------------------------------------------


async def test_a_malformed_page_fails_the_projection() -> None:
    log = ScriptedLog(page([9, 8], next_before=9))
    with pytest.raises(Exception) as err:
        await project_session(log, SessionQuery(ENG))
    assert type(err.value).__name__ == "CursorAfterOldest"


async def test_a_duplicate_row_fails_the_projection() -> None:
    log = ScriptedLog(page([9, 8], next_before=8), page([8]))
    with pytest.raises(DuplicateSequence):
        await project_session(log, SessionQuery(ENG, window=30))


async def test_a_non_advancing_cursor_fails_the_thread_projection() -> None:
    log = ScriptedLog(page([4], next_before=5))
    thread = Conversation("eng", "Eng", thread_root=1)
    with pytest.raises(CursorDidNotAdvance):
        await project_session(log, SessionQuery(thread, before=5))


async def test_a_source_error_reaches_the_caller_with_its_source() -> None:
    source = ConnectionError("host went away")
    with pytest.raises(ReadError) as err:
        await project_session(ScriptedLog(source), SessionQuery(ENG))
    assert err.value.__cause__ is source


async def test_an_oversized_page_fails_even_if_the_window_is_small() -> None:
    with pytest.raises(PageTooLarge):
        await project_session(ScriptedLog(page(range(600, 0, -1))), SessionQuery(ENG, window=1))


async def test_a_negative_window_is_refused_without_reading() -> None:
    log = ScriptedLog()
    with pytest.raises(InvalidBound) as err:
        await project_session(log, SessionQuery(ENG, window=-1))
    assert (err.value.name, err.value.value) == ("window", -1)
    assert log.requests == []


async def test_a_thread_projection_reads_no_further_than_its_root() -> None:
    # the scripted log offers an older page; reaching the root must not ask for it
    rows = (row(5, parent=3), row(4), row(3))
    log = ScriptedLog(SessionPage(rows, next_before=3))
    thread = Conversation("eng", "Eng", thread_root=3)
    history = await project_session(log, SessionQuery(thread))
    assert [m.sequence for m in history] == [3, 5]
    assert len(log.requests) == 1


# --- narrow_to_roots_and_first_replies ---------------------------------------------------


def test_narrowing_keeps_roots_and_first_replies_in_order() -> None:
    rows = [row(1), row(2, parent=1), row(3), row(4, parent=1), row(5, parent=3)]
    assert [r.sequence for r in narrow_to_roots_and_first_replies(rows)] == [1, 2, 3, 5]


def test_narrowing_drops_blank_rows_and_orphans() -> None:
    rows = [row(1, " "), row(2, parent=1), row(3, parent=99), row(4, "", parent=None)]
    assert [r.sequence for r in narrow_to_roots_and_first_replies(rows)] == [2]


def test_narrowing_returns_the_rows_themselves() -> None:
    rows = [row(1, "  keep me  ")]
    assert narrow_to_roots_and_first_replies(rows)[0] is rows[0]


# --- properties ---------------------------------------------------------------------------

DESKS = ["eng", "Eng", "ENG", "ops", None, "main"]
AUTHORS = [ALICE, Agent("bob", "Bob"), Person("p", "Pat")]
CONTENTS = ["hello", "  ", "", "a reply", " spaced \n"]


ROW_SHAPES = st.tuples(
    st.integers(1, 3),  # gap to the previous sequence
    st.sampled_from(AUTHORS),
    st.sampled_from(CONTENTS),
    st.sampled_from(DESKS),
    st.none() | st.integers(0, 10_000),  # picks an earlier row as parent
)


@st.composite
def logs(draw: st.DrawFn) -> list[LogMessage]:
    rows: list[LogMessage] = []
    sequence = 0
    for gap, author, content, chat_id, pick in draw(st.lists(ROW_SHAPES, max_size=100)):
        sequence += gap
        parent = rows[pick % len(rows)].sequence if rows and pick is not None else None
        rows.append(LogMessage(sequence, author, content, chat_id=chat_id, parent=parent))
    return rows


@st.composite
def cases(draw: st.DrawFn) -> tuple[list[LogMessage], SessionQuery]:
    rows = draw(logs())
    desk = draw(st.sampled_from([("eng", "Eng"), ("ops", "ops"), ("General", "General")]))
    root = None
    if rows and draw(st.booleans()):
        root = draw(st.sampled_from(rows)).sequence
    before = draw(st.none() | st.integers(0, (rows[-1].sequence + 2) if rows else 3))
    window = draw(st.integers(0, 40))
    return rows, SessionQuery(Conversation(desk[0], desk[1], root), before, window)


@settings(max_examples=300, deadline=None)
@given(cases())
async def test_projection_properties(case: tuple[list[LogMessage], SessionQuery]) -> None:
    rows, query = case
    history = await project_session(MemoryLog(rows), query)
    by_sequence = {r.sequence: r for r in rows}
    sequences = [m.sequence for m in history]
    conv = query.conversation

    assert len(history) <= query.window
    assert len(set(sequences)) == len(sequences)
    assert sequences == sorted(sequences)
    for message in history:
        source = by_sequence[message.sequence]
        assert (message.author, message.content) == (source.author, source.content)
        assert message.content.strip()
        assert query.before is None or message.sequence < query.before
        assert in_desk(source.chat_id, conv.desk_id, conv.desk_name)
        if conv.thread_root is None:
            parent = source.parent
            if parent is not None:  # a first reply, to a root of the same desk
                root = by_sequence[parent]
                assert root.parent is None
                assert in_desk(root.chat_id, conv.desk_id, conv.desk_name)
        else:
            assert conv.thread_root in (source.sequence, source.parent)


_SHORT_THREAD = (
    [LogMessage(seq, Agent("alice", "Alice"), "hello", "eng") for seq in range(1, 9)]
    + [LogMessage(seq, Agent("alice", "Alice"), "hello", None, 2) for seq in (9, 10)],
    SessionQuery(Conversation("General", "General", 2), None, 3),
)


@settings(max_examples=200, deadline=None)
@given(cases())
@example(_SHORT_THREAD)  # fewer thread rows than the window
async def test_thread_projection_matches_its_definition(
    case: tuple[list[LogMessage], SessionQuery],
) -> None:
    rows, query = case
    conv = query.conversation
    if conv.thread_root is None:
        return
    # every row of a generated log is newer than its parent, so the thread is exactly the
    # newest `window` non-blank in-desk rows that are the root or answer it
    expected = [
        r.sequence
        for r in rows
        if (query.before is None or r.sequence < query.before)
        and in_desk(r.chat_id, conv.desk_id, conv.desk_name)
        and conv.thread_root in (r.sequence, r.parent)
        and r.content.strip()
    ]
    expected = expected[max(0, len(expected) - query.window) :] if query.window else []
    history = await project_session(MemoryLog(rows), query)
    assert [m.sequence for m in history] == expected


@settings(max_examples=200, deadline=None)
@given(cases())
async def test_channel_projection_matches_its_definition_when_the_window_is_not_filled(
    case: tuple[list[LogMessage], SessionQuery],
) -> None:
    rows, query = case
    conv = query.conversation
    if conv.thread_root is not None or query.window == 0:
        return
    in_scope = [
        r
        for r in rows
        if (query.before is None or r.sequence < query.before)
        and in_desk(r.chat_id, conv.desk_id, conv.desk_name)
    ]
    visible = [r for r in in_scope if r.content.strip()]
    roots = {r.sequence for r in visible if r.parent is None}
    answered = {r.parent for r in visible if r.parent is not None}
    if len(roots) + len(answered) >= query.window:
        return  # the walk may stop early; the other properties still cover this case
    history = await project_session(MemoryLog(rows), query)
    expected = narrow_to_roots_and_first_replies(in_scope)
    assert [m.sequence for m in history] == [r.sequence for r in expected]
