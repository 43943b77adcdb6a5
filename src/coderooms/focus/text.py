"""Words out of code and out of goals.

Identifiers are split the way people read them (``retry_backoffPolicy`` → ``retry``,
``backoff``, ``policy``) and also kept whole, so an exact name in a goal matches the
code that spells it. :func:`goal_cues` pulls the precise hints out of a goal text: names
in code form, dotted names, file paths, traceback frames, links to lines of a file,
exception lines and quoted messages.
"""

from __future__ import annotations

import keyword
import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from itertools import chain

MIN_TERM_LENGTH = 2
MIN_CODE_NAME_LENGTH = 3
MIN_LITERAL_LENGTH = 12
MAX_LITERAL_LENGTH = 200
MAX_GOAL_CHARS = 20_000
MIN_OPTION_LENGTH = 5
MAX_LINE_DIGITS = 9  # a line number in a goal longer than this is no line of any file
MAX_LINK_PATH_PARTS = 32  # directories a link's path is read through, at most
WORD_TERMS_CACHE_SIZE = 100_000  # distinct words whose terms are remembered
GOAL_CUES_KEPT = 16  # goals whose cues are remembered (a focus reads them twice)

STOPWORDS = frozenset(
    """
    a an and are as at be been but by can could did do does doing done for from had has
    have having he her here his how i if in into is it its itself just me more most my no
    nor not of off on once only or other our out over own same she should so some such
    than that the their them then there these they this those through to too under until
    up very was we were what when where which while who whom why will with would you your
    yours also get got use used using like want wants would seems seem way work works
    example expected actual issue problem bug error please thanks thank hi hello one two
    new see make makes made still now however without within because since via etc
    self cls none true false return def class import pass elif else try except finally
    raise lambda yield with assert del global nonlocal while break continue print
    """.split()
)

# Words that are never a name of the code, even written as code: Python's keywords and
# the receiver and constant names every method and test writes. A stop word that is no
# keyword (``get``, ``make``, ``new``, ``error``) still names code when the goal writes
# it as code: alone in backticks (`` `get` ``) or called (``session.get(``).
CODE_WORDS = frozenset(
    [word.lower() for word in keyword.kwlist] + ["self", "cls", "print", "none", "true", "false"]
)

WORD_PATTERN = r"[A-Za-z_][A-Za-z0-9_]*"  # what tokenize takes for a word
_WORD = re.compile(WORD_PATTERN)
_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")
_DOTTED = re.compile(r"(?<![\w.])([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+)(?:\(\))?")
# File paths by their extension: code, and the configuration and prose files a goal
# names ("tox.ini", "docs/usage.rst"), relative or absolute (or the tail of a URL). A
# path only counts if the index holds a file it names. The patterns that read runs of
# path characters (this one, _LOCATION_FRAME, _CALL) start only where a run starts: a
# start inside a run finds nothing a start at its beginning did not, and trying each
# made a long run cost time quadratic in its length (over a second for 20,000 characters).
_PATH = re.compile(
    r"(?<![\w.-])(?<![\w.-]/)(/?(?:[\w.-]+/)*[\w.-]+\."
    r"(?:py|pyi|pyx|js|jsx|mjs|ts|tsx|go|rs|java|c|h|cc|cpp|hpp|"
    r"cfg|toml|ini|yaml|yml|json|rst|md|txt|in|sh|html|css))\b"
)
_LINE = rf"(\d{{1,{MAX_LINE_DIGITS}}})(?!\d)"  # a line number (int() refuses huge ones)
_FRAME = re.compile(rf'File "([^"]+)", line {_LINE}, in ([\w<>.]+)')
# A link to lines of a file on a code host (GitHub, GitLab: ``…/blob/<ref>/src/app/cli.py
# #L40-L52``): the reporter pointing at the code they mean.
_LINKED_LINES = re.compile(
    rf"/blob/[^/\s#]+/((?:[\w.-]+/){{0,{MAX_LINK_PATH_PARTS}}}[\w.-]+\.\w+)#L{_LINE}(?:-L{_LINE})?"
)
# The frames pytest prints (``src/_pytest/runner.py:341: in from_call``, the raising one
# ending in its exception) and the warnings module's lines (``…/raw_building.py:470:
# FutureWarning: …``): a Python path, a line, then ``in name`` or a class of exception.
_LOCATION_FRAME = re.compile(
    r"((?:(?<![\w.\\/~+-])|(?=[A-Za-z]:))(?:[A-Za-z]:)?[\w.\\/~+-]*\.py):" + _LINE + ": "
    r"(?:in ([\w<>.]+)|(?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:Error|Exception|Warning)\b)"
)
_EXCEPTION_LINE = re.compile(
    # ``[ \t]*``, not ``\s*``: a start on each of many blank lines would read them all
    r"^[ \t]*((?:[A-Za-z_][\w]*\.)*[A-Z][A-Za-z0-9_]*(?:Error|Exception|Warning|Exit|Interrupt))"
    r"(?::\s*(.*))?$",
    re.MULTILINE,
)
_BACKTICK = re.compile(r"`([^`\n]{2,120})`")
# A single quote only where a quotation can open and close: not the apostrophe of a
# contraction or a possessive ("we're using it, so we can't" quotes nothing).
_QUOTED = re.compile(r"""(?:"([^"\n]{12,200})"|(?<!\w)'([^'\n]{12,200})'(?!\w))""")
_OPTION = re.compile(r"(?<![\w-])(--?[a-z][a-z0-9]*(?:-[a-z0-9]+)+|--[a-z]{3,})(?![\w-])")
_KEBAB = re.compile(r"(?<![\w-])([a-z][a-z0-9]*(?:-[a-z0-9]+)+)(?![\w-])")
_CALL = re.compile(r"(?<![A-Za-z0-9_])[0-9]*([A-Za-z_][A-Za-z0-9_]*)\(")
# A capital after a lower-case word, digit or punctuation on the same line: not just the
# first word of a sentence, a line or a table row.
_MID_CAPITAL = re.compile(r"(?<=[a-z0-9,;(`'\"])[ \t]+([A-Z][A-Za-z0-9_]*)")


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def without_lone_surrogates(text: str) -> str:
    """``text`` with every lone surrogate (what undecodable bytes become in a ``str``)
    replaced by U+FFFD, so it can be encoded, tokenised and sent anywhere."""
    return _LONE_SURROGATE.sub("\ufffd", text)


