"""End to end over streamable HTTP: `coderooms up` in a subprocess, the SDK's client with
per-agent bearer tokens from `coderooms agent token`."""

from __future__ import annotations

import asyncio
import json
import re
import subprocess
from collections.abc import Iterator

import httpx2
import pytest
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp_harness import (
    CALL_TIMEOUT_S,
    CODEROOMS,
    Sessions,
    agent_token,
    ok,
    serving_up,
    text_of,
)
from mcp_repo import write_fixture_repo

from coderooms.store import open_store
from mcp import Client

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "test", "version": "0"},
    },
}
ACCEPT = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


def _http(url: str, token: str) -> Client:
    http = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})
    return Client(streamable_http_client(url, http_client=http))


class Server:
    def __init__(self, process: subprocess.Popen[str], url: str, banner: str) -> None:
        self.process = process
        self.url = url
        self.banner = banner


@pytest.fixture(scope="module")
def served(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[Server, dict[str, str], str]]:
    base = tmp_path_factory.mktemp("http")
    repo = write_fixture_repo(base / "repo")
    db = f"sqlite:///{base / 'rooms.db'}"

    async def setup() -> None:
        store = open_store(db)
        try:
            for agent in ("alice", "bob", "erin"):
                await store.add_agent(agent)
        finally:
            store.close()

    asyncio.run(setup())
    tokens = {agent: agent_token(db, agent) for agent in ("alice", "bob", "erin")}
    with serving_up(db, repo, base) as process:
        assert process.stdout is not None
        first = process.stdout.readline()
        found = re.search(r"serving MCP at (http://127\.0\.0\.1:\d+/mcp)", first)
        assert found, first
        banner = first
        while True:  # the configuration block ends with the token hint
            line = process.stdout.readline()
            banner += line
            if not line or line.startswith("Get a token with"):
                break
        yield Server(process, found.group(1), banner), tokens, db


@pytest.fixture(scope="module")
def sessions(served: tuple[Server, dict[str, str], str]) -> Iterator[Sessions]:
    server, tokens, _ = served
    factories = {
        agent: (lambda agent=agent: _http(server.url, tokens[agent])) for agent in ("alice", "bob")
    }
    with Sessions(factories) as opened:
        yield opened


def test_up_prints_a_client_configuration_to_paste(
    served: tuple[Server, dict[str, str], str],
) -> None:
    server, _, _ = served
    start = server.banner.index("{")
    end = server.banner.rindex("}") + 1
    config = json.loads(server.banner[start:end])
    entry = config["mcpServers"]["coderooms"]
    assert entry["url"] == server.url
    assert entry["headers"] == {"Authorization": "Bearer <TOKEN>"}
    assert "coderooms agent token AGENT_ID" in server.banner


def test_the_tool_list_is_served_over_http(sessions: Sessions) -> None:
    names = {tool.name for tool in sessions.tools("alice").tools}
    assert {"room_read", "room_post", "room_inbox", "focus", "seek", "impact"} <= names


def test_each_token_acts_as_its_own_agent(sessions: Sessions) -> None:
    posted = ok(sessions.call("alice", "room_post", {"content": "over http from alice"}))
    assert posted["author"]["id"] == "alice"
    reply = ok(
        sessions.call(
            "bob", "room_post", {"content": "@alice heard you", "reply_to": posted["sequence"]}
        )
    )
    assert reply["author"]["id"] == "bob"
    read = ok(sessions.call("alice", "room_read", {}))
    roles = {row["sequence"]: (row["author"]["id"], row["role"]) for row in read["history"]}
    assert roles[posted["sequence"]] == ("alice", "assistant")
    assert roles[reply["sequence"]] == ("bob", "user")
    inbox = ok(sessions.call("alice", "room_inbox", {}))
    assert [m["sequence"] for m in inbox["mentions"]] == [reply["sequence"]]


def _initialize(url: str, headers: dict[str, str]) -> httpx2.Response:
    return httpx2.post(url, json=INITIALIZE, headers=ACCEPT | headers, timeout=CALL_TIMEOUT_S)


