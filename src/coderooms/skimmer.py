"""``skim(text, goal, budget)``: the skimmer bound to the project's token counter.

See :mod:`coderooms.focus.skim` for what is kept and how cuts are marked.
"""

from __future__ import annotations

from coderooms.focus.errors import GoalNotText
from coderooms.focus.skim import SkimCut, SkimResult, skim_text
from coderooms.tokens import count_tokens_many_alike

__all__ = ["DEFAULT_SKIM_BUDGET", "SkimCut", "SkimResult", "skim"]

DEFAULT_SKIM_BUDGET = 2_000
"""Tokens a skimmed output may take when the caller names no budget."""


def skim(text: str, goal: str, budget: int = DEFAULT_SKIM_BUDGET) -> SkimResult:
    """Cut ``text`` (verbose tool output) to ``budget`` tokens of what ``goal`` needs,
    marking every cut in place. Text that fits comes back unchanged."""
    for what, value in (("text to skim", text), ("goal", goal)):
        if not isinstance(value, str):
            raise GoalNotText(what, type(value).__name__)
    return skim_text(text, goal, budget, count_tokens_many_alike)
