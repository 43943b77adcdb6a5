"""Localization quality of focus on the SWE-bench development set, beside plain BM25.

One command::

    .venv/bin/python benchmarks/localize.py [--repo psf/requests] [--cv] [--out r.json]

(or ``coderooms bench localize …`` from a source checkout). For each instance of
``../shared/bench/swe-bench-dev.jsonl`` (read relative to the project root; ``--data`` or
``$CODEROOMS_BENCH_DIR`` to change it): check out ``base_commit`` from the local clone
(``../.mirror/<owner>+<name>/repo`` beside the project, or ``--mirrors`` /
``$CODEROOMS_MIRROR_DIR``; a clone that lacks a blob, as mirrors without files of 4 MiB and
more do, still gives every file it has), index it and focus with the problem statement as
the goal, exactly as ``coderooms focus`` does. Scores, per repository and overall (see
``../shared/bench/README.md``): file Acc@1/3/5, function Acc@5/10, budget recall at 8,000
tokens, cold time (index + first focus) and warm focus p50/p95. A whole-file BM25 ranker
(bm25s over non-test ``.py`` files) runs on the same checkout as the baseline, and its
figure stands beside each of focus's.

``--cv`` adds the leave-one-repository-out figures: a family of weightings (today's
defaults and, for each ranking signal and fusion knob, a few alternatives) is scored on
every instance; for each repository the weighting with the best file Acc@5 (then Acc@1,
then mean reciprocal rank) on the *other* repositories is chosen and scored on it.
``--without SIGNAL`` ranks with signals or edge kinds switched off (an ablation).

``--held-out`` scores instead SWE-bench Lite's instances of the repositories the
development set does not hold (``../shared/bench/swe-bench-lite.json``, with the
published function labels of ``swe-bench-lite-274-functions.jsonl``), those with a local
clone: code nothing was tuned on. Report only; never choose anything by it.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

PROJECT_ROOT = Path(__file__).resolve().parent.parent
BENCH_DIR = Path(os.environ.get("CODEROOMS_BENCH_DIR", PROJECT_ROOT.parent / "shared" / "bench"))
MIRROR_DIR = Path(os.environ.get("CODEROOMS_MIRROR_DIR", PROJECT_ROOT.parent / ".mirror"))
DATA_FILE = "swe-bench-dev.jsonl"
HELD_OUT_FILE = "swe-bench-lite.json"  # --held-out: its instances of other repositories
HELD_OUT_LABELS = "swe-bench-lite-274-functions.jsonl"  # their published function labels
_PATCHED_FILE = re.compile(r"^diff --git a/(\S+) b/", re.MULTILINE)
BUDGET_TOKENS = 8_000
FILE_KS = (1, 3, 5)
FUNCTION_KS = (5, 10)
RANK_DEPTH = 50  # how much of each ranking is kept per instance
BASELINE = "bm25"
CV_SIGNAL_FACTORS = (0.0, 0.5, 2.0)  # each signal weight tried at these multiples
CV_RRF_K = (10.0, 40.0)
CV_FILE_CONTEXT = (0.25, 0.75)
CHOICE_METRICS = ("file_acc@1", "file_acc@5", "func_acc@10", "budget_recall")
"""What ``--cv`` chooses a weighting by, on the other repositories: the mean of these
headline figures (then mean reciprocal rank), so that a knob which moves only function
ranking or packing can be chosen too."""
ABLATED = "×0"  # the family member with one signal switched off


@dataclass(frozen=True)
class Instance:
    instance_id: str
    repo: str
    base_commit: str
    problem_statement: str
    gold_files: tuple[str, ...]
    gold_functions: tuple[str, ...]  # ``path::Class.method``


def load_instances(path: Path) -> list[Instance]:
    if not path.is_file():
        raise SystemExit(f"no benchmark data at {path}; pass --data or set CODEROOMS_BENCH_DIR")
    out = []
    with path.open() as handle:
        for line in handle:
            row = json.loads(line)
            out.append(_instance(row, row["ground_truth_files"], row["edit_functions"]))
    return sorted(out, key=lambda i: (i.repo, i.instance_id))


def _instance(row: dict[str, Any], gold_files: Sequence[str], labels: Sequence[str]) -> Instance:
    """An instance of a benchmark row; a label ``path:Class.method`` becomes the node id
    ``path::Class.method``."""
    return Instance(
        row["instance_id"],
        row["repo"],
        row["base_commit"],
        row["problem_statement"],
        tuple(gold_files),
        tuple(g.replace(":", "::", 1) for g in labels),
    )


def held_out_instances(bench: Path, dev: Sequence[Instance], mirrors: Path) -> list[Instance]:
    """SWE-bench Lite's instances of the repositories the development set does not hold
    (never to tune on: only to report), whose clone is under ``mirrors``: gold files are
    the non-test files the patch changes, gold functions the published labels (none
    where Lite-274 has none). Prints the repositories left out for want of a clone."""
    lite, labels = bench / HELD_OUT_FILE, bench / HELD_OUT_LABELS
    for needed in (lite, labels):
        if not needed.is_file():
            raise SystemExit(
                f"no benchmark data at {needed}; pass --data (its folder is read)"
                " or set CODEROOMS_BENCH_DIR"
            )
    seen = {i.repo for i in dev}
    functions = {}
    with labels.open() as handle:
        for line in handle:
            row = json.loads(line)
            functions[row["instance_id"]] = row["edit_functions"]
    out, missing = [], set()
    for row in json.loads(lite.read_text()):
        if row["repo"] in seen:
            continue
        if not (mirrors / row["repo"].replace("/", "+") / "repo").exists():
            missing.add(row["repo"])
            continue
        patched = dict.fromkeys(_PATCHED_FILE.findall(row["patch"]))
        gold = [p for p in patched if not _is_test_path(p)]
        out.append(_instance(row, gold, functions.get(row["instance_id"], [])))
    if missing:
        print(f"held out, no local clone (left out): {', '.join(sorted(missing))}", file=sys.stderr)
    return sorted(out, key=lambda i: (i.repo, i.instance_id))


# --- checkout ---------------------------------------------------------------------------


def checkout(mirrors: Path, repo: str, commit: str, into: Path) -> tuple[Path, int]:
    """A working tree of ``repo`` at ``commit``, and how many files the clone lacked."""
    mirror = mirrors / repo.replace("/", "+") / "repo"
    if not mirror.exists():
        raise SystemExit(f"no local clone of {repo} at {mirror}; bring it with fetch first")
    target = into / repo.replace("/", "+")
    git = ["git", "-C", str(target)]
    subprocess.run(
        ["git", "clone", "--quiet", "--shared", "--no-checkout", str(mirror), str(target)],
        check=True,
    )
    done = subprocess.run([*git, "checkout", "--quiet", "--detach", commit], capture_output=True)
    if done.returncode != 0:
        raise SystemExit(f"cannot check out {repo} at {commit}: {done.stderr.decode().strip()}")
    # git writes every file whose blob the clone has and reports the others; count them.
    # Files of the commit that are not on disk: their blobs were missing.
    deleted = subprocess.run([*git, "ls-files", "--deleted", "-z"], capture_output=True)
    return target, len([p for p in deleted.stdout.split(b"\0") if p])


# --- rankers ----------------------------------------------------------------------------


def _is_test_path(path: str) -> bool:
    parts = path.split("/")
    name = parts[-1]
    return (
        name.startswith("test_")
        or name.endswith("_test.py")
        or name == "conftest.py"
        or any(p in ("tests", "test", "testing") for p in parts[:-1])
    )


def bm25_baseline(root: Path) -> Callable[[str], list[str]]:
    """Whole-file BM25 (bm25s, English stop words) over the non-test ``.py`` files."""
    import bm25s

    paths = []
    corpus = []
    for file in sorted(root.rglob("*.py")):
        rel = file.relative_to(root).as_posix()
        if rel.startswith(".") or "/." in rel or _is_test_path(rel) or not file.is_file():
            continue
        paths.append(rel)
        corpus.append(rel.replace("/", " ") + "\n" + file.read_text(errors="replace"))
    retriever = bm25s.BM25()
    retriever.index(
        bm25s.tokenize(corpus, stopwords="en", show_progress=False), show_progress=False
    )

    def rank(query: str) -> list[str]:
        q = bm25s.tokenize([query], stopwords="en", show_progress=False)
        if not q.vocab or not paths:
            return []
        docs, scores = retriever.retrieve(q, k=min(RANK_DEPTH, len(paths)), show_progress=False)
        return [paths[int(i)] for i, s in zip(docs[0], scores[0], strict=True) if s > 0]

    return rank


def acc_at(ranked: Sequence[str], gold: Sequence[str], k: int) -> bool:
    if not gold:
        return False
    top = list(ranked[:k])
    if len(gold) > k:
        return len(top) == k and all(item in gold for item in top)
    return all(item in top for item in gold)


def reciprocal_rank(ranked: Sequence[str], gold: Sequence[str]) -> float:
    """1 / the rank by which every gold item is in (0 when one is not in the ranking)."""
    ranks = [ranked.index(g) + 1 if g in ranked else 0 for g in gold]
    return 0.0 if not ranks or 0 in ranks else 1.0 / max(ranks)


def resolve_label(label: str, known: set[str]) -> str:
    """The node a gold function label names. SWE-bench writes a function nested in a
    method as ``Class.inner`` where the index names it ``Class.method.inner``: a label the
    index lacks resolves to the one node of its file whose name starts and ends as the
    label's does (unchanged when none or several do)."""
    if label in known:
        return label
    path, _, name = label.partition("::")
    head, _, tail = name.partition(".")
    if not tail:
        return label
    found = [
        k
        for k in known
        if k.startswith(f"{path}::{head}.") and k.endswith(f".{tail}") and k.count(".") > 1
    ]
    return found[0] if len(found) == 1 else label


