"""Do the signals' weights limit focus's file ranking, or the signals themselves?

    .venv/bin/python benchmarks/combiner.py --keep DIR [--repo R] [--out r.json]

For each instance of the development set (the checkouts and indexes ``localize.py --keep
DIR`` kept; missing ones are made), every file that focus or any one ranking signal
puts among its first :data:`CANDIDATES_PER_LIST` becomes a candidate, described by one
feature per signal (the reciprocal of its place among the files that signal's seeds lie
in), focus's own place and score, and the file's prior. A listwise logistic model (one
weight per feature, a softmax over an instance's candidates, L2-regularized) is fitted
on nine repositories and ranks the tenth, for each of the ten: the leave-one-repository-out
figure of the best *linear* combiner of today's signals. Printed beside focus's own
ranking, per repository and overall (file Acc@1/3/5), with the weights fitted on all.

If the fitted combiner does no better than focus's hand-set fusion, better weights will
not help: the next gain must come from a signal that knows something the others do not.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from scipy.optimize import minimize

sys.path.append(str(Path(__file__).resolve().parent))  # last: benchmarks/mcp.py is no `mcp`
from localize import (  # noqa: E402
    BENCH_DIR,
    DATA_FILE,
    FILE_KS,
    MIRROR_DIR,
    Instance,
    acc_at,
    kept_checkout,
    load_instances,
)

CANDIDATES_PER_LIST = 30  # files taken from focus's ranking and from each signal's
L2 = 0.01  # the weights' penalty, per instance (the features are standardized)
SCORE_FLOOR = 1e-4  # a candidate focus scored 0: its log-score as this share of the best
OWN_FEATURES = ("focus_place", "focus_log_score", "log_prior")


@dataclass(frozen=True)
class Candidates:
    """One instance's candidate files, their features (rows) and which are gold."""

    instance_id: str
    repo: str
    paths: tuple[str, ...]
    features: np.ndarray
    gold: tuple[str, ...]
    focus_order: tuple[str, ...]  # the candidates focus ranks, in its order


def feature_names() -> list[str]:
    from coderooms.focus.signals import SIGNAL_NAMES

    return [*OWN_FEATURES, *(f"signal:{name}" for name in SIGNAL_NAMES)]


def candidates_of(inst: Instance, root: Path) -> Candidates:
    """Open the kept index at ``root`` and describe the goal's candidate files."""
    from coderooms.focus.salience import file_scores
    from coderooms.focus.signals import SIGNALS, Query
    from coderooms.workspace import Workspace

    workspace = Workspace.open(root)
    try:
        workspace.index()
        engine = workspace.focus_engine()
        index = engine.index
        goal = inst.problem_statement
        scores = file_scores(index, engine.salience(goal))
        ranked = [p for p in sorted(scores, key=lambda p: (-scores[p], p)) if scores[p] > 0]
        best = max(scores.values(), default=0.0)
        query = Query(goal, index.config.weighted_query)
        places: dict[str, dict[str, int]] = {}
        for signal in SIGNALS:
            order: dict[str, int] = {}
            for row, _ in signal.rank(index, query):
                path = index.nodes[int(index.file_row_of[row])].path
                order.setdefault(path, len(order))
            places[signal.name] = order
        paths = list(ranked[:CANDIDATES_PER_LIST])
        for order in places.values():
            paths += [p for p in list(order)[:CANDIDATES_PER_LIST] if p not in paths]
        taken = set(paths)
        focus_place = {p: k for k, p in enumerate(ranked)}
        rows = []
        for path in paths:
            place = focus_place.get(path)
            share = scores.get(path, 0.0) / best if best > 0 else 0.0
            prior = float(index.prior[index.file_of_path[path]])
            row = [
                1.0 / (1 + place) if place is not None else 0.0,
                math.log(max(share, SCORE_FLOOR)),
                math.log(max(prior, SCORE_FLOOR)),
            ]
            for signal in SIGNALS:
                at = places[signal.name].get(path)
                row.append(1.0 / (1 + at) if at is not None else 0.0)
            rows.append(row)
        return Candidates(
            inst.instance_id,
            inst.repo,
            tuple(paths),
            np.asarray(rows, dtype=np.float64).reshape(len(paths), len(feature_names())),
            inst.gold_files,
            tuple(p for p in ranked if p in taken),
        )
    finally:
        workspace.close()


def fit(groups: Sequence[tuple[np.ndarray, np.ndarray]], l2: float = L2) -> np.ndarray:
    """Weights of a listwise logistic model: per group (features, 0/1 gold), the softmax
    of the candidates' scores against the gold spread evenly. Deterministic (L-BFGS from
    zero weights)."""
    width = groups[0][0].shape[1]

    def loss(w: np.ndarray) -> tuple[float, np.ndarray]:
        total, grad = 0.0, np.zeros(width)
        for x, gold in groups:
            s = x @ w
            p = np.exp(s - s.max())
            p /= p.sum()
            target = gold / gold.sum()
            total -= float(target @ np.log(p + 1e-300))
            grad -= x.T @ (target - p)
        n = len(groups)
        return total / n + l2 * float(w @ w), grad / n + 2 * l2 * w

    return np.asarray(minimize(loss, np.zeros(width), jac=True, method="L-BFGS-B").x)


