"""Damaged or foreign stores are refused in one line by every command (issue 17)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner

from coderooms.cli import main

COMMANDS: list[tuple[str, ...]] = [
    ("init",),
    ("read", "--as", "ada", "--desk", "eng"),
    ("post", "--as", "agent:ada", "--desk", "eng", "hi"),
    ("search", "hi", "--desk", "eng"),
    ("pins", "--desk", "eng"),
    ("threads", "--desk", "eng"),
    ("pick", "desks", "eng"),
    ("agent", "list"),
    ("agent", "add", "new"),
    ("desk", "list"),
    ("desk", "add", "eng", "bo"),
    ("mcp", "--agent", "ada"),
]


def refusal_of(db: Path, args: tuple[str, ...]) -> str:
    result = CliRunner().invoke(main, ["--db", str(db), *args])
    assert result.exit_code == 1, (args, result.stdout, result.stderr, result.exception)
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), (args, result.stderr)
    return lines[0]


@pytest.fixture
def broken_order(tmp_path: Path) -> Path:
    db = tmp_path / "rooms.db"
    runner = CliRunner()
    for args in (
        ("agent", "add", "ada"),
        ("agent", "add", "bo"),
        ("desk", "create", "eng"),
        ("desk", "add", "eng", "ada"),
        ("desk", "order", "eng", "ada"),
    ):
        assert runner.invoke(main, ["--db", str(db), *args]).exit_code == 0
    with sqlite3.connect(db) as connection:
        connection.execute("UPDATE desk_orders SET ordered = 'ada, then nobody'")
    return db


@pytest.mark.parametrize("args", COMMANDS[1:], ids=" ".join)
def test_a_desk_order_that_is_not_json_is_a_corrupt_database(
    broken_order: Path, args: tuple[str, ...]
) -> None:
    line = refusal_of(broken_order, args)
    assert line == (
        f"error: {broken_order} is not a usable coderooms database (the member order of "
        "desk 'eng' is not a JSON list of agent ids)"
    )


@pytest.fixture
def foreign(tmp_path: Path) -> Path:
    db = tmp_path / "other.db"
    with sqlite3.connect(db) as connection:
        connection.execute("CREATE TABLE schema_migrations (version TEXT PRIMARY KEY)")
        connection.execute("INSERT INTO schema_migrations VALUES ('20240101_init')")
        connection.execute("CREATE TABLE users (id INTEGER PRIMARY KEY)")
    return db


@pytest.mark.parametrize("args", COMMANDS, ids=" ".join)
def test_another_applications_schema_migrations_is_not_a_coderooms_store(
    foreign: Path, args: tuple[str, ...]
) -> None:
    line = refusal_of(foreign, args)
    assert line == (
        f"error: {foreign} is not a usable coderooms database (it is a SQLite database of "
        "another application)"
    )
    with sqlite3.connect(foreign) as connection:
        tables = {name for (name,) in connection.execute("SELECT name FROM sqlite_master")}
    assert "messages" not in tables  # nothing was migrated into it
