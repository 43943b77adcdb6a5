"""The skimmer: verbose tool output cut down to what a goal needs, every cut marked.

A test run, a build log or a long listing costs context that the goal mostly does not
need. :func:`skim_text` keeps the lines that speak to the goal (its words, weighted by
how rare they are in the output) and the lines that matter whatever the goal (errors,
failures, tracebacks, warnings), with a little context around each, plus the head and
the tail of the output, and fits them to a token budget. Nothing is dropped silently:
each run of cut lines is replaced in the text by one marker line that says which lines
went, how many tokens they held and why, and the same is returned as :class:`SkimCut`
records. A line longer than :data:`MAX_LINE_CHARS` keeps its start and an inline note of
what followed; that cut is a record too, and ``tokens_in`` counts the whole input.

Pure: the caller hands in the token counter (``coderooms.skimmer.skim`` binds the project's).
"""

from __future__ import annotations

import math
import re
from bisect import bisect_right
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from itertools import accumulate
from typing import Literal

from coderooms.focus.errors import InvalidBudget, SkimBudgetTooSmall, counts_to
from coderooms.focus.text import tokenize

HEAD_LINES = 3
"""Lines always kept from the start of the output (the command, the first header)."""
TAIL_LINES = 8
"""Lines always kept from the end (summaries and final errors usually live there)."""
MAX_SKIM_BUDGET = 1_000_000  # the most tokens a skim may be asked to keep
CONTEXT_LINES = 1
"""Neighbours kept on each side of a line that was kept for what it says."""
SIGNAL_WEIGHT = 3.0
"""Score of a line that reports an error, failure or warning, whatever the goal."""
MAX_LINE_CHARS = 2_000
"""A longer line is shortened to this many characters (and the shortening marked)."""

CutReason = Literal["no_goal_match", "over_budget", "line_too_long"]

_DIGITS_TO_ZERO = str.maketrans("123456789", "000000000")
SIGNAL_STEMS = (
    "error",
    "exception",
    "traceback",
    "fail",
    "fatal",
    "panic",
    "assert",
    "warning",
    "deprecat",
    "segmentation fault",
    "killed",
    "timeout",
    "timed out",
)
"""What every line the signal pattern matches holds, lower-cased: only such lines are
matched against it."""
_SIGNAL = re.compile(
    r"\b(error|errors|exception|traceback|failed|failure|failures|fatal|panic|"
    r"assert(?:ion)?(?:error)?|warning|deprecat\w*|segmentation fault|killed|timeout|"
    r"timed out)\b",
    re.IGNORECASE,
)


@dataclass(frozen=True, slots=True)
class SkimCut:
    """A run of cut lines (1-based, inclusive), the tokens they held and why they went.

    ``line_too_long`` is the one partial cut: the line stays, shortened to its first
    :data:`MAX_LINE_CHARS` characters and a note of how many followed; ``tokens`` is what
    the shortening removed.
    """

    start_line: int
    end_line: int
    tokens: int
    reason: CutReason

    @property
    def lines(self) -> int:
        return self.end_line - self.start_line + 1


@dataclass(frozen=True, slots=True)
class SkimResult:
    """The skimmed text (cut runs replaced by marker lines) and its accounting."""

    text: str
    budget: int
    tokens_in: int
    tokens_out: int
    lines_in: int
    lines_kept: int
    cuts: tuple[SkimCut, ...]

    @property
    def skimmed(self) -> bool:
        return bool(self.cuts)


def cut_marker(cut: SkimCut) -> str:
    """The line that stands in the text where ``cut`` removed lines."""
    why = "nothing in them matches the goal" if cut.reason == "no_goal_match" else "over budget"
    noun = "line" if cut.lines == 1 else "lines"
    span = f"line {cut.start_line}" if cut.lines == 1 else f"lines {cut.start_line}-{cut.end_line}"
    return f"[... skimmed {span} ({cut.lines} {noun}, {cut.tokens} tokens): {why} ...]"


