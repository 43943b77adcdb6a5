"""The Workspace surface: errors, the database and its migrations."""

from __future__ import annotations

import os
import shutil
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest
from index_fixtures import ALIASED_REEXPORT, ALPHA_RENAMED, cold_dump, dump, git, index

from coderooms.errors import CoderoomsError
from coderooms.focus.packing import Loaded
from coderooms.index import db
from coderooms.index.errors import (
    IndexDatabaseError,
    IndexTooNew,
    IndexUnopenable,
    NotIndexed,
    UnknownNode,
    WorkspaceNotADirectory,
    WorkspaceNotFound,
)
from coderooms.workspace import Workspace


def test_missing_path_is_a_typed_error(tmp_path: Path) -> None:
    with pytest.raises(WorkspaceNotFound) as err:
        Workspace.open(tmp_path / "nope")
    assert isinstance(err.value, CoderoomsError)
    assert "no such directory" in str(err.value)


def test_file_path_is_a_typed_error(tmp_path: Path) -> None:
    f = tmp_path / "f.py"
    f.write_text("")
    with pytest.raises(WorkspaceNotADirectory):
        Workspace.open(f)


def test_graph_before_index_says_to_index(tmp_path: Path) -> None:
    with pytest.raises(NotIndexed) as err:
        Workspace.open(tmp_path).graph()
    assert "coderooms index" in str(err.value)


def test_unknown_node_and_path_outside_root(make_repo: Callable[..., Path]) -> None:
    ws, _ = index(make_repo({"a.py": "def a():\n    pass\n"}))
    with pytest.raises(UnknownNode):
        ws.node("a.py::nope")
    with pytest.raises(UnknownNode):
        ws.read_text("../../etc/passwd")


def test_source_of_a_symbol_and_of_a_file(make_repo: Callable[..., Path]) -> None:
    text = "import os\n\n\nclass A:\n    def m(self):\n        return 1\n"
    ws, _ = index(make_repo({"a.py": text}))
    assert ws.source_of("a.py::A.m") == "    def m(self):\n        return 1\n"
    assert ws.source_of("a.py") == text
    with pytest.raises(UnknownNode):
        ws.source_of("a.py::B")


def test_migrations_are_recorded(make_repo: Callable[..., Path]) -> None:
    root = make_repo({"a.py": ""})
    index(root)
    conn = sqlite3.connect(root / ".coderooms" / "index.db")
    rows = conn.execute("SELECT version, name FROM schema_migrations ORDER BY version").fetchall()
    assert rows == [(v, n) for v, n, _ in db.MIGRATIONS]


def test_an_index_from_before_the_exports_digests_is_upgraded_in_place(
    make_repo: Callable[..., Path], tmp_path: Path
) -> None:
    root = make_repo(ALIASED_REEXPORT)
    index(root)
    conn = sqlite3.connect(root / ".coderooms" / "index.db")
    conn.execute("DROP TABLE exports")  # as schema version 1 left it
    conn.execute("DELETE FROM schema_migrations WHERE version = 2")
    conn.commit()
    conn.close()
    (root / "lib.py").write_text(ALPHA_RENAMED)
    ws = Workspace.open(root)
    ws.index(workers=1)  # no digests recorded: every re-resolved file counts as moved
    ws.close()
    assert dump(root) == cold_dump(root, tmp_path)
    conn = sqlite3.connect(root / ".coderooms" / "index.db")
    assert conn.execute("SELECT COUNT(*) FROM exports").fetchone()[0] > 0


def test_newer_schema_is_refused(make_repo: Callable[..., Path]) -> None:
    root = make_repo({"a.py": ""})
    index(root)
    conn = sqlite3.connect(root / ".coderooms" / "index.db")
    conn.execute("INSERT INTO schema_migrations VALUES (999, 'future', 'x')")
    conn.commit()
    conn.close()
    with pytest.raises(IndexTooNew):
        Workspace.open(root).index()


