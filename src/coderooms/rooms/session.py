"""Reading a host-owned log: the ``SessionLog`` port, the validated walk, the projection.

The host owns every row and every cursor. The core asks for pages newest-first through
:class:`SessionLog`, checks each page before using any of it (so a misbehaving log can
neither loop, skip nor duplicate history), and folds what it reads into a bounded,
attributed, chronological window.
"""

from __future__ import annotations

import operator
from collections import deque
from collections.abc import AsyncIterator, Iterable
from itertools import islice
from typing import Protocol

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
)
from coderooms.rooms.chat import DeskTest
from coderooms.rooms.records import (
    PAGE_SIZE,
    SCAN_LIMIT,
    Conversation,
    LogMessage,
    Sequence,
    SessionMessage,
    SessionPage,
    SessionQuery,
)

__all__ = [
    "LogWalk",
    "ScanWindow",
    "interior_pages",
    "SessionLog",
    "is_blank",
    "narrow_to_roots_and_first_replies",
    "project_session",
    "walk_log",
]


class SessionLog(Protocol):
    """The one read port of the room core.

    ``read_before`` answers the newest rows of the whole log strictly below ``before``
    (``None``: from the newest row), newest first, at most ``limit`` of them, with
    ``next_before`` set when older rows may remain. Any event loop may drive it.
    """

    async def read_before(self, before: Sequence | None, limit: int) -> SessionPage: ...


def is_blank(content: str) -> bool:
    """Content that trims to nothing never becomes a projected message."""
    return content.strip() == ""


class LogWalk:
    """A validated backward walk over a :class:`SessionLog`, one row at a time.

    Iterate it with ``async for``, or take the rows a page at a time with
    :meth:`next_rows`; either way rows arrive newest first. Each read asks for
    ``min(PAGE_SIZE, scan_limit - scanned)`` rows, and a page is checked in full before
    any of its rows is handed out. The walk ends when the log advertises no older page
    (``exhausted``) or when ``scan_limit`` raw rows have been read (``reached_cap`` — a
    successful, partial end). A consumer may stop early; nothing needs closing.

    A walk is single-use: once finished it yields nothing more.
    """

    def __init__(self, log: SessionLog, before: Sequence | None, scan_limit: int = SCAN_LIMIT):
        if scan_limit < 0:
            raise InvalidBound("scan_limit", scan_limit)
        self._log = log
        self._cursor = before
        self._scan_limit = scan_limit
        self._page: tuple[LogMessage, ...] = ()
        self._index = 0
        self._seen: set[Sequence] = set()
        self.scanned = 0
        """Raw rows read so far (every row of every page, in desk or not)."""
        self.exhausted = False
        """True once the log reported that no older rows remain."""
        self.reached_cap = scan_limit == 0
        """True once the walk stopped because it had read ``scan_limit`` rows."""

    @property
    def finished(self) -> bool:
        """Whether the walk has ended, by exhausting the log or by reaching its cap."""
        return self.exhausted or self.reached_cap

    def __aiter__(self) -> LogWalk:
        return self

    async def __anext__(self) -> LogMessage:
        while self._index >= len(self._page):
            if self.finished:
                raise StopAsyncIteration
            await self._read_page()
        row = self._page[self._index]
        self._index += 1
        return row

    async def next_rows(self) -> tuple[LogMessage, ...]:
        """The rows ``async for`` would hand out next, up to the end of a page: what is
        left of the current page, else the next page (read and checked exactly as
        ``async for`` would); empty once the walk has finished.

        A scan that looks at every row loops over these tuples instead of paying one
        coroutine call per row. Mixing it with ``async for`` on one walk is fine: no row
        is handed out twice.
        """
        while self._index >= len(self._page):
            if self.finished:
                return ()
            await self._read_page()
        rows = self._page[self._index :] if self._index else self._page
        self._index = len(self._page)
        return rows

    async def _read_page(self) -> None:
        before = self._cursor
        requested = min(PAGE_SIZE, self._scan_limit - self.scanned)
        try:
            page = await self._log.read_before(before, requested)
        except Exception as err:  # the port's own failure, whatever its type
            raise ReadError(f"{type(err).__name__}: {err}") from err
        if not isinstance(page, SessionPage):
            cause = TypeError(f"read_before returned {type(page).__name__}, not a SessionPage")
            raise ReadError(str(cause)) from cause
        rows = page.messages
        self._validate(page, before, requested)
        self._page = rows
        self._index = 0
        self.scanned += len(rows)
        if not rows or page.next_before is None:
            self.exhausted = True
        elif self.scanned >= self._scan_limit:
            self.reached_cap = True
        else:
            self._cursor = page.next_before

    def _validate(self, page: SessionPage, before: Sequence | None, requested: int) -> None:
        rows = page.messages
        if len(rows) > requested:
            raise PageTooLarge(requested, len(rows))
        if not rows:
            if page.next_before is not None:
                raise EmptyPageCursor(page.next_before)
            return
        sequences = [row.sequence for row in rows]
        if _plainly_ordered(sequences, before) and self._seen.isdisjoint(sequences):
            self._seen.update(sequences)  # the loop below would find nothing wrong
        else:
            self._check_rows(rows, before)
        next_before = page.next_before
        if next_before is not None:
            if before is not None and next_before >= before:
                raise CursorDidNotAdvance(before, next_before)
            oldest = rows[-1].sequence
            if next_before > oldest:
                raise CursorAfterOldest(next_before, oldest)

    def _check_rows(self, rows: tuple[LogMessage, ...], before: Sequence | None) -> None:
        """Row by row, in order, the first of: a duplicate, a row at or above the cursor,
        a row not older than the one before it."""
        previous: Sequence | None = None
        for row in rows:
            sequence = row.sequence
            if sequence in self._seen:
                raise DuplicateSequence(sequence)
            if before is not None and sequence >= before:
                raise PageOutOfRange(sequence, before)
            if previous is not None and previous <= sequence:
                raise PageNotDescending(previous, sequence)
            self._seen.add(sequence)
            previous = sequence


