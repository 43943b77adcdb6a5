"""`coderooms index` stopped part-way (SIGTERM, or Ctrl-C at a terminal, which reaches the
whole process group): one line from the parent, no traceback from its pool workers, and
the next run builds the index as if nothing had happened."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from index_fixtures import write_files

from coderooms.index import indexer

CODEROOMS = str(Path(sys.executable).parent / "coderooms")
MODULES = 400  # enough for a cold index to take a while (it runs on a worker pool)
FUNCTIONS = 40
TIMEOUT_S = 120.0
PARSING_S = 0.15  # how long into parsing the signal comes (parsing takes ~1 s)


def _module(n: int) -> str:
    lines = [f"from pkg.mod{(n + 1) % MODULES} import f0 as neighbour", "", ""]
    for i in range(FUNCTIONS):
        lines += [
            f"def f{i}(value: int) -> int:",
            f'    """Function {i} of module {n}."""',
            f"    total = neighbour(value) if value > {i} else value",
            "    for step in range(3):",
            f"        total += step * {i}",
            "    return total",
            "",
            "",
        ]
    lines += ["class Holder:", "    def method(self) -> int:", "        return f1(2)", ""]
    return "\n".join(lines)


@pytest.fixture(scope="module")
def big_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("interrupt") / "repo"
    files = {f"pkg/mod{n}.py": _module(n) for n in range(MODULES)}
    files["pkg/__init__.py"] = ""
    write_files(root, files)
    return root


def _children(pid: int) -> list[int]:
    try:
        text = Path(f"/proc/{pid}/task/{pid}/children").read_text()
    except OSError:
        return []
    return [int(p) for p in text.split()]


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="needs /proc")
@pytest.mark.parametrize(
    ("signum", "group", "status", "line"),
    [
        (signal.SIGTERM, False, 143, "error: terminated\n"),
        (signal.SIGTERM, True, 143, "error: terminated\n"),
        (signal.SIGINT, False, 130, "error: interrupted\n"),
        (signal.SIGINT, True, 130, "error: interrupted\n"),
    ],
    ids=["term", "term-group", "int", "ctrl-c-group"],
)
def test_a_stopped_cold_index_is_quiet_and_leaves_nothing_behind(
    big_repo: Path, signum: int, group: bool, status: int, line: str
) -> None:
    index_db = big_repo / ".coderooms" / "index.db"
    for leftover in index_db.parent.glob("index.db*"):
        leftover.unlink()
    process = subprocess.Popen(
        [CODEROOMS, "index", str(big_repo), "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
        start_new_session=True,  # its own process group, as a shell gives a job
    )
    try:
        deadline = time.monotonic() + TIMEOUT_S
        while not _children(process.pid):  # the pool is up: parsing has begun
            assert process.poll() is None, "the index finished before it could be stopped"
            assert time.monotonic() < deadline, "no worker pool started"
            time.sleep(0.01)
        time.sleep(PARSING_S)
        assert process.poll() is None, "the index finished before it could be stopped"
        if group:
            os.killpg(process.pid, signum)
        else:
            process.send_signal(signum)
        # the workers hold stderr too: this waits for every one of them
        out, err = process.communicate(timeout=TIMEOUT_S)
    finally:
        if process.poll() is None:  # a failed test leaves no process behind
            for pid in [*_children(process.pid), process.pid]:
                os.kill(pid, signal.SIGKILL)
            process.wait()
    assert (process.returncode, err) == (status, line)
    # Under --json the stop is also one JSON document, and nothing else is on stdout.
    error = {"type": line[7:-1].capitalize(), "message": line[7:-1], "exit_status": status}
    assert json.loads(out) == {"error": error} and out.count("\n") == 1

    done = subprocess.run(
        [CODEROOMS, "index", str(big_repo), "--json"],
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    summary = json.loads(done.stdout)
    assert summary["files"] == MODULES + 1
    assert summary["changed"]["parsed"] == MODULES + 1


def test_an_abandoned_pool_that_will_not_terminate_is_not_waited_for(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    release = threading.Event()

    class StuckPool:  # terminate() waiting for a lock a killed worker held
        def terminate(self) -> None:
            release.wait()

    monkeypatch.setattr(indexer, "POOL_STOP_S", 0.05)
    started = time.monotonic()
    try:
        indexer.stop_pool(StuckPool())  # type: ignore[arg-type]
        assert time.monotonic() - started < TIMEOUT_S / 10
    finally:
        release.set()
