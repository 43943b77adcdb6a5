"""Bearer tokens for the HTTP server, kept hashed beside the room log.

``coderooms agent token ID`` issues a token (printed once, never stored in clear); the
HTTP server accepts a request only with a token whose SHA-256 is on file for an agent
that is still active. Issuing again replaces the agent's previous token.
``coderooms person token ID`` does the same for a person on the roster, who signs in to
the web UI with it; person tokens sit in a table of their own and start with another
prefix, so one never opens the other's door.

The table lives in the rooms SQLite file with a migration record of its own
(``mcp_token_migrations``), so it opens in newer versions like the store's own tables.
"""

from __future__ import annotations

import hashlib
import secrets
import sqlite3
import time
from typing import Any

from mcp.server.auth.provider import AccessToken

from coderooms.mcp.asgi import App, Receive, Scope, Send, first_headers
from coderooms.mcp.errors import TokenStoreUnsupported, check_caller
from coderooms.store.base import Store

__all__ = [
    "tokens_checked_first",
    "PERSON_TOKEN_PREFIX",
    "TOKEN_BYTES",
    "TOKEN_PREFIX",
    "TOKEN_SCOPE",
    "AgentTokenVerifier",
    "TokenBook",
]

TOKEN_BYTES = 32
"""Random bytes in a token (256 bits)."""
TOKEN_PREFIX = "crt_"
"""Every agent token starts with this, so a leaked one is recognisable."""
PERSON_TOKEN_PREFIX = "crp_"
"""Every person token (web sign-in) starts with this."""
TOKEN_SCOPE = "rooms"
"""The one scope a token grants."""
BUSY_TIMEOUT_MS = 10_000
"""How long a token write waits for other writers of the same file."""

_MIGRATIONS: tuple[tuple[int, str, tuple[str, ...]], ...] = (
    (
        1,
        "agent tokens",
        (
            """CREATE TABLE mcp_agent_tokens (
                agent_id TEXT PRIMARY KEY,
                token_sha256 TEXT NOT NULL UNIQUE,
                issued_at INTEGER NOT NULL
            )""",
        ),
    ),
    (
        2,
        "person tokens",
        (
            """CREATE TABLE person_tokens (
                person_id TEXT PRIMARY KEY,
                token_sha256 TEXT NOT NULL UNIQUE,
                issued_at INTEGER NOT NULL
            )""",
        ),
    ),
)

# (table, holder column, prefix) of each kind of token holder
_AGENT_TOKENS = ("mcp_agent_tokens", "agent_id", TOKEN_PREFIX)
_PERSON_TOKENS = ("person_tokens", "person_id", PERSON_TOKEN_PREFIX)


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


