"""Files the goal names by their path (``src/_pytest/main.py``, ``tox.ini``, a URL tail)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from coderooms.focus.signals.base import Query, Seed, Signal

if TYPE_CHECKING:
    from coderooms.focus.salience import SalienceIndex

MAX_TAIL_PARTS = 4  # a path in a goal is matched on at most its last four parts
ABSOLUTE_PATH_MIN_PARTS = 2  # … and an absolute one on at least its last two


def path_matches(index: SalienceIndex, path: str) -> list[int]:
    """Files a path in a goal names: the longest tail of it that is a path of the
    repository (so an absolute path or a URL ending in one counts, and ``README.md``
    means the one at the root); else the files whose path ends the same way, when that
    is unambiguous. An absolute path must share at least its last
    :data:`ABSOLUTE_PATH_MIN_PARTS` parts with the file."""
    path = path.replace("\\", "/")
    parts = [p for p in path.split("/") if p and p != "."]
    # An absolute path is often another copy of the code (a traceback from an installed
    # package): its file name alone is too weak a tie to a file here.
    least = ABSOLUTE_PATH_MIN_PARTS if path.startswith("/") else 1
    for start in range(len(parts) - least + 1):
        row = index.file_of_path.get("/".join(parts[start:]))
        if row is not None:
            return [row]
    for keep in range(min(len(parts), MAX_TAIL_PARTS), least - 1, -1):
        rows = index.path_tails.get("/".join(parts[-keep:]), [])
        if rows and (keep > 1 or len(rows) == 1):
            return rows
    return []


def rank(index: SalienceIndex, query: Query) -> list[Seed]:
    found: list[Seed] = []
    for path in query.cues.paths:
        found.extend((r, f"path `{path}` named in the goal") for r in path_matches(index, path))
    return found


SIGNAL = Signal("paths", rank, default_weight=2.0, precise=True, names_files=True)
