"""`coderooms index` and `coderooms graph show` through click's runner."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import click
from click.testing import CliRunner

from coderooms.cli import index_cmds

FILES = {
    "pkg/__init__.py": "",
    "pkg/a.py": "def helper():\n    return 1\n\n\ndef main():\n    return helper()\n",
    "pkg/b.py": "def helper():\n    return 2\n",
}


def cli() -> click.Group:
    @click.group()
    def root() -> None:
        pass

    index_cmds.register(root)
    return root


def test_index_json_summary(make_repo: Callable[..., Path]) -> None:
    root = make_repo(FILES)
    result = CliRunner().invoke(cli(), ["index", str(root), "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["files"] == 3 and data["symbols"] == 3
    assert data["edges"] == {"calls": 1, "contains": 3}
    assert (root / ".coderooms" / "index.db").is_file()


def test_index_text_summary(make_repo: Callable[..., Path]) -> None:
    result = CliRunner().invoke(cli(), ["index", str(make_repo(FILES))])
    assert result.exit_code == 0
    assert result.stdout.startswith("indexed 3 files (3 parsed), 3 symbols")
    # Off a terminal, each phase of the work is one line on stderr.
    assert result.stderr.splitlines()[0] == "indexing files: 3"


def test_index_tells_each_phase_of_a_cold_run_and_nothing_when_nothing_changed(
    make_repo: Callable[..., Path],
) -> None:
    root = make_repo(FILES)
    cold = CliRunner().invoke(cli(), ["index", str(root)])
    assert cold.exit_code == 0, cold.output
    # 3 files parsed and resolved, their 4 edges stored (3 contains, 1 call); then focus
    # is prepared from what the run made: the graph built from its rows, and the focus
    # index from the documents and embeddings made as the files were parsed (nothing is
    # counted or embedded again).
    assert cold.stderr.splitlines() == [
        "indexing files: 3",
        "resolving references: 3",
        "storing the index: 4",
        "building the code graph: 3",
        "building the focus index: 1",
    ]
    again = CliRunner().invoke(cli(), ["index", str(root)])
    assert again.exit_code == 0 and again.stderr == ""


def test_index_bad_path_is_one_line_error(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli(), ["index", str(tmp_path / "missing")])
    assert result.exit_code == 1
    assert result.output.count("\n") == 1
    assert result.output.startswith("error: no such directory")


def test_graph_show_node_with_edges(make_repo: Callable[..., Path]) -> None:
    root = make_repo(FILES)
    runner = CliRunner()
    runner.invoke(cli(), ["index", str(root), "--json"])
    result = runner.invoke(
        cli(), ["graph", "show", "pkg/a.py::main", "--path", str(root), "--json"]
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["node"]["kind"] == "function"
    assert [(e["kind"], e["dst"]) for e in data["out"]] == [("calls", "pkg/a.py::helper")]
    assert [(e["kind"], e["src"]) for e in data["in"]] == [("contains", "pkg/a.py")]
    text = runner.invoke(cli(), ["graph", "show", "main", "--path", str(root)])
    assert text.exit_code == 0
    assert text.output.splitlines()[0].startswith("pkg/a.py::main  [function, python]")
    assert "  calls      -> pkg/a.py::helper" in text.output


def test_graph_show_errors_are_one_line(make_repo: Callable[..., Path], tmp_path: Path) -> None:
    root = make_repo(FILES)
    runner = CliRunner()
    not_indexed = runner.invoke(cli(), ["graph", "show", "x", "--path", str(root)])
    assert not_indexed.exit_code == 1 and "run `coderooms index" in not_indexed.output
    runner.invoke(cli(), ["index", str(root), "--json"])
    unknown = runner.invoke(cli(), ["graph", "show", "nope", "--path", str(root)])
    assert unknown.exit_code == 1 and unknown.output.startswith("error: no file or symbol")
    ambiguous = runner.invoke(cli(), ["graph", "show", "helper", "--path", str(root)])
    assert ambiguous.exit_code == 1
    assert ambiguous.output == (
        "error: 'helper' names several symbols: pkg/a.py::helper, pkg/b.py::helper (give the full id)\n"
    )


def test_graph_show_answers_from_the_disk_as_it_is_now(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "a.py").write_text("def alpha():\n    return 1\n")
    (root / "pkg" / "b.py").write_text("def beta():\n    return 2\n")
    assert CliRunner().invoke(cli(), ["index", str(root)]).exit_code == 0
    shown = CliRunner().invoke(
        cli(), ["graph", "show", str(root / "pkg/a.py"), "--repo", str(root)]
    )
    assert shown.exit_code == 0 and shown.output.startswith("pkg/a.py")
    (root / "pkg" / "b.py").unlink()
    gone = CliRunner().invoke(cli(), ["graph", "show", "pkg/b.py", "--repo", str(root)])
    assert gone.exit_code == 1 and "pkg/b.py" in gone.output
