"""What a hostile pass over the command line found (twenty-first session):
each test is one input that used to pass silently, crash or answer wrongly."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from coderooms.cli import main


def invoke(*args: str, input: str | None = None) -> Result:
    return CliRunner().invoke(main, list(args), input=input)


def refusal(result: Result) -> str:
    assert result.exit_code == 1, (result.stdout, result.stderr)
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    return lines[0]


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    subprocess.run(["git", "-C", str(root), "init", "-q"], check=True)
    (root / "app.py").write_text("def main():\n    return 1\n")
    monkeypatch.chdir(root)
    monkeypatch.delenv("CODEROOMS_DB", raising=False)
    return root


@pytest.mark.parametrize(("command", "what"), [("focus", "goal"), ("seek", "query")])
@pytest.mark.parametrize("blank", ["", "   ", "\n\t"])
def test_a_blank_goal_is_refused_before_anything_is_indexed(
    repo: Path, command: str, what: str, blank: str
) -> None:
    line = refusal(invoke(command, blank))
    assert line.startswith(f"error: the {what} is blank; say what you are after")
    assert not (repo / ".coderooms").exists()


@pytest.mark.parametrize(
    "args",
    [
        ("post", "--as", "agent:coder", "hi"),
        ("agent", "retire", "coder"),
        ("desk", "add", "General", "coder"),
        ("desk", "retire", "General", "coder"),
        ("desk", "order", "General", "coder"),
        ("agent", "token", "coder"),
        ("person", "token", "ada"),
    ],
)
def test_a_write_that_needs_a_roster_refuses_a_missing_store_and_creates_none(
    tmp_path: Path, args: tuple[str, ...]
) -> None:
    # a mistyped --db used to get an empty store made there first, and then a refusal
    # that blamed the roster ("agent 'coder' is not on the roster")
    typo = tmp_path / "typo.db"
    line = refusal(invoke("--db", str(typo), *args))
    assert line.startswith(f"error: there is no store at {typo}")
    assert list(tmp_path.iterdir()) == []


def test_skim_refuses_binary_input_instead_of_echoing_its_bytes(tmp_path: Path) -> None:
    blob = tmp_path / "r.bin"
    blob.write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 40)
    line = refusal(invoke("skim", str(blob), "--goal", "x"))
    assert line == (
        "error: the input looks binary (a NUL byte at offset 8); skim reads text, such as a "
        "command's output or a log"
    )
    log = tmp_path / "build.log"
    log.write_bytes(b"ok\n\xff not utf-8 but text\nERROR: boom\n")  # text with a stray byte
    assert invoke("skim", str(log), "--goal", "boom").exit_code == 0


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (
            ("focus", "main", "--node", "app.py"),
            "error: a node is used only in the modes pin, unpin and drop: leave it out here",
        ),
        (
            ("focus", "main", "--session-budget", "5"),
            "error: a session budget is used only with a session: leave it out here",
        ),
    ],
)
def test_an_option_the_call_would_ignore_is_refused(
    repo: Path, args: tuple[str, ...], expected: str
) -> None:
    assert refusal(invoke(*args)) == expected
    assert not (repo / ".coderooms").exists()  # refused before anything is indexed


def test_focus_in_a_subdirectory_works_on_the_whole_repository(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # it used to index the subdirectory alone, as a repository of its own
    sub = repo / "pkg" / "inner"
    sub.mkdir(parents=True)
    (sub / "helpers.py").write_text("def helper():\n    return main()\n")
    monkeypatch.chdir(sub)
    result = invoke("focus", "main", "--json")
    assert result.exit_code == 0, result.stderr
    assert "app.py::main" in result.stdout and "pkg/inner/helpers.py" in result.stdout
    assert (repo / ".coderooms" / "index.db").is_file()
    assert not (sub / ".coderooms").exists()
    assert invoke("seek", "helper", "--repo", ".").exit_code == 0  # an explicit --repo wins
    assert (sub / ".coderooms" / "index.db").is_file()


@pytest.mark.parametrize("command", [["focus", "main"], ["seek", "main"], ["impact", "main"]])
def test_outside_any_repository_nothing_is_indexed_without_a_repo_argument(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: list[str]
) -> None:
    # run in /tmp by mistake, focus indexed 44,634 files and wrote 1 GB there
    if any((parent / ".git").exists() for parent in (tmp_path, *tmp_path.parents)):
        pytest.skip("the temporary directory sits inside a git repository")
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "app.py").write_text("def main():\n    return 1\n")
    monkeypatch.chdir(plain)
    result = invoke(*command)
    assert result.exit_code == 1
    assert refusal(result).startswith(f"error: {plain} is not inside a repository")
    assert not (plain / ".coderooms").exists()
    assert invoke(*command, "--repo", ".").exit_code == 0  # asked for: it is indexed
    assert invoke(*command).exit_code == 0  # and from then on its index is found


def test_a_file_name_with_a_line_break_is_listed_on_one_line(repo: Path) -> None:
    (repo / "new\nline.py").write_text("def wrapped_name():\n    return 1\n")
    result = invoke("focus", "wrapped_name", "--no-context")
    assert result.exit_code == 0, result.stderr
    listed = [line for line in result.stdout.splitlines() if "line.py" in line]
    assert listed and all("new\\nline.py" in line for line in listed)


def test_making_a_name_another_already_has_warns_that_mentions_of_it_reach_nobody(
    tmp_path: Path,
) -> None:
    # aliases may collide (SEMANTICS.md), but @coder then silently woke no one
    db = str(tmp_path / "rooms.db")
    assert invoke("--db", db, "init").exit_code == 0
    assert invoke("--db", db, "agent", "add", "coder").stderr == ""
    desk = invoke("--db", db, "desk", "create", "coder")
    assert desk.exit_code == 0 and desk.stdout == "created desk coder (coder)\n"
    assert desk.stderr == (
        "warning: @coder now names agent coder and desk coder: a mention of @coder reaches "
        "none of them (rename one, or mention them by another name)\n"
    )
    assert "@everyone now names agent everyone and everyone" in (
        invoke("--db", db, "agent", "add", "everyone").stderr
    )
    assert invoke("--db", db, "person", "add", "ada", "--label", "Ada").stderr == ""
