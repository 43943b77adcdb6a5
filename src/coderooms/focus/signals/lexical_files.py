"""BM25 over whole files (path and text) for the goal's weighted terms."""

from __future__ import annotations

from typing import TYPE_CHECKING

from coderooms.focus.lexical import top_ranked
from coderooms.focus.signals.base import SEED_LIST_LIMIT, Query, Seed, Signal

if TYPE_CHECKING:
    from coderooms.focus.salience import SalienceIndex


def rank(index: SalienceIndex, query: Query) -> list[Seed]:
    scores = index.file_bm25.scores(query.weights)
    return [
        (index.file_rows[i], f"lexical match #{k + 1} among files")
        for k, i in enumerate(top_ranked(scores, SEED_LIST_LIMIT))
    ]


SIGNAL = Signal("lexical_files", rank, default_weight=1.0)
