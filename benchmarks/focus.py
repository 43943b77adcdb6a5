"""Focus latency on a real repository: a warm call, and the first call after an edit.

    .venv/bin/python benchmarks/focus.py [--repo PATH] [--runs N]

Default subject: pytest at the index benchmark's fixed commit (``benchmarks/index.py``).
After one file is edited, ``Workspace.focus`` re-indexes the change (timed on its own)
and rebuilds its engine on the previous one, reusing the work done for unchanged code. The baseline, in
the same run, is the same focus on an engine built from nothing (a fresh ``Workspace``
over the same, already current index). Prints medians and their ratio.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from coderooms.workspace import Workspace
from index import edit_one, pick_file, print_rows, subject

DEFAULT_RUNS = 5
WARM_SAMPLES = 30
GOALS = (
    "caplog does not capture records emitted from a logger with propagate disabled",
    "fixture teardown order is wrong for package scoped fixtures",
    "assertion rewriting breaks on the walrus operator inside an assert",
)


def timed(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repo", help="focus on this directory instead of pytest")
    ap.add_argument("--runs", type=int, default=DEFAULT_RUNS)
    args = ap.parse_args()

    with tempfile.TemporaryDirectory(prefix="coderooms-bench-") as tmp:
        root, label = subject(Path(tmp), args.repo)
        ws = Workspace.open(root)
        ws.index()
        first = timed(lambda: ws.focus(GOALS[0]))
        warm = statistics.median(
            timed(lambda i=i: ws.focus(GOALS[i % len(GOALS)])) for i in range(WARM_SAMPLES)
        )
        target = pick_file(root)
        original = target.read_text(encoding="utf-8")
        reindex, after_edit, from_nothing = [], [], []
        for n in range(args.runs):
            goal = GOALS[n % len(GOALS)]
            edit_one(target, n)
            reindex.append(timed(ws.refresh))  # what focus does first when files moved
            after_edit.append(timed(lambda goal=goal: ws.focus(goal)))
            fresh = Workspace.open(root)  # the index is current: only the engine is built
            from_nothing.append(timed(lambda goal=goal, fresh=fresh: fresh.focus(goal)))
            fresh.close()
        target.write_text(original, encoding="utf-8")
        ws.close()

    t_index = statistics.median(reindex)
    t_edit, t_cold = statistics.median(after_edit), statistics.median(from_nothing)
    rows = [
        ("subject", label),
        ("first focus (engine built from nothing)", f"{first:.3f} s"),
        (f"warm focus, median of {WARM_SAMPLES}", f"{warm * 1000:.1f} ms"),
        ("edited file", target.relative_to(root).as_posix()),
        (f"after a one-file edit, median of {args.runs}: re-index", f"{t_index:.3f} s"),
        ("then focus, engine rebuilt on the previous one", f"{t_edit:.3f} s"),
        ("baseline: the same focus, engine from nothing", f"{t_cold:.3f} s"),
        ("rebuilt on the previous one / from nothing", f"{t_edit / t_cold:.2f}x"),
    ]
    print_rows(rows)


if __name__ == "__main__":
    sys.exit(main())
