"""Errors the stores raise, all under :class:`~coderooms.errors.HostError`::

    HostError
    └── StoreError                     a store refused a call or cannot be used
        ├── UnsupportedStoreUrl        open_store was given a URL it cannot open
        ├── CorruptDatabase            the file is not a coderooms SQLite store
        ├── ReadOnlyStore              the store can be opened but not written
        │   └── ReadOnlyDatabase       a PostgreSQL role without the privileges to write
        ├── StoreLocation              the store's path cannot hold a file (a parent is not
        │                              a directory, the path is a directory …)
        ├── EphemeralStore             an in-memory store where the data must outlive the call
        ├── StoreNotFound              a command that only reads, given a path with no store
        ├── SchemaMissing              a PostgreSQL URL selecting a schema that does not exist
        ├── NewerSchema                the file was written by a newer coderooms
        ├── UnknownAuthor              post/read names nobody on the roster
        │   └── InvalidAuthor          an author that is not agent:ID, person:ID, operator …
        ├── AmbiguousReader            read --as person:ID where an agent has that id too
        ├── RetiredAuthor              post by an agent who has been retired
        ├── UnknownParent              a reply to a row that does not exist
        ├── UnknownThread              a thread read from a row not in the desk
        ├── ParentInOtherDesk          a reply filed in another desk than its parent
        ├── PinTargetNotInDesk         a !pin ^N naming no message of the desk posted to
        ├── InvalidPinTarget           a !pin ^WORD whose WORD is no message number
        ├── BlankMessage               content that trims to nothing
        ├── MessageTooLarge            content above MESSAGE_BYTES_CAP
        ├── InvalidText                text that is not valid UTF-8 (lone surrogates, bad bytes)
        ├── NulInText                  text holding a NUL character (U+0000)
        ├── MultilineName              a name, label or description holding a line break or
        │                              another control character
        ├── NameTooLong                a name or label over NAME_MAX_CHARS (a description
        │                              over DESCRIPTION_MAX_CHARS)
        ├── BlankIdentifier            a blank agent/person/desk id or person label
        ├── AgentExists, PersonExists  a roster id taken twice
        ├── DeskConflict               a desk id or name already in use
        ├── GeneralDeskMembership      General's members are the active roster
        ├── DeskMembership             a member added twice or retired when absent
        ├── ImportOrderError           bulk import rows not above the log's last row
        ├── InvalidIdempotencyKey      a post's idempotency key that is blank or too long
        ├── IdempotencyKeyReused       a key that already wrote a different message
        ├── StoreBusy                  other writers held the database past the timeout
        ├── ValueTooLarge              a value over what PostgreSQL can index
        ├── StoreStopping              a write waiting for the lock when the store was told
        │                              to stop (a server shutting down): nothing written
        ├── StoreUnavailable           the database server cannot be reached (or the
        │                              connection dropped mid-call)
        └── NoWorkingSets              a store kind that keeps no focus working sets

Roster and desk snapshots that would not validate raise the core errors
(``DuplicateOrderMember``, ``ReservedDeskIdentity`` …) unchanged.
"""

from __future__ import annotations

from coderooms.errors import HostError

__all__ = [
    "AgentExists",
    "AmbiguousReader",
    "BlankIdentifier",
    "InvalidIdentifier",
    "BlankMessage",
    "CorruptDatabase",
    "DeskConflict",
    "DeskMembership",
    "EphemeralStore",
    "GeneralDeskMembership",
    "IdempotencyKeyReused",
    "ImportOrderError",
    "InvalidIdempotencyKey",
    "InvalidAuthor",
    "InvalidText",
    "NulInText",
    "MultilineName",
    "PinTargetNotInDesk",
    "InvalidPinTarget",
    "NameTooLong",
    "MessageTooLarge",
    "NewerSchema",
    "ParentInOtherDesk",
    "PersonExists",
    "ReadOnlyStore",
    "ReadOnlyDatabase",
    "RetiredAuthor",
    "StoreBusy",
    "StoreStopping",
    "SchemaMissing",
    "ValueTooLarge",
    "NoWorkingSets",
    "StoreError",
    "StoreLocation",
    "StoreNotFound",
    "StoreUnavailable",
    "UnknownAuthor",
    "UnknownParent",
    "UnknownThread",
    "UnsupportedStoreUrl",
]


UNSUPPORTED_SCHEME = (
    "give a SQLite file as sqlite:///PATH (or a plain path), "
    "or a PostgreSQL database as postgresql://USER@HOST:PORT/DB"
)


class StoreError(HostError):
    """A store refused a call, or its database cannot be used."""


