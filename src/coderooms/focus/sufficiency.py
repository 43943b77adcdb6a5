"""Is what was loaded enough to act on? Answer-free, from the salience curve alone.

- ``gathering``: the goal barely touches the code, or items ahead of the knee of the
  salience curve did not fit — more budget or a narrower goal would help.
- ``sufficient``: one file leads the runner-up by :data:`MIN_TOP_MARGIN` and its most
  salient code is loaded in full; or everything ahead of the knee is loaded (a file or class too large to
  load whole counts when code inside it is loaded) and the loaded share of the
  candidates' salience reaches :data:`SUFFICIENT_MASS`.
- ``saturated``: every candidate above the relevance floor is loaded (in full, or
  covered by what is); more budget adds nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from coderooms.focus.packing import Packing, ancestors
from coderooms.focus.salience import Salience, SalienceIndex

State = Literal["gathering", "sufficient", "saturated"]

SUFFICIENT_MASS = 0.5
SKELETON_CREDIT = 0.5  # a signature skeleton captures part of an item's salience
MIN_TERM_COVERAGE = 0.5  # below this share of goal terms known to the code, a goal is weak
MIN_KNEE_ITEMS = 1
MIN_TOP_MARGIN = 1.2  # the best file must outscore the runner-up by this factor to lead
KNEE_WINDOW = 30  # the knee is looked for among the best candidates only (long tails
# would push it far out)


@dataclass(frozen=True, slots=True)
class Sufficiency:
    state: State
    captured_salience_mass: float
    why: str


def knee(values: Sequence[float]) -> int:
    """How many items lie ahead of the knee of a descending curve: the point farthest
    below the chord from the first to the last value."""
    n = len(values)
    if n <= 2:
        return n
    first, last = values[0], values[-1]
    if first <= last:
        return n
    best, best_at = -1.0, n
    for i, value in enumerate(values):
        chord = first + (last - first) * i / (n - 1)
        gap = chord - value
        if gap > best:
            best, best_at = gap, i
    return max(best_at, MIN_KNEE_ITEMS)


def _clear_lead(index: SalienceIndex, salience: Salience) -> tuple[str, float, str] | None:
    """(path, margin, best symbol id) when one file stands clear of the runner-up."""
    strength = salience.file_strength
    if strength is None or len(index.file_rows) < 2:
        return None
    rows = np.asarray(index.file_rows, dtype=np.int64)
    files = rows[np.lexsort((rows, -strength[rows]))].tolist()  # strongest first, ties by row
    first, second = float(strength[files[0]]), float(strength[files[1]])
    if first <= 0 or (second > 0 and first / second < MIN_TOP_MARGIN):
        return None
    margin = first / second if second > 0 else float("inf")
    inside = index.symbols_by_file.get(files[0], [])
    if not inside:
        return index.nodes[files[0]].path, margin, index.nodes[files[0]].id
    best = max(inside, key=lambda r: (float(salience.scores[r]), -r))
    return index.nodes[files[0]].path, margin, index.nodes[best].id


def unmatched(
    salience: Salience, index: SalienceIndex, found_any: bool, asked: str = "goal"
) -> Sufficiency | None:
    """The verdict when nothing (or nothing firm) ties ``asked`` to the code, else None:
    focus and seek say the same thing here."""
    if not index.nodes:
        return Sufficiency(
            "gathering",
            0.0,
            "the index holds no files to look in: the repository has no file that can be "
            "indexed (point --repo at one with source files)",
        )
    if salience.seeded == 0 or not found_any:
        return Sufficiency(
            "gathering",
            0.0,
            f"nothing in the code matches the {asked}; name a file, a symbol or an error message",
        )
    if salience.precise_cues == 0 and salience.term_coverage < MIN_TERM_COVERAGE:
        return Sufficiency(
            "gathering",
            0.0,
            f"the {asked} is weakly tied to this code (only {salience.term_coverage:.0%} of "
            "its terms occur here, and it names no symbol, path or message found here); "
            "name what you are after",
        )
    return None


def _not_loaded(count: int) -> str:
    """The clause after a clear lead: how many other items ahead of the knee are not
    loaded in full (none, one, or a number)."""
    if count == 0:
        return "every other item ahead of the knee is loaded in full too"
    if count == 1:
        return "1 other item ahead of the knee is not loaded in full"
    return f"{count} other items ahead of the knee are not loaded in full"


def judge(packing: Packing, salience: Salience, index: SalienceIndex) -> Sufficiency:
    verdict = unmatched(salience, index, bool(packing.candidates))
    if verdict is not None:
        return verdict
    loaded = {item.node.id: item for item in packing.loaded}
    covered: dict[str, float] = {}
    for item in packing.loaded:
        covered[item.node.id] = 1.0 if item.render == "full" else SKELETON_CREDIT
    for entry in packing.ignored:
        if entry.why == "duplicate_of" and entry.detail in loaded:
            covered[entry.what] = 1.0
    # A file or class too large to load whole is reached when code inside it is loaded.
    opened: set[str] = set()
    for item in packing.loaded:
        if item.render == "full":
            opened.update(ancestors(index, item.node))
    for node_id in opened:
        covered[node_id] = max(covered.get(node_id, 0.0), SKELETON_CREDIT)
    candidate_scores = {entry.what: entry.salience for entry in packing.ignored}
    candidate_scores.update({item.node.id: item.salience for item in packing.loaded})
    total = sum(candidate_scores.get(c, 0.0) for c in packing.candidates)
    captured = sum(candidate_scores.get(c, 0.0) * covered.get(c, 0.0) for c in packing.candidates)
    mass = round(captured / total, 4) if total > 0 else 0.0
    curve = [candidate_scores.get(c, 0.0) for c in packing.candidates[:KNEE_WINDOW]]
    head = packing.candidates[: knee(curve)]
    missing_head = [c for c in head if covered.get(c, 0.0) < 1.0 and c not in opened]
    over = [e for e in packing.ignored if e.why in ("over_budget", "over_candidate_limit")]
    # An outline or a file's first lines, with nothing inside loaded in full: more budget
    # would load the rest.
    partial = [i.node.id for i in packing.loaded if i.render != "full" and i.node.id not in opened]
    if not over and not missing_head and not partial:
        return Sufficiency(
            "saturated",
            mass,
            f"all {len(packing.candidates)} candidates above the relevance floor are loaded "
            "or covered; more budget adds nothing",
        )
    if not missing_head and mass >= SUFFICIENT_MASS:
        return Sufficiency(
            "sufficient",
            mass,
            f"the {len(head)} items ahead of the salience knee are loaded in full and "
            f"{mass:.0%} of the candidates' salience is captured; {len(over)} lower items "
            "left out",
        )
    lead = _clear_lead(index, salience)
    if lead is not None:
        path, margin, best = lead
        if covered.get(best, 0.0) >= 1.0:
            return Sufficiency(
                "sufficient",
                mass,
                f"{path} leads the next file by {margin:.2f}× and its most salient code "
                f"({best}) is loaded in full; {_not_loaded(len(missing_head))}",
            )
    if missing_head:
        return Sufficiency(
            "gathering",
            mass,
            f"{len(missing_head)} of the {len(head)} items ahead of the salience knee are not "
            f"loaded in full (first: {missing_head[0]}); raise the budget or narrow the goal",
        )
    return Sufficiency(
        "gathering",
        mass,
        f"only {mass:.0%} of the candidates' salience is captured "
        f"(needs {SUFFICIENT_MASS:.0%}); raise the budget or narrow the goal",
    )
