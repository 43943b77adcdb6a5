"""The goal-independent documents of one file, made where the file's text is at hand.

A ranking index (:class:`~coderooms.focus.salience.SalienceIndex`) counts the terms of
every file and of every function and class, and embeds a short text of every node. The
keys naming each document and embedding text, the texts themselves and the term counts
are defined here, once: the index uses them, and a host that parses files anyway (the
code indexer's workers) makes the same documents file by file with :func:`file_work`,
so a first focus takes them instead of reading every file again. A
:class:`DocumentMerger` joins many files' work into the arrays
:class:`~coderooms.focus.salience.KnownWork` holds.
"""

from __future__ import annotations

import hashlib
import operator
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import accumulate, chain, count, filterfalse, repeat

import numpy as np

from coderooms.focus.lexical import DocumentCounts
from coderooms.focus.text import blank_runs, run_terms, tokenize

FILE_TEXT_CAP_CHARS = 200_000  # large generated files: index only their head
SYMBOL_TEXT_CAP_CHARS = 8_000
EMBED_TEXT_CAP_CHARS = 600
KEY_SIZE = 16  # bytes of a blake2b digest naming what a document or an embedding is of
DOCUMENT_KINDS = frozenset({"class", "function", "method"})  # symbols with a document
# Line breaks str.splitlines knows besides "\n" (a text holding one is split line by line).
_OTHER_BREAKS = re.compile("[\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")


def digest(text: str, tail: bytes = b"") -> bytes:
    """A short fingerprint of a text (and ``tail``), to recognise it in the next index."""
    data = text.encode("utf-8", "surrogatepass") + b"\0" + tail
    return hashlib.blake2b(data, digest_size=KEY_SIZE).digest()


def path_terms(path: str) -> list[str]:
    return tokenize(path.replace("/", " ").replace(".", " "))


def file_key(path: str, content_hash: str, text: str) -> bytes:
    """Names a file's text: by the index's hash of it when there is one (``text`` is then
    not read), else by the text."""
    if content_hash:
        return digest(f"file\0{path}\0{content_hash}")
    return digest(f"text\0{path}\0{text}")


def symbol_key(qualname: str, path: str, start_line: int, end_line: int, of_file: bytes) -> bytes:
    """Names a symbol's document: its place in the file ``of_file`` names."""
    return digest(f"{qualname}\0{path}\0{start_line}\0{end_line}", of_file)


def file_terms(path: str, text: str) -> list[str]:
    """The terms of a file's document, in order: its path, then its (capped) text."""
    return path_terms(path) + tokenize(text)


def symbol_terms(qualname: str, path: str, body: str) -> list[str]:
    """The terms of a symbol's document: its name twice, its path and its body."""
    return tokenize(qualname) * 2 + path_terms(path) + tokenize(body[:SYMBOL_TEXT_CAP_CHARS])


def body_of(lines: Sequence[str], start_line: int, end_line: int) -> str:
    """The lines ``start_line`` to ``end_line`` (1-based, inclusive) of a text split into
    ``lines``, joined by newlines."""
    start = max(start_line - 1, 0)
    return "\n".join(lines[start : max(end_line, start)])


def embed_head(path: str, qualname: str, signature: str, docstring: str) -> str:
    return f"{path} {qualname}\n{signature}\n{docstring}"


def file_embed_text(path: str, docstring: str, names: Iterable[str]) -> str:
    """A file reads as its path, its docstring and the names it defines at its top."""
    return f"{path}\n{docstring}\n{' '.join(names)}"[:EMBED_TEXT_CAP_CHARS]


def symbol_embed_text(head: str, body: str) -> str:
    """A symbol reads as its head (see :func:`embed_head`), then its body when room is
    left (``body`` may be cut anywhere past what fits)."""
    if len(head) < EMBED_TEXT_CAP_CHARS:
        head += "\n" + body
    return head[:EMBED_TEXT_CAP_CHARS]


def symbol_embed_key(head: str, start_line: int, end_line: int, of_file: bytes) -> bytes:
    """Names a symbol's embedding text; one that takes in its body, by its place in the
    text ``of_file`` names (the body itself is then not needed)."""
    if len(head) >= EMBED_TEXT_CAP_CHARS:
        return digest(head[:EMBED_TEXT_CAP_CHARS])
    return digest(f"{head}\0{start_line}\0{end_line}", b"body" + of_file)


