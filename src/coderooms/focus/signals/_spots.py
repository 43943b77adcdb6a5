"""Finding the code around a spot of a file's text (shared by literal searches)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from coderooms.focus.salience import SalienceIndex

MAX_VERBATIM_FILES = 6  # a text found in more files than this points at none of them


def innermost_symbol(index: SalienceIndex, row: int, offset: int) -> list[int]:
    """The smallest symbol of file ``row`` whose lines hold character ``offset``."""
    text = index.texts[index.nodes[row].path]
    line = text.count("\n", 0, offset) + 1
    inner = [
        s
        for s in index.symbols_by_file.get(row, [])
        if index.nodes[s].start_line <= line <= index.nodes[s].end_line
    ]
    inner.sort(key=lambda s: (index.nodes[s].end_line - index.nodes[s].start_line, s))
    return inner[:1]
