"""The newest rows of a conversation, kept in memory between turns.

A turn reads the same tail of a conversation again and again: the window, the thread
index and the pinboard each walk back up to a couple of thousand rows. The log is
append-only, so rows once read never change; a :class:`ConversationTail` keeps the
newest ``capacity`` rows of one conversation view and, before each turn, fetches only
the rows posted since.

It is itself a ``SessionLog`` that yields exactly the rows of the view it wraps, in the
same order: a page it can answer from memory it answers, and once a walk reaches past
the oldest row it holds, it hands that walk back to the view. The walk validates every
page as usual.
"""

from __future__ import annotations

import operator
from bisect import bisect_left
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterable
from itertools import islice
from typing import Protocol, TypeVar

from coderooms.rooms.context import Pin, ThreadLine
from coderooms.rooms.pins import PIN_SCAN, PinBoardFold
from coderooms.rooms.records import Conversation, LogMessage, Sequence, SessionPage
from coderooms.rooms.session import SessionLog
from coderooms.rooms.threads import THREAD_INDEX_SCAN, ThreadIndexFold

__all__ = ["TAIL_FETCH_PAGE", "TAIL_PROBE_PAGE", "ConversationTail", "TailCache"]

TAIL_FETCH_PAGE = 512
"""Rows asked of the view per read while topping a tail up."""
TAIL_PROBE_PAGE = 16
"""Rows asked of the view by the first read of a refresh of a tail that holds rows: a
turn usually finds a few new rows, and each row asked for is a row decoded."""


class _TailFold(Protocol):
    """What a tail keeps up to date for a conversation (ThreadIndexFold, PinBoardFold)."""

    conversation: Conversation

    @property
    def newest(self) -> Sequence | None: ...

    def extend(self, rows: Iterable[LogMessage]) -> None: ...


_Fold = TypeVar("_Fold", bound=_TailFold)