def split_identifier(word: str) -> list[str]:
    """Lower-case parts of one identifier: snake_case and camelCase both split."""
    return list(_identifier_parts(word))


@lru_cache(maxsize=WORD_TERMS_CACHE_SIZE)
def _identifier_parts(word: str) -> tuple[str, ...]:
    # Remembered: a signal splits every file name of the repository for every goal.
    return tuple(_parts(word))


def _parts(word: str) -> list[str]:
    # One pass over the whole word: no part (nor the lookahead of one) takes in an
    # underscore, so snake_case splits where camelCase does.
    return list(map(str.lower, _CAMEL.findall(word)))


def _normalize(term: str) -> str:
    # A light plural fold so that "fixtures" meets "fixture"; nothing smarter.
    if len(term) > 4 and term.endswith("s") and not term.endswith("ss"):
        return term[:-1]
    return term


def tokenize(text: str) -> list[str]:
    """Search terms of a text: identifier parts plus whole multi-part identifiers."""
    # One pass in C: each word's terms come from the cache below, joined.
    return list(chain.from_iterable(map(word_terms, _WORD.findall(text))))


def _terms_of(word: str) -> tuple[str, ...]:
    """The search terms of one identifier-shaped word (see :data:`word_terms`)."""
    # A file's distinct words all come here once per process: through
    # split_identifier's cache this cost twice as much.
    parts = _parts(word)
    terms = [
        _normalize(part)
        for part in parts
        if len(part) >= MIN_TERM_LENGTH and part not in STOPWORDS and not part.isdigit()
    ]
    if len(parts) > 1:
        terms.append(word.lower())
    return tuple(terms)


class _Remembered(dict[str, tuple[str, ...]]):
    """Each word's terms by ``make``, worked out when first asked for and kept (code
    repeats its names): a hit is a plain dict lookup, in C, where a cached call's
    bookkeeping costs about three times as much; emptied past ``WORD_TERMS_CACHE_SIZE``
    words."""

    def __init__(self, make: Callable[[str], tuple[str, ...]]) -> None:
        super().__init__()
        self._make = make

    def __missing__(self, word: str) -> tuple[str, ...]:
        if len(self) >= WORD_TERMS_CACHE_SIZE:
            self.clear()
        terms = self[word] = self._make(word)
        return terms


word_terms: Callable[[str], tuple[str, ...]] = _Remembered(_terms_of).__getitem__
"""The search terms of one identifier-shaped word (remembered)."""

