"""A fresh ``coderooms focus`` process over an index already built, and warm focus,
each paired against a baseline revision in the same run.

    .venv/bin/python benchmarks/fresh_focus.py [--subject sympy|pytest] [--repo PATH]
        [--runs N] [--warm N] [--baseline REV]

Each side (this tree; with ``--baseline``, this repository's ``src`` at REV), its modules
compiled to bytecode first as an installed copy's are, gets its own
copy of the subject, indexed by its own code as ``coderooms index`` does, so that no kept
file one side writes is read by the other. Then, the sides taking turns (A B, B A, ...):

- the console command ``coderooms focus GOAL --json`` as a new process: its wall, CPU
  and peak RSS, a goal asked for the first time on each run (as a user asks one
  question after another; up to ``len(FRESH_GOALS)`` runs);
- warm focus: a process that opens the workspace and focuses once, then times
  ``--warm`` focuses over the goals in turn: the median wall and CPU of one focus.

It checks that both sides print the same answers, and prints medians, the ratios of this
tree to the baseline, and the load average (CPU time is what a loaded machine's wall
clock hides).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from first_focus import SOURCE, baseline_source, compiled

from index import MIRRORED, print_rows, subject

DEFAULT_SUBJECT = "sympy"
DEFAULT_RUNS = 7
DEFAULT_WARM = 30
GOALS = (
    "solve returns a wrong result for a quadratic equation with symbolic coefficients",
    "simplify hangs on a trigonometric expression with nested powers",
    "Matrix.det gives the wrong determinant for a matrix of rational functions",
)
# A fresh process asks a question no process asked before (its answer's code not yet
# counted), as a user does: one goal of these per run, on both sides (none is a warm one).
FRESH_GOALS = (
    "rsolve returns None for a linear recurrence with a polynomial term",
    "Poly.gcd of two polynomials over a finite field gives a non monic result",
    "the codegen for C emits a wrong type for an integer matrix symbol",
    "integrate of a piecewise function with a symbolic bound raises an error",
    "latex printing of a sparse matrix drops its zero rows",
    "lambdify with the numpy module mishandles bessel functions",
    "series expansion of log around a branch point gives the wrong sign",
    "factor over an algebraic extension loses a factor of the polynomial",
    "limit at infinity of a rational function with radicals returns nan",
    "the dsolve of a second order linear ode with constant coefficients is wrong",
    "subs on a derivative with respect to a function of x gives a wrong result",
    "the pretty printer misaligns a fraction inside a product",
    "nsimplify of a float with a rational tolerance returns an irrational",
    "the assumptions system says a positive symbol times i is real",
)
TARGET_FRESH_S = 1.0
TARGET_WARM_MS = 30.0
# The console script (coderooms.launch.main) as installed, from the source on PYTHONPATH;
# its own peak RSS on stderr as it exits (see PEAK), after what the command printed.
COMMAND = """
import sys
def peak_kib():
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return 0
def report_peak():
    sys.stderr.write(f"\\npeak-kib {peak_kib()}\\n")
import atexit
atexit.register(report_peak)  # a one-shot command ends by its exit functions, not finally
sys.argv = ["coderooms", *sys.argv[1:]]
from coderooms import launch
launch.main()
"""
# Warm focus in one process: the first focus builds or restores the engine, then each
# focus is timed (its goal not the one before it, so no ranking is reused). numpy gets one
# BLAS thread, as in a server the console script starts (see launch.BLAS_THREAD_VARIABLES).
WARM = """
import json, sys, time
from coderooms import launch
launch._one_blas_thread()
from coderooms.workspace import Workspace
goals = json.loads(sys.argv[2])
ws = Workspace.open(sys.argv[1])
ws.focus(goals[0])
walls, cpus = [], []
for n in range(int(sys.argv[3])):
    wall, cpu = time.perf_counter(), time.process_time()
    ws.focus(goals[(n + 1) % len(goals)])
    walls.append(time.perf_counter() - wall)
    cpus.append(time.process_time() - cpu)