def score_rankings(inst: Instance, files: list[str], functions: list[str]) -> dict[str, Any]:
    row: dict[str, Any] = {f"file_acc@{k}": acc_at(files, inst.gold_files, k) for k in FILE_KS}
    row["file_rr"] = reciprocal_rank(files, inst.gold_files)
    for k in FUNCTION_KS:  # over the instances with function labels only
        row[f"func_acc@{k}"] = (
            acc_at(functions, inst.gold_functions, k) if inst.gold_functions else None
        )
    return row


# --- one checkout -----------------------------------------------------------------------


def _config(without: Sequence[str]) -> Any:
    from coderooms.focus.salience import SalienceConfig

    return SalienceConfig().without(*without) if without else SalienceConfig()


def cv_family(base: Any) -> dict[str, Any]:
    """The weightings ``--cv`` chooses among: ``base`` and one change from it each."""
    family = {"defaults": base}
    for name, weight in sorted(base.signal_weights.items()):
        if weight <= 0:
            continue
        for factor in CV_SIGNAL_FACTORS:
            weights = {**base.signal_weights, name: weight * factor}
            family[f"{name}×{factor:g}"] = replace(base, signal_weights=weights)
    for k in CV_RRF_K:
        family[f"rrf_k={k:g}"] = replace(base, rrf_k=k)
    for share in CV_FILE_CONTEXT:
        family[f"file_context={share:g}"] = replace(base, file_context=share)
    return family


