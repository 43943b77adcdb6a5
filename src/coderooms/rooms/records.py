"""The log records every room function speaks: authors, conversations, rows and pages."""

from __future__ import annotations

from dataclasses import dataclass

from coderooms.rooms.chat import is_general_chat
from coderooms.rooms.wire import register_tagged, wire_omit_default

SESSION_WINDOW = 30
"""Messages a turn reads by default."""
MAX_WINDOW = 200
"""The largest history window a surface (the MCP room_read, the CLI read) may ask for."""
PAGE_SIZE = 512
"""Rows asked of the log in one read."""
SCAN_LIMIT = 2048
"""Raw rows one projection walk may read before it returns what it has."""

Sequence = int
"""The host-assigned, strictly increasing row number of the log."""


@dataclass(frozen=True, slots=True)
class Operator:
    """The human operator of the host."""

    @property
    def label(self) -> str:
        return "operator"


@dataclass(frozen=True, slots=True)
class Person:
    id: str
    label: str


@dataclass(frozen=True, slots=True)
class Agent:
    id: str
    label: str


@dataclass(frozen=True, slots=True)
class System:
    kind: str
    label: str


SessionAuthor = Operator | Person | Agent | System
register_tagged("type", {"operator": Operator, "person": Person, "agent": Agent, "system": System})


def author_id(author: SessionAuthor) -> str:
    """The id an author filter matches: agent/person id, system kind, or ``operator``."""
    if isinstance(author, Agent | Person):
        return author.id
    if isinstance(author, System):
        return author.kind
    return "operator"


def author_matches(author: SessionAuthor, wanted: str) -> bool:
    """Whether ``author`` is who an author filter names. As the room's semantics have
    it, a bare value matches an agent's or person's id, a system row's kind, or
    ``operator``; a typed one (``agent:ID``, ``person:ID``, ``system:KIND``) only that
    kind of author, since an agent and a person (or a system kind) may share an id."""
    kind, sep, ident = wanted.partition(":")
    if sep and kind == "agent":
        return isinstance(author, Agent) and author.id == ident
    if sep and kind == "person":
        return isinstance(author, Person) and author.id == ident
    if sep and kind == "system":
        return isinstance(author, System) and author.kind == ident
    return author_id(author) == wanted


def author_handle(author: SessionAuthor) -> str:
    """How a transcript line names its author: ``@id``, a person's label, ``operator``,
    or ``system/kind``."""
    if isinstance(author, Agent):
        return f"@{author.id}"
    if isinstance(author, Person):
        return author.label
    if isinstance(author, System):
        return f"system/{author.kind}"
    return "operator"


@dataclass(frozen=True, slots=True)
class Conversation:
    """A desk (by canonical id and display name), optionally narrowed to one thread."""

    desk_id: str
    desk_name: str
    thread_root: Sequence | None = None

    def equivalent_to(self, other: Conversation) -> bool:
        if self.thread_root != other.thread_root:
            return False
        mine, theirs = is_general_chat(self.desk_id), is_general_chat(other.desk_id)
        if mine or theirs:
            return mine and theirs
        return self.desk_id == other.desk_id


@dataclass(frozen=True, slots=True)
class LogMessage:
    """One host log row. ``chat_id`` None means General; ``parent`` is the direct parent.

    ``posted_at`` is when the host appended the row, as the host wrote it (UTC, ISO 8601,
    ``2026-12-01T10:19:52Z``), or None where no time was recorded (rows older than the
    store's clock, imported rows, logs that keep none). It is data the host passes in:
    nothing in the core reads a clock. The wire form leaves it out while it is None."""

    sequence: Sequence
    author: SessionAuthor
    content: str
    chat_id: str | None = None
    parent: Sequence | None = None
    posted_at: str | None = wire_omit_default(default=None)


@dataclass(frozen=True, slots=True)
class SessionPage:
    """Rows newest-first, with an exclusive cursor for the next older page."""

    messages: tuple[LogMessage, ...]
    next_before: Sequence | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.messages, tuple):
            object.__setattr__(self, "messages", tuple(self.messages))


@dataclass(frozen=True, slots=True)
class SessionMessage:
    """One projected message: attribution and untouched content, no references; the
    row's ``posted_at`` rides along (None: not recorded)."""

    sequence: Sequence
    author: SessionAuthor
    content: str
    posted_at: str | None = wire_omit_default(default=None)


@dataclass(frozen=True, slots=True)
class SessionQuery:
    conversation: Conversation
    before: Sequence | None = None
    window: int = SESSION_WINDOW
