"""A stdio server stopped by SIGTERM: it ends within a bounded time, whatever it was
doing, with one ``error: terminated`` line and never a traceback."""

from __future__ import annotations

import os
import pty
import signal
import subprocess
import sys
import time
import tty
from pathlib import Path

import pytest
from mcp_harness import CODEROOMS, wire_line, wire_opening

from coderooms.cli.app import EXIT_TERMINATED, STOP_GRACE_S

STOP_BOUND_S = STOP_GRACE_S + 25.0
"""How long a stopped server may take to be gone (it takes well under a second unless
something cannot be interrupted, and then STOP_GRACE_S): generous for a busy machine."""
ROUNDS = 4


OPENING = wire_opening("stop-test").encode()


def wire_bytes(message: dict[str, object]) -> bytes:
    return wire_line(message).encode()


@pytest.fixture(scope="module")
def url(tmp_path_factory: pytest.TempPathFactory) -> str:
    base = tmp_path_factory.mktemp("stop")
    url = f"sqlite:///{base / 'rooms.db'}"
    for args in (["init"], ["agent", "add", "ada"]):
        subprocess.run([CODEROOMS, "--db", url, *args], check=True, capture_output=True)
    return url


def _wait_for_answer(read_fd: int) -> None:
    """Block until the server has answered its initialize (so it is serving)."""
    seen = b""
    deadline = time.monotonic() + 120
    while b'"id":0' not in seen.replace(b" ", b"") and time.monotonic() < deadline:
        chunk = os.read(read_fd, 65536)
        if not chunk:
            break
        seen += chunk


def _assert_stopped_in_onewire_bytes(process: subprocess.Popen[bytes]) -> None:
    started = time.monotonic()
    try:
        _, err = process.communicate(timeout=STOP_BOUND_S)
    except subprocess.TimeoutExpired:
        process.kill()
        process.communicate()
        pytest.fail(f"the server was still running {STOP_BOUND_S} s after SIGTERM")
    assert time.monotonic() - started < STOP_BOUND_S
    assert process.returncode == EXIT_TERMINATED
    assert err.decode() == "error: terminated\n"


def test_a_server_reading_a_terminal_stops_on_sigterm(url: str) -> None:
    # a terminal is read on a worker thread, which a stop cannot interrupt
    master, slave = pty.openpty()
    tty.setraw(slave)
    process = subprocess.Popen(
        [CODEROOMS, "--db", url, "mcp", "--agent", "ada"],
        stdin=slave,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    os.close(slave)
    try:
        os.write(master, OPENING)
        assert process.stdout is not None
        _wait_for_answer(process.stdout.fileno())
        process.send_signal(signal.SIGTERM)
        _assert_stopped_in_onewire_bytes(process)
    finally:
        os.close(master)


@pytest.mark.parametrize("closing", [False, True], ids=["input open", "input closing"])
def test_a_busy_server_stops_on_sigterm_in_onewire_bytes(
    url: str, tmp_path: Path, closing: bool
) -> None:
    requests = b"".join(
        wire_bytes(
            {
                "jsonrpc": "2.0",
                "id": n,
                "method": "tools/call",
                "params": {"name": "room_post", "arguments": {"content": f"busy {n}"}},
            }
        )
        for n in range(1, 200)
    )
    for _ in range(ROUNDS):
        process = subprocess.Popen(
            [CODEROOMS, "--db", url, "mcp", "--agent", "ada"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        assert process.stdin is not None and process.stdout is not None
        process.stdin.write(OPENING)
        process.stdin.flush()
        _wait_for_answer(process.stdout.fileno())
        process.stdin.write(requests)
        process.stdin.flush()
        if closing:
            process.stdin.close()
        process.send_signal(signal.SIGTERM)
        if not closing:
            process.stdin.close()
        process.stdin = None
        _assert_stopped_in_onewire_bytes(process)


STUCK_INDEX = """
import sys, time
from coderooms.workspace import Workspace

def stuck(self, *args, **kwargs):  # an index build that will not end soon
    time.sleep(600)

Workspace.index = stuck
from coderooms.launch import main
sys.argv[0] = "coderooms"
main()
"""


def test_a_server_whose_worker_thread_is_stuck_still_stops_on_sigterm(
    url: str, tmp_path: Path
) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "mod.py").write_text("def f():\n    return 1\n")
    process = subprocess.Popen(
        [sys.executable, "-c", STUCK_INDEX, "--db", url, "mcp", "--agent", "ada"]
        + ["--repo", str(repo)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert process.stdin is not None and process.stdout is not None
    process.stdin.write(OPENING)
    process.stdin.flush()
    _wait_for_answer(process.stdout.fileno())
    focus = {"name": "focus", "arguments": {"goal": "what f returns"}}
    process.stdin.write(
        wire_bytes({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": focus})
    )
    process.stdin.flush()
    time.sleep(1.0)  # the first focus is building the workspace on a worker thread
    process.send_signal(signal.SIGTERM)
    process.stdin.close()
    process.stdin = None
    _assert_stopped_in_onewire_bytes(process)
