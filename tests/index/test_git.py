"""Git signals: commit counts, last change and co-change pairs from one log pass."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from index_fixtures import commit_all, dump, index, write_files

from coderooms.index.gitlog import CO_CHANGE_MAX_FILES, parse_git_log
from coderooms.workspace import Workspace

T0 = 1_700_000_000


def test_commit_counts_last_change_and_co_changes(make_repo: Callable[..., Path]) -> None:
    root = make_repo({"a.py": "a = 1\n", "b.py": "b = 1\n", "c.py": "c = 1\n"}, use_git=True)
    write_files(root, {"a.py": "a = 2\n", "b.py": "b = 2\n"})
    commit_all(root, "a and b", T0 + 100)
    write_files(root, {"a.py": "a = 3\n", "b.py": "b = 3\n"})
    commit_all(root, "a and b again", T0 + 200)
    write_files(root, {"c.py": "c = 2\n"})
    commit_all(root, "c alone", T0 + 300)
    _, graph = index(root)
    signals = {s.path: (s.commit_count, s.last_change) for s in graph.signals}
    assert signals == {"a.py": (3, T0 + 200), "b.py": (3, T0 + 200), "c.py": (2, T0 + 300)}
    # The initial commit touches all three: a-b changed together 3 times, a-c and b-c once.
    assert graph.co_changes == (("a.py", "b.py", 3),)
    assert graph.head_time == T0 + 300


def test_new_commit_refreshes_signals(make_repo: Callable[..., Path]) -> None:
    root = make_repo({"a.py": "a = 1\n"}, use_git=True)
    ws = Workspace.open(root)
    ws.index(workers=1)
    assert {s.path: s.commit_count for s in ws.graph().signals} == {"a.py": 1}
    write_files(root, {"a.py": "a = 2\n"})
    commit_all(root, "more", T0 + 50)
    ws.index(workers=1)
    assert {s.path: s.commit_count for s in ws.graph().signals} == {"a.py": 2}


def test_huge_commits_make_no_pairs() -> None:
    many = "\0".join(f"f{i}.py" for i in range(CO_CHANGE_MAX_FILES + 1))
    log = f"\x01h1 10\0\n{many}\0\x01h2 20\0\n{many}\0"
    indexed = {f"f{i}.py" for i in range(CO_CHANGE_MAX_FILES + 1)}
    signals = parse_git_log(log, indexed)
    assert signals.co_changes == []
    assert signals.commit_counts["f0.py"] == 2
    assert signals.last_change["f0.py"] == 20


def test_directory_without_git_has_no_signals(make_repo: Callable[..., Path]) -> None:
    ws, graph = index(make_repo({"a.py": "a = 1\n"}))
    assert graph.signals == () and graph.co_changes == () and graph.head_time == 0
    assert ws.summary().git is False


def test_a_run_on_a_pool_stores_the_git_signals_of_a_serial_one(
    make_repo: Callable[..., Path],
) -> None:
    """With enough files for a pool, git log is read once the workers are forked: the
    signals stored are those a run in one process stores."""
    files = {f"m{i}/mod{i}.py": f"def f{i}():\n    return {i}\n" for i in range(60)}
    trees = {name: make_repo(files, use_git=True, name=name) for name in ("serial", "pooled")}
    for root in trees.values():
        write_files(root, {"m1/mod1.py": "def f1():\n    return 11\n", "m2/mod2.py": ""})
        commit_all(root, "two together", T0 + 100)
        write_files(root, {"m1/mod1.py": "def f1():\n    return 12\n", "m2/mod2.py": "x = 1\n"})
        commit_all(root, "again", T0 + 200)
    graphs = {}
    for name, workers in (("serial", 1), ("pooled", 2)):
        ws = Workspace.open(trees[name])
        ws.index(workers=workers)
        graphs[name] = ws.graph()
    serial, pooled = graphs["serial"], graphs["pooled"]
    assert (pooled.signals, pooled.co_changes, pooled.head_time) == (
        serial.signals,
        serial.co_changes,
        serial.head_time,
    )
    assert dump(trees["pooled"]) == dump(trees["serial"])
    # The initial commit, of 60 files, is too large to pair any: the two commits after it.
    assert serial.co_changes == (("m1/mod1.py", "m2/mod2.py", 2),)
    assert serial.head_time == T0 + 200
