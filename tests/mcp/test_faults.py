"""Faults under load, at the tool layer: outputs that could grow from small inputs stay
bounded, lenient input is refused naming the argument, and nothing tells an agent about
desks it does not belong to."""

from __future__ import annotations

import asyncio
import json
import subprocess
from pathlib import Path

import pytest
from mcp_harness import CODEROOMS, wire_line, wire_opening
from mcp_types import InputRequiredResult

from coderooms.errors import ECHO_CHARS, UnknownDesk
from coderooms.mcp.server import build_server, fixed_caller
from coderooms.mcp.service import READ_TEXT_BUDGET, RoomService, fit_text_budget
from coderooms.store import MESSAGE_BYTES_CAP, ParentInOtherDesk, SQLiteStore, UnknownParent

MESSAGES = 30


async def room(tmp_path: Path) -> SQLiteStore:
    store = SQLiteStore(tmp_path / "rooms.db")
    await store.add_agent("ada")
    await store.add_agent("bo")
    await store.create_desk("secret", "Secret", "the hidden plans")
    await store.add_desk_member("secret", "bo")
    await store.create_desk("eng", "Engineering")
    await store.add_desk_member("eng", "ada")
    await store.add_desk_member("eng", "bo")
    return store


async def test_an_unknown_desk_repeats_only_a_bounded_prefix_of_the_argument(
    tmp_path: Path,
) -> None:
    store = await room(tmp_path)
    huge = "d" * 10_000_000
    with pytest.raises(UnknownDesk) as caught:
        await RoomService(store).read("ada", huge)
    message = str(caught.value)
    assert len(message) < ECHO_CHARS + 200
    assert "d" * ECHO_CHARS + "… (10,000,000 characters)" in message
    assert caught.value.reference == huge  # the attribute keeps the value itself


async def test_an_unknown_tool_repeats_only_a_bounded_prefix_of_its_name(tmp_path: Path) -> None:
    server = build_server(RoomService(await room(tmp_path)), fixed_caller("ada"))
    result = await server.call_tool("t" * 100_000, {})
    assert not isinstance(result, InputRequiredResult) and result.is_error
    message = result.content[0].text  # type: ignore[union-attr]
    assert message.startswith("UnknownTool: there is no tool 'ttt")
    assert "… (100,000 characters)" in message
    assert len(message) < ECHO_CHARS + 500  # the prefix, and the list of the tools there are


async def test_room_read_holds_its_message_text_to_the_budget(tmp_path: Path) -> None:
    store = await room(tmp_path)
    body = "x" * (MESSAGE_BYTES_CAP - 16)
    posted = [await store.post("agent:bo", f"{n:04d}{body}", desk="eng") for n in range(MESSAGES)]
    service = RoomService(store)
    out = await service.read("ada", "eng")
    assert len(out.history) == MESSAGES
    assert sum(len(m.content) for m in out.history) <= READ_TEXT_BUDGET
    for message, row in zip(out.history, posted, strict=True):
        assert message.content.startswith(row.content[:100])
        assert f"of {len(row.content):,} characters shown" in message.content
        shown = f"room_read desk=eng thread={row.sequence} before={row.sequence + 1} window=1"
        assert shown in message.content
    # the way the mark names reads the message whole
    target = posted[7]
    whole = await service.read(
        "ada", "eng", thread=target.sequence, before=target.sequence + 1, window=1
    )
    assert [m.content for m in whole.history] == [target.content]


def test_messages_that_fit_are_not_cut_and_the_longest_are_cut_to_one_share() -> None:
    fitting = [(1, "eng", "a" * 10), (2, "eng", "b" * 10)]
    assert fit_text_budget(fitting, budget=20) == ["a" * 10, "b" * 10]
    assert fit_text_budget([(1, "eng", "a" * 5000)], budget=100) == ["a" * 5000]
    long = [(1, "eng", "short"), (2, "eng", "l" * 5000), (3, "eng", "m" * 5000)]
    cut = fit_text_budget(long, budget=2000)
    assert cut[0] == "short"
    assert sum(map(len, cut)) <= 2000
    assert cut[1].startswith("l" * 100)
    assert "room_read desk=eng thread=2 before=3 window=1" in cut[1]
    assert cut[1].index("\n[…") == cut[2].index("\n[…")  # one share for both


