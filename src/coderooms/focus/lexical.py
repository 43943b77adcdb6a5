"""Okapi BM25 over pre-tokenized documents, on a sparse matrix.

Small and exact: built once per index, a query is one sparse column slice and a sum.
Ties break by document order, so results are deterministic.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import chain

import numpy as np
import scipy.sparse as sp

from coderooms.focus.carried import renumbered

BM25_K1 = 1.2
BM25_B = 0.75


@dataclass(frozen=True, slots=True)
class DocumentCounts:
    """Term counts of many documents as flat arrays: document ``d`` holds the terms
    ``terms[ids[k]]`` with counts ``counts[k]`` for ``ptr[d] <= k < ptr[d + 1]``, in the
    order the terms first occur in it; ``keys[d]`` names what the document was made from
    (a builder reuses a document whose key it knows)."""

    keys: tuple[bytes, ...]
    terms: tuple[str, ...]
    ptr: np.ndarray
    ids: np.ndarray
    counts: np.ndarray

    @property
    def size(self) -> int:
        return len(self.keys)

    def positions(self) -> dict[bytes, int]:
        """Document position by key (the first, should two documents share a key)."""
        out: dict[bytes, int] = {}
        for position, key in enumerate(self.keys):
            out.setdefault(key, position)
        return out


@dataclass(frozen=True, slots=True)
class BM25Parts:
    """A built :class:`BM25` as plain data (what :meth:`BM25.parts` gives, to compare two
    builds): its vocabulary in order, the inverse document frequencies and the weight
    matrix's compressed columns."""

    terms: tuple[str, ...]
    columns: tuple[int, ...]
    idf: np.ndarray
    data: np.ndarray
    indices: np.ndarray
    indptr: np.ndarray
    shape: tuple[int, int]
    size: int


