"""An engine built on the previous one (after an edit) reuses the work done for code that
did not change, and answers exactly as an engine built from nothing."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import numpy as np
import pytest
from fixture_repo import (
    SHOP,
    SHOP_CALLS,
    SHOP_IMPORTS,
    SHOP_TESTS,
    assert_same_built,
    build_graph,
    count_words,
)
from hypothesis import example, given, settings
from hypothesis import strategies as st

from coderooms import embeddings
from coderooms.focus import salience
from coderooms.focus.lexical import BM25, CountedBM25, DocumentCounts
from coderooms.focus.runtime import FocusEngine
from coderooms.focus.salience import (
    EMBEDDING_PHASE,
    MAX_KEY_SCANS,
    _key_finder,
    _RenumberedRows,
)

GOALS = (
    "Calling `Cart.add_item` with quantity 0 raises ValueError",
    "price_of gives wrong results after a discount",
    "route parcels by weight with a new carrier",
    "send_receipt to an address",
)


class CountingEmbedder:
    """The shipped embedder, counting the texts it is asked to embed."""

    def __init__(self) -> None:
        self.texts: list[str] = []

    def __call__(self, texts: Sequence[str]) -> np.ndarray:
        self.texts.extend(texts)
        return embeddings.embed(texts)


def _edited() -> dict[str, str]:
    sources = dict(SHOP)
    # A body changed in place (same name, same lines), a function added, a file added
    # and a file removed.
    cart = sources["shop/cart.py"].replace(
        "self.items.append((sku, quantity))", "self.items.insert(0, (sku, quantity))"
    )
    assert cart != sources["shop/cart.py"]
    sources["shop/cart.py"] = cart + (
        '\n\ndef empty_cart(cart):\n    """Remove every item."""\n    cart.items.clear()\n'
    )
    sources["shop/returns.py"] = "def refund(order):\n    return order.total\n"
    del sources["shop/shipping.py"]
    return sources


def _engine(
    sources: dict[str, str],
    embedder: CountingEmbedder,
    previous: FocusEngine | None = None,
    hashed: bool = False,
) -> FocusEngine:
    graph = build_graph(
        sources,
        tuple(c for c in SHOP_CALLS if all(i.split("::")[0] in sources for i in c)),
        SHOP_IMPORTS,
        SHOP_TESTS,
        hashed=hashed,
    )
    return FocusEngine(graph, sources, count_words, embedder, previous=previous)


def _answers(engine: FocusEngine) -> list[str]:
    return [
        json.dumps([engine.focus(g, budget=300).to_json(), engine.seek(g).to_json()]) for g in GOALS
    ]


def test_an_engine_built_on_the_previous_one_equals_one_built_from_nothing() -> None:
    embedder = CountingEmbedder()
    before = _engine(dict(SHOP), embedder)
    after = _engine(_edited(), embedder, previous=before)
    fresh = _engine(_edited(), CountingEmbedder())
    assert after.index.embeddings is not None and fresh.index.embeddings is not None
    assert np.array_equal(after.index.embeddings, fresh.index.embeddings)
    for mine, theirs in (
        (after.index.file_bm25, fresh.index.file_bm25),
        (after.index.symbol_bm25, fresh.index.symbol_bm25),
    ):
        words = sorted(set(theirs.documents.terms) | set(mine.documents.terms))
        for query in [[word] for word in words] + [words]:
            assert mine.scores(query).tobytes() == theirs.scores(query).tobytes()
        assert [mine.document_frequency(w) for w in words] == [
            theirs.document_frequency(w) for w in words
        ]
    assert _answers(after) == _answers(fresh)


def test_only_changed_code_is_embedded_again() -> None:
    embedder = CountingEmbedder()
    before = _engine(dict(SHOP), embedder)
    first = len(embedder.texts)
    embedder.texts.clear()
    _engine(_edited(), embedder, previous=before)
    again = embedder.texts
    assert 0 < len(again) < first / 2
    assert any("empty_cart" in text for text in again)
    assert any("refund" in text for text in again)
    assert not any(text.startswith("shop/catalog.py") for text in again)  # unchanged


def test_rows_of_another_embedder_are_not_reused() -> None:
    before = _engine(dict(SHOP), CountingEmbedder())
    other = CountingEmbedder()
    after = _engine(_edited(), other, previous=before)
    assert len(other.texts) == len({*other.texts})
    assert after.index.embeddings is not None
    every = {after.index._embed_text(node) for node in after.index.nodes}
    assert set(other.texts) == every


@pytest.mark.parametrize("made", [True, False])
def test_rows_made_elsewhere_are_asked_for_once_and_made_here_when_none_come(made: bool) -> None:
    graph = build_graph(dict(SHOP), SHOP_CALLS, SHOP_IMPORTS, SHOP_TESTS)
    fresh = FocusEngine(graph, dict(SHOP), count_words, CountingEmbedder())
    work = fresh.index.known_work()
    asked: list[int] = []
    embedder = CountingEmbedder()

    def later() -> np.ndarray | None:
        asked.append(len(embedder.texts))  # what the build had embedded when it asked
        return work.embeddings if made else None

    pending = replace(work, embeddings=None, later=later)
    engine = FocusEngine(graph, dict(SHOP), count_words, embedder, known=pending)
    assert asked == [0]  # once
    assert engine.index.embeddings is not None and fresh.index.embeddings is not None
    assert np.array_equal(engine.index.embeddings, fresh.index.embeddings)
    assert (engine.index.fresh_embeddings == 0) == made  # none came: embedded here
    assert bool(embedder.texts) != made
    assert _answers(engine) == _answers(fresh)
    assert pending.without_embeddings().later is None


def test_bm25_from_counts_equals_bm25_from_terms() -> None:
    documents = [["cart", "item", "cart"], [], ["depot", "item"], ["cart"]]
    from_terms = BM25(documents)
    from_counts = BM25.from_counts([_counts(d) for d in documents])
    assert list(from_terms.vocabulary) == list(from_counts.vocabulary) == ["cart", "item", "depot"]
    assert (from_terms.weights != from_counts.weights).nnz == 0
    assert np.array_equal(from_terms.scores(["cart"]), from_counts.scores(["cart"]))


_WORDS = st.sampled_from(["cart", "item", "depot", "parcel", "route", "tax", "refund"])


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.lists(_WORDS, max_size=12), max_size=9),
    st.dictionaries(_WORDS, st.floats(min_value=0.01, max_value=5.0), max_size=7),
)
def test_bm25_weighed_at_query_time_scores_as_bm25_weighed_ahead_to_the_bit(
    documents: list[list[str]], query: dict[str, float]
) -> None:
    """The counts a focus index keeps, weighed only for the query's terms, give the floats
    BM25 weighed over every term gives: any edit then leaves no weight to redo."""
    counted = [Counter(terms) for terms in documents]
    ahead = BM25.from_counts(counted)
    terms = list(dict.fromkeys(t for c in counted for t in c))
    # Term ids in another order than first appearance, as an index patched by edits has.
    shuffled = sorted(terms, key=lambda t: t[::-1]) + ["gone"]
    ids = {t: i for i, t in enumerate(shuffled)}
    ptr = np.cumsum([0, *map(len, counted)], dtype=np.int64)
    flat_ids = np.asarray([ids[t] for c in counted for t in c], dtype=np.int64)
    flat_counts = np.asarray([n for c in counted for n in c.values()], dtype=np.int64)
    kept = CountedBM25(DocumentCounts((), tuple(shuffled), ptr, flat_ids, flat_counts))
    assert kept.scores(query).tobytes() == ahead.scores(query).tobytes()
    as_list = [t for t, w in query.items() for _ in range(1 + int(w))]
    assert kept.scores(as_list).tobytes() == ahead.scores(as_list).tobytes()
    for term in [*terms, "gone", "absent"]:
        assert kept.document_frequency(term) == ahead.document_frequency(term)
        assert kept.documents_with(term).tolist() == ahead.documents_with(term).tolist()


def _counts(terms: list[str]) -> dict[str, int]:
    out: dict[str, int] = {}
    for term in terms:
        out[term] = out.get(term, 0) + 1
    return out


_FILES = sorted(SHOP)
_EDITS = st.lists(
    st.tuples(
        st.sampled_from(["rewrite_body", "add_function", "delete_file", "restore_file"]),
        st.sampled_from(_FILES),
        st.integers(min_value=0, max_value=3),
    ),
    min_size=1,
    max_size=5,
)


def _apply(sources: dict[str, str], edit: tuple[str, str, int]) -> None:
    action, path, n = edit
    if action == "delete_file":
        sources.pop(path, None)
    elif action == "restore_file" or path not in sources:
        sources[path] = SHOP[path]
    elif action == "rewrite_body":
        sources[path] = sources[path].replace("return", f"return {n} or", 1)
    else:
        sources[path] += f"\n\ndef helper_{n}(value):\n    return value * {n}\n"


def _edited_series(
    edits: list[tuple[str, str, int]], hashed: bool
) -> tuple[FocusEngine, dict[str, str]]:
    """The engine after ``edits``, each built on the one before, and the sources then."""
    embedder = CountingEmbedder()
    sources = dict(SHOP)
    engine = _engine(sources, embedder, hashed=hashed)
    for edit in edits:
        _apply(sources, edit)
        engine = _engine(dict(sources), embedder, previous=engine, hashed=hashed)
    return engine, sources


@settings(max_examples=25, deadline=None)
@given(_EDITS, st.booleans())
@example(  # a name defined twice in a file: two nodes of one id, one carried over
    [("add_function", "shop/cart.py", 0)] * 2 + [("rewrite_body", "shop/catalog.py", 0)], True
)
def test_any_series_of_edits_answers_as_an_engine_built_from_nothing(
    edits: list[tuple[str, str, int]], hashed: bool
) -> None:
    engine, sources = _edited_series(edits, hashed)
    fresh = _engine(dict(sources), CountingEmbedder(), hashed=hashed)
    assert engine.index.embeddings is not None and fresh.index.embeddings is not None
    assert np.array_equal(engine.index.embeddings, fresh.index.embeddings)
    assert engine.index.row_keys() == fresh.index.row_keys()
    assert _answers(engine) == _answers(fresh)


def test_keys_of_code_in_unchanged_files_are_taken_from_the_previous_engine() -> None:
    embedder = CountingEmbedder()
    before = _engine(dict(SHOP), embedder, hashed=True)
    after = _engine(_edited(), embedder, previous=before, hashed=True)
    fresh = _engine(_edited(), CountingEmbedder(), hashed=True)
    assert after.index.row_keys() == fresh.index.row_keys()
    new_or_edited = ("shop/cart.py", "shop/returns.py")
    unchanged = [n for n in after.index.nodes if n.path not in new_or_edited]
    assert 0 < len(unchanged) < len(after.index.nodes)
    assert after.index.reused_keys == len(unchanged)
    assert fresh.index.reused_keys == 0
    # Without a hash of the file's text nothing says it is unchanged: every key is made.
    plain = _engine(_edited(), embedder, previous=_engine(dict(SHOP), embedder))
    assert plain.index.reused_keys == 0
    assert plain.index.row_keys() == _engine(_edited(), CountingEmbedder()).index.row_keys()


@settings(max_examples=15, deadline=None)
@given(_EDITS)
def test_an_index_patched_edit_by_edit_is_bit_for_bit_a_cold_build(
    edits: list[tuple[str, str, int]],
) -> None:
    """Each build on the previous engine takes the documents and rows of unchanged code
    by their row there; everything it keeps for the next process equals a cold build's."""
    engine, sources = _edited_series(edits, hashed=True)
    cold = _engine(dict(sources), CountingEmbedder(), hashed=True)
    _assert_same_lookups(engine, cold)  # before built(), which reads the tables whole
    assert_same_built(engine.index.built(), cold.index.built())
    mine_work, their_work = engine.index.known_work(), cold.index.known_work()
    for name in ("file_documents", "symbol_documents"):
        mine_docs, their_docs = getattr(mine_work, name), getattr(their_work, name)
        assert mine_docs.keys == their_docs.keys
        for row in range(mine_docs.size):
            assert _terms(mine_docs, row) == _terms(their_docs, row)
    assert _answers(engine) == _answers(cold)


