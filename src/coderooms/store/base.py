"""The one store interface: a durable room log plus the roster and desks beside it.

SQLite (the embedded default, :mod:`coderooms.store.sqlite`) and PostgreSQL (many
hosts, :mod:`coderooms.store.postgres`) implement it, sharing their rules through
:mod:`coderooms.store.sql`; one parametrized store suite and the conformance suite run
against both.

A store is a :class:`~coderooms.rooms.session.SessionLog` over the whole log. For a
projection it can also hand out a narrower view (:meth:`Store.conversation_log`) whose
``read_before`` returns only the rows one conversation can use, from an index, so a
turn's cost does not grow with the rest of the log. The walk validates that view's pages
exactly as it validates the whole log's.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from types import TracebackType

from coderooms.rooms.desks import Desk, DeskSet
from coderooms.rooms.records import (
    Agent,
    Conversation,
    LogMessage,
    Operator,
    Person,
    Sequence,
    SessionAuthor,
    SessionPage,
    System,
)
from coderooms.rooms.roster import Roster, RosterMember, RosterPerson
from coderooms.rooms.session import SessionLog
from coderooms.store.errors import NoWorkingSets, UnknownAuthor
from coderooms.store.worksets import WorkingSets

__all__ = [
    "MESSAGE_BYTES_CAP",
    "READ_LIMIT_CAP",
    "WAIT_MAX_S",
    "WAIT_POLL_S",
    "AuthorRef",
    "CodePinSnapshot",
    "Store",
    "author_filter",
    "parse_author_ref",
]

MESSAGE_BYTES_CAP = 1024 * 1024
"""The largest message content a store accepts, in UTF-8 bytes (1 MiB)."""

READ_LIMIT_CAP = 4096
"""The most rows one ``read_before`` call returns; a bigger ask gets a full page of this
many and a cursor for the rest, as the port allows."""

WAIT_POLL_S = 0.05
"""How often :meth:`Store.wait_for_rows` asks a log without a feed of its own for rows
another process posted (SQLite: other processes on the same host)."""

WAIT_MAX_S = 60.0
"""The longest one :meth:`Store.wait_for_rows` call waits, whatever it asks for."""

AuthorRef = SessionAuthor | str
"""Who posts: an author record, or ``agent:ID`` / ``person:ID`` / ``operator`` /
``system:KIND``. Agent and person labels always come from the roster."""


def parse_author_ref(ref: AuthorRef) -> SessionAuthor:
    """An author record for ``ref``; labels are placeholders the store replaces.

    Raises ``ValueError`` for a string that is none of the accepted forms.
    """
    if isinstance(ref, Operator | Person | Agent | System):
        return ref
    kind, sep, ident = ref.partition(":")
    if ref == "operator":
        return Operator()
    if sep and ident.strip():
        if kind == "agent":
            return Agent(ident, ident)
        if kind == "person":
            return Person(ident, ident)
        if kind == "system":
            return System(ident, ident)
    raise ValueError(f"author {ref!r} is not agent:ID, person:ID, operator or system:KIND")


ROSTER_KINDS = ("agent", "person")
"""The kinds of author a roster holds."""


def author_filter(roster: Roster, author: str | None) -> str | None:
    """What a search keeps rows by (see :func:`~coderooms.rooms.records.author_matches`),
    for an author a person or an agent typed.

    ``agent:ID`` and ``person:ID`` must name someone on the roster (a retired agent's
    messages stay searchable), and so must a bare ID (an agent or a person), unless it
    is ``operator``; ``system:KIND`` means KIND, which only the log knows. A typo is
    refused as :class:`~coderooms.store.errors.UnknownAuthor`, never answered with "no
    matches"."""
    if author is None:
        return None
    kind, sep, ident = author.partition(":")
    if sep and kind == "system" and ident.strip():
        return author  # typed: only system messages of that kind
    if sep and kind in ROSTER_KINDS and ident:
        if roster.holds(kind, ident):
            return author  # typed: an agent and a person may share an id
    elif not sep and (author == "operator" or any(roster.holds(k, author) for k in ROSTER_KINDS)):
        return author
    raise UnknownAuthor(author)


