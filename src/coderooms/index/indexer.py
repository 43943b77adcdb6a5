"""One index run: list, parse what changed (on every core), resolve what it affects,
read git signals, and store it all in index.db in one transaction."""

from __future__ import annotations

import contextlib
import dataclasses
import gc
import multiprocessing
import multiprocessing.pool
import os
import pickle
import secrets
import signal
import sqlite3
import threading
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from functools import partial
from itertools import chain
from typing import TYPE_CHECKING

from coderooms.focus.documents import FileWork
from coderooms.index import db
from coderooms.index.discover import Listing, list_files
from coderooms.index.extract import (
    Outcome,
    Unchanged,
    prepare,
    process_file,
    read_and_process,
    skip_reason,
)
from coderooms.index.facts import DECORATED, RETURNED, FileFacts, Skipped
from coderooms.index.forking import STOP_SIGNALS, can_fork, fork_child, start_worker
from coderooms.index.gitlog import GitLogPass, head_commit
from coderooms.index.handover import FirstBuild, RowsTask, file_work, worker_rows
from coderooms.index.languages import PARSED_LANGUAGES, language_of
from coderooms.index.resolve import UNRESOLVED_REASONS, Resolver, SymbolRow, SymbolTable
from coderooms.index.summary import IndexSummary

if TYPE_CHECKING:
    import numpy as np

PARALLEL_MIN_FILES = 48  # below this, worker start-up costs more than it saves
CHUNK_FILES = 8  # files per task sent to a worker
WRITE_BATCH_FILES = 256  # new files stored per statement
MAX_WORKERS = 8
GENERATION_TOKEN_BYTES = 8
SYMBOL_TABLES = ("symbols",)  # written in bulk by a cold build, while parsing
EDGE_TABLES = ("edges",)  # written in bulk by a cold build, once resolved

PARSE_PHASE = "indexing files"
RESOLVE_PHASE = "resolving references"
STORE_PHASE = "storing the index"
REPORT_EVERY = 100  # files resolved between two reports
HELPER_MIN_FILES = 64  # below this a cold run resolves in one process (a fork costs more)
# Of a cold run's resolution work (counted by _resolution_cost), what the forked helper
# does: its share's files cost more than they count (the test files at the end of a
# sorted Python tree), and it pays for the pages it copies and its pickle, while this
# process stores its own share's rows. Measured balanced on pytest and sympy.
HELPER_SHARE = 0.45
HELPER_EXIT_FAILED = 3  # a helper's exit status when resolving its share raised

Progress = Callable[[str, int, int], None]
"""Told of each phase of a run as it goes: (phase, items done, items in the phase). A
phase with nothing to do is never told of."""


def worker_count() -> int:
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        cores = os.cpu_count() or 1
    return max(1, min(cores, MAX_WORKERS))


Processed = tuple[Outcome, "FileWork | None", "np.ndarray | None"]
"""A file's outcome, its focus documents and their embedding rows (see :func:`process_files`)."""


def _process_chunk(
    root: str,
    chunk: list[tuple[str, str | None]],
    with_work: bool = False,
    rows: RowsTask | None = None,
) -> list[Processed]:
    done = [_processed(root, path, old, with_work) for path, old in chunk]
    if rows is None:
        return [(outcome, work, None) for outcome, work in done]
    made = worker_rows(rows, [work for _, work in done])
    return [(outcome, work, row) for (outcome, work), row in zip(done, made, strict=True)]


def _processed(
    root: str, path: str, old: str | None, with_work: bool
) -> tuple[Outcome, FileWork | None]:
    """A file's outcome and, ``with_work``, its focus documents (see :mod:`handover`),
    made of the bytes it was parsed from. The facts' stored form is made by the process
    that stores them: sent from a worker, that JSON text is pickled and piped beside the
    facts it encodes (sympy's facts: 56 MB with it, 21 MB without), which costs the
    worker more than encoding costs this process."""
    if not with_work:
        return process_file(root, path, old, encode=False), None
    outcome, data = read_and_process(root, path, old, encode=False)
    if isinstance(outcome, FileFacts):
        return outcome, file_work(outcome, data)
    return outcome, None


POOL_STOP_S = 5.0
"""How long an abandoned run waits for its pool to terminate (a healthy pool: ~0.1 s)."""


def open_pool(paths: list[str], workers: int) -> multiprocessing.pool.Pool | None:
    """Worker processes for parsing ``paths``, or None when in-process is cheaper."""
    if workers <= 1 or len(paths) < PARALLEL_MIN_FILES:
        return None
    prepare(language_of(p) for p in paths)  # compiled once, before the workers fork
    # fork is fastest; with other threads alive it is unsafe, so use forkserver then.
    if not can_fork():
        return multiprocessing.get_context("forkserver").Pool(workers, initializer=start_worker)
    return fork_pool(workers)


