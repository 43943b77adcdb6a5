"""The stdio wire itself: every request answered (bad lines too), nothing lost when the
input ends first, and a closed stdin or stdout refused in one line."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import threading
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from mcp_harness import CODEROOMS
from mcp_types import JSONRPCResponse

from coderooms.mcp import stdio
from coderooms.store import open_store

POSTS = 10


@pytest.fixture(scope="module")
def url(tmp_path_factory: pytest.TempPathFactory) -> str:
    base = tmp_path_factory.mktemp("wire")
    url = f"sqlite:///{base / 'rooms.db'}"

    async def build() -> None:
        store = open_store(url)
        try:
            await store.add_agent("alice")
        finally:
            store.close()

    asyncio.run(build())
    return url


def _line(message: dict[str, Any]) -> str:
    return json.dumps(message) + "\n"


def _opening() -> str:
    return _line(
        {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "wire-test", "version": "1"},
            },
        }
    ) + _line({"jsonrpc": "2.0", "method": "notifications/initialized"})


def _posts(tag: str) -> str:
    return "".join(
        _line(
            {
                "jsonrpc": "2.0",
                "id": i,
                "method": "tools/call",
                "params": {
                    "name": "room_post",
                    "arguments": {"desk": "General", "content": f"{tag} {i}"},
                },
            }
        )
        for i in range(1, POSTS + 1)
    )


def _answers(stdout: str) -> dict[Any, dict[str, Any]]:
    out: dict[Any, dict[str, Any]] = {}
    for line in stdout.splitlines():
        message = json.loads(line)
        out[message.get("id")] = message
    return out


def _serve(url: str, stdin: Any, **kwargs: Any) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [CODEROOMS, "--db", url, "mcp", "--agent", "alice"],
        stdin=stdin,
        capture_output=True,
        text=True,
        timeout=120,
        **kwargs,
    )


def _assert_every_post_answered(stdout: str) -> None:
    answers = _answers(stdout)
    assert sorted(k for k in answers if k) == list(range(1, POSTS + 1))
    for i in range(1, POSTS + 1):
        result = answers[i]["result"]
        assert not result.get("isError"), result
        assert result["structuredContent"]["sequence"] > 0


def test_requests_in_a_file_are_all_answered_before_the_server_ends(
    url: str, tmp_path: Path
) -> None:
    requests = tmp_path / "requests.jsonl"
    requests.write_text(_opening() + _posts("from a file"), encoding="utf-8")
    with requests.open("rb") as source:
        done = _serve(url, source)
    assert done.returncode == 0, done.stderr
    _assert_every_post_answered(done.stdout)


def test_requests_on_a_pipe_closed_at_once_are_all_answered(url: str) -> None:
    done = _serve(url, None, input=_opening() + _posts("through a pipe"))
    assert done.returncode == 0, done.stderr
    _assert_every_post_answered(done.stdout)


def test_bad_lines_get_json_rpc_errors_and_the_server_keeps_serving(url: str) -> None:
    lone = '{"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": '
    lone += '"room_post", "arguments": {"desk": "General", "content": "\\ud800"}}}\n'
    lines = (
        _opening()
        + "not json\n"
        + "[]\n"
        + "\n"
        + _line({"jsonrpc": "2.0", "id": 5})
        + _line({"jsonrpc": "2.0", "id": 6, "method": "ping", "params": 5})
        + lone
        + _line({"jsonrpc": "2.0", "id": 8, "method": "ping"})
    )
    done = _serve(url, None, input=lines)
    assert done.returncode == 0, done.stderr
    errors = [json.loads(line) for line in done.stdout.splitlines() if '"error"' in line]
    assert [(e["id"], e["error"]["code"]) for e in errors] == [
        (None, -32700),  # not JSON
        (None, -32600),  # not an object
        (5, -32600),  # no method, no result
        (6, -32600),  # params that are not an object
        (7, -32602),  # a lone surrogate
    ]
    assert "surrogate" in errors[-1]["error"]["message"]
    assert _answers(done.stdout)[8]["result"] == {}
    notes = done.stderr.splitlines()
    assert len(notes) == len(errors)
    assert all(note.startswith(stdio.NOTE_PREFIX) for note in notes)


@pytest.mark.parametrize(("closed", "stream"), [(0, "input"), (1, "output")])
def test_a_closed_stdin_or_stdout_is_refused_in_one_line(
    url: str, closed: int, stream: str
) -> None:
    def close() -> None:
        os.close(closed)

    done = subprocess.run(
        [CODEROOMS, "--db", url, "mcp", "--agent", "alice"],
        stdin=subprocess.DEVNULL,
        stdout=None if closed == 1 else subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        timeout=120,
        preexec_fn=close,  # noqa: PLW1509 - only closes a descriptor
    )
    assert done.returncode == 1
    assert done.stderr.startswith(f"error: standard {stream} is closed")
    assert done.stderr.count("\n") == 1


Ends = tuple[Callable[[], Awaitable[object]], Callable[[bytes], Awaitable[None]], list[Any]]


@pytest.mark.parametrize("ends", ["pipe", "thread"])
def test_a_line_over_the_limit_is_skipped_to_its_newline(
    monkeypatch: pytest.MonkeyPatch, ends: str
) -> None:
    monkeypatch.setattr(stdio, "MAX_LINE_BYTES", 64)
    read_fd, feed_fd = os.pipe()
    sink_fd, drain_fd = os.pipe()
    data = b'{"a": 1}\n' + b"x" * 1000 + b"\n" + b'{"b": 2}\n' + b"y" * 70
    feeder = threading.Thread(target=lambda: (os.write(feed_fd, data), os.close(feed_fd)))
    feeder.start()

    async def read_all() -> list[object]:
        if ends == "pipe":
            readline, _, transports = await stdio._pipe_ends(read_fd, drain_fd)
        else:
            readline, _, transports = stdio._thread_ends(read_fd, drain_fd)
        got: list[object] = []
        try:
            while (line := await readline()) != b"":
                got.append(line)
        finally:
            for transport in transports:
                transport.close()
        return got

    try:
        got = asyncio.run(read_all())
    finally:
        feeder.join()
        for fd in (read_fd, sink_fd, drain_fd):
            os.close(fd)
    assert got == [b'{"a": 1}\n', stdio._OVERLONG, b'{"b": 2}\n', stdio._OVERLONG]


def test_an_answer_is_one_line_of_utf8_json_as_the_sdk_spells_it() -> None:
    answer = JSONRPCResponse(
        jsonrpc="2.0", id=7, result={"content": [{"type": "text", "text": "naïve → ok"}]}
    )
    line = stdio._serialise(answer)
    assert line == answer.model_dump_json(by_alias=True, exclude_unset=True).encode("utf-8")
    assert b"\n" not in line


def test_text_utf8_cannot_carry_is_replaced_in_an_answer_not_fatal() -> None:
    answer = JSONRPCResponse(jsonrpc="2.0", id=8, result={"path": "caf\udce9.py"})
    decoded = json.loads(stdio._serialise(answer))
    assert decoded == {"jsonrpc": "2.0", "id": 8, "result": {"path": "caf?.py"}}
