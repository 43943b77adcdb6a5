"""Definitions the goal names loosely: everyday words in code form, classes as words."""

from __future__ import annotations

from typing import TYPE_CHECKING

from coderooms.focus.signals._names import named_definitions
from coderooms.focus.signals.base import Query, Seed, Signal

if TYPE_CHECKING:
    from coderooms.focus.salience import SalienceIndex


def rank(index: SalienceIndex, query: Query) -> list[Seed]:
    return named_definitions(index, query)[1]


SIGNAL = Signal("named_words", rank, default_weight=0.5, to_files=True)