walls.sort(); cpus.sort()
print(json.dumps([walls[len(walls) // 2], cpus[len(cpus) // 2]]))
"""


def child_env(source: Path) -> dict[str, str]:
    env = {**os.environ, "PYTHONPATH": str(source)}
    env.pop("CODEROOMS_AGENT", None)
    return env


def index(source: Path, repo: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", COMMAND, "index", str(repo), "--json"],
        capture_output=True,
        env=child_env(source),
    )
    if done.returncode != 0:
        raise SystemExit(f"coderooms index failed: {done.stderr.decode()[-500:]}")


def fresh_focus(source: Path, repo: Path, goal: str) -> tuple[float, float, float, str]:
    """Wall and CPU seconds, peak MB and a digest of the answer of one focus process."""
    with tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        child = subprocess.Popen(
            [sys.executable, "-c", COMMAND, "focus", goal, "--json"],
            cwd=repo,
            env=child_env(source),
            stdout=subprocess.PIPE,
            stderr=err,
        )
        out = child.stdout.read() if child.stdout is not None else b""
        _, status, usage = os.wait4(child.pid, 0)
        wall = time.perf_counter() - start
        child.returncode = os.waitstatus_to_exitcode(status)
        err.seek(0)
        said = err.read()
    if child.returncode:
        raise SystemExit(f"coderooms focus failed: {said.decode()[-500:]}")
    peak = int(said.split()[-1]) / 1024
    return wall, usage.ru_utime + usage.ru_stime, peak, hashlib.sha256(out).hexdigest()


def warm_focus(source: Path, repo: Path, count: int) -> tuple[float, float]:
    done = subprocess.run(
        [sys.executable, "-c", WARM, str(repo), json.dumps(GOALS), str(count)],
        capture_output=True,
        env=child_env(source),
        check=True,
    )
    wall, cpu = json.loads(done.stdout)
    return float(wall), float(cpu)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--subject", default=DEFAULT_SUBJECT, choices=sorted(MIRRORED))
    ap.add_argument("--repo", help="a checkout to copy instead of the subject")
    ap.add_argument("--runs", type=int, default=DEFAULT_RUNS)
    ap.add_argument("--warm", type=int, default=DEFAULT_WARM, help="focuses timed per warm run")
    ap.add_argument("--baseline", help="also run this repository's src at REV (paired)")
    args = ap.parse_args()
    load_start = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="coderooms-fresh-") as tmp:
        scratch = Path(tmp)
        sides = [("this tree", compiled(SOURCE))]
        if args.baseline:
            base = baseline_source(scratch, args.baseline)
            sides.append((f"baseline {args.baseline}", base))
        repos: dict[str, Path] = {}
        label = ""
        for n, (name, source) in enumerate(sides):
            (scratch / f"side{n}").mkdir()
            repos[name], label = subject(scratch / f"side{n}", args.repo, args.subject)
            print(f"  indexing for {name} ...", file=sys.stderr)
            index(source, repos[name])
        fresh: dict[str, list[tuple[float, float, float, str]]] = {name: [] for name, _ in sides}
        warm: dict[str, list[tuple[float, float]]] = {name: [] for name, _ in sides}
        for turn in range(args.runs):
            goal = FRESH_GOALS[turn % len(FRESH_GOALS)]
            for name, source in sides if turn % 2 == 0 else sides[::-1]:
                fresh[name].append(run := fresh_focus(source, repos[name], goal))
                warm[name].append(hot := warm_focus(source, repos[name], args.warm))
                print(
                    f"  run {turn + 1}, {name}: fresh focus {run[0]:.2f} s wall, "
                    f"{run[1]:.2f} s CPU; warm {hot[0] * 1000:.1f} ms wall, "
                    f"{hot[1] * 1000:.1f} ms CPU; load {os.getloadavg()[0]:.1f}",
                    file=sys.stderr,
                )
    rows = [
        ("subject", label),
        (
            "cores / load average at start, end",
            f"{len(os.sched_getaffinity(0))} / {load_start:.2f}, {os.getloadavg()[0]:.2f}",
        ),
    ]
    medians: dict[str, tuple[float, float, float, float]] = {}
    for name, _ in sides:
        runs = fresh[name]
        wall = statistics.median(r[0] for r in runs)
        cpu = statistics.median(r[1] for r in runs)
        warm_wall = statistics.median(w for w, _ in warm[name])
        warm_cpu = statistics.median(c for _, c in warm[name])
        medians[name] = (wall, cpu, warm_wall, warm_cpu)
        rows += [
            (
                f"{name}: `coderooms focus --json` process, median of {len(runs)}",
                f"{wall:.2f} s wall, {cpu:.2f} s CPU, peak RSS {max(r[2] for r in runs):.0f} MB"
                f"  (target <= {TARGET_FRESH_S:g} s wall)",
            ),
            (
                f"{name}: warm focus p50 ({args.warm} a run), median of {len(runs)} runs",
                f"{warm_wall * 1000:.1f} ms wall, {warm_cpu * 1000:.1f} ms CPU"
                f"  (target <= {TARGET_WARM_MS:g} ms)",
            ),
        ]
    if args.baseline:
        mine, base = medians["this tree"], medians[sides[1][0]]
        same = all(
            a[3] == b[3] for a, b in zip(fresh["this tree"], fresh[sides[1][0]], strict=True)
        )
        rows += [
            (
                "this tree / baseline: fresh process",
                f"wall {mine[0] / base[0]:.2f}x, CPU {mine[1] / base[1]:.2f}x",
            ),
            (
                "this tree / baseline: warm focus",
                f"wall {mine[2] / base[2]:.2f}x, CPU {mine[3] / base[3]:.2f}x",
            ),
            ("the same answers on both sides", "yes" if same else "NO"),
        ]
    print_rows(rows)


if __name__ == "__main__":
    sys.exit(main())
