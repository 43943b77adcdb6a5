"""What a ranking index built on the one before it (an edit's) carries over instead of
building again: spans of arrays copied in runs, and the graph's transition matrix with
only the rows an edit touched worked out again.

The transition matrix is built row by row from what it is fed: each edge that joins two
distinct nodes with a positive strength, both ways (forward first) in edge order, then
each co-change pair both ways. A row's entries are summed where they repeat (after a
sort of that row alone) and divided by their sum: a row fed the same entries, in the
same order, to the same columns, comes out the same, bit for bit. An edit keeps the
order of the edges it keeps and renumbers the rows of the ids it keeps in the same
order (rows are the ids sorted): every row it does not touch is the row it was, its
columns renumbered.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

MAX_COPY_RUNS = 256  # runs of spans copied one by one; more: a gather of every entry


@dataclass(frozen=True, slots=True)
class Feed:
    """What the transition matrix of ``size`` rows is made of: per edge, in edge order,
    the row of its source and of its target (-1: no node) and its strength; per
    co-change pair, in their order, the rows of its two files (-1: not a file here) and
    its strength; and the weight of an edge followed against its direction."""

    size: int
    src: np.ndarray
    dst: np.ndarray
    strength: np.ndarray
    pair_a: np.ndarray
    pair_b: np.ndarray
    pair_strength: np.ndarray
    backward: float

    def edges_fed(self) -> np.ndarray:
        """Per edge: whether it feeds the matrix."""
        src, dst = self.src, self.dst
        fed: np.ndarray = (src >= 0) & (dst >= 0) & (src != dst) & (self.strength > 0)
        return fed

    def pairs_fed(self) -> np.ndarray:
        """Per co-change pair: whether it feeds the matrix."""
        a, b = self.pair_a, self.pair_b
        fed: np.ndarray = (a >= 0) & (b >= 0) & (a != b) & (self.pair_strength > 0)
        return fed


def transition_of(feed: Feed, rows_of: np.ndarray | None = None) -> sp.csr_matrix:
    """The row-normalised transition matrix of ``feed``; with ``rows_of`` (a flag per
    row), only those rows (the others empty), each as the whole matrix has it."""
    fed = feed.edges_fed()
    paired = feed.pairs_fed()
    if rows_of is not None:
        flag = np.append(rows_of, False)  # what -1 (no node) reads
        fed &= flag[feed.src] | flag[feed.dst]
        paired &= flag[feed.pair_a] | flag[feed.pair_b]
    a, b, w = feed.src[fed], feed.dst[fed], feed.strength[fed]
    # Each edge both ways, forward first: the order duplicates are summed in.
    rows = np.empty(2 * len(a), dtype=np.int64)
    cols = np.empty(2 * len(a), dtype=np.int64)
    rows[0::2], rows[1::2] = a, b
    cols[0::2], cols[1::2] = b, a
    data = np.empty(2 * len(w), dtype=np.float64)
    data[0::2], data[1::2] = w, w * feed.backward
    pair_a, pair_b = feed.pair_a[paired], feed.pair_b[paired]
    pair_rows = np.stack([pair_a, pair_b], axis=1).ravel()
    pair_cols = np.stack([pair_b, pair_a], axis=1).ravel()
    pair_data = np.repeat(feed.pair_strength[paired].astype(np.float64), 2)
    rows, cols = np.concatenate([rows, pair_rows]), np.concatenate([cols, pair_cols])
    data = np.concatenate([data, pair_data])
    if rows_of is not None:
        mine = rows_of[rows]
        rows, cols, data = rows[mine], cols[mine], data[mine]
    n = feed.size
    matrix = sp.csr_matrix((data, (rows, cols)), shape=(n, n), dtype=np.float64)
    out = np.asarray(matrix.sum(axis=1)).ravel()
    inverse = np.divide(1.0, out, out=np.zeros_like(out), where=out > 0)
    return sp.csr_matrix(sp.diags(inverse) @ matrix)


def renumbered(rows: np.ndarray, renumber: np.ndarray) -> np.ndarray:
    """``renumber[row]`` for each of ``rows`` (-1, no row, stays -1)."""
    through: np.ndarray = np.append(renumber, -1)[rows]  # the -1 after them: what -1 reads
    return through


def touched_rows(
    before: Feed,
    after: Feed,
    renumber: np.ndarray,
    dropped: np.ndarray,
    landed: np.ndarray,
) -> np.ndarray:
    """Per row of ``after``: whether it may be fed otherwise than its row in ``before``
    (``renumber``: a row there to its row here, -1 when its id went). ``after``'s edges
    are ``before``'s but those at ``dropped``, with new ones at ``landed``; the co-change
    pairs are the same pairs. A row is touched when its id is new, or it is an end (here,
    or renumbered from there) of an edge or pair dropped, added, or fed otherwise (an end
    that became a node or stopped being one, a strength that moved)."""
    size = after.size
    touched = np.ones(size, dtype=np.bool_)
    touched[renumber[renumber >= 0]] = False  # each id kept: not touched unless fed so

    def mark(rows: np.ndarray) -> None:
        touched[rows[rows >= 0]] = True

    was_fed, is_fed = before.edges_fed(), after.edges_fed()
    kept = np.ones(len(before.src), dtype=np.bool_)
    kept[dropped] = False
    new = np.zeros(len(after.src), dtype=np.bool_)
    new[landed] = True
    gone = ~kept & was_fed
    mark(renumbered(before.src[gone], renumber))
    mark(renumbered(before.dst[gone], renumber))
    mark(after.src[new & is_fed])
    mark(after.dst[new & is_fed])
    there, now = np.flatnonzero(kept), np.flatnonzero(~new)
    old_src, old_dst = (
        renumbered(before.src[there], renumber),
        renumbered(before.dst[there], renumber),
    )
    fed_then, fed_now = was_fed[there], is_fed[now]
    same = (fed_then == fed_now) & (
        ~fed_now
        | (
            (old_src == after.src[now])
            & (old_dst == after.dst[now])
            & (before.strength[there] == after.strength[now])
        )
    )
    moved = ~same
    mark(old_src[moved & fed_then])
    mark(old_dst[moved & fed_then])
    mark(after.src[now[moved & fed_now]])
    mark(after.dst[now[moved & fed_now]])
    pairs_then, pairs_now = before.pairs_fed(), after.pairs_fed()
    old_a, old_b = renumbered(before.pair_a, renumber), renumbered(before.pair_b, renumber)
    same_pairs = (pairs_then == pairs_now) & (
        ~pairs_now
        | (
            (old_a == after.pair_a)
            & (old_b == after.pair_b)
            & (before.pair_strength == after.pair_strength)
        )
    )
    mark(old_a[~same_pairs & pairs_then])
    mark(old_b[~same_pairs & pairs_then])
    mark(after.pair_a[~same_pairs & pairs_now])
    mark(after.pair_b[~same_pairs & pairs_now])
    return touched


def carried_transition(
    before: sp.csr_matrix, renumber: np.ndarray, touched: np.ndarray, fresh: sp.csr_matrix
) -> sp.csr_matrix | None:
    """The matrix whose touched rows (see :func:`touched_rows`) are ``fresh``'s and whose
    other rows are ``before``'s rows of their ids, columns renumbered by ``renumber``
    (ascending, as the ids it keeps are); None when an untouched row reaches a row whose
    id went, or the two matrices' index types differ (then it is built whole)."""
    size = len(touched)
    if before.indices.dtype != fresh.indices.dtype or before.data.dtype != fresh.data.dtype:
        return None
    back = np.full(size, -1, dtype=np.int64)
    kept = np.flatnonzero(renumber >= 0)
    back[renumber[kept]] = kept
    if np.any(back[~touched] < 0):
        return None
    old_ptr = before.indptr.astype(np.int64)
    new_ptr = fresh.indptr.astype(np.int64)
    source = np.maximum(back, 0)
    lengths = np.where(touched, np.diff(new_ptr), old_ptr[source + 1] - old_ptr[source])
    starts = np.where(touched, len(before.indices) + new_ptr[:-1], old_ptr[source])
    ptr = np.zeros(size + 1, dtype=np.int64)
    np.cumsum(lengths, out=ptr[1:])
    columns = spans_copied(renumber[before.indices], [fresh.indices], starts, lengths, ptr)
    if columns.size and int(columns.min()) < 0:
        return None
    data = spans_copied(before.data, [fresh.data], starts, lengths, ptr, np.float64)
    index_type = before.indices.dtype
    return sp.csr_matrix(
        (data, columns.astype(index_type), ptr.astype(index_type)), shape=(size, size)
    )


