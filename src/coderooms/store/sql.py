"""What the SQLite and PostgreSQL stores share: one set of room rules over SQL.

Both stores keep the same tables (``messages``, ``authors``, ``agents``, ``people``,
``desks``, ``desk_members``, ``desk_orders``, ``meta``) and speak to them with the same
statements, written with ``?`` placeholders; the PostgreSQL store rewrites those for its
driver. So validation, typed errors, the row codec, the roster and desk rules and the
conversation views are written once, here, in :class:`SqlStore`. A backend supplies
its connections and transactions (:meth:`SqlStore._writing`, :meth:`SqlStore._query`,
:meth:`SqlStore._snapshots`), how a new row gets its sequence
(:meth:`SqlStore._append_row`), bulk import, and its own ordered migrations.
"""

from __future__ import annotations

import json
import re
import unicodedata
from abc import abstractmethod
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, TypeVar

from coderooms.errors import (
    CoderoomsError,
    InvalidBound,
    WrongArgumentType,
    echoed,
    require_int,
    require_str,
)
from coderooms.rooms.chat import is_general_chat
from coderooms.rooms.desks import GENERAL_DESK, Desk, DeskMember, DeskOrder, DeskSet
from coderooms.rooms.pins import named_pin_targets
from coderooms.rooms.records import (
    PAGE_SIZE,
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
from coderooms.rooms.session import SessionLog, is_blank
from coderooms.store.base import (
    MESSAGE_BYTES_CAP,
    READ_LIMIT_CAP,
    AuthorRef,
    CodePinSnapshot,
    Store,
    parse_author_ref,
)
from coderooms.store.errors import (
    AgentExists,
    BlankIdentifier,
    BlankMessage,
    CorruptDatabase,
    DeskConflict,
    DeskMembership,
    GeneralDeskMembership,
    IdempotencyKeyReused,
    InvalidAuthor,
    InvalidIdempotencyKey,
    InvalidIdentifier,
    InvalidPinTarget,
    InvalidText,
    MessageTooLarge,
    MultilineName,
    NameTooLong,
    NulInText,
    ParentInOtherDesk,
    PersonExists,
    PinTargetNotInDesk,
    RetiredAuthor,
    UnknownAuthor,
    UnknownParent,
)
from coderooms.store.worksets import KnownWorkingSets, SqlWorkingSets, WorkingSets

__all__ = [
    "IDEMPOTENCY_KEY_MAX_CHARS",
    "author_scoped_key",
    "require_identifier",
    "MAX_SEQUENCE",
    "VIEW_PAGE_ROWS",
    "VIEW_PAGE_ROWS_MAX",
    "Migration",
    "SqlStore",
]

_T = TypeVar("_T")

Db = Any

CODE_PIN_TABLE = """CREATE TABLE code_pins (
    sequence BIGINT NOT NULL,
    node TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    signature TEXT NOT NULL,
    PRIMARY KEY (sequence, node)
)"""
"""What a pinned code node was when a row pinned it (its content hash and signature), so
the pinboard can say whether it changed since. The pin itself lives in the row; this
only remembers the code it pointed at. (SQLite reads BIGINT as INTEGER.)"""
CODE_PIN_QUERY_BATCH = 500
"""Sequences one code-pin lookup asks for at a time (SQLite bounds a statement's
parameters)."""
"""A connection inside a transaction: ``execute(sql, params)`` returns a cursor that
iterates rows and has ``fetchone()`` and ``rowcount`` (sqlite3's, or the PostgreSQL
store's adapter)."""

MAX_SEQUENCE = 2**63 - 1
"""SQLite integers are signed 64-bit: the largest sequence the file can hold."""

VIEW_PAGE_ROWS = 64
"""The most rows a conversation view returns on a fresh read. A window-30 channel read
needs about 40 desk rows, so it decodes 64 rows instead of the walk's 512; a deeper read
simply takes more pages (the port allows short pages, and the walk's scan cap counts
rows, not reads, so the projection is the same)."""

VIEW_PAGE_ROWS_MAX = PAGE_SIZE
"""The most rows a conversation view returns on a read that continues where its previous
read stopped. Each such read may return twice as many rows as the one before, so a long
scan (2,048 rows for a search) takes 7 queries instead of 32 while a short projection
still decodes only :data:`VIEW_PAGE_ROWS`."""


AUTHOR_CACHE_CAP = 4096
"""Distinct authors a store keeps decoded; rows by the same author share one record."""

IDEMPOTENCY_KEY_MAX_CHARS = 200
"""The longest idempotency key a post accepts."""


@dataclass(frozen=True, slots=True)
class Migration:
    """One schema step; ``version`` orders them and is recorded once it has run."""

    version: int
    name: str
    statements: tuple[str, ...]


_COLUMNS = "sequence, chat_id, parent, author, content, posted_at"
_COLUMNS_OF_M = ", ".join("m." + column for column in _COLUMNS.split(", "))

POSTED_AT_FORMAT = "%Y-%m-%dT%H:%M:%SZ"
"""How a row's post time is written: UTC to the second, ISO 8601."""

Clock = Callable[[], datetime]
"""Where a store gets the time a row is posted (an aware datetime; tests pass a fixed one)."""


def utc_now() -> datetime:
    """The host's current time, in UTC: the default :data:`Clock`."""
    return datetime.now(UTC)


def posted_at_text(moment: datetime) -> str:
    """``moment`` as a stored post time (converted to UTC; a naive one is taken as UTC)."""
    if moment.tzinfo is not None:
        moment = moment.astimezone(UTC)
    return moment.strftime(POSTED_AT_FORMAT)


def chat_key(chat_id: str | None) -> str:
    """The indexed desk key of a stored chat id: ``''`` for every General alias."""
    return "" if is_general_chat(chat_id) else str(chat_id)


def conversation_keys(desk_id: str, desk_name: str) -> tuple[str, ...]:
    """The chat keys whose rows are in the desk {desk_id, desk_name} (see ``in_desk``)."""
    return tuple(sorted({chat_key(desk_id), chat_key(desk_name)}))


def _author_columns(author: SessionAuthor) -> tuple[str, str | None, str]:
    if isinstance(author, Agent):
        return "agent", author.id, author.label
    if isinstance(author, Person):
        return "person", author.id, author.label
    if isinstance(author, System):
        return "system", author.kind, author.label
    return "operator", None, "operator"


_AUTHOR_TYPES: dict[str, type[Agent] | type[Person] | type[System]] = {
    "agent": Agent,
    "person": Person,
    "system": System,
}


def _author(author_type: str, author_id: str | None, label: str) -> SessionAuthor:
    """The record an ``authors`` row describes."""
    if author_type == "operator":
        return Operator()
    record = _AUTHOR_TYPES.get(author_type)
    if record is None or author_id is None:
        key = (author_type, author_id, label)
        raise CorruptDatabase("the log", f"a row has an unreadable author {key!r}")
    return record(author_id, label)


# A page decodes up to thousands of rows; a frozen dataclass's ``__init__`` sets each
# slot through ``object.__setattr__``, about twice the cost of the slots' own setters.
# Rows read back from the store were validated when posted, so ``_page`` fills the slots
# directly. ``LogMessage`` has no ``__post_init__``; a test pins that and checks that
# both ways build equal messages.
_blank_message = object.__new__
_set_sequence = LogMessage.sequence.__set__  # type: ignore[attr-defined]
_set_author = LogMessage.author.__set__  # type: ignore[attr-defined]
_set_content = LogMessage.content.__set__  # type: ignore[attr-defined]
_set_chat = LogMessage.chat_id.__set__  # type: ignore[attr-defined]
_set_parent = LogMessage.parent.__set__  # type: ignore[attr-defined]
_set_posted_at = LogMessage.posted_at.__set__  # type: ignore[attr-defined]

AuthorOf = Callable[[int], SessionAuthor]
"""A store's decoder from an ``authors`` reference to its record."""


def _row_message(row: tuple[Any, ...], author_of: AuthorOf) -> LogMessage:
    sequence, chat_id, parent, author, content, posted_at = row
    return LogMessage(sequence, author_of(author), content, chat_id, parent, posted_at)


def _page(
    rows: list[tuple[Any, ...]], limit: int, authors: dict[int, SessionAuthor], author_of: AuthorOf
) -> SessionPage:
    """A page from rows already newest-first; a full page points below its oldest row.

    The same as mapping :func:`_row_message` over ``rows``, with the store's decoded
    authors looked up in place: a page holds hundreds of rows by a handful of authors."""
    cached = authors.get
    built: list[LogMessage] = []
    keep = built.append
    for sequence, chat_id, parent, author, content, posted_at in rows:
        message = _blank_message(LogMessage)
        _set_sequence(message, sequence)
        _set_author(message, cached(author) or author_of(author))
        _set_content(message, content)
        _set_chat(message, chat_id)
        _set_parent(message, parent)
        _set_posted_at(message, posted_at)
        keep(message)
    messages = tuple(built)
    next_before = messages[-1].sequence if messages and len(messages) >= limit else None
    return SessionPage(messages, next_before)


IDENTIFIER_MAX_CHARS = 64
"""The longest agent, person or desk id a store accepts."""
NAME_MAX_CHARS = 120  # an agent's name, a person's label, a desk's name
DESCRIPTION_MAX_CHARS = 1_000  # a desk's description
IDENTIFIER_SHOWN_CHARS = 40
"""How much of a refused id its error message repeats."""
_IDENTIFIER = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_\-]*")


