"""The code index: a tree-sitter + git graph of a repository, kept in ``.coderooms/index.db``.

A host layer (it reads files, runs git and writes SQLite); the focus runtime only ever
sees the pure :class:`coderooms.focus.graph.CodeGraph` it produces. One run goes:

``discover``   which files: ``git ls-files`` (or a walk honouring ``.gitignore``), symlinks
               never followed, skipped files counted by reason
``extract``    per file, in worker processes: hash, parse, symbols, imports, calls,
               references and bases (``facts``) — Python first-class, JS/TS/TSX, Go,
               Rust and Java at symbol, import and call level
``resolve``    facts to edges: contains, imports, calls, references, inherits, tests
``gitlog``     one ``git log`` pass: commit counts, last change, co-change pairs
``db``         the schema, its recorded migrations, and the stored facts
``indexer``    the run itself: incremental by content hash, re-resolving only what a
               change can affect, all in one transaction

The Python face is :class:`coderooms.workspace.Workspace`.
"""

from coderooms.index.errors import (
    AmbiguousNode,
    CodeIndexError,
    IndexBusy,
    IndexDatabaseError,
    IndexDirectoryUnwritable,
    IndexTooNew,
    NotIndexed,
    NotInRepository,
    UnknownNode,
    WorkspaceNotADirectory,
    WorkspaceNotFound,
    WorkspacePathNotUtf8,
    WorkspaceUnreadable,
)
from coderooms.index.summary import IndexSummary

__all__ = [
    "AmbiguousNode",
    "CodeIndexError",
    "IndexBusy",
    "IndexDatabaseError",
    "IndexDirectoryUnwritable",
    "IndexSummary",
    "IndexTooNew",
    "NotIndexed",
    "UnknownNode",
    "WorkspaceNotADirectory",
    "NotInRepository",
    "WorkspaceNotFound",
    "WorkspacePathNotUtf8",
    "WorkspaceUnreadable",
]
