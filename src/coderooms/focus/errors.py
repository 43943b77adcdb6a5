"""Errors of the focus runtime.

::

    CoderoomsError
    └── FocusError                     a focus, seek or impact request that cannot run
        ├── InvalidBudget              a token budget that is not a positive whole number
        ├── SkimBudgetTooSmall         a skim budget below the one line that marks a cut
        ├── InvalidLimit               a result limit or depth outside its bounds
        ├── InvalidMode                a focus mode the runtime does not have
        ├── UnknownTarget              an impact target that names no file or symbol
        │   └── AbsolutePathTarget     an absolute path outside the repository
        ├── TargetNotIndexed           an impact target the index left out (oversized …)
        ├── AmbiguousTarget            an impact target that names several symbols
        ├── DirectoryTarget            an impact target that is a directory
        ├── TargetTooLong              an impact target over MAX_TARGET_CHARS
        ├── GoalTooLong                a focus goal or seek query over MAX_GOAL_CHARS
        ├── BlankGoal                  a focus goal or seek query with nothing but spaces
        ├── GoalNotText                a goal, query or skimmed text that is not a string
        ├── UnknownSignal              an ablation naming no ranking signal or edge kind
        └── WorkingSetError            a working-set request that cannot run
            ├── UnknownSession         a session that has made no focus call yet
            ├── InvalidSession         a session id that is blank, too long or not text
            ├── NotInWorkingSet        dropping a node the session does not hold
            ├── UnknownPinTarget       pinning a node the index does not know
            ├── MissingArgument        a mode called without what it needs
            ├── UnusedArgument         an argument the call would ignore
            ├── TooManyPins            more pins than one session may hold
            ├── NotPinned              unpinning what is not pinned
            └── SessionContended       a session other calls kept changing under this one
"""

from __future__ import annotations

from typing import TypeGuard

from coderooms.errors import CoderoomsError

__all__ = [
    "FocusError",
    "InvalidBudget",
    "SkimBudgetTooSmall",
    "InvalidLimit",
    "counts_to",
    "InvalidMode",
    "UnknownTarget",
    "AmbiguousTarget",
    "TargetNotIndexed",
    "TargetTooLong",
    "DirectoryTarget",
    "AbsolutePathTarget",
    "GoalTooLong",
    "BlankGoal",
    "GoalNotText",
    "UnknownSignal",
    "WorkingSetError",
    "UnknownSession",
    "InvalidSession",
    "NotInWorkingSet",
    "UnknownPinTarget",
    "MissingArgument",
    "UnusedArgument",
    "TooManyPins",
    "NotPinned",
    "SessionContended",
]


class FocusError(CoderoomsError):
    """Base of the focus runtime's errors."""


def counts_to(value: object, maximum: int) -> TypeGuard[int]:
    """Whether ``value`` is a whole number from 1 to ``maximum`` (a bool is not): what
    :class:`InvalidBudget` and :class:`InvalidLimit` refuse the rest of."""
    return isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= maximum


class InvalidBudget(FocusError):
    fields = ("budget", "maximum")
    template = "budget must be a whole number of tokens from 1 to {maximum}, got {budget!r}"


class SkimBudgetTooSmall(FocusError):
    """Text over a skim budget that cannot hold even the one line saying what was cut."""

    fields = ("budget", "needed")
    template = (
        "a skim budget of {budget} tokens cannot hold even the one line that says what was "
        "cut ({needed} tokens); give a budget of at least {needed}"
    )


class InvalidLimit(FocusError):
    fields = ("name", "value", "maximum")
    template = "{name} must be a whole number from 1 to {maximum}, got {value!r}"


class InvalidMode(FocusError):
    fields = ("mode",)
    template = "focus mode must be one of set, check, status, pin, unpin, drop, reset; got {mode!r}"


class UnknownTarget(FocusError):
    fields = ("target",)
    template = "no file or symbol matches {target!r}; use a path, a qualified name or a node id"


class TargetNotIndexed(FocusError):
    fields = ("target", "reason")
    template = (
        "{target!r} is not in the index: it was left out ({reason}), so nothing is known "
        "of what depends on it"
    )


class AmbiguousTarget(FocusError):
    fields = ("target", "matches")
    template = "{target!r} names several symbols ({matches}); use one of these ids instead"


# Impact targets in forms the graph cannot answer, and targets too long to echo. An
# absolute path is an UnknownTarget: the graph cannot tell which file it means.
class TargetTooLong(FocusError):
    fields = ("length", "limit", "start")
    template = (
        "the impact target is {length} characters; a path, name or id holds at most "
        "{limit} (it starts {start!r})"
    )


class DirectoryTarget(FocusError):
    fields = ("target", "files", "example")
    template = (
        "{target!r} is a directory ({files} indexed files), not an impact target; "
        "name a file or a symbol in it, such as {example!r}"
    )


class AbsolutePathTarget(UnknownTarget):
    fields = ("target",)
    template = (
        "{target!r} is an absolute path; give the path relative to the repository root, "
        "as the index lists it"
    )


class GoalTooLong(FocusError):
    fields = ("what", "length", "limit")
    template = (
        "the {what} is {length} characters; at most {limit} are read (say what you are "
        "after in a sentence or two, or name a file, a symbol or an error message)"
    )


class BlankGoal(FocusError):
    fields = ("what",)
    template = (
        "the {what} is blank; say what you are after in a sentence, or name a file, a "
        "symbol or an error message"
    )


class GoalNotText(FocusError):
    fields = ("what", "kind")
    template = "the {what} must be text (a str), not {kind}"


class UnknownSignal(FocusError):
    fields = ("name", "known")
    template = "no ranking signal or edge kind is called {name!r}; known: {known}"


class WorkingSetError(FocusError):
    """Base of the errors of a focus session's working set."""


class UnknownSession(WorkingSetError):
    fields = ("session", "agent")
    template = (
        "agent {agent!r} has no focus session {session!r}; a focus call in mode set starts one"
    )


class InvalidSession(WorkingSetError):
    fields = ("session", "limit")
    template = "a session id is 1 to {limit} characters of text, not blank; got {session!r}"


class NotInWorkingSet(WorkingSetError):
    fields = ("node", "session")
    template = (
        "{node!r} is not resident in focus session {session!r}; focus mode status lists "
        "what it holds"
    )


class UnknownPinTarget(WorkingSetError):
    fields = ("node",)
    template = "no file or symbol in the index has the id {node!r}; use an id focus or seek listed"


class MissingArgument(WorkingSetError):
    fields = ("mode", "needs")
    template = "focus mode {mode} needs {needs}"


class UnusedArgument(WorkingSetError):
    """An argument that has no effect on the call as given: refused rather than ignored,
    since whoever gave it expected it to do something."""

    fields = ("name", "applies")
    template = "{name} is used only {applies}: leave it out here"


class TooManyPins(WorkingSetError):
    fields = ("limit",)
    template = "a focus session holds at most {limit} pins; unpin one first"


class NotPinned(WorkingSetError):
    fields = ("what", "session")
    template = "{what!r} is not pinned in focus session {session!r}"


class SessionContended(WorkingSetError):
    fields = ("session", "agent", "attempts")
    template = (
        "focus session {session!r} of agent {agent!r} was changed by other calls each of "
        "the {attempts} times this call read it; nothing was saved: send the call again"
    )
