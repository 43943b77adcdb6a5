"""Finding the code around a spot of a file's text (shared by literal searches, frames
and links)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from coderooms.focus.text import word_terms

if TYPE_CHECKING:
    from coderooms.focus.salience import SalienceIndex

MAX_VERBATIM_FILES = 6  # a text found in more files than this points at none of them
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def files_holding(
    index: SalienceIndex, text: str, rows: Sequence[int], most_reads: int | None = None
) -> list[int]:
    """The files among ``rows`` whose text holds ``text`` verbatim, in ``rows`` order.

    Only files that hold the rarest search term of ``text`` are read (the file index
    knows them); a text with no such term is looked for everywhere. The first and last
    word of a longer text may be cut from a longer one, so they do not choose. With
    ``most_reads``, a text that would take more files than that to read is not looked
    for (none are given)."""
    words = _WORD.findall(text)
    inner = words[1:-1] if len(words) >= 3 else words
    terms = [t for word in inner for t in word_terms(word)]
    if terms:
        rarest = min(terms, key=lambda t: (index.file_bm25.document_frequency(t), t))
        if most_reads is not None and index.file_bm25.document_frequency(rarest) > most_reads:
            return []
        holding = {index.file_rows[int(d)] for d in index.file_bm25.documents_with(rarest)}
        rows = [row for row in rows if row in holding]
    elif most_reads is not None and len(rows) > most_reads:
        return []
    return [row for row in rows if text in index.texts.get(index.nodes[row].path, "")]


def symbols_at_line(index: SalienceIndex, row: int, line: int) -> list[int]:
    """The symbols of file ``row`` whose lines hold ``line``, the smallest first."""
    inner = [
        s
        for s in index.symbols_by_file.get(row, [])
        if index.nodes[s].start_line <= line <= index.nodes[s].end_line
    ]
    inner.sort(key=lambda s: (index.nodes[s].end_line - index.nodes[s].start_line, s))
    return inner


def innermost_symbol(index: SalienceIndex, row: int, offset: int) -> list[int]:
    """The smallest symbol of file ``row`` whose lines hold character ``offset``."""
    text = index.texts[index.nodes[row].path]
    return symbols_at_line(index, row, text.count("\n", 0, offset) + 1)[:1]


def verbatim_spots(index: SalienceIndex, text: str) -> list[tuple[int, int]]:
    """(file row, offset of its first occurrence) for each source file holding ``text``;
    none when more than :data:`MAX_VERBATIM_FILES` do (the text points at nothing)."""
    rows = files_holding(index, text, index.source_rows)
    if len(rows) > MAX_VERBATIM_FILES:
        return []
    return [(row, index.texts[index.nodes[row].path].find(text)) for row in rows]


def seeds_at(index: SalienceIndex, row: int, offset: int, reason: str) -> list[tuple[int, str]]:
    """The innermost symbol around ``offset`` of file ``row``, then the file itself."""
    return [(sym, reason) for sym in innermost_symbol(index, row, offset)] + [(row, reason)]
