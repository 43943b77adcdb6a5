"""Benchmark the code index on a real repository.

    .venv/bin/python benchmarks/index.py [--subject pytest|sympy] [--repo PATH] [--runs N]
        [--scale K] [--baseline REV]

Default subject: pytest-dev/pytest at a fixed commit, cloned from the local mirror
``../.mirror/pytest-dev+pytest/repo`` beside the project (or under
``$CODEROOMS_MIRROR_DIR``); a large installed package stands in when there is none.
``--subject sympy`` takes sympy (about 2,000 files) from its mirror at a fixed commit.
Measures, in one run: tree-sitter parse alone (the baseline),
serial extraction, a cold index on every core, a no-change re-run, a one-file change,
the same two on a tree scaled to >= 2,000 files, and peak memory. Prints medians and
ratios against the baseline.

With ``--baseline REV`` only the cold index runs, paired: a new process indexes the
subject from nothing, importing this tree's ``src`` or this repository's ``src`` at REV,
the two taking turns (A B B A ...) so both see the same machine. Each process times
its index run alone (wall, and CPU with the workers it waited for); the medians, the
files per second and the ratios against REV are printed with the load average.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from coderooms.index.extract import curly, process_file, python
from coderooms.index.languages import PARSED_LANGUAGES, language_of
from coderooms.workspace import Workspace

MIRROR_DIR = Path(
    os.environ.get("CODEROOMS_MIRROR_DIR", Path(__file__).resolve().parents[2] / ".mirror")
)
PYTEST_MIRROR = MIRROR_DIR / "pytest-dev+pytest" / "repo"
PYTEST_COMMIT = "df87db7b0462fb764ef73fa00561adf8ad047572"
# Subjects cloned from the local mirrors at fixed commits: name -> (mirror, commit).
MIRRORED = {
    "pytest": (PYTEST_MIRROR, PYTEST_COMMIT),
    "sympy": (MIRROR_DIR / "sympy+sympy" / "repo", "e950d313a932bc6cccbc95376b3821cd2f8b5af4"),
}
FALLBACK_PACKAGES = ("mypy", "hypothesis", "_pytest", "click")
DEFAULT_RUNS = 7
DEFAULT_SCALE_FILES = 2_000
CHANGE_RUNS = 5
TARGET_COLD_PY_FILES_PER_S = 300
TARGET_COLD_FILES_PER_S = 600  # every file indexed, on 2 cores (issue 16)
TARGET_EXTRACT_RATIO = 2.0
TARGET_NO_CHANGE_S = 1.0
TARGET_ONE_FILE_S = 0.3


# One cold index in a new process (argv: its src, the subject): wall and CPU of the run.
COLD_SIDE = """
import json, os, resource, shutil, sys, time
import coderooms
from coderooms.workspace import Workspace
source, root = sys.argv[1], sys.argv[2]
assert coderooms.__file__.startswith(source), coderooms.__file__
shutil.rmtree(os.path.join(root, ".coderooms"), ignore_errors=True)
def cpu():
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime
ws = Workspace.open(root)
before, start = cpu(), time.perf_counter()
summary = ws.index()
wall = time.perf_counter() - start
print(json.dumps({"wall": wall, "cpu": cpu() - before, "files": summary.files}))
"""


def cold_in_process(source: Path, root: Path) -> dict[str, float]:
    env = {**os.environ, "PYTHONPATH": str(source)}
    out = subprocess.run(
        [sys.executable, "-c", COLD_SIDE, str(source), str(root)],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    if out.returncode != 0:
        raise SystemExit(f"cold index failed ({out.returncode}): {out.stderr[-2000:]}")
    got: dict[str, float] = json.loads(out.stdout.splitlines()[-1])
    return got


def paired_cold(root: Path, label: str, revision: str, runs: int, scratch: Path) -> None:
    """The cold index of ``root`` by this tree and by ``revision``, in turns (see the
    module's docstring)."""
    from first_focus import SOURCE, baseline_source, compiled

    load_start = os.getloadavg()[0]
    sides = [
        ("this tree", compiled(SOURCE)),
        (f"baseline {revision}", baseline_source(scratch, revision)),
    ]
    got: dict[str, list[dict[str, float]]] = {name: [] for name, _ in sides}
    ratios: list[tuple[float, float]] = []
    for turn in range(runs):
        pair: dict[str, dict[str, float]] = {}
        for name, source in sides if turn % 2 == 0 else sides[::-1]:
            pair[name] = cold_in_process(source, root)
            got[name].append(pair[name])
        mine, theirs = pair[sides[0][0]], pair[sides[1][0]]
        ratios.append((mine["wall"] / theirs["wall"], mine["cpu"] / theirs["cpu"]))
        print(
            f"  pair {turn + 1}/{runs}: wall {mine['wall']:.2f} s / {theirs['wall']:.2f} s, "
            f"CPU {mine['cpu']:.2f} s / {theirs['cpu']:.2f} s, load {os.getloadavg()[0]:.1f}",
            file=sys.stderr,
        )
    rows = [
        ("subject", label),
        (
            "cores / load average start, end",
            f"{len(os.sched_getaffinity(0))} / {load_start:.2f}, {os.getloadavg()[0]:.2f}",
        ),
    ]
    for name, runs_of in got.items():
        wall = statistics.median(r["wall"] for r in runs_of)
        cpu = statistics.median(r["cpu"] for r in runs_of)
        files = runs_of[0]["files"]
        rows.append(
            (
                f"{name}: cold index, median of {len(runs_of)}",
                f"wall {wall:.3f} s, CPU {cpu:.3f} s; {files / wall:.0f} files/s wall "
                f"(target >= {TARGET_COLD_FILES_PER_S}), {2 * files / cpu:.0f} per CPU-second x2",
            )
        )
    rows.append(
        (
            "this tree / baseline, median of the pairs",
            f"wall {statistics.median(w for w, _ in ratios):.2f}x, "
            f"CPU {statistics.median(c for _, c in ratios):.2f}x",
        )
    )
    print_rows(rows)


def median_time(fn: Callable[[], object], runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def median_wall_cpu(fn: Callable[[], object], runs: int) -> str:
    """Median wall and CPU seconds (process and children) as one table cell."""
    walls, cpus = [], []
    for _ in range(runs):
        cpu = cpu_seconds()
        start = time.perf_counter()
        fn()
        walls.append(time.perf_counter() - start)
        cpus.append(cpu_seconds() - cpu)
    return f"{statistics.median(walls):.3f} s (CPU {statistics.median(cpus):.3f} s)"


def cpu_seconds() -> float:
    """CPU time of this process and its finished children (workers, git)."""
    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def interleaved_cpu(
    fns: dict[str, Callable[[], object]], runs: int
) -> dict[str, tuple[float, float]]:
    """Median and least CPU seconds of each function, run in turn so load changes hit
    all alike (the least is the cost with the least interference)."""
    times: dict[str, list[float]] = {name: [] for name in fns}
    for _ in range(runs):
        for name, fn in fns.items():
            start = time.process_time()
            fn()
            times[name].append(time.process_time() - start)
    return {name: (statistics.median(t), min(t)) for name, t in times.items()}


def print_rows(rows: list[tuple[str, str]]) -> None:
    """One measurement per line, the labels in one column."""
    width = max(len(k) for k, _ in rows)
    for k, v in rows:
        print(f"{k:<{width}}  {v}")


def subject(scratch: Path, repo: str | None, mirrored: str = "pytest") -> tuple[Path, str]:
    """A scratch copy of ``repo``, else of the ``mirrored`` subject (see MIRRORED)."""
    target = scratch / "subject"
    if repo:
        shutil.copytree(repo, target, symlinks=True, ignore=shutil.ignore_patterns(".coderooms"))
        return target, f"{repo} (copied)"
    mirror, commit = MIRRORED[mirrored]
    if mirror.is_dir():
        subprocess.run(
            ["git", "clone", "-q", "--no-checkout", str(mirror), str(target)], check=True
        )
        subprocess.run(["git", "-C", str(target), "checkout", "-q", commit], check=True)
        return target, f"{mirror.parent.name.replace('+', '/')} @ {commit[:12]} (git clone)"
    if mirrored != "pytest":
        raise SystemExit(f"no mirror of {mirrored} at {mirror}: give --repo PATH")
    for name in FALLBACK_PACKAGES:
        spec = importlib.util.find_spec(name)
        if spec and spec.submodule_search_locations:
            src = Path(next(iter(spec.submodule_search_locations)))
            shutil.copytree(src, target / name, ignore=shutil.ignore_patterns("__pycache__"))
            return target, f"installed package {name} (no git)"
    raise SystemExit("no benchmark subject: give --repo PATH")


def parseable(root: Path) -> list[tuple[str, str, bytes]]:
    out = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d not in (".git", ".coderooms")]
        for f in filenames:
            full = Path(dirpath) / f
            rel = full.relative_to(root).as_posix()
            lang = language_of(rel)
            if lang in PARSED_LANGUAGES and not full.is_symlink():
                out.append((rel, lang, full.read_bytes()))
    return sorted(out)


def parse_alone(files: list[tuple[str, str, bytes]]) -> None:
    for _, lang, data in files:
        parser = python.parser() if lang == "python" else curly.parser(lang)
        parser.parse(data)


def scaled_tree(src: Path, dst: Path, min_files: int, indexed: int) -> int:
    """Copies of ``src`` side by side (no git) until ``min_files`` files are indexed."""
    copies = max(1, -(-min_files // max(indexed, 1)))
    for i in range(copies):
        shutil.copytree(
            src,
            dst / f"copy{i}",
            symlinks=True,
            ignore=shutil.ignore_patterns(".git", ".coderooms"),
        )
    return copies


def make_git_repo(root: Path) -> None:
    """One commit of everything, so the index lists files with ``git ls-files``."""
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "bench",
        "GIT_AUTHOR_EMAIL": "bench@example.com",
        "GIT_COMMITTER_NAME": "bench",
        "GIT_COMMITTER_EMAIL": "bench@example.com",
    }
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "scaled"]):
        subprocess.run(["git", *args], cwd=root, env=env, check=True, capture_output=True)


