"""Stores: where a room's log, roster and desks live (a host layer; it does I/O).

``open_store(url)`` picks the implementation from the URL. ``sqlite:///PATH`` follows the
usual convention: everything after the third slash is the path, so
``sqlite:///rooms.db`` is relative to the working directory and
``sqlite:////srv/rooms.db`` is absolute; ``sqlite:///:memory:`` is a private in-memory
store (refused with ``durable=True``, as the command line asks, since its rows vanish
when the process exits). A URL without a scheme is taken as the path of a SQLite file.

``postgresql://user@host:port/db`` (or ``postgres://…``; ``?host=/dir`` for a unix
socket) opens the PostgreSQL store, which several hosts can share; it needs the
``postgres`` extra (psycopg 3).
"""

from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import unquote

from coderooms.datadir import DATA_DIR
from coderooms.store.base import (
    MESSAGE_BYTES_CAP,
    READ_LIMIT_CAP,
    AuthorRef,
    Store,
    parse_author_ref,
)
from coderooms.store.errors import *  # noqa: F403
from coderooms.store.errors import EphemeralStore, StoreNotFound, UnsupportedStoreUrl
from coderooms.store.errors import __all__ as _error_names
from coderooms.store.sqlite import SQLiteStore
from coderooms.store.urls import looks_like_conninfo, redacted_url

__all__ = [
    "DEFAULT_STORE_PATH",
    "POSTGRES_SCHEMES",
    "MESSAGE_BYTES_CAP",
    "READ_LIMIT_CAP",
    "AuthorRef",
    "SQLiteStore",
    "Store",
    "default_store_url",
    "open_store",
    "parse_author_ref",
    *_error_names,
]

DEFAULT_STORE_PATH = Path(DATA_DIR) / "rooms.db"
"""Where the embedded store lives, relative to the working directory."""

_SQLITE_PREFIX = "sqlite:///"
POSTGRES_SCHEMES = ("postgresql://", "postgres://")
CONNINFO_REASON = (
    "this is a PostgreSQL connection string (key=value); give the database as a URL, "
    "postgresql://USER@HOST:PORT/DBNAME (for a socket directory: ?host=/DIR)"
)
"""URL prefixes of a PostgreSQL store (libpq's two spellings)."""
POSTGRES_MISSING = "the PostgreSQL driver is not installed: pip install 'coderooms[postgres]'"


def default_store_url() -> str:
    """The URL of the embedded default store under the current working directory."""
    return _SQLITE_PREFIX + str(Path(os.getcwd()) / DEFAULT_STORE_PATH)


def open_store(
    url: str | None = None,
    *,
    durable: bool = False,
    existing: bool = False,
    read_only: bool = False,
) -> Store:
    """Open (creating and migrating if needed) the store ``url`` names.

    ``None`` opens ``.coderooms/rooms.db`` under the working directory. Raises
    :class:`~coderooms.store.errors.UnsupportedStoreUrl` for another scheme,
    :class:`~coderooms.store.errors.CorruptDatabase` for a file that is not a store, and
    with ``durable`` :class:`~coderooms.store.errors.EphemeralStore` for an in-memory
    store (whose rows would be gone once this process exits). With ``existing`` (a
    command that only reads), a file that is not there is
    :class:`~coderooms.store.errors.StoreNotFound` instead of a new, empty store. With
    ``read_only`` the file is opened without write access (a read-only file or mount
    still serves reads) unless it needs a migration first.
    """
    if url is None:
        url = default_store_url()
    if url.startswith(POSTGRES_SCHEMES):
        return _open_postgres(url, existing=existing)
    if url.startswith(_SQLITE_PREFIX):
        path = unquote(url[len(_SQLITE_PREFIX) :])  # a URL: %20 is a space
    elif "://" in url or url.startswith(("sqlite:", "file:")):
        raise UnsupportedStoreUrl(redacted_url(url))
    elif looks_like_conninfo(url):  # it would have become a SQLite file of that name
        raise UnsupportedStoreUrl(redacted_url(url), CONNINFO_REASON)
    else:
        path = url
    if not path.strip():
        raise UnsupportedStoreUrl(url)
    if path.startswith("~"):
        path = os.path.expanduser(path)
    if durable and path == ":memory:":
        raise EphemeralStore(url)
    if existing and path != ":memory:" and not os.path.exists(path):
        raise StoreNotFound(path)
    return SQLiteStore(path, read_only=read_only)


def _open_postgres(url: str, *, existing: bool) -> Store:
    try:
        from coderooms.store.postgres import PostgresStore
    except ImportError:
        raise UnsupportedStoreUrl(url, POSTGRES_MISSING) from None
    return PostgresStore(url, existing=existing)
