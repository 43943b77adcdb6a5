"""Errors of the code index.

::

    HostError
    └── CodeIndexError                 anything the indexer refuses to do
        ├── WorkspaceNotFound          the path does not exist
        ├── NotInRepository            no repository at or above the working directory
        ├── WorkspaceNotADirectory     the path is a file, not a directory
        ├── WorkspaceUnreadable        the directory (or its git repository) cannot be read
        ├── WorkspacePathNotUtf8       the path is not valid UTF-8 (paths are stored as text)
        ├── IndexDirectoryUnwritable   .coderooms/ cannot be created or written
        ├── IndexDatabaseError         .coderooms/index.db is damaged or fails otherwise
        ├── IndexUnopenable            .coderooms/index.db cannot be opened for writing
        ├── IndexBusy                  another process holds the index's write lock
        ├── IndexTooNew                index.db was written by a newer coderooms
        ├── UnreadableFacts            index.db holds facts of a file that do not decode
        ├── NotIndexed                 a graph was asked for before the first index run
        ├── UnknownNode                no file or symbol has that id
        └── AmbiguousNode              a bare name that several symbols share
"""

from __future__ import annotations

from coderooms.errors import HostError

__all__ = [
    "CodeIndexError",
    "NotInRepository",
    "WorkspaceNotFound",
    "WorkspaceNotADirectory",
    "WorkspaceUnreadable",
    "WorkspacePathNotUtf8",
    "IndexDirectoryUnwritable",
    "IndexDatabaseError",
    "IndexUnopenable",
    "IndexBusy",
    "IndexTooNew",
    "UnreadableFacts",
    "NotIndexed",
    "UnknownNode",
    "AmbiguousNode",
]


class CodeIndexError(HostError):
    """Base of the code index's errors."""


class NotInRepository(CodeIndexError):
    """``focus``, ``seek`` or ``impact`` run with no ``--repo`` outside any repository:
    indexing the working directory itself (``/tmp``, a home directory) could read tens of
    thousands of files nobody asked about."""

    fields = ("start",)
    template = (
        "{start} is not inside a repository (no .git or .coderooms index in it or above): "
        "run this in one, pass --repo DIR, or index a directory first with "
        "`coderooms index DIR`"
    )


class WorkspaceNotFound(CodeIndexError):
    fields = ("path",)
    template = "no such directory: {path}"


class WorkspaceNotADirectory(CodeIndexError):
    fields = ("path",)
    template = "not a directory: {path} (give the root of a repository)"


class WorkspaceUnreadable(CodeIndexError):
    fields = ("path", "reason")
    template = "cannot read {path}: {reason}"


class WorkspacePathNotUtf8(CodeIndexError):
    """``path`` is shown with its undecodable bytes escaped (``repo\\xff``)."""

    fields = ("path",)
    template = (
        "the path {path} is not valid UTF-8: coderooms stores paths as text; "
        "rename the directory and index it again"
    )


class IndexDirectoryUnwritable(CodeIndexError):
    fields = ("path", "reason")
    template = (
        "cannot create or write the index directory {path}: {reason} "
        "(coderooms keeps its index there: make it a writable directory)"
    )


class IndexDatabaseError(CodeIndexError):
    fields = ("path", "reason")
    template = (
        "cannot use the index database {path}: {reason} (delete it and run `coderooms index` again)"
    )


class IndexUnopenable(CodeIndexError):
    """The index database cannot be opened, or not for writing: a read-only file or
    mount, a missing permission, a directory in its place. Not damage: the advice is
    never to delete it."""

    fields = ("path", "reason")
    template = (
        "cannot open the index database {path} for writing: {reason} (coderooms updates "
        "its index before it answers: make the file and its directory writable, or run "
        "it on a writable copy of the repository)"
    )


class UnreadableFacts(CodeIndexError):
    fields = ("path",)
    template = (
        "the index database holds unreadable facts for {path} "
        "(delete .coderooms/index.db and run `coderooms index` again)"
    )


class IndexBusy(CodeIndexError):
    """Another process held the write lock for longer than the busy timeout."""

    fields = ("path",)
    template = "another process is writing the index {path}: try again when it finishes"


class IndexTooNew(CodeIndexError):
    fields = ("path", "found", "known")
    template = (
        "{path} has schema version {found}, this coderooms knows up to {known}: upgrade coderooms"
    )


class NotIndexed(CodeIndexError):
    fields = ("path",)
    template = "{path} has no code index yet: run `coderooms index {path}` first"


class UnknownNode(CodeIndexError):
    fields = ("node",)
    template = (
        "no file or symbol with id {node!r} in the index (ids look like pkg/mod.py::Class.method)"
    )


class AmbiguousNode(CodeIndexError):
    fields = ("node", "candidates")
    template = "{node!r} names several symbols: {candidates} (give the full id)"