class ConversationTail:
    """Up to ``capacity`` newest rows of ``view``, oldest first in memory."""

    def __init__(self, view: SessionLog, capacity: int) -> None:
        self._view = view
        self._capacity = capacity
        self._rows: list[LogMessage] = []
        self._sequences: list[Sequence] = []
        self._complete = False  # True when the view holds nothing older than _rows[0]
        self._ascending = True  # the held rows' sequences strictly increase
        self._threads: ThreadIndexFold | None = None
        self._pins: PinBoardFold | None = None

    @property
    def newest(self) -> Sequence | None:
        return self._sequences[-1] if self._sequences else None

    def rebind(self, view: SessionLog) -> None:
        """Read through ``view`` from now on (a fresh view of the same conversation)."""
        self._view = view

    async def refresh(self) -> Sequence | None:
        """Fetch the rows posted since the last refresh; return the newest sequence."""
        known = self.newest
        fresh: list[LogMessage] = []
        before: Sequence | None = None
        reached_end = False
        asked = TAIL_FETCH_PAGE if known is None else TAIL_PROBE_PAGE
        while len(fresh) < self._capacity:
            page = await self._view.read_before(before, asked)
            asked = TAIL_FETCH_PAGE
            stop = False
            for row in page.messages:
                if known is not None and row.sequence <= known:
                    stop = True
                    break
                fresh.append(row)
            if stop:
                break
            if page.next_before is None or not page.messages:
                reached_end = True
                break
            before = page.next_before
        if not fresh:
            if reached_end and known is None:
                self._complete = True
            return self.newest
        fresh.reverse()
        # every fresh row is newer than the held ones (the loop above stops at those)
        kept_order = len(fresh) >= self._capacity or self._ascending
        self._ascending = kept_order and _ascending([row.sequence for row in fresh])
        if len(fresh) >= self._capacity:
            # the new rows alone fill the tail: what was held is now too old
            self._rows = fresh[-self._capacity :]
            self._complete = reached_end and len(fresh) <= self._capacity
        else:
            if known is None:
                self._complete = reached_end
            rows = self._rows + fresh
            if len(rows) > self._capacity:
                rows = rows[-self._capacity :]
                self._complete = False
            self._rows = rows
        self._sequences = [row.sequence for row in self._rows]
        return self.newest

    def thread_lines(self, conversation: Conversation, limit: int) -> list[ThreadLine] | None:
        """``read_thread_index`` over this tail, from a :class:`ThreadIndexFold` that takes
        only the rows held since the last call; None when the held rows cannot stand
        for the view (see :meth:`_caught_up`)."""
        fold = self._caught_up(self._threads, conversation, THREAD_INDEX_SCAN, ThreadIndexFold)
        if fold is None:
            return None
        self._threads = fold
        return fold.lines(limit)

    def pinboard(self, conversation: Conversation, limit: int) -> list[Pin] | None:
        """``read_pinboard`` (no ``before``) of a desk over this tail, from a
        :class:`PinBoardFold` kept up to date the same way; None for a thread, or when
        the held rows cannot stand for the view."""
        if conversation.thread_root is not None:
            return None
        fold = self._caught_up(self._pins, conversation, PIN_SCAN, PinBoardFold)
        if fold is None:
            return None
        self._pins = fold
        return fold.pins(limit)

    def _caught_up(
        self,
        fold: _Fold | None,
        conversation: Conversation,
        scan: int,
        make: Callable[[Conversation], _Fold],
    ) -> _Fold | None:
        """``fold`` having taken every held row, or a new one made from the newest
        ``scan`` held rows when it cannot catch up (none yet, another conversation, or
        the rows it took are no longer held). None when the held rows cannot stand for
        the view's newest ``scan`` (fewer held while older rows remain unread, or rows
        out of order): then the caller reads through the walk, which also reports rows
        out of order as the error they are."""
        if not self._ascending or (len(self._rows) < scan and not self._complete):
            return None
        since = None if fold is None else fold.newest
        at = -1 if since is None else bisect_left(self._sequences, since)
        if (
            fold is None
            or fold.conversation != conversation
            or not (0 <= at < len(self._sequences) and self._sequences[at] == since)
        ):
            fold = make(conversation)
            fold.extend(self._rows[-scan:] if scan else ())
        else:
            fold.extend(islice(self._rows, at + 1, None))
        return fold

    async def read_before(self, before: Sequence | None, limit: int) -> SessionPage:
        """The view's page, from memory when the held rows can answer it."""
        end = len(self._rows) if before is None else bisect_left(self._sequences, before)
        if before is not None and self._rows and before > self._sequences[-1] + 1:
            # newer than anything held: rows may have arrived since the last refresh
            return await self._view.read_before(before, limit)
        start = max(0, end - limit)
        if start > 0 or (end - start == limit and limit > 0):
            rows = self._rows[start:end]
            rows.reverse()
            return SessionPage(tuple(rows), next_before=rows[-1].sequence if rows else None)
        if self._complete:
            rows = self._rows[:end]
            rows.reverse()
            return SessionPage(tuple(rows))
        return await self._view.read_before(before, limit)


class TailCache:
    """Tails by conversation, the least recently used dropped beyond ``entries``."""

    def __init__(self, entries: int, capacity: int) -> None:
        self._entries = entries
        self._capacity = capacity
        self._tails: OrderedDict[Hashable, ConversationTail] = OrderedDict()

    def tail(self, key: Hashable, view: SessionLog) -> ConversationTail:
        found = self._tails.get(key)
        if found is None:
            found = ConversationTail(view, self._capacity)
            self._tails[key] = found
        else:
            found.rebind(view)
        self._tails.move_to_end(key)
        while len(self._tails) > self._entries:
            self._tails.popitem(last=False)
        return found


def _ascending(sequences: list[Sequence]) -> bool:
    return all(map(operator.lt, sequences, islice(sequences, 1, None)))
