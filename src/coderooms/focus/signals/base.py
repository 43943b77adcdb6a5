"""The one shape every ranking signal has, and the goal as signals read it."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from coderooms.focus.text import GoalCues, goal_cues, tokenize, weighted_terms

if TYPE_CHECKING:
    from coderooms.focus.salience import SalienceIndex

Seed = tuple[int, str]  # (row of the index, why it is there)
SEED_LIST_LIMIT = 50  # the longest list a lexical or semantic signal hands the fusion


@dataclass(slots=True)
class Query:
    """A goal read once for every signal: its text, its precise cues, its search terms
    and their weights. ``memo`` lets two signals share one computation (the function
    scores that rank both functions and the files holding them)."""

    goal: str
    weighted: bool = True
    cues: GoalCues = field(init=False)
    terms: list[str] = field(init=False)
    weights: dict[str, float] = field(init=False)
    memo: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.cues = goal_cues(self.goal)
        self.terms = tokenize(self.goal)
        self.weights = weighted_terms(self.goal) if self.weighted else dict(Counter(self.terms))

    def shared(self, key: str, compute: Callable[[], Any]) -> Any:
        if key not in self.memo:
            self.memo[key] = compute()
        return self.memo[key]


@dataclass(frozen=True, slots=True)
class Signal:
    """A named ranking signal.

    ``rank`` gives seeds best first (a row may repeat; the fusion counts its first
    place). With ``to_files`` the fusion also adds the files holding those seeds, at
    the same weight. A ``precise`` signal ties the goal to code by name, path, frame or
    message; their seed counts tell the sufficiency judge the goal is well anchored.
    """

    name: str
    rank: Callable[[SalienceIndex, Query], list[Seed]]
    default_weight: float
    to_files: bool = False
    precise: bool = False
    names_files: bool = False  # its seeds are files the goal names by their path


def rank_by(scores: dict[int, float]) -> list[int]:
    """Rows by score, best first, ties by row."""
    return sorted(scores, key=lambda r: (-scores[r], r))
