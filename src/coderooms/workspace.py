"""A repository on disk with its code index: the Python face of ``coderooms index``.

``Workspace.open(path)`` checks the directory; ``.index()`` brings
``.coderooms/index.db`` up to date; ``.graph()`` hands the focus runtime the whole
code graph (cached until the index changes).
"""

from __future__ import annotations

import bisect
import contextlib
import errno
import gc
import marshal
import mmap
import os
import sqlite3
import struct
import sys
import threading
import weakref
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import partial
from itertools import compress
from operator import itemgetter
from stat import S_ISREG
from typing import TYPE_CHECKING, Any, TypeVar, overload

from coderooms.datadir import make_dirs, replaced_whole
from coderooms.errors import WrongArgumentType, require_str
from coderooms.focus.errors import TargetNotIndexed, UnknownTarget
from coderooms.focus.graph import (
    CodeEdge,
    CodeGraph,
    CodeNode,
    DeferredEdges,
    EdgeColumns,
    EdgePatch,
    FileSignals,
    NodeTable,
    TakenNodes,
)
from coderooms.focus.impact import ImpactResult
from coderooms.focus.impact import impact as blast_radius
from coderooms.focus.runtime import (
    DEFAULT_BUDGET,
    DEFAULT_SEEK_LIMIT,
    Discussed,
    FocusEngine,
    FocusResult,
    SeekResult,
    with_unindexed,
)
from coderooms.focus.salience import Embedder, KnownWork, Report
from coderooms.focus.session import SessionFocus, focus_in_session
from coderooms.focus.text import goal_cues
from coderooms.focus.workingset import WorkingSet
from coderooms.heap import heap_frozen
from coderooms.index import db, focus_state
from coderooms.index.discover import INDEX_DIR, INDEX_FILE, Listing, change_mark
from coderooms.index.errors import (
    IndexDirectoryUnwritable,
    NotIndexed,
    UnknownNode,
    WorkspaceNotADirectory,
    WorkspaceNotFound,
    WorkspacePathNotUtf8,
    WorkspaceUnreadable,
)
from coderooms.index.summary import IndexSummary

if TYPE_CHECKING:  # the cold run's handover: loaded only to index (with the indexer)
    from coderooms.index.handover import FirstBuild

GRAPH_CACHE_FILE = "graph.cache"  # the graph as marshalled rows, keyed on the index generation
GRAPH_CACHE_VERSION = 6
GRAPH_DELTA_FILE = "graph.delta"  # the files changed since the cached generation
_CACHE_HEAD_SIZE = struct.Struct("<I")  # the length of the cache's head (key, generation)
STAMP_FILE = "stamp.bin"  # the stamp of the last indexing run, for the next process's check
STAMP_VERSION = 1
MAX_UNSAVED_WORK = 2_000  # documents and rows counted or embedded before focus.npz is rewritten
MAX_PATCHED_PATHS = 400
"""A run that changed more files than this reads the graph whole; a graph delta naming
more than this many files is folded into a rewritten graph.cache."""
GRAPH_PHASE = "reading the code graph"
HANDED_GRAPH_PHASE = "building the code graph"  # from the rows a cold run kept
HANDED_ENGINE_PHASE = "building the focus index"  # from the work a cold run did
GIT_HEAD_FILES = ("HEAD", os.path.join("logs", "HEAD"))  # moved by commits and checkouts
IGNORE_FILE = ".gitignore"  # an edit to one changes which files are listed

__all__ = ["Workspace", "NodeEdges", "INDEX_FILE", "LEFT_OUT_DEPTH"]

LEFT_OUT_DEPTH = 64
"""How many of a named path's directories are looked up as a submodule holding it (a
goal's path longer than that is looked up as itself and its nearest directories)."""

_Run = TypeVar("_Run")  # what an indexer run answers


@dataclass(frozen=True, slots=True)
class _Stamp:
    """What the index was built from, as the disk showed it: the size and change mark
    (see :func:`change_mark`) of each file it indexed or skipped, the change mark of every
    directory holding one (a file added or removed there moves it) and of git's HEAD and
    its log, and which index.db file the connection has open."""

    files: tuple[tuple[str, int, int], ...]
    dirs: tuple[tuple[str, int], ...]
    database: tuple[int, int]

    def is_current(self, db_path: str) -> bool:
        return self.moved_files(db_path) == []

    def moved_files(self, db_path: str) -> list[tuple[int, os.stat_result]] | None:
        """The files whose size or change mark moved since the stamp was taken, by their
        place in :attr:`files`, with their status now: empty when the index is current;
        None when more than that moved (index.db replaced, a directory or git's HEAD
        moved, a file gone or unreadable: then the root must be listed again)."""
        lstat, stat = os.lstat, os.stat
        moved: list[tuple[int, os.stat_result]] = []
        try:
            st = stat(db_path)
            if (st.st_dev, st.st_ino) != self.database:
                return None
            for at, (path, size, mtime) in enumerate(self.files):
                st = lstat(path)
                if change_mark(st) != mtime or st.st_size != size:
                    moved.append((at, st))
            for path, mtime in self.dirs:
                try:
                    now = change_mark(stat(path))
                except FileNotFoundError:
                    now = -1  # gone (or, like a git log not yet written, never there)
                if now != mtime:
                    return None
        except OSError:
            return None
        return moved

    def with_moved(self, moved: list[tuple[int, os.stat_result]]) -> _Stamp:
        """This stamp with the files in ``moved`` (see :meth:`moved_files`) as they are
        now: what a new stamp of an index run over them reads back (each file's size and
        mark as listed), its directories as they were checked before the run."""
        files = list(self.files)
        for at, st in moved:
            files[at] = (files[at][0], st.st_size, change_mark(st))
        return _Stamp(tuple(files), self.dirs, self.database)


@dataclass(frozen=True, slots=True)
class NodeEdges:
    node: CodeNode
    outgoing: tuple[CodeEdge, ...]
    incoming: tuple[CodeEdge, ...]


def _file_id(path: str) -> tuple[int, int]:
    """(device, inode) of ``path``, or (-1, -1) when it is gone."""
    try:
        st = os.stat(path)
    except OSError:
        return (-1, -1)
    return (st.st_dev, st.st_ino)


