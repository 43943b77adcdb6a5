"""Re-runs parse only what changed, and end in the same index a cold run builds."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from index_fixtures import ALIASED_REEXPORT, ALPHA_RENAMED, cold_dump, dump, edge_set, write_files

from coderooms.workspace import Workspace

BASE = {
    "app/__init__.py": "",
    "app/models.py": "class User:\n    def save(self):\n        return store(self)\n\n\ndef store(obj):\n    return obj\n",
    "app/views.py": "from app.models import User\n\n\ndef show():\n    return User().save()\n",
    "app/helpers.py": "def fmt(x):\n    return str(x)\n",
    "tests/test_models.py": "from app.models import store\n\n\ndef test_store():\n    assert store(1) == 1\n",
}


@pytest.fixture
def repo(make_repo: Callable[..., Path]) -> Path:
    return make_repo(BASE)


def run(root: Path) -> dict[str, int]:
    return dict(Workspace.open(root).index(workers=1).changed)


def test_no_change_parses_nothing(repo: Path) -> None:
    assert run(repo)["parsed"] == len(BASE)
    assert run(repo) == {"parsed": 0, "unchanged": len(BASE), "deleted": 0, "re_resolved": 0}


def test_touch_without_content_change_parses_nothing(repo: Path) -> None:
    run(repo)
    target = repo / "app/helpers.py"
    target.write_text(target.read_text())
    import os

    os.utime(target, ns=(1, 1))
    assert run(repo)["parsed"] == 0


def test_edit_reparses_one_file_and_matches_cold(repo: Path, tmp_path: Path) -> None:
    run(repo)
    (repo / "app/helpers.py").write_text(
        "def fmt(x):\n    return repr(x)\n\n\ndef extra():\n    return fmt(1)\n"
    )
    changed = run(repo)
    assert changed["parsed"] == 1
    assert dump(repo) == cold_dump(repo, tmp_path)


def test_edit_that_removes_a_called_function_drops_its_edges(repo: Path, tmp_path: Path) -> None:
    run(repo)
    ws = Workspace.open(repo)
    assert ("calls", "app/models.py::User.save", "app/models.py::store") in edge_set(ws.graph())
    (repo / "app/models.py").write_text(
        "class User:\n    def save(self):\n        return store(self)\n"
    )
    ws.index(workers=1)
    graph = ws.graph()
    assert "app/models.py::store" not in {n.id for n in graph.nodes}
    assert not any(e.dst == "app/models.py::store" for e in graph.edges)
    assert dump(repo) == cold_dump(repo, tmp_path)


def test_add_file_resolves_previously_unknown_calls(repo: Path, tmp_path: Path) -> None:
    write_files(repo, {"app/report.py": "def render():\n    return summarize()\n"})
    run(repo)
    write_files(repo, {"lib/stats.py": "def summarize():\n    return 0\n"})
    changed = run(repo)
    assert changed["parsed"] == 1
    graph = Workspace.open(repo).graph()
    # Never imported: only the name ties the call to it.
    assert ("name_match", "app/report.py::render", "lib/stats.py::summarize") in edge_set(graph)
    assert dump(repo) == cold_dump(repo, tmp_path)


def test_add_file_makes_a_unique_name_ambiguous(repo: Path, tmp_path: Path) -> None:
    write_files(
        repo, {"lib/a.py": "def only():\n    pass\n", "app/use.py": "def go():\n    only()\n"}
    )
    run(repo)
    assert {
        (e.dst, e.weight) for e in Workspace.open(repo).graph().edges if e.src == "app/use.py::go"
    } == {("lib/a.py::only", 1.0)}
    write_files(repo, {"other/b.py": "def only():\n    pass\n"})
    run(repo)
    # Two candidates now, equally plausible: the call's weight is shared between them.
    assert {
        (e.kind, e.dst, e.weight)
        for e in Workspace.open(repo).graph().edges
        if e.src == "app/use.py::go"
    } == {("name_match", "lib/a.py::only", 0.5), ("name_match", "other/b.py::only", 0.5)}
    assert dump(repo) == cold_dump(repo, tmp_path)


def test_delete_file_removes_its_nodes_and_edges(repo: Path, tmp_path: Path) -> None:
    run(repo)
    (repo / "app/models.py").unlink()
    changed = run(repo)
    assert changed["deleted"] == 1
    graph = Workspace.open(repo).graph()
    assert not any(n.path == "app/models.py" for n in graph.nodes)
    assert not any(
        "app/models.py" in (e.src, e.dst) or e.dst.startswith("app/models.py::")
        for e in graph.edges
    )
    assert dump(repo) == cold_dump(repo, tmp_path)


def test_rename_moves_nodes_and_reresolves_importers(repo: Path, tmp_path: Path) -> None:
    run(repo)
    (repo / "app/models.py").rename(repo / "app/entities.py")
    (repo / "app/views.py").write_text(
        "from app.entities import User\n\n\ndef show():\n    return User().save()\n"
    )
    (repo / "tests/test_models.py").write_text(
        "from app.entities import store\n\n\ndef test_store():\n    assert store(1) == 1\n"
    )
    run(repo)
    graph = Workspace.open(repo).graph()
    assert ("calls", "app/views.py::show", "app/entities.py::User") in edge_set(graph)
    assert ("imports", "app/views.py", "app/entities.py") in edge_set(graph)
    assert dump(repo) == cold_dump(repo, tmp_path)


def test_reexport_change_reresolves_importers(
    make_repo: Callable[..., Path], tmp_path: Path
) -> None:
    root = make_repo(
        {
            "pkg/__init__.py": "from pkg.a import thing\n",
            "pkg/a.py": "def thing():\n    pass\n",
            "pkg/b.py": "def thing():\n    pass\n",
            "main.py": "from pkg import thing\n\n\ndef go():\n    thing()\n",
        }
    )
    run(root)
    assert ("calls", "main.py::go", "pkg/a.py::thing") in edge_set(Workspace.open(root).graph())
    (root / "pkg/__init__.py").write_text("from pkg.b import thing\n")
    run(root)
    assert ("calls", "main.py::go", "pkg/b.py::thing") in edge_set(Workspace.open(root).graph())
    assert dump(root) == cold_dump(root, tmp_path)


def test_a_module_appearing_under_a_reexport_reresolves_the_importers_behind_it(
    make_repo: Callable[..., Path], tmp_path: Path
) -> None:
    # pkg re-exports alpha from other.three, outside the repo at first; one.py imports it
    # from pkg and never names other or three, so only pkg's exports can tell it to move.
    root = make_repo(
        {
            "pkg/__init__.py": "from other.three import alpha\n",
            "pkg/one.py": "from pkg import alpha\n\n\ndef beta():\n    return alpha()\n",
        }
    )
    run(root)
    (root / "other").mkdir()
    (root / "other/three.py").write_text("")
    run(root)
    assert dump(root) == cold_dump(root, tmp_path)


def test_a_renamed_definition_reresolves_callers_through_an_aliased_reexport(
    make_repo: Callable[..., Path], tmp_path: Path
) -> None:
    root = make_repo(
        {
            **ALIASED_REEXPORT,
            "main.py": "from pkg.one import gamma\n\n\ndef go():\n    return gamma()\n",
        }
    )
    run(root)
    graph = edge_set(Workspace.open(root).graph())
    assert ("calls", "pkg/one.py::beta", "lib.py::alpha") in graph
    assert ("calls", "main.py::go", "lib.py::alpha") in graph
    (root / "lib.py").write_text(ALPHA_RENAMED)
    run(root)
    graph = edge_set(Workspace.open(root).graph())
    assert not any(dst == "lib.py::alpha" for _, _, dst in graph)
    assert dump(root) == cold_dump(root, tmp_path)


def test_file_turning_binary_leaves_the_graph(repo: Path, tmp_path: Path) -> None:
    run(repo)
    (repo / "app/helpers.py").write_bytes(b"\0\1\2binary")
    run(repo)
    ws = Workspace.open(repo)
    assert "app/helpers.py" not in {n.id for n in ws.graph().nodes}
    assert ws.summary().skipped.get("binary") == 1
    assert dump(repo) == cold_dump(repo, tmp_path)


def test_graph_is_cached_until_the_index_changes(repo: Path) -> None:
    ws = Workspace.open(repo)
    ws.index(workers=1)
    first = ws.graph()
    assert ws.graph() is first
    ws.index(workers=1)  # nothing changed
    assert ws.graph() is first
    (repo / "app/helpers.py").write_text("def fmt(x):\n    return x\n")
    ws.index(workers=1)
    assert ws.graph() is not first


def test_a_sequence_of_changes_matches_a_cold_index(repo: Path, tmp_path: Path) -> None:
    steps: list[dict[str, str | None]] = [
        {"app/helpers.py": "from app.models import store\n\n\ndef fmt(x):\n    return store(x)\n"},
        {"app/models.py": None},
        {"app/models.py": "class User:\n    def save(self):\n        return 1\n"},
        {
            "app/views.py": "from app import helpers\n\n\ndef show():\n    return helpers.fmt(1)\n",
            "app/helpers.py": None,
        },
        {"app/helpers.py": "def fmt(x):\n    return x\n\n\ndef fmt(x):\n    return x\n"},
    ]
    run(repo)
    for step in steps:
        for rel, content in step.items():
            if content is None:
                (repo / rel).unlink()
            else:
                write_files(repo, {rel: content})
        run(repo)
        assert dump(repo) == cold_dump(repo, tmp_path)


def _helped_repo_files(modules: int) -> dict[str, str]:
    """A package whose modules re-export, subclass and call each other, and a test per
    module: enough files that a cold run on two workers forks a resolution helper, and
    resolution reaching across the two shares (imports, bases, re-exports, fixtures)."""
    files: dict[str, str] = {"pkg/__init__.py": "from pkg.mod0 import Base0 as Root\n"}
    files["tests/conftest.py"] = (
        "import pytest\nfrom pkg.mod0 import Base0\n\n\n@pytest.fixture\n"
        "def base() -> Base0:\n    return Base0()\n"
    )
    for i in range(modules):
        up = (i + modules // 2) % modules  # a module of the other share
        files[f"pkg/mod{i}.py"] = (
            f"from pkg import Root\nfrom pkg.mod{up} import helper{up}\n\n\n"
            f"class Base{i}({'Root' if i else 'object'}):\n    def run(self):\n"
            f"        return self.step() + helper{up}()\n\n    def step(self):\n"
            f"        return {i}\n\n\ndef helper{i}():\n    return Base{i}().step()\n"
        )
        files[f"tests/test_mod{i}.py"] = (
            f"from pkg.mod{i} import Base{i}\n\n\ndef test_run(base):\n"
            f"    assert Base{i}().run() + base.step() >= 0\n"
        )
    return files


def _stored(root: Path) -> dict[str, object]:
    """What :func:`dump` holds, and the edges in the order they were stored, the
    unresolved counts and every file's exports digest."""
    import sqlite3

    conn = sqlite3.connect(root / ".coderooms" / "index.db")
    try:
        return {
            **dump(root),
            "edges_as_stored": conn.execute("SELECT * FROM edges ORDER BY rowid").fetchall(),
            "exports": conn.execute("SELECT * FROM exports ORDER BY path").fetchall(),
        }
    finally:
        conn.close()