ROW_TABLES = ("definitions", "qualnames", "path_tails", "module_ends")


def _assert_same_lookups(mine: FocusEngine, theirs: FocusEngine) -> None:
    """Every key of the row tables (and the keys of the shop before any edit, some gone
    since) looks up the same rows in both, read key by key as ranking reads them."""
    before = _engine(dict(SHOP), CountingEmbedder())
    for name in ROW_TABLES:
        table, cold = getattr(mine.index, name), getattr(theirs.index, name)
        keys = sorted({*cold, *getattr(before.index, name), "no_such_key"})
        assert [table.get(k) for k in keys] == [cold.get(k) for k in keys], name
        assert [k in table for k in keys] == [k in cold for k in keys], name


def test_an_edit_renumbers_the_row_tables_and_reads_them_as_a_cold_build() -> None:
    embedder = CountingEmbedder()
    engine = _engine(dict(SHOP), embedder, hashed=True)
    sources = dict(SHOP)
    for n in range(3):  # each built on the one before: renumbered from renumbered tables
        _apply(sources, ("add_function", "shop/cart.py", n))
        engine = _engine(dict(sources), embedder, previous=engine, hashed=True)
    cold = _engine(dict(sources), CountingEmbedder(), hashed=True)
    assert all(isinstance(getattr(engine.index, name), _RenumberedRows) for name in ROW_TABLES)
    _assert_same_lookups(engine, cold)
    for name in ROW_TABLES:
        assert dict(getattr(engine.index, name)) == dict(getattr(cold.index, name)), name
    assert _answers(engine) == _answers(cold)


