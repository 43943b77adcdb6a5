"""The short way through ``coderooms up`` for a request on an open MCP session.

The SDK serves every POST through a Starlette middleware stack, its session manager, a
per-request pair of memory streams, a message router task and a dispatcher task that
hands the request to the server's handler kernel and its answer back the same way. On
two busy cores that machinery cost more CPU than the tools it carried (measured with
``benchmarks/reliability.py``'s HTTP load; see the README), and with eight agents
calling at once each call waits behind the others' share of it.

:func:`with_fast_path` answers the requests agents send all day (``tools/call``, and
any other JSON-RPC request but ``initialize``) on a session the SDK opened and whose
handshake is done, in the task that received them: the same checks (body size, the
JSON-RPC shape, bearer token, the session's owner, Host and Origin, Accept,
Content-Type), the same handler kernel (the SDK's :class:`ServerRunner` of that
session's connection, so the middleware chain, argument validation, the tools and the
result's serialization are the SDK's own), and the same response head and body bytes.

Anything else goes to the SDK untouched, the body it was sent included: opening and
ending a session (``initialize``, ``DELETE``), the event stream (``GET``),
notifications and responses, batches, the 2026 single-exchange protocol (no session),
and every request a check would refuse, so each refusal is the SDK's own, in its order,
with its status and words. Where the installed SDK lacks a part this
relies on, :func:`with_fast_path` returns the SDK's application as it is.

One difference from the SDK's path, which JSON-response mode makes moot: a request
answered here is not in the dispatcher's table of requests in flight, so a
``notifications/cancelled`` naming it is not applied; the call runs to its answer.
"""

from __future__ import annotations

import contextlib
import logging
import math
import weakref
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import anyio
import pydantic_core
from mcp.server.auth.middleware.auth_context import auth_context_var
from mcp.server.auth.middleware.bearer_auth import (
    AuthenticatedUser,
    BearerAuthBackend,
    authorization_context,
)
from mcp.server.connection import Connection
from mcp.server.mcpserver import MCPServer
from mcp.server.runner import ServerRunner
from mcp.server.streamable_http import (
    MCP_SESSION_ID_HEADER,
    StreamableHTTPServerTransport,
    check_accept_headers,
)
from mcp.shared.exceptions import NoBackChannelError
from mcp.shared.inbound import MCP_PROTOCOL_VERSION_HEADER
from mcp.shared.jsonrpc_dispatcher import handler_exception_to_error_data
from mcp.shared.message import ServerMessageMetadata
from mcp.shared.transport_context import TransportContext
from mcp_types import (
    ErrorData,
    JSONRPCError,
    JSONRPCRequest,
    JSONRPCResponse,
    RequestId,
    jsonrpc_message_adapter,
)
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS
from pydantic import ValidationError
from starlette.requests import Request

from coderooms.mcp.asgi import (
    App,
    Message,
    Receive,
    Scope,
    Send,
    first_headers,
    read_body,
    replaying,
)

__all__ = ["FAST_PATH_HEADER_NAMES", "FastPath", "SessionConnections", "with_fast_path"]

logger = logging.getLogger(__name__)

FAST_PATH_HEADER_NAMES = (b"content-type", MCP_SESSION_ID_HEADER.encode(), b"content-length")
"""The head of an answer, in the order the SDK's JSON response writes it."""
_JSON = b"application/json"
_SESSION_HEADER = MCP_SESSION_ID_HEADER.encode()
_VERSION_HEADER = MCP_PROTOCOL_VERSION_HEADER.lower().encode()
_SDK_ONLY_METHODS = frozenset({"initialize"})
"""Requests that change the session itself, answered by the SDK only."""


class SessionConnections:
    """A server middleware that remembers the SDK's :class:`Connection` of each
    streamable-HTTP session it has seen a message on, by session id, for as long as
    the SDK keeps the connection."""

    def __init__(self) -> None:
        self._by_session: weakref.WeakValueDictionary[str, Connection] = (
            weakref.WeakValueDictionary()
        )

    async def __call__(self, ctx: Any, call_next: Callable[[Any], Awaitable[Any]]) -> Any:
        try:
            return await call_next(ctx)
        finally:
            connection = getattr(ctx.session, "_connection", None)
            if isinstance(connection, Connection) and connection.session_id:
                self._by_session[connection.session_id] = connection

    def get(self, session_id: str) -> Connection | None:
        return self._by_session.get(session_id)


