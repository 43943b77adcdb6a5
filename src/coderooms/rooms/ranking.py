"""One ranking for every picker and every search: tiers, a density term, a total order.

``score`` folds a query and a text into a :class:`TextMatch`: a tier (exact, prefix,
word prefix, substring, subsequence — 200 points apart) plus a density term worth at most
``DENSITY_SCALE`` points, so the shorter of two texts matching the same way wins while
density can never lift a weaker tier past a stronger one. Everything is integer
arithmetic, so a ranking is reproducible on any machine.

A :class:`Pattern` is either text (scored as above) or a compiled regular expression,
whose matched span is read onto the same tiers; literal and expression hits therefore
sort in one list. The pickers rank the roster and desk snapshots a caller already holds.
"""

from __future__ import annotations

import enum
import functools
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Protocol

from coderooms.rooms.desks import DeskSet
from coderooms.rooms.roster import Roster

__all__ = [
    "DENSITY_SCALE",
    "SELECT_LIMIT",
    "Candidate",
    "CompiledRegex",
    "Hit",
    "MatchField",
    "MatchKind",
    "Pattern",
    "Rated",
    "TextMatch",
    "agent_candidates",
    "desk_candidates",
    "pick_agents",
    "pick_agents_matching",
    "pick_desks",
    "pick_desks_matching",
    "pick_people",
    "pick_people_matching",
    "person_candidates",
    "rank",
    "rank_matching",
    "rate_lowered",
    "rate_regex",
    "rate_span",
    "regex_source",
    "score",
    "score_lowered",
    "score_regex",
]

SELECT_LIMIT = 8
"""Candidates a picker offers by default."""
DENSITY_SCALE = 100
"""The most the density term (query length over text length) adds to a tier's base."""


class MatchKind(enum.Enum):
    """How a query met a text, weakest first. The wire form is the snake_case value."""

    SUBSEQUENCE = "subsequence"
    SUBSTRING = "substring"
    WORD_PREFIX = "word_prefix"
    PREFIX = "prefix"
    EXACT = "exact"

    @property
    def base(self) -> int:
        """The tier's base score: 200 for a subsequence up to 1000 for an exact match."""
        return _TIER_BASE[self]


_TIER_BASE = {
    MatchKind.SUBSEQUENCE: 200,
    MatchKind.SUBSTRING: 400,
    MatchKind.WORD_PREFIX: 600,
    MatchKind.PREFIX: 800,
    MatchKind.EXACT: 1000,
}


class MatchField(enum.Enum):
    """Which field of a candidate produced its best match."""

    LABEL = "label"
    ID = "id"
    DETAIL = "detail"


@dataclass(frozen=True, slots=True)
class TextMatch:
    """A scored match. ``offset`` is where it starts in the trimmed (and, for a text
    query, lowercased) text, in characters."""

    kind: MatchKind
    score: int
    offset: int


Rated = tuple[int, int, MatchKind]
"""(score, offset, kind): a match before it becomes a :class:`TextMatch`."""

# plain ints: an enum-keyed lookup costs a Python-level hash on the hot path
_EXACT, _PREFIX, _WORD_PREFIX, _SUBSTRING, _SUBSEQUENCE = 1000, 800, 600, 400, 200
SUBSEQUENCE_CEILING = _SUBSEQUENCE + DENSITY_SCALE - 1
"""The best score a subsequence-only match can reach (a full-density match is exact)."""


def _scored(base: int, kind: MatchKind, matched: int, length: int, offset: int) -> Rated:
    density = DENSITY_SCALE * matched // length
    return base + (density if density < DENSITY_SCALE else DENSITY_SCALE), offset, kind


def _as_match(scored: Rated | None) -> TextMatch | None:
    return None if scored is None else TextMatch(scored[2], scored[0], scored[1])


def score(query: str, text: str) -> TextMatch | None:
    """Score ``text`` against ``query``, both trimmed and lowercased.

    A blank query, a query longer than the text, or no match at all gives None.
    Otherwise the tier is the best of: the whole text (exact), its start (prefix), an
    occurrence at a word start (word prefix — the earliest such), any occurrence
    (substring — the earliest), or the query's characters in order (subsequence, greedy,
    offset at the first matched character).
    """
    lowered = query.strip().lower()
    if not lowered:
        return None
    return _as_match(rate_lowered(lowered, text.strip().lower()))