class Workspace:
    """One repository root and its index database."""

    def __init__(self, root: str) -> None:
        self.root = root
        self.db_path = os.path.join(root, INDEX_DIR, INDEX_FILE)
        self._conn: sqlite3.Connection | None = None
        self._lock = threading.RLock()
        self._graph: tuple[str, CodeGraph] | None = None
        self._rows: tuple[str, GraphRows] | None = None  # what self._graph was made of
        self._on_disk: _DiskGraph | None = None  # what graph.cache and graph.delta hold
        self._base: tuple[str, CodeGraph] | None = None  # the graph patched from, from disk
        self._built_on_disk: tuple[str, tuple[int, int, int]] | None = None  # its generation
        self._engine: tuple[CodeGraph, FocusEngine] | None = None
        self._unsaved = 0  # work done by engines built since focus.npz was last written
        self._stamp: _Stamp | None = None
        # The listing (files and HEAD commit) of the run the stamp was taken after.
        self._listed: tuple[_Stamp, tuple[Listing, str]] | None = None
        self._warming: threading.Thread | None = None
        self._models = threading.Event()  # set once the embedding model is loaded
        self._handed: FirstBuild | None = None  # a cold run's work, for the first engine
        # Write what is kept beside the index for the next process (focus.npz, the built
        # index, graph.cache) on a thread while this one answers: for a one-shot command,
        # whose process ends with them written (see :meth:`_keep`).
        self.keep_aside = False
        self._keeping: threading.Thread | None = None
        # Told of long work (indexing, counting, embedding) by a surface that shows it.
        self.report: Report | None = None

    @classmethod
    def open(cls, path: str | os.PathLike[str]) -> Workspace:
        if not isinstance(path, str | bytes | os.PathLike):
            raise WrongArgumentType("the repository path", "a str or a path", type(path).__name__)
        root = os.path.abspath(os.fsdecode(path))
        try:
            root.encode("utf-8")  # stored as text in index.db
        except UnicodeEncodeError:
            raise WorkspacePathNotUtf8(
                os.fsencode(root).decode("utf-8", "backslashreplace")
            ) from None
        _require_root(root)
        return cls(root)

    # --- database ---------------------------------------------------------------------

    def _connection(self, create: bool) -> sqlite3.Connection:
        if self._conn is not None:
            return self._conn
        if not os.path.exists(self.db_path):
            if not create:
                raise NotIndexed(self.root)
            _index_dir(os.path.dirname(self.db_path))
        self._conn = db.connect(self.db_path)
        return self._conn

    def close(self) -> None:
        self._kept()
        with self._lock:
            if self._handed is not None:  # a cold run's work no engine took
                self._handed.close()
                self._handed = None
            if self._conn is not None:
                self._conn.close()
                self._conn = None
        db.wait_for_checkpoints(self.db_path)  # a cold run's log copy (see db)

    def __enter__(self) -> Workspace:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    # --- indexing ---------------------------------------------------------------------

    def index(
        self, progress: bool = False, workers: int | None = None, prepare_focus: bool = False
    ) -> IndexSummary:
        """Bring the index up to date; only changed files are parsed again. Long work
        is told to :attr:`report`; with ``progress`` and no report set, each phase is a
        line on stderr. With ``prepare_focus``, a cold run also makes, on its workers,
        what the first focus engine needs (see :mod:`coderooms.index.handover`)."""
        from coderooms.index import indexer  # the parsers: not loaded to answer from an index

        return self._update(indexer.run, progress, workers, prepare_focus)

    def _update(
        self,
        run: Callable[..., _Run],
        progress: bool = False,
        workers: int | None = None,
        prepare_focus: bool = False,
        moved: tuple[_Stamp, list[tuple[int, os.stat_result]]] | None = None,
    ) -> _Run:
        """One indexer run by ``run`` (:func:`indexer.run` or :func:`indexer.update`),
        with the stamp of what it indexed kept (see :meth:`index`). ``moved``, a stamp
        and the files moved since it was taken (nothing else: see
        :meth:`_Stamp.moved_files`), lets :func:`indexer.update` skip listing the root
        when this process kept the listing that stamp was taken after."""
        from coderooms.index.handover import FirstBuild, unit_rows_in_worker
        from coderooms.index.indexer import RunDone

        report = self.report
        if report is None and progress:
            report = _PhaseLines()
        with self._lock:
            _require_root(self.root)  # it may have gone since the workspace was opened
            conn = self._connection(create=True)
            handing = (
                FirstBuild(_embedder, unit_rows_in_worker, self._warm) if prepare_focus else None
            )
            listed = self._listed_now(*moved) if moved is not None else None
            known = {"listed": listed} if listed is not None else {}
            try:
                done = run(
                    self.root, conn, progress=report, workers=workers, first_build=handing, **known
                )
                if listed is not None and moved is not None:
                    self._stamp = moved[0].with_moved(moved[1])
                else:
                    self._stamp = self._take_stamp(conn)
                generation = db.get_meta(conn, "generation", "")
            except sqlite3.DatabaseError as exc:
                raise db.database_error(self.db_path, exc) from exc
            if handing is not None and handing.rows is not None:
                if self._handed is not None:  # an earlier run's, for a graph there is no more
                    self._handed.close()
                self._handed = handing
            else:
                if handing is not None:
                    handing.close()
                if self._handed is not None and self._handed.generation != generation:
                    self._handed.close()  # for a graph there is no more
                    self._handed = None
            # What an update listed (a whole run answers its summary): for the next update.
            self._listed = (self._stamp, done.listed) if isinstance(done, RunDone) else None
            _write_stamp(self._state_path(STAMP_FILE), self.root, generation, self._stamp)
            return done

    def refresh(self, prepare_focus: bool = True) -> bool:
        """Index again when the disk no longer matches what the index was built from (a
        file edited, added or removed, or index.db replaced), and say whether it did.
        Checking costs one ``stat`` per indexed file and directory; focus, seek and impact
        do it first, so they never answer from code that has changed since. A cold run
        makes the first focus engine's work too unless ``prepare_focus`` is false."""
        stamp = self._stamp
        if stamp is None:  # a new process: the stamp the last run kept, if it is this index's
            stamp = self._stamp = self._kept_stamp()
        moved = stamp.moved_files(self.db_path) if stamp is not None else None
        if moved is not None and not moved:
            return False
        with self._lock:
            if stamp is not None and stamp.database != _file_id(self.db_path):
                self.close()  # index.db was deleted or replaced: open the one there now
            from coderooms.index import indexer

            # No one to summarize to; only files moved: the run may take the last listing.
            since = (stamp, moved) if stamp is not None and moved is not None else None
            self._update(indexer.update, prepare_focus=prepare_focus, moved=since)
        return True

    def _listed_now(
        self, stamp: _Stamp, moved: list[tuple[int, os.stat_result]]
    ) -> tuple[Listing, str] | None:
        """The listing and HEAD commit of the root now, from those of the run ``stamp``
        was taken after, when that run was this process's last and only the files in
        ``moved`` have moved since (no directory, no HEAD), each still a regular file and
        none a ``.gitignore`` (which changes what is listed); else None (listed again)."""
        kept = self._listed
        if kept is None or kept[0] is not stamp:
            return None
        listing, head = kept[1]
        files = dict(listing.files)
        skip = len(self.root) + 1
        for at, st in moved:
            rel = stamp.files[at][0][skip:]
            if not S_ISREG(st.st_mode) or rel not in files or rel.endswith(IGNORE_FILE):
                return None
            files[rel] = (st.st_size, change_mark(st))
        return Listing(files, listing.skipped, listing.git), head

    def _kept_stamp(self) -> _Stamp | None:
        """The stamp kept by the last indexing run of this root when it was taken of the
        index generation index.db holds now; else None (the indexer then checks)."""
        kept = _read_stamp(self._state_path(STAMP_FILE), self.root)
        if kept is None or not os.path.exists(self.db_path):
            return None
        generation, stamp = kept
        try:
            with self._lock:
                current = db.get_meta(self._connection(create=False), "generation", "")
        except sqlite3.DatabaseError:
            return None  # the indexer says what is wrong with it
        return stamp if generation and current == generation else None

    def _take_stamp(self, conn: sqlite3.Connection) -> _Stamp:
        files: list[tuple[str, int, int]] = []
        dirs = {self.root}
        # Skipped files count too: an image or an oversized file edited into something
        # indexable, a .gitignore changed, a file added beside them.
        listed = conn.execute(
            "SELECT path, size, mtime_ns FROM files "
            "UNION ALL SELECT path, size, mtime_ns FROM skipped"
        )
        for path, size, mtime in listed:
            full = os.path.join(self.root, path)
            if mtime > 0:  # skipped before it was read (a symlink): its directory only
                files.append((full, size, mtime))
            parent = os.path.dirname(full)
            while parent not in dirs and len(parent) > len(self.root):
                dirs.add(parent)
                parent = os.path.dirname(parent)
        # A commit, checkout or reset moves the git signals (HEAD and its log).
        git = os.path.join(self.root, ".git")
        if os.path.isdir(git):
            dirs.update(os.path.join(git, name) for name in GIT_HEAD_FILES)
        stamped: list[tuple[str, int]] = []
        for path in sorted(dirs):
            try:
                stamped.append((path, change_mark(os.stat(path))))
            except OSError:
                stamped.append((path, -1))  # gone already: the next check re-indexes
        return _Stamp(tuple(files), tuple(stamped), _file_id(self.db_path))

    @contextlib.contextmanager
    def _reading(self) -> Iterator[sqlite3.Connection]:
        """The database under the lock; a damaged or foreign index.db is a typed error."""
        with self._lock:
            conn = self._connection(create=False)
            try:
                yield conn
            except sqlite3.DatabaseError as exc:
                raise db.database_error(self.db_path, exc) from exc

    def summary(self) -> IndexSummary:
        """The state of the index as last written, without running the indexer."""
        from coderooms.index import indexer

        with self._reading() as conn:
            return indexer.summarize(conn, self.root, bool(db.get_meta(conn, "head")), 0.0, {})

    def generation(self) -> str:
        with self._reading() as conn:
            return db.get_meta(conn, "generation", "0")

    # --- the graph --------------------------------------------------------------------

    def graph(self) -> CodeGraph:
        """The whole code graph; the same object until the index changes."""
        with self._reading() as conn:
            generation = db.get_meta(conn, "generation", "")
            if not generation:
                raise NotIndexed(self.root)
            if self._graph is not None and self._graph[0] == generation:
                return self._graph[1]
            self._kept()  # the kept graph files are written by one thread at a time
            cache = os.path.join(os.path.dirname(self.db_path), GRAPH_CACHE_FILE)
            with _without_cyclic_gc():
                graph, rows = self._handed_graph(conn, cache, generation) or self._read_graph(
                    conn, cache, generation
                )
            self._graph = (generation, graph)
            self._rows = (generation, rows)
            return graph

    def _read_graph(
        self, conn: sqlite3.Connection, cache: str, generation: str
    ) -> tuple[CodeGraph, GraphRows]:
        """The graph of ``generation`` and its rows: from the cache when it holds them,
        else rows held or cached for an earlier generation patched with the files changed
        since (see :class:`db.GenerationDelta` and :func:`_read_graph_delta`), else all
        read from the database. What changed is kept as a small delta beside the cache
        (the cache itself is rewritten only past :data:`MAX_PATCHED_PATHS`)."""
        kept = _read_cache(cache, generation)
        if kept is not None:
            self._on_disk = _DiskGraph(generation, generation, frozenset(), _file_mark(cache))
            return _build_graph(kept), kept
        own = not conn.in_transaction
        report, files = self.report, 0
        if own:
            conn.execute("BEGIN")  # one snapshot: the delta and the rows it patches agree
        try:
            delta = db.GenerationDelta.read(conn)
            if delta is not None and not (
                delta.after == generation == db.get_meta(conn, "generation")
                and len(delta.paths) <= MAX_PATCHED_PATHS
            ):
                delta = None
            held = self._rows if delta is not None else None
            before = held[1] if held and delta and held[0] == delta.before else None
            on_disk = self._on_disk
            if before is not None and delta is not None:
                paths = frozenset(delta.paths)
                rows, patch = _patched_rows(conn, before, paths)
                old = self._graph[1] if self._graph and self._graph[0] == delta.before else None
                graph = _build_graph(rows, old, paths, patch, before if old else None)
                if (
                    on_disk is not None
                    and on_disk.after == delta.before
                    and on_disk.mark == _file_mark(cache)
                ):
                    on_disk = replace(on_disk, after=generation, paths=on_disk.paths | paths)
                else:
                    on_disk = None
            else:
                on_disk = self._disk_basis(cache, generation, delta)
                mark = _file_mark(cache)
                base = _read_cache(cache, on_disk.base) if on_disk is not None else None
                if on_disk is not None and base is not None:
                    # The graph of the cached generation first: the graph patched from it
                    # takes its nodes, and an engine kept for it lends its work by row.
                    base_graph = _build_graph(base)
                    rows, patch = _patched_rows(conn, base, on_disk.paths)
                    graph = _build_graph(rows, base_graph, on_disk.paths, patch, base)
                    on_disk = replace(on_disk, mark=mark)
                    self._base = (on_disk.base, base_graph)
                else:  # read whole: long on a large repository, so it is told of
                    if report is not None:
                        (files,) = conn.execute("SELECT COUNT(*) FROM files").fetchone()
                        report(GRAPH_PHASE, 0, files)
                    rows = _graph_rows(conn)
                    graph = _build_graph(rows)
                    on_disk = None
        finally:
            if own:
                conn.execute("COMMIT")
        delta_path = os.path.join(os.path.dirname(cache), GRAPH_DELTA_FILE)
        if on_disk is not None and len(on_disk.paths) <= MAX_PATCHED_PATHS:
            _write_graph_delta(delta_path, on_disk)
        else:
            _write_cache(cache, generation, rows)
            on_disk = _DiskGraph(generation, generation, frozenset(), _file_mark(cache))
        self._on_disk = on_disk
        if files and report is not None:
            report(GRAPH_PHASE, files, files)
        return graph, rows

    def _disk_basis(
        self, cache: str, generation: str, delta: db.GenerationDelta | None
    ) -> _DiskGraph | None:
        """Where the kept files say ``generation``'s rows come from: the cached rows of a
        base generation and the files changed since, from the graph delta beside the
        cache and the last run's delta; None when they do not reach ``generation``."""
        kept = _read_graph_delta(os.path.join(os.path.dirname(cache), GRAPH_DELTA_FILE))
        if kept is not None and kept.after == generation:
            return kept
        if delta is None:
            return None
        if kept is not None and kept.after == delta.before:
            return _DiskGraph(kept.base, generation, kept.paths | frozenset(delta.paths))
        return _DiskGraph(delta.before, generation, frozenset(delta.paths))

    def _handed_graph(
        self, conn: sqlite3.Connection, cache: str, generation: str
    ) -> tuple[CodeGraph, GraphRows] | None:
        """The graph of ``generation`` from the rows the cold run that made it handed
        over (equal to those :func:`_graph_rows` reads), or None."""
        handed = self._handed
        if handed is None or handed.rows is None or handed.generation != generation:
            return None
        files, symbols, edges = handed.rows
        handed.rows = None  # the engine takes the rest; the graph keeps its own
        if self.report is not None:
            self.report(HANDED_GRAPH_PHASE, 0, len(files))
        rows: GraphRows = (sorted(files), sorted(symbols), _edge_bytes(edges), *_git_rows(conn))
        _write_cache(cache, generation, rows)
        self._on_disk = _DiskGraph(generation, generation, frozenset(), _file_mark(cache))
        graph = _build_graph(rows)
        if self.report is not None:
            self.report(HANDED_GRAPH_PHASE, len(files), len(files))
        return graph, rows

    def node(self, node_id: str) -> CodeNode:
        found = self.graph().node(node_id)
        if found is None:
            raise UnknownNode(node_id)
        return found

    def edges_of(self, node_id: str) -> NodeEdges:
        """A node with its edges in and out (read from the database, not the graph)."""
        node = self.node(node_id)
        with self._reading() as conn:
            out = tuple(
                CodeEdge(s, d, k, w)
                for s, d, k, w in conn.execute(
                    "SELECT src, dst, kind, weight FROM edges WHERE src = ? ORDER BY kind, dst",
                    (node_id,),
                )
            )
            inc = tuple(
                CodeEdge(s, d, k, w)
                for s, d, k, w in conn.execute(
                    "SELECT src, dst, kind, weight FROM edges WHERE dst = ? ORDER BY kind, src",
                    (node_id,),
                )
            )
            if node.kind == "file":
                co = conn.execute(
                    "SELECT a, b, count FROM co_changes WHERE a = ? OR b = ? ORDER BY count DESC, a, b",
                    (node_id, node_id),
                ).fetchall()
                out += tuple(
                    CodeEdge(node_id, b if a == node_id else a, "co_change", float(n))
                    for a, b, n in co
                )
        return NodeEdges(node, out, inc)

    # --- source text ------------------------------------------------------------------

    def read_text(self, path: str) -> str:
        """A file's text, decoded as the indexer decodes it (invalid UTF-8 replaced)."""
        full = self._inside(path)
        try:
            with open(full, "rb") as fh:
                return fh.read().decode("utf-8", "replace")
        except OSError as exc:
            raise WorkspaceUnreadable(full, exc.strerror or str(exc)) from exc

    def source_of(self, node_id: str) -> str:
        """The lines of a symbol (or the whole file for a file id)."""
        node = self.node(node_id)
        text = self.read_text(node.path)
        if node.kind == "file":
            return text
        lines = text.splitlines(keepends=True)
        return "".join(lines[node.start_line - 1 : node.end_line])

    # --- focus (the runtime lives in coderooms.focus.runtime) ----------------------------

    def focus_engine(self) -> FocusEngine:
        """The focus runtime over the current graph, built once per index generation.

        It starts from the engine of the previous generation when this process has one,
        else from the work kept in ``.coderooms/focus.npz`` (see
        :mod:`coderooms.index.focus_state`), so only code that changed is tokenised and
        embedded again; what it had to compute is kept there for the next process."""
        self._warm()
        with self._lock:
            graph = self.graph()
            if self._engine is not None and self._engine[0] is graph:
                return self._engine[1]
            with _without_cyclic_gc():
                return self._new_engine(graph)

    def _new_engine(self, graph: CodeGraph) -> FocusEngine:
        """The engine of ``graph`` (see :meth:`focus_engine`), kept for the next call."""
        from coderooms import embeddings, tokens

        self._kept()  # what an earlier engine kept is on disk: this one may read it
        previous = self._engine[1] if self._engine is not None else None
        state = self._state_path(focus_state.STATE_FILE)
        tag = self._state_tag()
        built_path = self._state_path(focus_state.BUILT_FILE)
        generation = self._graph[0] if self._graph else ""
        built_key = focus_state.built_key(tag, generation)
        engine = (
            self._restored(graph, state, tag, built_path, built_key) if previous is None else None
        )
        if engine is not None:
            self._built_on_disk = (generation, _file_mark(built_path))
        base, self._base = self._base, None
        if engine is None and previous is None and base is not None:
            # A new process after an edit: the built index of the generation the graph was
            # patched from, restored over that generation's graph, lends its work by row.
            base_key = focus_state.built_key(tag, base[0])
            previous = self._restored(base[1], state, tag, built_path, base_key)
            if previous is not None:
                self._built_on_disk = (base[0], _file_mark(built_path))
        handed, self._handed = self._handed, None
        if handed is not None and (engine is not None or handed.generation != generation):
            handed.close()  # restored from disk, or for another graph: its work is unwanted
            handed = None
        if engine is None:
            lived = self._engine is not None  # an engine of this process's before
            known = None
            if previous is None and handed is not None:
                if self.report is not None:
                    self.report(HANDED_ENGINE_PHASE, 0, 1)
                known = handed.known_work()  # this run's own work: all of the graph's code
                self._unsaved += 1  # kept in focus.npz for the next process's edits
            elif previous is None:
                known = focus_state.load(state, tag)
            if known is not None:
                counted = self._state_path(focus_state.TOKENS_FILE)
                known = replace(known, token_counts=focus_state.load_token_counts(counted, tag))
            try:
                engine = FocusEngine.from_reader(
                    graph,
                    self,
                    tokens.COUNTER,
                    embeddings.embed,
                    previous=previous,
                    known=known,
                    report=self.report,
                )
            finally:
                if handed is not None:
                    handed.close()  # the rows it made aside are the engine's, or unwanted
            # An engine built on this process's previous one keeps its new work in memory
            # until there is much of it: writing focus.npz (tens of MB on a large
            # repository) on every edit would cost more than the edit's own work.
            self._unsaved += engine.index.fresh_work
            writes: list[Callable[[], None]] = []
            if self._unsaved and (previous is None or self._unsaved > MAX_UNSAVED_WORK):
                writes.append(partial(focus_state.save, state, engine.index.known_work(), tag))
                self._unsaved = 0
            if not lived or not self._kept_elsewhere(generation, built_path):
                writes.append(self._keep_built(engine, generation, built_path, built_key))
            self._keep(writes)
            if handed is not None and self.report is not None:
                self.report(HANDED_ENGINE_PHASE, 1, 1)
        engine.prepare()  # while the models may still be loading on the other thread
        self._models.wait()  # the embedder ranks the goal: loaded once, not twice
        self._engine = (graph, engine)
        return engine

    def _kept_elsewhere(self, generation: str, built_path: str) -> bool:
        """Whether a new process can make the engine of ``generation`` from what is kept:
        the built index of the generation graph.cache holds, with the files graph.delta
        names counted again. A long-lived process (a server) then writes no tens of MB on
        each edit; the first new process to need it writes it (see :meth:`_keep_built`)."""
        kept, disk = self._built_on_disk, self._on_disk
        return (
            kept is not None
            and disk is not None
            and disk.after == generation
            and disk.base == kept[0]
            and _file_mark(built_path) == kept[1]
            and _file_mark(self._state_path(GRAPH_CACHE_FILE)) == disk.mark
        )

    def _keep_built(
        self, engine: FocusEngine, generation: str, built_path: str, built_key: str
    ) -> Callable[[], None]:
        """What writes the built index of ``generation``, and brings graph.cache to the
        same generation, so that the next edits need not write it (see :meth:`_keep`).
        The index gives what it built here, on the thread that ranks with it."""
        cache = self._state_path(GRAPH_CACHE_FILE)
        disk = self._on_disk
        built = engine.index.built()
        held = self._rows if disk is None or disk.base != generation else None

        def write() -> None:
            focus_state.save_built(built_path, built, built_key)
            self._built_on_disk = (generation, _file_mark(built_path))
            if held is not None and held[0] == generation:
                _write_cache(cache, generation, held[1])
                self._on_disk = _DiskGraph(generation, generation, frozenset(), _file_mark(cache))

        return write

    def _keep(self, writes: list[Callable[[], None]]) -> None:
        """Run ``writes`` (of the files kept beside the index): here, or with
        :attr:`keep_aside` on a thread of their own while this one ranks and answers
        (on sympy they are 0.3 s of a first focus's tail with the other core idle). The
        thread is not a daemon, so a process ends with them written; whatever next reads
        or writes those files, or the workspace's record of them, waits for it first
        (:meth:`_kept`). A file is replaced whole (:func:`replaced_whole`):
        a process killed meanwhile leaves the old one, a cache the next process rebuilds."""
        if not writes:
            return
        if not self.keep_aside:
            for write in writes:
                write()
            return

        def run() -> None:
            for write in writes:
                try:
                    write()
                except Exception as exc:  # a cache: the next process rebuilds what is lost
                    print(
                        f"coderooms: could not keep the focus state beside the index "
                        f"({type(exc).__name__}: {exc}); the next process rebuilds it",
                        file=sys.stderr,
                    )
                    return

        self._keeping = threading.Thread(target=run, name="coderooms-keep")
        self._keeping.start()

    def _kept(self) -> None:
        """Wait for the kept files a thread writes (see :meth:`_keep`), if any."""
        keeping, self._keeping = self._keeping, None
        if keeping is not None:
            keeping.join()

    def _restored(
        self, graph: CodeGraph, state: str, tag: str, built_path: str, built_key: str
    ) -> FocusEngine | None:
        """The engine kept for this generation at ``built_path``, or None (then built)."""
        from coderooms import embeddings, tokens

        built = focus_state.load_built(built_path, built_key)
        if built is None:
            return None
        counted_path = self._state_path(focus_state.TOKENS_FILE)
        counted = focus_state.load_token_counts(counted_path, tag)
        try:
            return FocusEngine.restored(
                graph,
                self,
                tokens.COUNTER,
                built,
                embeddings.embed,
                known=lambda: _known_or_none(state, tag),
                token_counts=counted,
                token_floors=focus_state.load_token_floors(counted_path, tag),
            )
        except ValueError:  # kept for other nodes than the graph's: build it again
            return None

    def focus(
        self,
        goal: str,
        budget: int = DEFAULT_BUDGET,
        mode: str = "set",
        discussed: Discussed = (),
        elsewhere: Mapping[str, str] | None = None,
    ) -> FocusResult:
        """``discussed``: code a desk's messages about the goal name; ``elsewhere``: code
        a teammate holds, not sent (see :meth:`FocusEngine.focus`)."""
        self._warm()
        engine = self._current_engine()
        result = engine.focus(
            self.relative(goal), budget=budget, mode=mode, discussed=discussed, elsewhere=elsewhere
        )
        result = with_unindexed(result, self.not_indexed(goal))
        counter = engine.counter
        if counter.added:  # code counted for the first time: keep the counts and floors
            with self._lock:
                path = self._state_path(focus_state.TOKENS_FILE)
                tag = self._state_tag()
                focus_state.save_token_counts(path, counter.counts, tag, counter.floors)
                counter.added = 0
        return result

    def not_indexed(self, goal: str) -> dict[str, str]:
        """The files ``goal`` names by path that the index left out, with why
        (``oversized``, ``binary``, ``submodule`` for a path inside one …), in the order
        the goal names them."""
        paths = [p.removeprefix("./") for p in goal_cues(self.relative(goal)).paths]
        if not paths:
            return {}
        found: dict[str, str] = {}
        with self._lock:
            conn = self._connection(create=False)
            for path in dict.fromkeys(paths):
                # the path itself, or a submodule holding it: lookups by key, no scan
                parts = path.split("/")
                heads = ["/".join(parts[:i]) for i in range(len(parts), 0, -1)]
                heads = heads[:LEFT_OUT_DEPTH]
                marks = ",".join("?" * len(heads))
                rows = dict(
                    conn.execute(
                        f"SELECT path, reason FROM skipped WHERE path IN ({marks})", heads
                    ).fetchall()
                )
                if path in rows:
                    found[path] = str(rows[path])
                elif any(rows.get(head) == "submodule" for head in heads[1:]):
                    found[path] = "submodule"
        return found

    def _warm(self) -> None:
        """Before the first engine: load the embedding model, then the token counter's
        tables, on another thread (the other core), while the index is checked and read."""
        if self._warming is None:
            from coderooms import tokens

            # The counter's ranks decoded beside the index, for whichever thread reads them.
            tokens.keep_ranks_in(os.path.dirname(self.db_path))
            self._warming = threading.Thread(
                target=_load_models, args=(self._models,), name="coderooms-warm", daemon=True
            )
            self._warming.start()

    def _state_path(self, name: str) -> str:
        return os.path.join(os.path.dirname(self.db_path), name)

    def _state_tag(self) -> str:
        from coderooms import embeddings, tokens

        return focus_state.state_tag(embeddings.model_tag(), tokens.encoding_name())

    def focus_session(
        self,
        state: WorkingSet,
        goal: str,
        budget: int = DEFAULT_BUDGET,
        mode: str = "set",
        discussed: Discussed = (),
        elsewhere: Mapping[str, str] | None = None,
    ) -> SessionFocus:
        """``focus`` inside a session: what ``state`` holds is not sent again (see
        :mod:`coderooms.focus.session`)."""
        self._warm()
        answer = focus_in_session(
            self._current_engine(),
            state,
            self.relative(goal),
            budget,
            mode,
            discussed=discussed,
            elsewhere=elsewhere,
        )
        left_out = self.not_indexed(goal)
        return (
            replace(answer, result=with_unindexed(answer.result, left_out)) if left_out else answer
        )

    def seek(self, query: str, limit: int = DEFAULT_SEEK_LIMIT) -> SeekResult:
        self._warm()
        return self._current_engine().seek(self.relative(query), limit=limit)

    def _current_engine(self) -> FocusEngine:
        """Index again when the disk moved, then the engine of the current graph: after
        an edit, one stretch without cyclic collection (see :func:`_without_cyclic_gc`)
        instead of a collection between the index, the graph and the engine."""
        with _without_cyclic_gc():
            self.refresh()
            return self.focus_engine()

    def relative(self, text: str) -> str:
        """``text`` with this repository's own absolute path taken off the paths in it, so
        ``/home/me/repo/tox.ini`` names ``tox.ini`` as the index does (a path's last parts
        alone could not tell a file at the top of the repository)."""
        prefixes = {self.root + os.sep, os.path.realpath(self.root) + os.sep}
        for prefix in sorted(prefixes, key=len, reverse=True):  # one may end the other
            text = text.replace(prefix, "")
        return text

    def impact(self, target: str, depth: int = 2) -> ImpactResult:
        require_str("the impact target", target)
        self.refresh()
        if os.path.isabs(target):  # a path inside the repository, as its index names it
            target = self.relative(os.path.normpath(target))
        try:
            return blast_radius(self.graph(), target, depth=depth)
        except UnknownTarget:
            left_out = self.not_indexed(target)
            if left_out:
                raise TargetNotIndexed(target, next(iter(left_out.values()))) from None
            raise

    def _inside(self, path: str) -> str:
        rel = path.replace(os.sep, "/").lstrip("/")
        full = os.path.normpath(os.path.join(self.root, rel))
        if full != self.root and not full.startswith(self.root + os.sep):
            raise UnknownNode(path)
        if os.path.islink(full) or not os.path.isfile(full):
            raise UnknownNode(path)
        return full