def _index_helped(root: Path, workers: int, monkeypatch: pytest.MonkeyPatch) -> int:
    """Index ``root`` cold on ``workers``; how many files a forked helper resolved."""
    from coderooms.index import indexer

    shares: list[int] = []
    start = indexer.ForkedShare.start

    def counted(
        resolver: object, affected: list[str], changed: list[object]
    ) -> indexer.ForkedShare | None:
        helper = start(resolver, affected, changed)  # type: ignore[arg-type]
        shares.append(len(helper.paths) if helper is not None else 0)
        return helper

    monkeypatch.setattr(indexer.ForkedShare, "start", counted)
    with Workspace.open(root) as ws:
        ws.index(workers=workers)
    return sum(shares)


def test_a_forked_resolution_helper_stores_what_one_process_does(
    make_repo: Callable[..., Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The helper resolves the last share of the files: every edge (in the order
    stored), count and exports digest comes out as from one process."""
    files = _helped_repo_files(40)
    serial = make_repo(files, name="serial")
    parallel = make_repo(files, name="parallel")
    assert _index_helped(serial, 1, monkeypatch) == 0
    helped = _index_helped(parallel, 2, monkeypatch)
    assert 0 < helped < len(files)
    assert _stored(serial) == _stored(parallel)
    edges = {(e[2], e[0], e[1]) for e in dump(parallel)["edges"]}  # type: ignore[union-attr]
    assert ("inherits", "pkg/mod7.py::Base7", "pkg/mod0.py::Base0") in edges
    assert ("calls", "pkg/mod7.py::Base7.run", "pkg/mod27.py::helper27") in edges
    assert ("references", "tests/test_mod39.py::test_run", "tests/conftest.py::base") in edges


def test_a_resolution_helper_that_dies_costs_time_not_edges(
    make_repo: Callable[..., Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """If the forked helper exits without answering, its files are resolved here."""
    import os

    from coderooms.index import indexer

    files = _helped_repo_files(40)
    serial = make_repo(files, name="serial")
    parallel = make_repo(files, name="parallel")
    _index_helped(serial, 1, monkeypatch)

    def die(*_: object) -> None:
        os._exit(indexer.HELPER_EXIT_FAILED)

    monkeypatch.setattr(indexer, "_serve_share", die)
    assert _index_helped(parallel, 2, monkeypatch) > 0
    assert _stored(serial) == _stored(parallel)


def test_a_resolution_helper_that_cannot_fork_costs_time_not_edges(
    make_repo: Callable[..., Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """If no process can be forked for the helper (EAGAIN), the run resolves every file
    here: no error, the same rows, and the helper's pipe is not left open."""
    import errno
    import os

    from coderooms.index import indexer

    files = _helped_repo_files(40)
    serial = make_repo(files, name="serial")
    parallel = make_repo(files, name="parallel")
    _index_helped(serial, 1, monkeypatch)
    start = indexer.ForkedShare.start
    pipes: list[tuple[int, int]] = []
    real_pipe = os.pipe

    def no_fork() -> int:
        raise OSError(errno.EAGAIN, "Resource temporarily unavailable")

    def tracked_pipe() -> tuple[int, int]:
        ends = real_pipe()
        pipes.append(ends)
        return ends

    def unforkable(
        resolver: object, affected: list[str], changed: list[object]
    ) -> indexer.ForkedShare | None:
        with monkeypatch.context() as patched:
            patched.setattr(os, "fork", no_fork)
            patched.setattr(os, "pipe", tracked_pipe)
            helper = start(resolver, affected, changed)  # type: ignore[arg-type]
        assert helper is None
        return helper

    monkeypatch.setattr(indexer.ForkedShare, "start", unforkable)
    with Workspace.open(parallel) as ws:
        ws.index(workers=2)
    assert len(pipes) == 1  # the helper was asked for
    for end in pipes[0]:
        with pytest.raises(OSError):
            os.fstat(end)  # closed
    assert _stored(serial) == _stored(parallel)


def test_parallel_and_serial_runs_build_the_same_index(make_repo: Callable[..., Path]) -> None:
    files = {f"m{i}/mod{i}.py": f"def f{i}():\n    return f{(i + 1) % 60}()\n" for i in range(60)}
    serial = make_repo(files, name="serial")
    parallel = make_repo(files, name="parallel")
    Workspace.open(serial).index(workers=1)
    Workspace.open(parallel).index(workers=2)
    assert dump(serial) == dump(parallel)


def test_parallel_cold_run_resolves_like_a_serial_one(make_repo: Callable[..., Path]) -> None:
    """Enough files for a forked helper to resolve half of them: classes, inheritance,
    imports, method calls and tests must come out exactly as from one process."""
    files: dict[str, str] = {"pkg/__init__.py": "", "tests/__init__.py": ""}
    for i in range(30):
        base = f"Base{i - 1}" if i else "object"
        head = f"from pkg.mod{i - 1} import Base{i - 1}, helper{i - 1}\n" if i else ""
        files[f"pkg/mod{i}.py"] = (
            f"{head}\n\nclass Base{i}({base}):\n    def run(self):\n"
            f"        return self.step() + helper{i}()\n\n    def step(self):\n"
            f"        return {i}\n\n\ndef helper{i}():\n"
            f"    return {f'helper{i - 1}()' if i else '0'}\n"
        )
        files[f"tests/test_mod{i}.py"] = (
            f"from pkg.mod{i} import Base{i}\n\n\ndef test_run():\n"
            f"    assert Base{i}().run() >= 0\n"
        )
    serial = make_repo(files, name="serial")
    parallel = make_repo(files, name="parallel")
    Workspace.open(serial).index(workers=1)
    Workspace.open(parallel).index(workers=2)
    assert dump(serial) == dump(parallel)
    edges = {(e[2], e[0], e[1]) for e in dump(parallel)["edges"]}  # type: ignore[union-attr]
    assert ("inherits", "pkg/mod7.py::Base7", "pkg/mod6.py::Base6") in edges
    assert ("calls", "pkg/mod7.py::Base7.run", "pkg/mod7.py::Base7.step") in edges
    assert ("tests", "tests/test_mod7.py::test_run", "pkg/mod7.py::Base7") in edges


def test_cold_build_leaves_the_schema_indexes_in_place(repo: Path) -> None:
    """A cold build drops the secondary indexes while it loads and must rebuild them."""
    import sqlite3

    def indexes() -> list[tuple[str, str]]:
        conn = sqlite3.connect(repo / ".coderooms" / "index.db")
        try:
            return conn.execute(
                "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL "
                "ORDER BY name"
            ).fetchall()
        finally:
            conn.close()

    Workspace.open(repo).index(workers=1)
    assert [name for name, _ in indexes()] == ["edges_by_origin", "symbols_by_path"]
    (repo / "app/helpers.py").write_text("def fmt(x):\n    return x\n")
    Workspace.open(repo).index(workers=1)  # incremental: the indexes are used, not dropped
    assert [name for name, _ in indexes()] == ["edges_by_origin", "symbols_by_path"]


def test_graph_cache_file_follows_the_index(repo: Path) -> None:
    Workspace.open(repo).index(workers=1)
    before = Workspace.open(repo).graph()
    assert (repo / ".coderooms" / "graph.cache").is_file()
    (repo / "app/helpers.py").write_text(
        "def fmt(x):\n    return x\n\n\ndef more():\n    return 2\n"
    )
    Workspace.open(repo).index(workers=1)
    after = Workspace.open(repo).graph()  # a new process would read the cache file too
    assert "app/helpers.py::more" in {n.id for n in after.nodes}
    assert "app/helpers.py::more" not in {n.id for n in before.nodes}


def test_damaged_graph_cache_is_ignored(repo: Path) -> None:
    Workspace.open(repo).index(workers=1)
    expected = Workspace.open(repo).graph()
    (repo / ".coderooms" / "graph.cache").write_bytes(b"\x00garbage")
    assert Workspace.open(repo).graph() == expected


def test_indexing_from_a_thread_matches_the_main_thread(make_repo: Callable[..., Path]) -> None:
    """A server indexes off its event loop: workers are then started without fork."""
    import threading

    files = {f"m{i}/mod{i}.py": f"def f{i}():\n    return f{(i + 1) % 60}()\n" for i in range(60)}
    main = make_repo(files, name="main")
    threaded = make_repo(files, name="threaded")
    Workspace.open(main).index(workers=2)
    errors: list[BaseException] = []

    def run_index() -> None:
        try:
            Workspace.open(threaded).index(workers=2)
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    thread = threading.Thread(target=run_index)
    thread.start()
    thread.join()
    assert errors == []
    assert dump(main) == dump(threaded)


def _table_state(table: object) -> dict[str, object]:
    """The lookups of a symbol table, with empty entries dropped."""

    def clean(d: dict[str, object]) -> dict[str, object]:
        out = {}
        for k, v in d.items():
            v = clean(v) if isinstance(v, dict) else v
            if v:
                out[k] = v
        return out

    keys = (
        "sym",
        "by_name",
        "file_top",
        "dir_top",
        "children",
        "_nested",
        "files",
        "py_modules",
        "py_packages",
        "py_local",
        "stems",
        "dirs",
    )
    return {
        k: clean(dict(getattr(table, k)))
        if isinstance(getattr(table, k), dict)
        else getattr(table, k)
        for k in keys
    }


def test_patched_symbol_table_equals_a_fresh_one(repo: Path) -> None:
    import sqlite3

    from coderooms.index import indexer
    from coderooms.index.resolve import SymbolRow, SymbolTable

    run(repo)
    write_files(repo, {"app/extra.py": "def store(x):\n    return x\n\n\nclass User:\n    pass\n"})
    run(repo)  # builds and keeps the table
    ((_, kept),) = indexer._TABLES.values()
    (repo / "app/helpers.py").unlink()
    write_files(
        repo, {"app/models.py": "def store(obj):\n    return obj\n\n\ndef fmt():\n    pass\n"}
    )
    run(repo)  # patches the kept table
    ((_, patched),) = indexer._TABLES.values()
    assert patched is kept
    conn = sqlite3.connect(repo / ".coderooms" / "index.db")
    files = dict(conn.execute("SELECT path, language FROM files ORDER BY path"))
    rows = sorted(
        conn.execute("SELECT path, start_line, id, kind, name, parent, is_test FROM symbols")
    )
    fresh = SymbolTable(files, (SymbolRow(*r) for r in rows))
    assert _table_state(patched) == _table_state(fresh)


def test_an_index_from_before_type_evidence_extracts_every_file_again(repo: Path) -> None:
    import sqlite3

    run(repo)
    db = repo / ".coderooms" / "index.db"
    conn = sqlite3.connect(db)
    # As an index written before migration 3: facts without type evidence.
    conn.execute("DELETE FROM schema_migrations WHERE version = 3")
    conn.commit()
    conn.close()
    assert run(repo)["parsed"] == len(BASE)
    assert run(repo)["parsed"] == 0


def test_a_changed_return_type_reaches_callers_of_the_result(repo: Path, tmp_path: Path) -> None:
    """``make().spin()`` binds through what ``make`` returns: when a return statement or
    annotation changes, the callers resolve again though no symbol came or went."""
    write_files(
        repo,
        {
            "lib/shapes.py": (
                "class Wheel:\n    def spin(self):\n        pass\n"
                "class Top:\n    def spin(self):\n        pass\n"
                "def make():\n    return Wheel()\n"
                "def typed() -> Wheel:\n    pass\n"
            ),
            "app/use.py": (
                "from lib.shapes import make, typed\n\n"
                "def go():\n    make().spin()\n"
                "def again():\n    typed().spin()\n"
            ),
        },
    )
    run(repo)
    write_files(
        repo,
        {
            "lib/shapes.py": (
                "class Wheel:\n    def spin(self):\n        pass\n"
                "class Top:\n    def spin(self):\n        pass\n"
                "def make():\n    return Top()\n"
                "def typed() -> Top:\n    pass\n"
            )
        },
    )
    run(repo)
    calls = edge_set(Workspace.open(repo).graph())
    assert ("calls", "app/use.py::go", "lib/shapes.py::Top.spin") in calls
    assert ("calls", "app/use.py::again", "lib/shapes.py::Top.spin") in calls
    assert dump(repo) == cold_dump(repo, tmp_path)


def test_a_changed_all_reaches_star_importers(repo: Path, tmp_path: Path) -> None:
    write_files(
        repo,
        {
            "lib/api.py": "__all__ = ['open_it']\n\ndef open_it():\n    pass\n",
            "app/use.py": "from lib.api import *\n\ndef go():\n    open_it()\n",
        },
    )
    run(repo)
    write_files(repo, {"lib/api.py": "__all__ = []\n\ndef open_it():\n    pass\n"})
    run(repo)
    calls = edge_set(Workspace.open(repo).graph())
    assert ("calls", "app/use.py::go", "lib/api.py::open_it") not in calls
    assert dump(repo) == cold_dump(repo, tmp_path)


def test_decorating_a_fixture_resolves_its_users_again(
    make_repo: Callable[..., Path], tmp_path: Path
) -> None:
    plain = "class Pytester:\n    def run(self):\n        pass\n\n\ndef pytester() -> Pytester:\n"
    plain += "    return Pytester()\n"
    root = make_repo(
        {
            "plug.py": plain,
            "tests/test_it.py": "def test_run(pytester):\n    pytester.run()\n",
        }
    )
    run(root)
    edges = edge_set(Workspace.open(root).graph(), "references")
    assert ("references", "tests/test_it.py::test_run", "plug.py::pytester") not in edges
    (root / "plug.py").write_text(
        "import pytest\n\n" + plain.replace("def pytester", "@pytest.fixture\ndef pytester")
    )
    run(root)
    edges = edge_set(Workspace.open(root).graph(), "references", "calls")
    assert ("references", "tests/test_it.py::test_run", "plug.py::pytester") in edges
    assert ("calls", "tests/test_it.py::test_run", "plug.py::Pytester.run") in edges
    assert dump(root) == cold_dump(root, tmp_path)


def test_runs_that_reuse_what_the_run_before_read_back_match_cold(
    repo: Path, tmp_path: Path
) -> None:
    """Each run resolves against facts and uses the run before read back, but for the
    files changed since: a name a file starts using, then a file defining it, then an
    edit of a file read back before, each end as a cold run does."""
    from coderooms.index import indexer

    run(repo)
    write_files(repo, {"app/helpers.py": "def fmt(x):\n    return repr(x)\n"})
    run(repo)  # the first incremental run: it keeps what it read back
    write_files(repo, {"app/views.py": "def show():\n    return fresh_name()\n"})
    run(repo)
    write_files(repo, {"app/extra.py": "def fresh_name():\n    return store(1)\n"})
    run(repo)
    assert ("name_match", "app/views.py::show", "app/extra.py::fresh_name") in edge_set(
        Workspace.open(repo).graph()
    )
    ((_, reads),) = indexer._READS.values()
    assert reads.uses is not None and "fresh_name" in reads.uses["app/views.py"]
    assert reads.facts  # read back for this run, kept for the next
    write_files(repo, {"app/models.py": "def store(obj):\n    return [obj]\n"})
    run(repo)
    assert dump(repo) == cold_dump(repo, tmp_path)
