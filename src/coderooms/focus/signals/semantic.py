"""Static-embedding similarity between the goal's prose and each node."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from coderooms.focus.lexical import top_ranked
from coderooms.focus.signals.base import SEED_LIST_LIMIT, Query, Seed, Signal
from coderooms.focus.text import prose

if TYPE_CHECKING:
    from coderooms.focus.salience import SalienceIndex

EMBED_GOAL_CHARS = 4_000  # of the goal's prose embedded


def rank(index: SalienceIndex, query: Query) -> list[Seed]:
    if index.embeddings is None or index.embedder is None or not query.terms:
        return []
    text = prose(query.goal) if query.weighted else query.goal
    vector = np.asarray(index.embedder([text[:EMBED_GOAL_CHARS]]))[0]
    vector = vector / max(float(np.linalg.norm(vector)), 1e-12)
    similarity = index.embeddings @ vector
    order = top_ranked(np.maximum(similarity, 0.0), SEED_LIST_LIMIT)
    return [(r, f"similar in meaning (#{k + 1})") for k, r in enumerate(order)]


SIGNAL = Signal("semantic", rank, default_weight=0.6)