def score_lowered(query: str, text: str) -> TextMatch | None:
    """:func:`score` for a query and text already trimmed and lowercased (``query`` not
    blank). Offsets are indices into ``text``."""
    return _as_match(rate_lowered(query, text))


def rate_lowered(query: str, text: str, subsequence: bool = True) -> Rated | None:
    """The scorer behind :func:`score_lowered`, as a plain ``(score, offset, kind)``
    tuple: callers that rate thousands of texts build records only for the winners.

    ``subsequence=False`` skips the subsequence tier, for a caller that already holds
    enough hits scoring at least :data:`SUBSEQUENCE_CEILING`: no such match could join
    them."""
    size, length = len(query), len(text)
    if size > length:
        return None
    if query == text:
        return _scored(_EXACT, MatchKind.EXACT, size, length, 0)
    if text.startswith(query):
        return _scored(_PREFIX, MatchKind.PREFIX, size, length, 0)
    first = text.find(query)
    if first >= 0:
        at = first
        # first > 0 here: an occurrence at 0 would have been a prefix
        while at >= 0 and text[at - 1].isalnum():
            at = text.find(query, at + 1)
        if at >= 0:
            return _scored(_WORD_PREFIX, MatchKind.WORD_PREFIX, size, length, at)
        return _scored(_SUBSTRING, MatchKind.SUBSTRING, size, length, first)
    if not subsequence:
        return None
    start = text.find(query[0])
    if start < 0 or _subsequence(query).match(text, start) is None:
        return None
    return _scored(_SUBSEQUENCE, MatchKind.SUBSEQUENCE, size, length, start)


@functools.lru_cache(maxsize=64)
def _subsequence(query: str) -> re.Pattern[str]:
    """The greedy in-order match of ``query``'s characters as one expression: each
    character, then everything up to the next one (``a[^b]*b[^c]*c``). Every ``[^x]*x``
    step has exactly one way to succeed, so matching is linear in the text; anchored at
    the first occurrence of the first character it succeeds exactly when the greedy
    character-by-character scan does."""
    steps = [re.escape(query[0])]
    for char in query[1:]:
        escaped = re.escape(char)
        steps.append(f"[^{escaped}]*{escaped}")
    return re.compile("".join(steps))


class _MatchSpan(Protocol):
    def span(self) -> tuple[int, int]: ...


class CompiledRegex(Protocol):
    """What :meth:`Pattern.regex` needs of a compiled expression (``re2`` provides it)."""

    @property
    def pattern(self) -> Any: ...

    def search(self, text: str) -> Any: ...


def score_regex(compiled: CompiledRegex, text: str) -> TextMatch | None:
    """Read the leftmost match of ``compiled`` in trimmed ``text`` onto the tiers.

    The whole text is exact, a match at 0 is a prefix, one at a word start is a word
    prefix, anything else a substring. A zero-width match is the weakest substring
    there is (exactly the substring base). The case is left as written: case folding is
    the expression's own business (``(?i)``).
    """
    return _as_match(rate_regex(compiled, text.strip()))


def rate_regex(compiled: CompiledRegex, trimmed: str) -> Rated | None:
    """The scorer behind :func:`score_regex` for already-trimmed text, as a tuple."""
    found: _MatchSpan | None = compiled.search(trimmed)
    if found is None:
        return None
    start, end = found.span()
    return rate_span(trimmed, start, end)


def rate_span(trimmed: str, start: int, end: int) -> Rated:
    """The tier and score of an expression's leftmost match ``trimmed[start:end]``."""
    width, length = end - start, len(trimmed)
    if width == 0:
        return _SUBSTRING, start, MatchKind.SUBSTRING
    if start == 0 and end == length:
        return _scored(_EXACT, MatchKind.EXACT, width, length, start)
    if start == 0:
        return _scored(_PREFIX, MatchKind.PREFIX, width, length, start)
    if not trimmed[start - 1].isalnum():
        return _scored(_WORD_PREFIX, MatchKind.WORD_PREFIX, width, length, start)
    return _scored(_SUBSTRING, MatchKind.SUBSTRING, width, length, start)


