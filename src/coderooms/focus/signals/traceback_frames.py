"""Files and functions a traceback in the goal passes through, innermost frame first."""

from __future__ import annotations

from typing import TYPE_CHECKING

from coderooms.focus.signals.base import Query, Seed, Signal
from coderooms.focus.signals.paths import path_matches

if TYPE_CHECKING:
    from coderooms.focus.salience import SalienceIndex


def rank(index: SalienceIndex, query: Query) -> list[Seed]:
    found: list[Seed] = []
    for frame in sorted(query.cues.frames, key=lambda f: f.depth):
        for row in path_matches(index, frame.path):
            for sym in index.symbols_by_file.get(row, []):
                node = index.nodes[sym]
                if node.name == frame.function and node.start_line <= frame.line <= node.end_line:
                    found.append((sym, f"traceback frame in `{frame.function}`"))
            found.append((row, f"traceback frame {frame.path.rsplit('/', 1)[-1]}:{frame.line}"))
    return found


SIGNAL = Signal("traceback_frames", rank, default_weight=1.5, to_files=True, precise=True)