def _known_or_none(state: str, tag: str) -> KnownWork:
    """The work kept at ``state``, else none (a later index then counts everything)."""
    known = focus_state.load(state, tag)
    return known if known is not None else KnownWork.nothing()


class _PhaseLines:
    """A line on stderr as each phase of long work starts (``index(progress=True)``)."""

    def __init__(self) -> None:
        self._phase: str | None = None

    def __call__(self, phase: str, done: int, total: int) -> None:
        if phase != self._phase:
            sys.stderr.write(f"{phase}: {total}\n")
        self._phase = None if done >= total else phase


def _embedder() -> Embedder:
    """The embedder every engine of this process embeds with, its model loaded (or
    :class:`~coderooms.embeddings.EmbeddingModelUnavailable`)."""
    from coderooms import embeddings

    embeddings.load_embedder()  # what embed reads, not model2vec's whole model
    return embeddings.embed


def _load_models(loaded: threading.Event) -> None:
    """Load what a first focus needs besides the index: the embedding model (``loaded``
    is set then, also when it fails: the first embedding then says why), then the token
    counter's tables (each loaded once per process and kept)."""
    from coderooms import embeddings, tokens

    try:
        embeddings.load_embedder()
    except Exception:  # noqa: BLE001  # told by the embedder itself, on the caller's thread
        pass
    finally:
        loaded.set()
    with contextlib.suppress(Exception):  # as above: a count loads it again and says why
        tokens.load_encoding()