def kept_checkout(mirrors: Path, inst: Instance, keep: Path) -> tuple[Path, int]:
    """The checkout of ``inst`` under ``keep`` (made the first time, reused after, with
    its ``.coderooms`` index): later runs rank again without checking out or indexing."""
    into = keep / inst.instance_id
    target = into / inst.repo.replace("/", "+")
    stamp = into / "missing-blobs"
    if stamp.is_file():
        return target, int(stamp.read_text())
    if into.exists():
        shutil.rmtree(into)  # a run that stopped half-way
    into.mkdir(parents=True)
    root, missing = checkout(mirrors, inst.repo, inst.base_commit, into)
    stamp.write_text(str(missing))
    return root, missing


def evaluate_checkout(
    inst: Instance,
    mirrors: Path,
    without: Sequence[str],
    embed: bool,
    cv: bool,
    keep: Path | None = None,
) -> dict[str, Any]:
    from coderooms.focus.runtime import FocusEngine
    from coderooms.workspace import Workspace

    with tempfile.TemporaryDirectory(prefix="coderooms-localize-") as tmp:
        if keep is None:
            root, missing = checkout(mirrors, inst.repo, inst.base_commit, Path(tmp))
        else:
            root, missing = kept_checkout(mirrors, inst, keep)
        config = _config(without)
        goal = inst.problem_statement
        started = time.perf_counter()
        workspace = Workspace.open(root)
        workspace.index()
        if without or not embed:
            from coderooms import embeddings, tokens

            engine = FocusEngine.from_reader(
                workspace.graph(),
                workspace,
                tokens.count_tokens,
                embeddings.embed if embed else None,
                config,
            )
        else:
            engine = workspace.focus_engine()  # the path `coderooms focus` takes
        result = engine.focus(goal, budget=BUDGET_TOKENS)
        cold = time.perf_counter() - started
        engine.forget()
        started = time.perf_counter()
        engine.focus(goal, budget=BUDGET_TOKENS)
        warm = time.perf_counter() - started
        files = engine.rank_files(goal)[:RANK_DEPTH]
        functions = engine.rank_functions(goal)[:RANK_DEPTH]
        known = {n.id for n in engine.graph.nodes}
        inst = replace(
            inst, gold_functions=tuple(resolve_label(g, known) for g in inst.gold_functions)
        )
        needed = [g if g in known else g.split("::")[0] for g in inst.gold_functions]
        covered = result.covered_ids()
        base_files = bm25_baseline(root)(goal)
        row: dict[str, Any] = {
            "instance_id": inst.instance_id,
            "repo": inst.repo,
            "gold_files": list(inst.gold_files),
            "gold_functions": list(inst.gold_functions),
            "missing_blobs": missing,
            "focus_files": files[:10],
            "bm25_files": base_files[:10],
            "focus_functions": functions[:10],
            "gold_file_rank": [files.index(g) + 1 if g in files else None for g in inst.gold_files],
            "bm25_gold_file_rank": [
                base_files.index(g) + 1 if g in base_files else None for g in inst.gold_files
            ],
            "budget_used": result.budget_used,
            "sufficiency": result.sufficiency.state,
            "cold_s": round(cold, 3),
            "warm_ms": round(warm * 1000, 1),
            "focus": {
                **score_rankings(inst, files, functions),
                "budget_recall": all(n in covered for n in needed) if needed else None,
            },
            BASELINE: score_rankings(inst, base_files, []),
        }
        if cv:
            family = {}
            for name, variant in cv_family(config).items():
                twin = engine.reweighted(variant)
                scored = score_rankings(
                    inst, twin.rank_files(goal)[:RANK_DEPTH], twin.rank_functions(goal)[:RANK_DEPTH]
                )
                loaded = twin.focus(goal, budget=BUDGET_TOKENS).covered_ids()
                scored["budget_recall"] = all(n in loaded for n in needed) if needed else None
                family[name] = scored
            row["family"] = family
        workspace.close()
        return row


