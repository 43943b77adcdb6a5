"""Code that prints a line of the goal's logs: fixed stretches of the output, error and
command lines inside the goal's code blocks, found verbatim in the source (``ERROR:
Wrong expression passed to '-k'`` points at the code that says it)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from coderooms.focus.signals._spots import seeds_at, verbatim_spots
from coderooms.focus.signals.base import Query, Seed, Signal
from coderooms.focus.text import BLOCK_WEIGHT, goal_sections, literal_fragments

if TYPE_CHECKING:
    from coderooms.focus.salience import SalienceIndex

MAX_BLOCK_MESSAGES = 40  # fragments of one goal's blocks looked for
REASON_CHARS = 40  # of the fragment quoted in the reason
# A log's own label before the message ("ERROR: …", "E   …"), which the code never says.
_LABEL = re.compile(r"^(?:[A-Za-z]+:|E)\s+(?=\S)")


def fragments(query: Query) -> list[str]:
    """Fixed stretches of the goal's block lines that the literal signal does not
    already look for, in order of first appearance."""
    seen = set(query.cues.literals)
    out: list[str] = []
    for line, weight in goal_sections(query.goal):
        if weight > BLOCK_WEIGHT:
            continue
        for piece in literal_fragments(_LABEL.sub("", line.strip())):
            if piece not in seen:
                seen.add(piece)
                out.append(piece)
    return out[:MAX_BLOCK_MESSAGES]


def rank(index: SalienceIndex, query: Query) -> list[Seed]:
    found: list[tuple[int, int, Seed]] = []  # (files holding it, order, seed)
    for order, piece in enumerate(fragments(query)):
        spots = verbatim_spots(index, piece)
        reason = f"prints “{piece[:REASON_CHARS]}” seen in the goal's output"
        for row, offset in spots:
            found.extend((len(spots), order, seed) for seed in seeds_at(index, row, offset, reason))
    # The rarest text first: a line only one file can print says the most.
    found.sort(key=lambda item: (item[0], item[1]))
    return [seed for _, _, seed in found]


SIGNAL = Signal("block_messages", rank, default_weight=0.75, precise=True)