@dataclass(frozen=True, slots=True)
class CodePinSnapshot:
    """A code node as it was when row ``sequence`` pinned it."""

    sequence: int
    node: str
    content_hash: str
    signature: str


class Store(ABC):
    """A durable room: an append-only log with host-assigned sequences, a roster and
    desks. Reads and writes are ``async``; :meth:`import_messages` and :meth:`close`
    are plain calls."""

    location: str = "store"
    """Where the store is, as messages name it (a file path, a URL without password)."""
    schema_version: int = 0
    """The newest migration this store's schema has."""

    _wakers: list[Callable[[], None]]

    # --- the log ------------------------------------------------------------------------

    @abstractmethod
    async def read_before(self, before: Sequence | None, limit: int) -> SessionPage:
        """The newest rows of the whole log strictly below ``before``, newest first."""

    @abstractmethod
    def conversation_log(self, conversation: Conversation) -> SessionLog:
        """A log view holding only rows ``conversation`` can use: the desk's rows, or for
        a thread its root and direct replies. Hand it to ``project_session``."""

    async def post(
        self,
        author: AuthorRef,
        content: str,
        *,
        desk: str = "General",
        parent: Sequence | None = None,
        idempotency_key: str | None = None,
    ) -> LogMessage:
        """Append one message and return it with its new sequence.

        With ``idempotency_key`` (a client's own name for this post, at most
        ``IDEMPOTENCY_KEY_MAX_CHARS`` characters) a post that already committed under
        that key is returned as it was written instead of being written again, so a
        client that lost the answer can retry; the same key on a different post is
        :class:`~coderooms.store.errors.IdempotencyKeyReused`.

        Validates, in this order: the content (not blank, valid UTF-8 text, at most
        :data:`MESSAGE_BYTES_CAP` bytes), the author (a known agent that is not retired, a
        known person, the operator, or a system kind), the desk (resolved by id, then by
        name), and the parent (an existing row of the same desk). Agent and person labels
        are taken from the roster, not from ``author``.
        """
        row, _ = await self.post_or_replay(
            author, content, desk=desk, parent=parent, idempotency_key=idempotency_key
        )
        return row

    @abstractmethod
    async def post_or_replay(
        self,
        author: AuthorRef,
        content: str,
        *,
        desk: str = "General",
        parent: Sequence | None = None,
        idempotency_key: str | None = None,
    ) -> tuple[LogMessage, bool]:
        """:meth:`post`, saying also whether the row is a replay: True when an earlier
        post with the same ``idempotency_key`` wrote it and this call wrote nothing, so
        a caller does what follows a post (grounding, code pin snapshots) only once."""

    @abstractmethod
    async def message(self, sequence: Sequence) -> LogMessage | None:
        """The row with this sequence, if there is one."""

    @abstractmethod
    async def last_sequence(self) -> Sequence | None:
        """The newest row's sequence, or ``None`` for an empty log."""

    @abstractmethod
    def import_messages(self, messages: Iterable[LogMessage]) -> int:
        """Bulk-append rows exactly as given (sequences, chat ids, parents, authors).

        A blocking maintenance call for migrations, fixtures and benchmarks: nothing is
        validated against the roster or desks; sequences must be non-negative, strictly
        increasing and above the log's last row, else nothing is imported. Returns the
        number of rows added.
        """

    async def wait_for_rows(self, after: Sequence | None, timeout_s: float) -> Sequence | None:
        """Wait until the log holds a row above ``after`` (any row, for ``None``), at
        most ``timeout_s`` seconds; the newest sequence then (``None``: still empty).

        Rows posted by any process count. This default asks the log every
        :data:`WAIT_POLL_S` and at once when this store posts; a store with a feed of
        its own (PostgreSQL's ``LISTEN``) overrides it."""
        deadline = time.monotonic() + max(0.0, min(timeout_s, WAIT_MAX_S))
        self._waiting()
        woken = asyncio.Event()
        wake = _waker(woken)
        self._wakers.append(wake)
        try:
            while True:
                newest = await self.last_sequence()
                if newest is not None and (after is None or newest > after):
                    return newest
                left = deadline - time.monotonic()
                if left <= 0:
                    return newest
                woken.clear()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(woken.wait(), min(left, self._wait_poll_s))
        finally:
            self._wakers.remove(wake)

    _wait_poll_s = WAIT_POLL_S
    """How often :meth:`wait_for_rows` asks the log while nothing woke it."""

    def _waiting(self) -> None:
        """Called as a wait begins (a store with a feed starts listening here)."""
        return None

    def _wake_waiters(self) -> None:
        """Tell this store's waiting :meth:`wait_for_rows` calls a row may have landed."""
        for wake in list(self._wakers):
            wake()

    # --- roster ---------------------------------------------------------------------------

    @abstractmethod
    async def record_code_pins(self, snapshots: Iterable[CodePinSnapshot]) -> None:
        """Remember what each code node a row pins was at the time (replacing an older
        snapshot of the same row and node)."""

    @abstractmethod
    async def code_pins(self, sequences: Iterable[Sequence]) -> list[CodePinSnapshot]:
        """The snapshots recorded for the pinning rows ``sequences``, by sequence, node."""

    @abstractmethod
    async def roster(self) -> Roster:
        """The current roster snapshot (agents in the order they were added)."""

    @abstractmethod
    async def add_agent(self, agent_id: str, name: str | None = None) -> RosterMember: ...

    @abstractmethod
    async def retire_agent(self, agent_id: str) -> None:
        """Retire a known agent: it stays on the roster (old rows keep its label) but can
        no longer post. Retiring twice is a no-op."""

    @abstractmethod
    async def add_person(self, person_id: str, label: str) -> RosterPerson: ...

    async def snapshots(self) -> tuple[Roster, DeskSet]:
        """The roster and the desks together, as one read saw them (so they agree)."""
        return await self.roster(), await self.desks()

    # --- desks ----------------------------------------------------------------------------

    @abstractmethod
    async def desks(self) -> DeskSet:
        """The current desks; General is always declared."""

    @abstractmethod
    async def create_desk(
        self, desk_id: str, name: str | None = None, description: str | None = None
    ) -> Desk: ...

    @abstractmethod
    async def add_desk_member(self, desk: str, agent_id: str) -> None:
        """Add an active roster agent to a desk (appended to the desk's order, if set)."""

    @abstractmethod
    async def retire_desk_member(self, desk: str, agent_id: str) -> None:
        """Take an agent off a desk (and out of its order, if set)."""

    @abstractmethod
    async def set_desk_order(self, desk: str, ordered: Iterable[str]) -> None:
        """Replace a desk's member order; it must list every member exactly once."""

    # --- focus working sets -----------------------------------------------------------------

    def working_sets(self) -> WorkingSets:
        """Where this store keeps focus sessions' working sets (see
        :mod:`coderooms.store.worksets`)."""
        raise NoWorkingSets(type(self).__name__)

    # --- lifetime -------------------------------------------------------------------------

    @abstractmethod
    def close(self) -> None: ...

    def stop_waiting(self) -> None:  # noqa: B027 (a store that never waits has nothing to do)
        """Make every write now waiting for another writer's lock give up with
        :class:`~coderooms.store.errors.StoreStopping`, writing nothing, instead of
        waiting out its timeout: for a server that has been told to stop. A store whose
        writes never wait (one in memory) has nothing to stop. Safe from any thread."""

    def __enter__(self) -> Store:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


def _waker(event: asyncio.Event) -> Callable[[], None]:
    """A callable any thread may call to set ``event`` on the loop that awaits it."""
    loop = asyncio.get_running_loop()

    def wake() -> None:
        with contextlib.suppress(RuntimeError):  # the loop has closed: nobody waits
            loop.call_soon_threadsafe(event.set)

    return wake