def _require_root(root: str) -> None:
    """Refuse a repository root that is missing, not a directory or not readable."""
    if not os.path.exists(root):
        raise WorkspaceNotFound(root)
    if not os.path.isdir(root):
        raise WorkspaceNotADirectory(root)
    if not os.access(root, os.R_OK | os.X_OK):
        raise WorkspaceUnreadable(root, "permission denied")


def _index_dir(path: str) -> None:
    """Create the index directory ``path`` if needed; it must take a new index.db."""
    try:
        make_dirs(path)
    except OSError as exc:
        reason = exc.strerror or str(exc)
        if isinstance(exc, FileExistsError):
            reason = "a file of that name is in the way"
        raise IndexDirectoryUnwritable(path, reason) from exc
    if not os.access(path, os.W_OK | os.X_OK):
        raise IndexDirectoryUnwritable(path, os.strerror(errno.EACCES))


EdgeTable = tuple[Sequence[str], Sequence[str], Sequence[str], Sequence[float], Sequence[str]]
"""Edges as columns src, dst, kind, weight and origin (the file whose resolution made the
edge), sorted by (src, kind, dst, weight, origin): tuples as read, lists as patched."""

GraphRows = tuple[
    list[tuple[Any, ...]],
    list[tuple[Any, ...]],
    bytes | memoryview | EdgeTable,  # the edge columns, marshalled until they are read
    list[tuple[Any, ...]],
    list[tuple[Any, ...]],
    int,
]


