"""The pinboard: a bounded set of messages that ride along in every turn of a
conversation, folded out of ``!pin`` / ``!unpin`` markers in the transcript.

Grammar, one marker per line, recognised at the line's start (leading whitespace
ignored) and only outside code as :func:`~coderooms.rooms.masking.code_ranges` sees it::

    !pin [^N] [#label] [note words…]     pin row N, or the carrying row itself
    !unpin ^N                            take row N off the board
    !pin @path/mod.py::Name [#label] […]  pin a code node (a path, or a symbol in one)
    !unpin @path/mod.py::Name            take the node off the board

``^N`` and ``#label`` are read only before the first note word; the rest of the line,
with its whitespace collapsed, is the note. An ``!unpin`` with no target does nothing
(fail closed). At most ``PIN_MARKER_CAP`` markers count per row.

Nothing is stored beside the log: the board is a fold, so it cannot drift from the
transcript it describes. Later markers win, and anyone may unpin anything; a host that
wants narrower rules filters rows before folding.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Literal

from coderooms.errors import InvalidBound
from coderooms.rooms.chat import DeskTest
from coderooms.rooms.context import Pin
from coderooms.rooms.masking import code_ranges, is_masked
from coderooms.rooms.records import Conversation, LogMessage, Sequence, SessionAuthor
from coderooms.rooms.search import cut_opening
from coderooms.rooms.session import ScanWindow, SessionLog, interior_pages, is_blank
from coderooms.rooms.wire import wire_omit_default

__all__ = [
    "PIN_EXCERPT_CHARS",
    "PIN_LIMIT",
    "PIN_MARKER_CAP",
    "PIN_SCAN",
    "PinAction",
    "PinBoardFold",
    "PinDirective",
    "fold_pins",
    "named_pin_targets",
    "parse_pin_directives",
    "read_pinboard",
]

PIN_LIMIT = 12
"""Pins a board keeps; a full board drops the least recently pinned."""
PIN_SCAN = 2048
"""Raw rows one pinboard read may fold."""
PIN_EXCERPT_CHARS = 120
"""Characters of a pinned row's opening shown on the board."""
PIN_MARKER_CAP = 8
"""Markers read from one row; any after these are ignored."""

_MAX_SEQUENCE = 2**64 - 1

PinAction = Literal["pin", "unpin"]


@dataclass(frozen=True, slots=True)
class PinDirective:
    """One marker: the carrying row (``sequence``, ``author``), what it targets and
    whether it pins or unpins, with the label and note a pin carries."""

    sequence: Sequence
    target: Sequence
    author: SessionAuthor
    action: PinAction
    label: str | None = None
    note: str | None = None
    node: str | None = wire_omit_default(default=None)
    """A code node the marker pins or unpins (``@path/mod.py::Class.method``); then
    ``target`` is the carrying row."""


NODE_REF_MAX_CHARS = 300
"""The longest ``@node`` a marker reads as a code node; a longer word is a note word."""


def _parse_node(word: str) -> str | None:
    """``@path/mod.py::Name`` or ``@path/mod.py`` as a node id; None for a word that is
    not one (``@alice`` is a mention, not code: a node names a path or a symbol in one)."""
    ref = word[1:]
    if not ref or len(ref) > NODE_REF_MAX_CHARS:
        return None
    path = ref.partition("::")[0]
    if "::" not in ref and "/" not in path and "." not in path.lstrip("."):
        return None
    if not path or any(ch.isspace() or ch in "^#@" for ch in ref):
        return None
    return ref


def _parse_target(word: str) -> Sequence | None:
    digits = word[1:]
    if not digits or not digits.isascii() or not digits.isdigit():
        return None
    value = int(digits)
    return value if value <= _MAX_SEQUENCE else None


def _parse_line(row: LogMessage, line: str) -> PinDirective | None:
    if not line.startswith("!"):
        return None
    words = line[1:].split()
    if not words or words[0] not in ("pin", "unpin"):
        return None
    action: PinAction = "pin" if words[0] == "pin" else "unpin"
    target: Sequence | None = None
    node: str | None = None
    label: str | None = None
    note_words: list[str] = []
    for index, word in enumerate(words[1:], start=1):
        if target is None and node is None and word.startswith("^"):
            target = _parse_target(word)
            if target is not None:
                continue
        elif target is None and node is None and word.startswith("@"):
            node = _parse_node(word)
            if node is not None:
                continue
        elif label is None and word.startswith("#") and len(word) > 1:
            label = word[1:]
            continue
        note_words = words[index:]
        break
    if target is None:
        if action == "unpin" and node is None:
            return None  # an unpin must name what it removes
        target = row.sequence
    note = " ".join(note_words) or None
    return PinDirective(row.sequence, target, row.author, action, label, note, node)


