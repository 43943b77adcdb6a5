"""The one exception tree of coderooms.

Every error the package raises on purpose derives from :class:`CoderoomsError`::

    CoderoomsError
    ├── WireError (also ValueError)        a payload that does not decode
    ├── WrongArgumentType (also TypeError) a library call given a value of the wrong type
    ├── CoreError                          roster and desk snapshots that do not validate
    │   ├── EmptyRosterMemberId, DuplicateRosterMemberId
    │   ├── EmptyPersonId, DuplicatePersonId
    │   ├── AmbiguousDesk, UnknownDesk, ReservedDeskIdentity
    │   └── DuplicateOrderMember, UnknownOrderMember, IncompleteOrder,
    │       DuplicateDeskOrder, UnknownMemberDesk, UnknownOrderDesk
    ├── SessionError                       the paging walk over a SessionLog
    │   ├── ReadError                      the port failed (the source is __cause__)
    │   └── PageOutOfRange, PageNotDescending, DuplicateSequence, EmptyPageCursor,
    │       CursorDidNotAdvance, CursorAfterOldest, PageTooLarge, InvalidBound,
    │       SequenceOrderError
    ├── PatternError                       a search pattern that cannot run
    │   ├── RegexUnsupported
    │   ├── InvalidPattern
    │   ├── BlankQuery                     a query typed into a surface that asks for nothing
    │   ├── QueryTooLong                   a query longer than QUERY_MAX_CHARS
    │   └── QueryNotUtf8                   a query holding bytes that are not UTF-8
    └── HostError                          stores, indexes and surfaces (see their modules)

Each error keeps the values it names as attributes (``PageTooLarge.requested`` …) and
renders a one-line message a person can act on. A message repeats at most
:data:`ECHO_CHARS` characters of any text value it names (see :func:`echoed`), so a
refusal of a huge argument is never itself huge.
"""

from __future__ import annotations

from typing import Any, ClassVar

__all__ = [
    "ECHO_CHARS",
    "echoed",
    "CoderoomsError",
    "WireError",
    "WrongArgumentType",
    "require_int",
    "require_str",
    "HostError",
    "CoreError",
    "EmptyRosterMemberId",
    "DuplicateRosterMemberId",
    "EmptyPersonId",
    "DuplicatePersonId",
    "AmbiguousDesk",
    "UnknownDesk",
    "ReservedDeskIdentity",
    "DuplicateOrderMember",
    "UnknownOrderMember",
    "IncompleteOrder",
    "DuplicateDeskOrder",
    "UnknownMemberDesk",
    "UnknownOrderDesk",
    "SessionError",
    "ReadError",
    "PageOutOfRange",
    "PageNotDescending",
    "DuplicateSequence",
    "EmptyPageCursor",
    "CursorDidNotAdvance",
    "CursorAfterOldest",
    "PageTooLarge",
    "InvalidBound",
    "SequenceOrderError",
    "PatternError",
    "RegexUnsupported",
    "InvalidPattern",
    "BlankQuery",
    "QueryNotUtf8",
    "QueryTooLong",
]


ECHO_CHARS = 200
"""The most characters of a given value an error message repeats (long enough for any
real path, id or query a person needs to see again)."""


def echoed(value: object) -> object:
    """``value`` as a message may repeat it: text longer than :data:`ECHO_CHARS` is cut
    to that prefix, the cut marked with the full length."""
    if isinstance(value, str) and len(value) > ECHO_CHARS:
        return f"{value[:ECHO_CHARS]}… ({len(value):,} characters)"
    return value


class CoderoomsError(Exception):
    """Base of every error coderooms raises on purpose."""

    fields: ClassVar[tuple[str, ...]] = ()
    template: ClassVar[str] = ""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if self.fields:
            values = dict(zip(self.fields, args, strict=False))
            values.update(kwargs)
            missing = [f for f in self.fields if f not in values]
            if missing:
                raise TypeError(f"{type(self).__name__} needs {', '.join(missing)}")
            for name in self.fields:
                setattr(self, name, values[name])
            shown = {name: echoed(value) for name, value in values.items()}
            message = self.template.format(**shown) if self.template else repr(shown)
            super().__init__(message)
        else:
            super().__init__(*args)

    def __eq__(self, other: object) -> bool:
        if type(self) is not type(other) or not self.fields:
            return self is other
        return all(getattr(self, f) == getattr(other, f) for f in self.fields)

    def __hash__(self) -> int:
        return hash((type(self), tuple(repr(getattr(self, f, None)) for f in self.fields)))


class WireError(CoderoomsError, ValueError):
    """A payload that does not decode: a missing field, a wrong type, an unknown tag."""


class WrongArgumentType(CoderoomsError, TypeError):
    """A library call given a value of the wrong type (``add_agent(None)``, a message
    number as text): named, with the type it got, before anything is done."""

    fields = ("what", "expected", "kind")
    template = "{what} must be {expected}, not {kind}"


def require_str(what: str, value: object, *, optional: bool = False) -> None:
    """Refuse ``value`` unless it is a ``str`` (or None, when ``optional``)."""
    if isinstance(value, str) or (optional and value is None):
        return
    raise WrongArgumentType(what, "text (a str)", type(value).__name__)