def _graph_rows(conn: sqlite3.Connection) -> GraphRows:
    """Everything the graph needs, as plain sorted tuples (sorted here: cheaper than SQL)."""
    files = sorted(conn.execute(f"SELECT {_FILE_ROW} FROM files"))
    symbols = conn.execute(f"SELECT {_SYMBOL_ROW} FROM symbols").fetchall()
    symbols.sort()
    edges = conn.execute(f"SELECT {_EDGE_ROW} FROM edges").fetchall()
    return files, symbols, _edge_bytes(edges), *_git_rows(conn)


_FILE_ROW = "path, language, lines, content_hash, size, is_test, is_generated, is_vendored"
_SYMBOL_ROW = (
    "path, start_line, id, kind, name, qualname, parent, end_line, signature, docstring, "
    "content_hash, is_test, size_bytes"
)
_EDGE_ROW = "src, kind, dst, weight, origin"


def _edge_bytes(edges: list[tuple[Any, ...]]) -> bytes:
    """Edge rows (see _EDGE_ROW) sorted, as marshalled columns (see EdgeTable)."""
    edges.sort()
    srcs, kinds, dsts, weights, origins = zip(*edges, strict=True) if edges else ((),) * 5
    return marshal.dumps((srcs, dsts, kinds, weights, origins))


