"""What a cold index run hands the first focus engine of its process.

A first focus on a repository never indexed used to index it, read the whole graph back
out of ``index.db``, then read every file again to count its terms and embed its code,
all in one process. Here the index workers, which hold each file's text as they parse it,
make its documents and embedding texts too (:func:`file_work`), of the very bytes they
parsed. Once parsing ends the pool is gone and resolution has both cores (see
:class:`~coderooms.index.indexer.ForkedShare`), while a forked child embeds the texts at the
lowest priority on whatever core is idle (:class:`RowsAside`); the engine asks for its rows
last. (Workers a fork server started embed each chunk's texts as they parse it instead:
:func:`worker_rows`.) The run's files, symbols and edges are kept in memory: the engine
takes all of it as :class:`~coderooms.focus.salience.KnownWork` and the workspace builds
the graph from the rows, equal to those it would read back.
"""

from __future__ import annotations

import contextlib
import mmap
import operator
import os
import signal
import tempfile
from collections.abc import Callable, Sequence
from typing import IO, Any

import numpy as np
import numpy.lib.format as npformat

from coderooms.errors import HostError
from coderooms.focus.documents import (
    DOCUMENT_KINDS,
    DocumentMerger,
    FileWork,
    SymbolPlace,
    unit_rows,
)
from coderooms.focus.documents import file_work as make_file_work
from coderooms.focus.salience import NO_KEY, Embedder, KnownWork
from coderooms.index.facts import FileFacts
from coderooms.index.forking import can_fork, fork_child

ASIDE_BATCH_TEXTS = 2_048
"""Texts embedded per call by a child making the rows aside (see :class:`RowsAside`):
sympy's 40,823 texts took 1.65 s of CPU in calls of 2,048 against 2.0 s in one call."""
ASIDE_NICENESS = 19
"""How much a child making the rows aside defers to the run's other processes: it takes
the core they leave idle (the run's single-core tail), not a share of resolution's."""
ASIDE_EXIT_FAILED = 3  # a child's exit status when making the rows raised

_PLACE = operator.attrgetter(*SymbolPlace.__slots__)  # a symbol's fact as its place
# A symbol's row as the graph reads it (see workspace._SYMBOL_ROW), between its path and
# its test flag and size.
_GRAPH_SYMBOL = operator.attrgetter(
    "start_line", "id", "kind", "name", "qualname", "parent", "end_line", "signature",
    "docstring", "content_hash",
)  # fmt: skip


def file_work(facts: FileFacts, data: bytes) -> FileWork:
    """The focus documents of a file just indexed as ``facts`` from its bytes ``data``
    (see :func:`~coderooms.index.extract.read_and_process`)."""
    symbols = [SymbolPlace(*_PLACE(s)) for s in facts.symbols]
    return make_file_work(facts.path, facts.content_hash, data.decode("utf-8", "replace"), symbols)


def unit_rows_in_worker(texts: list[str]) -> np.ndarray | None:
    """The unit rows an engine keeps for ``texts``, by the default embedder (run on an
    index worker); None when its model cannot load (the engine then says why)."""
    from coderooms import embeddings

    # Two workers embed at once on as many cores: the tokenizer's own threads would only
    # wait for each other (measured: a third more CPU for the same rows).
    os.environ["TOKENIZERS_PARALLELISM"] = "false"
    try:
        return unit_rows(np.asarray(embeddings.embed(texts)))
    except HostError:
        return None


def unit_rows_of(embedder: Embedder, texts: Sequence[str]) -> np.ndarray:
    """The unit rows of ``texts`` by ``embedder``, embedded :data:`ASIDE_BATCH_TEXTS` at a
    time (each row is its text's alone: the same bits however the texts are batched)."""
    parts = [
        unit_rows(np.asarray(embedder(texts[at : at + ASIDE_BATCH_TEXTS])))
        for at in range(0, len(texts), ASIDE_BATCH_TEXTS)
    ]
    return np.concatenate(parts)


