"""`coderooms seek` and `focus` refuse, in one line, a repository they cannot index."""

from __future__ import annotations

from pathlib import Path

import click
from click.testing import CliRunner

from coderooms.cli.app import CoderoomsGroup
from coderooms.cli.focus_cmds import register


@click.group(cls=CoderoomsGroup)
def cli() -> None:
    """Test group."""


register(cli)


def test_seek_where_the_index_directory_cannot_be_made(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("def f():\n    pass\n")
    (tmp_path / ".coderooms").write_text("a file, not a directory\n")
    for args in (["seek", "f"], ["focus", "change f"]):
        result = CliRunner().invoke(cli, [*args, "--repo", str(tmp_path)])
        assert result.exit_code == 1, result.output
        assert result.output == (
            f"error: cannot create or write the index directory {tmp_path / '.coderooms'}: "
            "a file of that name is in the way (coderooms keeps its index there: make it a "
            "writable directory)\n"
        )