class UnsupportedStoreUrl(StoreError):
    """A URL ``open_store`` cannot open; ``reason`` says why (the default: its scheme)."""

    fields = ("url", "reason")
    template = "cannot open store {url!r}: {reason}"

    def __init__(self, url: str, reason: str = UNSUPPORTED_SCHEME) -> None:
        super().__init__(url, reason)


class CorruptDatabase(StoreError):
    fields = ("path", "reason")
    template = "{path} is not a usable coderooms database ({reason})"


class ReadOnlyStore(StoreError):
    """SQLite refused a write because the file (or its directory) is read-only."""

    fields = ("path",)
    template = (
        "{path} is read-only: coderooms cannot write to it (check the permissions of the "
        "file and of its directory)"
    )


class ReadOnlyDatabase(ReadOnlyStore):
    """PostgreSQL refused a write, or creating the tables: the role lacks a privilege."""

    template = (
        "{path} is read-only for this role: coderooms cannot write to it (a database "
        "administrator can GRANT the role INSERT, UPDATE and DELETE on the room's tables, "
        "and CREATE on its schema for `coderooms init`)"
    )


class StoreLocation(StoreError):
    """The store's path cannot hold a database file; ``reason`` says why."""

    fields = ("path", "reason")
    template = "cannot open the store at {path}: {reason}"


class EphemeralStore(StoreError):
    """An in-memory store where its data must outlive the call (the command line)."""

    fields = ("url",)
    template = (
        "{url!r} is an in-memory store, which is lost when the command exits; "
        "give a file path (sqlite:///PATH)"
    )


class NewerSchema(StoreError):
    fields = ("path", "version", "supported")
    template = (
        "{path} has schema version {version}, newer than this coderooms understands "
        "({supported}); upgrade coderooms to open it"
    )


class UnknownAuthor(StoreError):
    fields = ("author",)
    template = "{author} is not on the roster; add it first (coderooms agent add / person add)"


class InvalidAuthor(UnknownAuthor):
    """An author string that is none of the accepted forms (so it names nobody)."""

    fields = ("author",)
    template = "author {author!r} is not agent:ID, person:ID, operator or system:KIND"


class AmbiguousReader(StoreError):
    """A turn's briefing names its reader by id: a person whose id an agent also has
    would be read as the agent."""

    fields = ("person_id",)
    template = (
        "person {person_id!r} shares its id with an agent, and a read names its reader by "
        "id: read as agent:{person_id}, or add the person under another id"
    )


class RetiredAuthor(StoreError):
    fields = ("agent_id",)
    template = "agent {agent_id!r} is retired and can no longer post"


class UnknownParent(StoreError):
    fields = ("parent",)
    template = "cannot reply to message {parent}: no such message"


class UnknownThread(StoreError):
    fields = ("root", "desk_id")
    template = "desk {desk_id!r} has no message {root} to read a thread from"


class ParentInOtherDesk(StoreError):
    fields = ("parent", "desk_id")
    template = "message {parent} is not in desk {desk_id!r}; a reply must stay in its parent's desk"


class PinTargetNotInDesk(StoreError):
    """A ``!pin ^N`` / ``!unpin ^N`` naming a message the desk posted to does not hold
    (none at all, or one of another desk: the same words either way, so a desk's
    messages are not shown to exist to those outside it)."""

    fields = ("target", "desk_id")
    template = (
        "desk {desk_id!r} has no message {target} to pin or unpin; a pin names a message "
        "of the desk it is posted in"
    )


class InvalidPinTarget(StoreError):
    fields = ("word",)
    template = (
        "{word!r} names no message: write !pin ^N (or !unpin ^N) with N a message's sequence number"
    )


class BlankMessage(StoreError):
    fields = ()

    def __init__(self) -> None:
        super().__init__(
            "refusing to post a blank message (the content is empty or only whitespace)"
        )


class MessageTooLarge(StoreError):
    """Content above the cap. ``size`` is ``None`` when the content was cut off unread
    past the cap (standard input), so only "more than ``cap``" is known."""

    fields = ("size", "cap")
    template = "message is {size} bytes of UTF-8; the cap is {cap} bytes"
    size: int | None
    cap: int

    def __str__(self) -> str:
        if self.size is None:
            return f"message is more than {self.cap} bytes of UTF-8; the cap is {self.cap} bytes"
        return super().__str__()


class NulInText(StoreError):
    """Text holding a NUL character: PostgreSQL cannot store one, so neither store takes
    it (the same answer whichever a room runs on)."""

    fields = ("what",)
    template = "{what} holds a NUL character (U+0000), which a store cannot keep; remove it"


