"""Faults under load (issue 22): what one agent's trouble costs the others, measured.

One command::

    .venv/bin/python benchmarks/reliability.py [--rounds 8] [--clients 8] [--calls 200]
        [--baseline main --load-rounds 4] [--only http]

Everything runs in a temporary directory and is bounded (a few minutes on two busy
cores). Prints one table, with medians, of:

* other agents' latency on ``coderooms up`` while one agent's post waits 8 s for the
  write lock another process holds (target: at most 0.5 s);
* ``read`` while another process holds the write lock: opening the store read-only and
  reading a turn in-process (target: at most 0.1 s), and the ``coderooms read`` command
  (wall time, interpreter start included);
* a busy stdio server stopped by SIGTERM, over ``--rounds`` rounds: how many hung
  (still running 30 s later) and how many printed a traceback (target: 0 and 0);
* a cold index of a small repository, with and without one 192 KB file nested 64k deep
  (target: at most 2 s more, the file skipped with its reason);
* the size of one ``room_read`` on a desk of 30 messages of 1 MiB (target: message text
  within the documented ``READ_TEXT_BUDGET``);
* HTTP load on ``coderooms up``: ``--clients`` clients each making ``--calls`` mixed
  calls on kept-alive connections, p50 / p99 / errors (target: 10 ms / 50 ms / 0) and the
  server's CPU time per call; with ``--baseline REV`` the same load on an `up` running
  that git revision's source too (each on its own copy of the store, both serving at
  once, the loads taking turns over ``--load-rounds`` rounds), medians over the rounds
  (``--only http`` measures these rows alone);
* then the integrity rows of ``reliability_integrity.py`` (writers × posts, kill -9
  rounds, generated MCP requests and message texts, a hostile tree for the index;
  every target 0), unless ``--integrity none`` (``quick`` for small counts).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import http.client
import json
import os
import re
import shutil
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

# benchmarks/mcp.py is named like the SDK: this folder goes last on the import path, after
# the SDK, and stays there for reliability_integrity (its spawned writers import this
# script first, then look that module up).
_HERE = Path(__file__).resolve().parent
sys.path[:] = [entry for entry in sys.path if Path(entry or ".").resolve() != _HERE]
sys.path.append(str(_HERE))

BIN = Path(sys.executable).parent
CODEROOMS = str(BIN / "coderooms")
SOURCE = Path(__file__).resolve().parent.parent / "src" / "coderooms"

LOCK_HOLD_S = 8.0
"""How long another process holds the write lock while one agent posts."""
STOP_WAIT_S = 30.0
"""A stdio server still running this long after SIGTERM counts as hung."""
WIRE_CLOSE_TIMEOUT_S = 60.0  # a stdio server ends this soon after its input closes
DEEP_NESTING = 64 * 1024
BIG_MESSAGES = 30
PROTOCOL = "2025-06-18"


def _line(message: dict[str, Any]) -> bytes:
    return (json.dumps(message) + "\n").encode()


def _initialize(request_id: int = 0) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "initialize",
        "params": {
            "protocolVersion": PROTOCOL,
            "capabilities": {},
            "clientInfo": {"name": "reliability", "version": "1"},
        },
    }


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([CODEROOMS, *args], cwd=cwd, capture_output=True, text=True, timeout=600)


def _repo(base: Path) -> Path:
    """A small repository: a copy of this package's Python source."""
    repo = base / "repo"
    shutil.copytree(SOURCE, repo / "coderooms", ignore=shutil.ignore_patterns("data", "*.pyc"))
    return repo


@contextmanager
def write_lock_held(db: Path) -> Iterator[None]:
    other = sqlite3.connect(db, isolation_level=None, timeout=0)
    other.execute("BEGIN IMMEDIATE")
    other.execute("UPDATE meta SET value = value WHERE key = 'generation'")
    try:
        yield
    finally:
        other.execute("ROLLBACK")
        other.close()


# --- an HTTP client on one kept-alive connection -------------------------------------