class _Matcher(Protocol):
    def __call__(self, text: str, /) -> Rated | None: ...


def _never(text: str, /) -> Rated | None:
    return None


def _regex_text(compiled: CompiledRegex) -> str:
    source = compiled.pattern
    if isinstance(source, bytes):
        return source.decode("utf-8", "replace")
    return str(source)


@dataclass(frozen=True, slots=True)
class Pattern:
    """What candidates are matched against: text (:meth:`text`) or a compiled regular
    expression (:meth:`regex`). Build one with those constructors."""

    query: str | None = None
    compiled: CompiledRegex | None = None

    @classmethod
    def text(cls, query: str) -> Pattern:
        return cls(query=query)

    @classmethod
    def regex(cls, compiled: CompiledRegex) -> Pattern:
        return cls(compiled=compiled)

    @property
    def is_blank(self) -> bool:
        """A text query that trims to nothing, or an expression whose source is empty:
        either asks for nothing, and matching it yields nothing."""
        if self.compiled is not None:
            return _regex_text(self.compiled) == ""
        return self.query is None or not self.query.strip()

    def match(self, text: str) -> TextMatch | None:
        """Score one text against this pattern (None for a blank pattern)."""
        return _as_match(self._matcher()(text))

    def _matcher(self) -> _Matcher:
        if self.is_blank:
            return _never
        compiled = self.compiled
        if compiled is not None:

            def by_regex(text: str, /) -> Rated | None:
                return rate_regex(compiled, text.strip())

            return by_regex
        lowered = (self.query or "").strip().lower()

        def by_text(text: str, /) -> Rated | None:
            return rate_lowered(lowered, text.strip().lower())

        return by_text


def regex_source(text: str) -> str | None:
    """The expression inside ``/…/`` once ``text`` is trimmed, or None when ``text`` is
    not slash-delimited or the inside is empty. The inside is kept as written."""
    trimmed = text.strip()
    if len(trimmed) < 3 or trimmed[0] != "/" or trimmed[-1] != "/":
        return None
    return trimmed[1:-1]


@dataclass(frozen=True, slots=True)
class Candidate:
    """Something a picker can offer: an id, a display label, optional detail text."""

    id: str
    label: str
    detail: str | None = None


@dataclass(frozen=True, slots=True)
class Hit:
    """A ranked candidate with the field that matched best and that field's match
    (a detail match carries its halved score)."""

    candidate: Candidate
    field: MatchField
    match: TextMatch


def rank(query: str, candidates: Iterable[Candidate], limit: int) -> list[Hit]:
    """Rank ``candidates`` against a text query. See :func:`rank_matching`."""
    return rank_matching(Pattern.text(query), candidates, limit)


def rank_matching(pattern: Pattern, candidates: Iterable[Candidate], limit: int) -> list[Hit]:
    """The best ``limit`` candidates for ``pattern``, best first.

    Label and id count in full, detail at half its score (tier and offset kept). A
    candidate's best field wins, ties going label, then id, then detail. Hits sort by
    score (high first), then earlier offset, then shorter label, then input order, so
    the same snapshot always ranks the same way. A blank pattern, a zero limit or no
    match gives an empty list.
    """
    pool = list(candidates)
    fields = ((c.id, c.label, c.detail) for c in pool)
    return [
        Hit(pool[position], field, match)
        for position, field, match in _rank(pattern, fields, limit)
    ]


_Entry = tuple[str, str, str | None]
"""(id, label, detail) of one candidate, before it is worth building a record for."""