def _gold_vector(c: Candidates) -> np.ndarray:
    return np.asarray([p in c.gold for p in c.paths], dtype=np.float64)


def standardizer(all_candidates: Sequence[Candidates]) -> tuple[np.ndarray, np.ndarray]:
    """Mean and spread of every feature over every candidate (no label is read)."""
    stacked = np.vstack([c.features for c in all_candidates])
    return stacked.mean(axis=0), stacked.std(axis=0) + 1e-9


def ranked_by(c: Candidates, w: np.ndarray, mean: np.ndarray, spread: np.ndarray) -> list[str]:
    s = ((c.features - mean) / spread) @ w
    order = sorted(range(len(c.paths)), key=lambda i: (-s[i], c.paths[i]))
    return [c.paths[i] for i in order]


def fitted_on(candidates: Iterable[Candidates], mean: np.ndarray, spread: np.ndarray) -> np.ndarray:
    """The weights fitted on the ``candidates`` of instances with a gold candidate."""
    groups = [((c.features - mean) / spread, _gold_vector(c)) for c in candidates]
    return fit([(x, gold) for x, gold in groups if gold.any()])


def leave_one_repository_out(
    all_candidates: Sequence[Candidates],
) -> dict[str, list[tuple[list[str], Candidates]]]:
    """Per repository: its instances ranked by a model fitted on the other repositories."""
    mean, spread = standardizer(all_candidates)
    out: dict[str, list[tuple[list[str], Candidates]]] = {}
    for repo in sorted({c.repo for c in all_candidates}):
        w = fitted_on((c for c in all_candidates if c.repo != repo), mean, spread)
        out[repo] = [(ranked_by(c, w, mean, spread), c) for c in all_candidates if c.repo == repo]
    return out


def _accs(ranked: Sequence[str], gold: Sequence[str]) -> list[bool]:
    return [acc_at(ranked, gold, k) for k in FILE_KS]


def summary(loro: dict[str, list[tuple[list[str], Candidates]]]) -> dict[str, dict[str, Any]]:
    groups: dict[str, list[tuple[list[str], Candidates]]] = {
        "all": [x for v in loro.values() for x in v],
        **loro,
    }
    out = {}
    for name, pairs in groups.items():
        fitted = [_accs(r, c.gold) for r, c in pairs]
        own = [_accs(list(c.focus_order), c.gold) for _, c in pairs]
        out[name] = {
            "instances": len(pairs),
            "combiner": [round(statistics.fmean(col), 3) for col in zip(*fitted, strict=True)],
            "focus": [round(statistics.fmean(col), 3) for col in zip(*own, strict=True)],
        }
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--data", type=Path, default=BENCH_DIR / DATA_FILE)
    parser.add_argument("--mirrors", type=Path, default=MIRROR_DIR)
    parser.add_argument("--keep", type=Path, required=True, help="localize.py's kept checkouts")
    parser.add_argument("--repo", action="append", help="only these repositories")
    parser.add_argument("--out", type=Path, help="write the figures and weights as JSON")
    args = parser.parse_args(argv)
    instances = load_instances(args.data)
    if args.repo:
        instances = [i for i in instances if i.repo in set(args.repo)]
    if len({i.repo for i in instances}) < 2:
        raise SystemExit("leave-one-repository-out needs instances of two repositories at least")
    found = []
    for n, inst in enumerate(instances, 1):
        root, _ = kept_checkout(args.mirrors, inst, args.keep)
        found.append(candidates_of(inst, root))
        print(f"[{n}/{len(instances)}] {inst.instance_id}", file=sys.stderr, flush=True)
    figures = summary(leave_one_repository_out(found))
    print(f"\n{'repository':<30}{'n':>4}   combiner (LORO) @1/@3/@5   focus @1/@3/@5")
    for name, row in figures.items():
        fitted = "/".join(f"{v:.3f}" for v in row["combiner"])
        own = "/".join(f"{v:.3f}" for v in row["focus"])
        print(f"{name:<30}{row['instances']:>4}   {fitted:<26} {own}")
    mean, spread = standardizer(found)
    w = fitted_on(found, mean, spread)
    weights = dict(zip(feature_names(), (round(float(v), 3) for v in w), strict=True))
    print("\nweights fitted on every repository (standardized features):")
    for name, v in sorted(weights.items(), key=lambda kv: -abs(kv[1])):
        print(f"  {name:<36}{v:+.3f}")
    if args.out:
        args.out.write_text(json.dumps({"figures": figures, "weights": weights}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
