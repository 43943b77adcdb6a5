"""The few ASGI pieces the HTTP layers of ``coderooms up`` share: the callable's types,
request headers by name, and reading a body whole while keeping it to hand on."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

__all__ = ["App", "Message", "Receive", "Scope", "Send", "first_headers", "read_body", "replaying"]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]


def first_headers(scope: Scope) -> dict[bytes, bytes]:
    """Request headers by lower-case name, the first of a repeated one (as Starlette's
    ``Headers.get`` reads them)."""
    headers: dict[bytes, bytes] = {}
    for name, value in scope["headers"]:
        headers.setdefault(name.lower(), value)
    return headers


def replaying(chunks: list[Message], receive: Receive) -> Receive:
    """``receive`` that first hands back the messages already read from it."""
    pending = list(chunks)

    async def replay() -> Message:
        if pending:
            return pending.pop(0)
        return await receive()

    return replay


async def read_body(receive: Receive, limit: int) -> tuple[bytes | None, list[Message]]:
    """The whole body, or None (with what was read) when it is over ``limit`` bytes or
    the client went away first; the messages read, to replay with :func:`replaying`."""
    chunks: list[Message] = []
    size = 0
    while True:
        message = await receive()
        chunks.append(message)
        if message["type"] != "http.request":
            return None, chunks
        size += len(message.get("body", b""))
        if size > limit:
            return None, chunks
        if not message.get("more_body", False):
            return b"".join(chunk.get("body", b"") for chunk in chunks), chunks