def require_identifier(what: str, value: str) -> None:
    """Refuse an id that cannot be mentioned (``@id``) or written as an author
    (``agent:id``): spaces, slashes, colons, dots (a dot ends a mention), line breaks, or
    more than
    :data:`IDENTIFIER_MAX_CHARS` characters. Ids already stored are left as they are."""
    if len(value) <= IDENTIFIER_MAX_CHARS and _IDENTIFIER.fullmatch(value):
        return
    _require_text(what, value)
    shown = value if len(value) <= IDENTIFIER_SHOWN_CHARS else value[:IDENTIFIER_SHOWN_CHARS] + "…"
    raise InvalidIdentifier(what, repr(shown), IDENTIFIER_MAX_CHARS)


def _check_pin_targets(db: Db, content: str, desk: Desk) -> None:
    """Refuse a post whose ``!pin ^N`` (or ``!unpin ^N``) names a message its desk does
    not hold, or a ``^`` word that is no message number: either would pin nothing, or
    the post itself, without a word."""
    if "^" not in content:
        return
    keys = conversation_keys(desk.id, desk.name)
    for word, target in named_pin_targets(content):
        if target is None:
            raise InvalidPinTarget(echoed(word))
        if _chat_key_of(db, target) not in keys:  # none: no such message
            raise PinTargetNotInDesk(target, desk.id)