class BM25:
    def __init__(self, documents: Sequence[Sequence[str]]) -> None:
        self._build([Counter(terms) for terms in documents])

    @classmethod
    def from_counts(cls, documents: Sequence[Mapping[str, int]]) -> BM25:
        """The index of documents given as term counts (a document's length is the sum
        of its counts)."""
        index = cls.__new__(cls)
        index._build(documents)
        return index

    @classmethod
    def from_documents(cls, documents: DocumentCounts) -> BM25:
        """The index of documents given as arrays (see :class:`DocumentCounts`); equal,
        bit for bit, to :meth:`from_counts` over the same counts in the same order."""
        size = documents.size
        ids = documents.ids
        # Columns in order of first appearance, as dict.fromkeys gives them below.
        first = first_positions(ids, len(documents.terms))
        present = np.flatnonzero(first < len(ids))
        order = present[np.argsort(first[present], kind="stable")]
        column = np.zeros(len(documents.terms), dtype=np.int64)
        column[order] = np.arange(len(order), dtype=np.int64)
        terms = documents.terms
        vocabulary = {terms[int(t)]: col for col, t in enumerate(order)}
        counts = documents.counts.astype(np.float64)
        rows = np.repeat(np.arange(size, dtype=np.int64), np.diff(documents.ptr))
        lengths = np.bincount(rows, weights=counts, minlength=size).astype(np.float64)
        # A document holds each term once: its row of the matrix is already in place.
        shape = (size, max(len(vocabulary), 1))
        by_row = sp.csr_matrix((counts, column[ids], documents.ptr), shape=shape)
        index = cls.__new__(cls)
        index._fit_counts(vocabulary, by_row.tocsc(), lengths)
        return index

    def _build(self, documents: Sequence[Mapping[str, int]]) -> None:
        # Columns in order of first appearance, document by document.
        vocabulary = {term: col for col, term in enumerate(dict.fromkeys(chain(*documents)))}
        sizes = np.fromiter(map(len, documents), dtype=np.int64, count=len(documents))
        total = int(sizes.sum())
        rows = np.repeat(np.arange(len(documents), dtype=np.int64), sizes)
        cols = np.fromiter(
            map(vocabulary.__getitem__, chain(*documents)), dtype=np.int64, count=total
        )
        counts = np.fromiter(
            chain.from_iterable(d.values() for d in documents), dtype=np.float64, count=total
        )
        lengths = np.fromiter(
            (sum(d.values()) for d in documents), dtype=np.float64, count=len(documents)
        )
        self._fit(vocabulary, rows, cols, counts, lengths)

    def _fit(
        self,
        vocabulary: dict[str, int],
        rows: np.ndarray,
        cols: np.ndarray,
        counts: np.ndarray,
        lengths: np.ndarray,
    ) -> None:
        shape = (len(lengths), max(len(vocabulary), 1))
        tf = sp.csc_matrix((counts, (rows, cols)), shape=shape, dtype=np.float64)
        self._fit_counts(vocabulary, tf, lengths)

    def _fit_counts(
        self, vocabulary: dict[str, int], tf: sp.csc_matrix, lengths: np.ndarray
    ) -> None:
        """Weigh the term counts ``tf`` (documents by terms, in canonical form)."""
        size = len(lengths)
        self.vocabulary = vocabulary
        self.size = size
        document_frequency = np.diff(tf.indptr).astype(np.float64)
        self.idf = np.log1p((self.size - document_frequency + 0.5) / (document_frequency + 0.5))
        average = float(lengths.mean()) if self.size else 0.0
        norm = BM25_K1 * (1.0 - BM25_B + BM25_B * lengths / max(average, 1.0))
        column = np.repeat(np.arange(tf.shape[1], dtype=np.int64), np.diff(tf.indptr))
        data = tf.data * (BM25_K1 + 1.0) / (tf.data + norm[tf.indices])
        data = data * self.idf[column]
        self.weights = sp.csc_matrix((data, tf.indices, tf.indptr), shape=tf.shape)

    def parts(self) -> BM25Parts:
        weights = self.weights
        shape = (int(weights.shape[0]), int(weights.shape[1]))
        return BM25Parts(
            tuple(self.vocabulary),
            tuple(self.vocabulary.values()),
            self.idf,
            weights.data,
            weights.indices,
            weights.indptr,
            shape,
            self.size,
        )

    def document_frequency(self, term: str) -> int:
        col = self.vocabulary.get(term)
        if col is None:
            return 0
        return int(self.weights.indptr[col + 1] - self.weights.indptr[col])

    def documents_with(self, term: str) -> np.ndarray:
        """Positions of the documents holding ``term``, ascending."""
        col = self.vocabulary.get(term)
        if col is None:
            return np.zeros(0, dtype=np.int64)
        start, end = self.weights.indptr[col], self.weights.indptr[col + 1]
        return np.sort(self.weights.indices[start:end])

    def scores(self, query: Sequence[str] | Mapping[str, float]) -> np.ndarray:
        """One score per document. A term list counts a repeated term once per repeat;
        a mapping gives each term its own weight."""
        weights = query if isinstance(query, Mapping) else Counter(query)
        known = sorted(
            (self.vocabulary[t], float(w)) for t, w in weights.items() if t in self.vocabulary
        )
        if not known or self.size == 0:
            return np.zeros(self.size, dtype=np.float64)
        cols = [c for c, _ in known]
        factor = np.asarray([w for _, w in known], dtype=np.float64)
        block = self.weights[:, cols]
        return np.asarray(block @ factor).ravel()


MAX_HELD_ENTRIES = 65_536
"""Term counts of documents an edit counted (or could not take whole) that carried
columns (see :class:`TermColumns`) hold apart from the columns they renumber; past this
the columns are made whole again."""


