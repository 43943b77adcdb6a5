"""Localization quality of focus on SWE-bench Lite (development split by default).

One command::

    .venv/bin/python benchmarks/localize.py [--repo psf/requests] [--out results.json]

For each instance: check out ``base_commit`` of the local clone brought by ``fetch``
(``/work/.mirror/<owner>+<name>/repo``) into a temporary directory, index it, run focus
with the problem statement as the goal, and score file Acc@1/3/5, function Acc@5/10 and
budget recall at 8,000 tokens. A whole-file BM25 ranker (bm25s, non-test ``.py`` files)
runs on the same checkout as the baseline. Indexes are cached per (repo, commit).
Prints a table and focus latency p50/p95; writes per-instance JSON with ``--out``.
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

BENCH_DIR = Path(os.environ.get("CODEROOMS_BENCH_DIR", "/work/shared/bench"))
MIRROR_DIR = Path(os.environ.get("CODEROOMS_MIRROR_DIR", "/work/.mirror"))
CACHE_DIR = Path(tempfile.gettempdir()) / "coderooms-localize-cache"
DEV_REPOS = (
    "psf/requests",
    "pallets/flask",
    "mwaskom/seaborn",
    "pytest-dev/pytest",
    "pylint-dev/pylint",
)
BUDGET_TOKENS = 8_000
FILE_KS = (1, 3, 5)
FUNCTION_KS = (5, 10)
WARMUP_GOAL = "warm-up: load the model and touch the indexes"


@dataclass(frozen=True)
class Instance:
    instance_id: str
    repo: str
    base_commit: str
    problem_statement: str
    gold_files: tuple[str, ...]
    gold_functions: tuple[str, ...]


def load_instances(repos: Sequence[str]) -> list[Instance]:
    out = []
    with (BENCH_DIR / "swe-bench-lite-274-functions.jsonl").open() as handle:
        for line in handle:
            row = json.loads(line)
            if row["repo"] not in repos:
                continue
            out.append(
                Instance(
                    row["instance_id"],
                    row["repo"],
                    row["base_commit"],
                    row["problem_statement"],
                    tuple(row["ground_truth_files"]),
                    tuple(row["edit_functions"]),
                )
            )
    return sorted(out, key=lambda i: (i.repo, i.instance_id))


def checkout(repo: str, commit: str, into: Path) -> Path:
    mirror = MIRROR_DIR / repo.replace("/", "+") / "repo"
    if not mirror.exists():
        raise SystemExit(f"no local clone of {repo} at {mirror}; bring it with fetch first")
    target = into / repo.replace("/", "+")
    subprocess.run(
        ["git", "clone", "--quiet", "--shared", "--no-checkout", str(mirror), str(target)],
        check=True,
    )
    subprocess.run(
        ["git", "-C", str(target), "checkout", "--quiet", "--detach", commit], check=True
    )
    return target


def acc_at(ranked: Sequence[str], gold: Sequence[str], k: int) -> bool:
    if not gold:
        return False
    top = list(ranked[:k])
    if len(gold) > k:
        return all(item in gold for item in top) and len(top) == k
    return all(item in top for item in gold)


def bm25_baseline(root: Path) -> Any:
    import bm25s

    paths = []
    corpus = []
    for file in sorted(root.rglob("*.py")):
        rel = file.relative_to(root).as_posix()
        if any(p in (".git",) for p in rel.split("/")) or _is_test_path(rel):
            continue
        paths.append(rel)
        corpus.append(rel.replace("/", " ") + "\n" + file.read_text(errors="replace"))
    tokens = bm25s.tokenize(corpus, stopwords="en", show_progress=False)
    retriever = bm25s.BM25()
    retriever.index(tokens, show_progress=False)

    def rank(query: str, limit: int = 20) -> list[str]:
        q = bm25s.tokenize([query], stopwords="en", show_progress=False)
        if not q.vocab:
            return []
        docs, _ = retriever.retrieve(q, k=min(limit, len(paths)), show_progress=False)
        return [paths[int(i)] for i in docs[0]]

    return rank


def _is_test_path(path: str) -> bool:
    parts = path.split("/")
    name = parts[-1]
    return (
        name.startswith("test_")
        or name.endswith("_test.py")
        or name == "conftest.py"
        or any(p in ("tests", "test", "testing") for p in parts[:-1])
    )


def build_engine(root: Path, repo: str, commit: str, embed: bool) -> Any:
    from coderooms.focus.runtime import FocusEngine

    cache = CACHE_DIR / f"ws-{repo.replace('/', '+')}-{commit[:12]}.pkl"
    graph = texts = None
    if cache.exists():
        graph, texts = pickle.loads(cache.read_bytes())
    else:
        from coderooms.workspace import Workspace

        workspace = Workspace.open(root)
        workspace.index()
        graph = workspace.graph()
        texts = {n.path: workspace.read_text(n.path) for n in graph.nodes if n.kind == "file"}
        CACHE_DIR.mkdir(parents=True, exist_ok=True)
        cache.write_bytes(pickle.dumps((graph, texts)))
    count_tokens, embedder = _ports(embed)
    return FocusEngine(graph, texts, count_tokens, embedder)


def _ports(embed: bool) -> tuple[Any, Any]:
    from coderooms import embeddings, tokens

    return tokens.count_tokens, (embeddings.embed if embed else None)


def evaluate(instances: list[Instance], embed: bool) -> list[dict[str, Any]]:
    results = []
    by_checkout: dict[tuple[str, str], list[Instance]] = {}
    for inst in instances:
        by_checkout.setdefault((inst.repo, inst.base_commit), []).append(inst)
    for (repo, commit), group in sorted(by_checkout.items()):
        with tempfile.TemporaryDirectory(prefix="coderooms-localize-") as tmp:
            root = checkout(repo, commit, Path(tmp))
            started = time.perf_counter()
            engine = build_engine(root, repo, commit, embed)
            index_seconds = time.perf_counter() - started
            engine.focus(WARMUP_GOAL, budget=BUDGET_TOKENS)
            baseline = bm25_baseline(root)
            for inst in group:
                results.append(score_instance(engine, baseline, inst, index_seconds))
                print(_line(results[-1]), file=sys.stderr, flush=True)
    return results


def score_instance(
    engine: Any, baseline: Any, inst: Instance, index_seconds: float
) -> dict[str, Any]:
    # Timed once: the engine is warm (built, model loaded) but this goal is new to it.
    started = time.perf_counter()
    result = engine.focus(inst.problem_statement, budget=BUDGET_TOKENS)
    elapsed = time.perf_counter() - started
    files = engine.rank_files(inst.problem_statement)
    functions = engine.rank_functions(inst.problem_statement)
    base_files = baseline(inst.problem_statement)
    gold_funcs = [g.replace(":", "::", 1) for g in inst.gold_functions]
    covered = result.covered_ids()
    known = {n.id for n in engine.graph.nodes}
    needed = [g if g in known else g.split("::")[0] for g in gold_funcs]
    row: dict[str, Any] = {
        "instance_id": inst.instance_id,
        "repo": inst.repo,
        "gold_files": list(inst.gold_files),
        "gold_functions": gold_funcs,
        "focus_files_top5": files[:5],
        "bm25_files_top5": base_files[:5],
        "focus_functions_top10": functions[:10],
        "gold_file_rank": [files.index(g) + 1 if g in files else None for g in inst.gold_files],
        "bm25_gold_file_rank": [
            base_files.index(g) + 1 if g in base_files else None for g in inst.gold_files
        ],
        "budget_used": result.budget_used,
        "budget_recall": all(n in covered for n in needed),
        "sufficiency": result.sufficiency.state,
        "focus_ms_warm": round(elapsed * 1000, 1),
        "index_seconds": round(index_seconds, 2),
    }
    for k in FILE_KS:
        row[f"file_acc@{k}"] = acc_at(files, inst.gold_files, k)
        row[f"bm25_file_acc@{k}"] = acc_at(base_files, inst.gold_files, k)
    for k in FUNCTION_KS:
        row[f"func_acc@{k}"] = acc_at(functions, gold_funcs, k)
    return row


def _line(row: dict[str, Any]) -> str:
    return (
        f"{row['instance_id']:<32} focus rank {row['gold_file_rank']!s:<10} "
        f"bm25 rank {row['bm25_gold_file_rank']!s:<10} budget {row['budget_recall']!s:<5} "
        f"{row['focus_ms_warm']:>7.1f} ms"
    )


def summarize(results: list[dict[str, Any]]) -> dict[str, Any]:
    def mean(key: str) -> float:
        return round(statistics.fmean(float(r[key]) for r in results), 3) if results else 0.0

    warm = [r["focus_ms_warm"] for r in results]
    summary: dict[str, Any] = {"instances": len(results)}
    for k in FILE_KS:
        summary[f"file_acc@{k}"] = mean(f"file_acc@{k}")
        summary[f"bm25_file_acc@{k}"] = mean(f"bm25_file_acc@{k}")
    for k in FUNCTION_KS:
        summary[f"func_acc@{k}"] = mean(f"func_acc@{k}")
    summary["budget_recall@8000"] = mean("budget_recall")
    if warm:
        summary["focus_ms_p50"] = round(float(np.percentile(warm, 50)), 1)
        summary["focus_ms_p95"] = round(float(np.percentile(warm, 95)), 1)
    # Does the verdict mean something? Budget recall per sufficiency state.
    for state in ("gathering", "sufficient", "saturated"):
        rows = [r for r in results if r["sufficiency"] == state]
        if rows:
            hits = sum(1 for r in rows if r["budget_recall"])
            summary[f"sufficiency[{state}]"] = (
                f"{len(rows)} instances, budget recall {hits}/{len(rows)}"
            )
    for repo in sorted({r["repo"] for r in results}):
        ms = [r["focus_ms_warm"] for r in results if r["repo"] == repo]
        summary[f"focus_ms_p50[{repo}]"] = round(float(np.percentile(ms, 50)), 1)
    return summary


def print_table(summary: dict[str, Any]) -> None:
    print(f"instances: {summary['instances']}")
    print(f"{'metric':<14}{'focus':>8}{'bm25':>8}{'ratio':>8}")
    for k in FILE_KS:
        f, b = summary[f"file_acc@{k}"], summary[f"bm25_file_acc@{k}"]
        ratio = f"{f / b:.2f}" if b else "-"
        print(f"{f'file Acc@{k}':<14}{f:>8.3f}{b:>8.3f}{ratio:>8}")
    for k in FUNCTION_KS:
        print(f"{f'func Acc@{k}':<14}{summary[f'func_acc@{k}']:>8.3f}{'-':>8}")
    print(f"{'budget recall':<14}{summary['budget_recall@8000']:>8.3f}{'-':>8}")
    if "focus_ms_p50" in summary:
        print(
            f"focus latency warm: p50 {summary['focus_ms_p50']} ms, p95 {summary['focus_ms_p95']} ms"
        )
        for key, value in summary.items():
            if key.startswith("focus_ms_p50["):
                print(f"  {key}: {value} ms")
    for key, value in summary.items():
        if key.startswith("sufficiency["):
            print(f"{key}: {value}")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repo", action="append", help="restrict to these repos (dev split)")
    parser.add_argument("--instance", action="append", help="restrict to these instance ids")
    parser.add_argument("--out", type=Path, help="write per-instance JSON here")
    parser.add_argument("--no-embed", action="store_true", help="skip the semantic signal")
    args = parser.parse_args(argv)
    repos = tuple(args.repo or DEV_REPOS)
    if any(r not in DEV_REPOS for r in repos):
        raise SystemExit("only the development split is allowed here: " + ", ".join(DEV_REPOS))
    instances = load_instances(repos)
    if args.instance:
        instances = [i for i in instances if i.instance_id in set(args.instance)]
    results = evaluate(instances, embed=not args.no_embed)
    summary = summarize(results)
    print_table(summary)
    if args.out:
        args.out.write_text(json.dumps({"summary": summary, "instances": results}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