def fork_pool(workers: int) -> multiprocessing.pool.Pool:
    """``workers`` processes forked from this one (only when :func:`can_fork`): they
    start with what this process holds, and only this process acts on a stop signal."""
    context = multiprocessing.get_context("fork")
    # A stop signal waits while the pool forks: its handler would otherwise run in the
    # middle of a fork (where an exception is ignored, the stop lost) or leave a pool
    # half made. The pool's threads and processes start with the signals blocked:
    # threads keep them so (the main thread handles them), workers unblock them.
    blocked = signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
    try:
        pool = context.Pool(workers, initializer=start_worker)
    except BaseException:
        signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
        raise
    try:
        signal.pthread_sigmask(signal.SIG_SETMASK, blocked)  # a stop that waited comes here
    except BaseException:
        stop_pool(pool)
        raise
    return pool


def stop_pool(pool: multiprocessing.pool.Pool) -> None:
    """Terminate ``pool`` now (its work is being abandoned), waiting at most
    ``POOL_STOP_S``: ``terminate()`` can hang for good when a worker was killed while it
    held a queue's lock (a race inside multiprocessing), and the caller is unwinding."""
    stopper = threading.Thread(target=pool.terminate, name="coderooms-pool-stop", daemon=True)
    stopper.start()
    stopper.join(POOL_STOP_S)


def process_files(
    root: str,
    todo: list[tuple[str, str | None]],
    pool: multiprocessing.pool.Pool | None,
    with_work: bool = False,
    rows: RowsTask | None = None,
) -> Iterator[Processed]:
    """Parse files, on the pool's processes when there is one; ``with_work``, each
    parsed file comes with its focus documents, and with ``rows`` and a pool, with
    their embedding rows made by ``rows`` on the worker (see :func:`worker_rows`)."""
    if pool is None:
        for path, old in todo:
            yield (*_processed(root, path, old, with_work), None)
        return
    chunks = [todo[i : i + CHUNK_FILES] for i in range(0, len(todo), CHUNK_FILES)]
    task = partial(_process_chunk, root, with_work=with_work, rows=rows)
    for outcomes in pool.imap_unordered(task, chunks):
        yield from outcomes


def run(
    root: str,
    conn: sqlite3.Connection,
    *,
    progress: Progress | None = None,
    workers: int | None = None,
    first_build: FirstBuild | None = None,
) -> IndexSummary:
    """Bring the index of ``root`` in ``conn`` up to date, and summarize it. A cold run
    (nothing indexed yet) hands ``first_build`` each file's focus documents and, once
    committed, its rows (see :mod:`coderooms.index.handover`); another run leaves it
    untouched."""
    started = time.perf_counter()
    done = update(root, conn, progress=progress, workers=workers, first_build=first_build)
    summary = summarize(conn, root, done.git, time.perf_counter() - started, done.stats)
    return dataclasses.replace(summary, phases={k: round(v, 4) for k, v in done.phases.items()})


@dataclasses.dataclass(frozen=True, slots=True)
class RunDone:
    """What one run did: the counts of :attr:`IndexSummary.changed`, whether the root
    is a git work tree, and the seconds of each phase; and what it listed (the files and
    HEAD commit), which a caller that sees only some files change may hand the next run
    (see :func:`update`'s ``listed``)."""

    stats: dict[str, int]
    git: bool
    phases: dict[str, float]
    listed: tuple[Listing, str]


def update(
    root: str,
    conn: sqlite3.Connection,
    *,
    progress: Progress | None = None,
    workers: int | None = None,
    first_build: FirstBuild | None = None,
    listed: tuple[Listing, str] | None = None,
) -> RunDone:
    """:func:`run` without the summary: what a check before focus runs, which has no one
    to show the summary to (counting the whole index costs more than a one-file edit).
    ``listed``, the listing and HEAD commit of the root as they are now, spares the run
    listing them (a walk and two git commands): a caller hands it when it knows the
    files there are those of the last run's listing, some with a new size or mark."""
    # Many small, acyclic objects: the cyclic collector would only add pauses.
    collecting = gc.isenabled()
    gc.disable()
    try:
        return _run(
            root, conn, progress=progress, workers=workers, first_build=first_build, listed=listed
        )
    finally:
        if collecting:
            gc.enable()