def unit_rows(vectors: np.ndarray) -> np.ndarray:
    """Each row scaled to unit length (a zero row stays zero): how an index keeps rows."""
    unit: np.ndarray = vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
    return unit


@dataclass(frozen=True, slots=True)
class SymbolPlace:
    """What a symbol's documents are made of (a node of the graph has it all)."""

    id: str
    kind: str
    name: str
    qualname: str
    parent: str | None  # the enclosing symbol's id, None at the file's top
    start_line: int
    end_line: int
    signature: str
    docstring: str


@dataclass(frozen=True, slots=True)
class FileWork:
    """One file's documents and embedding texts, as an index makes them.

    ``document_keys[0]`` names the file's document, the others its symbols' documents
    (only classes, functions and methods have one), in symbol order. Document ``d``
    holds the terms ``terms[ids[k]]`` with counts ``counts[k]`` for ``k`` from the sum
    of ``lengths[:d]`` on, in the order they first occur in it. ``embedding_texts`` are
    the file's and then every symbol's, named by ``embedding_keys``."""

    path: str
    document_keys: tuple[bytes, ...]
    terms: tuple[str, ...]
    lengths: np.ndarray
    ids: np.ndarray
    counts: np.ndarray
    embedding_keys: tuple[bytes, ...]
    embedding_texts: tuple[str, ...]


def file_work(path: str, content_hash: str, text: str, symbols: Sequence[SymbolPlace]) -> FileWork:
    """The documents of the file at ``path`` whose whole text is ``text`` (the index's
    hash of it ``content_hash``) and which defines ``symbols``: bit for bit what a
    ranking index makes of the same nodes. Each line is tokenised once, however many
    symbols hold it."""
    text = text[:FILE_TEXT_CAP_CHARS]
    lines = text.splitlines()
    line_terms = _LineTerms(text, len(lines))
    # Where each line starts in the lines joined by newlines (a body's coordinates).
    starts = [0, *accumulate(map(operator.add, map(len, lines), repeat(1)))]
    of_file = file_key(path, content_hash, text)
    in_path = path_terms(path)
    documents: list[Counter[str]] = [Counter(chain(in_path, line_terms.of(0, len(lines))))]
    keys = [of_file]
    embedding_keys: list[bytes] = []
    embedding_texts: list[str] = []
    for s in symbols:
        first = max(s.start_line - 1, 0)
        last = max(s.end_line, first)
        if s.kind in DOCUMENT_KINDS:
            keys.append(symbol_key(s.qualname, path, s.start_line, s.end_line, of_file))
            named = tokenize(s.qualname)
            body = _capped_terms(lines, line_terms, starts, first, last)
            documents.append(Counter(chain(named, named, in_path, body)))
        head = embed_head(path, s.qualname, s.signature, s.docstring)
        embedding_keys.append(symbol_embed_key(head, s.start_line, s.end_line, of_file))
        room = EMBED_TEXT_CAP_CHARS - len(head) - 1
        embedding_texts.append(symbol_embed_text(head, _head_of(lines, first, last, room)))
    top = sorted((s.start_line, s.id, s.name) for s in symbols if s.parent is None)
    file_text = file_embed_text(path, "", (name for _, _, name in top))
    # The file's document holds nearly every term its symbols' documents hold.
    vocabulary = dict(zip(documents[0], count()))
    ids = list(range(len(vocabulary)))
    known = vocabulary.__getitem__
    for counted in documents[1:]:
        try:
            ids += list(map(known, counted))
        except KeyError:  # a name its (capped) text lacks: learn it, then take them all
            for term in counted:
                vocabulary.setdefault(term, len(vocabulary))
            ids += map(known, counted)
    return FileWork(
        path,
        tuple(keys),
        tuple(vocabulary),
        np.fromiter(map(len, documents), np.int32, len(documents)),
        np.asarray(ids, dtype=np.int32),
        np.fromiter(chain.from_iterable(d.values() for d in documents), np.int64, len(ids)),
        (digest(file_text), *embedding_keys),
        (file_text, *embedding_texts),
    )