def require_int(what: str, value: object, *, optional: bool = False) -> None:
    """Refuse ``value`` unless it is an ``int`` and not a bool (or None, when
    ``optional``)."""
    if (isinstance(value, int) and not isinstance(value, bool)) or (optional and value is None):
        return
    raise WrongArgumentType(what, "a whole number (an int)", type(value).__name__)


class HostError(CoderoomsError):
    """Base of errors raised by hosts and surfaces (stores, the code index, servers)."""


# --- core -----------------------------------------------------------------------------


class CoreError(CoderoomsError):
    """A roster or desk snapshot that does not validate."""


class EmptyRosterMemberId(CoreError):
    fields = ("index",)
    template = "roster member #{index} has a blank id"


class DuplicateRosterMemberId(CoreError):
    fields = ("id",)
    template = "roster member id {id!r} appears more than once"


class EmptyPersonId(CoreError):
    fields = ("index",)
    template = "person #{index} has a blank id"


class DuplicatePersonId(CoreError):
    fields = ("id",)
    template = "person id {id!r} appears more than once"


class AmbiguousDesk(CoreError):
    fields = ("reference",)
    template = "desk reference {reference!r} names more than one desk"


class UnknownDesk(CoreError):
    fields = ("reference",)
    template = "no desk has the id or name {reference!r}"


class ReservedDeskIdentity(CoreError):
    fields = ("desk_id",)
    template = (
        "desk {desk_id!r} uses the reserved General/main identity; only the desk whose id "
        "and name are both 'General' may"
    )


class DuplicateOrderMember(CoreError):
    fields = ("desk_id", "agent_id")
    template = "the order for desk {desk_id!r} lists {agent_id!r} twice"


class UnknownOrderMember(CoreError):
    fields = ("desk_id", "agent_id")
    template = "the order for desk {desk_id!r} lists {agent_id!r}, who is not a member"


class IncompleteOrder(CoreError):
    fields = ("desk_id", "missing")
    template = "the order for desk {desk_id!r} leaves out members {missing!r}"


class DuplicateDeskOrder(CoreError):
    fields = ("desk_id",)
    template = "desk {desk_id!r} has more than one order"


class UnknownMemberDesk(CoreError):
    fields = ("desk_id",)
    template = "a member was added to unknown desk {desk_id!r}"


class UnknownOrderDesk(CoreError):
    fields = ("desk_id",)
    template = "an order names unknown desk {desk_id!r}"


# --- sessions -------------------------------------------------------------------------


class SessionError(CoderoomsError):
    """The paging walk met a page it cannot use, or the log could not be read."""


class ReadError(SessionError):
    """The SessionLog port failed; the original exception is ``__cause__``."""

    fields = ("message",)
    template = "reading the session log failed: {message}"


class PageOutOfRange(SessionError):
    fields = ("sequence", "before")
    template = "page row {sequence} is not below the requested cursor {before}"


class PageNotDescending(SessionError):
    fields = ("previous", "next")
    template = "page rows are not strictly newest-first: {previous} then {next}"


class DuplicateSequence(SessionError):
    fields = ("sequence",)
    template = "row {sequence} was returned twice during one walk"


class EmptyPageCursor(SessionError):
    fields = ("next_before",)
    template = "an empty page advertised another cursor ({next_before})"


class CursorDidNotAdvance(SessionError):
    fields = ("before", "next_before")
    template = "page cursor {next_before} does not move older than {before}"


class CursorAfterOldest(SessionError):
    fields = ("next_before", "oldest")
    template = "page cursor {next_before} is newer than the page's oldest row {oldest}"


class PageTooLarge(SessionError):
    fields = ("requested", "actual")
    template = "asked for at most {requested} rows, the log returned {actual}"


class InvalidBound(SessionError):
    """A window or scan limit below zero: a count of rows cannot be negative."""

    fields = ("name", "value")
    template = "{name} must be zero or more, got {value}"


class SequenceOrderError(SessionError):
    """A row added to an in-memory log out of order (``latest`` None: a negative sequence)."""

    fields = ("sequence", "latest")

    def __str__(self) -> str:
        if self.latest is None:
            return f"row sequence {self.sequence} is negative; sequences start at 0"
        return (
            f"row {self.sequence} cannot follow row {self.latest}: sequences must strictly increase"
        )


# --- patterns -------------------------------------------------------------------------


class PatternError(CoderoomsError):
    """A search pattern that cannot run. Never answered by a silent literal search."""


class RegexUnsupported(PatternError):
    fields = ("pattern",)
    template = "regular expressions are unavailable (google-re2 is not installed): /{pattern}/"


class InvalidPattern(PatternError):
    fields = ("pattern", "message")
    template = "regular expression /{pattern}/ does not compile: {message}"


class BlankQuery(PatternError):
    def __init__(self) -> None:
        super().__init__("the query is blank: give words to look for, or a /regular expression/")


class QueryNotUtf8(PatternError):
    def __init__(self) -> None:
        super().__init__("the query is not valid UTF-8 text; give it as UTF-8")


class QueryTooLong(PatternError):
    fields = ("length", "limit")
    template = "the query is {length} characters; a query holds at most {limit}"