def _run(
    root: str,
    conn: sqlite3.Connection,
    *,
    progress: Progress | None = None,
    workers: int | None = None,
    first_build: FirstBuild | None = None,
    listed: tuple[Listing, str] | None = None,
) -> RunDone:
    started = time.perf_counter()
    workers = worker_count() if workers is None else workers
    if listed is not None:
        listing, head = listed
    else:
        listing = list_files(root)
        head = head_commit(root) if listing.git else ""
    phases: dict[str, float] = {"list": time.perf_counter() - started}

    pool: multiprocessing.pool.Pool | None = None
    git_proc: GitLogPass | None = None
    helper: ForkedShare | None = None
    # The write lock before anything is read: a run that waited for another run's lock
    # then sees that run's work (and does an incremental run, not a second cold build).
    conn.execute("BEGIN IMMEDIATE")
    try:
        known = {
            p: (h, s, m)
            for p, h, s, m in conn.execute("SELECT path, content_hash, size, mtime_ns FROM files")
        }
        known_skipped = {
            p: (r, s, m)
            for p, r, s, m in conn.execute("SELECT path, reason, size, mtime_ns FROM skipped")
        }
        cold = not known
        handing = first_build if cold else None
        todo: list[tuple[str, str | None]] = []
        for path, (size, mtime) in listing.files.items():
            old = known.get(path)
            if old is not None and old[1] == size and old[2] == mtime:
                continue
            skipped = known_skipped.get(path)
            if old is None and skipped is not None and skipped[1] == size and skipped[2] == mtime:
                continue
            todo.append((path, old[0] if old else None))
        symlinks = {s.path for s in listing.skipped}
        listed = set(listing.files) | symlinks
        deleted = sorted(p for p in known if p not in listed)
        gone_skips = sorted(p for p in known_skipped if p not in listed)

        # Processes are forked before any thread exists: git log (read by a thread) starts
        # right away when parsing stays in this process, else once the forking is over.
        if progress is not None and todo:
            progress(PARSE_PHASE, 0, len(todo))  # told now: the first file may take long
        if handing is not None and todo:
            handing.prepare()  # before the workers fork: they inherit what it loads
        forked = can_fork()  # so are the pool's workers, and a child once they are gone
        pool = open_pool([path for path, _ in todo], workers)
        if handing is not None and todo:
            handing.parsing()  # no pool's worker is forked after this
        forks = pool is not None
        if forks:  # largest files first: no worker is left parsing a big one at the end
            todo.sort(key=lambda item: listing.files[item[0]][0], reverse=True)
        want_git = bool(listing.git and head and head != db.get_meta(conn, "head"))
        git_proc = GitLogPass(root) if want_git and not forks else None
        changed: list[FileFacts] = []
        old_symbols: dict[str, set[SymbolKey]] = {}
        # A cold build fills empty tables: their indexes are rebuilt once at the end.
        # (The symbols' indexes apart: their rows are all in once parsing is over.)
        rebuild_symbols = db.drop_indexes(conn, SYMBOL_TABLES) if cold else []
        rebuild = db.drop_indexes(conn, EDGE_TABLES) if cold else []
        for path in deleted:
            old_symbols[path] = _symbol_keys(conn, path)
            db.delete_file(conn, path)
        for path in gone_skips:
            conn.execute("DELETE FROM skipped WHERE path = ?", (path,))
        for s in listing.skipped:
            conn.execute(
                "INSERT OR REPLACE INTO skipped VALUES (?, ?, ?, ?)", (s.path, s.reason, 0, 0)
            )
            if s.path in known:
                old_symbols[s.path] = _symbol_keys(conn, s.path)
                db.delete_file(conn, s.path)
                deleted.append(s.path)
        done = 0
        mark = time.perf_counter()
        unwritten: list[tuple[FileFacts, int]] = []
        # Forked workers only parse: once they are gone, a child embeds every text on
        # the core resolution and storing leave idle (see FirstBuild.embed_aside).
        # Workers a server started (another thread was alive) embed each chunk's texts
        # as they parse it. Either way resolution gets the other core (see ForkedShare).
        aside = handing is not None and pool is not None and forked
        remote = (
            handing.in_workers() if handing is not None and pool is not None and not aside else None
        )
        for outcome, work, rows in process_files(root, todo, pool, handing is not None, remote):
            done += 1
            if progress is not None:
                progress(PARSE_PHASE, done, len(todo))
            path = outcome.path
            size, mtime = listing.files[path]
            if isinstance(outcome, Unchanged):
                conn.execute(
                    "UPDATE files SET mtime_ns = ?, size = ? WHERE path = ?", (mtime, size, path)
                )
            elif isinstance(outcome, Skipped):
                if path in known:
                    old_symbols[path] = _symbol_keys(conn, path)
                    db.delete_file(conn, path)
                    deleted.append(path)
                conn.execute(
                    "INSERT OR REPLACE INTO skipped VALUES (?, ?, ?, ?)",
                    (path, outcome.reason, size, mtime),
                )
            else:
                if path in known:
                    old_symbols[path] = _symbol_keys(conn, path)
                if path in known_skipped:
                    conn.execute("DELETE FROM skipped WHERE path = ?", (path,))
                if path in known:
                    db.write_file(conn, outcome, mtime)
                else:  # written in batches: one statement per table per batch
                    unwritten.append((outcome, mtime))
                    if len(unwritten) >= WRITE_BATCH_FILES:
                        db.write_new_files(conn, unwritten)
                        unwritten = []
                changed.append(outcome)
                if handing is not None:
                    handing.add(work, rows)

        db.write_new_files(conn, unwritten)
        if pool is not None:
            pool.close()
            pool.join()
            pool = None
        if aside and handing is not None:
            handing.embed_aside()
        phases["parse"] = time.perf_counter() - mark
        mark = time.perf_counter()
        # This thread's clock: the git log thread may be busy in this process meanwhile.
        cpu_mark = time.thread_time()
        key = os.path.realpath(root)
        generation = db.get_meta(conn, "generation", "")
        affected, table, resolver, reads = _prepare_resolution(
            conn, key, generation, cold, changed, deleted, old_symbols
        )
        if resolver is not None and cold and forks and pool is None:
            # A cold run whose workers are gone (nothing left for them) holds every
            # file's facts: a forked copy of this process resolves the last share of the
            # files on another core meanwhile (see ForkedShare), forked before the git
            # log's thread starts.
            helper = ForkedShare.start(resolver, affected, changed)
        if want_git and git_proc is None:
            git_proc = GitLogPass(root)
        results: list[ResolvedFile] = []
        stored_early = 0  # of the results: those stored while the helper worked
        digests: dict[str, str] = {}
        if resolver is not None:
            mine = affected if helper is None else affected[: len(affected) - len(helper.paths)]
            results = _resolve_files(resolver, mine, progress, total=len(affected))
            if helper is not None:
                # While the helper resolves its share: this share's digests and rows
                # (stored first, as one process stores them), the symbols' indexes.
                digests.update((path, resolver.exports(path)) for path in mine)
                _store_edges(conn, results, replace=False)
                stored_early = len(results)
                for statement in rebuild_symbols:
                    conn.execute(statement)
                rebuild_symbols = []
                theirs, their_digests = helper.results()
                results += theirs
                digests.update(their_digests)
                if progress is not None and helper.paths:
                    progress(RESOLVE_PHASE, len(affected), len(affected))
            results += _follow_exports(conn, resolver, results, deleted, digests, cold=cold)
        # Resolution alone, then what storing its edges (and rebuilding the indexes a
        # cold build dropped) costs on top: the benchmark weighs the two apart.
        phases["resolve_cpu"] = time.thread_time() - cpu_mark
        if helper is not None:
            phases["resolve_cpu"] += helper.cpu_seconds
        cpu_mark = time.thread_time()
        stored = sum(len(rows) for _, rows, _ in results)
        if progress is not None and stored:
            progress(STORE_PHASE, 0, stored)
        _store_edges(conn, results[stored_early:], replace=not cold)
        conn.executemany("INSERT OR REPLACE INTO exports VALUES (?, ?)", sorted(digests.items()))
        resolved = len(results)
        for statement in rebuild_symbols + rebuild:
            conn.execute(statement)
        phases["resolve"] = time.perf_counter() - mark
        phases["store_cpu"] = time.thread_time() - cpu_mark
        mark = time.perf_counter()

        if listing.git and git_proc is not None:
            indexed = {p for (p,) in conn.execute("SELECT path FROM files")}
            signals = git_proc.result(indexed)
            conn.execute("DELETE FROM signals")
            conn.execute("DELETE FROM co_changes")
            conn.executemany(
                "INSERT INTO signals VALUES (?, ?, ?)",
                [
                    (p, n, signals.last_change.get(p, 0))
                    for p, n in sorted(signals.commit_counts.items())
                ],
            )
            conn.executemany("INSERT INTO co_changes VALUES (?, ?, ?)", signals.co_changes)
            db.set_meta(conn, "head", head)
            db.set_meta(conn, "head_time", str(signals.head_time))
        elif not listing.git and db.get_meta(conn, "head"):
            conn.execute("DELETE FROM signals")
            conn.execute("DELETE FROM co_changes")
            db.set_meta(conn, "head", "")
            db.set_meta(conn, "head_time", "0")
        if deleted:
            conn.execute("DELETE FROM signals WHERE path NOT IN (SELECT path FROM files)")
            conn.execute(
                "DELETE FROM co_changes WHERE a NOT IN (SELECT path FROM files) "
                "OR b NOT IN (SELECT path FROM files)"
            )
        if changed or deleted or git_proc is not None or cold:
            # A fresh random token, so a cache keyed on it can never match a rebuilt index.
            previous, generation = generation, secrets.token_hex(GENERATION_TOKEN_BYTES)
            db.set_meta(conn, "generation", generation)
            touched = {f.path for f in changed} | set(deleted) | {r[0] for r in results}
            delta = db.GenerationDelta(previous, generation, tuple(sorted(touched)))
            db.set_meta(conn, db.DELTA_KEY, "" if cold or not previous else delta.encoded())
        db.set_meta(conn, "root", os.path.abspath(root))
        if cold:  # the whole index in the log: copied into index.db beside what follows
            db.commit_checkpointing_aside(conn)
        else:
            conn.execute("COMMIT")
        keep_table(key, generation, table)
        _keep_reads(key, generation, reads, changed)
        if handing is not None:
            handing.finish(generation, changed, results)
        if progress is not None and stored:
            progress(STORE_PHASE, stored, stored)
        phases["git_and_commit"] = time.perf_counter() - mark
    except BaseException:
        # A stop can land after COMMIT or inside a SQLite call: roll back only what is
        # open, and never let the rollback hide why the run ended.
        with contextlib.suppress(sqlite3.Error):
            if conn.in_transaction:
                conn.execute("ROLLBACK")
        if pool is not None:
            stop_pool(pool)
        if helper is not None:
            helper.cancel()
        if git_proc is not None:
            git_proc.cancel()
        if handing is not None:
            handing.close()
        raise
    (n_files,) = conn.execute("SELECT COUNT(*) FROM files").fetchone()
    stats = {
        "parsed": len(changed),
        "unchanged": n_files - len(changed),
        "deleted": len(deleted),
        "re_resolved": resolved,
    }
    return RunDone(stats, listing.git, phases, (listing, head))


