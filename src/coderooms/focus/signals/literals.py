"""Code that holds a message of the goal verbatim (an error text, a quoted warning)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from coderooms.focus.signals._spots import seeds_at, verbatim_spots
from coderooms.focus.signals.base import Query, Seed, Signal

if TYPE_CHECKING:
    from coderooms.focus.salience import SalienceIndex

MAX_LITERALS = 12  # messages of one goal looked for
REASON_CHARS = 40  # of the message quoted in the reason


def rank(index: SalienceIndex, query: Query) -> list[Seed]:
    found: list[Seed] = []
    for literal in query.cues.literals[:MAX_LITERALS]:
        reason = f"contains the message “{literal[:REASON_CHARS]}”"
        for row, offset in verbatim_spots(index, literal):
            found.extend(seeds_at(index, row, offset, reason))
    return found


SIGNAL = Signal("literals", rank, default_weight=1.5, precise=True)