def _plainly_ordered(sequences: list[Sequence], before: Sequence | None) -> bool:
    """Whether non-empty ``sequences`` strictly descend from below ``before`` — what
    every well-behaved page does — checked by comparisons in C rather than a Python loop.
    Sequences that do not compare (a badly broken log) are left to the row-by-row check,
    which then raises what it always has."""
    try:
        return (before is None or sequences[0] < before) and all(
            map(operator.gt, sequences, islice(sequences, 1, None))
        )
    except TypeError:
        return False


class ScanWindow:
    """The newest ``scan`` raw rows of a log, taken oldest first, one row at a time: what a
    walk from the newest row with scan cap ``scan`` would read, kept up to date by a fold
    that follows the log (the thread index, the pinboard) instead of walking again."""

    def __init__(self, scan: int) -> None:
        if scan < 0:
            raise InvalidBound("scan", scan)
        self._scan = scan
        self._rows: deque[LogMessage] = deque()

    @property
    def newest(self) -> Sequence | None:
        """The newest row taken (None: none yet)."""
        return self._rows[-1].sequence if self._rows else None

    def take(self, row: LogMessage) -> LogMessage | None:
        """Take ``row``, newer than every row taken before
        (:class:`~coderooms.errors.PageNotDescending` otherwise); return the row it
        pushed out of the scan, if one."""
        rows = self._rows
        if rows and row.sequence <= rows[-1].sequence:
            raise PageNotDescending(row.sequence, rows[-1].sequence)
        rows.append(row)
        return rows.popleft() if len(rows) > self._scan else None


def walk_log(log: SessionLog, before: Sequence | None, scan_limit: int = SCAN_LIMIT) -> LogWalk:
    """Walk ``log`` backwards from the exclusive cursor ``before``, reading at most
    ``scan_limit`` raw rows. See :class:`LogWalk`."""
    return LogWalk(log, before, scan_limit)