SymbolKey = tuple[str, str, str]
"""(id, name, what others learn of its type: its signature and what it returns)."""


def symbol_keys(facts: FileFacts) -> set[SymbolKey]:
    """A file's symbols as other files see them: when a key changes, the files using the
    symbol's name resolve again (a call of it may give another type now)."""
    returned: dict[str, list[str]] = defaultdict(list)
    for owner, var, evidence in facts.types:
        if var == RETURNED or var == DECORATED:  # a decorator may make it a property
            returned[owner].append(var + evidence)
    return {
        (s.id, s.name, "\n".join([s.signature, *sorted(returned.get(s.id, ()))]))
        for s in facts.symbols
    }


def _symbol_keys(conn: sqlite3.Connection, path: str) -> set[SymbolKey]:
    facts = db.load_facts(conn, path)
    return symbol_keys(facts) if facts is not None else set()


def _file_names(path: str) -> set[str]:
    """Names under which other files may import ``path``: its stem and its directory."""
    parts = path.split("/")
    stem = parts[-1].split(".", 1)[0]
    names = {stem}
    if len(parts) > 1:
        names.add(parts[-2])
    return names


# The symbol table of each index root, kept between runs in this process and keyed on
# the index generation it matches: an incremental run patches it instead of reading
# every symbol back. Another process changing index.db changes the generation.
_TABLES: dict[str, tuple[str, SymbolTable]] = {}
_TABLES_LOCK = threading.Lock()


