"""Errors of the focus runtime.

::

    CoderoomsError
    └── FocusError                     a focus, seek or impact request that cannot run
        ├── InvalidBudget              a token budget that is not a positive whole number
        ├── InvalidLimit               a result limit or depth outside its bounds
        ├── InvalidMode                a focus mode other than ``set`` or ``check``
        ├── UnknownTarget              an impact target that names no file or symbol
        └── AmbiguousTarget            an impact target that names several symbols
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
