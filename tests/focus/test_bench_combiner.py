"""The combiner benchmark's fit and its leave-one-repository-out ranking."""

from __future__ import annotations

from typing import Any

import numpy as np
from bench_script import load_benchmark

combiner: Any = load_benchmark("combiner")


def _instance(repo: str, k: int, rng: np.random.Generator) -> Any:
    """Five candidates; feature 0 is noise, feature 1 marks the gold one (which focus,
    here, always ranks last)."""
    paths = tuple(f"{repo}/f{i}.py" for i in range(5))
    gold = int(rng.integers(5))
    features = np.column_stack([rng.normal(size=5), (np.arange(5) == gold).astype(float)])
    features[:, 1] += rng.normal(scale=0.1, size=5)
    focus_order = tuple(p for i, p in enumerate(paths) if i != gold) + (paths[gold],)
    return combiner.Candidates(f"{repo}-{k}", repo, paths, features, (paths[gold],), focus_order)


def test_the_combiner_learns_the_telling_feature_on_other_repositories() -> None:
    rng = np.random.default_rng(7)
    found = [_instance(repo, k, rng) for repo in ("a", "b", "c") for k in range(6)]
    figures = combiner.summary(combiner.leave_one_repository_out(found))
    assert figures["all"]["combiner"] == [1.0, 1.0, 1.0]
    assert figures["all"]["focus"][0] == 0.0  # focus's own order put the gold last
    assert set(figures) == {"all", "a", "b", "c"}


def test_the_fit_is_deterministic_and_weighs_the_telling_feature() -> None:
    rng = np.random.default_rng(3)
    found = [_instance("a", k, rng) for k in range(8)]
    groups = [(c.features, combiner._gold_vector(c)) for c in found]
    first, second = combiner.fit(groups), combiner.fit(groups)
    assert np.array_equal(first, second)
    assert first[1] > 1.0 and abs(first[0]) < first[1]


def test_a_held_out_repository_is_ranked_by_weights_fitted_without_it() -> None:
    # In repository "c" the gold is marked by feature 0, elsewhere by feature 1: fitted
    # on a and b, the model cannot rank c's gold first.
    rng = np.random.default_rng(5)
    found = [_instance(repo, k, rng) for repo in ("a", "b") for k in range(6)]
    for k in range(2):
        c = _instance("c", k, rng)
        swapped = c.features[:, ::-1].copy()
        found.append(
            combiner.Candidates(c.instance_id, "c", c.paths, swapped, c.gold, c.focus_order)
        )
    figures = combiner.summary(combiner.leave_one_repository_out(found))
    assert figures["c"]["combiner"][0] < 1.0
    assert figures["a"]["combiner"][0] == 1.0