class RowsAside:
    """The unit rows of some texts, made by a forked child of this process on the core
    the rest of a cold run leaves idle, while this process resolves, stores and builds
    the graph. The child writes them to an unlinked temporary file (it never waits for
    this process to read them) and exits; :meth:`rows` waits for it and reads them."""

    def __init__(self, pid: int, out: IO[bytes]) -> None:
        self._pid = pid  # 0 once reaped
        self._out = out

    @classmethod
    def start(cls, embedder: Embedder, texts: list[str]) -> RowsAside | None:
        """The child making the rows of ``texts``, or None when this process may not
        fork (another thread is alive) or no process or file could be had."""
        if not can_fork():
            return None
        try:
            out = tempfile.TemporaryFile()
        except OSError:
            return None

        def make() -> None:  # pragma: no cover - the child (see fork_child)
            os.nice(ASIDE_NICENESS)
            # One process embeds on the idle core: the tokenizer's own threads would only
            # take from the others (see unit_rows_in_worker).
            os.environ["TOKENIZERS_PARALLELISM"] = "false"
            np.save(out, unit_rows_of(embedder, texts), allow_pickle=False)
            out.flush()

        pid = fork_child(make, ASIDE_EXIT_FAILED)
        if pid is None:
            out.close()
            return None
        return cls(pid, out)

    def rows(self) -> np.ndarray | None:
        """The rows, once the child has made them, mapped read-only from its file (not
        copied: pages are read as ranking touches them); None when it failed (killed,
        out of memory, its model would not load): the caller makes them itself."""
        try:
            _, status = os.waitpid(self._pid, 0)
        except BaseException:
            self.close()
            raise
        self._pid = 0
        try:
            if os.waitstatus_to_exitcode(status) != 0:
                return None
            return _mapped_array(self._out)
        except (OSError, ValueError):  # a file cut short: made here instead
            return None
        finally:
            self._out.close()

    def close(self) -> None:
        """Stop the child if it still works (its rows are not wanted) and reap it."""
        if self._pid:
            with contextlib.suppress(OSError):
                os.kill(self._pid, signal.SIGKILL)
                os.waitpid(self._pid, 0)
            self._pid = 0
        self._out.close()


def _mapped_array(fh: IO[bytes]) -> np.ndarray:
    """The array :func:`numpy.save` wrote at the start of ``fh``, mapped read-only."""
    fh.seek(0)
    version = npformat.read_magic(fh)
    if version == (1, 0):
        shape, fortran, dtype = npformat.read_array_header_1_0(fh)
    elif version == (2, 0):
        shape, fortran, dtype = npformat.read_array_header_2_0(fh)
    else:
        raise ValueError(f"an array file of version {version}")
    if fortran or dtype.hasobject:
        raise ValueError("an array of another layout")
    count = int(np.prod(shape, dtype=np.int64))
    if count == 0:
        return np.zeros(shape, dtype=dtype)
    mapped = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)  # its own descriptor
    return np.frombuffer(mapped, dtype=dtype, count=count, offset=fh.tell()).reshape(shape)


RowsTask = Callable[[list[str]], "np.ndarray | None"]
"""The unit rows of some texts, made on an index worker (None: the model cannot load)."""


def worker_rows(task: RowsTask, works: Sequence[FileWork | None]) -> list[np.ndarray | None]:
    """On an index worker: the unit rows of each work's embedding texts, embedded by
    ``task`` in one call for the whole chunk (None for a file without work, and for
    every file when the model cannot load)."""
    texts = [text for work in works if work is not None for text in work.embedding_texts]
    rows = task(texts) if texts else None
    out: list[np.ndarray | None] = []
    at = 0
    for work in works:
        if work is None or rows is None:
            out.append(None)
            continue
        count = len(work.embedding_texts)
        out.append(rows[at : at + count])
        at += count
    return out


