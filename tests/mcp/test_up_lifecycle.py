"""`coderooms up` from start to stop: a start that fails changes nothing, a stop asked
for (Ctrl-C, SIGTERM) while serving is a quiet success, and one that comes during
start-up is a one-line error."""

from __future__ import annotations

import asyncio
import signal
import socket
import sqlite3
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest
from click.testing import CliRunner
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp_harness import CALL_TIMEOUT_S, CODEROOMS, Sessions, agent_token, ok
from mcp_repo import write_fixture_repo

from coderooms.cli import main
from coderooms.cli.app import Terminated
from coderooms.cli.mcp_cmds import GRACEFUL_SHUTDOWN_S
from coderooms.mcp.tokens import TokenBook
from coderooms.store import open_store
from coderooms.workspace import Workspace
from mcp import Client

STOP_TIMEOUT_S = 30.0
"""A stop waits for uvicorn's graceful shutdown, a few seconds at most."""


def _roster(db: str) -> list[str]:
    async def read() -> list[str]:
        store = open_store(db)
        try:
            return [member.id for member in (await store.roster()).active()]
        finally:
            store.close()

    return asyncio.run(read())


def _add_agent(db: str, agent: str) -> None:
    async def add() -> None:
        store = open_store(db)
        try:
            await store.add_agent(agent)
        finally:
            store.close()

    asyncio.run(add())


def _holder(db: str, token: str) -> str | None:
    book = TokenBook(db.removeprefix("sqlite:///"))
    try:
        return book.agent_for(token)
    finally:
        book.close()


@pytest.fixture
def taken_port() -> Iterator[int]:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    sock.listen(1)
    try:
        yield sock.getsockname()[1]
    finally:
        sock.close()


def test_a_start_on_a_taken_port_changes_nothing(tmp_path: Path, taken_port: int) -> None:
    repo = write_fixture_repo(tmp_path / "repo")
    db = f"sqlite:///{tmp_path / 'rooms.db'}"
    _add_agent(db, "alice")
    alice = agent_token(db, "alice")
    done = subprocess.run(
        [CODEROOMS, "--db", db, "up", "--port", str(taken_port), "--repo", str(repo)]
        + ["--agent", "zed", "--agent", "alice"],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=CALL_TIMEOUT_S,
    )
    assert done.returncode == 1
    assert done.stdout == ""
    assert done.stderr == (
        f"error: cannot listen on 127.0.0.1:{taken_port} (Address already in use); "
        "pick another with --port\n"
    )
    assert _roster(db) == ["alice"]  # zed was not added
    assert _holder(db, alice) == "alice"  # alice's token was not replaced


def _http(url: str, token: str) -> Client:
    http = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})
    return Client(streamable_http_client(url, http_client=http))


def _start(db: str, repo: Path, *agents: str) -> tuple[subprocess.Popen[str], str, str]:
    """``up`` on a free port; its process, its URL and its banner (up to the first
    client configuration)."""
    flags = [arg for agent in agents for arg in ("--agent", agent)]
    process = subprocess.Popen(
        [CODEROOMS, "--db", db, "up", "--port", "0", "--repo", str(repo), *flags],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
    )
    assert process.stdout is not None
    banner = process.stdout.readline()
    assert "serving MCP at http://127.0.0.1:" in banner, banner
    url = banner.split("serving MCP at ", 1)[1].split()[0]
    while not banner.rstrip().endswith("}"):
        line = process.stdout.readline()
        assert line, banner
        banner += line
    return process, url, banner


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "term"])
def test_a_stop_while_serving_is_quiet_and_succeeds(tmp_path: Path, signum: int) -> None:
    repo = write_fixture_repo(tmp_path / "repo")
    db = f"sqlite:///{tmp_path / 'rooms.db'}"
    process, url, banner = _start(db, repo, "zed")
    try:
        token = banner.split("Bearer ", 1)[1].split('"', 1)[0]
        # a client is connected (its event stream open) when the stop comes
        with Sessions({"zed": lambda: _http(url, token)}) as sessions:
            posted = ok(sessions.call("zed", "room_post", {"content": "before the stop"}))
            assert posted["author"]["id"] == "zed"
            started = time.monotonic()
            process.send_signal(signum)
            out, err = process.communicate(timeout=STOP_TIMEOUT_S)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert process.returncode == 0, err
    assert time.monotonic() - started < STOP_TIMEOUT_S
    # nothing after the start-up lines: no `error: aborted`, no traceback
    assert err.endswith("added agent @zed to the roster\n"), err
    assert out == ""
    with pytest.raises(httpx2.TransportError):  # it stopped listening
        httpx2.get(url, timeout=CALL_TIMEOUT_S)


