"""An in-memory :class:`~coderooms.rooms.session.SessionLog`, for tests and library users.

It behaves like a well-formed host log: rows are kept in strictly increasing sequence
order and pages come back newest first with an honest ``next_before`` cursor.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterable

from coderooms.errors import InvalidBound, SequenceOrderError, require_int
from coderooms.rooms.records import LogMessage, Sequence, SessionAuthor, SessionPage

__all__ = ["MemoryLog"]


class MemoryLog:
    """A host log held in a list. Sequences must strictly increase in the order rows are
    given or appended; :meth:`add` assigns the next sequence itself."""

    def __init__(self, rows: Iterable[LogMessage] = ()) -> None:
        self._rows: list[LogMessage] = []
        self._sequences: list[Sequence] = []
        for row in rows:
            self.append(row)

    @property
    def rows(self) -> tuple[LogMessage, ...]:
        """Every row, oldest first."""
        return tuple(self._rows)

    def __len__(self) -> int:
        return len(self._rows)

    def append(self, row: LogMessage) -> None:
        """Add a row whose sequence is newer than every row already held."""
        if row.sequence < 0:
            raise SequenceOrderError(row.sequence, None)
        if self._sequences and row.sequence <= self._sequences[-1]:
            raise SequenceOrderError(row.sequence, self._sequences[-1])
        self._rows.append(row)
        self._sequences.append(row.sequence)

    def add(
        self,
        author: SessionAuthor,
        content: str,
        *,
        chat_id: str | None = None,
        parent: Sequence | None = None,
        posted_at: str | None = None,
    ) -> LogMessage:
        """Append a row under the next sequence (one past the newest, starting at 1).
        ``posted_at`` is the caller's time for it, if it keeps one: this log reads no
        clock."""
        sequence = self._sequences[-1] + 1 if self._sequences else 1
        row = LogMessage(sequence, author, content, chat_id, parent, posted_at)
        self.append(row)
        return row

    async def read_before(self, before: Sequence | None, limit: int) -> SessionPage:
        require_int("the cursor (before)", before, optional=True)
        require_int("the limit", limit)
        if limit < 0:
            raise InvalidBound("limit", limit)
        end = len(self._rows) if before is None else bisect_left(self._sequences, before)
        start = max(0, end - limit)
        page = self._rows[start:end]
        page.reverse()
        next_before = self._sequences[start] if start > 0 and page else None
        return SessionPage(tuple(page), next_before)
