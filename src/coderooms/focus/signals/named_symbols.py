"""Definitions the goal names precisely: ``add_marker``, ``LocalPath``, ``Session.send``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from coderooms.focus.signals._names import named_definitions
from coderooms.focus.signals.base import Query, Seed, Signal

if TYPE_CHECKING:
    from coderooms.focus.salience import SalienceIndex


def rank(index: SalienceIndex, query: Query) -> list[Seed]:
    return named_definitions(index, query)[0]


SIGNAL = Signal("named_symbols", rank, default_weight=2.0, to_files=True, precise=True)
