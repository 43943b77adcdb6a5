"""Which parts of a message body are code, and so carry no grammar.

Mentions and pin directives read the same body; both skip what this module marks as
code, so they never disagree about what was quoted rather than said. Offsets are Python
``str`` indices; every range is half-open.

``fenced_ranges`` marks the two CommonMark block forms:

- a fence opens on a line indented at most three spaces with a run of three or more
  backticks or tildes (a backtick opener's info string may hold no backtick); it closes on
  a line with a run of the same character at least as long, followed only by spaces and
  tabs; an unclosed fence runs to the end of the body;
- an indented block is a run of lines indented four or more columns (a tab advances to
  the next multiple of four). It continues across blank lines, but may only *open* where
  no paragraph is open: at the start of the body, after a blank line, a fence, an ATX
  heading, a thematic break or a setext underline. An indented line right under prose is
  that paragraph's continuation.

``code_ranges`` adds inline spans: a run of N backticks opens a span that closes on the
next run of exactly N; outside a span a backslash escapes the character after it (so an
escaped backtick opens nothing); the search for the closer stops at the end of the
paragraph (a blank line, ATX heading, thematic break or setext underline) and at a code
block; an opener with no closer masks nothing.

Containers (lists, block quotes) are not tracked: indentation is measured from the left
margin of the body. That keeps this a small scanner rather than a Markdown parser.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterator, Sequence

Range = tuple[int, int]

_FENCE_CHARS = "`~"
_MIN_FENCE_RUN = 3
_MAX_FENCE_INDENT = 3
_CODE_INDENT = 4
_TAB_STOP = 4
_MAX_ATX_LEVEL = 6
_MIN_THEMATIC_MARKERS = 3
_INLINE_SPECIAL = re.compile(r"[\\`]")
_BACKTICK_RUN = re.compile(r"`+")


def code_ranges(text: str) -> list[Range]:
    """Every range of ``text`` that is code: fenced and indented blocks, inline spans.

    Sorted, non-overlapping, half-open ``str``-index ranges.
    """
    blocks = fenced_ranges(text)
    return sorted([*blocks, *_inline_ranges(text, blocks)])


def fenced_ranges(text: str) -> list[Range]:
    """The block-level code of ``text``: fenced and indented code blocks, sorted."""
    fences = _fence_ranges(text)
    return sorted([*fences, *_indented_ranges(text, fences)])


def is_masked(offset: int, ranges: Sequence[Range]) -> bool:
    """Whether ``offset`` falls inside one of the sorted, disjoint ``ranges``."""
    index = bisect.bisect_right(ranges, offset, key=lambda r: r[0]) - 1
    return index >= 0 and ranges[index][0] <= offset < ranges[index][1]


# --- lines ----------------------------------------------------------------------------


def _lines(text: str) -> Iterator[tuple[int, int, str]]:
    """(start, end including the newline, content without trailing CR/LF) per line."""
    start = 0
    length = len(text)
    while start < length:
        newline = text.find("\n", start)
        end = length if newline < 0 else newline + 1
        yield start, end, text[start:end].rstrip("\r\n")
        start = end


def _is_blank(content: str) -> bool:
    # CommonMark blank: spaces and tabs only (a no-break space is text).
    return content.strip(" \t") == ""


def _indentation(content: str) -> int:
    width = 0
    for char in content:
        if char == " ":
            width += 1
        elif char == "\t":
            width += _TAB_STOP - width % _TAB_STOP
        else:
            break
    return width


def _under_code_indent(content: str) -> str | None:
    """The line past its (at most three spaces of) indentation, or None if indented code."""
    if _indentation(content) >= _CODE_INDENT:
        return None
    return content.lstrip(" ")


def _is_atx_heading(content: str) -> bool:
    rest = _under_code_indent(content)
    if rest is None:
        return False
    hashes = len(rest) - len(rest.lstrip("#"))
    return 1 <= hashes <= _MAX_ATX_LEVEL and (hashes == len(rest) or rest[hashes] in " \t")


def _is_thematic_break(content: str) -> bool:
    rest = _under_code_indent(content)
    if not rest or rest[0] not in "-_*":
        return False
    marker = rest[0]
    if any(char not in (marker, " ", "\t") for char in rest):
        return False
    return rest.count(marker) >= _MIN_THEMATIC_MARKERS


def _is_setext_underline(content: str) -> bool:
    rest = _under_code_indent(content)
    if not rest or rest[0] not in "=-":
        return False
    return _is_blank(rest.lstrip(rest[0]))


def _ends_paragraph(content: str) -> bool:
    """A one-line block after which no paragraph is open."""
    return _is_atx_heading(content) or _is_thematic_break(content)


# --- blocks ---------------------------------------------------------------------------


def _fence_ranges(text: str) -> list[Range]:
    ranges: list[Range] = []
    open_start = -1
    open_char = ""
    open_run = 0
    for start, end, content in _lines(text):
        rest = content.lstrip(" ")
        if len(content) - len(rest) > _MAX_FENCE_INDENT or not rest or rest[0] not in _FENCE_CHARS:
            continue
        char = rest[0]
        run = len(rest) - len(rest.lstrip(char))
        if run < _MIN_FENCE_RUN:
            continue
        if open_start < 0:
            if char == "~" or "`" not in rest[run:]:
                open_start, open_char, open_run = start, char, run
        elif char == open_char and run >= open_run and _is_blank(rest[run:]):
            ranges.append((open_start, end))
            open_start = -1
    if open_start >= 0:
        ranges.append((open_start, len(text)))
    return ranges


def _indented_ranges(text: str, fences: Sequence[Range]) -> list[Range]:
    ranges: list[Range] = []
    open_start = -1
    open_end = 0
    paragraph = False
    for start, end, content in _lines(text):
        if is_masked(start, fences):
            if open_start >= 0:
                ranges.append((open_start, open_end))
                open_start = -1
            paragraph = False
        elif _is_blank(content):
            paragraph = False
        elif _indentation(content) >= _CODE_INDENT and (open_start >= 0 or not paragraph):
            if open_start < 0:
                open_start = start
            open_end = end
        else:
            if open_start >= 0:
                ranges.append((open_start, open_end))
                open_start = -1
            # A setext underline only counts as one beneath an open paragraph.
            paragraph = not (
                _ends_paragraph(content) or (paragraph and _is_setext_underline(content))
            )
    if open_start >= 0:
        ranges.append((open_start, open_end))
    return ranges


# --- inline spans ---------------------------------------------------------------------


def _paragraph_breaks(text: str) -> list[int]:
    """Both edges of every line that ends a paragraph: blank lines, ATX headings,
    thematic breaks and (anything shaped like) setext underlines."""
    breaks: list[int] = []
    for start, end, content in _lines(text):
        if (
            _is_blank(content)
            or _is_atx_heading(content)
            or _is_thematic_break(content)
            or _is_setext_underline(content)
        ):
            breaks.extend((start, end))
    return breaks


def _inline_ranges(text: str, blocks: Sequence[Range]) -> list[Range]:
    breaks = _paragraph_breaks(text)
    block_starts = [start for start, _ in blocks]
    # Closers are maximal backtick runs; index their starts by run length.
    closers: dict[int, list[int]] = {}
    for match in _BACKTICK_RUN.finditer(text):
        closers.setdefault(match.end() - match.start(), []).append(match.start())

    ranges: list[Range] = []
    length = len(text)
    offset = 0
    block = 0
    while offset < length:
        found = _INLINE_SPECIAL.search(text, offset)
        if found is None:
            break
        offset = found.start()
        while block < len(blocks) and blocks[block][1] <= offset:
            block += 1
        if block < len(blocks) and blocks[block][0] <= offset:
            offset = blocks[block][1]
            continue
        if text[offset] == "\\":
            offset += 2
            continue
        run = _run_at(text, offset)
        limit = min(_next_after(breaks, offset, length), _next_after(block_starts, offset, length))
        starts = closers.get(run, [])
        index = bisect.bisect_left(starts, offset + run)
        if index < len(starts) and starts[index] < limit:
            end = starts[index] + run
            ranges.append((offset, end))
            offset = end
        else:
            offset += run
    return ranges


def _run_at(text: str, offset: int) -> int:
    match = _BACKTICK_RUN.match(text, offset)
    return 0 if match is None else match.end() - offset


def _next_after(points: Sequence[int], offset: int, default: int) -> int:
    index = bisect.bisect_right(points, offset)
    return points[index] if index < len(points) else default