class TokenBook:
    """The token table of one rooms database file."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        self._db.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        self._migrate()

    @classmethod
    def for_store(cls, store: Store) -> TokenBook:
        if hasattr(store, "token_holder"):  # the PostgreSQL store keeps them itself
            return _StoreTokenBook(store)
        path = getattr(store, "path", None)
        if not isinstance(path, str) or path == ":memory:":
            raise TokenStoreUnsupported(repr(store))
        return cls(path)

    def _migrate(self) -> None:
        db = self._db
        db.execute("BEGIN IMMEDIATE")
        try:
            db.execute(
                "CREATE TABLE IF NOT EXISTS mcp_token_migrations "
                "(version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)"
            )
            done = {v for (v,) in db.execute("SELECT version FROM mcp_token_migrations")}
            for version, name, statements in _MIGRATIONS:
                if version in done:
                    continue
                for statement in statements:
                    db.execute(statement)
                db.execute(
                    "INSERT INTO mcp_token_migrations (version, name, applied_at) VALUES (?, ?, ?)",
                    (version, name, int(time.time())),
                )
        except BaseException:
            db.execute("ROLLBACK")
            raise
        db.execute("COMMIT")

    def issue(self, agent_id: str) -> str:
        """A new token for ``agent_id``, replacing any earlier one. Shown once."""
        return self._issue(_AGENT_TOKENS, agent_id)

    def agent_for(self, token: str) -> str | None:
        """The agent a token was issued to, or None for an unknown or replaced token."""
        return self._holder(_AGENT_TOKENS, token)

    def issue_person(self, person_id: str) -> str:
        """A new web sign-in token for ``person_id``, replacing any earlier one."""
        return self._issue(_PERSON_TOKENS, person_id)

    def person_for(self, token: str) -> str | None:
        """The person a sign-in token was issued to, or None."""
        return self._holder(_PERSON_TOKENS, token)

    def _issue(self, kind: tuple[str, str, str], holder: str) -> str:
        table, column, prefix = kind
        token = prefix + secrets.token_urlsafe(TOKEN_BYTES)
        self._db.execute(
            f"INSERT INTO {table} ({column}, token_sha256, issued_at) VALUES (?, ?, ?) "
            f"ON CONFLICT ({column}) DO UPDATE SET token_sha256 = excluded.token_sha256, "
            "issued_at = excluded.issued_at",
            (holder, _digest(token), int(time.time())),
        )
        return token

    def _holder(self, kind: tuple[str, str, str], token: str) -> str | None:
        table, column, prefix = kind
        if not token.startswith(prefix):
            return None
        row = self._db.execute(
            f"SELECT {column} FROM {table} WHERE token_sha256 = ?", (_digest(token),)
        ).fetchone()
        return str(row[0]) if row else None

    def close(self) -> None:
        self._db.close()


class _StoreTokenBook(TokenBook):
    """The token table of a store that keeps it in its own schema (PostgreSQL), so
    every host serving the room accepts the same tokens."""

    def __init__(self, store: Any) -> None:
        self.path = store.location
        self._store = store

    def issue(self, agent_id: str) -> str:
        token = TOKEN_PREFIX + secrets.token_urlsafe(TOKEN_BYTES)
        self._store.set_token(agent_id, _digest(token), int(time.time()))
        return token

    def agent_for(self, token: str) -> str | None:
        if not token.startswith(TOKEN_PREFIX):
            return None
        holder: str | None = self._store.token_holder(_digest(token))
        return holder

    def issue_person(self, person_id: str) -> str:
        token = PERSON_TOKEN_PREFIX + secrets.token_urlsafe(TOKEN_BYTES)
        self._store.set_token(person_id, _digest(token), int(time.time()), person=True)
        return token

    def person_for(self, token: str) -> str | None:
        if not token.startswith(PERSON_TOKEN_PREFIX):
            return None
        holder: str | None = self._store.token_holder(_digest(token), person=True)
        return holder

    def close(self) -> None:
        """The store owns the connection."""


async def check_token_holder(store: Store, agent_id: str) -> None:
    """Raise unless ``agent_id`` is an active agent (tokens are issued to those only)."""
    check_caller(await store.roster(), agent_id)


class AgentTokenVerifier:
    """The SDK's ``TokenVerifier``: a token on file, held by an agent still active."""

    def __init__(self, book: TokenBook, store: Store) -> None:
        self.book = book
        self.store = store

    async def verify_token(self, token: str) -> AccessToken | None:
        agent_id = self.book.agent_for(token)
        if agent_id is None:
            return None
        if not (await self.store.roster()).is_active(agent_id):
            return None
        return AccessToken(token=token, client_id=agent_id, scopes=[TOKEN_SCOPE], subject=agent_id)


def tokens_checked_first(app: App, verifier: AgentTokenVerifier) -> App:
    """``app`` (the SDK's), with a bearer token checked here before it is, so a store
    that fails during the check (a shared room's database gone) is answered ``503`` with
    its own words: inside the SDK the failure is a ``500`` and a logged traceback. The
    requests the fast path answers never come here (it checks their tokens itself, and
    its failures reach the same ``503``)."""
    from coderooms.mcp.stopping import store_failed
    from coderooms.store.errors import StoreError

    async def checked(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            header = first_headers(scope).get(b"authorization", b"")
            scheme, _, token = header.decode("latin-1").partition(" ")
            if scheme.lower() == "bearer" and token.strip():
                try:
                    await verifier.verify_token(token.strip())
                except StoreError as err:
                    await store_failed(send, err, on_mcp=True)
                    return
        await app(scope, receive, send)

    return checked