def _edge_table(edges: bytes | memoryview | EdgeTable) -> EdgeTable:
    """The columns of ``edges`` as kept in a graph's rows (marshalled, maybe mapped from
    graph.cache, or already read)."""
    if isinstance(edges, bytes | memoryview):
        table: EdgeTable = marshal.loads(edges)
        return table
    return edges


def _git_rows(conn: sqlite3.Connection) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]], int]:
    signals = sorted(conn.execute("SELECT path, commit_count, last_change FROM signals"))
    co_changes = sorted(conn.execute("SELECT a, b, count FROM co_changes"))
    head_time = int(db.get_meta(conn, "head_time", "0") or 0)
    return signals, co_changes, head_time


def _patched_rows(
    conn: sqlite3.Connection, rows: GraphRows, paths: frozenset[str]
) -> tuple[GraphRows, EdgePatch]:
    """``rows`` with those of ``paths`` (files, their symbols, the edges they are the
    origin of) read again, and the git rows read whole: equal to :func:`_graph_rows`
    when ``paths`` are all the files changed since ``rows`` were read. Also how the new
    edges follow from the old ones (see :class:`EdgePatch`)."""
    files, symbols, edge_rows, *_ = rows
    listed = tuple(sorted(paths))
    marks = ",".join("?" * len(listed))
    new_files = conn.execute(f"SELECT {_FILE_ROW} FROM files WHERE path IN ({marks})", listed)
    files = _spliced_rows(files, sorted(new_files), listed)
    symbol_rows = f"SELECT {_SYMBOL_ROW} FROM symbols WHERE path IN ({marks})"
    symbols = _spliced_rows(symbols, sorted(conn.execute(symbol_rows, listed)), listed)
    added = conn.execute(f"SELECT {_EDGE_ROW} FROM edges WHERE origin IN ({marks})", listed)
    table, patch = _patched_edges(_edge_table(edge_rows), paths, added.fetchall())
    return (files, symbols, table, *_git_rows(conn)), patch


def _spliced_rows(
    rows: list[tuple[Any, ...]], fresh: list[tuple[Any, ...]], paths: tuple[str, ...]
) -> list[tuple[Any, ...]]:
    """``rows`` (sorted, a path first in each) with the run of each of ``paths`` (sorted)
    replaced by its rows in ``fresh`` (sorted): what sorting the rows of the other paths
    with ``fresh`` gives, copied in runs."""
    path_of = itemgetter(0)
    out: list[tuple[Any, ...]] = []
    done = 0
    for path in paths:
        start = bisect.bisect_left(rows, path, lo=done, key=path_of)
        out += rows[done:start]
        out += fresh[
            bisect.bisect_left(fresh, path, key=path_of) : bisect.bisect_right(
                fresh, path, key=path_of
            )
        ]
        done = bisect.bisect_right(rows, path, lo=start, key=path_of)
    out += rows[done:]
    return out


MAX_SCANNED_ORIGINS = 3
"""Paths whose edges are found by a scan of the origins for each (a compare per edge, in
C); for more, one set lookup per edge is cheaper. On sympy's 230k edges a scan took
about 3.3 ms per path, the lookups 10.6 ms (three paths: 9.6 against 10.9)."""


def _made_by(origins: Sequence[str], paths: frozenset[str]) -> list[int]:
    """The positions (ascending) of the edges whose origin is one of ``paths``."""
    if len(paths) > MAX_SCANNED_ORIGINS:
        return list(compress(range(len(origins)), map(paths.__contains__, origins)))
    found: list[int] = []
    for path in paths:
        at = -1
        with contextlib.suppress(ValueError):  # no (more) edge of that origin
            while True:
                at = origins.index(path, at + 1)
                found.append(at)
    found.sort()
    return found


