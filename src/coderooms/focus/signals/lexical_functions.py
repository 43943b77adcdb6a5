"""BM25 over single functions, methods and classes; and the files that hold the best
of them (a file is as relevant as the code inside it)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from coderooms.focus.lexical import top_ranked
from coderooms.focus.signals.base import SEED_LIST_LIMIT, Query, Seed, Signal, rank_by

if TYPE_CHECKING:
    from coderooms.focus.salience import SalienceIndex

WIDE_LIST_FACTOR = 4  # the files list is drawn from this many times more functions


def _scores(index: SalienceIndex, query: Query) -> tuple[np.ndarray, list[int]]:
    def compute() -> tuple[np.ndarray, list[int]]:
        scores = index.symbol_bm25.scores(query.weights)
        return scores, top_ranked(scores, SEED_LIST_LIMIT * WIDE_LIST_FACTOR)

    result: tuple[np.ndarray, list[int]] = query.shared("symbol_bm25", compute)
    return result


def rank(index: SalienceIndex, query: Query) -> list[Seed]:
    _, top = _scores(index, query)
    return [
        (index.symbol_rows[i], f"lexical match #{k + 1} among functions")
        for k, i in enumerate(top[:SEED_LIST_LIMIT])
    ]


def rank_files(index: SalienceIndex, query: Query) -> list[Seed]:
    scores, top = _scores(index, query)
    by_file: dict[int, float] = {}
    for i in top:
        file_row = int(index.file_row_of[index.symbol_rows[i]])
        by_file[file_row] = max(by_file.get(file_row, 0.0), float(scores[i]))
    return [(r, "holds functions that match the goal") for r in rank_by(by_file)][:SEED_LIST_LIMIT]


SIGNAL = Signal("lexical_functions", rank, default_weight=1.0)
BY_FILE = Signal("lexical_functions_by_file", rank_files, default_weight=1.0)