def _rank(
    pattern: Pattern, entries: Iterable[_Entry], limit: int
) -> list[tuple[int, MatchField, TextMatch]]:
    """:func:`rank_matching` over plain entries: (input position, field, match) of the
    winners, best first."""
    if limit <= 0 or pattern.is_blank:
        return []
    # one loop for both kinds: (rate, how, fold) rate a trimmed (and, for text, lowered) field
    rate: Callable[[Any, str], Rated | None]
    how: Any
    if pattern.compiled is None:
        rate, how, fold = rate_lowered, (pattern.query or "").strip().lower(), True
    else:
        rate, how, fold = rate_regex, pattern.compiled, False
    keyed: list[tuple[int, int, int, int, MatchField, MatchKind]] = []
    label_field, id_field, detail_field = MatchField.LABEL, MatchField.ID, MatchField.DETAIL
    for position, (ident, label, detail) in enumerate(entries):
        text = label.strip()
        field, best = label_field, rate(how, text.lower() if fold else text)
        if ident != label:  # the same text cannot beat the label it ties with
            text = ident.strip()
            by_id = rate(how, text.lower() if fold else text)
            if by_id is not None and (best is None or by_id[0] > best[0]):
                field, best = id_field, by_id
        if detail is not None:
            text = detail.strip()
            found = rate(how, text.lower() if fold else text)
            if found is not None and (best is None or found[0] // 2 > best[0]):
                field, best = detail_field, (found[0] // 2, found[1], found[2])
        if best is not None:
            keyed.append((-best[0], best[1], len(label), position, field, best[2]))
    keyed.sort(key=_sort_key)
    return [
        (position, field, TextMatch(kind, -negated, offset))
        for negated, offset, _, position, field, kind in keyed[:limit]
    ]


def _sort_key(entry: tuple[int, int, int, int, MatchField, MatchKind]) -> tuple[int, int, int, int]:
    return entry[0], entry[1], entry[2], entry[3]


# --- pickers ------------------------------------------------------------------------


def agent_candidates(roster: Roster) -> list[Candidate]:
    """The active agents in roster order; retired agents are never offered."""
    return [Candidate(*entry) for entry in _agent_entries(roster)]


def person_candidates(roster: Roster) -> list[Candidate]:
    return [Candidate(*entry) for entry in _person_entries(roster)]


def desk_candidates(desks: DeskSet) -> list[Candidate]:
    """Declared then added desks, each id once; the description is detail, so a desk
    named for the query outranks one that only mentions it."""
    return [Candidate(*entry) for entry in _desk_entries(desks)]


def _agent_entries(roster: Roster) -> list[_Entry]:
    return [(member.id, member.label, None) for member in roster.active()]


def _person_entries(roster: Roster) -> list[_Entry]:
    return [(person.id, person.label, None) for person in roster.people]


def _desk_entries(desks: DeskSet) -> list[_Entry]:
    return [(desk.id, desk.name, desk.description) for desk in desks.desks()]


def _pick(pattern: Pattern, entries: list[_Entry], limit: int) -> list[Hit]:
    # records are built for the winners only: a picker may see thousands of candidates
    return [
        Hit(Candidate(*entries[position]), field, match)
        for position, field, match in _rank(pattern, entries, limit)
    ]


def pick_agents(query: str, roster: Roster, limit: int = SELECT_LIMIT) -> list[Hit]:
    return _pick(Pattern.text(query), _agent_entries(roster), limit)


def pick_agents_matching(pattern: Pattern, roster: Roster, limit: int = SELECT_LIMIT) -> list[Hit]:
    return _pick(pattern, _agent_entries(roster), limit)


def pick_people(query: str, roster: Roster, limit: int = SELECT_LIMIT) -> list[Hit]:
    return _pick(Pattern.text(query), _person_entries(roster), limit)


def pick_people_matching(pattern: Pattern, roster: Roster, limit: int = SELECT_LIMIT) -> list[Hit]:
    return _pick(pattern, _person_entries(roster), limit)


def pick_desks(query: str, desks: DeskSet, limit: int = SELECT_LIMIT) -> list[Hit]:
    return _pick(Pattern.text(query), _desk_entries(desks), limit)


def pick_desks_matching(pattern: Pattern, desks: DeskSet, limit: int = SELECT_LIMIT) -> list[Hit]:
    return _pick(pattern, _desk_entries(desks), limit)