class TermColumns:
    """The counts of some documents by term: for term id ``t``, the documents holding it
    (ascending) and its count in each. Made whole (``base``, documents by term in
    compressed columns) or, for the documents of an index built on an earlier one, the
    earlier columns read through ``to_now`` (a document there to its position here, -1:
    gone) with the entries of the documents not taken from there held apart (``held``:
    term ids, documents and counts, sorted by term then document). A column is read for
    the terms a query asks of: nothing is made again for the documents an edit kept."""

    def __init__(
        self,
        base: sp.csc_matrix,
        to_now: np.ndarray | None = None,
        held: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None,
    ) -> None:
        self.base = base
        self.to_now = to_now
        empty = np.zeros(0, dtype=np.int64)
        self.held = held if held is not None else (empty, empty, np.zeros(0, dtype=np.float64))

    @classmethod
    def whole(cls, documents: DocumentCounts) -> TermColumns:
        size = len(documents.ptr) - 1
        shape = (size, max(len(documents.terms), 1))
        counts = documents.counts.astype(np.float64)
        by_row = sp.csr_matrix((counts, documents.ids, documents.ptr), shape=shape)
        return cls(sp.csc_matrix(by_row.tocsc()))

    def column(self, at: int) -> tuple[np.ndarray, np.ndarray]:
        """The documents holding term ``at`` (ascending) and its counts there."""
        base = self.base
        if at < base.shape[1]:
            start, end = base.indptr[at], base.indptr[at + 1]
            rows, counts = base.indices[start:end], base.data[start:end]
        else:
            rows, counts = base.indices[:0], base.data[:0]
        if self.to_now is not None:
            rows = self.to_now[rows]
            if rows.size and rows.min() < 0:
                kept = rows >= 0
                rows, counts = rows[kept], counts[kept]
        terms, held_rows, held_counts = self.held
        if terms.size:
            low, high = np.searchsorted(terms, [at, at + 1]).tolist()
            if high > low:
                rows = np.concatenate([rows, held_rows[low:high]])
                counts = np.concatenate([counts, held_counts[low:high]])
        if self.to_now is not None and rows.size > 1 and np.any(rows[1:] < rows[:-1]):
            order = np.argsort(rows, kind="stable")
            rows, counts = rows[order], counts[order]
        return rows, counts

    def frequency(self, at: int) -> int:
        """How many documents hold term ``at``."""
        if self.to_now is None and not self.held[0].size:
            if at >= self.base.shape[1]:
                return 0
            return int(self.base.indptr[at + 1] - self.base.indptr[at])
        return len(self.column(at)[0])

    def followed(
        self, before: int, lent: np.ndarray, documents: DocumentCounts
    ) -> TermColumns | None:
        """The columns of ``documents``, whose document ``d`` is document ``lent[d]`` of
        the ``before`` these columns are of (the same terms under the same ids) or, where
        that is -1, counted anew; None when too much would be held apart (then made
        whole)."""
        size = len(documents.ptr) - 1
        taken = np.flatnonzero(lent >= 0)
        to_here = np.full(before, -1, dtype=np.int64)
        to_here[lent[taken][::-1]] = taken[::-1]  # a document lent twice: its first
        apart = np.ones(size, dtype=np.bool_)
        apart[to_here[to_here >= 0]] = False
        to_now = to_here if self.to_now is None else renumbered(self.to_now, to_here)
        terms, rows, counts = self.held
        rows = renumbered(rows, to_here)
        kept = rows >= 0
        parts = [(terms[kept], rows[kept], counts[kept])]
        fresh = np.flatnonzero(apart)
        if fresh.size:
            ptr = documents.ptr
            lengths = ptr[fresh + 1] - ptr[fresh]
            at = np.repeat(ptr[fresh] - np.cumsum(lengths) + lengths, lengths) + np.arange(
                int(lengths.sum()), dtype=np.int64
            )
            parts.append(
                (
                    documents.ids[at].astype(np.int64),
                    np.repeat(fresh, lengths),
                    documents.counts[at].astype(np.float64),
                )
            )
        terms = np.concatenate([part[0] for part in parts])
        if len(terms) > MAX_HELD_ENTRIES:
            return None
        rows = np.concatenate([part[1] for part in parts])
        counts = np.concatenate([part[2] for part in parts])
        order = np.lexsort((rows, terms))
        return TermColumns(self.base, to_now, (terms[order], rows[order], counts[order]))