@pytest.mark.parametrize(
    ("tool", "arguments", "argument"),
    [
        ("room_read", {"window": True}, "window"),
        ("room_search", {"query": "x", "limit": "10"}, "limit"),
        ("room_read", {"desk": "General", "windw": 5}, "windw"),
        ("room_post", {"content": "hi", "reply_to": 1.0}, "reply_to"),
    ],
)
async def test_lenient_arguments_are_refused_naming_the_argument(
    tmp_path: Path, tool: str, arguments: dict[str, object], argument: str
) -> None:
    store = await room(tmp_path)
    server = build_server(RoomService(store), fixed_caller("ada"))
    result = await server.call_tool(tool, arguments)
    assert not isinstance(result, InputRequiredResult) and result.is_error
    message = result.content[0].text  # type: ignore[union-attr]
    assert message.startswith(f"InvalidArguments: the arguments of {tool}")
    assert f"{argument}: " in message
    assert await store.last_sequence() is None


async def test_the_input_schemas_say_unknown_arguments_are_refused(tmp_path: Path) -> None:
    server = build_server(RoomService(await room(tmp_path)), fixed_caller("ada"))
    for tool in await server.list_tools():
        assert tool.input_schema.get("additionalProperties") is False, tool.name


async def test_a_parent_in_a_desk_the_caller_cannot_see_is_an_unknown_parent(
    tmp_path: Path,
) -> None:
    store = await room(tmp_path)
    hidden = await store.post("agent:bo", "the plan", desk="secret")
    shared = await store.post("agent:bo", "in eng", desk="eng")
    service = RoomService(store)
    with pytest.raises(UnknownParent) as caught:
        await service.post("ada", "peek", "General", hidden.sequence)
    assert str(caught.value) == str(UnknownParent(hidden.sequence))
    with pytest.raises(UnknownParent):
        await service.post("ada", "peek", "General", 10_000)
    # a member of the parent's desk is told where it is, as before
    with pytest.raises(ParentInOtherDesk):
        await service.post("ada", "wrong desk", "General", shared.sequence)
    with pytest.raises(ParentInOtherDesk):
        await service.post("bo", "wrong desk", "eng", hidden.sequence)


async def test_room_pick_desks_lists_only_the_callers_own_desks(tmp_path: Path) -> None:
    service = RoomService(await room(tmp_path))
    mine = await service.pick("ada", "desks", "/./")
    assert {hit.id for hit in mine.hits} == {"General", "eng"}
    assert (await service.pick("ada", "desks", "secret")).hits == []
    assert (await service.pick("ada", "desks", "hidden plans")).hits == []
    theirs = await service.pick("bo", "desks", "secret")
    assert [hit.id for hit in theirs.hits] == ["secret"]


def test_bytes_that_are_not_utf8_are_refused_naming_the_argument(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'rooms.db'}"

    async def build() -> None:
        with SQLiteStore(tmp_path / "rooms.db") as store:
            await store.add_agent("ada")

    asyncio.run(build())
    post = (
        b'{"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "room_post", '
        b'"arguments": {"content": "caf\xe9 \xff"}}}\n'
    )
    lines = wire_opening("faults").encode() + post
    done = subprocess.run(
        [CODEROOMS, "--db", url, "mcp", "--agent", "ada"],
        input=lines,
        capture_output=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    answers = [json.loads(line) for line in done.stdout.splitlines()]
    refused = next(answer for answer in answers if answer.get("id") == 3)
    assert refused["error"]["code"] == -32602
    assert "params.arguments.content" in refused["error"]["message"]
    assert "not UTF-8" in refused["error"]["message"]

    async def stored() -> int | None:
        with SQLiteStore(tmp_path / "rooms.db") as store:
            return await store.last_sequence()

    assert asyncio.run(stored()) is None


def test_up_listens_without_nagles_delay() -> None:
    # with Nagle on, an answer written in two pieces waited ~40 ms for a delayed ACK
    import socket

    from coderooms.cli.mcp_cmds import _bind

    listener = _bind(0)
    try:
        client = socket.create_connection(listener.getsockname(), timeout=30)
        accepted, _ = listener.accept()
        with client, accepted:
            assert accepted.proto == socket.IPPROTO_TCP  # what asyncio looks for
            assert accepted.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) != 0
    finally:
        listener.close()


def test_an_unknown_method_repeats_only_a_bounded_prefix_of_its_name(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'rooms.db'}"
    subprocess.run([CODEROOMS, "--db", url, "agent", "add", "ada"], check=True, timeout=120)
    lines = wire_opening("faults") + wire_line({"jsonrpc": "2.0", "id": 1, "method": "m" * 100_000})
    done = subprocess.run(
        [CODEROOMS, "--db", url, "mcp", "--agent", "ada"],
        input=lines,
        capture_output=True,
        text=True,
        timeout=120,
    )
    refused = [json.loads(line) for line in done.stdout.splitlines()][-1]
    assert refused["id"] == 1 and refused["error"]["code"] == -32601
    assert len(json.dumps(refused)) < ECHO_CHARS + 200
    assert refused["error"]["data"].endswith("… (100,000 characters)")
