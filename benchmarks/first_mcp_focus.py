"""The first focus an agent gets from a server that just started, on an indexed repository.

One command::

    .venv/bin/python benchmarks/first_mcp_focus.py [--subject pytest|sympy] [--repo PATH]
        [--rounds N] [--pause S] [--baseline REV]

Issue 16's row "first MCP focus after ``up`` on sympy" (target ≤ 0.5 s). The subject is
cloned at its fixed commit (as ``benchmarks/index.py`` does) and indexed once, untimed.
Then, for each round, with a goal no earlier round asked, and before each server with the
token counts earlier servers kept removed (each first focus counts its code as on a
repository nobody focused on yet):

* ``coderooms up --repo``: the server builds the focus engine before it serves; the
  first ``focus`` over HTTP is timed (wall, and the server's CPU for it);
* ``coderooms mcp --repo`` (stdio): the first ``focus`` is timed right after the
  handshake, and again in a second server after ``--pause`` seconds (an agent's first
  turn: the server prepares the engine meanwhile).

With ``--baseline REV`` every round runs this tree's servers and then servers importing
this repository's ``src`` at ``REV``, and the ratios of the medians are printed. The
machine's load average is printed beside the figures: they are wall times.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from coderooms.index.discover import INDEX_DIR
from coderooms.index.focus_state import TOKENS_FILE

_HERE = Path(__file__).resolve().parent
sys.path.append(str(_HERE))
from reliability import (  # noqa: E402
    SERVED_PIDS,
    HttpAgent,
    WireClient,
    baseline_source,
    process_cpu_s,
    served,
)

from index import MIRRORED, subject  # noqa: E402

CODEROOMS = str(Path(sys.executable).parent / "coderooms")
AGENT = "agent-0"
DEFAULT_ROUNDS = 3
DEFAULT_PAUSE_S = 3.0
TARGET_FIRST_FOCUS_S = 0.5
GOALS = {
    "pytest": (
        "caplog does not capture records emitted from a logger with propagate disabled",
        "fixture teardown order is wrong for package scoped fixtures",
        "assertion rewriting breaks on the walrus operator inside an assert",
        "the junitxml report writes the wrong duration for a skipped test",
        "monkeypatch.setenv does not restore a variable that did not exist",
    ),
    "sympy": (
        "solve returns a wrong result for a quadratic equation with symbolic coefficients",
        "simplify hangs on a trigonometric expression with nested powers",
        "Matrix.det gives the wrong determinant for a matrix of rational functions",
        "latex printing of a Subs object is missing parentheses around the expression",
        "rsolve fails for a linear recurrence with a symbolic coefficient",
    ),
}


def load() -> str:
    one, five, _ = os.getloadavg()
    return f"load average {one:.1f} / {five:.1f} on {os.cpu_count()} CPUs"


def timed_focus(call: Callable[[str], object], pid: int, goal: str) -> tuple[float, float]:
    """Wall and server CPU seconds of one focus call made through ``call``."""
    cpu = process_cpu_s(pid)
    started = time.perf_counter()
    call(goal)
    return time.perf_counter() - started, process_cpu_s(pid) - cpu


def one_round(
    db: str, repo: Path, base: Path, goal: str, source: Path | None, token: str, pause: float
) -> dict[str, tuple[float, float]]:
    env = dict(os.environ)
    if source is not None:
        env["PYTHONPATH"] = str(source)
    out: dict[str, tuple[float, float]] = {}
    counts = repo / INDEX_DIR / TOKENS_FILE
    counts.unlink(missing_ok=True)
    with served(base, db, repo, source) as port:
        agent = HttpAgent(port, token)
        out["up, HTTP"] = timed_focus(
            lambda g: agent.call("focus", {"goal": g}), SERVED_PIDS[port], goal
        )
        agent.close()
    for name, wait in (("mcp, at once", 0.0), (f"mcp, after {pause:g} s", pause)):
        counts.unlink(missing_ok=True)
        server = WireClient(["--db", db, "mcp", "--agent", AGENT, "--repo", str(repo)], env)
        time.sleep(wait)
        out[name] = timed_focus(
            lambda g, s=server: s.call_tool("focus", {"goal": g}), server.pid, goal
        )
        server.close()
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--subject", choices=sorted(MIRRORED), default="sympy")
    ap.add_argument("--repo", help="an indexed copy of this directory instead")
    ap.add_argument("--rounds", type=int, default=DEFAULT_ROUNDS)
    ap.add_argument("--pause", type=float, default=DEFAULT_PAUSE_S)
    ap.add_argument("--baseline", help="also run the servers of this revision's src")
    args = ap.parse_args()
    goals = GOALS[args.subject]
    if not 1 <= args.rounds <= len(goals):
        ap.error(f"--rounds must be between 1 and {len(goals)} (one new goal a round)")
    with tempfile.TemporaryDirectory(prefix="coderooms-first-focus-") as tmp:
        base = Path(tmp)
        root, label = subject(base, args.repo, args.subject)
        print(f"subject: {label}; indexing it once (untimed)", flush=True)
        subprocess.run([CODEROOMS, "index", str(root)], check=True, capture_output=True)
        db = str(base / "rooms.db")
        subprocess.run([CODEROOMS, "--db", db, "init"], check=True, capture_output=True)
        subprocess.run([CODEROOMS, "--db", db, "agent", "add", AGENT], check=True)
        token = subprocess.run(
            [CODEROOMS, "--db", db, "agent", "token", AGENT],
            check=True,
            capture_output=True,
            text=True,
        ).stdout.strip()
        sides: list[tuple[str, Path | None]] = [("this tree", None)]
        if args.baseline:
            sides.append((f"baseline {args.baseline}", baseline_source(base, args.baseline)))
        results: dict[str, dict[str, list[tuple[float, float]]]] = {n: {} for n, _ in sides}
        for k in range(args.rounds):
            for name, source in sides:
                row = one_round(db, root, base, goals[k], source, token, args.pause)
                for way, value in row.items():
                    results[name].setdefault(way, []).append(value)
                shown = ", ".join(f"{w} {v[0] * 1000:.0f} ms" for w, v in row.items())
                print(f"round {k + 1}/{args.rounds}, {name}: {shown}; {load()}", flush=True)
    print(f"\nfirst focus after the server started, median of {args.rounds} rounds")
    print(f"{'':24}" + "".join(f"{name:>34}" for name, _ in sides))
    ways = list(results["this tree"])
    passed = True
    for way in ways:
        cells = []
        for name, _ in sides:
            wall = statistics.median(v[0] for v in results[name][way])
            cpu = statistics.median(v[1] for v in results[name][way])
            cells.append(f"{wall * 1000:9.0f} ms wall {cpu * 1000:7.0f} ms CPU")
        line = f"  {way:22}" + "".join(f"{c:>34}" for c in cells)
        if len(sides) == 2:
            ours = statistics.median(v[0] for v in results["this tree"][way])
            theirs = statistics.median(v[0] for v in results[sides[1][0]][way])
            line += f"   ratio {ours / theirs:.2f}"
        print(line)
    for way in ("up, HTTP", f"mcp, after {args.pause:g} s"):
        wall = statistics.median(v[0] for v in results["this tree"][way])
        ok = wall <= TARGET_FIRST_FOCUS_S
        passed = passed and ok
        print(f"  {way} ≤ {TARGET_FIRST_FOCUS_S} s: {'met' if ok else 'NOT met'}")
    print(f"\n{load()}")
    return 0 if passed else 1


if __name__ == "__main__":
    sys.exit(main())