def _chat_key_of(db: Db, sequence: int) -> str | None:
    """The conversation key of message ``sequence``, None when there is none."""
    if not 0 <= sequence <= MAX_SEQUENCE:
        return None
    row = db.execute("SELECT chat_key FROM messages WHERE sequence = ?", (sequence,)).fetchone()
    return None if row is None else str(row[0])


def _require_one_line(what: str, value: str | None, limit: int = NAME_MAX_CHARS) -> None:
    """Refuse a name, label or description that could break the lines it is shown in: a
    line break (also U+2028/U+2029) or another control character (Unicode class Cc), or
    more than ``limit`` characters (every message header and briefing repeats it)."""
    _require_text(what, value)
    if value is None:
        return
    if len(value) > limit:
        raise NameTooLong(what, len(value), limit)
    if any(unicodedata.category(c) in _BREAKING or c in BIDI_CONTROLS for c in value):
        raise MultilineName(what)


_BREAKING = frozenset({"Cc", "Zl", "Zp"})
BIDI_CONTROLS = frozenset(
    "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
)
"""Marks and overrides that reorder the text around them: in a name they can make
"\u202eNIMDA tsurt" read as "trust ADMIN", and reverse what a page shows after it."""


def _require_text(what: str, value: str | None, *, optional: bool = True) -> None:
    """Refuse text SQLite cannot store as UTF-8 (lone surrogates: undecodable bytes a
    command line carried in, or a JSON ``\\ud800`` escape) with one typed error naming
    the field, as is a value that is not text at all (None too, unless ``optional``).
    Every write checks its text with this before touching the database."""
    require_str(what, value, optional=optional)
    if value is None:
        return
    if "\0" in value:
        raise NulInText(what)
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidText(what) from None


def author_scoped_key(author: SessionAuthor, key: str) -> str:
    """How an idempotency key is kept: in its author's own namespace, the same whichever
    surface posted (an agent's as ``ID:KEY``, which ids cannot spell otherwise; anyone
    else's behind ``@``, which no id holds), so one author's key never answers for
    another's post, nor reaches it."""
    if isinstance(author, Agent):
        return f"{author.id}:{key}"
    if isinstance(author, Person):
        return f"@person:{author.id}:{key}"
    if isinstance(author, System):
        return f"@system:{author.kind}:{key}"
    return f"@operator:{key}"


def _require_idempotency_key(key: str) -> None:
    """Refuse a key that is blank, not text, or longer than the cap."""
    _require_text("the idempotency key", key)
    if not key.strip() or len(key) > IDEMPOTENCY_KEY_MAX_CHARS:
        raise InvalidIdempotencyKey(IDEMPOTENCY_KEY_MAX_CHARS)


def _same_post(
    done: LogMessage,
    author: SessionAuthor,
    content: str,
    desk: str,
    desks: DeskSet,
    parent: Sequence | None,
) -> bool:
    """Whether a retried post asks for the row ``done`` that its key already wrote."""
    try:
        target = desks.resolve(desk)
    except CoderoomsError:
        return False
    same_author = _author_columns(done.author)[:2] == _author_columns(author)[:2]
    return (
        same_author
        and done.content == content
        and done.parent == parent
        and chat_key(done.chat_id) in conversation_keys(target.id, target.name)
    )


def _check_limit(limit: int) -> int:
    require_int("the limit", limit)
    if limit < 0:
        raise InvalidBound("limit", limit)
    return min(limit, READ_LIMIT_CAP)


def _ceiling(before: Sequence | None) -> int:
    """The largest sequence a read below ``before`` may return (-1: none)."""
    if before is None:
        return MAX_SEQUENCE
    return max(-1, min(before - 1, MAX_SEQUENCE))


