"""Errors the stores raise, all under :class:`~coderooms.errors.HostError`::

    HostError
    └── StoreError                     a store refused a call or cannot be used
        ├── UnsupportedStoreUrl        open_store was given a URL it cannot open
        ├── CorruptDatabase            the file is not a coderooms SQLite store
        ├── NewerSchema                the file was written by a newer coderooms
        ├── UnknownAuthor              post/read names nobody on the roster
        ├── RetiredAuthor              post by an agent who has been retired
        ├── UnknownParent              a reply to a row that does not exist
        ├── UnknownThread              a thread read from a row not in the desk
        ├── ParentInOtherDesk          a reply filed in another desk than its parent
        ├── BlankMessage               content that trims to nothing
        ├── MessageTooLarge            content above MESSAGE_BYTES_CAP
        ├── BlankIdentifier            a blank agent/person/desk id or person label
        ├── AgentExists, PersonExists  a roster id taken twice
        ├── DeskConflict               a desk id or name already in use
        ├── GeneralDeskMembership      General's members are the active roster
        ├── DeskMembership             a member added twice or retired when absent
        ├── ImportOrderError           bulk import rows not above the log's last row
        └── StoreBusy                  other writers held the database past the timeout

Roster and desk snapshots that would not validate raise the core errors
(``DuplicateOrderMember``, ``ReservedDeskIdentity`` …) unchanged.
"""

from __future__ import annotations

from coderooms.errors import HostError

__all__ = [
    "AgentExists",
    "BlankIdentifier",
    "BlankMessage",
    "CorruptDatabase",
    "DeskConflict",
    "DeskMembership",
    "GeneralDeskMembership",
    "ImportOrderError",
    "MessageTooLarge",
    "NewerSchema",
    "ParentInOtherDesk",
    "PersonExists",
    "RetiredAuthor",
    "StoreBusy",
    "StoreError",
    "UnknownAuthor",
    "UnknownParent",
    "UnknownThread",
    "UnsupportedStoreUrl",
]


class StoreError(HostError):
    """A store refused a call, or its database cannot be used."""


class UnsupportedStoreUrl(StoreError):
    fields = ("url",)
    template = "cannot open store {url!r}: only SQLite stores (sqlite:///PATH) are supported"


class CorruptDatabase(StoreError):
    fields = ("path", "reason")
    template = "{path} is not a usable coderooms database ({reason})"


class NewerSchema(StoreError):
    fields = ("path", "version", "supported")
    template = (
        "{path} has schema version {version}, newer than this coderooms understands "
        "({supported}); upgrade coderooms to open it"
    )


class UnknownAuthor(StoreError):
    fields = ("author",)
    template = "{author} is not on the roster; add it first (coderooms agent add / person add)"


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


class BlankMessage(StoreError):
    fields = ()

    def __init__(self) -> None:
        super().__init__(
            "refusing to post a blank message (the content is empty or only whitespace)"
        )


class MessageTooLarge(StoreError):
    fields = ("size", "cap")
    template = "message is {size} bytes of UTF-8; the cap is {cap} bytes"


class BlankIdentifier(StoreError):
    fields = ("what",)
    template = "{what} cannot be blank"


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
