"""Code that holds a message of the goal verbatim (an error text, a quoted warning)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from coderooms.focus.signals._spots import MAX_VERBATIM_FILES, files_holding, innermost_symbol
from coderooms.focus.signals.base import Query, Seed, Signal

if TYPE_CHECKING:
    from coderooms.focus.salience import SalienceIndex

MAX_LITERALS = 12  # messages of one goal looked for
REASON_CHARS = 40  # of the message quoted in the reason


def rank(index: SalienceIndex, query: Query) -> list[Seed]:
    found: list[Seed] = []
    for literal in query.cues.literals[:MAX_LITERALS]:
        hits = files_holding(index, literal, index.source_rows)
        if not hits or len(hits) > MAX_VERBATIM_FILES:
            continue
        reason = f"contains the message “{literal[:REASON_CHARS]}”"
        for row in hits:
            offset = index.texts[index.nodes[row].path].find(literal)
            found.extend((s, reason) for s in innermost_symbol(index, row, offset))
            found.append((row, reason))
    return found


SIGNAL = Signal("literals", rank, default_weight=1.5, precise=True)
