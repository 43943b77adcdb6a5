"""Definitions the goal names: shared by the named-symbols and named-words signals."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from coderooms.focus.signals._spots import files_holding
from coderooms.focus.signals.base import Query, Seed, rank_by
from coderooms.focus.text import STOPWORDS, is_code_like

if TYPE_CHECKING:
    from coderooms.focus.salience import SalienceIndex

MAX_NAME_DEFINITIONS = 8  # a name defined more often than this picks out nothing
DOTTED_NAME_WEIGHT = 2.0  # ``Class.method`` written out counts twice a bare name
MAX_ASSIGNMENT_READS = 32  # files read, at most, for where a goal's name is assigned


def is_specific_name(name: str) -> bool:
    """Spelled like one particular definition rather than an everyday word."""
    return is_code_like(name) or name[:1].isupper()


def assigning_files(index: SalienceIndex, name: str) -> list[int]:
    """Source files that assign ``name`` at their top level: a constant or an alias
    (``NODE_USE_FROM_PARENT = …``), which no function or class defines. Only a name
    written in at most :data:`MAX_ASSIGNMENT_READS` files is looked for (each is read)."""
    assigned = re.compile(rf"^{re.escape(name)}[ \t]*(?::[^=\n]*)?=(?!=)", re.MULTILINE)
    return [
        row
        for row in files_holding(index, name, index.source_rows, MAX_ASSIGNMENT_READS)
        if assigned.search(index.texts.get(index.nodes[row].path, "")) is not None
    ]


def named_definitions(index: SalienceIndex, query: Query) -> tuple[list[Seed], list[Seed]]:
    """(strong, weak): symbols whose name the goal writes in code form; classes it
    names as plain words (a capitalized plain word only inside a sentence).

    A compound or capitalized name (``add_marker``, ``LocalPath``) picks out its
    definition (or, when no function or class has that name, the files assigning it
    at their top level: ``NODE_USE_FROM_PARENT``); a single lower-case word (``path``,
    ``node``: often a part of ``os.path.join`` or ``request.node``) names many things,
    so its definitions go to the weak list even when the goal writes it in code form."""

    def compute() -> tuple[list[Seed], list[Seed]]:
        cues = query.cues
        strong: dict[int, float] = {}
        weak: dict[int, float] = {}
        # each list its own reasons: a row in both (`step` alone is weak, `Base.step`
        # strong) says why in each, never the same words twice
        reasons: dict[int, str] = {}
        weak_reasons: dict[int, str] = {}
        names = set(cues.names)
        mid_capitals = set(cues.mid_capitals)
        for name in cues.names:
            rows = index.definitions.get(name, [])
            verb = "defines"
            if not rows and is_code_like(name) and not name.startswith("__"):
                rows, verb = assigning_files(index, name), "assigns"
            if not rows or len(rows) > MAX_NAME_DEFINITIONS:
                continue
            specific = is_specific_name(name)
            target, said = (strong, reasons) if specific else (weak, weak_reasons)
            for row in rows:
                target[row] = target.get(row, 0.0) + 1.0 / len(rows)
                said.setdefault(row, f"{verb} `{name}` named in the goal")
        for dotted in cues.dotted:
            parts = dotted.split(".")
            for i in range(len(parts) - 1):
                qual = ".".join(parts[i:])
                for row in index.qualnames.get(qual, []):
                    strong[row] = strong.get(row, 0.0) + DOTTED_NAME_WEIGHT
                    reasons.setdefault(row, f"is `{qual}` named in the goal")
        for word in cues.words:
            if word in names or word.lower() in STOPWORDS:
                continue
            if not word[:1].isupper():
                continue
            if not is_code_like(word) and word not in mid_capitals:
                continue  # "Module imported twice": a sentence's first word, not a class
            rows = [r for r in index.definitions.get(word, []) if index.nodes[r].kind == "class"]
            if rows and len(rows) <= MAX_NAME_DEFINITIONS:
                for row in rows:
                    weak[row] = weak.get(row, 0.0) + 1.0 / len(rows)
                    weak_reasons.setdefault(row, f"defines class `{word}` mentioned in the goal")
        return (
            [(r, reasons[r]) for r in rank_by(strong)],
            [(r, weak_reasons[r]) for r in rank_by(weak)],
        )

    result: tuple[list[Seed], list[Seed]] = query.shared("named_definitions", compute)
    return result
