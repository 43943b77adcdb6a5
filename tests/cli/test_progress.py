"""Long work shows on stderr, one line per phase off a terminal and a bar on one; the
answer on stdout stays exactly the answer."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from coderooms.cli import main
from coderooms.cli.progress import PhaseProgress

FILES = {
    "pkg/__init__.py": "",
    "pkg/parcel.py": "def route_parcel(weight):\n    return 'heavy' if weight > 10 else 'light'\n",
    "pkg/cart.py": "class Cart:\n    def add_item(self, sku):\n        return sku\n",
}


def _repo(tmp_path: Path) -> Path:
    for rel, text in FILES.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    return tmp_path


def test_off_a_terminal_each_phase_is_one_line_on_stderr(
    capsys: pytest.CaptureFixture[str],
) -> None:
    progress = PhaseProgress(terminal=False)
    for done in range(1, 4):
        progress("counting terms", done, 3)
    progress("embedding code", 2, 2)
    out, err = capsys.readouterr()
    assert out == ""
    assert err == "counting terms: 3\nembedding code: 2\n"


def test_on_a_terminal_a_phase_draws_a_bar_that_ends_full() -> None:
    runner = CliRunner()

    @main.command("progress-probe", hidden=True)
    def probe() -> None:
        progress = PhaseProgress(terminal=True)
        for done in range(1, 5):
            progress("indexing files", done, 4)

    try:
        done = runner.invoke(main, ["progress-probe"])
    finally:
        main.commands.pop("progress-probe")
    assert done.exit_code == 0, done.output
    assert done.stdout == ""
    assert "indexing files" in done.stderr


def test_a_first_focus_says_what_it_does_on_stderr_and_prints_only_json(
    tmp_path: Path,
) -> None:
    root = _repo(tmp_path)
    args = ["focus", "route a parcel by weight", "--repo", str(root), "--json"]
    first = CliRunner().invoke(main, args)
    assert first.exit_code == 0, first.output
    assert json.loads(first.stdout)["goal"] == "route a parcel by weight"
    phases = [line.split(":")[0] for line in first.stderr.splitlines()]
    # The index run makes the engine's documents and embedding rows too, and keeps the
    # graph's rows: nothing is read back, counted or embedded after it.
    assert phases == [
        "indexing files",
        "resolving references",
        "storing the index",
        "building the code graph",
        "building the focus index",
    ]
    again = CliRunner().invoke(main, args)
    assert again.exit_code == 0 and again.stderr == ""  # nothing long left to do
    assert json.loads(again.stdout) == json.loads(first.stdout)