def parse_pin_directives(row: LogMessage) -> list[PinDirective]:
    """The pin markers of one row, in reading order, at most ``PIN_MARKER_CAP``.

    A line counts only when neither its first character nor its first non-blank one
    lies inside code.
    """
    directives: list[PinDirective] = []
    for line in _marker_lines(row.content):
        directive = _parse_line(row, line)
        if directive is not None:
            directives.append(directive)
            if len(directives) >= PIN_MARKER_CAP:
                break
    return directives


def _marker_lines(content: str) -> Iterator[str]:
    """The lines of ``content`` that may be markers (starting with ``!``, outside code),
    stripped."""
    if "!" not in content:
        return
    masked: list[tuple[int, int]] | None = None  # computed once a line looks like a marker
    offset = 0
    for raw in content.split("\n"):
        start = offset
        offset += len(raw) + 1
        stripped = raw.lstrip()
        if not stripped.startswith("!"):
            continue
        if masked is None:
            masked = code_ranges(content)
        first = start + len(raw) - len(stripped)
        if is_masked(start, masked) or is_masked(first, masked):
            continue
        yield stripped.rstrip()


def named_pin_targets(content: str) -> list[tuple[str, Sequence | None]]:
    """Each ``^N`` a pin or unpin marker of ``content`` names as its message, read as
    the pin grammar reads it (see :func:`_parse_line`: the first ``^N`` before any note
    word; a later one is note text; past :data:`PIN_MARKER_CAP` markers nothing counts),
    in order, with N (None when the word is no message number: ``^-1``, ``^x``, or past
    the largest sequence), so a post can be refused before it pins nothing or itself."""
    named: list[tuple[str, Sequence | None]] = []
    markers = 0
    for line in _marker_lines(content):
        words = line[1:].split()
        if not words or words[0] not in ("pin", "unpin"):
            continue
        label = aimed = False
        for word in words[1:]:
            if word.startswith("^"):
                named.append((word, _parse_target(word)))
                aimed = True
            elif word.startswith("@") and _parse_node(word) is not None:
                aimed = True  # a code pin: its node names the target
            elif not label and word.startswith("#") and len(word) > 1:
                label = True
                continue
            break
        if words[0] == "pin" or aimed:  # a bare unpin is no marker (it removes nothing)
            markers += 1
            if markers >= PIN_MARKER_CAP:
                break
    return named


@dataclass(slots=True)
class _BoardEntry:
    pinned_at: Sequence
    pinned_by: SessionAuthor
    label: str | None
    note: str | None
    ordinal: int


def fold_pins(rows: Iterable[LogMessage], limit: int) -> list[Pin]:
    """Fold chronological ``rows`` into a board, most recently pinned first.

    A pin of an already-pinned row replaces its entry; an unpin removes it, whoever
    pinned it. The board is cut to ``limit``, dropping the least recently pinned. A pin
    carries its row's opening when that row is among ``rows`` and not blank, else None.
    """
    if limit < 0:
        raise InvalidBound("limit", limit)
    if limit == 0:
        return []
    seen = rows if isinstance(rows, (list, tuple)) else list(rows)
    # "!" first: parse_pin_directives' own first test, without the call
    ordered = _board((parse_pin_directives(row) for row in seen if "!" in row.content), limit)
    # the rows the board shows (pinned rows, and the rows that pinned code), looked up
    # once the board is known rather than remembered for every row folded
    shown = {target for target, _ in ordered if isinstance(target, int)}
    shown.update(entry.pinned_at for target, entry in ordered if not isinstance(target, int))
    return _pins(ordered, {row.sequence: row for row in seen if row.sequence in shown})


_Board = list[tuple[Sequence | str, _BoardEntry]]