def test_a_stop_answers_a_post_waiting_for_the_lock_at_once_and_writes_nothing(
    tmp_path: Path,
) -> None:
    repo = write_fixture_repo(tmp_path / "repo")
    path = tmp_path / "rooms.db"
    db = f"sqlite:///{path}"
    process, url, banner = _start(db, repo, "zed")
    other = sqlite3.connect(path, isolation_level=None)  # another process's writer
    answer: dict[str, object] = {}
    try:
        token = banner.split("Bearer ", 1)[1].split('"', 1)[0]
        with Sessions({"zed": lambda: _http(url, token)}) as sessions:
            ok(sessions.call("zed", "room_post", {"content": "before the stop"}))
            other.execute("BEGIN IMMEDIATE")

            def post() -> None:
                answer["result"] = sessions.call("zed", "room_post", {"content": "waits"})

            waiting = threading.Thread(target=post)
            waiting.start()
            time.sleep(1.0)  # the post is waiting for the lock (it waits up to 10 s)
            assert "result" not in answer
            started = time.monotonic()
            process.send_signal(signal.SIGINT)
            out, err = process.communicate(timeout=STOP_TIMEOUT_S)
            stopped_in = time.monotonic() - started
            waiting.join(CALL_TIMEOUT_S)
    finally:
        other.close()  # a transaction still open is rolled back
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert process.returncode == 0, err
    # it did not wait out the graceful shutdown, nor the store's lock timeout
    assert stopped_in < GRACEFUL_SHUTDOWN_S, stopped_in
    result = answer["result"]
    assert result.is_error  # type: ignore[attr-defined]
    assert result.structured_content["error"]["type"] == "StoreStopping"  # type: ignore[attr-defined]
    assert err.endswith("added agent @zed to the roster\n"), err  # no traceback
    with open_store(db) as store:
        page = asyncio.run(store.read_before(None, 10))
    assert [m.content for m in page.messages] == ["before the stop"]


@pytest.mark.parametrize(
    ("stop", "status", "line"),
    [(KeyboardInterrupt, 130, "error: interrupted\n"), (Terminated, 143, "error: terminated\n")],
    ids=["ctrl-c", "term"],
)
def test_a_stop_during_start_up_is_one_line_and_changes_nothing(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    stop: type[BaseException],
    status: int,
    line: str,
) -> None:
    repo = write_fixture_repo(tmp_path / "repo")
    db = f"sqlite:///{tmp_path / 'rooms.db'}"
    _add_agent(db, "alice")
    alice = agent_token(db, "alice")

    def stopped(*_: object, **__: object) -> None:
        raise stop()

    monkeypatch.setattr(Workspace, "index", stopped)
    result = CliRunner().invoke(
        main,
        ["--db", db, "up", "--port", "0", "--repo", str(repo), "--agent", "zed"]
        + ["--agent", "alice"],
    )
    assert (result.exit_code, result.stdout) == (status, "")
    assert result.stderr.splitlines(keepends=True)[-1] == line
    assert "Traceback" not in result.stderr
    assert _roster(db) == ["alice"]
    assert _holder(db, alice) == "alice"


def test_a_retired_agent_refuses_the_start_before_anyone_is_added(tmp_path: Path) -> None:
    repo = write_fixture_repo(tmp_path / "repo")
    db = f"sqlite:///{tmp_path / 'rooms.db'}"
    _add_agent(db, "gone")

    async def retire() -> None:
        store = open_store(db)
        try:
            await store.retire_agent("gone")
        finally:
            store.close()

    asyncio.run(retire())
    result = CliRunner().invoke(
        main,
        ["--db", db, "up", "--port", "0", "--repo", str(repo), "--agent", "zed"]
        + ["--agent", "gone"],
    )
    assert (result.exit_code, result.stdout) == (1, "")
    assert result.stderr == "error: agent 'gone' is retired and can no longer use the room\n"
    assert _roster(db) == []  # zed, listed first, was not added