def drop_graph_cache(root: Path) -> None:
    (root / ".coderooms" / "graph.cache").unlink(missing_ok=True)


def edit_one(path: Path, n: int) -> None:
    with path.open("a", encoding="utf-8") as fh:
        fh.write(f"\n\ndef _bench_probe_{n}():\n    return {n}\n")


def pick_file(root: Path) -> Path:
    """A mid-sized non-test Python file, the usual thing an agent edits."""
    pys = sorted(
        (p for p in root.rglob("*.py") if "test" not in p.name and ".git" not in p.parts),
        key=lambda p: p.stat().st_size,
    )
    return pys[len(pys) * 3 // 4]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--subject", default="pytest", choices=sorted(MIRRORED))
    ap.add_argument("--repo", help="index this directory instead of the subject")
    ap.add_argument("--runs", type=int, default=DEFAULT_RUNS)
    ap.add_argument(
        "--scale", type=int, default=DEFAULT_SCALE_FILES, help="files in the scaled tree"
    )
    ap.add_argument("--baseline", help="only the cold index, paired with this revision's src")
    args = ap.parse_args()
    load_start = os.getloadavg()[0]

    with tempfile.TemporaryDirectory(prefix="coderooms-bench-") as tmp:
        scratch = Path(tmp)
        root, label = subject(scratch, args.repo, args.subject)
        if args.baseline:
            paired_cold(root, label, args.baseline, args.runs, scratch)
            return
        files = parseable(root)

        # Baseline and extraction in CPU seconds, interleaved: robust to other load.
        cpu = interleaved_cpu(
            {
                "parse": lambda: parse_alone(files),
                "extract": lambda: [process_file(str(root), rel) for rel, _, _ in files],
            },
            args.runs,
        )
        (t_parse, best_parse), (t_extract, best_extract) = cpu["parse"], cpu["extract"]

        ws = Workspace.open(root)
        colds = []
        for _ in range(args.runs):
            shutil.rmtree(root / ".coderooms", ignore_errors=True)
            ws.close()
            cpu_before = cpu_seconds()
            start = time.perf_counter()
            got = ws.index()
            colds.append((time.perf_counter() - start, cpu_seconds() - cpu_before, got))
        colds.sort(key=lambda c: c[0])
        t_cold, cpu_cold, summary = colds[len(colds) // 2]
        py_files = summary.languages.get("python", 0)
        t_resolve = summary.phases.get("resolve_cpu", 0.0)
        best_resolve = min(c[2].phases.get("resolve_cpu", 0.0) for c in colds)
        t_store = summary.phases.get("store_cpu", 0.0)

        t_graph_sql = median_time(
            lambda: (drop_graph_cache(root), Workspace.open(root).graph()), args.runs
        )
        t_graph = median_time(lambda: Workspace.open(root).graph(), args.runs)
        t_nochange = median_wall_cpu(ws.index, CHANGE_RUNS)
        target = pick_file(root)
        original = target.read_text(encoding="utf-8")
        counter = iter(range(10_000))
        t_one = median_wall_cpu(lambda: (edit_one(target, next(counter)), ws.index()), CHANGE_RUNS)
        target.write_text(original, encoding="utf-8")
        ws.index()

        big = scratch / "scaled"
        big.mkdir()
        copies = scaled_tree(root, big, args.scale, summary.files)
        big_ws = Workspace.open(big)
        start = time.perf_counter()
        big_summary = big_ws.index()
        t_big_cold = time.perf_counter() - start
        t_big_nochange = median_wall_cpu(big_ws.index, CHANGE_RUNS)
        big_target = pick_file(big / "copy0")
        t_big_one = median_wall_cpu(
            lambda: (edit_one(big_target, next(counter)), big_ws.index()), CHANGE_RUNS
        )
        # The same tree as a git checkout: files listed by `git ls-files`.
        shutil.rmtree(big / ".coderooms")
        make_git_repo(big)
        big_ws = Workspace.open(big)
        big_ws.index()
        t_git_nochange = median_wall_cpu(big_ws.index, CHANGE_RUNS)
        t_git_one = median_wall_cpu(
            lambda: (edit_one(big_target, next(counter)), big_ws.index()), CHANGE_RUNS
        )

        self_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        child_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024

    extract_only = max(t_extract - t_parse, 0.0)
    rows = [
        ("subject", label),
        (
            "cores / load average start, end",
            f"{len(os.sched_getaffinity(0))} / {load_start:.2f}, {os.getloadavg()[0]:.2f}",
        ),
        (
            "files indexed / parsed / python",
            f"{summary.files} / {summary.parsed_files} / {py_files}",
        ),
        ("symbols / edges", f"{summary.symbols} / {dict(sorted(summary.edges.items()))}"),
        ("unresolved calls", str(summary.unresolved)),
        ("baseline: tree-sitter parse alone, CPU (median)", f"{t_parse:.3f} s"),
        ("read+hash+parse+extract, CPU (median)", f"{t_extract:.3f} s"),
        ("resolution in the cold run, CPU", f"{t_resolve:.3f} s"),
        ("storing its edges + rebuilding indexes, CPU", f"{t_store:.3f} s"),
        (
            "(extract + resolve) / parse alone",
            f"{(extract_only + t_resolve) / t_parse:.2f}x  (target <= {TARGET_EXTRACT_RATIO:g}x)",
        ),
        (
            f"the same, least of {args.runs} runs each",
            f"{(max(best_extract - best_parse, 0.0) + best_resolve) / best_parse:.2f}x",
        ),
        (
            "(extract + resolve + store edges) / parse alone",
            f"{(extract_only + t_resolve + t_store) / t_parse:.2f}x",
        ),
        ("(parse + extract + resolve) / parse alone", f"{(t_extract + t_resolve) / t_parse:.2f}x"),
        ("cold index, all cores, median wall", f"{t_cold:.3f} s  {summary.phases}"),
        ("cold index CPU (main + workers + git)", f"{cpu_cold:.3f} s"),
        (
            "cold python files/s (wall)",
            f"{py_files / t_cold:.0f}  (target >= {TARGET_COLD_PY_FILES_PER_S})",
        ),
        (
            "cold python files per CPU-second / 2 cores",
            f"{py_files / cpu_cold:.0f} / {2 * py_files / cpu_cold:.0f}",
        ),
        (
            "cold files/s, every file indexed (wall)",
            f"{summary.files / t_cold:.0f}  (target >= {TARGET_COLD_FILES_PER_S} on 2 cores)",
        ),
        (
            "cold files per CPU-second, every file / 2 cores",
            f"{summary.files / cpu_cold:.0f} / {2 * summary.files / cpu_cold:.0f}",
        ),
        ("graph() load from SQL / from graph.cache", f"{t_graph_sql:.3f} s / {t_graph:.3f} s"),
        ("no-change re-run", t_nochange),
        ("one-file change", f"{t_one}  (target <= {TARGET_ONE_FILE_S})"),
        (f"scaled tree ({copies} copies, no git): files", f"{big_summary.files}"),
        ("scaled cold index", f"{t_big_cold:.3f} s"),
        (
            "scaled no-change re-run",
            f"{t_big_nochange}  (target <= {TARGET_NO_CHANGE_S} for 2,000 files)",
        ),
        ("scaled one-file change", f"{t_big_one}  (target <= {TARGET_ONE_FILE_S})"),
        ("scaled, as a git checkout: no-change re-run", t_git_nochange),
        ("scaled, as a git checkout: one-file change", t_git_one),
        ("peak RSS main / largest worker", f"{self_mb:.0f} MB / {child_mb:.0f} MB"),
    ]
    print_rows(rows)


if __name__ == "__main__":
    sys.exit(main())
