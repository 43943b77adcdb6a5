"""What a new user hit over MCP (issue 17): each test is one of the reported surprises."""

from __future__ import annotations

import asyncio
import json
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
from mcp_harness import CODEROOMS, store_with_agents, wire_call, wire_line, wire_opening
from mcp_repo import write_fixture_repo

from coderooms.mcp.errors import NoWorkspace
from coderooms.mcp.service import RoomService
from coderooms.store import UnknownAuthor, open_store

OPENING = wire_opening("new-user")


@pytest.fixture(scope="module")
def url(tmp_path_factory: pytest.TempPathFactory) -> str:
    base = tmp_path_factory.mktemp("new-user-mcp")
    return store_with_agents(f"sqlite:///{base / 'rooms.db'}", "alice")


def serve(url: str, lines: str, cwd: Path | None = None) -> list[dict[str, Any]]:
    done = subprocess.run(
        [CODEROOMS, "--db", url, "mcp", "--agent", "alice"],
        input=OPENING + lines,
        capture_output=True,
        text=True,
        timeout=180,
        cwd=cwd,
    )
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in done.stdout.splitlines()][1:]


def test_mcp_started_in_a_repository_serves_its_code_without_repo(url: str, tmp_path: Path) -> None:
    repo = write_fixture_repo(tmp_path / "repo")
    (answer,) = serve(url, wire_call(1, "seek", {"query": "apply_discount", "limit": 3}), cwd=repo)
    result = answer["result"]
    assert not result.get("isError"), result
    ids = [hit["id"] for hit in result["structuredContent"]["results"]]
    assert "shop/cart.py::apply_discount" in ids


def in_room(tmp_path: Path, scenario: Any) -> None:
    """Run ``scenario(store, service)`` on a fresh store with agents alice and bob."""

    async def go() -> None:
        store = open_store(f"sqlite:///{tmp_path / 'rooms.db'}")
        try:
            await store.add_agent("alice")
            await store.add_agent("bob")
            await scenario(store, RoomService(store))
        finally:
            store.close()

    asyncio.run(go())


def test_a_search_by_an_author_nobody_has_is_refused_as_on_the_commandwire_line(
    tmp_path: Path,
) -> None:
    async def scenario(store: Any, service: RoomService) -> None:
        await store.post("agent:bob", "deploy friday")
        assert [h.sequence for h in (await service.search("alice", "deploy", author="bob")).hits]
        for nobody in ("nobody", "agent:nobody"):
            with pytest.raises(UnknownAuthor, match="is not on the roster"):
                await service.search("alice", "deploy", author=nobody)

    in_room(tmp_path, scenario)


def test_a_service_built_without_a_repository_says_so(tmp_path: Path) -> None:
    async def scenario(store: Any, service: RoomService) -> None:
        with pytest.raises(NoWorkspace, match="no repository"):
            await service.focus("alice", "anything")

    in_room(tmp_path, scenario)


def test_every_request_is_answered_with_its_id_where_the_id_can_be_read(url: str) -> None:
    lines = (
        wire_line({"id": 1, "method": "ping"})  # no "jsonrpc": Invalid Request, id kept
        + wire_line({"id": "two", "method": "tools/list", "params": {}})
        + wire_line({"id": 3.5, "method": "ping"})
        + wire_line({"jsonrpc": "2.0", "id": 4.5, "method": "ping"})
        + wire_line({"jsonrpc": "2.0", "id": True, "method": "ping"})  # no id to read
        + wire_line({"method": "ping"})  # not JSON-RPC, and no id
        + wire_line({"jsonrpc": "2.0", "id": 9, "method": "ping"})
    )
    answers = serve(url, lines)
    assert sorted(
        ((a["id"] is None, str(a["id"])), a.get("error", {}).get("code")) for a in answers
    ) == sorted(
        [
            ((False, "1"), -32600),
            ((False, "two"), -32600),
            ((False, "3.5"), -32600),
            ((False, "4.5"), -32600),
            ((True, "None"), -32600),
            ((True, "None"), -32600),
            ((False, "9"), None),
        ]
    )


def test_mcp_answers_say_when_each_message_was_posted(tmp_path: Path) -> None:
    from coderooms.mcp.render import render_inbox, render_pins, render_read, render_search

    stamp = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ")

    async def scenario(store: Any, service: RoomService) -> None:
        posted = await store.post("agent:bob", "deploy today @alice\n!pin")
        assert posted.posted_at is not None and stamp.fullmatch(posted.posted_at)
        shown = posted.posted_at.replace("T", " ").replace("Z", " UTC")
        read = await service.read("alice")
        assert read.model_dump(mode="json")["history"][0]["posted_at"] == posted.posted_at
        assert f"[#1] @bob, {shown}:" in render_read(read)
        found = await service.search("alice", "deploy")
        assert found.hits[0].posted_at == posted.posted_at
        assert f"@bob, {shown}, prefix match" in render_search(found)
        board = await service.pins("alice")
        assert board.pins[0].posted_at == posted.posted_at
        assert f"(posted {shown})" in render_pins(board)
        inbox = await service.inbox("alice")
        assert inbox.mentions[0].posted_at == posted.posted_at
        assert f"in General, {shown} (mentions you)" in render_inbox(inbox)

    in_room(tmp_path, scenario)


def test_every_refusal_carries_its_type_in_structured_content(url: str) -> None:
    lines = (
        wire_call(1, "no_such_tool", {})
        + wire_call(2, "room_read", {"window": 0})
        + wire_call(3, "room_read", {"desk": "nowhere"})
        + wire_call(4, "room_read", {"window": "lots"})
        + wire_call(5, "room_search", {"query": "/(/"})
    )
    answers = {a["id"]: a["result"] for a in serve(url, lines)}
    expected = {
        1: "UnknownTool",
        2: "ArgumentOutOfRange",
        3: "UnknownDesk",
        4: "InvalidArguments",
        5: "InvalidPattern",
    }
    for request_id, kind in expected.items():
        result = answers[request_id]
        assert result["isError"] is True
        error = result["structuredContent"]["error"]
        assert error["type"] == kind, result
        assert result["content"][0]["text"] == f"{kind}: {error['message']}"
    assert "there is no tool 'no_such_tool'" in answers[1]["content"][0]["text"]
    assert "room_read" in answers[1]["structuredContent"]["error"]["message"]


def test_the_inbox_cursor_never_names_a_row_the_caller_cannot_read(tmp_path: Path) -> None:
    async def scenario(store: Any, service: RoomService) -> None:
        await store.create_desk("secret")
        await store.add_desk_member("secret", "bob")
        seen = await store.post("agent:bob", "hello @alice")
        hidden = [await store.post("agent:bob", f"quiet {i}", desk="secret") for i in range(3)]
        first = await service.inbox("alice")
        assert [m.sequence for m in first.mentions] == [seen.sequence]
        assert first.cursor == seen.sequence  # not the hidden desk's newest row
        assert first.more is False
        again = await service.inbox("alice", since=first.cursor)
        assert again.cursor == first.cursor and again.mentions == []
        assert all(row.sequence not in (first.cursor, again.cursor) for row in hidden)
        own = await store.post("agent:alice", "my own row")
        assert (await service.inbox("alice", since=again.cursor)).cursor == own.sequence

    in_room(tmp_path, scenario)
