"""The thread index: which threads of a desk are live, folded from the log's tail.

Which threads matter is a recency question, so the index reads only the newest
``THREAD_INDEX_SCAN`` raw rows. Every non-blank top-level row of the desk in that slice
opens a thread; its non-blank direct replies count and move its latest activity.
Nothing is stored: the index is a fold, like everything else here.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from itertools import islice

from coderooms.errors import InvalidBound
from coderooms.rooms.chat import DeskTest
from coderooms.rooms.context import ThreadLine
from coderooms.rooms.ranking import MatchKind
from coderooms.rooms.records import Conversation, LogMessage, Sequence
from coderooms.rooms.search import SearchPattern, cut_opening
from coderooms.rooms.session import ScanWindow, SessionLog, is_blank, walk_log

__all__ = [
    "THREAD_INDEX_LIMIT",
    "THREAD_INDEX_SCAN",
    "THREAD_OPENING_CHARS",
    "ThreadHit",
    "ThreadIndexFold",
    "fold_threads",
    "read_thread_index",
    "search_threads",
]

THREAD_INDEX_LIMIT = 5
"""Threads a turn's context lists by default."""
THREAD_OPENING_CHARS = 60
"""Characters of a thread's opening words before the cut."""
THREAD_INDEX_SCAN = 256
"""Raw rows from the log's tail that the thread index reads."""


@dataclass(frozen=True, slots=True)
class ThreadHit:
    """A thread whose opening matched a search, with the match's score and tier."""

    line: ThreadLine
    score: int
    kind: MatchKind


@dataclass(slots=True)
class _OpenThread:
    root: Sequence
    content: str  # the root's, cut to the opening only once the thread is listed
    replies: int
    latest: Sequence


def _fold_all(
    rows: Iterable[LogMessage], conversation: Conversation, limit: int | None = None
) -> list[ThreadLine]:
    """Every thread of the desk among ``rows``, the most recently active first (only
    the first ``limit`` of them with a limit: the others' openings are never cut)."""
    in_conversation_desk = DeskTest(conversation.desk_id, conversation.desk_name)
    threads: dict[Sequence, _OpenThread] = {}
    for row in in_conversation_desk.keep(tuple(rows)):
        if is_blank(row.content):
            continue
        if row.parent is None:
            if row.sequence not in threads:
                threads[row.sequence] = _OpenThread(row.sequence, row.content, 0, row.sequence)
            continue
        thread = threads.get(row.parent)
        if thread is not None:
            thread.replies += 1
            thread.latest = max(thread.latest, row.sequence)
    ordered = sorted(threads.values(), key=lambda thread: thread.latest, reverse=True)
    return [
        ThreadLine(t.root, cut_opening(t.content, THREAD_OPENING_CHARS), t.replies, t.latest)
        for t in ordered[:limit]
    ]


def fold_threads(
    rows: Iterable[LogMessage], conversation: Conversation, limit: int
) -> list[ThreadLine]:
    """The ``limit`` most recently active threads of the desk among chronological
    ``rows``. A thread-scoped conversation has no index of its own (empty)."""
    if limit < 0:
        raise InvalidBound("limit", limit)
    if limit == 0 or conversation.thread_root is not None:
        return []
    return _fold_all(rows, conversation, limit)


class ThreadIndexFold:
    """:func:`read_thread_index` kept up to date row by row.

    It holds the newest ``scan`` raw rows taken so far and the fold of them, threads in
    order of their latest activity. Each new row
    is folded in as it comes and the oldest one let go, so a turn pays for the rows
    posted since the last turn, not for the whole scan again. Fed a log's rows oldest
    first, :meth:`lines` equals ``read_thread_index`` over that log.

    A root is older than its replies, so it leaves the scan before any of them: letting
    a row go only ever closes the thread it opened.
    """

    def __init__(self, conversation: Conversation, scan: int = THREAD_INDEX_SCAN) -> None:
        self.conversation = conversation
        self._window = ScanWindow(scan)
        self._in_desk = DeskTest(conversation.desk_id, conversation.desk_name)
        self._threads: dict[Sequence, _OpenThread] = {}

    @property
    def newest(self) -> Sequence | None:
        """The newest row taken (None: none yet)."""
        return self._window.newest

    def extend(self, rows: Iterable[LogMessage]) -> None:
        """Take ``rows``, oldest first, each newer than every row taken before
        (:class:`~coderooms.errors.PageNotDescending` otherwise)."""
        threads = self._threads
        for row in rows:
            gone = self._window.take(row)
            if self._in_desk(row.chat_id) and not is_blank(row.content):
                if row.parent is None:
                    threads[row.sequence] = _OpenThread(row.sequence, row.content, 0, row.sequence)
                else:
                    thread = threads.pop(row.parent, None)
                    if thread is not None:
                        thread.replies += 1
                        thread.latest = max(thread.latest, row.sequence)
                        threads[row.parent] = thread  # now the most recently active
            if gone is not None and gone.parent is None:
                threads.pop(gone.sequence, None)

    def lines(self, limit: int = THREAD_INDEX_LIMIT) -> list[ThreadLine]:
        """The ``limit`` most recently active threads, as :func:`read_thread_index`
        lists them."""
        if limit < 0:
            raise InvalidBound("limit", limit)
        if limit == 0 or self.conversation.thread_root is not None:
            return []
        # rows arrive in sequence order, so the thread a row last touched is the most
        # recently active one: the dict holds the threads in order of activity
        newest = islice(reversed(self._threads.values()), limit)
        return [
            ThreadLine(t.root, cut_opening(t.content, THREAD_OPENING_CHARS), t.replies, t.latest)
            for t in newest
        ]


async def _tail_rows(log: SessionLog, conversation: Conversation) -> list[LogMessage]:
    in_conversation_desk = DeskTest(conversation.desk_id, conversation.desk_name)
    walk = walk_log(log, None, THREAD_INDEX_SCAN)
    kept: list[LogMessage] = []
    while rows := await walk.next_rows():
        kept.extend(in_conversation_desk.keep(rows))
    kept.reverse()
    return kept


async def read_thread_index(
    log: SessionLog, conversation: Conversation, limit: int = THREAD_INDEX_LIMIT
) -> list[ThreadLine]:
    """The desk's live threads, read from the newest ``THREAD_INDEX_SCAN`` raw rows of
    the log. A zero limit or a thread-scoped conversation reads nothing."""
    if limit < 0:
        raise InvalidBound("limit", limit)
    if limit == 0 or conversation.thread_root is not None:
        return []
    return fold_threads(await _tail_rows(log, conversation), conversation, limit)


async def search_threads(
    log: SessionLog, conversation: Conversation, pattern: SearchPattern, limit: int
) -> list[ThreadHit]:
    """The desk's threads (from the same tail the index reads) ranked by how well their
    opening words match ``pattern``; among equal scores the most recently active first.

    A zero limit, a thread-scoped conversation or a blank pattern reads nothing; an
    expression is compiled before anything is read.
    """
    if limit < 0:
        raise InvalidBound("limit", limit)
    if limit == 0 or conversation.thread_root is not None or pattern.is_blank:
        return []
    compiled = pattern.compile()
    lines = _fold_all(await _tail_rows(log, conversation), conversation)
    hits: list[ThreadHit] = []
    for line in lines:
        found = compiled.match(line.opening)
        if found is not None:
            hits.append(ThreadHit(line, found.score, found.kind))
    hits.sort(key=lambda hit: -hit.score)
    return hits[:limit]