def _symbol_table(
    conn: sqlite3.Connection,
    key: str,
    generation: str,
    files: dict[str, str],
    cold: bool,
    changed: list[FileFacts],
    deleted: list[str],
) -> SymbolTable:
    with _TABLES_LOCK:
        cached = _TABLES.pop(key, None)
    if not cold and cached is not None and cached[0] == generation:
        table = cached[1]
        updates: dict[str, list[SymbolRow]] = {path: [] for path in deleted}
        for f in changed:
            updates[f.path] = sorted(map(partial(tuple.__new__, SymbolRow), _symbol_rows(f)))
        table.update(files, updates)
        return table
    # Sorted in Python (cheaper than ORDER BY): first-defined symbols win name lookups.
    # A cold run has every symbol in memory already; otherwise read them back.
    if cold:
        rows = [row for f in changed for row in _symbol_rows(f)]
    else:
        rows = conn.execute(
            "SELECT path, start_line, id, kind, name, parent, is_test FROM symbols"
        ).fetchall()
    rows.sort()
    # tuple.__new__ straight from the rows: NamedTuple._make checks lengths in Python.
    return SymbolTable(files, map(partial(tuple.__new__, SymbolRow), rows))


def _symbol_rows(f: FileFacts) -> list[tuple[str, int, str, str, str, str | None, int]]:
    return [
        (f.path, s.start_line, s.id, s.kind, s.name, s.parent, int(s.is_test)) for s in f.symbols
    ]


def keep_table(key: str, generation: str, table: SymbolTable | None) -> None:
    """Remember ``table`` as matching ``generation`` of the index at ``key``."""
    if table is None:
        return
    with _TABLES_LOCK:
        _TABLES.clear()  # one repository at a time: bounded memory
        _TABLES[key] = (generation, table)


