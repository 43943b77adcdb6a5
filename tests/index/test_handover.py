"""A cold index run hands the first focus engine its work (documents and embedding rows
made while the workers parse, the graph's rows kept in memory): the engine and graph it
gives are those made from nothing, and answer the same."""

from __future__ import annotations

import json
import multiprocessing
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from test_focus_state import GOALS as SHOP_GOALS
from test_focus_state import SHOP, _from_nothing

from coderooms import embeddings, tokens, workspace
from coderooms.embeddings import EmbeddingModelUnavailable
from coderooms.focus import salience
from coderooms.focus.documents import SYMBOL_TEXT_CAP_CHARS, SymbolPlace, file_key, unit_rows
from coderooms.focus.documents import file_work as make_file_work
from coderooms.focus.runtime import FocusEngine
from coderooms.index import focus_state, handover, indexer
from coderooms.index.extract import read_and_process
from coderooms.index.facts import FileFacts
from coderooms.index.handover import _PLACE, FirstBuild, file_work
from coderooms.index.handover import unit_rows_in_worker as handover_rows
from coderooms.workspace import Workspace

LONG_BODY = "".join(f"    value_{i} = compute_{i}(alpha, beta)\n" for i in range(400))
FILES = {
    **SHOP,
    # Line breaks other than \n, and a body longer than a symbol document takes.
    "shop/odd.py": "def odd_lines():\r\n    a = 1\x0c    b = 2\u2028    return a\r\n",
    "shop/long.py": f"def long_function(alpha, beta):\n{LONG_BODY}    return alpha\n",
    # Enough files for the index to parse them on a pool.
    **{
        f"pkg{i}/mod{i}.py": f"def helper_{i}(x):\n    return price_{i}(x) + {i}\n"
        for i in range(60)
    },
}
GOALS = (*SHOP_GOALS[:2], "long_function computes value_300 wrongly")


def _answers(engine: FocusEngine) -> list[str]:
    return [
        json.dumps([engine.focus(g, budget=400).to_json(), engine.seek(g).to_json()]) for g in GOALS
    ]


def _same_index(got: FocusEngine, want: FocusEngine) -> None:
    a, b = got.index, want.index
    for kind in ("file_documents", "symbol_documents"):
        mine, theirs = getattr(a, kind), getattr(b, kind)
        assert mine.keys == theirs.keys
        assert np.array_equal(mine.ptr, theirs.ptr)
        assert [mine.terms[i] for i in mine.ids] == [theirs.terms[i] for i in theirs.ids]
        assert np.array_equal(mine.counts, theirs.counts)
    assert a.embedding_keys == b.embedding_keys
    assert a.embeddings is not None and b.embeddings is not None
    assert a.embeddings.dtype == b.embeddings.dtype
    assert np.array_equal(a.embeddings, b.embeddings)  # bit for bit


@pytest.mark.parametrize("workers", [1, 2])
def test_a_first_focus_after_a_cold_run_is_the_engine_built_from_nothing(
    make_repo: Callable[..., Path], workers: int
) -> None:
    root = make_repo(FILES)
    ws = Workspace.open(root)
    ws.index(workers=workers, prepare_focus=True)
    engine = ws.focus_engine()
    assert engine.index.fresh_work == 0  # nothing counted or embedded after the index
    assert (root / ".coderooms" / focus_state.STATE_FILE).exists()  # for the next edit
    from_sql = Workspace.open(root)
    (root / ".coderooms" / workspace.GRAPH_CACHE_FILE).unlink()
    graph = from_sql.graph()
    assert ws.graph() == graph
    assert tuple(ws.graph().edges) == tuple(graph.edges)
    assert [n.id for n in ws.graph().nodes] == [n.id for n in graph.nodes]
    want = _from_nothing(from_sql)
    _same_index(engine, want)
    assert _answers(engine) == _answers(want)


