"""Under ``--json`` a refusal is also one JSON document on stdout, naming the error's
type, so a program reading the answer sees the failure where it looks; the human line
stays on stderr and the exit status is unchanged."""

from __future__ import annotations

import json
import subprocess
import sys
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


def test_json_given_as_an_argument_asks_for_nothing(tmp_path: Path) -> None:
    result = invoke("index", "--", "--json")  # a directory named --json, which is missing
    assert result.exit_code == 1
    assert result.stdout == ""
    assert result.stderr.startswith("error: no such directory")
    result = invoke("focus", "--repo", str(tmp_path / "absent"), "--", "--json")
    assert result.exit_code == 1 and result.stdout == ""


def test_a_failed_write_of_the_answer_is_one_line_under_json(tmp_path: Path) -> None:
    """Writing the answer to a full disk fails; the JSON error cannot be written there
    either, and the one error line still comes out on stderr."""
    root = indexed(tmp_path)
    with open("/dev/full", "w") as full:
        done = subprocess.run(
            [
                sys.executable,
                "-c",
                "from coderooms.cli import main; main()",
                "index",
                str(root),
                "--json",
            ],
            stdout=full,
            stderr=subprocess.PIPE,
            text=True,
            timeout=120,
        )
    assert done.returncode == 1
    assert done.stderr.startswith("error: ") and done.stderr.count("\n") == 1
    assert "Traceback" not in done.stderr


def test_an_unknown_thread_is_the_same_error_in_every_command(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'rooms.db'}"
    assert invoke("--db", url, "init").exit_code == 0
    assert invoke("--db", url, "agent", "add", "coder").exit_code == 0
    for args in (
        ("search", "x", "--thread", "999"),
        ("pins", "--thread", "999"),
        ("read", "--as", "coder", "--thread", "999"),
    ):
        error = json_error(invoke("--db", url, *args, "--json"), 1)
        assert error["type"] == "UnknownThread"
        assert "no message 999" in str(error["message"])