class _SortedEdges(Sequence[tuple[Any, ...]]):
    """The rows of an :data:`EdgeTable` as sort keys (src, kind, dst, weight, origin),
    made one at a time as a bisection asks for them."""

    def __init__(self, table: EdgeTable) -> None:
        self._table = table

    def __len__(self) -> int:
        return len(self._table[0])

    @overload
    def __getitem__(self, at: int) -> tuple[Any, ...]: ...
    @overload
    def __getitem__(self, at: slice) -> Sequence[tuple[Any, ...]]: ...
    def __getitem__(self, at: int | slice) -> tuple[Any, ...] | Sequence[tuple[Any, ...]]:
        if isinstance(at, slice):
            raise TypeError("rows are read one at a time")
        src, dst, kind, weight, origin = self._table
        return src[at], kind[at], dst[at], weight[at], origin[at]


def _patched_edges(
    table: EdgeTable, paths: frozenset[str], added: list[tuple[Any, ...]]
) -> tuple[EdgeTable, EdgePatch]:
    """``table`` without the edges whose origin is in ``paths`` and with ``added`` (rows
    as _EDGE_ROW reads them) merged in, in the order a sort of them all gives; and the
    patch that says so. Only what was added is sorted, and the columns are copied in
    runs between the edges dropped and added: an edit costs little for the edges it did
    not touch."""
    gone = _made_by(table[4], paths)
    added.sort()
    keys = _SortedEdges(table)
    # Each edit to the old edges, in their order: an edge added before old edge ``at``
    # (0), old edge ``at`` dropped (1).
    steps = sorted(
        [(bisect.bisect_right(keys, row), 0, k) for k, row in enumerate(added)]
        + [(at, 1, -1) for at in gone]
    )
    merged: list[list[Any]] = []
    landed: list[int] = []
    for column, field in zip(table, (0, 2, 1, 3, 4), strict=True):
        out: list[Any] = []
        start = 0
        for at, dropped, k in steps:
            out.extend(column[start:at])
            if dropped:
                start = at + 1
            else:
                if field == 0:
                    landed.append(len(out))
                out.append(added[k][field])
                start = at
        out.extend(column[start:])
        merged.append(out)
    srcs, dsts, kinds, weights, origins = merged  # lists: a tuple of each is one more copy
    patch = EdgePatch(
        tuple(gone),
        tuple(landed),
        EdgeColumns(
            tuple(r[0] for r in added),
            tuple(r[2] for r in added),
            tuple(r[1] for r in added),
            tuple(r[3] for r in added),
        ),
    )
    return (srcs, dsts, kinds, weights, origins), patch