@dataclass
class _Answering:
    """The per-request dispatch context of a request answered in JSON: it has no
    channel back to the client, as the SDK's has none in JSON-response mode (a
    server request is refused; a notification or progress report has no wire and is
    dropped, as the SDK's transport drops it)."""

    request_id: RequestId | None
    message_metadata: ServerMessageMetadata
    transport: TransportContext = field(
        default_factory=lambda: TransportContext(kind="jsonrpc", can_send_request=False)
    )
    cancel_requested: anyio.Event = field(default_factory=anyio.Event)

    @property
    def can_send_request(self) -> bool:
        return False

    async def send_raw_request(
        self, method: str, params: Mapping[str, Any] | None, opts: Any = None
    ) -> dict[str, Any]:
        raise NoBackChannelError(method)

    async def notify(self, method: str, params: Mapping[str, Any] | None, opts: Any = None) -> None:
        logger.debug("dropped %s: a JSON answer carries only the response", method)

    async def progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> None:
        return None


def _sdk_parts(server: MCPServer) -> tuple[Any, Any, Any] | None:
    """The session manager, low-level server and token verifier the fast path drives,
    or None when the installed SDK does not have them as this module knows them."""
    lowlevel = getattr(server, "_lowlevel_server", None)
    manager = getattr(lowlevel, "_session_manager", None)
    verifier = getattr(server, "_token_verifier", None)
    needed = ("_server_instances", "_session_owners", "_lifespan_state", "_task_group")
    if manager is None or lowlevel is None or verifier is None:
        return None
    if not all(hasattr(manager, name) for name in needed) or manager.stateless:
        return None
    if not manager.json_response or manager.event_store is not None:
        return None
    if not callable(getattr(StreamableHTTPServerTransport, "_check_content_type", None)):
        return None
    return manager, lowlevel, verifier


def with_fast_path(server: MCPServer, app: App, *, path: str) -> App:
    """``app`` (``server``'s streamable-HTTP application, JSON responses, bearer
    tokens) with requests on an open session at ``path`` answered the short way; ``app``
    itself where the installed SDK lacks what that needs."""
    parts = _sdk_parts(server)
    if parts is None:
        return app
    return FastPath(server, app, path, *parts)