def skim_text(
    text: str,
    goal: str,
    budget: int,
    count_many: Callable[[Sequence[str]], list[int]],
) -> SkimResult:
    """Fit ``text`` into ``budget`` tokens, keeping what ``goal`` needs and marking cuts.

    ``count_many`` counts the tokens of several strings at once. Text that already fits
    comes back unchanged. Deterministic: ties go to the earlier line. The result stays
    within the budget, counted whole; a budget that cannot hold even the one marker that
    says what was cut is refused (:class:`SkimBudgetTooSmall`).
    """
    if not counts_to(budget, MAX_SKIM_BUDGET):
        raise InvalidBudget(budget, MAX_SKIM_BUDGET)
    # A final newline ends the last line; it does not start another one (kept as is).
    ending = "\n" if text.endswith("\n") else ""
    raw = (text[:-1] if ending else text).split("\n") if text else []
    lines = [_shorten(line) for line in raw]
    costs = count_many([line + "\n" for line in lines])
    # What the input held: over-long lines are counted whole, once.
    held = list(costs)
    long_lines = [i for i, line in enumerate(raw) if len(line) > MAX_LINE_CHARS]
    if long_lines:
        for i, cost in zip(
            long_lines, count_many([raw[i] + "\n" for i in long_lines]), strict=True
        ):
            held[i] = cost
    total = sum(costs)
    if total <= budget:
        kept = "\n".join(lines) + ending
        shortened = tuple(_shortening(i, held, costs) for i in long_lines)
        return SkimResult(kept, budget, sum(held), total, len(lines), len(lines), shortened)

    scores = _score_lines(lines, goal)
    keep = [False] * len(lines)

    # Nothing kept at all: one marker for the whole text. A budget below it is refused.
    reason: CutReason = "over_budget" if any(s > 0 for s in scores) else "no_goal_match"
    (needed,) = count_many([cut_marker(SkimCut(1, len(lines), sum(held), reason)) + ending])
    if budget < needed:
        raise SkimBudgetTooSmall(budget, needed)
    # A marker's size barely depends on its numbers: price every gap like the widest one
    # (the text is counted whole at the end, and trimmed where this was short).
    (marker_price,) = count_many([cut_marker(SkimCut(1, len(lines), total, "over_budget")) + "\n"])
    spent = 0  # tokens of kept lines
    gaps = 1  # runs of cut lines (each becomes one marker)

    def take(index: int) -> bool:
        nonlocal spent, gaps
        if keep[index]:
            return True
        left_open = index > 0 and not keep[index - 1]
        right_open = index < len(lines) - 1 and not keep[index + 1]
        new_gaps = gaps + (1 if left_open and right_open else 0 if left_open or right_open else -1)
        if spent + costs[index] + new_gaps * marker_price > budget:
            return False
        keep[index] = True
        spent += costs[index]
        gaps = new_gaps
        return True

    # What the goal and the signals ask for comes first, with context; then the first and
    # last line, which anchor the output; then the rest of the head and the tail (the
    # tail from its end).
    ranked = sorted((i for i, s in enumerate(scores) if s > 0), key=lambda i: (-scores[i], i))
    for index in ranked:
        if take(index):
            for near in range(index - CONTEXT_LINES, index + CONTEXT_LINES + 1):
                if 0 <= near < len(lines) and near != index:
                    take(near)
    take(0)
    take(len(lines) - 1)
    for index in range(1, min(HEAD_LINES, len(lines))):
        take(index)
    for index in range(len(lines) - 2, max(len(lines) - 1 - TAIL_LINES, 0), -1):
        take(index)

    # Pieces were counted one by one; the text is counted whole, and where the seams
    # between them cost more, the least wanted kept lines go until it fits.
    by_want = sorted((i for i in range(len(lines)) if keep[i]), key=lambda i: (scores[i], -i))
    while True:
        result = _assemble(lines, costs, held, set(long_lines), scores, keep, budget)
        text = result.text + ending
        (spent,) = count_many([text])
        if spent <= budget or not by_want:
            return replace(result, text=text, tokens_out=spent)
        keep[by_want.pop(0)] = False


