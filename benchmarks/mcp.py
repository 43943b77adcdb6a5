"""MCP tool-call latency over stdio, against the same call made in-process.

One command::

    .venv/bin/python benchmarks/mcp.py [--rows 1000000] [--samples 200] [--repo PATH] [--cpu N|all]
        [--baseline REV]

Builds the rooms benchmark's log (``benchmarks/rooms.py``: 20 desks, threads) with one
agent on every desk, starts ``coderooms mcp`` as a subprocess and drives it with the SDK's
stdio client. Reports, in one run:

* median ``room_read`` (window 30, desks in rotation) over stdio, and the same read made
  in-process through ``RoomService`` plus its text rendering — once on unchanged desks
  (the server reuses a turn whose conversation has no new row) and once with a new post
  in the desk before every read (nothing reused);
* median ``room_read`` (unchanged desks in rotation) over HTTP on ``coderooms up``: one
  kept-alive connection, and a new connection for every call, each interleaved call by
  call with the same read over stdio by a bare client (both clients bare, so the ratio is
  the transports' own; issue 16: keep-alive ≤ 3 ms and ≤ 1.5× stdio);
* median warm ``focus`` over stdio, the same goals through ``Workspace.focus``
  in-process, through ``Workspace.focus_session`` in-process (the work a served focus
  does: every served call is in a session, the connection's own, whose working set it
  reads and advances), and the same tool call through an in-memory MCP transport, with
  ratios.
  Over stdio it is timed with two clients: the SDK's (which also parses the result into
  its models and validates it against the tool's output schema, in its own process) and
  a bare JSON-RPC client that writes the request line and reads the response line, which
  is the server's latency as any client sees it on the wire. The repository is
  ``--repo`` (default: a copy of this package's source, indexed in a temporary
  directory).

With ``--baseline REV``, warm focus is also timed against this repository's ``src`` at
``REV``: two stdio servers (each with its own store and its own copy of the repository,
made by its own code), the same goals, calls alternating between them with each taking
the first place every other call, in ``--rounds`` rounds with a new pair of servers each;
printed are both medians, each round's median paired difference and their median, and
whether the answers were the same (the session ids apart).

The measured calls run pinned to one CPU (``--cpu``; see :func:`pin`). Targets (issue 6):
``room_read`` ≤ 25 ms median at 1,000,000 rows; ``focus`` over stdio within 1.2× of
in-process, judged on the wire client (the server's own latency; the SDK client's parsing
and validation are printed beside it, as its own share).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

# This script is named like the SDK: take its own folder off the path before importing
# the SDK, and put it back (last) for the rooms benchmark's builder.
_HERE = Path(__file__).resolve().parent
sys.path[:] = [entry for entry in sys.path if Path(entry or ".").resolve() != _HERE]

from mcp.client.stdio import StdioServerParameters  # noqa: E402

from coderooms.focus.workingset import DEFAULT_SESSION_BUDGET, WorkingSet  # noqa: E402
from coderooms.mcp.render import render_read  # noqa: E402
from coderooms.mcp.server import build_server, fixed_caller  # noqa: E402
from coderooms.mcp.service import IGNORED_LISTED, RoomService  # noqa: E402
from mcp import Client  # noqa: E402

sys.path.append(str(_HERE))
import reliability  # noqa: E402
from reliability import SERVED_PIDS, HttpAgent, WireClient, process_cpu_s, served  # noqa: E402

from rooms import DESKS, LARGE_ROWS, build, desk_id, staff, verdict  # noqa: E402

SAMPLES = 200
FOCUS_SAMPLES = 30
WARMUP = 10
AGENT = "agent-0"
TARGET_READ_MS = 25.0
TARGET_FOCUS_RATIO = 1.2
PAIRED_ROUNDS = 5
TARGET_HTTP_READ_MS = 3.0
TARGET_HTTP_RATIO = 1.5
GOALS = (
    "search_messages returns hits in the wrong order for a regex",
    "a pin posted in a thread does not show on the desk pinboard",
    "TokenBook.issue should replace an agent's earlier token",
    "the store refuses a reply whose parent is in another desk",
    "focus budget exceeded when packing a class and its methods",
)
CODEROOMS = str(Path(sys.executable).parent / "coderooms")
PACKAGE = Path(__file__).resolve().parents[1] / "src" / "coderooms"


async def median_ms(
    call: Callable[[int], Awaitable[object]],
    samples: int,
    warmup: int = WARMUP,
    before: Callable[[int], Awaitable[object]] | None = None,
) -> float:
    for i in range(warmup):
        await call(i)
    timings: list[float] = []
    for i in range(samples):
        if before is not None:
            await before(i)
        started = time.perf_counter()
        await call(i)
        timings.append((time.perf_counter() - started) * 1000)
    return statistics.median(timings)


def pin(cpu: str | None) -> str:
    """Pin this process (and so the servers it starts) to one CPU.

    The cores of a small VM need not run at the same speed, and a ratio between two
    processes would then measure where the scheduler put them. On one CPU every call,
    in-process or served, runs on the same core, right after a call in another process.
    """
    if cpu == "all" or not hasattr(os, "sched_setaffinity"):
        return "unpinned: the calls run wherever the scheduler puts them"
    allowed = sorted(os.sched_getaffinity(0))
    chosen = allowed[-1] if cpu is None else int(cpu)
    os.sched_setaffinity(0, {chosen})
    return f"pinned to CPU {chosen} (of {allowed}), with the servers it starts"


def load() -> str:
    one, five, _ = os.getloadavg()
    return f"load average {one:.1f} / {five:.1f} on {os.cpu_count()} CPUs"


async def measure(db: str, repo: Path, store: Any, samples: int, focus_samples: int) -> bool:
    service = RoomService(store)
    posts = iter(range(10**9))

    async def post_to(i: int) -> None:
        # untimed: a new row in the desk the next read is about, so no turn is reused
        await store.post(f"agent:{AGENT}", f"benchmark note {next(posts)}", desk=desk_id(i % DESKS))

    async def read_in_process(i: int) -> None:
        render_read(await service.read(AGENT, desk_id(i % DESKS)))

    local_warm = await median_ms(read_in_process, samples)
    local_fresh = await median_ms(read_in_process, samples, before=post_to)

    server_args = ["--db", db, "mcp", "--agent", AGENT, "--repo", str(repo)]
    params = StdioServerParameters(command=CODEROOMS, args=server_args)
    async with Client(params) as client:

        async def read_over_stdio(i: int) -> None:
            result = await client.call_tool("room_read", {"desk": desk_id(i % DESKS)})
            assert not result.is_error, result.content

        stdio_warm = await median_ms(read_over_stdio, samples)
        stdio_fresh = await median_ms(read_over_stdio, samples, before=post_to)
        read_ok = stdio_warm <= TARGET_READ_MS and stdio_fresh <= TARGET_READ_MS
        print(f"\nroom_read, window 30, 20 desks in rotation, median of {samples} (ms)")
        print(f"{'':34}{'unchanged desk':>16}{'after a post':>14}")
        print(f"{'  in-process (service + render)':34}{local_warm:>16.3f}{local_fresh:>14.3f}")
        print(f"{'  over stdio':34}{stdio_warm:>16.3f}{stdio_fresh:>14.3f}")
        print(f"  both ≤ {TARGET_READ_MS} ms over stdio: {verdict(read_ok)}")

        started = time.perf_counter()
        first = await client.call_tool("focus", {"goal": GOALS[0]})
        assert not first.is_error, first.content
        print(
            f"\nfirst focus over stdio (indexes, builds the engine): {time.perf_counter() - started:.1f} s"
        )

        wire = WireClient(server_args)
        started = time.perf_counter()
        assert not wire.call_tool("focus", {"goal": GOALS[0]}).get("isError")
        print(f"first focus over the wire client: {time.perf_counter() - started:.1f} s")

        from coderooms.workspace import Workspace

        workspace = Workspace.open(repo)
        workspace.index()
        # The in-memory server gets a workspace of its own: a focus engine keeps the last
        # goal's ranking, and sharing one would let either call reuse the other's work.
        served = Workspace.open(repo)
        in_memory = build_server(
            RoomService(store, lambda: served, offload=False), fixed_caller(AGENT)
        )
        async with Client(in_memory) as memory:
            # Interleaved sample by sample so all four see the same machine load. Calls in
            # this process and calls served by a subprocess alternate, so every timed call
            # runs right after one in another process (as an in-process call in an agent
            # runs after other work), never right after one that warmed its own caches
            # with the same goal; each round swaps the pairs' order.
            async def local(goal: str) -> None:
                workspace.focus(goal).to_json()

            # The call a served focus makes: in a session (the connection's own), what the
            # session holds named rather than sent, its working set carried to the next.
            in_session = Workspace.open(repo)
            state = [WorkingSet(AGENT, "in-process", DEFAULT_SESSION_BUDGET)]

            async def local_session(goal: str) -> None:
                answer = in_session.focus_session(state[0], goal)
                state[0] = answer.state
                answer.to_json(IGNORED_LISTED)

            async def via_memory(goal: str) -> None:
                result = await memory.call_tool("focus", {"goal": goal})
                assert not result.is_error, result.content

            async def via_stdio(goal: str) -> None:
                result = await client.call_tool("focus", {"goal": goal})
                assert not result.is_error, result.content

            async def via_wire(goal: str) -> None:
                result = wire.call_tool("focus", {"goal": goal})
                assert not result.get("isError"), result["content"]

            ways = [
                ("local", local),
                ("session", local_session),
                ("stdio", via_stdio),
                ("memory", via_memory),
                ("wire", via_wire),
            ]
            timings: dict[str, list[float]] = {name: [] for name, _ in ways}
            for i in range(len(GOALS) + focus_samples):
                goal = GOALS[i % len(GOALS)]
                order = ways if i % 2 == 0 else ways[3:] + ways[:3]
                for name, way in order:
                    started = time.perf_counter()
                    await way(goal)
                    elapsed = (time.perf_counter() - started) * 1000
                    if i >= len(GOALS):  # the first round warms every goal
                        timings[name].append(elapsed)
        focus_local = statistics.median(timings["local"])
        focus_memory = statistics.median(timings["memory"])
        focus_stdio = statistics.median(timings["stdio"])
        focus_wire = statistics.median(timings["wire"])
        focus_session = statistics.median(timings["session"])

        async def ping_wire(_: int) -> None:
            wire.request("ping", {})

        ping = await median_ms(ping_wire, focus_samples)
        wire.close()

    ratio = focus_wire / focus_local
    focus_ok = ratio <= TARGET_FOCUS_RATIO
    print(
        f"\nwarm focus, budget 8000, {len(GOALS)} goals in rotation, median of {focus_samples} (ms)"
    )
    print(f"  in-process (Workspace.focus + to_json)     {focus_local:8.3f}")
    print(
        f"  in-process in a session (focus_session)   {focus_session:8.3f}  ratio {focus_session / focus_local:.2f}"
    )
    print(
        f"  in-process MCP call (memory transport)    {focus_memory:8.3f}  ratio {focus_memory / focus_local:.2f}"
    )
    print(
        f"  over stdio, SDK client                     {focus_stdio:8.3f}  ratio {focus_stdio / focus_local:.2f}"
    )
    print(f"  over stdio, wire client                    {focus_wire:8.3f}  ratio {ratio:.2f}")
    print(f"  SDK client's own share (SDK − wire)        {focus_stdio - focus_wire:8.3f}")
    print(
        f"  MCP ping over the wire (the SDK server's   {ping:8.3f}  = {ping / focus_local:.0%} of in-process"
    )
    print("  floor: one request and response, no tool)")
    print(f"  over stdio (wire) ≤ {TARGET_FOCUS_RATIO}× in-process: {verdict(focus_ok)}")
    print(
        f"  over stdio (wire) / the same session call in-process: {focus_wire / focus_session:.2f}"
        " (what the server and its transport add to the work a served focus does)"
    )
    return read_ok and focus_ok


def measure_http(db: str, repo: Path, base: Path, samples: int) -> bool:
    """``room_read`` over HTTP on ``coderooms up`` (kept alive, and a new connection each
    call) against the same read over stdio, interleaved call by call."""
    token = subprocess.run(
        [CODEROOMS, "--db", db, "agent", "token", AGENT], capture_output=True, text=True
    ).stdout.strip()
    stdio = WireClient(["--db", db, "mcp", "--agent", AGENT, "--repo", str(repo)])
    with served(base, db, repo) as port:
        kept = HttpAgent(port, token)
        # CPU seconds of each server, summed over its timed calls (the clock ticks at
        # 10 ms, so a single call reads 0 or 10 ms; the sum over many is fair)
        servers = {"stdio": stdio.pid, "keep-alive": SERVED_PIDS[port]}
        cpu = {"stdio": 0.0, "keep-alive": 0.0}

        def fresh(arguments: dict[str, Any]) -> None:
            agent = HttpAgent(port, token)  # connects, initializes, then the timed call
            started = time.perf_counter()
            agent.call("room_read", arguments)
            timings["new connection"].append((time.perf_counter() - started) * 1000)
            agent.close()

        ways: list[tuple[str, Callable[[dict[str, Any]], object]]] = [
            ("stdio", lambda arguments: stdio.call_tool("room_read", arguments)),
            ("keep-alive", lambda arguments: kept.call("room_read", arguments)),
        ]
        timings: dict[str, list[float]] = {"stdio": [], "keep-alive": [], "new connection": []}
        for i in range(WARMUP + samples):
            arguments = {"desk": desk_id(i % DESKS)}
            for name, way in ways if i % 2 == 0 else ways[::-1]:
                cpu_before = process_cpu_s(servers[name])
                started = time.perf_counter()
                way(arguments)
                if i >= WARMUP:
                    timings[name].append((time.perf_counter() - started) * 1000)
                    cpu[name] += process_cpu_s(servers[name]) - cpu_before
            if i >= WARMUP:
                fresh(arguments)
        kept.close()
    stdio.close()
    over_stdio, keep_alive, new_connection = (
        statistics.median(timings[name]) for name in ("stdio", "keep-alive", "new connection")
    )
    ratio = keep_alive / over_stdio
    passed = keep_alive <= TARGET_HTTP_READ_MS and ratio <= TARGET_HTTP_RATIO
    stdio_cpu, http_cpu = (cpu[name] / samples * 1000 for name in ("stdio", "keep-alive"))
    print(f"\nroom_read over HTTP (coderooms up), unchanged desks, median of {samples} (ms)")
    print(
        f"  over stdio, bare client                 {over_stdio:8.3f}  server CPU {stdio_cpu:.2f}"
    )
    print(
        f"  HTTP, one kept-alive connection         {keep_alive:8.3f}  server CPU {http_cpu:.2f}  "
        f"ratio {ratio:.2f} (CPU {http_cpu / stdio_cpu:.2f})"
    )
    print(
        f"  HTTP, a new connection per call         {new_connection:8.3f}  "
        f"ratio {new_connection / over_stdio:.2f} (the call only: connect and initialize untimed)"
    )
    print(
        f"  keep-alive ≤ {TARGET_HTTP_READ_MS} ms and ≤ {TARGET_HTTP_RATIO}× stdio: {verdict(passed)}"
    )
    return passed


def package_copy(repo: Path) -> Path:
    """A repository at ``repo`` holding a copy of this package's source, to focus on."""
    shutil.copytree(PACKAGE, repo / "coderooms", ignore=shutil.ignore_patterns("__pycache__"))
    return repo


