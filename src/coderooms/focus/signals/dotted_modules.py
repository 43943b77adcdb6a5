"""Modules a dotted name in the goal spells (``_pytest.config.argparsing``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from coderooms.focus.signals.base import Query, Seed, Signal

if TYPE_CHECKING:
    from coderooms.focus.salience import SalienceIndex

MAX_MODULE_FILES = 6  # a module ending shared by more files names none of them


def rank(index: SalienceIndex, query: Query) -> list[Seed]:
    found: list[Seed] = []
    for name in query.cues.dotted:
        parts = name.split(".")
        for cut in range(len(parts), 0, -1):
            suffix = ".".join(parts[:cut])
            rows = index.module_ends.get(suffix, [])
            if rows and len(rows) <= MAX_MODULE_FILES and (cut > 1 or len(parts) == 1):
                found.extend((r, f"module `{suffix}` named in the goal") for r in rows)
                break
    return found


SIGNAL = Signal("dotted_modules", rank, default_weight=1.5, precise=True)