_DIGITS = "0123456789"
# Every byte but an ASCII letter, digit, underscore or newline, as a space: what is left
# of a text between spaces and newlines are runs of word characters (see blank_runs).
_BLANKED = bytes(
    c if chr(c).isascii() and (chr(c).isalnum() or chr(c) in "_\n") else ord(" ")
    for c in range(256)
)


def blank_runs(text: str) -> str:
    """``text`` with every character that no :data:`WORD_PATTERN` word holds (all but
    ASCII letters, digits and underscores) a space, newlines kept; one character for
    one, so its lines stay its lines. Split at whitespace, each run is a word preceded
    by the digits the pattern skips (see :data:`run_terms`). Done in C: on source
    code, several times faster than finding the words with the pattern."""
    return text.encode("ascii", "replace").translate(_BLANKED).decode("ascii")


run_terms: Callable[[str], tuple[str, ...]] = _Remembered(
    lambda run: word_terms(run.lstrip(_DIGITS))
).__getitem__
"""The search terms of a run of word characters of :func:`blank_runs` (remembered): those
of its word, past its leading digits (none for a run of digits). A text's terms are its
runs' terms, in order."""


def is_code_like(word: str) -> bool:
    """A name written the way code spells it, not an English word."""
    if "_" in word.strip("_") or word.startswith("__"):
        return True
    return any(c.isupper() for c in word[1:]) and any(c.islower() for c in word)


def is_code_name(name: str) -> bool:
    """A name no sentence writes by chance: dotted (``Session.send``) or spelled as code
    (``fold_pins``, ``readPinboard``); a plain word (``pins``) is not."""
    return "." in name or is_code_like(name)


@dataclass(frozen=True, slots=True)
class Frame:
    path: str
    line: int
    function: str  # empty when the frame's line does not name it (a warning's)
    depth: int  # 0 for the innermost frame (the one that raised)


@dataclass(frozen=True, slots=True)
class LinkedLines:
    """Lines of a file the goal links to on a code host."""

    path: str  # as the link spells it (after the host, repository and ref)
    first: int
    last: int  # ``first`` when the link names one line


@dataclass(frozen=True, slots=True)
class GoalCues:
    """The precise hints a goal carries, each in the order it first appears."""

    names: tuple[str, ...]  # identifiers written in code form or in backticks/calls
    words: tuple[str, ...]  # every identifier-shaped word of the goal
    dotted: tuple[str, ...]  # ``a.b.c`` names
    paths: tuple[str, ...]  # file paths
    frames: tuple[Frame, ...]  # traceback frames
    exceptions: tuple[str, ...]  # exception classes named on exception lines
    literals: tuple[str, ...]  # messages worth looking for verbatim in the code
    options: tuple[str, ...] = ()  # option names (``--collect-only``, ``ignore-paths``)
    mid_capitals: tuple[str, ...] = ()  # capitalized words seen inside a sentence
    links: tuple[LinkedLines, ...] = ()  # lines of files the goal links to


