"""Files and functions a traceback in the goal passes through, innermost frame first."""

from __future__ import annotations

from typing import TYPE_CHECKING

from coderooms.focus.signals._spots import symbols_at_line
from coderooms.focus.signals.base import Query, Seed, Signal
from coderooms.focus.signals.paths import path_matches

if TYPE_CHECKING:
    from coderooms.focus.salience import SalienceIndex
    from coderooms.focus.text import Frame


def _frame_symbols(index: SalienceIndex, file_row: int, frame: Frame) -> list[Seed]:
    """The code of ``file_row`` a frame stands in: the functions it names whose lines
    hold its line, or, for a frame that names none (a warning's line), the innermost
    symbol there. A named function that does not hold the line is passed over: the
    traceback came from another version of the file, and a name alone (``__new__``)
    is too weak a tie."""
    holding = symbols_at_line(index, file_row, frame.line)
    if frame.function:
        return [
            (row, f"traceback frame in `{frame.function}`")
            for row in holding
            if index.nodes[row].name == frame.function
        ]
    return [(row, f"traceback frame in `{index.nodes[row].name}`") for row in holding[:1]]


def rank(index: SalienceIndex, query: Query) -> list[Seed]:
    found: list[Seed] = []
    for frame in sorted(query.cues.frames, key=lambda f: f.depth):
        for row in path_matches(index, frame.path):
            found.extend(_frame_symbols(index, row, frame))
            found.append((row, f"traceback frame {frame.path.rsplit('/', 1)[-1]}:{frame.line}"))
    return found


SIGNAL = Signal("traceback_frames", rank, default_weight=1.5, to_files=True, precise=True)
