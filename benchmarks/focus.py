"""Focus latency on a real repository: cold index, the first focus of a fresh process,
warm focus, and the first focus after an edit.

    .venv/bin/python benchmarks/focus.py [--subject pytest|sympy] [--repo PATH] [--runs N]
    .venv/bin/python benchmarks/focus.py --subject sympy --baseline REV [--edits N]

Default subject: pytest at the index benchmark's fixed commit (``benchmarks/index.py``);
``--subject sympy`` takes sympy (about 2,000 files) from its mirror at a fixed commit.
In one run:

- the cold index (``Workspace.index``), in files/s, then preparing focus (what
  ``coderooms index`` does after indexing: counting, embedding, keeping the state);
- the first focus of a fresh process once the index is built, from the kept state
  (the built index of this generation, focus-built.bin, and focus.npz),
  against the baseline of the same process building its engine from nothing (the path
  before focus state was kept), both as the whole process wall (``python -c``) and the
  CPU it took; and the wall of the ``coderooms focus --json`` command itself;
- warm focus, in process, median of many goals;
- after one file is edited: re-index, then focus on an engine rebuilt on the previous
  one, against an engine built from nothing; and a fresh process after the edit.

Prints medians and ratios.

With ``--baseline REV`` only the edit row runs, paired: this tree and this repository's
``src`` at REV each hold a long-lived workspace over a clone of their own (indexed and
focused once first), and take turns: one file is edited, then ``refresh`` and ``focus``
are timed (wall and CPU), first on one side, then on the other, alternating which goes
first. The ratios are taken edit by edit, so load that drifts during the run cancels.
``--frozen``: each side freezes its heap after its first focus, as the server (``up``)
does before serving.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from first_focus import SOURCE, baseline_source, compiled

from coderooms import embeddings, tokens
from coderooms.focus.runtime import FocusEngine
from coderooms.index.focus_state import BUILT_FILE, STATE_FILE
from coderooms.launch import BLAS_THREAD_VARIABLES
from coderooms.workspace import Workspace
from index import MIRRORED, edit_one, pick_file, print_rows, subject

DEFAULT_RUNS = 3
DEFAULT_EDITS = 9
TARGET_EDIT_S = 0.3
KEPT = (STATE_FILE, BUILT_FILE)  # what preparing focus leaves beside the index
WARM_SAMPLES = 30
GOALS = {
    "pytest": (
        "caplog does not capture records emitted from a logger with propagate disabled",
        "fixture teardown order is wrong for package scoped fixtures",
        "assertion rewriting breaks on the walrus operator inside an assert",
    ),
    "sympy": (
        "solve returns a wrong result for a quadratic equation with symbolic coefficients",
        "simplify hangs on a trigonometric expression with nested powers",
        "Matrix.det gives the wrong determinant for a matrix of rational functions",
    ),
}
TARGET_FRESH_FOCUS_S = 1.0
TARGET_WARM_MS = 30
# The child's own peak (KiB): VmHWM belongs to the program exec'd, while ru_maxrss keeps
# the peak of the forked copy of this (large) process from before the exec.
PEAK = """
def peak_kib():
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    import resource
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
"""
# A fresh process: open the workspace, focus once. FROM_NOTHING builds its engine as
# every process did before focus state was kept (no state read, none written).
FRESH = (
    PEAK
    + """
import sys
from coderooms.workspace import Workspace
ws = Workspace.open(sys.argv[1])
ws.focus(sys.argv[2])
print(peak_kib())
"""
)
FROM_NOTHING = (
    PEAK
    + """
import sys
from coderooms import embeddings, tokens
from coderooms.focus.runtime import FocusEngine
from coderooms.workspace import Workspace
ws = Workspace.open(sys.argv[1])
ws.refresh()
FocusEngine.from_reader(ws.graph(), ws, tokens.count_tokens, embeddings.embed).focus(sys.argv[2])
print(peak_kib())
"""
)


# One side of the paired edit row: a long-lived workspace over its own clone, which edits
# the file it is told of and answers the wall and CPU of refresh + focus, edit by edit.
EDIT_SIDE = """
import gc, json, os, sys, time
from pathlib import Path
import coderooms
from coderooms.workspace import Workspace
from index import edit_one
source, root, target, goals = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3]), sys.argv[4:]
assert coderooms.__file__.startswith(source), coderooms.__file__
ws = Workspace.open(root)
ws.index()
ws.focus(goals[0])
if os.environ.get("BENCH_FROZEN"):  # as `up` does before serving
    try:
        from coderooms.heap import freeze_kept_heap
    except ImportError:  # a baseline from before coderooms.heap
        gc.collect()
        gc.freeze()
    else:
        freeze_kept_heap()
print("ready", flush=True)
for line in sys.stdin:
    n = int(line)
    edit_one(target, n)
    wall, cpu = time.perf_counter(), time.process_time()
    ws.refresh()
    ws.focus(goals[n % len(goals)])
    print(json.dumps([time.perf_counter() - wall, time.process_time() - cpu]), flush=True)
