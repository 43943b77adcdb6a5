"""Files whose name the goal's words spell (``expand_modules.py`` for "expand modules")."""

from __future__ import annotations

from typing import TYPE_CHECKING

from coderooms.focus.signals.base import Query, Seed, Signal, rank_by
from coderooms.focus.text import STOPWORDS, split_identifier

if TYPE_CHECKING:
    from coderooms.focus.salience import SalienceIndex

MAX_STEM_FILES = 6  # a file name shared by more files names none of them
MIN_STEM_LENGTH = 4


def rank(index: SalienceIndex, query: Query) -> list[Seed]:
    terms = set(query.terms)
    scores: dict[int, float] = {}
    reasons: dict[int, str] = {}
    for stem, rows, parts in index.derived("file_stems", lambda: _spellable(index)):
        if stem in terms or all(p in terms or p + "s" in terms for p in parts):
            for row in rows:
                scores[row] = len(parts) / len(rows)
                reasons[row] = f"file name `{stem}` matches the goal"
    return [(r, reasons[r]) for r in rank_by(scores)]


def _spellable(index: SalienceIndex) -> list[tuple[str, list[int], list[str]]]:
    """The file stems a goal may spell, with their files and their parts (stopwords
    out): worked out once per index, not for every goal."""
    out = []
    for stem, rows in index.stems.items():
        if len(rows) > MAX_STEM_FILES or stem.startswith("__"):
            continue
        parts = [p for p in split_identifier(stem) if p not in STOPWORDS]
        if parts and len(stem) >= MIN_STEM_LENGTH:
            out.append((stem, rows, parts))
    return out


SIGNAL = Signal("file_stems", rank, default_weight=0.7)
