"""Code that declares an option the goal names (``--collect-only``, ``ignore-paths``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from coderooms.focus.signals._spots import MAX_VERBATIM_FILES, files_holding, seeds_at
from coderooms.focus.signals.base import Query, Seed, Signal

if TYPE_CHECKING:
    from coderooms.focus.salience import SalienceIndex

MAX_OPTIONS = 8  # options of one goal looked for


def rank(index: SalienceIndex, query: Query) -> list[Seed]:
    found: list[Seed] = []
    for option in query.cues.options[:MAX_OPTIONS]:
        forms = [f'"{option}"', f"'{option}'", f'"--{option}"', f"'--{option}'"]
        hits: list[tuple[int, int]] = []
        for row in files_holding(index, option, index.source_rows):
            text = index.texts[index.nodes[row].path]
            offsets = [o for o in (text.find(form) for form in forms) if o >= 0]
            if offsets:
                hits.append((row, min(offsets)))
        if not hits or len(hits) > MAX_VERBATIM_FILES:
            continue
        reason = f"defines the option `{option}`"
        for row, offset in hits:
            found.extend(seeds_at(index, row, offset, reason))
    return found


SIGNAL = Signal("options", rank, default_weight=0.75, precise=True)