def _session_free(line: dict[str, Any]) -> str:
    """A focus answer without the session id its server made up (it differs by server)."""
    text = json.dumps(line, sort_keys=True)
    session = line.get("structuredContent", {}).get("session", {}).get("id")
    return text.replace(session, "") if isinstance(session, str) else text


def measure_paired_focus(base: Path, revision: str, samples: int, rounds: int) -> None:
    """Warm focus over stdio from this tree and from ``revision``'s source, paired call by
    call, in ``rounds`` rounds of ``samples`` calls, each with a new pair of servers:
    two processes of the same code differ by up to half a millisecond a call here (hash
    seeds, memory layout), so one pair alone can hide a difference of that size."""
    sides = {"this tree": None, f"baseline {revision}": reliability.baseline_source(base, revision)}
    names = list(sides)
    started_with: dict[str, tuple[list[str], dict[str, str]]] = {}
    for n, (name, source) in enumerate(sides.items()):
        env = {**os.environ} if source is None else {**os.environ, "PYTHONPATH": str(source)}
        repo = package_copy(base / f"repo-{n}")
        db = f"sqlite:///{base / f'paired-{n}.db'}"
        for command in (["init"], ["agent", "add", AGENT]):
            subprocess.run(
                [CODEROOMS, "--db", db, *command], env=env, check=True, capture_output=True
            )
        started_with[name] = (["--db", db, "mcp", "--agent", AGENT, "--repo", str(repo)], env)
    timings: dict[str, list[float]] = {name: [] for name in names}
    round_differences: list[float] = []
    same = 0
    for _ in range(rounds):
        wires: dict[str, WireClient] = {}
        try:
            for name in names:
                wires[name] = WireClient(*started_with[name])
                for goal in GOALS:  # indexes (the first round), builds the engine, warms
                    wires[name].call_tool("focus", {"goal": goal})
            differences = []
            for i in range(samples):
                goal = GOALS[i % len(GOALS)]
                answers, took = {}, {}
                for name in names if i % 2 == 0 else names[::-1]:
                    started = time.perf_counter()
                    answers[name] = wires[name].call_tool("focus", {"goal": goal})
                    took[name] = (time.perf_counter() - started) * 1000
                    timings[name].append(took[name])
                differences.append(took[names[0]] - took[names[1]])
                same += len({_session_free(a) for a in answers.values()}) == 1
            round_differences.append(statistics.median(differences))
        finally:
            for wire in wires.values():
                wire.close()
    this, other = names
    print(
        f"\nwarm focus over stdio (wire client), paired, {rounds} rounds of {samples} calls,"
        " a new pair of servers each (ms)"
    )
    for name in names:
        print(f"  {name:34}{statistics.median(timings[name]):8.3f}")
    print(
        "  this tree − baseline, paired median by round: "
        + ", ".join(f"{d:+.3f}" for d in round_differences)
        + f"; over rounds {statistics.median(round_differences):+.3f}"
        f" (ratio {statistics.median(timings[this]) / statistics.median(timings[other]):.2f})"
    )
    print(f"  answers the same (session ids apart):   {same} of {rounds * samples}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=LARGE_ROWS, help="rows in the log")
    parser.add_argument("--samples", type=int, default=SAMPLES, help="timed room_read calls")
    parser.add_argument(
        "--focus-samples", type=int, default=FOCUS_SAMPLES, help="timed focus calls"
    )
    parser.add_argument("--repo", type=Path, default=None, help="repository to focus on")
    parser.add_argument(
        "--cpu",
        default=None,
        help="CPU to pin this run and its servers to (default: the last one allowed); "
        "'all' to leave them unpinned",
    )
    parser.add_argument(
        "--baseline",
        default=None,
        help="also time warm focus over stdio against this repository's src at REV, paired",
    )
    parser.add_argument(
        "--rounds",
        type=int,
        default=PAIRED_ROUNDS,
        help="with --baseline: rounds, each with a new pair of servers",
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="coderooms-mcp-bench-") as tmp:
        path = Path(tmp) / "rooms.db"
        store, seconds = build(path, args.rows)
        print(f"built {args.rows:,} rows in {seconds:.1f} s; {load()}")

        async def members() -> None:
            await staff(store)
            for d in range(DESKS):
                await store.add_desk_member(desk_id(d), AGENT)

        asyncio.run(members())
        repo = args.repo
        if repo is None:
            repo = package_copy(Path(tmp) / "repo")
        print(pin(args.cpu))
        passed = asyncio.run(
            measure(f"sqlite:///{path}", repo, store, args.samples, args.focus_samples)
        )
        passed = measure_http(f"sqlite:///{path}", repo, Path(tmp), args.samples) and passed
        if args.baseline:
            measure_paired_focus(Path(tmp), args.baseline, args.focus_samples, args.rounds)
        store.close()
    print(f"\n{load()} (medians are wall time: other work on the machine shows in them)")
    return 0 if passed else 1


if __name__ == "__main__":
    sys.exit(main())
