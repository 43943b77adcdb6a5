"""The first-ever ``coderooms focus`` on a checkout that was never indexed.

    .venv/bin/python benchmarks/first_focus.py [--subject sympy|pytest] [--repo PATH]
        [--runs N] [--baseline REV]

Default subject: sympy (about 2,000 files) cloned from its mirror at the fixed commit
of ``benchmarks/index.py``. Each run deletes ``.coderooms`` and runs the command a user
runs, ``coderooms focus GOAL --repo CHECKOUT``, as a new process with standard error on
a pipe (so each phase of the work is one line there). Measured per run: the process
wall, its CPU (with the indexing workers it waited for), its peak memory, when the
answer reached stdout (the target is judged on the wall, which also holds writing what
the next process starts from), when each phase line came, how long the command sat silent before its first line, and the
longest stretch between two lines (off a terminal a phase is one line when it starts,
so this is the longest phase, or a stretch of work no phase tells of). With ``--baseline REV`` the same command runs from this
repository's ``src`` at ``REV`` too, the two taking turns (A B B A ...), so both see
the same machine; the ratios are against it. Prints medians and the load average: on a
shared machine, read CPU beside wall.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from index import MIRRORED, print_rows, subject

DEFAULT_RUNS = 3
DEFAULT_SUBJECT = "sympy"
GOAL = "Matrix.det gives the wrong determinant for a matrix of rational functions"
TARGET_WALL_S = 10.0
TARGET_SILENT_S = 1.0
SOURCE = Path(__file__).resolve().parents[1] / "src"
# The command as the installed entry point (the console script, coderooms.launch.main)
# runs it, from the source tree on PYTHONPATH: it runs a one-shot command without the
# cyclic garbage collector, which coderooms.cli.main alone leaves on (measured on
# sympy: a collection of 0.2-0.3 s over the index run's objects, none for a user).
COMMAND = (
    "import sys; sys.argv = ['coderooms', *sys.argv[1:]]; from coderooms.launch import main; main()"
)


class Run:
    """One first focus: wall and CPU seconds, peak MB, each stderr line's time, and when
    the answer's first byte reached stdout (the process then still writes what it keeps
    for the next one, aside, before it exits: the wall, on which the target is judged)."""

    def __init__(
        self,
        wall: float,
        cpu: float,
        peak_mb: float,
        lines: list[tuple[float, str]],
        answer: float,
    ):
        self.wall = wall
        self.cpu = cpu
        self.peak_mb = peak_mb
        self.lines = lines
        self.answer = answer

    @property
    def first_line(self) -> float:
        """Seconds before the first line on stderr (the wall when there is none)."""
        return self.lines[0][0] if self.lines else self.wall

    @property
    def longest_gap(self) -> float:
        """The longest stretch (start, each line, exit) without a line on stderr."""
        marks = [0.0, *(at for at, _ in self.lines), self.wall]
        return max(b - a for a, b in zip(marks, marks[1:], strict=False))


def first_focus(source: Path, repo: Path) -> Run:
    shutil.rmtree(repo / ".coderooms", ignore_errors=True)
    env = {**os.environ, "PYTHONPATH": str(source)}
    env.pop("CODEROOMS_AGENT", None)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-c", COMMAND, "focus", GOAL, "--repo", str(repo), "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    lines: list[tuple[float, str]] = []
    answered: list[float] = []

    def answer() -> None:
        assert proc.stdout is not None
        if proc.stdout.read(1):
            answered.append(time.perf_counter() - start)
        proc.stdout.read()  # the rest of the answer

    def read() -> None:
        assert proc.stderr is not None
        for raw in proc.stderr:
            lines.append((time.perf_counter() - start, raw.decode("utf-8", "replace").rstrip()))

    readers = [threading.Thread(target=job, daemon=True) for job in (read, answer)]
    for reader in readers:
        reader.start()
    code = proc.wait()
    wall = time.perf_counter() - start
    for reader in readers:
        reader.join()
    if code != 0:
        raise SystemExit(f"coderooms focus failed ({code}): {lines[-3:]}")
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    return Run(wall, cpu, after.ru_maxrss / 1024, lines, answered[0] if answered else wall)


def baseline_source(base: Path, revision: str) -> Path:
    """This repository's ``src`` at ``revision``, extracted under ``base`` and compiled
    (see :func:`compiled`): each side of a paired run starts as an installed copy does."""
    out = base / "baseline"
    out.mkdir()
    archive = subprocess.run(
        ["git", "-C", str(SOURCE.parent), "archive", revision, "src"],
        capture_output=True,
        check=True,
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(out)], input=archive, check=True)
    return compiled(out / "src")


def compiled(source: Path) -> Path:
    """``source`` with its modules compiled to bytecode, as installing the package does:
    a process started with PYTHONDONTWRITEBYTECODE set (or from a fresh extract) would
    otherwise compile every module it imports, a cost no installed copy pays."""
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(source)], check=True)
    return source


def phases_cell(run: Run) -> str:
    return ", ".join(f"{line.split(':')[0]} @{at:.1f}s" for at, line in run.lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--subject", default=DEFAULT_SUBJECT, choices=sorted(MIRRORED))
    ap.add_argument("--repo", help="a checkout to copy instead of the subject")
    ap.add_argument("--runs", type=int, default=DEFAULT_RUNS)
    ap.add_argument("--baseline", help="also run this repository's src at REV (paired)")
    args = ap.parse_args()
    load_start = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="coderooms-first-") as tmp:
        scratch = Path(tmp)
        repo, label = subject(scratch, args.repo, args.subject)
        sides = [("this tree", compiled(SOURCE))]
        if args.baseline:
            sides.append((f"baseline {args.baseline}", baseline_source(scratch, args.baseline)))
        runs: dict[str, list[Run]] = {name: [] for name, _ in sides}
        for turn in range(args.runs):
            for name, source in sides if turn % 2 == 0 else sides[::-1]:
                run = first_focus(source, repo)
                runs[name].append(run)
                print(
                    f"  run {turn + 1}, {name}: wall {run.wall:.2f} s (answer at "
                    f"{run.answer:.2f} s), CPU {run.cpu:.2f} s, "
                    f"first line at {run.first_line:.2f} s, longest gap {run.longest_gap:.2f} s, "
                    f"load {os.getloadavg()[0]:.1f}",
                    file=sys.stderr,
                )
    rows = [
        ("subject", label),
        ("goal", GOAL),
        (
            "cores / load average start, end",
            f"{len(os.sched_getaffinity(0))} / {load_start:.2f}, {os.getloadavg()[0]:.2f}",
        ),
    ]
    medians: dict[str, tuple[float, float]] = {}
    for name, got in runs.items():
        wall = statistics.median(r.wall for r in got)
        cpu = statistics.median(r.cpu for r in got)
        medians[name] = (wall, cpu)
        middle = sorted(got, key=lambda r: r.wall)[len(got) // 2]
        rows += [
            (
                f"{name}: first focus, median of {len(got)}",
                f"wall {wall:.2f} s (target <= {TARGET_WALL_S:g}), CPU {cpu:.2f} s, "
                f"peak {max(r.peak_mb for r in got):.0f} MB",
            ),
            (
                f"{name}: the answer on stdout at (median)",
                f"{statistics.median(r.answer for r in got):.2f} s "
                "(then what is kept for the next process is written, and it exits)",
            ),
            (
                f"{name}: silent before the first line / longest gap (medians)",
                f"{statistics.median(r.first_line for r in got):.2f} s "
                f"(target <= {TARGET_SILENT_S:g}) / "
                f"{statistics.median(r.longest_gap for r in got):.2f} s",
            ),
            (f"{name}: phases of the median run", phases_cell(middle)),
        ]
    if args.baseline:
        (wall, cpu), (base_wall, base_cpu) = medians["this tree"], medians[sides[1][0]]
        rows.append(
            ("this tree / baseline", f"wall {wall / base_wall:.2f}x, CPU {cpu / base_cpu:.2f}x")
        )
    print_rows(rows)


if __name__ == "__main__":
    sys.exit(main())