def test_no_token_no_access(served: tuple[Server, dict[str, str], str]) -> None:
    server, tokens, _ = served
    for headers in (
        {},
        {"Authorization": "Bearer crt_not-a-real-token"},
        {"Authorization": "Basic " + tokens["alice"]},
    ):
        response = _initialize(server.url, headers)
        assert response.status_code == 401
        assert response.headers["www-authenticate"].startswith("Bearer ")
    allowed = _initialize(server.url, {"Authorization": f"Bearer {tokens['alice']}"})
    assert allowed.status_code == 200


def test_a_reissued_token_replaces_the_old_one(served: tuple[Server, dict[str, str], str]) -> None:
    server, tokens, db = served
    old = tokens["erin"]
    assert _initialize(server.url, {"Authorization": f"Bearer {old}"}).status_code == 200
    new = agent_token(db, "erin")
    assert _initialize(server.url, {"Authorization": f"Bearer {old}"}).status_code == 401
    assert _initialize(server.url, {"Authorization": f"Bearer {new}"}).status_code == 200
    tokens["erin"] = new


def test_a_retired_agents_token_is_refused(served: tuple[Server, dict[str, str], str]) -> None:
    server, tokens, db = served
    done = subprocess.run(
        [CODEROOMS, "--db", db, "agent", "retire", "erin"],
        capture_output=True,
        text=True,
        timeout=CALL_TIMEOUT_S,
    )
    assert done.returncode == 0, done.stderr
    response = _initialize(server.url, {"Authorization": f"Bearer {tokens['erin']}"})
    assert response.status_code == 401
    refused = subprocess.run(
        [CODEROOMS, "--db", db, "agent", "token", "erin"],
        capture_output=True,
        text=True,
        timeout=CALL_TIMEOUT_S,
    )
    assert refused.returncode == 1
    assert refused.stderr == "error: agent 'erin' is retired and can no longer use the room\n"


def test_focus_over_http_on_the_fixture_repository(sessions: Sessions) -> None:
    result = sessions.call(
        "bob", "focus", {"goal": "apply_discount rounds the discounted total wrong"}
    )
    focused = ok(result)
    assert focused["focus_set"][0]["id"] == "shop/cart.py"
    assert focused["budget"]["used"] <= focused["budget"]["limit"]
    assert "def apply_discount" in text_of(result)


def test_up_refuses_a_port_in_use(served: tuple[Server, dict[str, str], str]) -> None:
    server, _, db = served
    port = server.url.split(":")[2].split("/")[0]
    done = subprocess.run(
        [CODEROOMS, "--db", db, "up", "--port", port],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=CALL_TIMEOUT_S,
    )
    assert done.returncode == 1
    assert done.stderr.startswith(f"error: cannot listen on 127.0.0.1:{port}")


def test_oauth_discovery_ends_with_use_a_bearer_token(
    served: tuple[Server, dict[str, str], str],
) -> None:
    """Issue 17: the server advertised an authorization server that answered 404. It now
    advertises none, and every step of discovery says how to get in."""
    server, _, _ = served
    refused = _initialize(server.url, {})
    assert refused.status_code == 401
    challenge = refused.headers["www-authenticate"]
    assert "resource_metadata" not in challenge  # no metadata to follow
    assert "Authorization: Bearer TOKEN" in challenge
    assert "coderooms agent token" in refused.json()["error_description"]
    base = server.url.removesuffix("/mcp")
    for path in (
        "/.well-known/oauth-protected-resource/mcp",
        "/.well-known/oauth-protected-resource",
        "/.well-known/oauth-authorization-server",
        "/.well-known/openid-configuration",
    ):
        answer = httpx2.get(base + path, timeout=CALL_TIMEOUT_S)
        assert answer.status_code == 404, path
        assert "authorization_servers" not in answer.text
        assert "Authorization: Bearer TOKEN" in answer.json()["error_description"], path


def test_up_serves_on_uvloop_with_the_c_http_parser() -> None:
    import sys

    from coderooms.cli.mcp_cmds import event_loop_options

    assert event_loop_options() == {"use_uvloop": sys.platform != "win32"}


