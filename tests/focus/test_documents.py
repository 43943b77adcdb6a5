"""A file's documents made where its text is at hand (focus.documents.file_work) are
those a ranking index makes of the same nodes, key for key and term for term."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from itertools import accumulate, pairwise

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from coderooms.focus.documents import (
    SYMBOL_TEXT_CAP_CHARS,
    DocumentMerger,
    SymbolPlace,
    file_work,
)
from coderooms.focus.graph import CodeGraph, CodeNode
from coderooms.focus.lexical import DocumentCounts
from coderooms.focus.salience import SalienceIndex

PATH = "pkg/mod_file.py"
# Words, digits, punctuation and every line break str.splitlines knows of.
PIECES = ["alpha", "BetaGamma", "snake_case", "x1", "42", " ", "(", ".", "\n", "\n", "é"]
BREAKS = ["\r\n", "\r", "\x0b", "\x0c", "\x1c", "\x85", "\u2028"]
KINDS = ("class", "function", "method", "module")

# Texts with "\n" as their only line break (split at once), and texts with others too.
texts = st.one_of(
    st.lists(st.sampled_from(PIECES), max_size=60),
    st.lists(st.sampled_from(PIECES + BREAKS), max_size=60),
).map("".join)
# A line long enough that a few of them pass what a symbol's document takes.
long_line = st.just("word_" * (SYMBOL_TEXT_CAP_CHARS // 7) + "\n")
bodies = st.lists(st.one_of(texts, long_line), min_size=1, max_size=6).map("".join)


@st.composite
def files(draw: st.DrawFn) -> tuple[str, list[SymbolPlace]]:
    text = draw(bodies)
    lines = max(len(text.splitlines()), 1)
    symbols: list[SymbolPlace] = []
    for i in range(draw(st.integers(0, 6))):
        start = draw(st.integers(0, lines + 1))
        end = draw(st.integers(start - 1, lines + 2))
        parent = draw(st.sampled_from([None, *(s.id for s in symbols)]))
        name = draw(st.sampled_from(["run", "Cart", "add_item", "x"]))
        symbols.append(
            SymbolPlace(
                f"{PATH}::{name}{i}",
                draw(st.sampled_from(KINDS)),
                name,
                f"Outer.{name}" if parent else name,
                parent,
                start,
                end,
                draw(st.sampled_from(["", f"def {name}(self, a)", "x" * 700])),
                draw(st.sampled_from(["", "Adds an item.", "long " * 150])),
            )
        )
    return text, symbols


def _nodes(text: str, symbols: list[SymbolPlace]) -> list[CodeNode]:
    file = CodeNode(PATH, "file", PATH, "mod_file.py", PATH, "python", 1, 9, content_hash="abc")
    return [file] + [
        CodeNode(
            s.id,
            s.kind,
            PATH,
            s.name,
            s.qualname,
            "python",
            s.start_line,
            s.end_line,  # type: ignore[arg-type]
            s.signature,
            s.docstring,
            "h",
            s.parent if s.parent is not None else PATH,
        )
        for s in symbols
    ]


@settings(max_examples=150, deadline=None)
@given(files())
def test_a_files_work_is_what_the_ranking_index_makes_of_it(
    drawn: tuple[str, list[SymbolPlace]],
) -> None:
    _check(*drawn)


def test_a_body_cut_right_after_a_whole_line_keeps_no_part_of_the_next() -> None:
    first = "w" * SYMBOL_TEXT_CAP_CHARS  # the cut falls on the newline after it
    for text in (f"{first}\nnext_line words\n", f"{first[:-1]}\nnext_line words\n"):
        symbol = SymbolPlace(f"{PATH}::f", "function", "f", "f", None, 1, 2, "", "")
        _check(text, [symbol])


def _check(text: str, symbols: list[SymbolPlace]) -> None:
    nodes = _nodes(text, symbols)
    index = SalienceIndex(CodeGraph(nodes=tuple(nodes), edges=()), {PATH: text})
    work = file_work(PATH, "abc", text, symbols)

    def documents(counts: object) -> dict[bytes, Counter[str]]:
        out: dict[bytes, Counter[str]] = {}
        for d, key in enumerate(counts.keys):  # type: ignore[attr-defined]
            start, end = counts.ptr[d], counts.ptr[d + 1]  # type: ignore[attr-defined]
            terms = [counts.terms[int(t)] for t in counts.ids[start:end]]  # type: ignore[attr-defined]
            out[key] = Counter(dict(zip(terms, map(int, counts.counts[start:end]), strict=True)))  # type: ignore[attr-defined]
        return out

    want = documents(index.file_documents) | documents(index.symbol_documents)
    got: dict[bytes, Counter[str]] = {}
    at = 0
    for d, key in enumerate(work.document_keys):
        size = int(work.lengths[d])
        terms = [work.terms[int(t)] for t in work.ids[at : at + size]]
        got[key] = Counter(dict(zip(terms, map(int, work.counts[at : at + size]), strict=True)))
        at += size
    assert got == want
    # The same terms in the same order, not just the same counts: BM25 columns follow it.
    assert [list(c) for c in got.values()] == [list(want[k]) for k in got]
    by_id = {n.id: n for n in index.nodes}
    ordered = [by_id[PATH], *(by_id[s.id] for s in symbols)]
    assert work.embedding_keys == tuple(index._embed_key(n) for n in ordered)
    assert work.embedding_texts == tuple(index._embed_text(n) for n in ordered)


def _documents(
    terms: Sequence[str], ids: np.ndarray, counts: np.ndarray, bounds: Sequence[int]
) -> list[list[tuple[str, int]]]:
    """Each document's terms and counts, in their stored order (document ``d`` holds the
    entries from ``bounds[d]`` to ``bounds[d + 1]``)."""
    return [
        [(terms[int(t)], int(c)) for t, c in zip(ids[a:b], counts[a:b], strict=True)]
        for a, b in pairwise(bounds)
    ]


def _read(counts: DocumentCounts) -> list[list[tuple[str, int]]]:
    bounds = [int(p) for p in counts.ptr[: counts.size + 1]]
    return _documents(counts.terms, counts.ids, counts.counts, bounds)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(st.sampled_from(PIECES), max_size=40).map("".join), max_size=5))
def test_merged_works_read_as_each_files_own_documents(texts_of_files: list[str]) -> None:
    works = []
    for n, text in enumerate(texts_of_files):
        symbol = SymbolPlace(f"f{n}.py::run", "function", "run", "run", None, 1, 2, "", "")
        works.append(file_work(f"f{n}.py", f"h{n}", text, [symbol]))
    merger = DocumentMerger()
    for work in works:
        merger.add(work)
    files_merged, symbols_merged = merger.result()
    # Ids in the order terms first come, file after file (a new file's new terms last).
    expected_terms = list(dict.fromkeys(t for work in works for t in work.terms))
    assert list(files_merged.terms) == expected_terms == list(symbols_merged.terms)
    own_files: list[list[tuple[str, int]]] = []
    own_symbols: list[list[tuple[str, int]]] = []
    for work in works:
        bounds = [0, *accumulate(int(n) for n in work.lengths)]
        read = _documents(work.terms, work.ids, work.counts, bounds)
        own_files.append(read[0])
        own_symbols.extend(read[1:])
    assert _read(files_merged) == own_files
    assert _read(symbols_merged) == own_symbols
