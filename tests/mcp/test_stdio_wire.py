"""The stdio wire itself: every request answered (bad lines too), nothing lost when the
input ends first, and a closed stdin or stdout refused in one line."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import subprocess
import threading
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp_harness import CODEROOMS, store_with_agents, wire_line, wire_opening
from mcp_types import JSONRPCResponse

from coderooms.mcp import stdio

POSTS = 10


@pytest.fixture(scope="module")
def url(tmp_path_factory: pytest.TempPathFactory) -> str:
    base = tmp_path_factory.mktemp("wire")
    return store_with_agents(f"sqlite:///{base / 'rooms.db'}", "alice")


_line = wire_line


def _opening() -> str:
    return wire_opening("wire-test")


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


def test_an_unknown_prompt_is_a_bad_parameter_with_nothing_on_stderr(url: str) -> None:
    # the SDK answered it with error code 0 and wrote a traceback to stderr
    lines = (
        _opening()
        + _line({"jsonrpc": "2.0", "id": 1, "method": "prompts/get", "params": {"name": "x"}})
        + _line({"jsonrpc": "2.0", "id": 2, "method": "prompts/list"})
    )
    done = _serve(url, None, input=lines)
    assert done.returncode == 0 and done.stderr == ""
    answers = _answers(done.stdout)
    assert answers[1]["error"] == {"code": -32602, "message": "Unknown prompt: x"}
    assert answers[2]["result"] == {"prompts": []}


def test_a_request_before_the_handshake_or_with_bad_params_says_what_is_wrong(url: str) -> None:
    # the SDK answered each of these "Invalid request parameters", and nothing more
    call = {"jsonrpc": "2.0", "method": "tools/call"}
    lines = (
        _line({**call, "id": 1, "params": {"name": "room_read", "arguments": {}}})
        + _opening()
        + _line({**call, "id": 2, "params": {"name": "room_read", "arguments": []}})
        + _line({**call, "id": 3, "params": {"arguments": {}}})
        + _line({"jsonrpc": "2.0", "id": 4, "method": "logging/setLevel", "params": {"level": "x"}})
    )
    done = _serve(url, None, input=lines)
    assert done.returncode == 0 and done.stderr == ""
    errors = {k: v["error"] for k, v in _answers(done.stdout).items() if "error" in v}
    assert {e["code"] for e in errors.values()} == {-32602}
    assert errors[1]["message"].startswith("the session is not initialized: send initialize")
    assert errors[2]["message"] == (
        "Invalid params for tools/call: params.arguments: Input should be a valid dictionary"
    )
    assert errors[3]["message"] == "Invalid params for tools/call: params.name: Field required"
    assert errors[4]["message"].startswith("Invalid params for logging/setLevel: params.level: ")


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


def test_lines_read_on_a_thread_are_read_by_one_thread_not_one_each() -> None:
    read_fd, feed_fd = os.pipe()
    sink_fd, drain_fd = os.pipe()
    os.write(feed_fd, b"".join(b'{"n": %d}\n' % n for n in range(50)))
    os.close(feed_fd)
    started: list[str] = []
    real_start = threading.Thread.start

    def counted_start(thread: threading.Thread) -> None:
        started.append(thread.name)
        real_start(thread)

    async def read_all() -> list[object]:
        readline, _, _ = stdio._thread_ends(read_fd, drain_fd)
        got: list[object] = []
        while (line := await readline()) != b"":
            got.append(line)
        return got

    try:
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(threading.Thread, "start", counted_start)
            got = asyncio.run(read_all())
    finally:
        for fd in (read_fd, sink_fd, drain_fd):
            os.close(fd)
    assert got == [b'{"n": %d}\n' % n for n in range(50)]
    assert started.count("coderooms-stdin") == 1


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


def _ping(request_id: object) -> str:
    return _line({"jsonrpc": "2.0", "id": request_id, "method": "ping"})


def test_a_request_whose_id_is_neither_string_nor_integer_is_refused_not_dropped(
    url: str,
) -> None:
    progress = {"progressToken": "t", "progress": 1, "id": 3}  # an "id" inside params only
    lines = (
        _opening()
        + "".join(_ping(request_id) for request_id in (None, True, 1.5, {"a": 1}, [1]))
        + _line({"jsonrpc": "2.0", "method": "notifications/progress", "params": progress})
        + _ping(8)
    )
    done = _serve(url, None, input=lines)
    assert done.returncode == 0, done.stderr
    answers = [json.loads(line) for line in done.stdout.splitlines()][1:]
    assert [(a["id"], a.get("error", {}).get("code")) for a in answers] == [
        (None, -32600),
        (None, -32600),
        (1.5, -32600),  # readable, so answered with it (issue 17)
        (None, -32600),
        (None, -32600),
        (8, None),
    ]


def _inbound(*messages: dict[str, Any]) -> tuple[stdio._Wire, stdio._Inbound]:
    """A wire and a read stream over ``messages``, then the end of input."""
    lines = [_line(message).encode() for message in messages] + [b""]

    async def readline() -> object:
        return lines.pop(0)

    async def write(data: bytes) -> None:
        return None

    wire = stdio._Wire(write)
    return wire, stdio._Inbound(readline, wire)


def _call(request_id: object) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": {"name": "x"}}


def test_a_cancel_naming_the_id_as_a_string_settles_the_request() -> None:
    cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "1"}}
    wire, inbound = _inbound(_call(1), cancel)

    async def read_to_the_end() -> None:
        await inbound.receive()
        await inbound.receive()  # the SDK cancels request 1: it is never answered
        with anyio.fail_after(5), pytest.raises(anyio.EndOfStream):
            await inbound.receive()

    asyncio.run(read_to_the_end())


def test_a_request_id_used_twice_is_waited_for_twice() -> None:
    wire, inbound = _inbound(_call(7), _call(7))

    async def read_to_the_end() -> None:
        await inbound.receive()
        await inbound.receive()
        wire.done(7)
        ended = anyio.Event()

        async def end() -> None:
            with pytest.raises(anyio.EndOfStream):
                await inbound.receive()
            ended.set()

        async with anyio.create_task_group() as tg:
            tg.start_soon(end)
            await anyio.sleep(0.2)
            assert not ended.is_set()  # one of the two is still being answered
            wire.done(7)
            with anyio.fail_after(5):
                await ended.wait()

    asyncio.run(read_to_the_end())


def test_answers_still_buffered_when_the_input_ends_are_written_in_full(url: str) -> None:
    # answers larger than a pipe holds, to a client that reads only after sending it all
    name = "nosuch" + "y" * 100_000
    calls = "".join(
        _line({"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": {"name": name}})
        for i in range(1, 4)
    )
    server = subprocess.Popen(
        [CODEROOMS, "--db", url, "mcp", "--agent", "alice"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert server.stdin is not None
    server.stdin.write((_opening() + calls).encode())
    server.stdin.close()
    with contextlib.suppress(subprocess.TimeoutExpired):
        server.wait(timeout=3)  # the server would end here, its last answer unsent
    assert server.stdout is not None and server.stderr is not None
    out, err = server.stdout.read(), server.stderr.read()
    assert server.wait(timeout=120) == 0, err
    answers = _answers(out.decode())
    assert sorted(answers) == [0, 1, 2, 3]


@pytest.mark.parametrize("how", ["closed", "broken"])
def test_notes_to_a_closed_or_broken_stderr_do_not_end_the_server(url: str, how: str) -> None:
    read_end, write_end = os.pipe()
    os.close(read_end)

    def close_stderr() -> None:
        os.close(2)

    try:
        done = subprocess.run(
            [CODEROOMS, "--db", url, "mcp", "--agent", "alice"],
            input=_opening() + "not json\n" + _ping(2),
            stdout=subprocess.PIPE,
            stderr=write_end if how == "broken" else None,
            text=True,
            timeout=120,
            preexec_fn=close_stderr if how == "closed" else None,  # noqa: PLW1509
        )
    finally:
        os.close(write_end)
    assert done.returncode == 0
    answers = _answers(done.stdout)
    assert answers[None]["error"]["code"] == -32700
    assert answers[2]["result"] == {}


def test_an_output_that_fails_ends_the_server_with_one_error_line_not_a_traceback(
    url: str, tmp_path: Path
) -> None:
    requests = tmp_path / "requests.jsonl"
    requests.write_text(_opening() + _ping(2), encoding="utf-8")
    with requests.open("rb") as source, open("/dev/full", "wb") as full:
        done = subprocess.run(
            [CODEROOMS, "--db", url, "mcp", "--agent", "alice"],
            stdin=source,
            stdout=full,
            stderr=subprocess.PIPE,
            text=True,
            timeout=120,
        )
    assert done.returncode == 1, done.stderr
    assert done.stderr.startswith("error: writing to standard output failed (No space left")
    assert done.stderr.count("\n") == 1


def test_json_nested_too_deeply_is_refused_not_fatal(url: str) -> None:
    deep = '{"jsonrpc": "2.0", "id": 3, "method": "ping", "params": {"a": %s}}\n'
    lines = (
        _opening()
        + deep % ("[" * 100_000 + "]" * 100_000)
        + deep % ("[" * 900 + "]" * 900)
        + _ping(4)
    )
    done = _serve(url, None, input=lines)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    answers = [json.loads(line) for line in done.stdout.splitlines()][1:]
    assert len(answers) == 3
    assert answers[0] == {
        "jsonrpc": "2.0",
        "id": None,
        "error": {"code": -32700, "message": answers[0]["error"]["message"]},
    }
    assert answers[1]["id"] in (None, 3)
    assert answers[2] == {"jsonrpc": "2.0", "id": 4, "result": {}}


def test_a_byte_order_mark_before_the_first_line_is_ignored(url: str) -> None:
    done = _serve(url, None, input="\ufeff" + _opening() + _ping(2))
    assert done.returncode == 0, done.stderr
    answers = _answers(done.stdout)
    assert sorted(answers) == [0, 2]
    assert done.stderr == ""


def test_the_pipes_are_left_blocking_for_whoever_shares_them(url: str) -> None:
    stdin_read, stdin_write = os.pipe()
    stdout_read, stdout_write = os.pipe()
    os.write(stdin_write, (_opening() + _ping(2)).encode())
    os.close(stdin_write)
    try:
        done = subprocess.run(
            [CODEROOMS, "--db", url, "mcp", "--agent", "alice"],
            stdin=stdin_read,
            stdout=stdout_write,
            stderr=subprocess.PIPE,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr
        assert os.get_blocking(stdin_read)
        assert os.get_blocking(stdout_write)
    finally:
        for fd in (stdin_read, stdout_read, stdout_write):
            os.close(fd)