"""


def paired_edits(args: argparse.Namespace) -> None:
    """The edit row, this tree against ``args.baseline`` (see the module's docstring)."""
    goals = GOALS[args.subject]
    load_start = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="coderooms-bench-") as tmp:
        scratch = Path(tmp)
        sides = [("this tree", compiled(SOURCE)), (f"baseline {args.baseline}", None)]
        children = []
        for k, (name, source) in enumerate(sides):
            place = scratch / f"side{k}"
            place.mkdir()
            if source is None:
                source = baseline_source(place, args.baseline)
            root, label = subject(place, args.repo, args.subject)
            target = pick_file(root)
            here = Path(__file__).resolve().parent  # for index.edit_one
            env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(source), str(here)])}
            for variable in BLAS_THREAD_VARIABLES:  # one BLAS thread, as every coderooms command
                env.setdefault(variable, "1")
            if args.frozen:
                env["BENCH_FROZEN"] = "1"
            command = [sys.executable, "-c", EDIT_SIDE, str(source), str(root), str(target)]
            print(f"  {name}: indexing {root.name} and a first focus ...", file=sys.stderr)
            child = subprocess.Popen(
                [*command, *goals],
                env=env,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                text=True,
            )
            assert child.stdout is not None and child.stdout.readline().strip() == "ready"
            children.append(child)
        edited = target.relative_to(root).as_posix()
        runs: list[list[tuple[float, float]]] = [[], []]
        for n in range(args.edits):
            for k in (0, 1) if n % 2 == 0 else (1, 0):
                child = children[k]
                assert child.stdin is not None and child.stdout is not None
                child.stdin.write(f"{n}\n")
                child.stdin.flush()
                wall, cpu = json.loads(child.stdout.readline())
                runs[k].append((wall, cpu))
            print(
                f"  edit {n + 1}: this tree {runs[0][-1][0]:.3f} s wall, {runs[0][-1][1]:.3f} s"
                f" CPU; baseline {runs[1][-1][0]:.3f} s wall, {runs[1][-1][1]:.3f} s CPU;"
                f" load {os.getloadavg()[0]:.1f}",
                file=sys.stderr,
            )
        for child in children:
            assert child.stdin is not None
            child.stdin.close()
            child.wait()
    rows = [
        ("subject", label),
        ("edited file", edited),
        ("heap", "frozen after the first focus, as `up` does" if args.frozen else "as it comes"),
        (
            "cores / load average start, end",
            f"{len(os.sched_getaffinity(0))} / {load_start:.2f}, {os.getloadavg()[0]:.2f}",
        ),
    ]
    for (name, _), got in zip(sides, runs, strict=True):
        rows.append(
            (
                f"{name}: first refresh + focus after a one-file edit, median of {len(got)}",
                f"{pair_cell(median_pair(got))}  (target <= {TARGET_EDIT_S:g} s)",
            )
        )
    wall_ratio = statistics.median(a[0] / b[0] for a, b in zip(*runs, strict=True))
    cpu_ratio = statistics.median(a[1] / b[1] for a, b in zip(*runs, strict=True))
    rows.append(
        (
            "this tree / baseline, median of the pairs",
            f"wall {wall_ratio:.2f}x, CPU {cpu_ratio:.2f}x",
        )
    )
    print_rows(rows)


def timed(fn: Callable[[], object]) -> float:
    return clocked(fn)[0]


def clocked(fn: Callable[[], object]) -> tuple[float, float]:
    """Wall and CPU seconds of ``fn`` in this process (CPU: what a loaded machine's
    wall clock hides)."""
    wall, cpu = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - wall, time.process_time() - cpu


def median_pair(samples: list[tuple[float, float]]) -> tuple[float, float]:
    return statistics.median(w for w, _ in samples), statistics.median(c for _, c in samples)


def pair_cell(m: tuple[float, float], unit: str = "s") -> str:
    scale = 1000 if unit == "ms" else 1
    return f"{m[0] * scale:.3g} {unit} wall, {m[1] * scale:.3g} {unit} CPU"


def process(args: list[str], says_rss: bool = True) -> tuple[float, float, float]:
    """Wall seconds, CPU seconds and peak RSS (MB; 0 when unknown) of one child process.
    The peak is the one the child prints last (see PEAK): the one wait4 reports starts
    from this process's size at the fork."""
    start = time.perf_counter()
    child = subprocess.Popen(args, stdout=subprocess.PIPE)
    out = child.stdout.read() if child.stdout is not None else b""
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - start
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode:
        raise SystemExit(f"{args[:3]} failed with status {child.returncode}")
    rss = int(out.split()[-1]) / 1024 if says_rss else 0.0
    return wall, usage.ru_utime + usage.ru_stime, rss


def medians(samples: list[tuple[float, float, float]]) -> tuple[float, float, float]:
    return (
        statistics.median(s[0] for s in samples),
        statistics.median(s[1] for s in samples),
        max(s[2] for s in samples),
    )


