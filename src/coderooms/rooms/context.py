"""What a turn carries besides its window: the thread index, the pinboard, host notes.

The records live here; the folds that produce them are in ``threads`` and ``pins``.
"""

from __future__ import annotations

from dataclasses import dataclass

from coderooms.rooms.records import Sequence, SessionAuthor
from coderooms.rooms.wire import wire_default


@dataclass(frozen=True, slots=True)
class ThreadLine:
    """One live thread of a desk: its root, opening words, reply count, latest activity."""

    root: Sequence
    opening: str
    replies: int
    latest: Sequence
    landed: str | None = None


@dataclass(frozen=True, slots=True)
class Pin:
    """A message lifted onto the pinboard. ``excerpt`` is None when the fold did not see
    the pinned row (it fell outside the scan); the sequence is always there."""

    sequence: Sequence
    pinned_at: Sequence
    pinned_by: SessionAuthor
    label: str | None
    note: str | None
    excerpt: str | None


@dataclass(frozen=True, slots=True)
class BriefingNote:
    """A host-supplied block of context lines under its own heading."""

    heading: str
    lines: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class SessionContext:
    """The recall context of one turn: thread index, pinboard and host notes."""

    threads: tuple[ThreadLine, ...] = ()
    pins: tuple[Pin, ...] = wire_default(default=())
    notes: tuple[BriefingNote, ...] = ()
