"""Under ``--json`` a refusal is also one JSON document on stdout, naming the error's
type, so a program reading the answer sees the failure where it looks; the human line
stays on stderr and the exit status is unchanged."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner, Result

from coderooms.cli import main


def invoke(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


def json_error(result: Result, status: int) -> dict[str, object]:
    assert result.exit_code == status, result.output
    assert result.stderr.startswith("error: ") and result.stderr.count("\n") == 1
    document = json.loads(result.stdout)
    error = document["error"]
    assert set(error) == {"type", "message", "exit_status"}
    assert error["exit_status"] == status
    assert result.stderr == f"error: {error['message']}\n"
    return error


def indexed(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    (root / "m.py").write_text("def f():\n    return 1\n")
    assert invoke("index", str(root), "--json").exit_code == 0
    return root


def test_a_typed_refusal_names_its_type(tmp_path: Path) -> None:
    root = indexed(tmp_path)
    error = json_error(invoke("graph", "show", "nosuch", "--repo", str(root), "--json"), 1)
    assert error["type"] == "UnknownNode"
    assert "nosuch" in str(error["message"])


def test_a_missing_repository_is_a_json_error(tmp_path: Path) -> None:
    missing = str(tmp_path / "absent")
    error = json_error(invoke("focus", "anything", "--repo", missing, "--json"), 1)
    assert error["type"] == "WorkspaceNotFound"
    error = json_error(invoke("index", missing, "--json"), 1)
    assert error["type"] == "WorkspaceNotFound"


def test_a_usage_mistake_under_json_exits_2_with_its_type(tmp_path: Path) -> None:
    error = json_error(invoke("index", str(tmp_path), "--json", "--no-such-flag"), 2)
    assert error["type"] == "NoSuchOption"


def test_without_json_stdout_stays_empty(tmp_path: Path) -> None:
    root = indexed(tmp_path)
    result = invoke("graph", "show", "nosuch", "--repo", str(root))
    assert result.exit_code == 1
    assert result.stdout == ""
    assert result.stderr.startswith("error: ")