def spans_copied(
    old: np.ndarray,
    fresh: list[np.ndarray],
    starts: np.ndarray,
    lengths: np.ndarray,
    ptr: np.ndarray,
    dtype: type[np.generic] = np.int64,
) -> np.ndarray:
    """Per document (or row) in order, its span ``starts[d] .. starts[d] + lengths[d]`` of
    ``old`` followed by ``fresh`` (``ptr``: where each lands), as one array of ``dtype``:
    copied in runs of spans that follow each other there (an edit leaves a few long
    ones), else gathered entry by entry."""
    added = np.concatenate(fresh) if fresh else np.zeros(0, dtype=dtype)
    ends = starts + lengths
    breaks = (np.flatnonzero(starts[1:] != ends[:-1]) + 1).tolist()
    if len(starts) == 0 or len(breaks) >= MAX_COPY_RUNS:
        gather = np.repeat(starts - ptr[:-1], lengths) + np.arange(int(ptr[-1]), dtype=np.int64)
        return np.concatenate([old, added]).astype(dtype)[gather]
    first = [0, *breaks]
    last = [*(b - 1 for b in breaks), len(starts) - 1]
    pieces: list[np.ndarray] = []
    split = len(old)
    for start, end in zip(starts[first].tolist(), ends[last].tolist(), strict=True):
        if start < split:
            pieces.append(old[start : min(end, split)])
        if end > split:
            pieces.append(added[max(start, split) - split : end - split])
    return np.concatenate([*pieces, np.zeros(0, dtype=dtype)]).astype(dtype, copy=False)