def cell(m: tuple[float, float, float]) -> str:
    rss = f", peak RSS {m[2]:.0f} MB" if m[2] else ""
    return f"{m[0]:.2f} s wall, {m[1]:.2f} s CPU{rss}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--subject", choices=sorted(MIRRORED), default="pytest")
    ap.add_argument("--repo", help="focus on this directory instead")
    ap.add_argument("--runs", type=int, default=DEFAULT_RUNS)
    ap.add_argument("--baseline", help="only the edit row, paired with this repository at REV")
    ap.add_argument("--edits", type=int, default=DEFAULT_EDITS, help="edits with --baseline")
    ap.add_argument(
        "--frozen",
        action="store_true",
        help="with --baseline: each side freezes its heap after the first focus, as `up` does",
    )
    args = ap.parse_args()
    if args.baseline:
        paired_edits(args)
        return
    goals = GOALS[args.subject]
    cli = str(Path(sys.executable).parent / "coderooms")

    with tempfile.TemporaryDirectory(prefix="coderooms-bench-") as tmp:
        root, label = subject(Path(tmp), args.repo, args.subject)
        ws = Workspace.open(root)
        t_index = timed(ws.index)
        files = ws.summary().files
        t_prepare = timed(ws.focus_engine)
        kept_mb = sum((root / ".coderooms" / name).stat().st_size for name in KEPT) / 1e6

        fresh, nothing, command = [], [], []
        for n in range(args.runs):
            goal = goals[n % len(goals)]
            fresh.append(process([sys.executable, "-c", FRESH, str(root), goal]))
            nothing.append(process([sys.executable, "-c", FROM_NOTHING, str(root), goal]))
            command.append(process([cli, "focus", goal, "--repo", str(root), "--json"], False))
        m_fresh, m_nothing, m_command = medians(fresh), medians(nothing), medians(command)

        ws.focus(goals[0])
        warm = median_pair(
            [clocked(lambda i=i: ws.focus(goals[i % len(goals)])) for i in range(WARM_SAMPLES)]
        )

        target = pick_file(root)
        original = target.read_text(encoding="utf-8")
        reindex, after_edit, from_nothing, fresh_edit = [], [], [], []
        for n in range(args.runs):
            goal = goals[n % len(goals)]
            edit_one(target, n)
            reindex.append(clocked(ws.refresh))  # what focus does first when files moved
            after_edit.append(clocked(lambda goal=goal: ws.focus(goal)))
            cold = Workspace.open(root)  # the index is current: only the engine is built
            cold.refresh()
            from_nothing.append(
                clocked(lambda goal=goal, ws=cold: engine_from_nothing(ws).focus(goal))
            )
            cold.close()
            edit_one(target, n + args.runs)  # and once more, for a fresh process to see
            fresh_edit.append(process([sys.executable, "-c", FRESH, str(root), goal]))
        target.write_text(original, encoding="utf-8")
        ws.close()

    t_reindex = median_pair(reindex)
    t_edit, t_cold = median_pair(after_edit), median_pair(from_nothing)
    m_fresh_edit = medians(fresh_edit)
    rows = [
        ("subject", label),
        ("cores / load average", f"{len(os.sched_getaffinity(0))} / {os.getloadavg()[0]:.2f}"),
        ("cold index", f"{t_index:.2f} s, {files} files, {files / t_index:.0f} files/s"),
        ("then preparing focus (count, embed, keep)", f"{t_prepare:.2f} s, {kept_mb:.0f} MB"),
        (f"fresh process, first focus from the kept state, median of {args.runs}", cell(m_fresh)),
        ("baseline: fresh process, engine from nothing", cell(m_nothing)),
        (
            "kept state / from nothing (wall, CPU)",
            f"{m_fresh[0] / m_nothing[0]:.2f}x, {m_fresh[1] / m_nothing[1]:.2f}x"
            f"  (target <= {TARGET_FRESH_FOCUS_S:g} s wall)",
        ),
        ("`coderooms focus --json` process", cell(m_command)),
        (
            f"warm focus, median of {WARM_SAMPLES}",
            f"{pair_cell(warm, 'ms')}  (target <= {TARGET_WARM_MS} ms)",
        ),
        ("edited file", target.relative_to(root).as_posix()),
        (f"after a one-file edit, median of {args.runs}: re-index", pair_cell(t_reindex)),
        ("then focus, engine rebuilt on the previous one", pair_cell(t_edit)),
        ("baseline: the same focus, engine from nothing", pair_cell(t_cold)),
        (
            "rebuilt on the previous one / from nothing (wall, CPU)",
            f"{t_edit[0] / t_cold[0]:.2f}x, {t_edit[1] / t_cold[1]:.2f}x",
        ),
        ("fresh process after a one-file edit (re-index + focus)", cell(m_fresh_edit)),
    ]
    print_rows(rows)


def engine_from_nothing(ws: Workspace) -> FocusEngine:
    """The engine as every process built it before focus state was kept."""
    return FocusEngine.from_reader(ws.graph(), ws, tokens.count_tokens, embeddings.embed)


if __name__ == "__main__":
    sys.exit(main())