def test_past_the_bound_of_keys_held_apart_the_row_tables_are_built_whole(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    embedder = CountingEmbedder()
    before = _engine(dict(SHOP), embedder, hashed=True)
    monkeypatch.setattr(salience, "MAX_RENUMBERED_KEYS", 0)
    sources = dict(SHOP)
    _apply(sources, ("add_function", "shop/cart.py", 1))
    after = _engine(dict(sources), embedder, previous=before, hashed=True)
    cold = _engine(dict(sources), CountingEmbedder(), hashed=True)
    assert not any(isinstance(getattr(after.index, name), _RenumberedRows) for name in ROW_TABLES)
    _assert_same_lookups(after, cold)


def test_an_edit_counts_and_embeds_only_the_edited_file() -> None:
    embedder = CountingEmbedder()
    before = _engine(dict(SHOP), embedder, hashed=True)
    embedder.texts.clear()
    sources = dict(SHOP)
    sources["shop/cart.py"] += "\n\ndef empty_cart(cart):\n    cart.items.clear()\n"
    after = _engine(sources, embedder, previous=before, hashed=True)
    in_cart = [n for n in after.index.nodes if n.path == "shop/cart.py"]
    documents = [n for n in in_cart if n.kind in ("file", "class", "function", "method")]
    assert after.index._fresh_documents == len(documents)
    assert after.index.fresh_embeddings == len(embedder.texts) <= len(in_cart)
    assert all(text.startswith("shop/cart.py") for text in embedder.texts)


def test_an_edit_tells_the_report_of_what_it_embeds() -> None:
    embedder = CountingEmbedder()
    before = _engine(dict(SHOP), embedder, hashed=True)
    sources = dict(SHOP)
    sources["shop/cart.py"] += "\n\ndef empty_cart(cart):\n    cart.items.clear()\n"
    told: list[tuple[str, int, int]] = []
    graph = _engine(sources, embedder, hashed=True).graph
    after = FocusEngine(
        graph,
        sources,
        count_words,
        embedder,
        previous=before,
        report=lambda phase, done, total: told.append((phase, done, total)),
    )
    fresh = after.index.fresh_embeddings
    assert fresh > 0
    assert [t for t in told if t[0] == EMBEDDING_PHASE] == [
        (EMBEDDING_PHASE, 0, fresh),
        (EMBEDDING_PHASE, fresh, fresh),
    ]


def _terms(documents: Any, row: int) -> dict[str, int]:
    start, end = int(documents.ptr[row]), int(documents.ptr[row + 1])
    ids, counts = documents.ids[start:end].tolist(), documents.counts[start:end].tolist()
    return {documents.terms[i]: c for i, c in zip(ids, counts, strict=True)}


@pytest.mark.parametrize("lookups", [1, MAX_KEY_SCANS + 1])
def test_a_key_is_found_only_where_a_key_starts(lookups: int) -> None:
    first, second = bytes([1] * 16), bytes([2] * 16)
    straddling = bytes([1] * 8 + [2] * 8)  # the joined bytes hold it, across two keys
    position = _key_finder((first, second, first), lookups)
    assert position(first) == 0 and position(second) == 1
    assert position(straddling) is None and position(bytes(16)) is None


def test_keys_not_all_of_one_size_are_still_found_where_they_first_sit() -> None:
    short, key = b"\x01" * 4, bytes([3] * 16)
    position = _key_finder((key, short, key), 1)
    assert position(short) == 1 and position(key) == 0 and position(b"\x02" * 4) is None
