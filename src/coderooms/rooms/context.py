"""What a turn carries besides its window: the thread index, the pinboard, host notes.

The records live here; the folds that produce them are in ``threads`` and ``pins``, and
:func:`initialize_session_with_context` gathers all of it for one turn.

Everything rendered here was written by some participant, possibly one outside the
reading turn's trust boundary. :meth:`SessionContext.system_text` therefore stays a
string of its own, separate from the briefing and from the operator's words, and gives
every block its own heading, so a host can frame each block as data (and escape it)
without parsing it back out of prose. The text is rendered as authored: framing and
escaping are the host's.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from coderooms.rooms.records import Sequence, SessionAuthor, SessionQuery
from coderooms.rooms.wire import wire_default, wire_omit_default

if TYPE_CHECKING:
    from coderooms.rooms.briefing import SessionInitialization, TeamBriefing
    from coderooms.rooms.session import SessionLog

__all__ = [
    "PINS_HEADING",
    "THREADS_HEADING",
    "BriefingNote",
    "Pin",
    "SessionContext",
    "ThreadLine",
    "initialize_session_with_context",
]

THREADS_HEADING = "Threads in this desk"
PINS_HEADING = "Pinned in this conversation"


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
    the pinned row (it fell outside the scan); the sequence is always there.
    ``posted_at`` is when the pinned row was posted, when the fold saw it and its log
    recorded a time (``pinned_at`` is the sequence of the row that pinned it)."""

    sequence: Sequence
    pinned_at: Sequence
    pinned_by: SessionAuthor
    label: str | None
    note: str | None
    excerpt: str | None
    posted_at: str | None = wire_omit_default(default=None)
    node: str | None = wire_omit_default(default=None)
    """A pinned code node's id; then ``sequence`` is the row that pinned it."""


@dataclass(frozen=True, slots=True)
class BriefingNote:
    """A host-supplied block of context lines under its own heading."""

    heading: str
    lines: tuple[str, ...]

    def __post_init__(self) -> None:
        if not isinstance(self.lines, tuple):
            object.__setattr__(self, "lines", tuple(self.lines))


@dataclass(frozen=True, slots=True)
class SessionContext:
    """The recall context of one turn: thread index, pinboard and host notes."""

    threads: tuple[ThreadLine, ...] = ()
    pins: tuple[Pin, ...] = wire_default(default=())
    notes: tuple[BriefingNote, ...] = ()

    def __post_init__(self) -> None:
        for name in ("threads", "pins", "notes"):
            value = getattr(self, name)
            if not isinstance(value, tuple):
                object.__setattr__(self, name, tuple(value))

    def system_text(self) -> str | None:
        """The context as text for the model, or None when there is none.

        Blocks, separated by a blank line and each under its own heading: the thread
        index, the pinboard, then each host note. Excerpts and openings appear verbatim
        inside quotation marks.
        """
        blocks: list[str] = []
        if self.threads:
            lines = [f"{THREADS_HEADING}:"]
            lines.extend(_thread_line(thread) for thread in self.threads)
            blocks.append("\n".join(lines))
        if self.pins:
            lines = [f"{PINS_HEADING}:"]
            lines.extend(_pin_line(pin) for pin in self.pins)
            blocks.append("\n".join(lines))
        for note in self.notes:
            lines = [f"{note.heading}:"]
            lines.extend(f"- {line}" for line in note.lines)
            blocks.append("\n".join(lines))
        return "\n\n".join(blocks) if blocks else None


def _thread_line(thread: ThreadLine) -> str:
    if thread.replies == 0:
        replies = "no replies"
    elif thread.replies == 1:
        replies = "1 reply"
    else:
        replies = f"{thread.replies} replies"
    text = f'- [{thread.root}] "{thread.opening}" — {replies}'
    if thread.landed is not None:
        text += f" (landed: {thread.landed})"
    return text


def _pin_line(pin: Pin) -> str:
    text = f"- [{pin.sequence}]"
    if pin.node is not None:
        text += f" @{pin.node}"
    if pin.label is not None:
        text += f" #{pin.label}"
    if pin.excerpt is not None:
        text += f' "{pin.excerpt}"'
    if pin.note is not None:
        text += f" — {pin.note}"
    return text


async def initialize_session_with_context(
    log: SessionLog,
    query: SessionQuery,
    briefing: TeamBriefing,
    threads: Iterable[ThreadLine] | None = None,
    pins: Iterable[Pin] | None = None,
) -> SessionInitialization:
    """:func:`~coderooms.rooms.briefing.initialize_session` plus the recall context: the
    desk's thread index (read from the log's tail; none for a thread) and the
    conversation's pinboard (``PIN_LIMIT`` pins below ``query.before``). A pinned
    message is therefore in the turn's context whether or not anybody searched for it.
    The first error of any read propagates.

    ``threads`` and ``pins`` are the thread index and the pinboard when the caller keeps
    them up to date already (see :class:`~coderooms.rooms.threads.ThreadIndexFold` and
    :class:`~coderooms.rooms.pins.PinBoardFold`): what the log would fold to, without
    reading it again.
    """
    # imported here: those modules build on the records above
    from coderooms.rooms.briefing import initialize_session
    from coderooms.rooms.pins import PIN_LIMIT, read_pinboard
    from coderooms.rooms.threads import THREAD_INDEX_LIMIT, read_thread_index

    initialized = await initialize_session(log, query, briefing)
    conversation = query.conversation
    if threads is None:
        threads = await read_thread_index(log, conversation, THREAD_INDEX_LIMIT)
    if pins is None:
        pins = await read_pinboard(log, conversation, PIN_LIMIT, query.before)
    context = SessionContext(tuple(threads), tuple(pins), initialized.context.notes)
    return replace(initialized, context=context)
