"""The short way through `up`'s HTTP host answers every request exactly as the SDK's own
transport does, and leaves to the SDK everything it does not answer.

Both ways are the same server on the same session: the application `up` serves, and
the SDK's application inside it (``fast.app``), each behind the same bearer guard.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import pytest

from coderooms.cli.mcp_cmds import MCP_PATH, http_mcp_app
from coderooms.mcp.bearer import bearer_only
from coderooms.mcp.fastpath import FAST_PATH_HEADER_NAMES, FastPath
from coderooms.mcp.service import RoomService
from coderooms.mcp.tokens import TokenBook
from coderooms.rooms.dispatch import MentionDispatchPolicy
from coderooms.store import open_store

PROTOCOL = "2025-06-18"
HOST = "127.0.0.1:8737"
Answer = tuple[int, list[tuple[bytes, bytes]], bytes]


async def exchange(
    app: Any,
    headers: dict[str, str],
    body: bytes = b"",
    *,
    method: str = "POST",
    chunks: int = 1,
) -> Answer:
    """One HTTP exchange with an ASGI app, the body sent in ``chunks`` parts."""
    size = max(1, -(-len(body) // chunks))
    parts = [body[at : at + size] for at in range(0, len(body), size)] or [b""]
    messages = [
        {"type": "http.request", "body": part, "more_body": n < len(parts) - 1}
        for n, part in enumerate(parts)
    ]
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": method,
        "scheme": "http",
        "path": MCP_PATH,
        "raw_path": MCP_PATH.encode(),
        "query_string": b"",
        "root_path": "",
        "headers": [(k.lower().encode(), v.encode()) for k, v in headers.items()]
        + [(b"content-length", str(len(body)).encode())],
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 8737),
        "state": {},
    }

    async def receive() -> dict[str, Any]:
        if messages:
            return messages.pop(0)
        await anyio.sleep_forever()
        raise AssertionError("unreachable")

    status = 0
    head: list[tuple[bytes, bytes]] = []
    out = b""

    async def send(message: dict[str, Any]) -> None:
        nonlocal status, head, out
        if message["type"] == "http.response.start":
            status, head = message["status"], list(message["headers"])
        else:
            out += message.get("body", b"")

    with anyio.fail_after(30):
        await app(scope, receive, send)
    return status, head, out


@dataclass
class Host:
    fast: FastPath
    served: Any
    sdk: Any
    tokens: dict[str, str]
    server: Any
    sessions: dict[str, str] = field(default_factory=dict)
    next_id: int = 100

    def headers(self, agent: str, session_of: str | None = None) -> dict[str, str]:
        return {
            "Host": HOST,
            "Authorization": f"Bearer {self.tokens[agent]}",
            "Accept": "application/json, text/event-stream",
            "Content-Type": "application/json",
            "Mcp-Session-Id": self.sessions[session_of or agent],
            "MCP-Protocol-Version": PROTOCOL,
        }

    def request(self, method: str, params: dict[str, Any] | None = None) -> bytes:
        self.next_id += 1
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": self.next_id, "method": method}
        if params is not None:
            message["params"] = params
        return json.dumps(message).encode()

    async def both(self, agent: str, body: bytes) -> tuple[Answer, Answer]:
        """The SDK's answer, then the fast path's, to the same request."""
        answered = self.fast.answered
        sdk = await exchange(self.sdk, self.headers(agent), body)
        assert self.fast.answered == answered
        fast = await exchange(self.served, self.headers(agent), body)
        assert self.fast.answered == answered + 1, "the fast path did not answer"
        return sdk, fast


async def _open_session(app: Any, token: str) -> str:
    initialize = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": PROTOCOL,
            "capabilities": {},
            "clientInfo": {"name": "test", "version": "0"},
        },
    }
    base = {
        "Host": HOST,
        "Authorization": f"Bearer {token}",
        "Accept": "application/json, text/event-stream",
        "Content-Type": "application/json",
    }
    status, head, _ = await exchange(app, base, json.dumps(initialize).encode())
    assert status == 200
    session = dict(head)[b"mcp-session-id"].decode()
    done = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    opened = base | {"Mcp-Session-Id": session, "MCP-Protocol-Version": PROTOCOL}
    status, _, _ = await exchange(app, opened, json.dumps(done).encode())
    assert status == 202
    return session


@asynccontextmanager
async def hosted(tmp_path: Path) -> AsyncIterator[Host]:
    store = open_store(f"sqlite:///{tmp_path / 'rooms.db'}")
    book = TokenBook.for_store(store)
    try:
        for agent in ("alice", "bob"):
            await store.add_agent(agent)
        tokens = {agent: book.issue(agent) for agent in ("alice", "bob")}
        service = RoomService(store, lambda: None, MentionDispatchPolicy(enabled=False))
        server, fast = http_mcp_app(service, book, store, f"http://{HOST}")
        assert isinstance(fast, FastPath)
        host = Host(fast, bearer_only(fast), bearer_only(fast.app), tokens, server)
        async with server.session_manager.run():
            for agent in ("alice", "bob"):
                host.sessions[agent] = await _open_session(host.served, tokens[agent])
            for n in range(6):
                await service.post("alice", f"hello {n} @bob", "General", None, None)
            yield host
    finally:
        book.close()
        store.close()


TOOL_CALLS: list[tuple[str, dict[str, Any]]] = [
    ("room_read", {}),
    ("room_read", {"window": 3}),
    ("room_search", {"query": "hello"}),
    ("room_search", {"query": "/hel+o [0-9]/"}),
    ("room_threads", {}),
    ("room_pins", {}),
    ("room_pick", {"kind": "agents", "query": "bob"}),
    ("room_inbox", {}),
    ("room_post", {"content": "once", "idempotency_key": "k-1"}),
    ("skim", {"text": "ok\n" * 30 + "FAILED test_x\n", "goal": "failures"}),
    # refusals and bad arguments: tool errors
    ("focus", {"goal": "find the parser"}),
    ("seek", {"query": "parser"}),
    ("impact", {"target": "parse"}),
    ("room_read", {"desk": "nowhere"}),
    ("room_read", {"window": 0}),
    ("room_read", {"window": True}),
    ("room_read", {"surprise": 1}),
    ("room_search", {"query": "/(unclosed/"}),
    ("no_such_tool", {}),
    ("n" * 5000, {}),
]


async def test_every_tool_call_answers_as_the_sdk_does(tmp_path: Path) -> None:
    async with hosted(tmp_path) as host:
        # the first idempotent post writes; the two compared below both replay it
        await exchange(host.sdk, host.headers("alice"), host.request("tools/call", {
            "name": "room_post", "arguments": {"content": "once", "idempotency_key": "k-1"}
        }))  # fmt: skip
        for name, arguments in TOOL_CALLS:
            body = host.request("tools/call", {"name": name, "arguments": arguments})
            sdk, fast = await host.both("alice", body)
            assert fast == sdk, name[:40]
        errors = [
            json.loads((await host.both("bob", host.request("tools/call", {"name": name})))[1][2])[
                "result"
            ]["isError"]
            for name in ("room_read", "no_such_tool")
        ]
        assert errors == [False, True]


async def test_the_answer_head_is_the_sdks(tmp_path: Path) -> None:
    async with hosted(tmp_path) as host:
        _, fast = await host.both("alice", host.request("tools/call", {"name": "room_pins"}))
        status, head, body = fast
        assert status == 200
        assert [name for name, _ in head] == list(FAST_PATH_HEADER_NAMES)
        assert dict(head)[b"mcp-session-id"].decode() == host.sessions["alice"]
        assert dict(head)[b"content-length"] == str(len(body)).encode()


async def test_other_requests_answer_as_the_sdk_does(tmp_path: Path) -> None:
    async with hosted(tmp_path) as host:
        bodies = [
            host.request("tools/list"),
            host.request("ping"),
            host.request("x" * 5000),  # Method not found, the name echoed in part
            host.request("tools/call", {"arguments": {}}),  # no tool name
            host.request("tools/call", {"name": 7}),
            json.dumps({"jsonrpc": "2.0", "id": "text-id", "method": "ping"}).encode(),
        ]
        for body in bodies:
            sdk, fast = await host.both("alice", body)
            assert fast == sdk, body[:60]


async def test_a_call_without_the_protocol_version_header_answers_as_the_sdks(
    tmp_path: Path,
) -> None:
    """The header is optional (the session's negotiated version applies)."""
    async with hosted(tmp_path) as host:
        alice = host.headers("alice")
        del alice["MCP-Protocol-Version"]
        body = host.request("tools/call", {"name": "room_read"})
        sdk = await exchange(host.sdk, alice, body)
        answered = host.fast.answered
        fast = await exchange(host.served, alice, body)
        assert host.fast.answered == answered + 1
        assert fast == sdk


async def test_each_token_acts_as_its_own_agent_on_the_fast_path(tmp_path: Path) -> None:
    async with hosted(tmp_path) as host:
        for agent in ("alice", "bob"):
            body = host.request(
                "tools/call", {"name": "room_post", "arguments": {"content": agent}}
            )
            answered = host.fast.answered
            _, _, out = await exchange(host.served, host.headers(agent), body)
            assert host.fast.answered == answered + 1
            posted = json.loads(out)["result"]["structuredContent"]
            assert posted["author"]["id"] == agent


async def test_a_body_in_several_parts_is_read_whole(tmp_path: Path) -> None:
    async with hosted(tmp_path) as host:
        body = host.request("tools/call", {"name": "room_search", "arguments": {"query": "hello"}})
        whole = await exchange(host.served, host.headers("alice"), body)
        answered = host.fast.answered
        parted = await exchange(host.served, host.headers("alice"), body, chunks=5)
        assert host.fast.answered == answered + 1
        assert parted == whole


async def test_what_the_fast_path_leaves_alone_the_sdk_answers(tmp_path: Path) -> None:
    """Each request the fast path does not answer gets the SDK's own answer, body and
    all: opening a session, notifications, batches, and every refusal."""
    async with hosted(tmp_path) as host:
        call = host.request("tools/call", {"name": "room_read"})
        alice = host.headers("alice")
        cases: list[tuple[str, dict[str, str], bytes]] = [
            ("notification", alice, b'{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}'),
            ("batch", alice, b"[" + call + b"]"),
            ("not JSON", alice, b"{not json"),
            ("not JSON-RPC", alice, b'{"id": 1}'),
            ("invalid UTF-8", alice, b'{"jsonrpc":"2.0","id":1,"method":"\xff"}'),
            ("unknown session", alice | {"Mcp-Session-Id": "f" * 32}, call),
            ("another agent's session", host.headers("bob", session_of="alice"), call),
            ("bad token", alice | {"Authorization": "Bearer crt_nope"}, call),
            ("no token", {k: v for k, v in alice.items() if k != "Authorization"}, call),
            ("unknown protocol version", alice | {"MCP-Protocol-Version": "1999-01-01"}, call),
            ("foreign Host", alice | {"Host": "evil.example:80"}, call),
            ("foreign Origin", alice | {"Origin": "http://evil.example"}, call),
            ("no JSON accepted", alice | {"Accept": "text/event-stream"}, call),
            ("not JSON content", alice | {"Content-Type": "text/plain"}, call),
            ("too large", alice, call[:-1] + b', "pad": "' + b"x" * (5 << 20) + b'"}'),
        ]  # fmt: skip
        for what, headers, body in cases:
            answered = host.fast.answered
            sdk = await exchange(host.sdk, headers, body)
            fast = await exchange(host.served, headers, body)
            assert host.fast.answered == answered, what
            assert fast == sdk, what
            assert sdk[0] != 200, what


async def test_initialize_on_an_open_session_is_the_sdks(tmp_path: Path) -> None:
    async with hosted(tmp_path) as host:
        initialize = host.request(
            "initialize",
            {"protocolVersion": PROTOCOL, "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}},
        )  # fmt: skip
        answered = host.fast.answered
        status, _, _ = await exchange(host.served, host.headers("alice"), initialize)
        assert status == 200
        assert host.fast.answered == answered


async def test_a_session_ended_by_delete_is_gone_for_the_fast_path_too(tmp_path: Path) -> None:
    async with hosted(tmp_path) as host:
        headers = host.headers("alice")
        status, _, _ = await exchange(host.served, headers, method="DELETE")
        assert status == 200
        answered = host.fast.answered
        status, _, body = await exchange(host.served, headers, host.request("ping"))
        assert status == 404
        assert b"Session not found" in body
        assert host.fast.answered == answered


async def test_a_call_on_the_fast_path_holds_the_session_open(tmp_path: Path) -> None:
    """The session's idle countdown starts again after a call answered the short way,
    as after one the SDK answered."""
    async with hosted(tmp_path) as host:
        transport = host.server.session_manager._server_instances[host.sessions["alice"]]
        timeout = host.server.session_manager.session_idle_timeout
        before = transport.idle_scope.deadline
        await anyio.sleep(0.05)
        await host.both("alice", host.request("ping"))
        after = transport.idle_scope.deadline
        assert after > before
        assert abs(after - (anyio.current_time() + timeout)) < 5
        assert transport._requests_in_flight == 0


async def test_an_sdk_without_the_parts_gets_no_fast_path(tmp_path: Path) -> None:
    from coderooms.mcp.fastpath import with_fast_path

    async with hosted(tmp_path) as host:
        server = host.server
        manager = server._lowlevel_server._session_manager
        server._lowlevel_server._session_manager = None
        try:
            assert with_fast_path(server, host.fast.app, path=MCP_PATH) is host.fast.app
        finally:
            server._lowlevel_server._session_manager = manager


@pytest.mark.parametrize(
    ("mode", "short_way"),
    [("legacy", True), ("auto", False)],
    ids=["handshake-session", "single-exchange"],
)
async def test_the_sdks_client_is_served(tmp_path: Path, mode: str, short_way: bool) -> None:
    """The SDK's own client over real HTTP (uvicorn, as `up` serves) lists the tools,
    calls them, is refused, and ends its session. With the initialize handshake
    (``legacy``: a session, as the 2025 revisions and most clients speak) its calls are
    the fast path's to answer; in the 2026 single-exchange protocol (``auto``: no
    session) every request is the SDK's own, as before."""
    import socket

    import uvicorn
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    from mcp import Client

    store = open_store(f"sqlite:///{tmp_path / 'rooms.db'}")
    book = TokenBook.for_store(store)
    try:
        await store.add_agent("alice")
        token = book.issue("alice")
        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
        service = RoomService(store, lambda: None, MentionDispatchPolicy(enabled=False))
        _, fast = http_mcp_app(service, book, store, f"http://127.0.0.1:{port}")
        config = uvicorn.Config(bearer_only(fast), log_level="warning", lifespan="on")
        server = uvicorn.Server(config)
        async with anyio.create_task_group() as group:
            group.start_soon(server.serve, [sock])
            with anyio.fail_after(60):
                while not server.started:
                    await anyio.sleep(0.01)
                http = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})
                url = f"http://127.0.0.1:{port}{MCP_PATH}"
                transport = streamable_http_client(url, http_client=http)
                async with Client(transport, mode=mode) as client:
                    names = {tool.name for tool in (await client.list_tools()).tools}
                    posted = await client.call_tool("room_post", {"content": "hi from the SDK"})
                    read = await client.call_tool("room_read", {})
                    refused = await client.call_tool("room_read", {"desk": "nowhere"})
            server.should_exit = True
        assert {"room_read", "room_post", "skim"} <= names
        assert posted.structured_content is not None
        assert posted.structured_content["author"]["id"] == "alice"
        assert read.structured_content is not None
        history = read.structured_content["history"]
        assert [row["content"] for row in history] == ["hi from the SDK"]
        assert refused.is_error
        assert refused.structured_content is not None
        assert refused.structured_content["error"]["type"] == "UnknownDesk"
        # tools/list and the three calls
        assert fast.answered == (4 if short_way else 0)
    finally:
        book.close()
        store.close()