# --- summaries --------------------------------------------------------------------------

METRICS = [f"file_acc@{k}" for k in FILE_KS] + [f"func_acc@{k}" for k in FUNCTION_KS]


def _known_mean(values: Iterable[float | None]) -> float:
    """The mean of the values that apply (None: an instance without function labels)."""
    known = [float(v) for v in values if v is not None]
    return statistics.fmean(known) if known else 0.0


def _mean(values: Sequence[float | None]) -> float:
    """:func:`_known_mean`, as reported (three decimals)."""
    return round(_known_mean(values), 3)


def summarize(rows: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {"instances": len(rows)}
    for metric in METRICS:
        out[metric] = _mean([r["focus"][metric] for r in rows])
        if metric.startswith("file"):
            out[f"{BASELINE}_{metric}"] = _mean([r[BASELINE][metric] for r in rows])
    out["budget_recall@8000"] = _mean([r["focus"].get("budget_recall") for r in rows])
    cold = [r["cold_s"] for r in rows]
    warm = [r["warm_ms"] for r in rows]
    out["cold_s_p50"] = round(float(np.percentile(cold, 50)), 2)
    out["cold_s_p95"] = round(float(np.percentile(cold, 95)), 2)
    out["warm_ms_p50"] = round(float(np.percentile(warm, 50)), 1)
    out["warm_ms_p95"] = round(float(np.percentile(warm, 95)), 1)
    return out


def leave_one_repository_out(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Per held-out repository: the family member chosen on the others (by the mean of
    :data:`CHOICE_METRICS`, then mean reciprocal rank), and its scores."""
    repos = sorted({r["repo"] for r in rows})
    names = list(rows[0]["family"])

    def objective(subset: list[dict[str, Any]], name: str) -> tuple[float, float, int]:
        def m(key: str) -> float:
            return _known_mean(r["family"][name].get(key) for r in subset)

        headline = statistics.fmean(m(key) for key in CHOICE_METRICS)
        return (round(headline, 9), m("file_rr"), -names.index(name))

    chosen: dict[str, str] = {}
    scored: list[dict[str, Any]] = []
    for repo in repos:
        train = [r for r in rows if r["repo"] != repo]
        best = max(names, key=lambda n: objective(train, n))
        chosen[repo] = best
        for r in rows:
            if r["repo"] == repo:
                scored.append({**r, "focus": r["family"][best], "cv_choice": best})
    return {"chosen": chosen, "rows": scored}


def ablation_rows(rows: list[dict[str, Any]]) -> dict[str, dict[str, float]]:
    """Per signal of the family switched off (``name×0``): each headline figure over all
    rows, less the defaults' (in-sample): what the signal contributes, negated."""
    keys = [*(f"file_acc@{k}" for k in FILE_KS), "func_acc@10", "budget_recall"]
    base = {k: _mean([r["family"]["defaults"].get(k) for r in rows]) for k in keys}
    out = {}
    for name in rows[0]["family"]:
        if name.endswith(ABLATED):
            out[name[: -len(ABLATED)]] = {
                k: round(_mean([r["family"][name].get(k) for r in rows]) - base[k], 3) for k in keys
            }
    return out


def _cell(summary: dict[str, Any], metric: str) -> str:
    base = summary.get(f"{BASELINE}_{metric}")
    text = f"{summary[metric]:.3f}"
    return f"{text} ({base:.3f})" if base is not None else text


def print_table(title: str, groups: dict[str, dict[str, Any]], timing: bool = True) -> None:
    print(f"\n{title}  (focus, with whole-file BM25 of the same run in brackets)")
    head = f"{'repository':<30}{'n':>4}" + "".join(f"{m:>17}" for m in METRICS)
    head += f"{'budget@8k':>11}"
    if timing:
        head += f"{'cold p50':>10}{'warm p50/p95 ms':>17}"
    print(head)
    for name, s in groups.items():
        line = f"{name:<30}{s['instances']:>4}" + "".join(f"{_cell(s, m):>17}" for m in METRICS)
        line += f"{s['budget_recall@8000']:>11.3f}"
        if timing:
            line += f"{s['cold_s_p50']:>9.2f}s{s['warm_ms_p50']:>9.0f}/{s['warm_ms_p95']:<7.0f}"
        print(line)


def by_repository(rows: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    groups = {"all": summarize(rows)}
    for repo in sorted({r["repo"] for r in rows}):
        groups[repo] = summarize([r for r in rows if r["repo"] == repo])
    return groups


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--data", type=Path, default=BENCH_DIR / DATA_FILE)
    parser.add_argument(
        "--held-out",
        action="store_true",
        help="score SWE-bench Lite's instances of the repositories --data does not hold"
        " (report only: never tune on them); --cv does not apply",
    )
    parser.add_argument("--mirrors", type=Path, default=MIRROR_DIR)
    parser.add_argument("--repo", action="append", help="only these repositories")
    parser.add_argument("--instance", action="append", help="only these instance ids")
    parser.add_argument("--without", action="append", default=[], help="ablate a signal")
    parser.add_argument("--no-embed", action="store_true", help="no embedder at all")
    parser.add_argument("--cv", action="store_true", help="leave-one-repository-out figures")
    parser.add_argument("--out", type=Path, help="write every figure and instance as JSON")
    parser.add_argument(
        "--keep",
        type=Path,
        help="keep each checkout and its index under this folder and reuse them on later"
        " runs (their cold time is then the time to open the kept index, not to build it)",
    )
    args = parser.parse_args(argv)
    instances = load_instances(args.data)
    if args.held_out:
        if args.cv:
            raise SystemExit("--cv chooses on the development set; it does not apply to --held-out")
        instances = held_out_instances(args.data.parent, instances, args.mirrors)
    if args.repo:
        instances = [i for i in instances if i.repo in set(args.repo)]
    if args.instance:
        instances = [i for i in instances if i.instance_id in set(args.instance)]
    if not instances:
        raise SystemExit("no instance matches")
    _config(args.without)  # an unknown signal is refused before any work
    rows = []
    for n, inst in enumerate(instances, 1):
        row = evaluate_checkout(
            inst, args.mirrors, args.without, not args.no_embed, args.cv, args.keep
        )
        rows.append(row)
        print(
            f"[{n}/{len(instances)}] {inst.instance_id:<36} focus {row['gold_file_rank']!s:<14}"
            f" bm25 {row['bm25_gold_file_rank']!s:<14} budget {row['focus']['budget_recall']!s:<5}"
            f" cold {row['cold_s']:.1f}s warm {row['warm_ms']:.0f} ms",
            file=sys.stderr,
            flush=True,
        )
    scope = "held_out" if args.held_out else "in_sample"
    report: dict[str, Any] = {scope: by_repository(rows)}
    print_table("held out: never tuned on" if args.held_out else "in-sample", report[scope])
    if args.cv:
        loro = leave_one_repository_out(rows)
        report["cross_validated"] = by_repository(loro["rows"])
        report["cv_choice"] = loro["chosen"]
        print_table("leave-one-repository-out", report["cross_validated"], timing=False)
        print("\nchosen on the other repositories:")
        for repo, name in loro["chosen"].items():
            print(f"  {repo:<30} {name}")
        report["ablation"] = ablation_rows(rows)
        print("\nablation, in-sample: each figure with the signal off, less the defaults'")
        print(
            f"{'signal off':<28}"
            + "".join(f"{k:>15}" for k in next(iter(report["ablation"].values()), {}))
        )
        for name, deltas in report["ablation"].items():
            print(f"{name:<28}" + "".join(f"{d:>+15.3f}" for d in deltas.values()))
    if args.out:
        args.out.write_text(json.dumps({"summary": report, "instances": rows}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
