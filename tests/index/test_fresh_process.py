"""A new process answers its first focus from what the index kept, making no more than
that answer reads: the nodes it names, not every node of the graph; no edge at all; and
only the command family it runs. The answer is the one a warm workspace gives."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from coderooms import workspace
from coderooms.focus import salience
from coderooms.focus.graph import CodeNode, NodeTable
from coderooms.index import indexer
from coderooms.workspace import Workspace

MODULES = 30
FUNCTIONS = 8
GOAL = "route_parcel sends heavy parcels the wrong way"
LAYOUT_GOALS = ("route the heavy parcel", "balance the ledger sum", "parcels and where they go")


def _files() -> dict[str, str]:
    """One module the goal is about among many it is not."""
    files = {
        "post/__init__.py": "",
        "post/parcels.py": (
            '"""Parcels and where they go."""\n\n\ndef route_parcel(weight):\n'
            "    return 'heavy' if weight > 10 else 'light'\n"
        ),
    }
    for m in range(MODULES):
        body = "".join(
            f"def balance_{m}_{f}(ledger):\n    return sum(ledger) * {f}\n\n\n"
            for f in range(FUNCTIONS)
        )
        files[f"post/ledger_{m}.py"] = f'"""Ledger {m}."""\n\n\n{body}'
    return files


def _indexed(make_repo: Callable[..., Path]) -> tuple[Path, str]:
    root = make_repo(_files())
    with Workspace.open(root) as ws:
        ws.index(workers=1)
        warm = json.dumps(ws.focus(GOAL, budget=600).to_json())
    return root, warm


def test_a_new_process_makes_only_the_nodes_its_first_answer_reads(
    make_repo: Callable[..., Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    root, warm = _indexed(make_repo)
    made: list[str] = []

    def counted(*fields: object) -> CodeNode:
        node = CodeNode(*fields)  # type: ignore[arg-type]
        made.append(node.id)
        return node

    monkeypatch.setattr(workspace, "CodeNode", counted)
    with Workspace.open(root) as ws:
        answer = json.dumps(ws.focus(GOAL, budget=600).to_json())
        first = list(made)
        total = len(ws.graph().nodes)
        assert isinstance(ws.graph().nodes, NodeTable)
        engine = ws.focus_engine()
        scores = engine.salience(GOAL).scores
        ranked = {engine.index.nodes[row].id for row in np.flatnonzero(scores > 0)}
    assert answer == warm
    assert total == 3 + MODULES * (1 + FUNCTIONS)
    # the nodes the ranking scored (the answer and its ignored tail are made of them),
    # not every node of the graph
    assert 0 < len(first) == len(set(first)) <= len(ranked) < total
    assert set(first) <= ranked
    assert "post/parcels.py::route_parcel" in first  # what the goal names was made


def test_a_new_process_ranks_from_the_kept_index_without_reading_an_edge(
    make_repo: Callable[..., Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    root, warm = _indexed(make_repo)

    def refuse(*_: object) -> None:
        raise AssertionError("the edges were read")

    monkeypatch.setattr(workspace, "_edges", refuse)
    monkeypatch.setattr(workspace, "_edge_columns", refuse)
    with Workspace.open(root) as ws:
        assert json.dumps(ws.focus(GOAL, budget=600).to_json()) == warm


def test_a_graph_read_from_the_cache_equals_the_graph_read_whole(
    make_repo: Callable[..., Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    root, _ = _indexed(make_repo)
    with Workspace.open(root) as ws:
        cached = ws.graph()
    monkeypatch.setattr(workspace, "_read_cache", lambda *_: None)
    with Workspace.open(root) as ws:
        whole = ws.graph()
    assert cached.nodes == whole.nodes
    assert list(cached.edges) == list(whole.edges)
    assert (cached.signals, cached.co_changes) == (whole.signals, whole.co_changes)


def test_a_graph_cache_of_another_layout_is_read_as_none(make_repo: Callable[..., Path]) -> None:
    root, _ = _indexed(make_repo)
    cache = root / ".coderooms" / workspace.GRAPH_CACHE_FILE
    with Workspace.open(root) as ws:
        generation = ws.generation()
    assert workspace._read_cache(str(cache), generation) is not None
    head = workspace.marshal.dumps(("coderooms-graph-4-py3.11", generation))
    cache.write_bytes(workspace._CACHE_HEAD_SIZE.pack(len(head)) + head + b"\0" * 64)
    assert workspace._read_cache(str(cache), generation) is None
    cache.write_bytes(cache.read_bytes()[:3])
    assert workspace._read_cache(str(cache), generation) is None


def test_a_node_table_makes_each_node_once_and_compares_as_its_nodes() -> None:
    nodes = [
        CodeNode(f"m{i}.py", "file", f"m{i}.py", f"m{i}.py", f"m{i}.py", "python", 1, 2)
        for i in range(4)
    ]
    calls: list[int] = []

    def make(at: int) -> CodeNode:
        calls.append(at)
        return nodes[at]

    table = NodeTable([n.id for n in nodes], ["file"] * 4, make)
    assert table[2] is nodes[2] and table[-2] is nodes[2] and calls == [2]
    assert table == tuple(nodes) and list(table[1:3]) == nodes[1:3]
    assert sorted(calls) == [0, 1, 2, 3]  # comparing made the rest, each once
    with pytest.raises(IndexError):
        table[4]
    with pytest.raises(ValueError):
        NodeTable(["a"], [], make)


def test_pagerank_in_place_is_the_formula_bit_for_bit(make_repo: Callable[..., Path]) -> None:
    root, _ = _indexed(make_repo)
    with Workspace.open(root) as ws:
        index = ws.focus_engine().index
    rng = np.random.default_rng(16)
    seeds = np.where(rng.random(len(index.nodes)) < 0.1, rng.random(len(index.nodes)), 0.0)
    seeds[0] = 1.0
    restart = index.config.restart
    transition_t, has_out = index.spreading()
    p = seeds / seeds.sum()
    r = p.copy()
    for _ in range(salience.PAGERANK_ITERATIONS):
        nxt = restart * p + (1.0 - restart) * (transition_t @ r + float(r[~has_out].sum()) * p)
        done = float(np.abs(nxt - r).sum()) < salience.PAGERANK_TOLERANCE
        r = nxt
        if done:
            break
    assert salience._personalized_pagerank(index, seeds).tobytes() == r.tobytes()


def _focus_in_new_process(
    program: str, root: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """``program`` (which runs the console script) as ``coderooms focus GOAL --json`` on
    ``root`` (named: a fixture repository is no git repository, found from its inside)."""
    return subprocess.run(
        [sys.executable, "-c", program, "focus", GOAL, "--json", "--budget", "600", "--repo", "."],
        capture_output=True,
        text=True,
        cwd=root,
        env=env,
    )


def test_the_focus_command_loads_its_own_family_alone(make_repo: Callable[..., Path]) -> None:
    root, warm = _indexed(make_repo)
    program = (
        "import atexit, sys; from coderooms import launch; sys.argv = ['coderooms', *sys.argv[1:]]\n"
        "def report():\n"
        "    loaded = sorted(m for m in sys.modules if m.startswith(('coderooms.cli.',"
        " 'coderooms.rooms', 'coderooms.store', 'coderooms.index.indexer', 'model2vec',"
        " 'coderooms.index.handover', 'coderooms.index.extract', 'pathspec', 'multiprocessing')))\n"
        "    print(loaded, file=sys.stderr)\n"
        "atexit.register(report)  # a one-shot command ends with the exit functions run\n"
        "launch.main()"
    )
    done = _focus_in_new_process(program, root)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == json.loads(warm)
    loaded = done.stderr.strip().splitlines()[-1]
    assert loaded == "['coderooms.cli.app', 'coderooms.cli.focus_cmds', 'coderooms.cli.progress']"


def test_a_new_process_reads_the_ranks_the_one_before_kept_decoded(
    make_repo: Callable[..., Path],
) -> None:
    root, warm = _indexed(make_repo)
    kept = root / ".coderooms" / "o200k-ascii.ranks"
    kept.unlink(missing_ok=True)  # as if indexed by a coderooms that kept none
    (root / ".coderooms" / "focus-tokens.npz").unlink()  # the first process counts
    program = (
        "import os, sys; from coderooms import launch, tokens\n"
        "sys.argv = ['coderooms', *sys.argv[1:]]\n"
        "if os.environ['NO_DECODE']:\n"
        "    tokens._load_ranks = lambda path: os._exit(3)  # decoded: the ranks were not kept\n"
        "launch.main()"
    )
    answers = []
    for refuse in ("", "1"):
        done = _focus_in_new_process(program, root, {**os.environ, "NO_DECODE": refuse})
        assert done.returncode == 0, done.stderr
        answers.append(json.loads(done.stdout))
        assert kept.is_file()
    assert answers == [json.loads(warm)] * 2


def test_an_unchanged_index_runs_no_indexer_for_the_focus_command(
    make_repo: Callable[..., Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    from coderooms.cli.focus_cmds import indexed_workspace

    root, _ = _indexed(make_repo)

    def refuse(*_: object, **__: object) -> None:
        raise AssertionError("the indexer ran")

    monkeypatch.setattr(indexer, "run", refuse)
    ws = indexed_workspace(str(root))
    assert "def route_parcel" in ws.focus(GOAL, budget=600).context()
    ws.close()


def test_an_index_lays_its_walk_out_from_its_second_walk_and_answers_the_same(
    make_repo: Callable[..., Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    root = make_repo(_files())
    with Workspace.open(root) as ws:
        ws.index(workers=1)
        plain = [json.dumps(ws.focus(goal, budget=600).to_json()) for goal in LAYOUT_GOALS]
    monkeypatch.setattr(salience, "LAYOUT_MIN_ROWS", 0)
    with Workspace.open(root) as ws:
        index = ws.focus_engine().index
        answers = [json.dumps(ws.focus(LAYOUT_GOALS[0], budget=600).to_json())]
        assert index._layout is None  # one walk: in the graph's own order
        answers += [json.dumps(ws.focus(goal, budget=600).to_json()) for goal in LAYOUT_GOALS[1:]]
        assert index._layout is not None
    assert answers == plain


def test_a_first_focus_ends_without_teardown_with_its_index_closed_and_files_kept(
    make_repo: Callable[..., Path], tmp_path: Path
) -> None:
    """The one-shot exit skips freeing the process's objects, not its duties: the
    workspace is closed (no write-ahead log left), the kept files are written, and
    the exit functions run; the answer is the one a workspace in this process gives."""
    root = make_repo(_files())
    marker = tmp_path / "exit-functions-ran"
    program = (
        "import atexit, pathlib, sys; from coderooms import launch\n"
        "sys.argv = ['coderooms', *sys.argv[1:]]\n"
        f"atexit.register(pathlib.Path({str(marker)!r}).touch)\n"
        "launch.main()"
    )
    done = _focus_in_new_process(program, root)
    assert done.returncode == 0, done.stderr
    kept = root / ".coderooms"
    assert not (kept / "index.db-wal").exists()
    assert {"focus.npz", "focus-built.bin", "graph.cache"} <= {p.name for p in kept.iterdir()}
    assert marker.exists()
    with Workspace.open(str(root)) as ws:
        assert json.loads(done.stdout) == json.loads(
            json.dumps(ws.focus(GOAL, budget=600).to_json())
        )
