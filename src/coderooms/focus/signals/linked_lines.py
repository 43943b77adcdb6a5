"""Code the goal links to by its lines: ``…/blob/<ref>/src/app/cli.py#L40-L52``.

A reporter who links to lines of a file on the code host is pointing at the code they
mean, as a traceback frame points at the line that ran: the smallest function or class
holding the first linked line, then the file. The link may name another commit than
the one checked out, so the lines are trusted only as far as a frame's are: a symbol
that holds them now."""

from __future__ import annotations

from typing import TYPE_CHECKING

from coderooms.focus.signals._spots import symbols_at_line
from coderooms.focus.signals.base import Query, Seed, Signal
from coderooms.focus.signals.paths import path_matches
from coderooms.focus.signals.traceback_frames import SIGNAL as FRAMES

if TYPE_CHECKING:
    from coderooms.focus.salience import SalienceIndex


def rank(index: SalienceIndex, query: Query) -> list[Seed]:
    found: list[Seed] = []
    for link in query.cues.links:
        name = link.path.rsplit("/", 1)[-1]
        span = f"L{link.first}" if link.last == link.first else f"L{link.first}-L{link.last}"
        for row in path_matches(index, link.path):
            for symbol in symbols_at_line(index, row, link.first)[:1]:
                found.append((symbol, f"holds line {link.first} of {name} linked in the goal"))
            found.append((row, f"lines {name}#{span} linked in the goal"))
    return found


# Weighted as a traceback frame is (a pointer to lines of code), not fitted on its own.
SIGNAL = Signal(
    "linked_lines", rank, default_weight=FRAMES.default_weight, to_files=True, precise=True
)