def test_damaged_database_is_a_typed_error(make_repo: Callable[..., Path]) -> None:
    root = make_repo({"a.py": ""})
    (root / ".coderooms").mkdir()
    (root / ".coderooms" / "index.db").write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(IndexDatabaseError) as err:
        Workspace.open(root).index()
    assert "delete it" in str(err.value)


def test_an_index_that_cannot_be_opened_is_not_called_damaged(
    make_repo: Callable[..., Path],
) -> None:
    # it said "delete it and run coderooms index again", also of a sound index on a
    # read-only mount
    root = make_repo({"a.py": ""})
    (root / ".coderooms" / "index.db").mkdir(parents=True)
    with pytest.raises(IndexUnopenable) as err:
        Workspace.open(root).index()
    assert "for writing: it is a directory" in str(err.value)
    assert "delete" not in str(err.value)


def test_index_dir_is_never_indexed(make_repo: Callable[..., Path]) -> None:
    root = make_repo({"a.py": "def a():\n    pass\n"})
    ws, graph = index(root)
    ws.index()
    assert {n.path for n in ws.graph().nodes} == {"a.py"}


def test_summary_json_form(make_repo: Callable[..., Path]) -> None:
    root = make_repo({"a.py": "def a():\n    b()\n\n\ndef b():\n    pass\n"})
    summary = Workspace.open(root).index(workers=1)
    data = summary.to_json()
    assert data["files"] == 1 and data["symbols"] == 2
    assert data["edges"] == {"calls": 1, "contains": 2}
    assert data["languages"] == {"python": 1}
    assert data["skipped"] == {}
    assert set(data) >= {
        "seconds",
        "unresolved",
        "parse_errors",
        "decode_replaced",
        "changed",
        "git",
    }