def _prepare_resolution(
    conn: sqlite3.Connection,
    key: str,
    generation: str,
    cold: bool,
    changed: list[FileFacts],
    deleted: list[str],
    old_symbols: dict[str, set[SymbolKey]],
) -> tuple[list[str], SymbolTable | None, Resolver | None, _Reads | None]:
    """The files whose edges the changes can affect through the names they use (sorted),
    the symbol table of the new state and a resolver over it (both None when nothing
    changed), and, for an incremental run, what it read back that the next run may
    reuse. Files that reach a change only through an import are found after
    resolution, by :func:`_follow_exports`."""
    files = {p: lang for p, lang in conn.execute("SELECT path, language FROM files ORDER BY path")}
    reads: _Reads | None = None
    if cold:
        affected = {p for p, lang in files.items() if lang in PARSED_LANGUAGES}
    else:
        if not changed and not deleted:
            return [], None, None, None
        reads = _kept_reads(key, generation, changed, deleted)
        uses = reads.uses_of(conn)
        delta: set[str] = set()
        affected = {f.path for f in changed if f.language in PARSED_LANGUAGES}
        for f in changed:
            new = symbol_keys(f)
            old = old_symbols.get(f.path)
            if old is None:  # a new file
                delta.update(_file_names(f.path))
                delta.update(key[1] for key in new)
                continue
            delta.update(key[1] for key in new ^ old)
        for path in deleted:
            delta.update(_file_names(path))
            delta.update(key[1] for key in old_symbols.get(path, ()))
        if delta:
            affected.update(path for path, names in uses.items() if not delta.isdisjoint(names))
        affected = {p for p in affected if p in files and files[p] in PARSED_LANGUAGES}
    table = _symbol_table(conn, key, generation, files, cold, changed, deleted)
    if cold:
        # Every indexed file was parsed in this run: facts never need reading back.
        in_memory = {f.path: f for f in changed}
        resolver = Resolver(table, in_memory.get)
    else:
        assert reads is not None
        resolver = Resolver(table, partial(reads.facts_of, conn))
    for f in changed:
        resolver.prime(f)
    return sorted(affected), table, resolver, reads


MAX_KEPT_FACTS = 512
"""Files whose facts, read back from index.db to resolve changed files against, a
process keeps for its next incremental run (the files an agent edits resolve against
much the same files run after run)."""


@dataclasses.dataclass(slots=True)
class _Reads:
    """What an incremental run read back from index.db that the next run of the same
    index may reuse, but for the files changed since: files' facts by path (None: no
    such file) and the names each file uses (None: not read yet)."""

    facts: dict[str, FileFacts | None]
    uses: dict[str, frozenset[str]] | None

    def facts_of(self, conn: sqlite3.Connection, path: str) -> FileFacts | None:
        if path not in self.facts:
            self.facts[path] = db.load_facts(conn, path)
        return self.facts[path]

    def uses_of(self, conn: sqlite3.Connection) -> dict[str, frozenset[str]]:
        """The names each file uses, for files that use any (as index.db holds them)."""
        if self.uses is None:
            rows = conn.execute("SELECT path, uses FROM files WHERE uses != ''")
            self.uses = {path: frozenset(uses.split("\n")) for path, uses in rows}
        return self.uses


# Per index root: the generation its reads were of, and the reads (one root at a time).
_READS: dict[str, tuple[str, _Reads]] = {}


def _kept_reads(key: str, generation: str, changed: list[FileFacts], deleted: list[str]) -> _Reads:
    """The reads kept for ``generation`` of the index at ``key``, without those of the
    files changed or deleted since (the uses of changed files are taken from their new
    facts: stored already); nothing when another generation's were kept."""
    with _TABLES_LOCK:
        kept = _READS.pop(key, None)
    if kept is None or kept[0] != generation:
        return _Reads({}, None)
    reads = kept[1]
    for path in deleted:
        reads.facts.pop(path, None)
        if reads.uses is not None:
            reads.uses.pop(path, None)
    for f in changed:
        reads.facts.pop(f.path, None)
        if reads.uses is not None:
            if f.uses:
                reads.uses[f.path] = frozenset(f.uses.split("\n"))
            else:
                reads.uses.pop(f.path, None)
    return reads


def _keep_reads(key: str, generation: str, reads: _Reads | None, changed: list[FileFacts]) -> None:
    """Keep ``reads`` as of ``generation``: the facts read back, not those of the
    ``changed`` files (a later run reads them back as stored); past
    :data:`MAX_KEPT_FACTS` files the longest kept go."""
    if reads is None:
        return
    for f in changed:
        reads.facts.pop(f.path, None)
    while len(reads.facts) > MAX_KEPT_FACTS:
        del reads.facts[next(iter(reads.facts))]
    with _TABLES_LOCK:
        _READS.clear()
        _READS[key] = (generation, reads)


ResolvedFile = tuple[str, list[tuple[str, str, str, float, str]], tuple[int, ...]]


def _resolve_files(
    resolver: Resolver,
    paths: list[str],
    progress: Progress | None = None,
    total: int | None = None,
) -> list[ResolvedFile]:
    """Edge rows and unresolved counts of each file, as stored. ``total``: the files of
    the phase when these are the first of them (the rest resolved elsewhere)."""
    out: list[ResolvedFile] = []
    total = len(paths) if total is None else total
    if progress is not None and total:
        progress(RESOLVE_PHASE, 0, total)
    for done, path in enumerate(paths, 1):
        res = resolver.resolve_file(path)
        # In the order resolution found them (itself fixed): readers sort what they load.
        rows = [(s, d, k, w, path) for (s, d, k), w in res.edges.items()]
        out.append((path, rows, tuple(res.unresolved[r] for r in UNRESOLVED_REASONS)))
        if progress is not None and (done % REPORT_EVERY == 0 or done == total):
            progress(RESOLVE_PHASE, done, total)
    return out