class FirstBuild:
    """Collects a cold run's work for the first engine: each file's documents as the
    workers send them, with their embedding rows (made by the workers as they parse,
    see :meth:`in_workers`, else here when first asked for), then the rows of the graph
    (see :meth:`finish`).

    ``embedder`` gives the embedder the engine will embed with, and ``remote`` the same
    embedder's rows as a task for a worker (see :func:`unit_rows_in_worker`); ``warm``
    is called when parsing starts (see :meth:`parsing`). When the model cannot load (a
    :class:`HostError`, or None from ``remote``), the rows are left to the engine, whose
    embedder then says why."""

    def __init__(
        self,
        embedder: Callable[[], Embedder] | None,
        remote: RowsTask | None = None,
        warm: Callable[[], None] | None = None,
    ) -> None:
        self._load = embedder
        self._remote = remote
        self._warm = warm
        self._embedder: Embedder | None = None
        self._by_workers = False  # every work comes with its rows (see in_workers)
        self.works: list[FileWork] = []
        self._documents = DocumentMerger()  # joined as the works come, while workers parse
        self._row_of: dict[str, int] = {}  # embedding text -> its row
        self._pending: list[str] = []  # texts with a row number, not embedded yet
        self._vectors: list[np.ndarray] = []
        self._embedding_rows: list[int] = []  # per embedding key, in works' order (not
        # kept when the workers embed: their rows come in that order already)
        # The files, symbols and edges of the committed run, as the index holds them.
        self.rows: tuple[list[tuple[Any, ...]], ...] | None = None
        self.generation = ""
        self._files: dict[str, FileFacts] = {}  # the committed run's, by path
        self._aside: RowsAside | None = None  # the child making the pending texts' rows

    def prepare(self) -> None:
        """Load the embedder now (a worker forked afterwards has it loaded too)."""
        if self._load is None or self._embedder is not None:
            return
        try:
            self._embedder = self._load()
        except HostError:
            self._load = self._remote = None  # the engine embeds, and its embedder says why

    def parsing(self) -> None:
        """The run parses now, its workers (if any) forked: ``warm`` starts loading what
        else the first engine needs on a thread of its own, while this process mostly
        waits for the workers (instead of after the index, on the engine's way)."""
        warm, self._warm = self._warm, None
        if warm is not None:
            warm()

    def in_workers(self) -> RowsTask | None:
        """The task the parse workers embed each chunk's texts with (see
        :func:`worker_rows`), when there is one and the model loaded here: every work
        then comes to :meth:`add` with its rows."""
        if self._remote is None or self._load is None or self._embedder is None:
            return None
        self._by_workers = True
        return self._remote

    def embed_aside(self) -> None:
        """Parsing is over and its workers are gone: the texts left to embed (the
        workers made none, see :meth:`in_workers`) are embedded by a forked child on
        the core the rest of the run leaves idle (see :class:`RowsAside`), while this
        process resolves, stores and builds the graph; the engine waits for them last
        (see :attr:`KnownWork.later`). Without a child they are embedded here, when
        the engine asks. Measured on sympy: the parse ends about a second sooner."""
        # The embedder was loaded before the workers forked (see prepare), or not at all.
        if self._by_workers or not self._pending or self._embedder is None or self._aside:
            return
        # Every key's text, in the works' order (a text held twice is embedded twice: 82
        # of sympy's 40,905): its rows are then the table, with no rows to gather.
        texts = [text for work in self.works for text in work.embedding_texts]
        self._aside = RowsAside.start(self._embedder, texts)

    def close(self) -> None:
        """Stop the child making rows aside, if any, when its rows are not wanted."""
        aside, self._aside = self._aside, None
        if aside is not None:
            aside.close()

    def add(self, work: FileWork | None, rows: np.ndarray | None = None) -> None:
        """``work``, with its embedding rows when a worker made them."""
        if work is None:  # unreadable now: the engine counts that file itself
            return
        self.works.append(work)
        self._documents.add(work)
        if self._by_workers:
            if rows is None:  # the worker's model did not load: its embedder says why
                self._load = None
            elif self._load is not None:
                self._vectors.append(rows)  # one row per key, in the works' order
            return
        row_of = self._row_of
        for text in work.embedding_texts:
            row = row_of.get(text)
            if row is None:
                row = row_of[text] = len(row_of)
                self._pending.append(text)
            self._embedding_rows.append(row)

    def _embed_pending(self) -> None:
        if self._load is None or not self._pending:
            return
        try:
            if self._embedder is None:
                self._embedder = self._load()
            made = unit_rows_of(self._embedder, self._pending)
        except HostError:
            self._load = None  # the engine embeds, and its embedder says why
            return
        self._vectors.append(made)
        self._pending = []

    def finish(
        self,
        generation: str,
        files: Sequence[FileFacts],
        edges: Sequence[tuple[str, Sequence[tuple[str, str, str, float, str]], object]],
    ) -> None:
        """The run committed ``generation``: keep the rows of its ``files`` (with their
        symbols) and its ``edges`` (per file, as the indexer stores them)."""
        self.generation = generation
        self._files = {f.path: f for f in files}
        self.rows = (
            [
                (
                    f.path,
                    f.language,
                    f.lines,
                    f.content_hash,
                    f.size,
                    int(f.is_test),
                    int(f.is_generated),
                    int(f.is_vendored),
                )
                for f in files
            ],
            [
                (f.path, *_GRAPH_SYMBOL(s), int(s.is_test), s.size_bytes)
                for f in files
                for s in f.symbols
            ],
            [
                (src, kind, dst, float(weight), origin)
                for _, rows, _ in edges
                for src, dst, kind, weight, origin in rows
            ],
        )

    def known_work(self) -> KnownWork:
        """The documents of every file handed in, and their embedding rows when every
        text could be embedded."""
        file_documents, symbol_documents = self._documents.result()
        told = self._node_keys()
        keys = tuple(key for work in self.works for key in work.embedding_keys)
        if self._aside is not None and keys:  # waited for once the engine needs them
            return KnownWork(
                file_documents, symbol_documents, keys, node_keys=told, later=self._rows
            )
        rows = self._rows()
        if rows is None or not keys:
            return KnownWork(file_documents, symbol_documents, node_keys=told)
        return KnownWork(file_documents, symbol_documents, keys, rows, node_keys=told)

    def _rows(self) -> np.ndarray | None:
        """One row per embedding key, in the works' order (None: the model cannot load)."""
        aside, self._aside = self._aside, None
        made = aside.rows() if aside is not None and self._load is not None else None
        if aside is not None:
            aside.close()
        if made is not None:  # the child's rows, made in the works' order
            return made
        self._embed_pending()
        if self._load is None or self._pending or not self._vectors:
            return None
        table = np.concatenate(self._vectors)
        # Rows the workers made come in the works' order, one per key: the table is them.
        if self._by_workers:
            return table
        return table[np.asarray(self._embedding_rows, dtype=np.int64)]

    def _node_keys(self) -> dict[str, tuple[bytes, bytes]]:
        """Per node of the committed run's files and symbols (by id), the keys the
        workers made of its document and embedding text (see :attr:`KnownWork.node_keys`):
        the engine over the graph of those rows need not hash 40,905 nodes again on sympy
        (about a quarter of a second). A file without work (unreadable) is left out."""
        told: dict[str, tuple[bytes, bytes]] = {}
        for work in self.works:
            facts = self._files.get(work.path)
            if facts is None or len(facts.symbols) + 1 != len(work.embedding_keys):
                continue
            documents = iter(work.document_keys[1:])
            told[work.path] = (work.document_keys[0], work.embedding_keys[0])
            for symbol, key in zip(facts.symbols, work.embedding_keys[1:], strict=True):
                document = next(documents) if symbol.kind in DOCUMENT_KINDS else NO_KEY
                told[symbol.id] = (document, key)
        return told