def _shortening(index: int, held: Sequence[int], costs: Sequence[int]) -> SkimCut:
    return SkimCut(index + 1, index + 1, max(held[index] - costs[index], 0), "line_too_long")


def _shorten(line: str) -> str:
    if len(line) <= MAX_LINE_CHARS:
        return line
    return (
        line[:MAX_LINE_CHARS]
        + f" [... {len(line) - MAX_LINE_CHARS} more characters: line too long]"
    )


def _score_lines(lines: Sequence[str], goal: str) -> list[float]:
    """Each line's score: the idf-weighted goal terms it holds, plus :data:`SIGNAL_WEIGHT`
    when it reads like an error or a warning.

    Only lines holding a goal term as a substring of their lower-cased text (which every
    line holding the term does) are split into terms, and the signal words are found in
    one pass over the whole text: a 39 MB log is scored in a second, not eight."""
    scores = [0.0] * len(lines)
    if not lines:
        return scores
    joined = "\n".join(lines)
    lowered = joined.casefold()  # the signal pattern matches ignoring case as folding does
    starts = list(accumulate((len(line) + 1 for line in lines[:-1]), initial=0))
    if len(lowered) != len(joined):  # a character whose folded case is longer (ß: ss)
        low_lines = lowered.split("\n")
        starts = list(accumulate((len(line) + 1 for line in low_lines[:-1]), initial=0))

    def holding(needle: str) -> set[int]:
        """The lines whose case-folded text holds ``needle`` (one find a line)."""
        found: set[int] = set()
        at = lowered.find(needle)
        while at >= 0:
            line = bisect_right(starts, at) - 1
            found.add(line)
            if line + 1 >= len(starts):
                break
            at = lowered.find(needle, starts[line + 1])
        return found

    goal_terms = set(tokenize(goal))
    held: dict[int, set[str]] = {}
    # A digit is a term part of its own and never one of these terms, so a line's goal
    # terms do not depend on its digits: a log's lines are split once per shape.
    by_shape = not any(c.isdigit() for term in goal_terms for c in term)
    shapes: dict[str, set[str]] = {}
    for index in sorted(set().union(*(holding(term) for term in goal_terms))):
        line = lines[index]
        if by_shape:
            shape = line.translate(_DIGITS_TO_ZERO)
            found = shapes.get(shape)
            if found is None:
                found = shapes[shape] = goal_terms.intersection(tokenize(line))
        else:
            found = goal_terms.intersection(tokenize(line))
        if found:
            held[index] = found
    frequency = Counter(term for terms in held.values() for term in terms)
    count = len(lines)
    weight = {t: math.log(1 + count / f) for t, f in frequency.items()}
    for index, terms in held.items():
        scores[index] = sum(weight[t] for t in sorted(terms))  # one order: the same sum
    maybe = set().union(*(holding(word) for word in SIGNAL_STEMS))
    for index in sorted(maybe):
        if _SIGNAL.search(lines[index]):
            scores[index] += SIGNAL_WEIGHT
    return scores


def _assemble(
    lines: Sequence[str],
    costs: Sequence[int],
    held: Sequence[int],
    long_lines: set[int],
    scores: Sequence[float],
    keep: Sequence[bool],
    budget: int,
) -> SkimResult:
    """The text of the kept lines with a marker for each run cut (its ``tokens_out`` is
    the caller's to count)."""
    out: list[str] = []
    cuts: list[SkimCut] = []
    index = 0
    while index < len(lines):
        if keep[index]:
            out.append(lines[index])
            if index in long_lines:
                cuts.append(_shortening(index, held, costs))
            index += 1
            continue
        first = index
        while index < len(lines) and not keep[index]:
            index += 1
        last = index - 1
        matched = any(scores[i] > 0 for i in range(first, last + 1))
        cut = SkimCut(
            first + 1,
            last + 1,
            sum(held[first : last + 1]),
            "over_budget" if matched else "no_goal_match",
        )
        cuts.append(cut)
        out.append(cut_marker(cut))
    text = "\n".join(out)
    kept = sum(1 for k in keep if k)
    return SkimResult(text, budget, sum(held), 0, len(lines), kept, tuple(cuts))