FILE_COST = 5  # what resolving a file costs besides its calls, counted in calls


def _resolution_cost(facts: FileFacts | None) -> int:
    """How much resolving a file costs, roughly, in calls: fitted on pytest and sympy,
    its calls predict it best (a reference is cheap, most resolve from a memo)."""
    return FILE_COST + (len(facts.calls) if facts is not None else 0)


class ForkedShare:
    """The last files of a cold run's resolution, resolved by a forked copy of this
    process (it inherits the symbol table, every file's facts and the resolver), which
    sends back their rows and export digests, pickled, over a pipe.

    The share is the tail of the sorted files, ``HELPER_SHARE`` of their cost: each
    process resolves a run of neighbouring files, which mostly read the same few files'
    facts, so little of what the resolver remembers is worked out twice (measured on
    sympy: the two halves cost 1.00-1.08x the whole). The helper runs only in a process
    with no other thread (see :func:`can_fork`) and never touches the database; if it
    fails, this process resolves the share itself."""

    def __init__(self, resolver: Resolver, paths: list[str], pid: int, pipe: int) -> None:
        self.paths = paths
        self.cpu_seconds = 0.0  # the helper's CPU time, known once its results are in
        self._resolver = resolver
        self._pid = pid  # 0 once reaped
        self._pipe = pipe

    @classmethod
    def start(
        cls, resolver: Resolver, affected: list[str], changed: list[FileFacts]
    ) -> ForkedShare | None:
        """The helper resolving the last share of ``affected``, or None when the run is
        too small or this process may not fork."""
        if len(affected) < HELPER_MIN_FILES or not can_fork():
            return None
        facts = {f.path: f for f in changed}
        costs = [_resolution_cost(facts.get(path)) for path in affected]
        left = sum(costs) * HELPER_SHARE
        split = len(affected)
        while split > 1 and left > 0:
            split -= 1
            left -= costs[split]
        paths = affected[split:]
        try:
            read_end, write_end = os.pipe()
        except OSError:  # out of descriptors: this process resolves every file
            return None
        pid = fork_child(
            partial(_serve_share, resolver, paths, read_end, write_end), HELPER_EXIT_FAILED
        )
        if pid is None:  # no process to be had: resolved here instead
            os.close(read_end)
            os.close(write_end)
            return None
        os.close(write_end)
        return cls(resolver, paths, pid, read_end)

    def results(self) -> tuple[list[ResolvedFile], dict[str, str]]:
        """The share's rows and export digests: the helper's, or worked out here when it
        failed (killed, out of memory)."""
        chunks: list[bytes] = []
        try:
            while chunk := os.read(self._pipe, PIPE_READ_BYTES):
                chunks.append(chunk)
        except BaseException:
            self.cancel()
            raise
        os.close(self._pipe)
        _, status = os.waitpid(self._pid, 0)
        self._pid = 0
        if os.waitstatus_to_exitcode(status) == 0 and chunks:
            got: tuple[list[ResolvedFile], dict[str, str], float]
            got = pickle.loads(b"".join(chunks))
            results, digests, self.cpu_seconds = got
            return results, digests
        results = _resolve_files(self._resolver, self.paths)
        return results, {path: self._resolver.exports(path) for path in self.paths}

    def cancel(self) -> None:
        """Stop the helper (its work is being abandoned)."""
        if not self._pid:
            return
        with contextlib.suppress(OSError):
            os.close(self._pipe)
        with contextlib.suppress(OSError):
            os.kill(self._pid, signal.SIGKILL)
            os.waitpid(self._pid, 0)
        self._pid = 0


PIPE_READ_BYTES = 1 << 20


def _serve_share(
    resolver: Resolver, paths: list[str], read_end: int, pipe: int
) -> None:  # pragma: no cover - the helper (see fork_child)
    """The helper's life: resolve ``paths``, write their rows and digests to ``pipe``."""
    os.close(read_end)
    results = _resolve_files(resolver, paths)
    digests = {path: resolver.exports(path) for path in paths}
    # A forked child's clock starts at zero: its CPU time is the share's.
    got = (results, digests, time.process_time())
    data = memoryview(pickle.dumps(got, protocol=pickle.HIGHEST_PROTOCOL))
    while data:
        data = data[os.write(pipe, data) :]