class InvalidText(StoreError):
    """Text that UTF-8 cannot encode: lone surrogates, e.g. undecodable bytes Python
    carried in from a command line, or a JSON ``\\ud800`` escape. ``what`` names the
    field; the text itself is never echoed."""

    fields = ("what",)
    template = "{what} is not valid UTF-8 text; give it as UTF-8"


class MultilineName(StoreError):
    """A name, label or desk description shows inside other lines (a transcript's author,
    a briefing's roster): a line break or control character in it could make up lines
    that seem to come from someone else. ``what`` names the field."""

    fields = ("what",)
    template = "{what} must be one line of printable text (no line breaks or control characters)"


class NameTooLong(StoreError):
    """A name, label or description longer than the lines it is shown in can carry: it is
    repeated in every message header and briefing, past any read's bound."""

    fields = ("what", "length", "limit")
    template = "{what} is {length} characters; at most {limit} are allowed"


class StoreNotFound(StoreError):
    """A command that only reads was pointed at a path where no store exists: making an
    empty one there would hide a mistyped ``--db``."""

    fields = ("path",)
    template = (
        "there is no store at {path}: check --db (or $CODEROOMS_DB), or create it with "
        "`coderooms init`"
    )


class BlankIdentifier(StoreError):
    fields = ("what",)
    template = "{what} cannot be blank"


class InvalidIdentifier(StoreError):
    fields = ("what", "shown", "limit")
    template = (
        "{what} {shown} is not a usable id: use ASCII letters and digits, '_' or '-', "
        "starting with a letter, digit or '_', at most {limit} characters (ids are "
        "mentioned as @id and written as agent:id)"
    )


class AgentExists(StoreError):
    fields = ("agent_id",)
    template = "agent {agent_id!r} is already on the roster"


class PersonExists(StoreError):
    fields = ("person_id",)
    template = "person {person_id!r} is already on the roster"


class DeskConflict(StoreError):
    fields = ("value", "desk_id")
    template = "{value!r} is already the id or name of desk {desk_id!r}"


class GeneralDeskMembership(StoreError):
    fields = ()

    def __init__(self) -> None:
        super().__init__(
            "the General desk has no member list of its own: its members are the active roster"
        )


class DeskMembership(StoreError):
    fields = ("desk_id", "agent_id", "reason")
    template = "agent {agent_id!r} {reason} desk {desk_id!r}"


class ImportOrderError(StoreError):
    fields = ("sequence", "latest")
    template = (
        "cannot import row {sequence}: imported sequences must be non-negative, strictly "
        "increasing and above the log's last row ({latest})"
    )


class StoreBusy(StoreError):
    fields = ("path", "timeout_ms")
    template = "{path} stayed locked by other writers for {timeout_ms} ms; try again"


class SchemaMissing(StoreError):
    """The URL's ``search_path`` names no schema of the database (a typo, a schema not
    created yet, or a mixed-case name PostgreSQL folds to lower case)."""

    fields = ("location",)
    template = (
        "{location} selects a schema that does not exist in the database (the search_path "
        "in its options): create it first (CREATE SCHEMA name; unquoted names are lower "
        "case), or fix the URL"
    )


class ValueTooLarge(StoreError):
    """A value PostgreSQL cannot keep in an index (a key of about 2,700 bytes or more)."""

    fields = ("location", "reason")
    template = "a value is too large for the store at {location} ({reason}); shorten it"


class StoreStopping(StoreError):
    """A write still waiting for another writer's lock when its process began to stop
    (``up`` on Ctrl-C, a store being closed): it gave up, and wrote nothing."""

    fields = ("location",)
    template = (
        "the server is stopping: this write was still waiting for another writer's lock "
        "on {location} and was given up, with nothing written; send it again once the "
        "server is back"
    )


class InvalidIdempotencyKey(StoreError):
    fields = ("limit",)
    template = "an idempotency key must be 1 to {limit} characters of text, not blank"


class IdempotencyKeyReused(StoreError):
    """A post whose key already wrote a message with another author, desk, parent or
    content: the key names that earlier post, so this one is refused, not merged."""

    fields = ("key", "sequence")
    template = (
        "idempotency key {key!r} already wrote message {sequence}, which is a different "
        "post; give each new message a fresh key"
    )


class StoreUnavailable(StoreError):
    """The database server did not answer (down, restarting, unreachable) or dropped
    the connection. Reads have been retried already; a write may or may not have
    happened, which a retry with the same idempotency key settles."""

    fields = ("location", "reason")
    template = "cannot reach the store at {location}: {reason}"


class NoWorkingSets(StoreError):
    fields = ("kind",)
    template = "a {kind} keeps no focus working sets; use a SQLite store for focus sessions"
