"""The HTTP server's one way in: a bearer token, said plainly to a client that looks for
another.

``coderooms up`` authenticates with per-agent bearer tokens and runs no OAuth
authorization server, so it advertises none: no protected-resource metadata names one
(it would answer 404 to a client that followed it). A client doing OAuth discovery gets,
at every ``/.well-known/`` address, a 404 whose JSON says to send a bearer token, and a
request without a valid token gets a 401 saying the same thing, in its body and in its
``WWW-Authenticate`` header.
"""

from __future__ import annotations

import json

from coderooms.mcp.asgi import App, Message, Receive, Scope, Send

__all__ = ["BEARER_HINT", "WELL_KNOWN", "bearer_only"]


BEARER_HINT = (
    "this server uses no OAuth: send the header 'Authorization: Bearer TOKEN' with a token "
    "from `coderooms agent token AGENT_ID` (or the one `coderooms up --agent AGENT_ID` printed)"
)
"""What every refusal of the HTTP server tells a client about how to get in."""

WELL_KNOWN = "/.well-known/"
"""Where OAuth discovery looks (protected-resource and authorization-server metadata)."""


def _json(status: int, error: str) -> tuple[Message, Message]:
    body = json.dumps({"error": error, "error_description": BEARER_HINT}).encode()
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
    ]
    if status == 401:
        challenge = f'Bearer error="{error}", error_description="{BEARER_HINT}"'
        headers.append((b"www-authenticate", challenge.encode()))
    start = {"type": "http.response.start", "status": status, "headers": headers}
    return start, {"type": "http.response.body", "body": body}


def bearer_only(app: App) -> App:
    """``app`` whose 401 answers say how to authenticate, with ``/.well-known/`` answered
    (404, the same words) before it reaches ``app``."""

    async def guarded(scope: Scope, receive: Receive, send: Send) -> None:
        if scope.get("type") != "http":
            await app(scope, receive, send)
            return
        if str(scope.get("path", "")).startswith(WELL_KNOWN):
            for message in _json(404, "not_supported"):
                await send(message)
            return
        replaced = False

        async def rewrite(message: Message) -> None:
            nonlocal replaced
            if message["type"] == "http.response.start" and message.get("status") == 401:
                replaced = True
                for ours in _json(401, "invalid_token"):
                    await send(ours)
                return
            if replaced and message["type"] == "http.response.body":
                return  # the SDK's own 401 body, replaced above
            await send(message)

        await app(scope, receive, rewrite)

    return guarded