async def interior_pages(
    log: SessionLog, scope: Conversation | None, before: Sequence | None, scan_limit: int
) -> AsyncIterator[tuple[LogMessage, ...]]:
    """The rows of a conversation's interior among the newest ``scan_limit`` raw rows
    below ``before``, newest first, a page at a time: a desk's rows with its thread
    replies, or a thread's root and direct replies (that walk ends at the root, since
    no reply is older). With no scope, every row. Pages may come out empty."""
    walk = walk_log(log, before, scan_limit)
    if scope is None:
        while rows := await walk.next_rows():
            yield rows
        return
    in_scope_desk = DeskTest(scope.desk_id, scope.desk_name)
    root = scope.thread_root
    while rows := await walk.next_rows():
        if root is None:
            yield in_scope_desk.keep(rows)
            continue
        yield tuple(
            row
            for row in rows
            if (row.sequence == root or (row.parent == root and row.sequence > root))
            and in_scope_desk(row.chat_id)
        )
        if rows[-1].sequence < root:
            return


def narrow_to_roots_and_first_replies(candidates: Iterable[LogMessage]) -> list[LogMessage]:
    """The channel view of chronological ``candidates``: every non-blank root, and for
    each root among the candidates only its first non-blank direct reply.

    A reply whose root is not a candidate (it fell outside the scan, or it is itself a
    reply) is dropped rather than shown as a statement whose question the reader never
    saw. A blank root is not shown, but its first reply is.
    """
    rows = list(candidates)
    roots = {row.sequence for row in rows if row.parent is None}
    answered: set[Sequence] = set()
    kept: list[LogMessage] = []
    for row in rows:
        if is_blank(row.content):
            continue
        if row.parent is None:
            kept.append(row)
        elif row.parent in roots and row.parent not in answered:
            answered.add(row.parent)
            kept.append(row)
    return kept


async def project_session(log: SessionLog, query: SessionQuery) -> list[SessionMessage]:
    """The bounded, attributed, chronological history of ``query.conversation``.

    Reads rows strictly below ``query.before`` (so passing the current message's sequence
    excludes it), at most ``SCAN_LIMIT`` raw rows, and returns at most ``query.window``
    messages. A zero window reads nothing. Reaching the scan cap is not an error: the
    history found so far is returned. Authors and content are returned untouched.
    """
    if query.window < 0:
        raise InvalidBound("window", query.window)
    if query.window == 0:
        return []
    walk = walk_log(log, query.before)
    if query.conversation.thread_root is None:
        rows = await _channel_rows(walk, query)
    else:
        rows = await _thread_rows(walk, query, query.conversation.thread_root)
    return [SessionMessage(row.sequence, row.author, row.content, row.posted_at) for row in rows]


async def _thread_rows(walk: LogWalk, query: SessionQuery, root: Sequence) -> list[LogMessage]:
    in_conversation_desk = DeskTest(query.conversation.desk_id, query.conversation.desk_name)
    newest_first: list[LogMessage] = []
    while rows := await walk.next_rows():  # a page at a time: no coroutine call per row
        for row in in_conversation_desk.keep(rows):
            is_root = row.sequence == root
            if not is_root and row.parent != root:
                continue
            if not is_blank(row.content):
                newest_first.append(row)
            if is_root or len(newest_first) >= query.window:
                newest_first.reverse()
                return newest_first
    newest_first.reverse()
    return newest_first


async def _channel_rows(walk: LogWalk, query: SessionQuery) -> list[LogMessage]:
    in_conversation_desk = DeskTest(query.conversation.desk_id, query.conversation.desk_name)
    candidates: list[LogMessage] = []
    # The estimate of how many messages the candidates will narrow to: one per non-blank
    # root, plus one per parent some non-blank reply answers.
    roots: set[Sequence] = set()
    answered: set[Sequence] = set()
    enough = False
    while not enough and (rows := await walk.next_rows()):
        for row in in_conversation_desk.keep(rows):
            candidates.append(row)
            if is_blank(row.content):
                continue
            if row.parent is None:
                roots.add(row.sequence)
            else:
                answered.add(row.parent)
            if len(roots) + len(answered) >= query.window:
                enough = True
                break
    candidates.reverse()
    narrowed = narrow_to_roots_and_first_replies(candidates)
    return narrowed[-query.window :]
