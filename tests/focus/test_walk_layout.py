"""The walk laid out for locality (``salience.WalkLayout``) gives the walk's result bit
for bit (an index laying its walk out: see tests/index/test_fresh_process.py)."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from coderooms.focus import salience


def _transposed(seed: int, n: int, density: float) -> tuple[sp.csr_matrix, np.ndarray]:
    """A random walk matrix (rows summing to one, some dangling), transposed, as
    ``SalienceIndex.spreading`` makes it, with the dangling rows."""
    rng = np.random.default_rng(seed)
    links = sp.random(n, n, density=density, format="csr", random_state=rng)
    links.setdiag(0)
    links.eliminate_zeros()
    out = np.asarray(links.sum(axis=1)).ravel()
    inverse = np.divide(1.0, out, out=np.zeros_like(out), where=out > 0)
    transition = sp.csr_matrix(sp.diags(inverse) @ links)
    return sp.csr_matrix(transition.T.tocsr()), np.flatnonzero(out == 0)


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(1, 300),
    density=st.floats(0.0, 0.2),
    restart=st.floats(0.05, 0.95),
)
def test_the_laid_out_walk_is_the_walk_bit_for_bit(
    seed: int, n: int, density: float, restart: float
) -> None:
    transposed, dangling = _transposed(seed, n, density)
    rng = np.random.default_rng(seed + 1)
    seeds = np.where(rng.random(n) < 0.2, rng.random(n), 0.0)
    seeds[int(rng.integers(n))] = 1.0
    p = seeds / seeds.sum()
    plain = salience._walk(transposed, dangling, p, restart)
    layout = salience.WalkLayout.of(transposed, dangling)
    assert sorted(layout.order.tolist()) == list(range(n))
    assert layout.walk(p, restart).tobytes() == plain.tobytes()


def test_a_laid_out_walk_reads_the_rank_vector_in_another_order() -> None:
    """On a graph whose rows are shuffled, the layout does renumber them (else this
    module would test the identity)."""
    transposed, dangling = _transposed(7, 400, 0.01)
    assert not np.array_equal(salience.WalkLayout.of(transposed, dangling).order, np.arange(400))


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 3000), ulps=st.integers(-4, 4))
def test_a_laid_out_step_stops_as_the_sum_in_the_graphs_order_says_even_at_the_tolerance(
    seed: int, n: int, ulps: int
) -> None:
    rng = np.random.default_rng(seed)
    moved = rng.random(n) ** 4
    moved *= salience.PAGERANK_TOLERANCE * (1.0 + ulps * 2.0**-53) / moved.sum()
    order = rng.permutation(n)
    inverse = np.empty(n, dtype=np.int64)
    inverse[order] = np.arange(n)
    laid = moved[order]
    expected = float(moved.sum()) < salience.PAGERANK_TOLERANCE
    assert salience._has_settled(laid, inverse) == expected
    assert salience._has_settled(moved, None) == expected