def _board(markers: Iterable[list[PinDirective]], limit: int) -> _Board:
    """The board the rows' markers leave, most recently pinned first, cut to ``limit``."""
    board: dict[Sequence | str, _BoardEntry] = {}  # a row by sequence, a code node by id
    ordinal = 0
    for directives in markers:
        for directive in directives:
            ordinal += 1
            key: Sequence | str = directive.node if directive.node else directive.target
            if directive.action == "unpin":
                board.pop(key, None)
            else:
                board[key] = _BoardEntry(
                    directive.sequence, directive.author, directive.label, directive.note, ordinal
                )
    return sorted(board.items(), key=lambda item: item[1].ordinal, reverse=True)[:limit]


def _pins(ordered: _Board, rows: Mapping[Sequence, LogMessage]) -> list[Pin]:
    """The board's pins, each with its row's opening and time where ``rows`` hold it."""
    pins: list[Pin] = []
    for target, entry in ordered:
        if isinstance(target, int):
            row = rows.get(target)
            pins.append(
                Pin(
                    target,
                    entry.pinned_at,
                    entry.pinned_by,
                    entry.label,
                    entry.note,
                    _excerpt(None if row is None else row.content),
                    None if row is None else row.posted_at,
                )
            )
        else:
            marker = rows.get(entry.pinned_at)
            pins.append(
                Pin(
                    entry.pinned_at,
                    entry.pinned_at,
                    entry.pinned_by,
                    entry.label,
                    entry.note,
                    None,
                    None if marker is None else marker.posted_at,
                    node=target,
                )
            )
    return pins


class PinBoardFold:
    """:func:`read_pinboard` of a desk (no ``before``) kept up to date row by row.

    It holds the newest ``scan`` raw rows taken so far, the desk's among them by
    sequence, and the desk's rows that carry markers. A new row is parsed once as it
    comes and the oldest let go, so a turn folds the few markers in the scan rather than
    every row of it. Fed a desk log's rows oldest first, :meth:`pins` equals
    ``read_pinboard`` over that log.
    """

    def __init__(self, conversation: Conversation, scan: int = PIN_SCAN) -> None:
        if conversation.thread_root is not None:
            raise ValueError("a pin board fold is a desk's; a thread's board is read")
        self.conversation = conversation
        self._window = ScanWindow(scan)
        self._in_desk = DeskTest(conversation.desk_id, conversation.desk_name)
        self._desk_rows: dict[Sequence, LogMessage] = {}
        self._markers: deque[tuple[LogMessage, list[PinDirective]]] = deque()

    @property
    def newest(self) -> Sequence | None:
        """The newest row taken (None: none yet)."""
        return self._window.newest

    def extend(self, rows: Iterable[LogMessage]) -> None:
        """Take ``rows``, oldest first, each newer than every row taken before
        (:class:`~coderooms.errors.PageNotDescending` otherwise)."""
        desk_rows, markers = self._desk_rows, self._markers
        for row in rows:
            gone = self._window.take(row)
            if self._in_desk(row.chat_id):
                desk_rows[row.sequence] = row
                directives = parse_pin_directives(row) if "!" in row.content else []
                if directives:
                    markers.append((row, directives))
            if gone is not None and desk_rows.pop(gone.sequence, None) is not None:
                if markers and markers[0][0] is gone:
                    markers.popleft()

    def pins(self, limit: int = PIN_LIMIT) -> list[Pin]:
        """The board, as :func:`read_pinboard` folds it."""
        if limit < 0:
            raise InvalidBound("limit", limit)
        if limit == 0:
            return []
        return _pins(_board((d for _, d in self._markers), limit), self._desk_rows)


def _excerpt(content: str | None) -> str | None:
    if content is None or is_blank(content):
        return None
    return cut_opening(content, PIN_EXCERPT_CHARS)


async def read_pinboard(
    log: SessionLog,
    conversation: Conversation,
    limit: int = PIN_LIMIT,
    before: Sequence | None = None,
) -> list[Pin]:
    """The board of a conversation, folded from at most ``PIN_SCAN`` raw rows below
    ``before``: a desk's whole interior (thread replies included — a pin exists to lift
    a buried message), or a thread's root and direct replies. A zero limit reads
    nothing."""
    if limit < 0:
        raise InvalidBound("limit", limit)
    if limit == 0:
        return []
    kept = [
        row async for rows in interior_pages(log, conversation, before, PIN_SCAN) for row in rows
    ]
    kept.reverse()
    return fold_pins(kept, limit)