@contextlib.contextmanager
def _without_cyclic_gc() -> Iterator[None]:
    """Building the graph or a focus engine makes hundreds of thousands of small acyclic
    objects: the cyclic collector would walk the whole heap again and again (a third of
    an engine's build on sympy) and free nothing. A host that froze its heap to keep
    what it holds for good out of every collection (``up``: see :mod:`coderooms.heap`)
    has what was built here frozen too: the graph and engine of an edit are as
    long-lived, and a later collection would walk them all (0.1-0.3 s on sympy)."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if collecting:
            if heap_frozen():
                gc.freeze()
            gc.enable()


def _edges(edge_rows: bytes | memoryview | EdgeTable) -> tuple[CodeEdge, ...]:
    with _without_cyclic_gc():
        return tuple(map(CodeEdge, *_edge_table(edge_rows)[:4]))


def _edge_columns(edge_rows: bytes | memoryview | EdgeTable) -> EdgeColumns:
    """The columns as tuples, whether read (tuples) or patched (lists): made only when a
    ranking index reads every edge, and equal whichever way the rows came."""
    return EdgeColumns(*map(tuple, _edge_table(edge_rows)[:4]))


def _build_graph(
    rows: GraphRows,
    old: CodeGraph | None = None,
    fresh: frozenset[str] = frozenset(),
    patch: EdgePatch | None = None,
    before: GraphRows | None = None,
) -> CodeGraph:
    """The graph of ``rows``, its nodes made when first read (see :class:`NodeTable`);
    the nodes of ``old`` are taken as they are (made or still to be made) for every path
    not in ``fresh`` (their rows are the same), and its edges are said to follow from
    ``old``'s by ``patch``. With ``before``, the rows ``old`` was made of, its symbols
    are taken in runs between the paths in ``fresh`` instead of one by one."""
    files, symbols, edge_rows, signals, co_changes, head_time = rows
    file_meta = {row[0]: (row[1], bool(row[6]), bool(row[7])) for row in files}
    ids = list(map(itemgetter(0), files))
    ids += map(itemgetter(2), symbols)
    kinds = ["file"] * len(files)
    kinds += map(itemgetter(3), symbols)
    made: list[CodeNode | None] | None = None
    runs: list[tuple[int, int, int]] | None = None
    if old is not None:  # taken now: the new graph keeps no reference to the old one
        made, runs = _kept_nodes(old, files, symbols, fresh, before)

    def make(at: int) -> CodeNode:
        if at < len(files):
            path, language, lines, chash, size, is_test, is_gen, is_vend = files[at]
            name = path.rsplit("/", 1)[-1]
            return CodeNode(
                path, "file", path, name, path, language, 1, max(lines, 1), "", "", chash,
                None, size, bool(is_test), bool(is_gen), bool(is_vend),
            )  # fmt: skip
        path, start, sid, kind, name, qualname, parent, end, sig, doc, chash, is_test, size = (
            symbols[at - len(files)]
        )
        language, is_gen, is_vend = file_meta.get(path, ("", False, False))
        return CodeNode(
            sid, kind, path, name, qualname, language, start, end, sig, doc, chash,
            parent if parent is not None else path, size, bool(is_test), is_gen, is_vend,
        )  # fmt: skip

    if old is not None and isinstance(old.edges, DeferredEdges):
        old.edges.patch = None  # the patch chain stops at one generation back
    table = NodeTable(ids, kinds, make, made)
    if old is not None and isinstance(old.nodes, NodeTable) and runs is not None:
        table.taken = TakenNodes(weakref.ref(old.nodes), tuple(runs))
    return CodeGraph(
        nodes=table,
        edges=DeferredEdges(
            lambda: _edges(edge_rows),
            lambda: _edge_columns(edge_rows),
            replace(patch, before=old.edges) if patch is not None and old is not None else None,
        ),
        signals=tuple(FileSignals(path, count, last) for path, count, last in signals),
        co_changes=tuple((a, b, n) for a, b, n in co_changes),
        head_time=head_time,
    )


def _kept_nodes(
    old: CodeGraph,
    files: list[tuple[Any, ...]],
    symbols: list[tuple[Any, ...]],
    fresh: frozenset[str],
    before: GraphRows | None,
) -> tuple[list[CodeNode | None], list[tuple[int, int, int]] | None]:
    """Per row of ``files`` then ``symbols``: the node ``old`` has for its id when its
    path is not in ``fresh``, else None (made from the new row when first read). With
    ``before``, the rows ``old`` was made of, the nodes are taken in runs between the
    paths in ``fresh`` instead of looked up one by one; the runs are answered too (see
    :class:`TakenNodes`), None when the nodes were looked up."""
    taken = old.nodes  # a node taken from a NodeTable is made there now: both share it
    of = old.node
    runs: list[tuple[int, int, int]] | None = [] if before is not None else None
    made = spliced = None
    if runs is not None and before is not None and len(taken) == len(before[0]) + len(before[1]):
        made = _spliced_nodes(taken, 0, before[0], files, fresh, 0, runs)
        spliced = _spliced_nodes(taken, len(before[0]), before[1], symbols, fresh, len(files), runs)
    if made is None or spliced is None:
        runs = None
    if made is None:
        made = [of(row[0]) if row[0] not in fresh else None for row in files]
    if spliced is None:
        spliced = [of(row[2]) if row[0] not in fresh else None for row in symbols]
    made += spliced
    return made, runs


def _spliced_nodes(
    old: Sequence[CodeNode],
    offset: int,
    before: list[tuple[Any, ...]],
    after: list[tuple[Any, ...]],
    fresh: frozenset[str],
    placed: int = 0,
    runs: list[tuple[int, int, int]] | None = None,
) -> list[CodeNode | None] | None:
    """Per row of ``after`` (file or symbol rows, a path first in each): the node ``old``
    holds from ``offset`` on for the rows ``before``, in the runs between the paths in
    ``fresh``, None for those paths; None when the runs do not line up (then every row
    is looked up). Each run taken is added to ``runs`` as (its place in the new nodes,
    ``after`` starting at ``placed``; its place in ``old``; its length)."""
    path_of = itemgetter(0)  # rows sort by path first: a path's rows are one run
    nodes: list[CodeNode | None] = []
    taken: list[tuple[int, int, int]] = []
    done_before = done_after = 0
    for path in sorted(fresh):
        start_before = bisect.bisect_left(before, path, key=path_of)
        end_before = bisect.bisect_right(before, path, key=path_of)
        start_after = bisect.bisect_left(after, path, key=path_of)
        end_after = bisect.bisect_right(after, path, key=path_of)
        if start_before - done_before != start_after - done_after:
            return None
        taken.append((placed + done_after, offset + done_before, start_before - done_before))
        nodes += old[offset + done_before : offset + start_before]
        nodes += [None] * (end_after - start_after)
        done_before, done_after = end_before, end_after
    if len(before) - done_before != len(after) - done_after:
        return None
    taken.append((placed + done_after, offset + done_before, len(before) - done_before))
    nodes += old[offset + done_before : offset + len(before)]
    if runs is not None:
        runs += [run for run in taken if run[2] > 0]
    return nodes


def _write_stamp(path: str, root: str, generation: str, stamp: _Stamp) -> None:
    """Keep ``stamp`` (taken of ``generation`` of ``root``'s index) at ``path``, in one
    step; a failure to write only costs the next process an indexer run."""
    # The fields as they are (astuple would copy every nested tuple, deeply).
    fields = (stamp.files, stamp.dirs, stamp.database)
    with replaced_whole(path) as fh:
        fh.write(marshal.dumps((_stamp_key(), root, generation, *fields)))


def _read_stamp(path: str, root: str) -> tuple[str, _Stamp] | None:
    """(generation, stamp) kept at ``path`` for ``root``, or None (missing, damaged, of
    another version or another root: a copied repository checks its own files)."""
    try:
        with open(path, "rb") as fh:
            data = marshal.loads(fh.read())
        key, kept_root, generation, files, dirs, database = data
    except (OSError, EOFError, ValueError, TypeError):
        return None
    if key != _stamp_key() or kept_root != root or not isinstance(generation, str):
        return None
    try:
        stamp = _Stamp(
            tuple((str(p), int(size), int(mark)) for p, size, mark in files),
            tuple((str(p), int(mark)) for p, mark in dirs),
            (int(database[0]), int(database[1])),
        )
    except (TypeError, ValueError, IndexError):
        return None
    return generation, stamp


def _stamp_key() -> str:
    return f"coderooms-stamp-{STAMP_VERSION}-py{sys.version_info[0]}.{sys.version_info[1]}"


def _read_cache(path: str, generation: str) -> GraphRows | None:
    """The graph rows cached for ``generation``, or None (a cache never decides anything).
    The head names the generation: another one's rows are not read. The edge columns,
    most of the file, are mapped rather than read: a graph that ranks from a kept index
    never reads them (the file is only ever replaced whole, never written in place)."""
    try:
        with open(path, "rb") as fh:
            (size,) = _CACHE_HEAD_SIZE.unpack(fh.read(_CACHE_HEAD_SIZE.size))
            head = marshal.loads(fh.read(size))
            if not isinstance(head, tuple) or len(head) != 3:
                return None
            key, kept, nodes_size = head
            if (key, kept) != (_cache_key(), generation):
                return None
            # Read whole, then unmarshalled: marshal.load on a file reads piece by piece.
            nodes = marshal.loads(fh.read(nodes_size))
            edges_at = _CACHE_HEAD_SIZE.size + size + nodes_size
            mapped = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
    except (OSError, EOFError, ValueError, TypeError, struct.error):
        return None
    if not isinstance(nodes, tuple) or len(nodes) != 5 or edges_at >= len(mapped):
        return None
    files, symbols, signals, co_changes, head_time = nodes  # the shape _write_cache wrote
    return files, symbols, memoryview(mapped)[edges_at:], signals, co_changes, head_time


def _write_cache(path: str, generation: str, rows: GraphRows) -> None:
    """Keep ``rows`` as ``generation``'s at ``path``: a head, the node and git rows
    marshalled, then the edge columns marshalled (mapped by :func:`_read_cache`)."""
    files, symbols, edges, signals, co_changes, head_time = rows
    if not isinstance(edges, bytes | memoryview):  # read already: marshalled again
        edges = marshal.dumps(edges)
    nodes = marshal.dumps((files, symbols, signals, co_changes, head_time))
    head = marshal.dumps((_cache_key(), generation, len(nodes)))
    with replaced_whole(path) as fh:
        fh.write(_CACHE_HEAD_SIZE.pack(len(head)) + head)
        fh.write(nodes)
        fh.write(edges)


@dataclass(frozen=True, slots=True)
class _DiskGraph:
    """The graph rows of generation ``after`` as the files beside the index give them:
    graph.cache holds the rows of generation ``base``, and only the files in ``paths``
    have other rows since (graph.delta says so when ``base`` is not ``after``)."""

    base: str
    after: str
    paths: frozenset[str]
    mark: tuple[int, int, int] = (-1, -1, -1)  # graph.cache's file mark when it was seen


def _file_mark(path: str) -> tuple[int, int, int]:
    """(inode, change time, size) of ``path``, or (-1, -1, -1) when it is gone: another
    process replacing the file moves it."""
    try:
        st = os.stat(path)
    except OSError:
        return (-1, -1, -1)
    return (st.st_ino, st.st_mtime_ns, st.st_size)


def _read_graph_delta(path: str) -> _DiskGraph | None:
    """The graph delta kept at ``path``, or None (missing, damaged or of another version:
    the graph is then read whole, or patched from the last run's delta)."""
    try:
        with open(path, "rb") as fh:
            key, base, after, paths = marshal.loads(fh.read())
    except (OSError, EOFError, ValueError, TypeError):
        return None
    if key != _cache_key() or not isinstance(base, str) or not isinstance(after, str):
        return None
    if not isinstance(paths, tuple) or not all(isinstance(p, str) for p in paths):
        return None
    return _DiskGraph(base, after, frozenset(paths))


def _write_graph_delta(path: str, delta: _DiskGraph) -> None:
    """Keep ``delta`` at ``path`` in one step (a failure costs a reader the whole read)."""
    kept = (_cache_key(), delta.base, delta.after, tuple(sorted(delta.paths)))
    with replaced_whole(path) as fh:
        fh.write(marshal.dumps(kept))


def _cache_key() -> str:
    # marshal's format belongs to one Python version; the layout to one cache version.
    return f"coderooms-graph-{GRAPH_CACHE_VERSION}-py{sys.version_info[0]}.{sys.version_info[1]}"