class FastPath:
    """The ASGI application :func:`with_fast_path` makes; ``answered`` counts the
    requests it answered itself."""

    def __init__(
        self, server: MCPServer, app: App, path: str, manager: Any, lowlevel: Any, verifier: Any
    ) -> None:
        self.app = app
        self.path = path
        self.answered = 0
        self._manager = manager
        self._lowlevel = lowlevel
        auth = server.settings.auth
        self._required_scopes = list(auth.required_scopes or []) if auth else []
        resource = auth.resource_server_url if auth and auth.validate_token_resource else None
        self._backend = BearerAuthBackend(verifier, resource_server_url=resource)
        self._connections = SessionConnections()
        lowlevel.middleware.insert(0, self._connections)
        self._runners: weakref.WeakKeyDictionary[Connection, ServerRunner[Any]] = (
            weakref.WeakKeyDictionary()
        )

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST" or scope["path"] != self.path:
            await self.app(scope, receive, send)
            return
        headers = first_headers(scope)
        if _SESSION_HEADER not in headers:
            await self.app(scope, receive, send)
            return
        read = await self._answer(scope, receive, send, headers)
        if read is not None:
            await self.app(scope, replaying(read, receive), send)

    def _runner(self, connection: Connection) -> ServerRunner[Any]:
        runner = self._runners.get(connection)
        if runner is None:
            runner = ServerRunner(self._lowlevel, connection, self._manager._lifespan_state)
            self._runners[connection] = runner
        return runner

    async def _answer(
        self, scope: Scope, receive: Receive, send: Send, headers: dict[bytes, bytes]
    ) -> list[Message] | None:
        """Answer the request and return None; or return what it read of the request
        (its body) and leave the answer to the SDK."""
        manager = self._manager
        session_id = headers[_SESSION_HEADER].decode("latin-1")
        transport = manager._server_instances.get(session_id)
        connection = self._connections.get(session_id)
        version = headers.get(_VERSION_HEADER)
        if (
            transport is None
            or connection is None
            or not connection.initialize_accepted
            or transport.is_terminated
            or manager._task_group is None
            or (
                version is not None and version.decode("latin-1") not in HANDSHAKE_PROTOCOL_VERSIONS
            )
        ):
            return []
        idle = transport.idle_scope
        if idle is not None and idle.cancel_called:
            return []
        declared = headers.get(b"content-length")
        if declared is not None and declared.isdigit():
            if int(declared) > manager.max_request_body_size:
                return []

        body, chunks = await read_body(receive, self._manager.max_request_body_size)
        if body is None:
            return chunks
        try:
            message = jsonrpc_message_adapter.validate_python(
                pydantic_core.from_json(body), by_name=False
            )
        except (ValueError, ValidationError):
            return chunks
        if not isinstance(message, JSONRPCRequest) or message.method in _SDK_ONLY_METHODS:
            return chunks

        request = Request(scope, replaying(chunks, receive))
        found = await self._backend.authenticate(request)
        if found is None:
            return chunks
        credentials, user = found
        if not isinstance(user, AuthenticatedUser) or any(
            needed not in credentials.scopes for needed in self._required_scopes
        ):
            return chunks
        if authorization_context(user) != manager._session_owners.get(session_id):
            return chunks
        if await transport._security.validate_request(request, is_post=True) is not None:
            return chunks
        if not check_accept_headers(request)[0] or not transport._check_content_type(request):
            return chunks

        scope["auth"], scope["user"] = credentials, user
        async with _in_flight(transport):
            reset = auth_context_var.set(user)
            try:
                wire = await _dispatch(self._runner(connection), request, message)
            finally:
                auth_context_var.reset(reset)
        head = (_JSON, headers[_SESSION_HEADER], str(len(wire)).encode())
        await send(
            {
                "type": "http.response.start",
                "status": 200,
                "headers": list(zip(FAST_PATH_HEADER_NAMES, head, strict=True)),
            }
        )
        await send({"type": "http.response.body", "body": wire})
        self.answered += 1
        return None


@contextlib.asynccontextmanager
async def _in_flight(transport: Any) -> AsyncIterator[None]:
    """Hold the session open while the request runs, as the SDK's transport does: its
    idle countdown stops, and starts again when the last request in flight ends."""
    idle = transport.idle_scope
    timeout = getattr(transport, "_idle_timeout", None)
    if idle is None or timeout is None:
        yield
        return
    transport._requests_in_flight += 1
    idle.deadline = math.inf
    try:
        yield
    finally:
        transport._requests_in_flight -= 1
        if not transport._requests_in_flight:
            idle.deadline = anyio.current_time() + timeout


async def _dispatch(runner: ServerRunner[Any], request: Request, message: JSONRPCRequest) -> bytes:
    """The JSON-RPC answer to ``message``, as the SDK's dispatcher shapes it: the
    kernel's result, or the error a raised exception maps to."""
    metadata = ServerMessageMetadata(request_context=request, can_send_request=False)
    context = _Answering(request_id=message.id, message_metadata=metadata)
    reply: JSONRPCResponse | JSONRPCError
    try:
        result = await runner.on_request(context, message.method, message.params)
    except Exception as exc:
        error = handler_exception_to_error_data(exc)
        if error is None:
            logger.exception("handler for %r raised", message.method)
            error = ErrorData(code=0, message=str(exc))
        reply = JSONRPCError(jsonrpc="2.0", id=message.id, error=error)
    else:
        reply = JSONRPCResponse(jsonrpc="2.0", id=message.id, result=result)
    return reply.model_dump_json(by_alias=True, exclude_unset=True).encode()