def _unique(items: list[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(items))


def literal_fragments(message: str) -> list[str]:
    # Messages carry run-time values; keep the fixed stretches between them.
    pieces = re.split(r"""['"`<>{}\[\]()]|\b0x[0-9a-f]+\b|\b\d[\d.]*\b""", message)
    out: list[str] = []
    for piece in pieces:
        piece = piece.strip(" .,:;")
        if MIN_LITERAL_LENGTH <= len(piece) <= MAX_LITERAL_LENGTH and " " in piece:
            out.append(piece)
    return out


@lru_cache(maxsize=GOAL_CUES_KEPT)
def goal_cues(goal: str) -> GoalCues:
    """The goal's cues (immutable, so one answer serves every caller): the ranking reads
    them, and so does a workspace looking for files the goal names that are not indexed;
    about a millisecond for an issue-sized goal, worked out once."""
    text = goal[:MAX_GOAL_CHARS]
    names: list[str] = []
    words = [m.group(0) for m in _WORD.finditer(text)]
    for word in words:
        if len(word) >= MIN_CODE_NAME_LENGTH and is_code_like(word):
            names.append(word)
    for match in _BACKTICK.finditer(text):
        inner = match.group(1).strip()
        # one name alone in backticks is a name even when it is a common word; the words
        # of a longer snippet (`pip install -e .`, `from x import y`) are not all names
        alone = _WORD.fullmatch(inner.removesuffix("()")) is not None
        for word in _WORD.findall(inner):
            if len(word) >= MIN_CODE_NAME_LENGTH and word.lower() not in (
                CODE_WORDS if alone else STOPWORDS
            ):
                names.append(word)
    for match in _CALL.finditer(text):
        word = match.group(1)
        if len(word) >= MIN_CODE_NAME_LENGTH and word.lower() not in CODE_WORDS:
            names.append(word)
    if not names and not any(map(word_terms, words)):
        # a goal of nothing but common words ("get", "hello"): no term to search for, so
        # they are taken as the names they may be (`focus get` finds ``def get``)
        names = [w for w in words if len(w) >= MIN_CODE_NAME_LENGTH and w.lower() not in CODE_WORDS]
    dotted = [m.group(1) for m in _DOTTED.finditer(text)]
    dotted = [d for d in dotted if not re.fullmatch(r"[\w-]+\.(py|txt|cfg|toml|ini|md|rst)", d)]
    for name in dotted:
        for word in name.split("."):
            if len(word) >= MIN_CODE_NAME_LENGTH and word.lower() not in STOPWORDS:
                names.append(word)
    paths = [m.group(1) for m in _PATH.finditer(text)]
    located = [(m.start(), m.group(1), int(m.group(2)), m.group(3)) for m in _FRAME.finditer(text)]
    located += [
        (m.start(), m.group(1), int(m.group(2)), m.group(3) or "")
        for m in _LOCATION_FRAME.finditer(text)
    ]
    raw_frames = [(p, ln, fn) for _, p, ln, fn in sorted(located)]
    frames = [
        Frame(path=p, line=ln, function=fn, depth=len(raw_frames) - 1 - i)
        for i, (p, ln, fn) in enumerate(raw_frames)
    ]
    exceptions: list[str] = []
    literals: list[str] = []
    for match in _EXCEPTION_LINE.finditer(text):
        exceptions.append(match.group(1).rsplit(".", 1)[-1])
        if match.group(2):
            literals.extend(literal_fragments(match.group(2)))
    for match in _QUOTED.finditer(text):
        literals.extend(literal_fragments(match.group(1) or match.group(2)))
    options = [m.group(1).lstrip("-") for m in _OPTION.finditer(text)]
    options += [m.group(1) for m in _KEBAB.finditer(text)]
    options = [o for o in options if len(o) >= MIN_OPTION_LENGTH]
    links = [
        LinkedLines(m.group(1), int(m.group(2)), int(m.group(3) or m.group(2)))
        for m in _LINKED_LINES.finditer(text)
    ]
    return GoalCues(
        links=tuple(dict.fromkeys(links)),
        options=_unique(options),
        mid_capitals=_unique([m.group(1) for m in _MID_CAPITAL.finditer(text)]),
        names=_unique(names),
        words=_unique(words),
        dotted=_unique(dotted),
        paths=_unique(paths),
        frames=tuple(frames),
        exceptions=_unique(exceptions),
        literals=_unique(literals),
    )


TITLE_WEIGHT = 3.0  # the first line of a goal is its summary
PROSE_WEIGHT = 1.0
BLOCK_WEIGHT = 0.5  # code, logs and listings inside fences or indented blocks
REPEAT_BONUS = 0.5  # each doubling of a term's occurrences adds this share of its weight
_FENCE = re.compile(r"^\s*(```|~~~)")


def goal_sections(goal: str) -> list[tuple[str, float]]:
    """The goal's lines with their weight as evidence: title, prose, or block."""
    out: list[tuple[str, float]] = []
    in_fence = False
    titled = False
    for line in goal[:MAX_GOAL_CHARS].splitlines():
        if _FENCE.match(line):
            in_fence = not in_fence
            continue
        if not line.strip():
            continue
        if not titled:
            out.append((line, TITLE_WEIGHT))
            titled = True
        elif in_fence or line.startswith(("    ", "\t", ">>>", "$ ")):
            out.append((line, BLOCK_WEIGHT))
        else:
            out.append((line, PROSE_WEIGHT))
    return out


def weighted_terms(goal: str) -> dict[str, float]:
    """Query weights: a term's best section weight, raised gently with repetition (a
    term a log repeats a hundred times must not drown the title)."""
    best: dict[str, float] = {}
    count: dict[str, int] = {}
    for line, weight in goal_sections(goal):
        for term in tokenize(line):
            best[term] = max(best.get(term, 0.0), weight)
            count[term] = count.get(term, 0) + 1
    return {t: best[t] * (1.0 + REPEAT_BONUS * math.log2(count[t])) for t in sorted(best)}


def prose(goal: str) -> str:
    """The goal without its code and log blocks (what an embedding should read)."""
    return "\n".join(line for line, w in goal_sections(goal) if w > BLOCK_WEIGHT)