class SqlStore(Store):
    """The room rules over the shared tables; a backend fills in the transport.

    A subclass sets ``location`` (what error messages name), ``read_only``, ``_clock``
    and, before any read, ``_snapshot``, ``_authors`` and ``_author_refs``."""

    location: str
    read_only: bool
    _clock: Callable[[], datetime]
    _snapshot: tuple[int | None, Roster, DeskSet]
    _authors: dict[int, SessionAuthor]
    _known_working_sets: KnownWorkingSets
    _author_refs: dict[tuple[str, str | None, str], int]

    def _init_caches(self) -> None:
        # generation, roster, desks: one tuple, replaced whole, so a read on one thread
        # never sees the roster of one generation beside the desks of another
        self._snapshot = (None, Roster(()), DeskSet((GENERAL_DESK,)))
        # ``authors`` rows never change once written, so a decoded one stays right.
        self._authors = {}
        # and the reverse, for posting: only references whose row is committed
        self._author_refs = {}
        self._wakers = []
        # the working sets this store last read or wrote, known by their stamps
        self._known_working_sets = KnownWorkingSets()

    # --- what a backend provides ----------------------------------------------------------

    @abstractmethod
    async def _writing(self, work: Callable[[Db], _T], *, idempotent: bool = False) -> _T:
        """Run ``work`` in one write transaction, serialized with every other writer.
        ``idempotent``: running it twice has the effect of once (a keyed post), so a
        backend may retry it after a failure that leaves its outcome unknown."""

    @abstractmethod
    def _query(self, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        """All rows of one read statement."""

    @abstractmethod
    def _snapshots(self, db: Db | None = None) -> tuple[Roster, DeskSet]:
        """Roster and desks as of ``db``'s transaction, else as of one read transaction."""

    @abstractmethod
    def _append_row(self, db: Db, row: tuple[Any, ...]) -> Sequence:
        """Insert one new row (chat_id, chat_key, parent, author, content, posted_at)
        and return the sequence the database gave it."""

    def _posted(self, message: LogMessage) -> None:
        """Called once a post committed: this store's waiters look again at once."""
        self._wake_waiters()

    # --- plumbing -----------------------------------------------------------------------------

    def _author_of(self, ref: int) -> SessionAuthor:
        """The author an ``authors`` reference names, decoded once per store."""
        found = self._authors.get(ref)
        if found is not None:
            return found
        rows = self._query(
            "SELECT author_type, author_id, label FROM authors WHERE ref = ?", (ref,)
        )
        row = rows[0] if rows else None
        if row is None:
            raise CorruptDatabase(self.location, f"a row names author {ref!r}, which is not stored")
        author = _author(*row)
        if len(self._authors) >= AUTHOR_CACHE_CAP:
            self._authors.clear()
        self._authors[ref] = author
        return author

    def _page(self, rows: list[tuple[Any, ...]], limit: int) -> SessionPage:
        return _page(rows, limit, self._authors, self._author_of)

    def _author_ref(self, db: Db, author: SessionAuthor) -> int:
        """The ``authors`` reference of ``author``, added if new (inside a write). A
        reference this store saw committed is reused without asking SQLite; one added
        now is remembered by :meth:`_committed_ref` once its transaction commits."""
        columns = _author_columns(author)
        known = self._author_refs.get(columns)
        if known is not None:
            return known
        author_type, author_id, label = columns
        db.execute(
            "INSERT INTO authors (author_type, author_id, label) VALUES (?, ?, ?) "
            "ON CONFLICT DO NOTHING",
            (author_type, author_id, label),
        )
        ((ref,),) = db.execute(
            "SELECT ref FROM authors WHERE author_type = ? AND coalesce(author_id, '') = ? "
            "AND label = ?",
            (author_type, author_id or "", label),
        )
        return int(ref)

    def _committed_ref(self, author: SessionAuthor, ref: int) -> None:
        """Remember ``author``'s reference; call only after the write that used it
        committed (an author row, once committed, never changes or goes away)."""
        if len(self._author_refs) >= AUTHOR_CACHE_CAP:
            self._author_refs.clear()
        self._author_refs[_author_columns(author)] = ref

    def _snapshots_in(self, db: Db) -> tuple[Roster, DeskSet]:
        (generation,) = db.execute("SELECT value FROM meta WHERE key = 'generation'").fetchone()
        known, roster, desks = self._snapshot
        if generation != known:
            roster, desks = self._load_roster(db), self._load_desks(db)
            self._snapshot = (generation, roster, desks)
        return roster, desks

    @staticmethod
    def _changed(db: Db) -> None:
        db.execute("UPDATE meta SET value = value + 1 WHERE key = 'generation'")

    @staticmethod
    def _load_roster(db: Db) -> Roster:
        agents = db.execute("SELECT id, name, retired FROM agents ORDER BY position")
        members: list[RosterMember] = []
        retired: list[str] = []
        for agent_id, name, is_retired in agents:
            members.append(RosterMember(agent_id, name))
            if is_retired:
                retired.append(agent_id)
        people = db.execute("SELECT id, label FROM people ORDER BY position")
        return Roster(
            tuple(members), tuple(RosterPerson(i, lbl) for i, lbl in people), tuple(retired)
        )

    def _load_desks(self, db: Db) -> DeskSet:
        added = tuple(
            Desk(desk_id, name, description, (), mode)
            for desk_id, name, description, mode in db.execute(
                "SELECT id, name, description, responder_mode FROM desks ORDER BY position"
            )
        )
        additions: list[DeskMember] = []
        retired: list[DeskMember] = []
        for desk_id, agent_id, is_retired in db.execute(
            "SELECT desk_id, agent_id, retired FROM desk_members ORDER BY position"
        ):
            additions.append(DeskMember(desk_id, agent_id))
            if is_retired:
                retired.append(DeskMember(desk_id, agent_id))
        orders = tuple(
            DeskOrder(desk_id, self._stored_order(desk_id, ordered))
            for desk_id, ordered in db.execute(
                "SELECT o.desk_id, o.ordered FROM desk_orders o "
                "JOIN desks d ON d.id = o.desk_id ORDER BY d.position"
            )
        )
        return DeskSet((GENERAL_DESK,), added, tuple(additions), orders, tuple(retired))

    def _stored_order(self, desk_id: str, ordered: object) -> tuple[str, ...]:
        """A desk's member order as stored: a JSON list of agent ids, else the file is
        damaged (:class:`CorruptDatabase`), never a traceback."""
        try:
            members = json.loads(ordered) if isinstance(ordered, str | bytes) else None
        except ValueError:
            members = None
        if not isinstance(members, list) or not all(isinstance(m, str) for m in members):
            reason = f"the member order of desk {desk_id!r} is not a JSON list of agent ids"
            raise CorruptDatabase(self.location, reason)
        return tuple(members)

    # --- the log ----------------------------------------------------------------------------

    async def read_before(self, before: Sequence | None, limit: int) -> SessionPage:
        return self.read_before_now(before, limit)

    def read_before_now(self, before: Sequence | None, limit: int) -> SessionPage:
        """The blocking body of :meth:`read_before`."""
        require_int("the cursor (before)", before, optional=True)
        limit = _check_limit(limit)
        if limit == 0:
            return SessionPage(())
        rows = self._query(
            f"SELECT {_COLUMNS} FROM messages WHERE sequence <= ? ORDER BY sequence DESC LIMIT ?",
            (_ceiling(before), limit),
        )
        return self._page(rows, limit)

    def conversation_log(self, conversation: Conversation) -> SessionLog:
        return _ConversationView(self, conversation)

    async def message(self, sequence: Sequence) -> LogMessage | None:
        require_int("the message number", sequence)
        if not 0 <= sequence <= MAX_SEQUENCE:
            return None
        rows = self._query(f"SELECT {_COLUMNS} FROM messages WHERE sequence = ?", (sequence,))
        return _row_message(rows[0], self._author_of) if rows else None

    async def last_sequence(self) -> Sequence | None:
        ((newest,),) = self._query("SELECT max(sequence) FROM messages")
        return int(newest) if newest is not None else None

    async def post_or_replay(
        self,
        author: AuthorRef,
        content: str,
        *,
        desk: str = GENERAL_DESK.id,
        parent: Sequence | None = None,
        idempotency_key: str | None = None,
    ) -> tuple[LogMessage, bool]:
        require_str("the message content", content)
        if not isinstance(author, str | Operator | Person | Agent | System):
            raise WrongArgumentType(
                "the author",
                "text (agent:ID, person:ID …) or an author record",
                type(author).__name__,
            )
        require_int("the parent", parent, optional=True)
        require_str("the idempotency key", idempotency_key, optional=True)
        if is_blank(content):
            raise BlankMessage()
        if "\0" in content:
            raise NulInText("the message content")
        try:
            size = len(content.encode("utf-8"))
        except UnicodeEncodeError:
            raise InvalidText("the message content") from None
        if size > MESSAGE_BYTES_CAP:
            raise MessageTooLarge(size, MESSAGE_BYTES_CAP)
        if isinstance(author, str):
            _require_text("the author", author)
        try:
            wanted = parse_author_ref(author)
        except ValueError:
            raise InvalidAuthor(author) from None
        for value in _author_columns(wanted)[1:]:
            _require_text("the author", value)
        if isinstance(wanted, System) and len(wanted.kind) > IDENTIFIER_MAX_CHARS:
            raise NameTooLong("a system author's kind", len(wanted.kind), IDENTIFIER_MAX_CHARS)
        _require_text("the desk", desk, optional=False)
        stored_key = None
        if idempotency_key is not None:
            _require_idempotency_key(idempotency_key)
            stored_key = author_scoped_key(wanted, idempotency_key)

        def append(db: Db) -> tuple[LogMessage, int | None]:
            roster, desks = self._snapshots(db)
            if idempotency_key is not None:
                # first: a retry of a post that committed returns that row, even if
                # the roster changed since
                done = self._keyed_post(db, stored_key)
                if done is not None:
                    if not _same_post(done, wanted, content, desk, desks, parent):
                        raise IdempotencyKeyReused(idempotency_key, done.sequence)
                    return done, None
            stored = self._roster_author(wanted, roster)
            target = desks.resolve(desk)
            chat_id = None if target.is_general else target.id
            if parent is not None:
                key = _chat_key_of(db, parent)
                if key is None:
                    raise UnknownParent(parent)
                if key not in conversation_keys(target.id, target.name):
                    raise ParentInOtherDesk(parent, target.id)
            _check_pin_targets(db, content, target)
            ref = self._author_ref(db, stored)
            posted_at = posted_at_text(self._clock())
            sequence = self._append_row(
                db, (chat_id, chat_key(chat_id), parent, ref, content, posted_at)
            )
            if stored_key is not None:
                db.execute(
                    "INSERT INTO post_keys (key, sequence) VALUES (?, ?)",
                    (stored_key, sequence),
                )
            return LogMessage(sequence, stored, content, chat_id, parent, posted_at), ref

        message, ref = await self._writing(append, idempotent=idempotency_key is not None)
        if ref is None:  # the row an earlier post with this key wrote
            return message, True
        self._committed_ref(message.author, ref)
        self._posted(message)
        return message, False

    def _keyed_post(self, db: Db, key: str) -> LogMessage | None:
        """The row a post with idempotency key ``key`` wrote, if one did."""
        row = db.execute(
            f"SELECT {_COLUMNS_OF_M} FROM post_keys AS k JOIN messages AS m "
            "ON m.sequence = k.sequence WHERE k.key = ?",
            (key,),
        ).fetchone()
        return _row_message(tuple(row), self._author_of) if row is not None else None

    @staticmethod
    def _roster_author(author: SessionAuthor, roster: Roster) -> SessionAuthor:
        if isinstance(author, Agent):
            member = roster.member(author.id)
            if member is None:
                raise UnknownAuthor(f"agent {author.id!r}")
            if roster.is_retired(author.id):
                raise RetiredAuthor(author.id)
            return Agent(member.id, member.label)
        if isinstance(author, Person):
            person = roster.person(author.id)
            if person is None:
                raise UnknownAuthor(f"person {author.id!r}")
            return Person(person.id, person.label)
        if isinstance(author, System) and not author.kind.strip():
            raise InvalidAuthor(f"system:{author.kind}")
        return author

    # --- roster -------------------------------------------------------------------------------

    async def roster(self) -> Roster:
        return self._snapshots()[0]

    async def snapshots(self) -> tuple[Roster, DeskSet]:
        return self._snapshots()

    # --- code pins and working sets ------------------------------------------------------

    def working_sets(self) -> WorkingSets:
        return SqlWorkingSets(self)

    async def record_code_pins(self, snapshots: Iterable[CodePinSnapshot]) -> None:
        rows = [(x.sequence, x.node, x.content_hash, x.signature) for x in snapshots]
        if not rows:
            return

        def record(db: Db) -> None:
            for row in rows:
                db.execute(
                    "INSERT INTO code_pins (sequence, node, content_hash, signature) "
                    "VALUES (?, ?, ?, ?) ON CONFLICT (sequence, node) DO UPDATE SET "
                    "content_hash = excluded.content_hash, signature = excluded.signature",
                    row,
                )

        await self._writing(record)

    async def code_pins(self, sequences: Iterable[Sequence]) -> list[CodePinSnapshot]:
        wanted = sorted(set(sequences))
        found: list[CodePinSnapshot] = []
        for start in range(0, len(wanted), CODE_PIN_QUERY_BATCH):
            batch = wanted[start : start + CODE_PIN_QUERY_BATCH]
            marks = ", ".join("?" * len(batch))
            found.extend(
                CodePinSnapshot(int(row[0]), *row[1:])
                for row in self._query(
                    "SELECT sequence, node, content_hash, signature FROM code_pins "
                    f"WHERE sequence IN ({marks}) ORDER BY sequence, node",
                    tuple(batch),
                )
            )
        return found

    async def add_agent(self, agent_id: str, name: str | None = None) -> RosterMember:
        require_str("the agent id", agent_id)
        require_str("the agent name", name, optional=True)
        if not agent_id.strip():
            raise BlankIdentifier("an agent id")
        require_identifier("the agent id", agent_id)
        _require_one_line("the agent name", name)
        member = RosterMember(agent_id, name if name is not None and name.strip() else None)

        def add(db: Db) -> None:
            roster, _ = self._snapshots(db)
            if roster.member(agent_id) is not None:
                raise AgentExists(agent_id)
            Roster((*roster.members, member), roster.people, roster.retired).validate()
            db.execute("INSERT INTO agents (id, name) VALUES (?, ?)", (member.id, member.name))
            self._changed(db)

        await self._writing(add)
        return member

    async def retire_agent(self, agent_id: str) -> None:
        _require_text("the agent id", agent_id, optional=False)

        def retire(db: Db) -> None:
            roster, _ = self._snapshots(db)
            if roster.member(agent_id) is None:
                raise UnknownAuthor(f"agent {agent_id!r}")
            db.execute("UPDATE agents SET retired = 1 WHERE id = ?", (agent_id,))
            self._changed(db)

        await self._writing(retire)

    async def add_person(self, person_id: str, label: str) -> RosterPerson:
        require_str("the person id", person_id)
        require_str("the person's label", label)
        if not person_id.strip():
            raise BlankIdentifier("a person id")
        if not label.strip():
            raise BlankIdentifier("a person's label")
        require_identifier("the person id", person_id)
        _require_one_line("the person's label", label)
        person = RosterPerson(person_id, label)

        def add(db: Db) -> None:
            roster, _ = self._snapshots(db)
            if roster.person(person_id) is not None:
                raise PersonExists(person_id)
            Roster(roster.members, (*roster.people, person), roster.retired).validate()
            db.execute("INSERT INTO people (id, label) VALUES (?, ?)", (person.id, person.label))
            self._changed(db)

        await self._writing(add)
        return person

    # --- desks --------------------------------------------------------------------------------

    async def desks(self) -> DeskSet:
        return self._snapshots()[1]

    async def create_desk(
        self, desk_id: str, name: str | None = None, description: str | None = None
    ) -> Desk:
        require_str("the desk id", desk_id)
        require_str("the desk name", name, optional=True)
        require_str("the desk description", description, optional=True)
        if not desk_id.strip():
            raise BlankIdentifier("a desk id")
        if name is not None and not name.strip():
            raise BlankIdentifier("a desk name")
        require_identifier("the desk id", desk_id)
        _require_one_line("the desk name", name)
        _require_one_line("the desk description", description, DESCRIPTION_MAX_CHARS)
        desk = Desk(desk_id, name if name is not None else desk_id, description)

        def create(db: Db) -> None:
            _, desks = self._snapshots(db)
            grown = DeskSet(
                desks.declared, (*desks.added, desk), desks.additions, desks.orders, desks.retired
            )
            grown.validate()
            for other in desks.desks():
                for value in {desk.id, desk.name}:
                    if value in (other.id, other.name):
                        raise DeskConflict(value, other.id)
            db.execute(
                "INSERT INTO desks (id, name, description, responder_mode) VALUES (?, ?, ?, ?)",
                (desk.id, desk.name, desk.description, desk.responder_mode),
            )
            self._changed(db)

        await self._writing(create)
        return desk

    def _member_desk(self, desks: DeskSet, ref: str) -> Desk:
        desk = desks.resolve(ref)
        if desk.is_general:
            raise GeneralDeskMembership()
        return desk

    async def add_desk_member(self, desk: str, agent_id: str) -> None:
        _require_text("the desk", desk, optional=False)
        _require_text("the agent id", agent_id, optional=False)

        def add(db: Db) -> None:
            roster, desks = self._snapshots(db)
            target = self._member_desk(desks, desk)
            self._roster_author(Agent(agent_id, agent_id), roster)
            if agent_id in desks.members(target.id):
                raise DeskMembership(target.id, agent_id, "is already a member of")
            updated = db.execute(
                "UPDATE desk_members SET retired = 0 WHERE desk_id = ? AND agent_id = ?",
                (target.id, agent_id),
            )
            if updated.rowcount == 0:
                db.execute(
                    "INSERT INTO desk_members (desk_id, agent_id) VALUES (?, ?)",
                    (target.id, agent_id),
                )
            order = self._order_of(desks, target.id)
            if order is not None:
                self._store_order(db, target.id, (*order, agent_id))
            self._load_desks(db).validate()
            self._changed(db)

        await self._writing(add)

    async def retire_desk_member(self, desk: str, agent_id: str) -> None:
        _require_text("the desk", desk, optional=False)
        _require_text("the agent id", agent_id, optional=False)

        def retire(db: Db) -> None:
            _, desks = self._snapshots(db)
            target = self._member_desk(desks, desk)
            if agent_id not in desks.members(target.id):
                raise DeskMembership(target.id, agent_id, "is not a member of")
            db.execute(
                "UPDATE desk_members SET retired = 1 WHERE desk_id = ? AND agent_id = ?",
                (target.id, agent_id),
            )
            order = self._order_of(desks, target.id)
            if order is not None:
                self._store_order(db, target.id, tuple(a for a in order if a != agent_id))
            self._load_desks(db).validate()
            self._changed(db)

        await self._writing(retire)

    async def set_desk_order(self, desk: str, ordered: Iterable[str]) -> None:
        _require_text("the desk", desk, optional=False)
        if isinstance(ordered, str) or not isinstance(ordered, Iterable):
            raise WrongArgumentType(
                "the order", "agent ids (a list of str)", type(ordered).__name__
            )
        wanted = tuple(ordered)
        for agent_id in wanted:
            _require_text("an agent id in the order", agent_id, optional=False)

        def store(db: Db) -> None:
            _, desks = self._snapshots(db)
            target = self._member_desk(desks, desk)
            self._store_order(db, target.id, wanted)
            self._load_desks(db).validate()  # as written so far (rolls back on error)
            self._changed(db)

        await self._writing(store)

    @staticmethod
    def _order_of(desks: DeskSet, desk_id: str) -> tuple[str, ...] | None:
        return next((o.ordered for o in desks.orders if o.desk_id == desk_id), None)

    @staticmethod
    def _store_order(db: Db, desk_id: str, ordered: tuple[str, ...]) -> None:
        db.execute(
            "INSERT INTO desk_orders (desk_id, ordered) VALUES (?, ?) "
            "ON CONFLICT (desk_id) DO UPDATE SET ordered = excluded.ordered",
            (desk_id, json.dumps(list(ordered))),
        )


class _ConversationView:
    """The rows one conversation can use, newest first, straight from an index.

    A desk view holds the rows whose chat id is in the desk; a thread view holds the
    thread's root and its direct replies within that desk. Pages follow the
    :class:`~coderooms.rooms.session.SessionLog` contract of the whole log: at most
    :data:`VIEW_PAGE_ROWS` rows on a fresh read, and on a read from the cursor the
    previous page advertised, up to twice the previous page's allowance (at most
    :data:`VIEW_PAGE_ROWS_MAX`). Where the last page ended is all a view remembers, and
    it only ever changes how many rows a page holds, never which rows a walk sees.
    """

    def __init__(self, store: SqlStore, conversation: Conversation) -> None:
        self._store = store
        self._keys = conversation_keys(conversation.desk_id, conversation.desk_name)
        self._root = conversation.thread_root
        self._resume: Sequence | None = None
        """The cursor the last page advertised (None: none)."""
        self._allowance = VIEW_PAGE_ROWS
        """The most rows the last page could hold."""

    async def read_before(self, before: Sequence | None, limit: int) -> SessionPage:
        return self.read_before_now(before, limit)

    def read_before_now(self, before: Sequence | None, limit: int) -> SessionPage:
        continues = before is not None and before == self._resume
        allowance = min(2 * self._allowance, VIEW_PAGE_ROWS_MAX) if continues else VIEW_PAGE_ROWS
        limit = min(_check_limit(limit), allowance)
        if limit == 0:
            return SessionPage(())
        page = self._read(before, limit)
        self._resume, self._allowance = page.next_before, allowance
        return page

    def _read(self, before: Sequence | None, limit: int) -> SessionPage:
        ceiling = _ceiling(before)
        if self._root is None:
            # One index range per chat key. Once ``limit`` rows are in hand, a later key
            # only needs its rows newer than the oldest of them: nothing older can make
            # the page, so it is never fetched (a desk's rows mostly sit under one key).
            rows: list[tuple[Any, ...]] = []
            floor = -1
            for key in self._keys:
                rows.extend(
                    self._store._query(
                        f"SELECT {_COLUMNS} FROM messages WHERE chat_key = ? AND sequence <= ? "
                        "AND sequence > ? ORDER BY sequence DESC LIMIT ?",
                        (key, ceiling, floor, limit),
                    )
                )
                if len(self._keys) > 1:
                    rows.sort(key=_sequence_of, reverse=True)
                    del rows[limit:]
                if len(rows) == limit:
                    floor = _sequence_of(rows[-1])
        elif not 0 <= self._root <= MAX_SEQUENCE:
            rows = []
        else:
            marks = ", ".join("?" * len(self._keys))
            rows = self._newest(
                [
                    (
                        f"SELECT {_COLUMNS} FROM messages WHERE parent = ? AND sequence <= ? "
                        f"AND chat_key IN ({marks}) ORDER BY sequence DESC LIMIT ?",
                        (self._root, ceiling, *self._keys, limit),
                    ),
                    (
                        f"SELECT {_COLUMNS} FROM messages WHERE sequence = ? AND sequence <= ? "
                        f"AND chat_key IN ({marks})",
                        (self._root, ceiling, *self._keys),
                    ),
                ],
                limit,
            )
        return self._store._page(rows, limit)

    def _newest(
        self, queries: list[tuple[str, tuple[Any, ...]]], limit: int
    ) -> list[tuple[Any, ...]]:
        """The newest ``limit`` rows across queries that each answer newest-first."""
        if len(queries) == 1:
            return self._store._query(*queries[0])
        merged: list[tuple[Any, ...]] = []
        for sql, params in queries:
            merged.extend(self._store._query(sql, params))
        merged.sort(key=_sequence_of, reverse=True)
        return merged[:limit]


def _sequence_of(row: tuple[Any, ...]) -> int:
    return int(row[0])
