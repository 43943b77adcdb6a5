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
import heapq
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from coderooms.errors import (
    BlankQuery,
    InvalidBound,
    InvalidPattern,
    QueryNotUtf8,
    QueryTooLong,
    RegexUnsupported,
)
from coderooms.rooms.ranking import (
    SUBSEQUENCE_CEILING,
    CompiledRegex,
    MatchKind,
    Pattern,
    Rated,
    rate_lowered,
    rate_span,
    regex_source,
)
from coderooms.rooms.records import (
    Conversation,
    LogMessage,
    Sequence,
    SessionAuthor,
    author_matches,
)
from coderooms.rooms.session import SessionLog, interior_pages
from coderooms.rooms.wire import register_tagged, wire_omit_default

__all__ = [
    "EXCERPT_CHARS",
    "MAX_HITS",
    "QUERY_MAX_CHARS",
    "SEARCH_LIMIT",
    "SEARCH_SCAN",
    "MessageHit",
    "Re2Regex",
    "SearchPattern",
    "SearchQuery",
    "SearchRegex",
    "SearchText",
    "checked_query",
    "collapse_whitespace",
    "compile_regex",
    "cut_opening",
    "excerpt_around",
    "search_messages",
]

SEARCH_LIMIT = 10
"""Hits a search returns by default."""
MAX_HITS = 100
"""The most hits a surface's search, thread or picker call may ask for."""
QUERY_MAX_CHARS = 4096
"""The longest query a surface accepts (search, thread ranking, pickers)."""
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


