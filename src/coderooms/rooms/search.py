"""Search over the transcript itself: a bounded, newest-first walk through ``SessionLog``.

There is no index. A search reads at most ``SEARCH_SCAN`` raw rows below its cursor,
scores each row in scope with the one ranking of :mod:`coderooms.rooms.ranking`, and
returns the best hits with a short excerpt around each match. Reaching the scan bound is
a successful partial search over the newest rows.

Regular expressions run on RE2 (``google-re2``), whose matching time is linear in the
text, so an untrusted pattern cannot stall the host. A pattern that does not compile is
:class:`~coderooms.errors.InvalidPattern`; without the engine it is
:class:`~coderooms.errors.RegexUnsupported`. Neither ever falls back to a literal search.
"""

from __future__ import annotations

import abc
from dataclasses import dataclass
from typing import Any

from coderooms.errors import InvalidBound, InvalidPattern, RegexUnsupported
from coderooms.rooms.chat import in_desk
from coderooms.rooms.ranking import (
    CompiledRegex,
    MatchKind,
    Pattern,
    Rated,
    rate_lowered,
    rate_regex,
    regex_source,
)
from coderooms.rooms.records import (
    Conversation,
    LogMessage,
    Sequence,
    SessionAuthor,
    author_id,
)
from coderooms.rooms.session import SessionLog, walk_log
from coderooms.rooms.wire import register_tagged

__all__ = [
    "EXCERPT_CHARS",
    "SEARCH_LIMIT",
    "SEARCH_SCAN",
    "MessageHit",
    "SearchPattern",
    "SearchQuery",
    "SearchRegex",
    "SearchText",
    "collapse_whitespace",
    "compile_regex",
    "cut_opening",
    "excerpt_around",
    "search_messages",
]

SEARCH_LIMIT = 10
"""Hits a search returns by default."""
SEARCH_SCAN = 2048
"""Raw rows one search may read before it returns what it found."""
EXCERPT_CHARS = 96
"""Characters of a hit's excerpt, not counting the ellipses that mark a cut."""
_EXCERPT_LEAD = 24
"""Characters of context an excerpt keeps before the match when it has to cut."""
_ELLIPSIS = "…"


# --- patterns -------------------------------------------------------------------------


class SearchPattern(abc.ABC):
    """What a search looks for, in a form that travels: :class:`SearchText` or
    :class:`SearchRegex`. Build one with :meth:`text`, :meth:`regex` or :meth:`parse`;
    an expression is only compiled when a search runs."""

    __slots__ = ()

    @staticmethod
    def text(query: str) -> SearchText:
        return SearchText(query)

    @staticmethod
    def regex(source: str) -> SearchRegex:
        return SearchRegex(source)

    @staticmethod
    def parse(text: str) -> SearchPattern:
        """One input box for both intents: ``/…/`` is an expression, anything else is
        text (trimmed)."""
        source = regex_source(text)
        if source is not None:
            return SearchRegex(source)
        return SearchText(text.strip())

    @property
    @abc.abstractmethod
    def is_blank(self) -> bool:
        """Whether the pattern asks for nothing (a search for it reads nothing)."""

    @abc.abstractmethod
    def compile(self) -> Pattern:
        """The matchable form; compiling an expression may raise a ``PatternError``."""


@dataclass(frozen=True, slots=True)
class SearchText(SearchPattern):
    """A literal query, matched case-insensitively on the one ranking's tiers."""

    query: str

    @property
    def is_blank(self) -> bool:
        return not self.query.strip()

    def compile(self) -> Pattern:
        return Pattern.text(self.query)


@dataclass(frozen=True, slots=True)
class SearchRegex(SearchPattern):
    """A regular expression in RE2 syntax, matched as written (``(?i)`` folds case)."""

    source: str

    @property
    def is_blank(self) -> bool:
        return self.source == ""

    def compile(self) -> Pattern:
        return Pattern.regex(compile_regex(self.source))


register_tagged("type", {"text": SearchText, "regex": SearchRegex})


def compile_regex(source: str) -> CompiledRegex:
    """Compile ``source`` on the linear-time engine.

    Raises :class:`RegexUnsupported` when ``google-re2`` is not installed and
    :class:`InvalidPattern` (with the engine's own message) when it does not compile.
    """
    try:
        import re2
    except ImportError:
        raise RegexUnsupported(source) from None
    options = re2.Options()
    options.log_errors = False  # the message travels in the exception, not on stderr
    try:
        compiled: CompiledRegex = re2.compile(source, options)
    except re2.error as err:
        raise InvalidPattern(source, _engine_message(err)) from None
    except (TypeError, ValueError) as err:  # e.g. a lone surrogate that cannot be encoded
        raise InvalidPattern(source, str(err)) from None
    return compiled


def _engine_message(err: Exception) -> str:
    detail: Any = err.args[0] if err.args else str(err)
    if isinstance(detail, bytes):
        return detail.decode("utf-8", "replace")
    return str(detail)