def test_the_handed_graph_is_not_read_back_from_the_database(
    make_repo: Callable[..., Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    root = make_repo(FILES)
    ws = Workspace.open(root)
    ws.index(workers=1, prepare_focus=True)

    def refuse(_conn: object) -> None:
        raise AssertionError("the graph was read back from index.db")

    monkeypatch.setattr(workspace, "_graph_rows", refuse)
    assert len(ws.graph().nodes) > len(FILES)
    monkeypatch.undo()
    other = Workspace.open(root)  # a new process reads the cache the handover wrote
    assert other.graph() == ws.graph()


def test_the_engine_takes_the_keys_the_workers_made_instead_of_hashing_its_nodes(
    make_repo: Callable[..., Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    root = make_repo(FILES)
    ws = Workspace.open(root)
    ws.index(workers=1, prepare_focus=True)

    def refuse(*_args: object) -> bytes:
        raise AssertionError("a node's key was made again")

    for name in ("file_key", "symbol_key", "symbol_embed_key"):
        monkeypatch.setattr(salience.docs, name, refuse)
    monkeypatch.setattr(salience, "_digest", refuse)
    ws.graph()
    engine = FocusEngine.from_reader(
        ws.graph(), ws, tokens.COUNTER, embeddings.embed, known=ws._handed.known_work()
    )
    monkeypatch.undo()
    assert engine.index.fresh_work == 0
    want = _from_nothing(Workspace.open(root))
    assert engine.index.row_keys() == want.index.row_keys()
    _same_index(engine, want)
    assert _answers(engine) == _answers(want)


def test_a_workspace_keeping_aside_writes_the_kept_files_on_a_thread_it_waits_for(
    make_repo: Callable[..., Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    root = make_repo(FILES)
    ws = Workspace.open(root)
    ws.keep_aside = True
    ws.index(workers=1, prepare_focus=True)
    writers: list[str] = []
    save_built, reached, release = focus_state.save_built, threading.Event(), threading.Event()

    def slow_save(*args: Any) -> None:
        writers.append(threading.current_thread().name)
        reached.set()
        release.wait(timeout=30)
        save_built(*args)

    monkeypatch.setattr(focus_state, "save_built", slow_save)
    answers = _answers(ws.focus_engine())  # answered while the built index is unwritten
    assert reached.wait(timeout=30)  # focus.npz is written first, on the same thread
    assert writers == ["coderooms-keep"]
    assert not (root / ".coderooms" / focus_state.BUILT_FILE).exists()
    release.set()
    ws.close()  # waits for the thread
    assert (root / ".coderooms" / focus_state.BUILT_FILE).exists()
    assert (root / ".coderooms" / focus_state.STATE_FILE).exists()
    later = Workspace.open(root).focus_engine()  # a new process restores what was kept
    assert later.index.fresh_work == 0
    assert _answers(later) == answers


def test_a_kept_file_that_cannot_be_written_aside_is_a_line_not_a_traceback(
    make_repo: Callable[..., Path],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    root = make_repo(FILES)
    ws = Workspace.open(root)
    ws.keep_aside = True
    ws.index(workers=1, prepare_focus=True)

    def full_disk(*_args: Any) -> None:
        raise MemoryError("no room to marshal")

    monkeypatch.setattr(focus_state, "save_built", full_disk)
    answers = _answers(ws.focus_engine())
    ws.close()
    err = capsys.readouterr().err
    assert "could not keep the focus state" in err and "MemoryError" in err
    assert "Traceback" not in err
    assert not (root / ".coderooms" / focus_state.BUILT_FILE).exists()
    monkeypatch.undo()
    assert _answers(Workspace.open(root).focus_engine()) == answers  # rebuilt, same answers


def test_a_file_whose_work_did_not_come_is_counted_by_the_engine(
    make_repo: Callable[..., Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    root = make_repo(FILES)
    made = indexer.file_work

    def lose_cart(facts: object, data: bytes) -> object:
        work = made(facts, data)  # type: ignore[arg-type]
        return None if work is not None and work.path == "shop/cart.py" else work

    monkeypatch.setattr(indexer, "file_work", lose_cart)
    ws = Workspace.open(root)
    ws.index(workers=1, prepare_focus=True)
    engine = ws.focus_engine()
    assert engine.index.fresh_work > 0
    want = _from_nothing(Workspace.open(root))
    _same_index(engine, want)
    assert _answers(engine) == _answers(want)


def test_a_file_is_read_once_for_its_facts_and_its_work(
    make_repo: Callable[..., Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    root = make_repo(FILES)
    opened: list[str] = []
    real_open = open

    def counting_open(file: object, *args: object, **kwargs: object) -> object:
        opened.append(str(file))
        return real_open(file, *args, **kwargs)  # type: ignore[call-overload]

    monkeypatch.setattr("builtins.open", counting_open)
    [(facts, work, rows)] = indexer.process_files(str(root), [("shop/cart.py", None)], None, True)
    monkeypatch.undo()
    assert opened == [str(root / "shop" / "cart.py")]
    assert isinstance(facts, FileFacts) and work is not None and rows is None
    text = (root / "shop" / "cart.py").read_text(encoding="utf-8")
    symbols = [SymbolPlace(*_PLACE(s)) for s in facts.symbols]
    want = make_file_work(facts.path, facts.content_hash, text, symbols)
    for field in ("document_keys", "terms", "embedding_keys", "embedding_texts"):
        assert getattr(work, field) == getattr(want, field)
    for field in ("lengths", "ids", "counts"):
        assert np.array_equal(getattr(work, field), getattr(want, field))


def test_the_work_is_made_of_the_bytes_parsed_not_of_the_file_now(
    make_repo: Callable[..., Path],
) -> None:
    root = make_repo(FILES)
    cart = root / "shop" / "cart.py"
    facts, data = read_and_process(str(root), "shop/cart.py")
    cart.write_text("class Cart:\n    pass\n", encoding="utf-8")
    assert isinstance(facts, FileFacts)
    work = file_work(facts, data)
    assert work.path == "shop/cart.py"
    assert work.document_keys[0] == file_key(facts.path, facts.content_hash, "")
    assert len(work.document_keys) > 2  # the symbols parsed, not the one class written since


@pytest.mark.parametrize("prepare_focus", [True, False])
def test_a_cold_run_for_a_first_focus_warms_the_models_while_it_parses(
    make_repo: Callable[..., Path], monkeypatch: pytest.MonkeyPatch, prepare_focus: bool
) -> None:
    root = make_repo(FILES)
    ws = Workspace.open(root)
    warmed_at: list[int] = []
    parsed: list[str] = []
    made = indexer.file_work

    def parse(facts: FileFacts, data: bytes) -> object:
        parsed.append(facts.path)
        return made(facts, data)

    monkeypatch.setattr(indexer, "file_work", parse)
    monkeypatch.setattr(ws, "_warm", lambda: warmed_at.append(len(parsed)))
    ws.index(workers=1, prepare_focus=prepare_focus)
    assert warmed_at == ([0] if prepare_focus else [])  # before the first file, once


def test_only_a_cold_run_hands_work_over(make_repo: Callable[..., Path]) -> None:
    root = make_repo(FILES)
    ws = Workspace.open(root)
    ws.index(workers=1)
    (root / "shop" / "cart.py").write_text("class Cart:\n    pass\n", encoding="utf-8")
    handing = FirstBuild(embeddings.embed)
    indexer.run(str(root), ws._connection(create=False), workers=1, first_build=handing)
    assert handing.rows is None and handing.works == []


def test_an_embedder_that_cannot_load_leaves_the_rows_to_the_engine(
    make_repo: Callable[..., Path],
) -> None:
    root = make_repo(FILES)
    ws = Workspace.open(root)

    def missing() -> workspace.Embedder:
        raise EmbeddingModelUnavailable("/nowhere", "no such directory")

    handing = FirstBuild(missing)
    indexer.run(str(root), ws._connection(create=True), workers=1, first_build=handing)
    known = handing.known_work()
    assert known.embeddings is None and known.embedding_keys == ()
    assert known.file_documents.size == len(handing.works) > 0


def test_a_long_body_is_cut_where_the_engine_cuts_it(make_repo: Callable[..., Path]) -> None:
    root = make_repo({"shop/long.py": FILES["shop/long.py"]})
    ws = Workspace.open(root)
    ws.index(workers=1, prepare_focus=True)
    assert len(LONG_BODY) > SYMBOL_TEXT_CAP_CHARS
    _same_index(ws.focus_engine(), _from_nothing(Workspace.open(root)))


def _no_rows(texts: list[str]) -> None:
    """A worker's embedding task whose model did not load there."""


def _run_on_fork_server_workers(
    make_repo: Callable[..., Path], monkeypatch: pytest.MonkeyPatch, task: handover.RowsTask
) -> tuple[Path, Workspace, FirstBuild]:
    """A cold run of FILES for a first focus, as in a process with another thread alive
    (a server's): the pool's workers are started by a fork server and embed with
    ``task``, and no child is forked (see indexer.can_fork)."""
    root = make_repo(FILES)
    ws = Workspace.open(root)
    monkeypatch.setattr(indexer, "can_fork", lambda: False)
    monkeypatch.setattr(handover, "can_fork", lambda: False)
    handing = FirstBuild(workspace._embedder, task)
    indexer.run(str(root), ws._connection(create=True), workers=2, first_build=handing)
    return root, ws, handing


def test_forked_workers_parse_and_a_child_embeds_aside_once_they_are_gone(
    make_repo: Callable[..., Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    root = make_repo(FILES)
    assert len(FILES) >= max(indexer.PARALLEL_MIN_FILES, indexer.HELPER_MIN_FILES)
    ws = Workspace.open(root)
    helpers: list[tuple[list[object], bool, object]] = []
    asides: list[tuple[list[object], int, object]] = []
    start, aside_start = indexer.ForkedShare.start, handover.RowsAside.start

    def started(*args: Any) -> object:
        # The pool's workers are gone when resolution starts: a helper may fork.
        alive, free = multiprocessing.active_children(), indexer.can_fork()
        helper = start(*args)
        helpers.append((alive, free, helper))
        return helper

    def set_aside(embedder: workspace.Embedder, texts: list[str]) -> object:
        alive = multiprocessing.active_children()
        aside = aside_start(embedder, texts)
        asides.append((alive, len(texts), aside))
        return aside

    monkeypatch.setattr(indexer.ForkedShare, "start", started)
    monkeypatch.setattr(handover.RowsAside, "start", set_aside)
    forked = _alone()
    handing = FirstBuild(workspace._embedder, handover_rows)
    indexer.run(str(root), ws._connection(create=True), workers=2, first_build=handing)
    [(alive, free, helper)] = helpers
    assert alive == [] and (helper is not None or not free)  # another test's thread: no fork
    texts = [text for work in handing.works for text in work.embedding_texts]
    if forked:  # else another test's thread was alive: the workers embedded (see below)
        [(alive, count, aside)] = asides
        assert alive == [] and count == len(texts) and aside is not None
        assert handing._vectors == []  # the workers sent no rows
    known = handing.known_work()
    if forked:
        assert known.embeddings is None and known.later is not None  # made meanwhile
        known = known.settled()
    assert known.embeddings is not None
    assert np.array_equal(known.embeddings, unit_rows(embeddings.embed(texts)))  # bit for bit


def test_workers_a_fork_server_started_embed_as_they_parse(
    make_repo: Callable[..., Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    _, _, handing = _run_on_fork_server_workers(make_repo, monkeypatch, handover_rows)
    assert handing._pending == [] and handing._aside is None  # every text came embedded
    known = handing.known_work()
    assert known.embeddings is not None and known.later is None
    texts = [text for work in handing.works for text in work.embedding_texts]
    assert np.array_equal(known.embeddings, unit_rows(embeddings.embed(texts)))  # bit for bit


THREADS_GONE_S = 20.0  # how long a test waits for other tests' threads to end


def _alone() -> bool:
    """Whether this process may fork a child, once the threads other tests left (a
    workspace's model loading, a worker thread's pool) have ended, waiting for them at
    most :data:`THREADS_GONE_S`."""
    for thread in threading.enumerate():
        if thread is not threading.main_thread():
            thread.join(THREADS_GONE_S)
    return indexer.can_fork()


def _failing_in_a_child(parent: int) -> Callable[[], workspace.Embedder]:
    """An embedder loader whose embedder raises in any process but ``parent``, and
    counts the texts it embeds there."""

    def embed(texts: Any, model: Any = None) -> np.ndarray:
        if os.getpid() != parent:
            raise RuntimeError("no rows in a child")
        _failing_in_a_child.texts += len(texts)  # type: ignore[attr-defined]
        return embeddings.embed(texts)

    _failing_in_a_child.texts = 0  # type: ignore[attr-defined]
    return lambda: embed


def test_rows_the_child_cannot_make_are_made_when_the_engine_needs_them(
    make_repo: Callable[..., Path],
) -> None:
    root = make_repo(FILES)
    ws = Workspace.open(root)
    if not _alone():
        pytest.skip("another test's thread is alive: no child is forked")
    handing = FirstBuild(_failing_in_a_child(os.getpid()), handover_rows)
    indexer.run(str(root), ws._connection(create=True), workers=2, first_build=handing)
    assert handing._aside is not None
    assert _failing_in_a_child.texts == 0  # type: ignore[attr-defined]
    known = handing.known_work().settled()
    texts = [text for work in handing.works for text in work.embedding_texts]
    assert _failing_in_a_child.texts == len(set(texts))  # type: ignore[attr-defined]
    assert known.embeddings is not None
    assert np.array_equal(known.embeddings, unit_rows(embeddings.embed(texts)))  # bit for bit


@pytest.mark.parametrize("how", ["closed", "indexed again", "restored"])
def test_a_child_whose_rows_no_engine_takes_is_stopped(
    make_repo: Callable[..., Path], monkeypatch: pytest.MonkeyPatch, how: str
) -> None:
    root = make_repo(FILES)
    ws = Workspace.open(root)
    ws._warm()  # the models loaded first: no thread of this run's is alive as it ends
    if not _alone():
        pytest.skip("another test's thread is alive: no child is forked")
    ws.index(workers=2, prepare_focus=True)
    assert ws._handed is not None and ws._handed._aside is not None
    pid = ws._handed._aside._pid
    if how == "closed":
        ws.close()
    elif how == "restored":  # the engine came from disk (another process kept it)
        kept = Workspace.open(root).focus_engine()
        monkeypatch.setattr(ws, "_restored", lambda *args: kept)
        assert ws.focus_engine() is kept
        assert ws._handed is None
    else:  # an edit indexed: the cold run's work is for a graph there is no more
        (root / "shop" / "cart.py").write_text("class Cart:\n    pass\n", encoding="utf-8")
        ws.index(workers=2, prepare_focus=True)
        assert ws._handed is None
    with pytest.raises(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)  # reaped: not left to run, nor a zombie


def test_rows_a_worker_cannot_make_are_left_to_the_engine(
    make_repo: Callable[..., Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    root, ws, handing = _run_on_fork_server_workers(make_repo, monkeypatch, _no_rows)
    known = handing.known_work()
    assert known.embeddings is None and known.embedding_keys == ()
    assert known.file_documents.size == len(handing.works) > 0
    engine = FocusEngine.from_reader(ws.graph(), ws, tokens.COUNTER, embeddings.embed, known=known)
    assert engine.index.fresh_embeddings > 0  # the engine embedded them
    _same_index(engine, _from_nothing(Workspace.open(root)))