def test_a_refresh_indexes_the_edit_without_summarizing_the_index(
    make_repo: Callable[..., Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    from coderooms.index import indexer

    root = make_repo({"a.py": "def a():\n    pass\n"})
    ws = Workspace.open(root)
    assert ws.index(workers=1).files == 1  # an index run says what the index holds

    def refuse(*_: object, **__: object) -> None:
        raise AssertionError("summarized")

    monkeypatch.setattr(indexer, "summarize", refuse)
    (root / "b.py").write_text("def b():\n    pass\n")
    assert ws.refresh() is True
    assert {n.id for n in ws.graph().nodes} == {"a.py", "a.py::a", "b.py", "b.py::b"}


def test_repository_git_refuses_is_a_typed_error(
    make_repo: Callable[..., Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    from coderooms.index.errors import WorkspaceUnreadable

    if os.geteuid() != 0:
        pytest.skip("needs to hand the repository to another owner")
    root = make_repo({"a.py": "x = 1\n"}, use_git=True)
    for path in [root, *root.rglob("*")]:
        os.lchown(path, 12345, 12345)  # git now refuses: "dubious ownership"
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", os.devnull)
    with pytest.raises(WorkspaceUnreadable) as err:
        Workspace.open(root).index()
    assert "dubious ownership" in str(err.value)


def test_foreign_database_is_a_typed_error_when_reading(make_repo: Callable[..., Path]) -> None:
    root = make_repo({"a.py": "x = 1\n"})
    (root / ".coderooms").mkdir()
    conn = sqlite3.connect(root / ".coderooms" / "index.db")
    # Recorded as migrated, but none of the tables are there.
    conn.execute(
        "CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT, applied_at TEXT)"
    )
    conn.execute("INSERT INTO schema_migrations VALUES (1, 'code graph', 'x')")
    conn.commit()
    conn.close()
    with pytest.raises(IndexDatabaseError):
        Workspace.open(root).graph()
    with pytest.raises(IndexDatabaseError):
        Workspace.open(root).index()


# --- staying current -----------------------------------------------------------------


def test_focus_seek_and_impact_see_edits_made_since_the_index(
    make_repo: Callable[..., Path],
) -> None:
    root = make_repo({"pkg/a.py": "def helper(x):\n    return x * 2\n"})
    ws = Workspace.open(root)
    ws.index()
    assert ws.refresh() is False  # nothing moved: no index run
    generation = ws.generation()
    assert ws.refresh() is False and ws.generation() == generation
    (root / "pkg/a.py").write_text(
        "def helper(x):\n    return x * 3\n\n\ndef frobnicate():\n    pass\n"
    )
    (root / "pkg/b.py").write_text(
        "from pkg.a import frobnicate\n\n\ndef run():\n    frobnicate()\n"
    )
    found = ws.focus("frobnicate", budget=500)
    assert "def frobnicate" in found.context() and "x * 3" in found.context()
    # The engine rebuilt on the previous one answers as one built from nothing.
    fresh = Workspace.open(root)
    assert found.to_json() == fresh.focus("frobnicate", budget=500).to_json()
    fresh.close()
    assert [hit.node.id for hit in ws.impact("frobnicate").impacted] == ["pkg/b.py::run"]
    (root / "pkg/b.py").unlink()
    assert ws.impact("frobnicate").impacted == ()
    assert "pkg/b.py" not in {hit["id"] for hit in ws.seek("run").results}
    ws.close()


def test_an_index_replaced_under_an_open_workspace_is_reopened(
    make_repo: Callable[..., Path],
) -> None:
    root = make_repo({"a.py": "def quuxify():\n    pass\n"})
    ws = Workspace.open(root)
    ws.index()
    assert "def quuxify" in ws.focus("quuxify").context()
    shutil.rmtree(root / ".coderooms")  # deleted, then rebuilt by another process
    (root / "a.py").write_text("def zorblify():\n    pass\n")
    Workspace.open(root).index()
    context = ws.focus("zorblify").context()
    assert "def zorblify" in context and "quuxify" not in context
    ws.close()


def test_impact_takes_an_absolute_path_inside_the_repository(
    make_repo: Callable[..., Path],
) -> None:
    root = make_repo(
        {"pkg/a.py": "def helper():\n    pass\n", "pkg/b.py": "from pkg.a import helper\n"}
    )
    ws = Workspace.open(root)
    ws.index()
    by_path = ws.impact(str(root / "pkg" / "a.py"))
    assert by_path.target.id == "pkg/a.py"
    assert [hit.node.id for hit in by_path.impacted] == ["pkg/b.py"]
    ws.close()


def test_a_file_named_in_the_goal_is_loaded_even_when_it_is_not_code(
    make_repo: Callable[..., Path],
) -> None:
    root = make_repo(
        {
            "pkg/builder.py": "def build_docs(env):\n    return env\n\n\ndef clean(env):\n"
            "    return None\n",
            "tox.ini": "[tox]\nenvlist = py311, docs\n\n[testenv:docs]\ncommands = sphinx\n",
            "docs/usage.rst": "Usage\n=====\n\n" + "Build the docs env with tox.\n" * 200,
        }
    )
    ws = Workspace.open(root)
    ws.index()

    def item(goal: str, node_id: str) -> Loaded:
        return next(i for i in ws.focus(goal, budget=2000).packing.loaded if i.node.id == node_id)

    plain = item("the docs env fails to build", "tox.ini")
    named = item("tox.ini: the docs env fails to build", "tox.ini")
    assert "not code (ini)" in plain.why and "named in the goal" not in plain.why
    assert "named in the goal" in named.why and "not code" not in named.why
    assert named.salience > 10 * plain.salience and named.render == "full"
    # Too long to load whole: its first lines stand in for the outline it does not have.
    rst = item("docs/usage.rst says to build the docs env with tox", "docs/usage.rst")
    assert rst.render == "skeleton" and "documentation/example" not in rst.why
    assert "docs/usage.rst lines 1-203 (the first" in rst.text and "Usage\n=====" in rst.text
    ws.close()


def test_a_goal_holding_bytes_that_were_not_utf8_is_ranked_not_a_crash(
    make_repo: Callable[..., Path],
) -> None:
    root = make_repo({"pkg/parse.py": "def parse(text):\n    return text.split()\n"})
    ws = Workspace.open(root)
    ws.index()
    goal = "fix \udcff parse"  # what argv bytes b"fix \xff parse" become
    found = ws.focus(goal, budget=500)
    assert found.goal == "fix \ufffd parse"
    assert found.packing.loaded[0].node.id.startswith("pkg/parse.py")
    assert ws.seek("parse\udc80").results[0]["id"].startswith("pkg/parse.py")
    ws.close()


def test_a_named_file_is_found_by_its_repository_path_an_absolute_path_or_a_url(
    make_repo: Callable[..., Path],
) -> None:
    root = make_repo(
        {
            "pkg/core.py": "def render_readme(text):\n    return text.strip()\n",
            "README.md": "# Project\n\nFix me.\n",
            "sub/README.md": "# Sub\n",
            "docs/index.rst": "Index\n=====\n",
            "config.yaml": "".join(f"key{i}: value{i}\n" for i in range(3000)),
        }
    )
    ws = Workspace.open(root)
    ws.index()

    def named(goal: str) -> list[str]:
        found = ws.focus(goal, budget=8000)
        return [i.node.id for i in found.packing.loaded if "path `" in i.why]

    # README.md alone means the one at the root, though sub/README.md ends the same way.
    assert named("fix the typo in README.md") == ["README.md"]
    assert named(f"error reading {root}/docs/index.rst") == ["docs/index.rst"]
    assert named("see https://example.org/x/y/blob/main/docs/index.rst") == ["docs/index.rst"]
    # An absolute path elsewhere (another install's traceback) needs more than a file name.
    assert named("error in /opt/venv/lib/site/other/core.py line 3") == []
    # A dense file too long to load whole still shows its head when it is named, and
    # focus does not call that saturated: more budget would load the rest.
    found = ws.focus("config.yaml has a wrong key", budget=8000)
    item = next(i for i in found.packing.loaded if i.node.id == "config.yaml")
    assert item.render == "skeleton" and "key0: value0" in item.text
    assert found.sufficiency.state != "saturated"
    ws.close()


def test_changes_beside_or_to_skipped_files_are_seen(make_repo: Callable[..., Path]) -> None:
    root = make_repo(
        {
            "pkg/a.py": "def alpha():\n    return 1\n",
            "assets/logo.png": b"\x89PNG\r\n\x1a\n\x00\x00",
            "pkg/blob.txt": b"\x00binary",
            ".gitignore": "",
        }
    )
    ws = Workspace.open(root)
    ws.index()
    assert ws.refresh() is False
    # A file added in a directory that held only skipped files.
    (root / "assets" / "beta_tool.py").write_text("def beta_tool():\n    return 2\n")
    assert ws.refresh() is True
    assert "assets/beta_tool.py" in {i.node.path for i in ws.focus("beta_tool").packing.loaded}
    # A skipped (binary) file edited into text.
    (root / "pkg" / "blob.txt").write_text("gamma notes: now plain text\n")
    assert ws.refresh() is True
    assert ws.graph().node("pkg/blob.txt") is not None
    # .gitignore edited in place.
    (root / ".gitignore").write_text("assets/\n")
    assert ws.refresh() is True
    assert ws.graph().node("assets/beta_tool.py") is None
    assert ws.refresh() is False
    ws.close()


def test_a_commit_that_changes_no_file_refreshes_the_git_signals(
    make_repo: Callable[..., Path],
) -> None:
    root = make_repo({"pkg/a.py": "def alpha():\n    return 1\n"}, use_git=True)
    ws = Workspace.open(root)
    ws.index()
    assert ws.refresh() is False
    before = ws.graph().head_time
    git(root, "commit", "-q", "--allow-empty", "-m", "later", when=1_800_000_000)
    assert ws.refresh() is True
    assert ws.graph().head_time == 1_800_000_000 != before
    assert ws.refresh() is False
    ws.close()


def test_a_file_copied_over_with_its_mtime_kept_is_seen(
    make_repo: Callable[..., Path],
) -> None:
    """``cp -p`` and ``rsync -a`` keep a file's size and mtime but not its ctime: the
    workspace and the index both see the new content."""
    root = make_repo({"pkg/a.py": "def alpha():\n    return 1\n"})
    ws = Workspace.open(root)
    ws.index()
    target = root / "pkg/a.py"
    before = target.stat()
    target.write_text("def gamma():\n    return 2\n")  # the same size
    os.utime(target, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = target.stat()
    assert (after.st_size, after.st_mtime_ns) == (before.st_size, before.st_mtime_ns)
    assert ws.refresh() is True  # the long-lived workspace indexed again
    ids = {hit["id"] for hit in ws.seek("gamma").results}
    assert "pkg/a.py::gamma" in ids and "pkg/a.py::alpha" not in ids
    ws.close()
    # A plain index run (another process, say) sees it the same way.
    (root / "pkg/a.py").write_text("def delta():\n    return 3\n")
    os.utime(target, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert Workspace.open(root).index().changed["parsed"] == 1


def test_a_repository_removed_under_an_open_workspace_is_not_found(
    make_repo: Callable[..., Path],
) -> None:
    from coderooms.index.errors import WorkspaceNotFound

    root = make_repo({"a.py": "def alpha_beta():\n    pass\n"})
    ws = Workspace.open(root)
    assert "alpha_beta" in ws.focus("alpha_beta", budget=100).context()
    shutil.rmtree(root)
    for ask in (lambda: ws.focus("alpha_beta", budget=100), lambda: ws.seek("alpha_beta")):
        with pytest.raises(WorkspaceNotFound):
            ask()
    assert not root.exists()  # nothing was made again
    ws.close()


def test_an_absolute_path_to_a_top_level_file_names_it(make_repo: Callable[..., Path]) -> None:
    root = make_repo(
        {
            "tox.ini": "[tox]\nenvlist = py311\n",
            "pkg/core.py": "def tox_settings():\n    return 'tox'\n",
        }
    )
    ws = Workspace.open(root)
    plain = ws.focus("why does tox.ini pin py311?", budget=300)
    assert "tox.ini" in plain.covered_ids()
    full = ws.focus(f"why does {root / 'tox.ini'} pin py311?", budget=300)
    assert full.packing == plain.packing  # the same answer as the repository's own path
    seen = ws.seek(f"{os.path.realpath(root)}/tox.ini").results
    assert seen == ws.seek("tox.ini").results
    assert "tox.ini" in {hit["id"] for hit in seen}
    ws.close()


def test_the_longer_of_two_root_spellings_is_taken_off_first(tmp_path: Path) -> None:
    """A repository opened through a symlink has two absolute spellings; when one ends
    the other, taking the shorter off first would leave a broken path behind."""
    real = tmp_path / "z" / str(tmp_path).lstrip("/") / "x"
    real.mkdir(parents=True)
    (tmp_path / "x").symlink_to(real)
    ws = Workspace.open(tmp_path / "x")
    assert ws.relative(f"see {real}/tox.ini and {tmp_path}/x/a.py") == "see tox.ini and a.py"
    ws.close()


def test_an_edit_inside_files_is_indexed_from_the_last_listing(
    make_repo: Callable[..., Path], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Once a refresh has listed the root, a later one that sees only files move (no
    directory, no HEAD, no .gitignore) takes that listing: no walk and no git command.
    Anything else is listed again."""
    from coderooms.index import indexer

    root = make_repo(
        {"pkg/a.py": "def alpha():\n    return 1\n", "pkg/b.py": "def beta():\n    pass\n"},
        use_git=True,
    )
    ws = Workspace.open(root)
    ws.index()
    (root / "pkg/a.py").write_text("def alpha():\n    return 10\n")
    assert ws.refresh() is True  # listed: the listing is kept from here
    listed = []
    real_list = indexer.list_files

    def counted(path: str) -> object:
        listed.append(path)
        return real_list(path)

    def no_git(_: str) -> str:
        raise AssertionError("asked git for HEAD")

    monkeypatch.setattr(indexer, "list_files", counted)
    monkeypatch.setattr(indexer, "head_commit", no_git)
    (root / "pkg/a.py").write_text("def alpha_two():\n    return 2\n")
    with (root / "pkg/b.py").open("a") as fh:
        fh.write("\n\ndef gamma():\n    return 3\n")
    assert ws.refresh() is True
    assert listed == []
    ids = {n.id for n in ws.graph().nodes}
    assert {"pkg/a.py::alpha_two", "pkg/b.py::beta", "pkg/b.py::gamma"} <= ids
    assert "pkg/a.py::alpha" not in ids
    assert ws.refresh() is False  # the stamp of that run holds
    # A file edited after one was added beside it: the root is listed again.
    monkeypatch.setattr(indexer, "head_commit", lambda _: "")
    (root / "pkg/c.py").write_text("def delta():\n    pass\n")
    (root / "pkg/a.py").write_text("def alpha_three():\n    return 3\n")
    assert ws.refresh() is True
    assert listed == [str(root)]
    ids = {n.id for n in ws.graph().nodes}
    assert {"pkg/c.py::delta", "pkg/a.py::alpha_three"} <= ids
    # A file replaced by a link in place (its directory moves too): listed again.
    os.unlink(root / "pkg/b.py")
    os.symlink("a.py", root / "pkg/b.py")
    assert ws.refresh() is True
    assert listed == [str(root)] * 2
    assert ws.graph().node("pkg/b.py::gamma") is None
    ws.close()
    # What the index holds is what a cold build of the tree holds.
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    assert cold_dump(root, scratch) == dump(root)


def test_files_the_index_left_out_are_named_when_a_goal_or_target_names_them(
    tmp_path: Path,
) -> None:
    # an oversized file and a submodule's files had vanished without a trace: the verdict
    # said the goal named no path found here, impact that no such file exists
    from index_fixtures import new_repo

    from coderooms.focus.errors import TargetNotIndexed
    from coderooms.index.extract import MAX_FILE_BYTES

    sub = new_repo(
        tmp_path, {"lib.py": "def lib_fn(n):\n    return n + 1\n"}, use_git=True, name="sub"
    )
    root = new_repo(tmp_path, {"top.py": "def top():\n    return 1\n"}, use_git=True)
    (root / "table.py").write_text("TABLE = [" + "1," * (MAX_FILE_BYTES // 2) + "]\n")
    git(root, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(sub), "vendor_lib")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "more")
    ws = Workspace.open(root)
    try:
        summary = ws.index()
        assert summary.skipped.get("oversized") == 1 and summary.skipped.get("submodule") == 1
        result = ws.focus("what is in table.py and vendor_lib/lib.py", budget=2000)
        left_out = {e.what: e.detail for e in result.packing.ignored if e.why == "not_indexed"}
        assert left_out == {"table.py": "oversized", "vendor_lib/lib.py": "submodule"}
        assert "left out, which no budget brings: table.py (oversized)" in result.sufficiency.why
        unnamed = ws.focus("top returns 1", budget=2000).packing.ignored
        assert not [e for e in unnamed if e.why == "not_indexed"]  # none named, none listed
        with pytest.raises(TargetNotIndexed, match="left out \\(oversized\\)"):
            ws.impact("table.py")
    finally:
        ws.close()
