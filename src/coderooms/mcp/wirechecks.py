"""Messages the SDK would refuse in words a client cannot act on, answered here in
plain ones: on stdio (:mod:`coderooms.mcp.stdio`) and on ``up``'s HTTP endpoint
(:func:`readable_refusals`).

Over HTTP the SDK answers, where this module answers instead (each ``400``, with a
JSON-RPC error):

- an ``MCP-Protocol-Version`` header naming no version it knows: a complaint about a
  ``params._meta`` envelope (the SDK takes any unknown version for its newest protocol);
- a JSON array (a batch, which MCP no longer has): a pydantic dump of four validation
  errors that repeats the request;
- a lone UTF-16 surrogate escaped in a string (``"\\ud800"``): "unexpected end of hex
  escape";
- a body that is not UTF-8: "invalid unicode code point".

Everything else passes through untouched, its body replayed to the SDK.
"""

from __future__ import annotations

import json
import re
from typing import Any

from mcp_types import INVALID_PARAMS, INVALID_REQUEST, PARSE_ERROR
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, MODERN_PROTOCOL_VERSIONS

from coderooms.errors import echoed
from coderooms.mcp.asgi import App, Receive, Scope, Send, first_headers, read_body, replaying

__all__ = [
    "KNOWN_PROTOCOL_VERSIONS",
    "lone_surrogate_at",
    "not_unicode",
    "readable_id",
    "readable_refusals",
]


KNOWN_PROTOCOL_VERSIONS: tuple[str, ...] = (*HANDSHAKE_PROTOCOL_VERSIONS, *MODERN_PROTOCOL_VERSIONS)
"""The ``MCP-Protocol-Version`` values the installed SDK serves."""
VERSION_HEADER = b"mcp-protocol-version"
BODY_CHECK_MAX_BYTES = 4 * 1024 * 1024
"""A body is looked at only up to this size; a larger one goes to the SDK as it is (it
refuses bodies over its own limit)."""

_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")


def lone_surrogate_at(value: Any) -> str | None:
    """Where in ``value`` a string (a key too) holds a lone surrogate, as a dotted path
    (``params.arguments.content``), or None; iterative, so JSON nested as deep as
    ``json.loads`` takes cannot overflow the stack here."""
    stack: list[tuple[str, Any]] = [("", value)]
    while stack:
        path, item = stack.pop()
        if isinstance(item, str):
            if _LONE_SURROGATE.search(item) is not None:
                return path or "the message"
        elif isinstance(item, dict):
            for key, member in item.items():
                inner = f"{path}.{key}" if path else str(key)
                stack.append((inner, key))
                stack.append((inner, member))
        elif isinstance(item, list):
            stack.extend((f"{path}[{i}]", member) for i, member in enumerate(item))
    return None


def not_unicode(where: str) -> str:
    """The refusal of a message whose ``where`` holds text that is not Unicode."""
    return (
        f"Invalid params: {echoed(where)} holds bytes that are not UTF-8 or a lone UTF-16 "
        "surrogate, which is not valid Unicode (send UTF-8, and escape surrogates in pairs)"
    )


def readable_id(raw: object) -> str | int | float | None:
    """The id an answer to the JSON value ``raw`` carries: the request's own id when it
    can be read as one (a string or a number, even one MCP refuses, like 1.5), else null
    (JSON-RPC: null only where the id could not be determined)."""
    request_id = raw.get("id") if isinstance(raw, dict) else None
    if isinstance(request_id, bool) or not isinstance(request_id, int | float | str):
        return None
    return request_id


def _body_problem(body: bytes) -> tuple[object, int, str] | None:
    """(id, code, message) of a body refused here, or None to let the SDK read it."""
    try:
        body.decode("utf-8")
    except UnicodeDecodeError as err:
        return (
            None,
            PARSE_ERROR,
            f"Parse error: the body is not UTF-8 (byte 0x{body[err.start]:02x} at offset "
            f"{err.start}); send JSON as UTF-8",
        )
    if body.lstrip()[:1] == b"[":
        return (
            None,
            INVALID_REQUEST,
            "Invalid Request: a batch (a JSON array of messages) is not part of MCP; "
            "send each message in a request of its own",
        )
    if _SURROGATE_ESCAPE.search(body) is None:
        return None
    try:
        raw = json.loads(body)
    except (ValueError, RecursionError):
        return None  # the SDK's parse error says what is wrong
    where = lone_surrogate_at(raw)
    if where is None:
        return None  # surrogates in pairs: fine
    return readable_id(raw), INVALID_PARAMS, not_unicode(" ".join(where.split()))


async def _refuse(send: Send, request_id: object, code: int, message: str) -> None:
    error = {"code": code, "message": message}
    body = json.dumps({"jsonrpc": "2.0", "id": request_id, "error": error}, separators=(",", ":"))
    body = body.encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": 400, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def readable_refusals(app: App, path: str) -> App:
    """``app``, with a POST to ``path`` refused here (400) when its protocol version
    header is unknown, its body is a batch, or a string in it holds a lone surrogate.
    A request without credentials goes to ``app`` unread, to be refused there (401)."""

    async def gate(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope.get("method") != "POST" or scope.get("path") != path:
            await app(scope, receive, send)
            return
        headers = first_headers(scope)
        if b"authorization" not in headers:
            await app(scope, receive, send)
            return
        version = headers.get(VERSION_HEADER)
        if version is not None and version.decode("latin-1") not in KNOWN_PROTOCOL_VERSIONS:
            known = ", ".join(KNOWN_PROTOCOL_VERSIONS)
            await _refuse(
                send,
                None,
                INVALID_REQUEST,
                f"Bad Request: unsupported MCP-Protocol-Version "
                f"{echoed(version.decode('latin-1'))!r}; this server speaks {known}",
            )
            return
        body, chunks = await read_body(receive, BODY_CHECK_MAX_BYTES)
        if body is not None:
            problem = _body_problem(body)
            if problem is not None:
                await _refuse(send, *problem)
                return
        await app(scope, replaying(chunks, receive), send)

    return gate