class CountedBM25:
    """BM25 over documents kept as their term counts (see :class:`DocumentCounts`): a
    term's weights are worked out when a query asks for it, so nothing is weighed ahead.
    An edit changes the average document length and with it every weight; here it only
    changes the counts of the edited documents. Scores equal, bit for bit, those of
    :meth:`BM25.from_documents` over the same documents: the same formula per entry, and
    the query's terms summed in the order that index numbers its columns (the order in
    which the terms first occur)."""

    def __init__(
        self,
        documents: DocumentCounts,
        term_ids: Mapping[str, int] | None = None,
        lent: tuple[CountedBM25, np.ndarray] | None = None,
    ) -> None:
        """``term_ids``: term to its id in ``documents.terms``, when the caller has it.
        ``lent``: an earlier index over documents whose terms keep their ids here, and
        per document here the one there it is (-1: counted anew): its columns are
        carried (see :class:`TermColumns`) rather than made again."""
        self.documents = documents
        self.size = len(documents.ptr) - 1  # its keys may be left out
        self._term_ids = term_ids
        # Each document's length, summed in integers (exact, as the float sum of these
        # whole counts is) from one running total instead of a bin per entry.
        total = np.zeros(len(documents.counts) + 1, dtype=np.int64)
        np.cumsum(documents.counts, out=total[1:])
        ptr = documents.ptr
        lengths = (total[ptr[1:]] - total[ptr[:-1]]).astype(np.float64)
        average = float(lengths.mean()) if self.size else 0.0
        self._norm = BM25_K1 * (1.0 - BM25_B + BM25_B * lengths / max(average, 1.0))
        self._by_term: TermColumns | None = None
        if lent is not None and lent[0]._by_term is not None:
            self._by_term = lent[0]._by_term.followed(lent[0].size, lent[1], documents)

    def columns(self) -> TermColumns:
        """The counts by term (made whole when first asked, unless carried)."""
        if self._by_term is None:
            self._by_term = TermColumns.whole(self.documents)
        return self._by_term

    def _id(self, term: str) -> int | None:
        if self._term_ids is None:
            terms = self.documents.terms
            self._term_ids = dict(zip(terms, range(len(terms)), strict=True))
        return self._term_ids.get(term)

    def document_frequency(self, term: str) -> int:
        at = self._id(term)
        if at is None:
            return 0
        return self.columns().frequency(at)

    def documents_with(self, term: str) -> np.ndarray:
        """Positions of the documents holding ``term``, ascending."""
        at = self._id(term)
        if at is None:
            return np.zeros(0, dtype=np.int64)
        return np.sort(self.columns().column(at)[0])

    def _first_place(self, first: int, at: int) -> int:
        """Where term ``at`` first occurs in the documents, counted over all their terms,
        ``first`` being the first document holding it: the column order of a
        :class:`BM25` built over them."""
        ptr = self.documents.ptr
        start = int(ptr[first])
        ids = self.documents.ids[start : int(ptr[first + 1])]
        return start + int(np.flatnonzero(ids == at)[0])

    def scores(self, query: Sequence[str] | Mapping[str, float]) -> np.ndarray:
        """As :meth:`BM25.scores`."""
        weights = query if isinstance(query, Mapping) else Counter(query)
        if self.size == 0:
            return np.zeros(self.size, dtype=np.float64)
        columns = self.columns()
        known = []
        for term, weight in weights.items():
            at = self._id(term)
            if at is None:
                continue
            rows, counts = columns.column(at)
            if rows.size:
                first = self._first_place(int(rows[0]), at)
                known.append((first, at, float(weight), rows, counts))
        if not known:
            return np.zeros(self.size, dtype=np.float64)
        known.sort(key=lambda entry: entry[:2])
        lengths = np.asarray([len(entry[3]) for entry in known], dtype=np.int64)
        block_ptr = np.zeros(len(known) + 1, dtype=np.int64)
        np.cumsum(lengths, out=block_ptr[1:])
        tf = np.concatenate([entry[4] for entry in known])
        rows = np.concatenate([entry[3] for entry in known])
        frequency = np.diff(block_ptr).astype(np.float64)
        idf = np.log1p((self.size - frequency + 0.5) / (frequency + 0.5))
        column = np.repeat(np.arange(len(known), dtype=np.int64), lengths)
        data = tf * (BM25_K1 + 1.0) / (tf + self._norm[rows])
        data = data * idf[column]
        block = sp.csc_matrix((data, rows, block_ptr), shape=(self.size, len(known)))
        factor = np.asarray([entry[2] for entry in known], dtype=np.float64)
        return np.asarray(block @ factor).ravel()


def first_positions(ids: np.ndarray, size: int) -> np.ndarray:
    """Per value below ``size``: where it first occurs in ``ids``, or ``len(ids)`` when it
    does not (in one pass: no sort)."""
    first = np.full(size, len(ids), dtype=np.int64)
    np.minimum.at(first, ids, np.arange(len(ids), dtype=np.int64))
    return first


def top_ranked(scores: np.ndarray, limit: int) -> list[int]:
    """Indices of the best positive scores, best first, ties by index."""
    positive = np.flatnonzero(scores > 0)
    if positive.size == 0:
        return []
    if 0 < limit < positive.size:
        # Only scores at least the limit-th best can place (ties kept): sort those alone.
        kth = np.partition(scores[positive], positive.size - limit)[positive.size - limit]
        positive = positive[scores[positive] >= kth]
    order = np.lexsort((positive, -scores[positive]))
    return [int(i) for i in positive[order][:limit]]