def test_a_response_head_and_body_leave_in_one_write() -> None:
    from coderooms.mcp.httpwire import CoalescingTransport

    class Recording:
        def __init__(self) -> None:
            self.writes: list[bytes] = []
            self.closed = False

        def write(self, data: bytes) -> None:
            self.writes.append(data)

        def is_closing(self) -> bool:
            return self.closed

        def close(self) -> None:
            self.closed = True

    async def scenario() -> tuple[list[bytes], list[bytes], bool]:
        sent = Recording()
        transport = CoalescingTransport(sent, asyncio.get_running_loop())  # type: ignore[arg-type]
        transport.write(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n")
        transport.write(b"{}")
        within_the_turn = list(sent.writes)
        await asyncio.sleep(0)
        after_the_turn = list(sent.writes)
        transport.write(b"bye")
        transport.close()  # what was written goes out before the close
        return within_the_turn, after_the_turn + sent.writes[len(after_the_turn) :], sent.closed

    within, after, closed = asyncio.run(scenario())
    assert within == []
    assert after == [b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n{}", b"bye"]
    assert closed


def test_up_keeps_its_startup_heap_out_of_later_collections() -> None:
    """A full garbage collection under load walked the whole index and stopped every
    agent for hundreds of milliseconds; `up` freezes what startup made before serving."""
    import sys

    probe = (
        "import gc, time\n"
        "from coderooms.cli.mcp_cmds import freeze_startup_heap\n"
        "kept = [[n] for n in range(300_000)]\n"
        "freeze_startup_heap()\n"
        "started = time.process_time(); gc.collect(); walked = time.process_time() - started\n"
        "print(gc.get_freeze_count() > len(kept), walked)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=CALL_TIMEOUT_S
    )
    frozen, walked = done.stdout.split()
    assert frozen == "True", done.stderr
    assert float(walked) < 0.05


def test_unreadable_requests_are_refused_in_words_a_client_can_act_on(
    served: tuple[Server, dict[str, str], str],
) -> None:
    server, tokens, db = served
    auth = {"Authorization": f"Bearer {tokens['bob']}"}
    opened = _initialize(server.url, auth)
    session = {"mcp-session-id": opened.headers["mcp-session-id"]} | auth
    version = {"MCP-Protocol-Version": "2025-06-18"}
    initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    httpx2.post(server.url, json=initialized, headers=ACCEPT | session | version)

    def post(body: bytes, headers: dict[str, str]) -> httpx2.Response:
        return httpx2.post(
            server.url, content=body, headers=ACCEPT | session | headers, timeout=CALL_TIMEOUT_S
        )

    def call(content: str, request_id: int) -> bytes:
        arguments = '{"name":"room_post","arguments":{"content":"' + content + '"}}'
        return (
            f'{{"jsonrpc":"2.0","id":{request_id},"method":"tools/call","params":{arguments}}}'
        ).encode()

    listing = b'{"jsonrpc":"2.0","id":2,"method":"tools/list"}'
    refused = {
        "an unknown protocol version": (
            post(listing, {"MCP-Protocol-Version": "1999-01-01"}),
            None,
            "unsupported MCP-Protocol-Version '1999-01-01'; this server speaks",
        ),
        "a batch": (post(b" [" + listing + b"]", version), None, "a batch (a JSON array"),
        "a lone surrogate": (
            post(call("x\\ud800", 3), version),
            3,
            "params.arguments.content holds bytes that are not UTF-8 or a lone UTF-16",
        ),
        "bytes that are not UTF-8": (
            post(call("x\xff", 4).replace(b"\xc3\xbf", b"\xff"), version),
            None,
            "the body is not UTF-8 (byte 0xff at offset",
        ),
    }
    for case, (response, request_id, words) in refused.items():
        assert response.status_code == 400, case
        answer = response.json()
        assert answer["id"] == request_id, case
        assert words in answer["error"]["message"], (case, answer)
        assert "validation error" not in answer["error"]["message"]
    # surrogates in a pair are text: that post goes through
    posted = post(call("smile \\ud83d\\ude00", 5), version).json()
    assert posted["result"]["isError"] is False, posted
    sequence = posted["result"]["structuredContent"]["sequence"]
    with open_store(db) as store:
        newest = asyncio.run(store.read_before(None, 1)).messages[0]
    assert (newest.sequence, newest.content) == (sequence, "smile \U0001f600")