async def test_up_opens_no_spans_when_nothing_traces(tmp_path: Path) -> None:
    from mcp.server._otel import OpenTelemetryMiddleware

    async with hosted(tmp_path) as host:
        chain = host.server._lowlevel_server.middleware
        assert not any(isinstance(step, OpenTelemetryMiddleware) for step in chain)


def test_up_keeps_the_spans_of_a_tracer_provider_set_before_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from mcp.server._otel import OpenTelemetryMiddleware
    from opentelemetry import trace

    from coderooms.cli.mcp_cmds import without_idle_tracing
    from coderooms.mcp.server import build_server, fixed_caller

    class Tracing(trace.TracerProvider):
        def get_tracer(self, *args: Any, **kwargs: Any) -> trace.Tracer:
            return trace.NoOpTracer()

    server = build_server(RoomService(None, lambda: None), fixed_caller("alice"))  # type: ignore[arg-type]
    monkeypatch.setattr(trace, "get_tracer_provider", lambda: Tracing())
    without_idle_tracing(server)
    chain = server._lowlevel_server.middleware
    assert any(isinstance(step, OpenTelemetryMiddleware) for step in chain)
    monkeypatch.setattr(trace, "get_tracer_provider", lambda: trace.ProxyTracerProvider())
    without_idle_tracing(server)
    assert not any(isinstance(step, OpenTelemetryMiddleware) for step in chain)