# --- queries and hits -----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SearchQuery:
    """One search: what to look for, where (None: the whole log; a desk: its whole
    interior, thread replies included; a thread: its root and direct replies), by whom,
    below which sequence (exclusive), and how many hits at most."""

    pattern: SearchPattern
    scope: Conversation | None = None
    author_id: str | None = None
    before: Sequence | None = None
    limit: int = SEARCH_LIMIT


@dataclass(frozen=True, slots=True)
class MessageHit:
    """A row that matched: its address and author, and an excerpt around the match so a
    caller can decide whether to read the whole row."""

    sequence: Sequence
    chat_id: str | None
    parent: Sequence | None
    author: SessionAuthor
    excerpt: str
    score: int
    kind: MatchKind


# --- text helpers ---------------------------------------------------------------------


def collapse_whitespace(text: str) -> str:
    """Every run of whitespace as one space, none at either end."""
    return " ".join(text.split())


def cut_opening(text: str, chars: int) -> str:
    """The collapsed text, cut after ``chars`` characters with an ellipsis if longer."""
    collapsed = collapse_whitespace(text)
    if len(collapsed) <= chars:
        return collapsed
    return collapsed[:chars] + _ELLIPSIS


def excerpt_around(line: str, start: int) -> str:
    """``EXCERPT_CHARS`` of ``line`` beginning ``_EXCERPT_LEAD`` characters before
    ``start`` (kept inside the line), with an ellipsis on each side that was cut. A line
    that fits is returned whole."""
    if len(line) <= EXCERPT_CHARS:
        return line
    begin = min(max(start - _EXCERPT_LEAD, 0), len(line) - EXCERPT_CHARS)
    end = begin + EXCERPT_CHARS
    head = _ELLIPSIS if begin > 0 else ""
    tail = _ELLIPSIS if end < len(line) else ""
    return head + line[begin:end] + tail


def original_offset(text: str, lowered_offset: int) -> int:
    """The index in ``text`` of the character whose lowercase covers ``lowered_offset``
    of ``text.lower()`` (some characters, such as ``İ``, lowercase to two)."""
    covered = 0
    for index, char in enumerate(text):
        covered += len(char.lower())
        if covered > lowered_offset:
            return index
    return len(text)


def _rate_line(compiled: CompiledRegex | None, lowered_query: str, line: str) -> Rated | None:
    """Rate a collapsed line; the offset of the result indexes ``line`` itself."""
    if compiled is not None:
        return rate_regex(compiled, line)
    lowered = line.lower()
    found = rate_lowered(lowered_query, lowered)
    if found is None or len(lowered) == len(line):
        return found
    return found[0], original_offset(line, found[1]), found[2]


def _in_scope(row: LogMessage, scope: Conversation | None) -> bool:
    if scope is None:
        return True
    if not in_desk(row.chat_id, scope.desk_id, scope.desk_name):
        return False
    root = scope.thread_root
    return root is None or row.sequence == root or row.parent == root


async def search_messages(log: SessionLog, query: SearchQuery) -> list[MessageHit]:
    """Search the newest ``SEARCH_SCAN`` raw rows below ``query.before``.

    Hits in scope (and by ``query.author_id``, when given: an agent's or person's id, a
    system row's kind, or ``operator``) are matched against their whitespace-collapsed
    content and ordered by score, the newest first among equal scores, at most
    ``query.limit`` of them. A zero limit or a blank pattern reads nothing; an
    expression is compiled before anything is read.
    """
    if query.limit < 0:
        raise InvalidBound("limit", query.limit)
    if query.limit == 0 or query.pattern.is_blank:
        return []
    pattern = query.pattern.compile()
    compiled = pattern.compiled
    lowered_query = (pattern.query or "").strip().lower()
    scope = query.scope
    root = scope.thread_root if scope is not None else None
    wanted_author = query.author_id
    found: list[tuple[int, int, LogMessage, str, Rated]] = []
    async for row in walk_log(log, query.before, SEARCH_SCAN):
        if root is not None and row.sequence < root:
            break  # a thread's rows are never older than its root
        if not _in_scope(row, scope):
            continue
        if wanted_author is not None and author_id(row.author) != wanted_author:
            continue
        line = collapse_whitespace(row.content)
        rated = _rate_line(compiled, lowered_query, line)
        if rated is not None:
            # walk order breaks ties, so equal scores stay newest first
            found.append((-rated[0], len(found), row, line, rated))
    found.sort(key=_rank_key)
    return [
        MessageHit(
            row.sequence,
            row.chat_id,
            row.parent,
            row.author,
            excerpt_around(line, rated[1]),
            rated[0],
            rated[2],
        )
        for _, _, row, line, rated in found[: query.limit]
    ]


def _rank_key(entry: tuple[int, int, LogMessage, str, Rated]) -> tuple[int, int]:
    return entry[0], entry[1]
