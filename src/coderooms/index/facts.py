"""What extraction learns from one file, before any cross-file resolution.

Facts are per file and depend only on the file's path and bytes, so they can be
computed in a worker process, stored, and resolved again later without re-parsing.
"""

from __future__ import annotations

import operator
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

import orjson

_T = TypeVar("_T")

SymbolKind = str  # "module" | "class" | "function" | "method"

# Type evidence (FileFacts.types) filed under names no variable can have:
RETURNED = "return"  # (function, RETURNED, what a return statement gives)
STAR_EXPORTS = "*"  # (module, STAR_EXPORTS, a name __all__ lists; "*" not known, "" none)
LOCAL = "?"  # (function, name, LOCAL): a name bound there to what is not known
DECORATED = "@"  # (function, DECORATED, a decorator as written without its @)
ANNOTATED = "->"  # (function, ANNOTATED, its return annotation) when its signature is cut


def _pickled_by_fields(cls: type[_T]) -> type[_T]:
    """Pickle instances as their class and field values in order. Facts cross from the
    workers to the indexing process in bulk; the default for slotted dataclasses (a
    ``__getstate__`` walking ``fields()``, a ``__setstate__`` setting each) takes three
    times as long to load."""
    values: Callable[[Any], tuple[Any, ...]] = operator.attrgetter(*cls.__slots__)  # type: ignore[attr-defined]

    def __reduce__(self: _T) -> tuple[type[_T], tuple[Any, ...]]:
        return cls, values(self)

    cls.__reduce__ = __reduce__  # type: ignore[method-assign,assignment]
    return cls


@_pickled_by_fields
@dataclass(slots=True)
class SymbolFact:
    id: str
    kind: SymbolKind
    name: str
    qualname: str
    parent: str | None  # id of the enclosing symbol, None at file level
    start_line: int  # 1-based, inclusive
    end_line: int
    signature: str
    docstring: str
    content_hash: str
    is_test: bool = False
    size_bytes: int = 0


@_pickled_by_fields
@dataclass(slots=True)
class ImportFact:
    """One imported module, as written.

    ``names`` holds ``(name, bound_as)`` pairs for ``from m import name as bound_as``
    (``("*", "*")`` for a star import); ``alias`` is the name a whole-module import binds
    (``import a.b`` binds ``a``; ``import a.b as c`` binds ``c``); ``level`` counts the
    leading dots of a relative Python import.
    """

    module: str
    names: tuple[tuple[str, str], ...] = ()
    alias: str = ""
    level: int = 0
    line: int = 0


@_pickled_by_fields
@dataclass(slots=True)
class FileFacts:
    path: str
    language: str
    content_hash: str
    size: int
    lines: int
    is_test: bool = False
    parse_error: bool = False
    decode_replaced: bool = False
    is_generated: bool = False
    is_vendored: bool = False
    symbols: list[SymbolFact] = field(default_factory=list)
    imports: list[ImportFact] = field(default_factory=list)
    # (owner id, receiver text, called name, count); receiver "" for a bare call,
    # "?" when the receiver is an expression the resolver cannot name.
    calls: list[tuple[str, str, str, int]] = field(default_factory=list)
    # (owner id, receiver text, name) for identifiers used as values or types.
    refs: list[tuple[str, str, str]] = field(default_factory=list)
    # (class id, base expression text)
    bases: list[tuple[str, str]] = field(default_factory=list)
    # (owner id, variable, evidence of its type): see extract.python._types and the
    # RETURNED, STAR_EXPORTS and LOCAL rows above.
    types: list[tuple[str, str, str]] = field(default_factory=list)
    # Filled by the worker so the main process only stores them: the JSON form of
    # imports/calls/refs/bases, and the names whose definitions affect this file.
    encoded: str = ""
    uses: str = ""


@_pickled_by_fields
@dataclass(slots=True)
class Skipped:
    path: str
    reason: str
    size: int = 0


def dedupe_calls(raw: list[tuple[str, str, str]]) -> list[tuple[str, str, str, int]]:
    """Count repeated call sites so each (owner, receiver, name) appears once, sorted."""
    return sorted((o, r, n, c) for (o, r, n), c in Counter(raw).items())


def encode_facts(facts: FileFacts) -> str:
    """The stored JSON form of a file's imports, calls, references and bases (every file
    indexed writes one: the fast encoder is worth its dependency here)."""
    return orjson.dumps(
        {
            "i": [
                [i.module, [list(n) for n in i.names], i.alias, i.level, i.line]
                for i in facts.imports
            ],
            "c": facts.calls,
            "r": facts.refs,
            "b": facts.bases,
            "t": facts.types,
        }
    ).decode("utf-8")