def checked_query(text: str) -> str:
    """``text`` as typed into a surface, refused when it asks for nothing (blank, or an
    empty ``//``), is longer than :data:`QUERY_MAX_CHARS` or is not valid UTF-8. The core
    itself reads a blank pattern as "nothing to find"; a person who typed one deserves to
    be told."""
    if len(text) > QUERY_MAX_CHARS:
        raise QueryTooLong(len(text), QUERY_MAX_CHARS)
    if not text.isascii():
        try:
            text.encode("utf-8")  # lone surrogates: undecodable bytes a command line carried
        except UnicodeEncodeError:
            raise QueryNotUtf8() from None
    source = regex_source(text)
    if (source if source is not None else text).strip() == "":
        raise BlankQuery()
    return text


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
    Groups never capture: only the span of the whole match is ever read.
    """
    try:
        import re2
    except ImportError:
        raise RegexUnsupported(source) from None
    options = re2.Options()
    options.log_errors = False  # the message travels in the exception, not on stderr
    options.never_capture = True
    try:
        compiled = re2.compile(source, options)
    except re2.error as err:
        raise InvalidPattern(source, _engine_message(err)) from None
    except (TypeError, ValueError) as err:  # e.g. a lone surrogate that cannot be encoded
        raise InvalidPattern(source, str(err)) from None
    return Re2Regex(compiled)


class _Span:
    __slots__ = ("_span",)

    def __init__(self, start: int, end: int) -> None:
        self._span = (start, end)

    def span(self) -> tuple[int, int]:
        return self._span


class Re2Regex:
    """A compiled RE2 expression with a lean ``search``.

    The ``re2`` module's own ``search`` builds a full match object through several
    layers of Python for every text; a search over thousands of rows only needs the
    leftmost span, so this asks the engine for it directly (UTF-8 byte offsets mapped
    back to characters) and falls back to the module's ``search`` if that entry point
    is not there.
    """

    __slots__ = ("_compiled", "_match", "_unanchored")

    def __init__(self, compiled: Any) -> None:
        self._compiled = compiled
        engine = getattr(compiled, "_regexp", None)
        anchor = getattr(getattr(type(engine), "Anchor", None), "UNANCHORED", None)
        self._match = getattr(engine, "Match", None) if anchor is not None else None
        self._unanchored = anchor

    @property
    def pattern(self) -> str:
        return str(self._compiled.pattern)

    def search(self, text: str) -> _Span | None:
        """The leftmost match of the expression in ``text`` (character offsets)."""
        span = self.leftmost(text)
        return None if span is None else _Span(*span)

    def leftmost(self, text: str) -> tuple[int, int] | None:
        """The (start, end) character offsets of the leftmost match in ``text``."""
        if self._match is None:
            try:
                found = self._compiled.search(text)
            except UnicodeEncodeError:  # a lone surrogate: read it as '?', one for one
                found = self._compiled.search(text.encode("utf-8", "replace").decode())
            return None if found is None else found.span()
        encoded = text.encode("utf-8", "replace")
        start, end = self._match(self._unanchored, encoded, 0, len(encoded))[0]
        if start < 0:
            return None
        if len(encoded) != len(text):  # not ASCII: count characters, not bytes
            # (a match may end inside a character, with \C, RE2's any byte: whole
            # characters are counted)
            before, through = encoded[:start], encoded[:end]
            return len(before.decode("utf-8", "ignore")), len(through.decode("utf-8", "ignore"))
        return start, end


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
    posted_at: str | None = wire_omit_default(default=None)
    """When the row was posted, as its log recorded it (None: not recorded)."""


# --- text helpers ---------------------------------------------------------------------


def collapse_whitespace(text: str) -> str:
    """Every run of whitespace as one space, none at either end.

    Most rows are one line of single-spaced words already; those come back as they are
    without being split and joined. Every whitespace character but the plain space is
    unprintable (a control, line or paragraph separator, or a space separator other
    than U+0020), so a printable text with no doubled, leading or trailing space has
    nothing to collapse."""
    if text.isprintable() and "  " not in text and text[:1] != " " and text[-1:] != " ":
        return text
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


async def search_messages(log: SessionLog, query: SearchQuery) -> list[MessageHit]:
    """Search the newest ``SEARCH_SCAN`` raw rows below ``query.before``.

    Hits in scope (and by ``query.author_id``, when given: ``agent:ID``, ``person:ID``,
    ``system:KIND``, ``operator`` or a bare ID, as
    :func:`~coderooms.rooms.records.author_matches` reads them) are matched against their
    whitespace-collapsed
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
    # Once only verbatim matches can still make the list, a row whose content lacks the
    # query's longest word (case aside) is skipped before its whitespace is collapsed:
    # a word holds no whitespace, so collapsing can neither create nor break one, and
    # lowering a word does not depend on what lies past the whitespace around it.
    needle = max(lowered_query.split(), key=len, default="")
    first = lowered_query[:1]
    collapse = collapse_whitespace
    leftmost = _leftmost_of(compiled) if compiled is not None else None
    wanted_author = query.author_id
    found: list[tuple[int, int, LogMessage, str, Rated]] = []
    # The best ``limit`` scores so far (a min-heap): once its weakest beats anything a
    # subsequence match can score, rows with no verbatim match cannot make the list, and
    # their (costlier) subsequence test is skipped. The hits returned are the same.
    best: list[int] = []
    limit = query.limit
    async for rows in interior_pages(log, query.scope, query.before, SEARCH_SCAN):
        for row in rows:
            if wanted_author is not None and not author_matches(row.author, wanted_author):
                continue
            if leftmost is not None:
                line = collapse(row.content)
                span = leftmost(line)
                rated = None if span is None else rate_span(line, span[0], span[1])
            else:
                raw = row.content.lower()
                if first not in raw:
                    continue  # every tier needs the query's first character
                wanted_subsequence = len(best) < limit or best[0] < SUBSEQUENCE_CEILING
                if not wanted_subsequence and needle not in raw:
                    continue
                line = collapse(row.content)
                lowered = line.lower()
                rated = rate_lowered(lowered_query, lowered, wanted_subsequence)
                if rated is not None and len(lowered) != len(line):
                    rated = rated[0], original_offset(line, rated[1]), rated[2]
            if rated is not None:
                # walk order breaks ties, so equal scores stay newest first
                found.append((-rated[0], len(found), row, line, rated))
                if len(best) < limit:
                    heapq.heappush(best, rated[0])
                elif rated[0] > best[0]:
                    heapq.heapreplace(best, rated[0])
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
            row.posted_at,
        )
        for _, _, row, line, rated in found[: query.limit]
    ]


def _leftmost_of(compiled: CompiledRegex) -> Callable[[str], tuple[int, int] | None]:
    """The leftmost-match span finder of ``compiled``: RE2's lean path when it is one."""
    if isinstance(compiled, Re2Regex):
        return compiled.leftmost

    def leftmost(text: str) -> tuple[int, int] | None:
        found = compiled.search(text)
        return None if found is None else found.span()

    return leftmost


def _rank_key(entry: tuple[int, int, LogMessage, str, Rated]) -> tuple[int, int]:
    return entry[0], entry[1]
