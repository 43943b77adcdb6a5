"""Errors of the focus runtime.

::

    CoderoomsError
    └── FocusError                     a focus, seek or impact request that cannot run
        ├── InvalidBudget              a token budget that is not a positive whole number
        ├── InvalidLimit               a result limit or depth outside its bounds
        ├── InvalidMode                a focus mode other than ``set`` or ``check``
        ├── UnknownTarget              an impact target that names no file or symbol
        │   └── AbsolutePathTarget     an absolute path outside the repository
        ├── AmbiguousTarget            an impact target that names several symbols
        ├── DirectoryTarget            an impact target that is a directory
        ├── TargetTooLong              an impact target over MAX_TARGET_CHARS
        ├── GoalTooLong                a focus goal or seek query over MAX_GOAL_CHARS
        └── UnknownSignal              an ablation naming no ranking signal or edge kind
"""

from __future__ import annotations

from coderooms.errors import CoderoomsError

__all__ = [
    "FocusError",
    "InvalidBudget",
    "InvalidLimit",
    "InvalidMode",
    "UnknownTarget",
    "AmbiguousTarget",
    "TargetTooLong",
    "DirectoryTarget",
    "AbsolutePathTarget",
    "GoalTooLong",
    "UnknownSignal",
]


class FocusError(CoderoomsError):
    """Base of the focus runtime's errors."""


class InvalidBudget(FocusError):
    fields = ("budget", "maximum")
    template = "budget must be a whole number of tokens from 1 to {maximum}, got {budget!r}"


class InvalidLimit(FocusError):
    fields = ("name", "value", "maximum")
    template = "{name} must be a whole number from 1 to {maximum}, got {value!r}"


class InvalidMode(FocusError):
    fields = ("mode",)
    template = "focus mode must be 'set' or 'check', got {mode!r}"


class UnknownTarget(FocusError):
    fields = ("target",)
    template = "no file or symbol matches {target!r}; use a path, a qualified name or a node id"


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


class UnknownSignal(FocusError):
    fields = ("name", "known")
    template = "no ranking signal or edge kind is called {name!r}; known: {known}"