class WireClient:
    """A bare MCP client over a ``coderooms mcp`` subprocess: one JSON-RPC line written,
    lines read until the response with the same id, decoded with :func:`json.loads`."""

    def __init__(self, args: list[str], env: dict[str, str] | None = None) -> None:
        self._process = subprocess.Popen(
            [CODEROOMS, *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env
        )
        self._next = 0
        self.pid = self._process.pid
        self.request(
            "initialize",
            {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "benchmark-wire", "version": "1"},
            },
        )
        self._send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def _send(self, message: dict[str, Any]) -> None:
        assert self._process.stdin is not None
        self._process.stdin.write(json.dumps(message).encode() + b"\n")
        self._process.stdin.flush()

    def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self._next += 1
        self._send({"jsonrpc": "2.0", "id": self._next, "method": method, "params": params})
        assert self._process.stdout is not None
        while True:
            line = self._process.stdout.readline()
            if not line:
                raise RuntimeError("the server closed its stdout")
            message: dict[str, Any] = json.loads(line)
            if message.get("id") == self._next:
                if "error" in message:
                    raise RuntimeError(str(message["error"]))
                result: dict[str, Any] = message["result"]
                return result

    def call_tool(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        return self.request("tools/call", {"name": name, "arguments": arguments})

    def close(self) -> None:
        assert self._process.stdin is not None
        self._process.stdin.close()
        self._process.wait(timeout=WIRE_CLOSE_TIMEOUT_S)


class HttpAgent:
    """One agent's MCP session over one kept-alive HTTP connection (no SDK: the wire)."""

    def __init__(self, port: int, token: str) -> None:
        self.connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        self.headers = {
            "Authorization": f"Bearer {token}",
            "Accept": "application/json, text/event-stream",
            "Content-Type": "application/json",
        }
        self.next_id = 1
        status, headers, _ = self._post(_initialize())
        assert status == 200, status
        self.headers["Mcp-Session-Id"] = headers["mcp-session-id"]
        self.headers["MCP-Protocol-Version"] = PROTOCOL
        self._post({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def _post(self, message: dict[str, Any]) -> tuple[int, dict[str, str], bytes]:
        self.connection.request("POST", "/mcp", json.dumps(message).encode(), self.headers)
        response = self.connection.getresponse()
        body = response.read()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, body

    def call(self, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """The tool's result; raises on an HTTP or JSON-RPC error or a tool error."""
        request_id, self.next_id = self.next_id, self.next_id + 1
        message = {
            "jsonrpc": "2.0",
            "id": request_id,
            "method": "tools/call",
            "params": {"name": tool, "arguments": arguments},
        }
        status, headers, body = self._post(message)
        if status != 200:
            raise RuntimeError(f"HTTP {status}")
        if headers.get("content-type", "").startswith("text/event-stream"):
            data = [line[5:] for line in body.decode().splitlines() if line.startswith("data:")]
            answer = json.loads(data[-1])
        else:
            answer = json.loads(body)
        if "error" in answer:
            raise RuntimeError(answer["error"]["message"])
        result: dict[str, Any] = answer["result"]
        if result.get("isError"):
            raise RuntimeError(result["content"][0]["text"])
        return result

    def close(self) -> None:
        self.connection.close()


SERVED_PIDS: dict[int, int] = {}
"""The process id of the `up` serving on each port :func:`served` started."""


def process_cpu_s(pid: int) -> float:
    """CPU seconds (user + system) process ``pid`` has used so far; NaN where /proc does
    not say."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return float("nan")
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@contextmanager
def served(base: Path, db: str, repo: Path, source: Path | None = None) -> Iterator[int]:
    """``coderooms up`` on ``db``; with ``source``, the package imported from that tree
    (a ``src`` folder) instead of the installed one."""
    env = dict(os.environ)
    if source is not None:
        env["PYTHONPATH"] = str(source)
    process = subprocess.Popen(
        [CODEROOMS, "--db", db, "up", "--port", "0", "--repo", str(repo)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        stdin=subprocess.DEVNULL,
        text=True,
        cwd=base,
        env=env,
    )
    try:
        assert process.stdout is not None
        found = re.search(r"http://127\.0\.0\.1:(\d+)/mcp", process.stdout.readline())
        assert found, "up did not start"
        threading.Thread(target=process.stdout.read, daemon=True).start()
        port = int(found.group(1))
        SERVED_PIDS[port] = process.pid
        yield port
    finally:
        process.send_signal(signal.SIGINT)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


# --- the measurements ----------------------------------------------------------------


def measure_lock_wait(port: int, tokens: dict[str, str], db: Path) -> dict[str, float]:
    poster = HttpAgent(port, tokens["poster"])
    other = HttpAgent(port, tokens["a0"])
    other.call("room_read", {})
    other.call("skim", {"text": "ok\n", "goal": "warm up"})
    latencies: list[float] = []
    waited: list[float] = []

    def post() -> None:
        started = time.perf_counter()
        poster.call("room_post", {"content": "waits for the lock"})
        waited.append(time.perf_counter() - started)

    with write_lock_held(db):
        posting = threading.Thread(target=post)
        posting.start()
        time.sleep(0.2)  # the post is waiting for the lock now
        deadline = time.perf_counter() + LOCK_HOLD_S - 0.5
        n = 0
        while time.perf_counter() < deadline:
            started = time.perf_counter()
            if n % 2:
                other.call("skim", {"text": "ok\n" * 50 + "FAILED test_x\n", "goal": "failures"})
            else:
                other.call("room_read", {})
            latencies.append(time.perf_counter() - started)
            n += 1
            time.sleep(0.05)
    posting.join(30)
    poster.close()
    other.close()
    return {
        "median": statistics.median(latencies),
        "max": max(latencies),
        "calls": len(latencies),
        "post": waited[0] if waited else float("nan"),
    }


def measure_read_beside_writer(base: Path, db: Path) -> dict[str, float]:
    from coderooms.rooms.briefing import TeamBriefing
    from coderooms.rooms.context import initialize_session_with_context
    from coderooms.rooms.records import Conversation, SessionQuery
    from coderooms.store import SQLiteStore

    async def read_once() -> float:
        started = time.perf_counter()
        with SQLiteStore(db, read_only=True) as store:
            roster, desks = await store.roster(), await store.desks()
            briefing = TeamBriefing.from_snapshots("a0", "General", roster, desks)
            conversation = Conversation("General", "General")
            await initialize_session_with_context(
                store.conversation_log(conversation), SessionQuery(conversation), briefing
            )
        return time.perf_counter() - started

    with write_lock_held(db):
        inside = [asyncio.run(read_once()) for _ in range(20)]
        started = time.perf_counter()
        done = _cli("--db", str(db), "read", "--as", "a0", "--desk", "General", cwd=base)
        command = time.perf_counter() - started
    return {"median": statistics.median(inside), "command": command, "ok": done.returncode == 0}


def measure_sigterm(base: Path, db: str, repo: Path, rounds: int) -> dict[str, float]:
    hung = tracebacks = 0
    stops: list[float] = []
    opening = _line(_initialize()) + _line(
        {"jsonrpc": "2.0", "method": "notifications/initialized"}
    )
    for n in range(rounds):
        shutil.rmtree(repo / ".coderooms", ignore_errors=True)  # the first focus indexes
        process = subprocess.Popen(
            [CODEROOMS, "--db", db, "mcp", "--agent", "a0", "--repo", str(repo)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=base,
        )
        assert process.stdin is not None
        calls = [opening]
        for i in range(1, 40):
            tool, arguments = (
                ("focus", {"goal": "post a message to the store"})
                if i % 3 == 0
                else ("room_post", {"content": f"busy {i}"})
            )
            calls.append(
                _line(
                    {
                        "jsonrpc": "2.0",
                        "id": i,
                        "method": "tools/call",
                        "params": {"name": tool, "arguments": arguments},
                    }
                )
            )
        process.stdin.write(b"".join(calls))
        process.stdin.flush()
        time.sleep(0.5 + (n % 4) * 0.5)
        if n % 2:  # SIGTERM as stdin closes
            process.stdin.close()
        process.send_signal(signal.SIGTERM)
        started = time.perf_counter()
        if not n % 2:
            process.stdin.close()
        process.stdin = None
        try:
            _, err = process.communicate(timeout=STOP_WAIT_S)
        except subprocess.TimeoutExpired:
            hung += 1
            process.kill()
            process.communicate()
            continue
        stops.append(time.perf_counter() - started)
        if b"Traceback" in err:
            tracebacks += 1
    return {
        "hung": hung,
        "tracebacks": tracebacks,
        "median": statistics.median(stops) if stops else float("nan"),
        "max": max(stops) if stops else float("nan"),
    }


def measure_deep_index(base: Path) -> dict[str, Any]:
    plain = base / "index-plain"
    shutil.copytree(SOURCE, plain / "coderooms", ignore=shutil.ignore_patterns("data", "*.pyc"))
    deep = base / "index-deep"
    shutil.copytree(plain, deep)
    (deep / "deep.py").write_text("x = " + "f(" * DEEP_NESTING + ")" * DEEP_NESTING + "\n")

    def cold(repo: Path) -> tuple[float, dict[str, Any]]:
        shutil.rmtree(repo / ".coderooms", ignore_errors=True)
        started = time.perf_counter()
        done = _cli("index", str(repo), "--json", cwd=base)
        return time.perf_counter() - started, json.loads(done.stdout)

    without = [cold(plain)[0] for _ in range(3)]
    runs = [cold(deep) for _ in range(3)]
    return {
        "without": statistics.median(without),
        "with": statistics.median(run[0] for run in runs),
        "skipped": runs[-1][1]["skipped"],
    }


def measure_big_read(base: Path) -> dict[str, float]:
    from coderooms.mcp.server import build_server, fixed_caller
    from coderooms.mcp.service import READ_TEXT_BUDGET, RoomService
    from coderooms.store import MESSAGE_BYTES_CAP, SQLiteStore

    async def scenario() -> tuple[int, int]:
        with SQLiteStore(base / "big.db") as store:
            await store.add_agent("ada")
            body = "x" * (MESSAGE_BYTES_CAP - 16)
            for n in range(BIG_MESSAGES):
                await store.post("agent:ada", f"{n:04d}{body}")
            server = build_server(RoomService(store), fixed_caller("ada"))
            result = await server.call_tool("room_read", {})
            assert not isinstance(result, type(None))
            wire = result.model_dump_json(by_alias=True, exclude_none=True)
            text = sum(len(m["content"]) for m in result.structured_content["history"])  # type: ignore[index]
            return len(wire.encode()), text

    wire_bytes, text = asyncio.run(scenario())
    return {"bytes": wire_bytes, "text": text, "budget": READ_TEXT_BUDGET}


def measure_http_load(
    port: int, tokens: dict[str, str], clients: int, calls: int
) -> dict[str, Any]:
    latencies: list[float] = []
    errors: list[str] = []
    lock = threading.Lock()
    mix: list[tuple[str, dict[str, Any]]] = [
        ("room_read", {}),
        ("room_search", {"query": "busy"}),
        ("room_post", {"content": "load"}),
        ("room_pins", {}),
        ("skim", {"text": "line\n" * 40 + "error: boom\n", "goal": "errors"}),
    ]

    def client(agent_id: str) -> None:
        agent = HttpAgent(port, tokens[agent_id])
        mine: list[float] = []
        for n in range(calls):
            tool, arguments = mix[n % len(mix)]
            started = time.perf_counter()
            try:
                agent.call(tool, arguments)
            except Exception as exc:  # counted, not fatal
                with lock:
                    errors.append(f"{tool}: {exc}")
            mine.append(time.perf_counter() - started)
        agent.close()
        with lock:
            latencies.extend(mine)

    threads = [threading.Thread(target=client, args=(f"a{i}",)) for i in range(clients)]
    cpu_before = process_cpu_s(SERVED_PIDS[port])
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(600)
    cpu = process_cpu_s(SERVED_PIDS[port]) - cpu_before
    return {
        "cpu_ms": cpu / max(1, len(latencies)) * 1000,
        "p50": _percentile(latencies, 0.5),
        "p99": _percentile(latencies, 0.99),
        "errors": len(errors),
        "calls": len(latencies),
        "first_error": errors[0] if errors else "",
    }


def baseline_source(base: Path, revision: str) -> Path:
    """This repository's ``src`` at ``revision``, extracted under ``base``."""
    root = SOURCE.parent.parent
    out = base / "baseline"
    out.mkdir()
    archive = subprocess.run(
        ["git", "-C", str(root), "archive", revision, "src"], capture_output=True, check=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(out)], input=archive, check=True)
    return out / "src"


def measure_paired_http_load(
    base: Path, db_path: Path, repo: Path, tokens: dict[str, str], args: argparse.Namespace
) -> list[tuple[str, dict[str, Any]]]:
    """The HTTP load on this tree's `up`, and with ``--baseline`` on the baseline's too:
    each on its own copy of the store as it stands now, both serving at once, the loads
    taking turns (A B B A ...) so that both see the same machine."""
    sides: list[tuple[str, Path | None]] = [("this tree", None)]
    if args.baseline:
        sides.append((f"baseline {args.baseline}", baseline_source(base, args.baseline)))
    results: dict[str, list[dict[str, Any]]] = {label: [] for label, _ in sides}
    with contextlib.ExitStack() as stack:
        ports = {}
        for n, (label, source) in enumerate(sides):
            copy = base / f"load-{n}.db"
            with sqlite3.connect(db_path) as source_db, sqlite3.connect(copy) as copy_db:
                source_db.backup(copy_db)
            ports[label] = stack.enter_context(served(base, f"sqlite:///{copy}", repo, source))
            _first_use(ports[label], tokens["a0"])
        for turn in range(args.load_rounds):
            order = sides if turn % 2 == 0 else sides[::-1]
            for label, _ in order:
                load = measure_http_load(ports[label], tokens, args.clients, args.calls)
                results[label].append(load)
                print(
                    f"  HTTP load, round {turn + 1}, {label}: p50 {load['p50'] * 1000:.1f} ms, "
                    f"p99 {load['p99'] * 1000:.1f} ms, errors {load['errors']}; "
                    f"server CPU {load['cpu_ms']:.2f} ms a call; load average {os.getloadavg()[0]:.1f}",
                    file=sys.stderr,
                )
    return [(label, _median_load(results[label])) for label, _ in sides]


def _first_use(port: int, token: str) -> None:
    """Pay what a server pays once (the first skim loads the token counter's tables) before
    its load is timed, as the `up` of the lock-wait row had before the load ran there."""
    agent = HttpAgent(port, token)
    agent.call("room_read", {})
    agent.call("skim", {"text": "ok\n", "goal": "warm up"})
    agent.close()


def _median_load(rounds: list[dict[str, Any]]) -> dict[str, Any]:
    merged: dict[str, Any] = {
        key: statistics.median(r[key] for r in rounds) for key in ("p50", "p99", "cpu_ms")
    }
    merged["errors"] = sum(r["errors"] for r in rounds)
    merged["calls"] = sum(r["calls"] for r in rounds)
    merged["first_error"] = next((r["first_error"] for r in rounds if r["first_error"]), "")
    return merged


def lock_row(
    base: Path, db: str, db_path: Path, repo: Path, tokens: dict[str, str]
) -> tuple[str, str, str]:
    """Other agents' latency on `up` while one post waits on the write lock."""
    with served(base, db, repo) as port:
        lock = measure_lock_wait(port, tokens, db_path)
    return (
        f"up: other agent's latency while a post waits {LOCK_HOLD_S:.0f} s on the lock",
        f"median {lock['median'] * 1000:.1f} ms, max {lock['max'] * 1000:.1f} ms "
        f"({lock['calls']:.0f} calls; the post took {lock['post']:.1f} s)",
        "max <= 500 ms",
    )


def fault_rows(
    base: Path, db: str, db_path: Path, repo: Path, args: argparse.Namespace
) -> list[tuple[str, str, str]]:
    """The rows of the faults measured after the HTTP load: read beside a writer,
    SIGTERM, deep file, big read."""
    rows: list[tuple[str, str, str]] = []
    read = measure_read_beside_writer(base, db_path)
    rows.append(
        (
            "read while another process holds the write lock",
            f"median {read['median'] * 1000:.1f} ms in-process (open + turn); "
            f"`coderooms read` {read['command']:.2f} s wall, "
            f"{'ok' if read['ok'] else 'FAILED'}",
            "<= 100 ms",
        )
    )
    stop = measure_sigterm(base, db, repo, args.rounds)
    rows.append(
        (
            f"busy stdio server stopped by SIGTERM, {args.rounds} rounds",
            f"hung {stop['hung']}, traceback {stop['tracebacks']}; stop median "
            f"{stop['median']:.2f} s, max {stop['max']:.2f} s",
            "0 / 0",
        )
    )
    deep = measure_deep_index(base)
    rows.append(
        (
            "cold index with one 192 KB file nested 64k deep",
            f"median {deep['with']:.2f} s vs {deep['without']:.2f} s without "
            f"(+{deep['with'] - deep['without']:.2f} s); skipped {deep['skipped']}",
            "<= +2 s, skipped with reason",
        )
    )
    big = measure_big_read(base)
    rows.append(
        (
            f"room_read on a desk of {BIG_MESSAGES} x 1 MiB messages",
            f"{big['bytes']:,} bytes on the wire; message text {big['text']:,} chars",
            f"text <= READ_TEXT_BUDGET ({big['budget']:,})",
        )
    )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=8, help="SIGTERM rounds")
    parser.add_argument("--clients", type=int, default=8, help="HTTP load clients")
    parser.add_argument("--calls", type=int, default=200, help="calls per HTTP client")
    parser.add_argument(
        "--baseline",
        metavar="REV",
        help="also serve the HTTP load from this git revision's source (e.g. main), paired",
    )
    parser.add_argument(
        "--load-rounds", type=int, default=1, help="HTTP load rounds (medians are printed)"
    )
    parser.add_argument(
        "--only",
        choices=("all", "http"),
        default="all",
        help="'http': only the HTTP load rows (with --baseline, the paired A/B of a change)",
    )
    parser.add_argument(
        "--integrity",
        choices=("full", "quick", "none"),
        default="full",
        help="also run reliability_integrity.py's rows (writers, kill -9, generated input)",
    )
    args = parser.parse_args()

    base = Path(tempfile.mkdtemp(prefix="coderooms-reliability-"))
    try:
        db_path = base / "rooms.db"
        db = f"sqlite:///{db_path}"
        repo = _repo(base)
        agents = ["poster", *(f"a{i}" for i in range(args.clients))]
        _cli("--db", db, "init", cwd=base)
        for agent in agents:
            _cli("--db", db, "agent", "add", agent, cwd=base)
        tokens = {a: _cli("--db", db, "agent", "token", a, cwd=base).stdout.strip() for a in agents}
        for n in range(20):
            _cli(
                "--db", db, "post", "--as", "agent:a0", "--desk", "General", f"hello {n}", cwd=base
            )

        rows: list[tuple[str, str, str]] = []
        if args.only == "all":
            rows.append(lock_row(base, db, db_path, repo, tokens))
        loads = measure_paired_http_load(base, db_path, repo, tokens, args)
        if args.only == "all":
            rows += fault_rows(base, db, db_path, repo, args)
        for label, load in loads:
            rows.append(
                (
                    f"HTTP load: {args.clients} clients x {args.calls} mixed calls, {label}",
                    f"p50 {load['p50'] * 1000:.1f} ms, p99 {load['p99'] * 1000:.1f} ms, "
                    f"errors {load['errors']} of {load['calls']}; server CPU "
                    f"{load['cpu_ms']:.2f} ms a call"
                    + (f" ({load['first_error'][:80]})" if load["first_error"] else ""),
                    "<= 10 ms / <= 50 ms / 0",
                )
            )
        if args.integrity != "none" and args.only == "all":
            import reliability_integrity

            rows += reliability_integrity.run(quick=args.integrity == "quick")
        width = max(len(row[0]) for row in rows)
        print(f"{'measure':<{width}}  result  [target]")
        for what, result, target in rows:
            print(f"{what:<{width}}  {result}  [{target}]")
    finally:
        shutil.rmtree(base, ignore_errors=True)
        os.sync()


if __name__ == "__main__":
    main()
