"""Projection behaviour every well-formed SessionLog must give (seed 001, sessions).

Each test runs once per factory in ``conftest.LOG_FACTORIES``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

import pytest

from coderooms.rooms.records import (
    SCAN_LIMIT,
    Agent,
    Conversation,
    LogMessage,
    Operator,
    Person,
    SessionAuthor,
    SessionMessage,
    SessionPage,
    SessionQuery,
    System,
)
from coderooms.rooms.session import SessionLog, project_session

LogFactory = Callable[[list[LogMessage]], SessionLog]

ALICE = Agent("alice", "Alice")
BOB = Agent("bob", "Bob")
ENG = Conversation("engineering", "Engineering")
GENERAL = Conversation("General", "General")


class Counting:
    """Forwards reads to a log and remembers them."""

    def __init__(self, inner: SessionLog) -> None:
        self.inner = inner
        self.requests: list[tuple[int | None, int]] = []

    async def read_before(self, before: int | None, limit: int) -> SessionPage:
        self.requests.append((before, limit))
        return await self.inner.read_before(before, limit)


def msg(
    sequence: int,
    content: str | None = None,
    *,
    chat: str | None = "engineering",
    parent: int | None = None,
    author: SessionAuthor = ALICE,
) -> LogMessage:
    text = f"message {sequence}" if content is None else content
    return LogMessage(sequence, author, text, chat_id=chat, parent=parent)


def roots(sequences: Iterable[int], chat: str | None = "engineering") -> list[LogMessage]:
    return [msg(s, chat=chat) for s in sequences]


async def project(
    log: SessionLog,
    conversation: Conversation = ENG,
    *,
    before: int | None = None,
    window: int = 30,
) -> list[int]:
    history = await project_session(log, SessionQuery(conversation, before, window))
    return [m.sequence for m in history]


# --- window and bounds ------------------------------------------------------------------


async def test_a_zero_window_performs_no_read(make_log: LogFactory) -> None:
    log = Counting(make_log(roots(range(1, 6))))
    assert await project(log, window=0) == []
    assert log.requests == []


async def test_the_history_is_the_newest_window_in_chronological_order(
    make_log: LogFactory,
) -> None:
    log = make_log(roots(range(1, 101)))
    assert await project(log, window=30) == list(range(71, 101))


async def test_the_before_cursor_is_exclusive(make_log: LogFactory) -> None:
    log = make_log(roots(range(1, 11)))
    assert await project(log, before=8, window=3) == [5, 6, 7]


async def test_the_current_message_is_excluded_by_its_own_sequence(make_log: LogFactory) -> None:
    rows = [*roots(range(1, 5)), msg(5, "@bob what do you think?")]
    history = await project_session(make_log(rows), SessionQuery(ENG, before=5))
    assert [m.sequence for m in history] == [1, 2, 3, 4]


async def test_an_empty_log_projects_nothing(make_log: LogFactory) -> None:
    assert await project(make_log([])) == []


async def test_a_window_larger_than_a_page_spans_pages_in_order(make_log: LogFactory) -> None:
    log = Counting(make_log(roots(range(1, 1501))))
    assert await project(log, window=1000) == list(range(501, 1501))
    assert len(log.requests) == 2
    assert all(limit <= 512 for _, limit in log.requests)


async def test_sparse_sequences_are_kept_as_stored(make_log: LogFactory) -> None:
    log = make_log(roots([3, 10, 11, 400, 90_000]))
    assert await project(log) == [3, 10, 11, 400, 90_000]


# --- the scan cap -------------------------------------------------------------------------


async def test_reaching_the_scan_cap_returns_what_was_found(make_log: LogFactory) -> None:
    total = SCAN_LIMIT + 952
    rows = [
        msg(s, chat="engineering" if 1000 <= s <= 1010 or s <= 100 else "ops")
        for s in range(1, total + 1)
    ]
    log = Counting(make_log(rows))
    # the walk reads rows total..total-2047 = 3000..953: it meets 1000..1010 only
    assert await project(log) == list(range(1000, 1011))
    assert sum(limit for _, limit in log.requests) == SCAN_LIMIT


async def test_a_desk_whose_rows_lie_beyond_the_cap_projects_nothing(
    make_log: LogFactory,
) -> None:
    rows = [msg(s, chat="engineering" if s <= 10 else "ops") for s in range(1, SCAN_LIMIT + 11)]
    assert await project(make_log(rows)) == []


# --- desk filtering -------------------------------------------------------------------------


async def test_only_rows_of_the_desk_are_projected(make_log: LogFactory) -> None:
    rows = [
        msg(1, chat="engineering"),
        msg(2, chat="Engineering"),
        msg(3, chat="ENGINEERING"),
        msg(4, chat="ops"),
        msg(5, chat=None),
        msg(6, chat="engineering"),
    ]
    assert await project(make_log(rows)) == [1, 2, 6]


async def test_general_gathers_every_general_alias(make_log: LogFactory) -> None:
    rows = [
        msg(1, chat=None),
        msg(2, chat=""),
        msg(3, chat="main"),
        msg(4, chat="GENERAL"),
        msg(5, chat="General"),
        msg(6, chat="engineering"),
        msg(7, chat="mainline"),
    ]
    assert await project(make_log(rows), GENERAL) == [1, 2, 3, 4, 5]


# --- channel projection -------------------------------------------------------------------


async def test_channel_keeps_roots_and_only_the_first_reply_to_each(make_log: LogFactory) -> None:
    rows = [
        msg(1),
        msg(2, parent=1),
        msg(3, parent=1),
        msg(4),
        msg(5, parent=2),  # a reply to a reply never reaches the channel
        msg(6, parent=4),
    ]
    assert await project(make_log(rows)) == [1, 2, 4, 6]


async def test_channel_drops_a_reply_whose_root_is_outside_the_scan(make_log: LogFactory) -> None:
    rows = [msg(1), msg(2), msg(3, parent=1), msg(4)]
    # with window 2 the walk stops at row 3's estimate (roots {4}, answered {1}) before
    # reaching row 1, so the reply would stand without its question: it is dropped
    assert await project(make_log(rows), window=2) == [4]


async def test_channel_drops_a_reply_whose_root_is_in_another_desk(make_log: LogFactory) -> None:
    rows = [msg(1, chat="ops"), msg(2, parent=1), msg(3)]
    assert await project(make_log(rows)) == [3]


async def test_channel_shows_the_first_reply_to_a_blank_root(make_log: LogFactory) -> None:
    rows = [msg(1, "   "), msg(2, "answer", parent=1), msg(3, "again", parent=1)]
    assert await project(make_log(rows)) == [2]


async def test_channel_skips_a_blank_first_reply_for_the_next(make_log: LogFactory) -> None:
    rows = [msg(1), msg(2, "\n\t ", parent=1), msg(3, parent=1), msg(4, parent=1)]
    assert await project(make_log(rows)) == [1, 3]


async def test_channel_stops_reading_once_the_estimate_fills_the_window(
    make_log: LogFactory,
) -> None:
    log = Counting(make_log(roots(range(1, 2001))))
    assert await project(log, window=5) == [1996, 1997, 1998, 1999, 2000]
    assert len(log.requests) == 1


# --- thread projection ----------------------------------------------------------------------


async def test_thread_keeps_the_root_and_its_direct_replies(make_log: LogFactory) -> None:
    rows = [
        msg(1),
        msg(2),
        msg(3, parent=2),
        msg(4),
        msg(5, parent=3),  # grandchild: not a direct reply
        msg(6, parent=2),
        msg(7, parent=4),
    ]
    thread = Conversation("engineering", "Engineering", thread_root=2)
    assert await project(make_log(rows), thread) == [2, 3, 6]


async def test_thread_stops_at_the_root(make_log: LogFactory) -> None:
    rows = roots(range(1, 1501))
    rows[799] = msg(800)
    rows[1199] = msg(1200, parent=800)
    log = Counting(make_log(rows))
    thread = Conversation("engineering", "Engineering", thread_root=800)
    assert await project(log, thread) == [800, 1200]
    # the root lies on the second page; no third page is read
    assert len(log.requests) == 2


async def test_thread_stops_at_a_blank_root_without_showing_it(make_log: LogFactory) -> None:
    rows = roots(range(1, 1501))
    rows[799] = msg(800, "  \n ")
    rows[1199] = msg(1200, parent=800)
    rows[1299] = msg(1300, parent=800)
    log = Counting(make_log(rows))
    thread = Conversation("engineering", "Engineering", thread_root=800)
    assert await project(log, thread) == [1200, 1300]
    assert len(log.requests) == 2


async def test_thread_keeps_the_newest_replies_when_the_window_fills(
    make_log: LogFactory,
) -> None:
    rows = [msg(1), *[msg(s, parent=1) for s in range(2, 42)]]
    thread = Conversation("engineering", "Engineering", thread_root=1)
    assert await project(make_log(rows), thread, window=30) == list(range(12, 42))


async def test_thread_ignores_a_same_numbered_parent_in_another_desk(
    make_log: LogFactory,
) -> None:
    rows = [msg(1), msg(2, parent=1), msg(3, parent=1, chat="ops")]
    thread = Conversation("engineering", "Engineering", thread_root=1)
    assert await project(make_log(rows), thread) == [1, 2]


async def test_thread_respects_the_before_cursor(make_log: LogFactory) -> None:
    rows = [msg(1), msg(2, parent=1), msg(3, parent=1), msg(4, parent=1)]
    thread = Conversation("engineering", "Engineering", thread_root=1)
    assert await project(make_log(rows), thread, before=4) == [1, 2, 3]


# --- content and attribution ---------------------------------------------------------------


async def test_blank_content_is_skipped_and_other_bytes_are_kept(make_log: LogFactory) -> None:
    kept = ["  padded  \n", "tabs\tand\r\nCRLF", "émoji 🚀 ünïcode", "\u00a0x\u00a0"]
    rows = [
        msg(1, kept[0]),
        msg(2, ""),
        msg(3, kept[1]),
        msg(4, " \t\n\r "),
        msg(5, kept[2]),
        msg(6, "\u3000"),
        msg(7, kept[3]),
    ]
    history = await project_session(make_log(rows), SessionQuery(ENG))
    assert [(m.sequence, m.content) for m in history] == [
        (1, kept[0]),
        (3, kept[1]),
        (5, kept[2]),
        (7, kept[3]),
    ]


async def test_every_author_is_preserved(make_log: LogFactory) -> None:
    authors: list[SessionAuthor] = [
        ALICE,
        Person("p1", "Dana"),
        Operator(),
        System("deploy", "Deploy bot"),
        BOB,
    ]
    rows = [msg(i + 1, f"line {i}", author=a) for i, a in enumerate(authors)]
    history = await project_session(make_log(rows), SessionQuery(ENG))
    assert history == [SessionMessage(i + 1, a, f"line {i}") for i, a in enumerate(authors)]


async def test_one_row_yields_at_most_one_message(make_log: LogFactory) -> None:
    rows = [msg(1), msg(2, parent=1), msg(3)]
    history = await project_session(make_log(rows), SessionQuery(ENG))
    sequences = [m.sequence for m in history]
    assert len(sequences) == len(set(sequences))


@pytest.mark.parametrize(
    ("window", "expected"),
    [
        (1, [59]),
        # the estimate counts row 58's parent, which lies just outside the scan: the
        # window is not exceeded, the orphaned reply is dropped, and one slot stays empty
        (2, [59]),
        (7, [53, 54, 55, 56, 57, 58, 59]),
    ],
)
async def test_channel_estimate_never_exceeds_the_window(
    make_log: LogFactory, window: int, expected: list[int]
) -> None:
    rows = [msg(1), *[msg(s, parent=s - 1 if s % 2 == 0 else None) for s in range(2, 60)]]
    assert await project(make_log(rows), window=window) == expected