def _follow_exports(
    conn: sqlite3.Connection,
    resolver: Resolver,
    results: list[ResolvedFile],
    deleted: list[str],
    digests: dict[str, str],
    *,
    cold: bool,
) -> list[ResolvedFile]:
    """Resolve the importers of every file whose exports moved, and theirs in turn,
    until no digest moves (a re-export chain: ``b`` imports ``alpha`` from ``a``, ``c``
    imports it from ``b``). Fills ``digests`` with the digest of every file resolved."""
    # A cold run's helper sent the digests of the files it resolved.
    digests.update((p, resolver.exports(p)) for p, _, _ in results if p not in digests)
    if cold:
        return []
    old = dict(conn.execute("SELECT path, digest FROM exports"))
    moved = [path for path, digest in digests.items() if old.get(path) != digest]
    moved += deleted
    done = set(digests)
    extra: list[ResolvedFile] = []
    importers: dict[str, set[str]] | None = None
    files = resolver.t.files
    new_rows = results
    while moved:
        if importers is None:  # read once, only when some file's exports moved
            importers = defaultdict(set)
            for origin, dst in conn.execute("SELECT origin, dst FROM edges WHERE kind = 'imports'"):
                importers[dst].add(origin)
        for path, rows, _ in new_rows:  # imports this run found (not stored yet)
            for _, dst, kind, _, _ in rows:
                if kind == "imports":
                    importers[dst].add(path)
        nxt = sorted(
            origin
            for origin in set().union(*(importers.get(path, ()) for path in moved))
            if origin not in done and files.get(origin) in PARSED_LANGUAGES
        )
        new_rows = _resolve_files(resolver, nxt)
        extra += new_rows
        done.update(nxt)
        moved = []
        for path in nxt:
            digests[path] = resolver.exports(path)
            if old.get(path) != digests[path]:
                moved.append(path)
    return extra


def _store_edges(conn: sqlite3.Connection, results: list[ResolvedFile], *, replace: bool) -> None:
    if replace:
        conn.executemany("DELETE FROM edges WHERE origin = ?", [(r[0],) for r in results])
    conn.executemany(
        "INSERT INTO edges VALUES (?, ?, ?, ?, ?)", chain.from_iterable(r[1] for r in results)
    )
    conn.executemany(
        "INSERT OR REPLACE INTO unresolved VALUES (?, ?, ?, ?, ?)",
        [(path, *counts) for path, _, counts in results],
    )


def summarize(
    conn: sqlite3.Connection, root: str, git: bool, seconds: float, changed: dict[str, int]
) -> IndexSummary:
    languages = dict(
        conn.execute("SELECT language, COUNT(*) FROM files GROUP BY language ORDER BY language")
    )
    skipped: dict[str, int] = dict(
        conn.execute("SELECT reason, COUNT(*) FROM skipped GROUP BY reason")
    )
    # Only flagged files need a closer look; the rest are parsed when their language is.
    for path, language, is_generated, is_vendored, size, lines in conn.execute(
        "SELECT path, language, is_generated, is_vendored, size, lines FROM files "
        "WHERE is_generated OR is_vendored"
    ):
        probe = FileFacts(
            path=path,
            language=language,
            content_hash="",
            size=size,
            lines=lines,
            is_generated=bool(is_generated),
            is_vendored=bool(is_vendored),
        )
        reason = skip_reason(probe)
        if reason is not None:
            skipped[reason] = skipped.get(reason, 0) + 1
    marks = ",".join("?" * len(PARSED_LANGUAGES))
    (parsed,) = conn.execute(
        "SELECT COUNT(*) FROM files WHERE NOT is_generated AND NOT is_vendored "
        f"AND language IN ({marks})",
        sorted(PARSED_LANGUAGES),
    ).fetchone()
    (n_files,) = conn.execute("SELECT COUNT(*) FROM files").fetchone()
    (n_symbols,) = conn.execute("SELECT COUNT(*) FROM symbols").fetchone()
    edges = dict(conn.execute("SELECT kind, COUNT(*) FROM edges GROUP BY kind ORDER BY kind"))
    (co,) = conn.execute("SELECT COUNT(*) FROM co_changes").fetchone()
    if co:
        edges["co_change"] = co
    errors, replaced = conn.execute(
        "SELECT COALESCE(SUM(parse_error), 0), COALESCE(SUM(decode_replaced), 0) FROM files"
    ).fetchone()
    unresolved_row = conn.execute(
        "SELECT "
        + ", ".join(f"COALESCE(SUM({r}), 0)" for r in UNRESOLVED_REASONS)
        + " FROM unresolved"
    ).fetchone()
    return IndexSummary(
        root=os.path.abspath(root),
        files=n_files,
        parsed_files=parsed,
        symbols=n_symbols,
        edges=edges,
        languages=languages,
        skipped=dict(sorted(skipped.items())),
        parse_errors=errors,
        decode_replaced=replaced,
        unresolved=dict(zip(UNRESOLVED_REASONS, unresolved_row, strict=True)),
        changed=changed,
        git=git,
        seconds=seconds,
    )