class _LineTerms:
    """The terms of a text's lines, any run of lines on demand. A word never spans a line
    break, so a text's terms are its lines' terms in order: when ``\\n`` is its only
    line break, the whole text is blanked at once (see :func:`blank_runs`) and each
    line's runs of word characters found by ``str.split``, all in C."""

    def __init__(self, text: str, line_count: int) -> None:
        if _OTHER_BREAKS.search(text):
            self._terms: list[Sequence[str]] = [tokenize(line) for line in text.splitlines()]
            self._bounds: Sequence[int] = range(line_count + 1)
            return
        runs = list(map(str.split, blank_runs(text).split("\n")))
        self._terms = list(map(run_terms, chain.from_iterable(runs)))
        self._bounds = [0, *accumulate(map(len, runs))]  # where each line's runs start

    def of(self, first: int, last: int) -> Iterable[str]:
        """The terms of lines ``first`` to ``last`` (0-based, end excluded)."""
        bounds = self._bounds
        return chain.from_iterable(self._terms[bounds[first] : bounds[last]])


def _capped_terms(
    lines: Sequence[str],
    line_terms: _LineTerms,
    starts: list[int],
    first: int,
    last: int,
) -> Iterable[str]:
    """The terms of ``body_of`` lines ``first`` to ``last`` (0-based, end excluded) cut at
    :data:`SYMBOL_TEXT_CAP_CHARS`, from the terms of each line."""
    last = min(last, len(lines))
    if first >= last:
        return ()
    cut = starts[first] + SYMBOL_TEXT_CAP_CHARS  # in the joined lines' coordinates
    if starts[last] - 1 <= cut:  # the whole body fits
        return line_terms.of(first, last)
    whole = first
    while starts[whole + 1] - 1 <= cut:  # line ``whole`` ends before the cut
        whole += 1
    part = lines[whole][: max(cut - starts[whole], 0)]
    return chain(line_terms.of(first, whole), tokenize(part))


def _head_of(lines: Sequence[str], first: int, last: int, room: int) -> str:
    """At least the first ``room`` characters of lines ``first`` to ``last`` joined by
    newlines (all of them when shorter)."""
    if room <= 0:
        return ""
    taken: list[str] = []
    size = 0
    for line in lines[first:last]:
        taken.append(line)
        size += len(line) + 1
        if size > room:
            break
    return "\n".join(taken)


class DocumentMerger:
    """Joins many files' work, one file at a time as it comes, into the file documents
    and the symbol documents (in the order added) as the arrays an index keeps, over one
    vocabulary."""

    def __init__(self) -> None:
        self._vocabulary: dict[str, int] = {}
        self._keys: dict[bool, list[bytes]] = {True: [], False: []}
        self._parts: dict[bool, tuple[list[np.ndarray], list[np.ndarray], list[np.ndarray]]] = {
            True: ([], [], []),
            False: ([], [], []),
        }

    def add(self, work: FileWork) -> None:
        vocabulary = self._vocabulary
        terms = work.terms  # each once (a file's own vocabulary)
        # Its terms new to the vocabulary take the next ids in the order they come: what
        # a setdefault per term gives, with every lookup in C.
        new = list(filterfalse(vocabulary.__contains__, terms))
        vocabulary.update(zip(new, count(len(vocabulary))))
        remap = np.fromiter(map(vocabulary.__getitem__, terms), np.int64, len(terms))
        split = int(work.lengths[0]) if len(work.lengths) else 0
        self._keys[True].append(work.document_keys[0])
        self._keys[False].extend(work.document_keys[1:])
        for is_file, lengths, ids, counts in (
            (True, work.lengths[:1], work.ids[:split], work.counts[:split]),
            (False, work.lengths[1:], work.ids[split:], work.counts[split:]),
        ):
            sizes, all_ids, all_counts = self._parts[is_file]
            sizes.append(lengths)
            all_ids.append(remap[ids])
            all_counts.append(counts)

    def result(self) -> tuple[DocumentCounts, DocumentCounts]:
        """The file documents and the symbol documents of the work added so far."""
        terms = tuple(self._vocabulary)
        out = []
        for is_file in (True, False):
            keys = self._keys[is_file]
            sizes, all_ids, all_counts = self._parts[is_file]
            ptr = np.zeros(len(keys) + 1, dtype=np.int64)
            if sizes:
                np.cumsum(np.concatenate(sizes), out=ptr[1:])
            out.append(
                DocumentCounts(
                    tuple(keys),
                    terms,
                    ptr,
                    np.concatenate(all_ids).astype(np.int64) if all_ids else np.zeros(0, np.int64),
                    np.concatenate(all_counts).astype(np.int64)
                    if all_counts
                    else np.zeros(0, np.int64),
                )
            )
        return out[0], out[1]
