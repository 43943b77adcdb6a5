"""The room commands end to end, their one-line errors, and their documentation."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import click
import pytest
from cli_clock import POSTED_SHOWN
from click.testing import CliRunner, Result

from coderooms.cli import main
from coderooms.rooms.briefing import SessionInitialization
from coderooms.rooms.records import Agent, Person, SessionMessage
from coderooms.rooms.wire import from_wire
from coderooms.store.sqlite import SCHEMA_VERSION


@pytest.fixture
def db(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'rooms.db'}"


def cli(db: str, *args: str, input: str | None = None) -> Result:
    return CliRunner().invoke(main, ["--db", db, *args], input=input)


def ok(db: str, *args: str, input: str | None = None) -> str:
    result = cli(db, *args, input=input)
    assert result.exit_code == 0, result.stderr
    assert result.stderr == ""
    return result.stdout


@pytest.fixture
def room(db: str) -> str:
    ok(db, "init")
    ok(db, "agent", "add", "ada", "--name", "Ada")
    ok(db, "agent", "add", "bo")
    ok(db, "person", "add", "pat", "--label", "Pat Doe")
    ok(db, "desk", "create", "eng", "--name", "Engineering", "--description", "builds things")
    ok(db, "desk", "add", "eng", "ada")
    ok(db, "desk", "add", "Engineering", "bo")
    return db


def test_init_reports_the_store_and_its_schema(db: str, tmp_path: Path) -> None:
    out = ok(db, "init")
    assert out == f"store ready: {tmp_path / 'rooms.db'} (schema version {SCHEMA_VERSION})\n"
    assert ok(db, "init") == out


def test_the_store_url_can_come_from_the_environment(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'env.db'}"
    result = CliRunner().invoke(main, ["init"], env={"CODEROOMS_DB": url})
    assert result.exit_code == 0
    assert (tmp_path / "env.db").is_file()


def test_desk_list_shows_desks_members_in_order_and_general(room: str) -> None:
    ok(room, "desk", "create", "ops")
    ok(room, "desk", "order", "eng", "bo", "ada")
    assert ok(room, "desk", "list") == (
        "General\n"
        "  members: the active roster\n"
        "eng (Engineering) — builds things\n"
        "  members: @bo @ada\n"
        "ops\n"
        "  members: none\n"
    )
    ok(room, "desk", "retire", "eng", "bo")
    assert "  members: @ada\n" in ok(room, "desk", "list")


def test_post_prints_the_new_sequence_and_read_shows_briefing_then_history(room: str) -> None:
    assert ok(room, "post", "--as", "agent:ada", "--desk", "eng", "hello team") == "1\n"
    assert ok(room, "post", "--as", "person:pat", "--desk", "eng", input="from stdin\n") == "2\n"
    assert ok(room, "post", "--as", "agent:bo", "--desk", "eng", "--reply-to", "1", "hi") == "3\n"
    ok(room, "post", "--as", "operator", "elsewhere")
    out = ok(room, "read", "--as", "ada", "--desk", "Engineering")
    briefing, threads, pins, history = out.split("\n\n")
    assert briefing.startswith("## Briefing\nYou are @ada")
    assert "- @bo — bo" in briefing
    assert threads.startswith("## Threads in Engineering (eng)")  # the recall context
    assert pins.startswith("## Pinned in Engineering (eng)")
    assert history.endswith(
        f"[#1] you (@ada), {POSTED_SHOWN}:\n  │ hello team\n"
        f"[#2] Pat Doe (person pat), {POSTED_SHOWN}:\n  │ from stdin\n"
        f"[#3] @bo, {POSTED_SHOWN}:\n  │ hi\n</room-data>\n"
    )


def test_read_a_thread_and_a_window(room: str) -> None:
    ok(room, "post", "--as", "agent:ada", "--desk", "eng", "root")
    ok(room, "post", "--as", "agent:bo", "--desk", "eng", "other root")
    for i in range(3):
        ok(room, "post", "--as", "agent:bo", "--desk", "eng", "--reply-to", "1", f"r{i}")
    out = ok(room, "read", "--as", "ada", "--desk", "eng", "--thread", "1", "--window", "2")
    history = out.split("\n\n")[-1]
    assert history.startswith("## History of Engineering (eng), thread #1")
    assert history.endswith(
        f"[#4] @bo, {POSTED_SHOWN}:\n  │ r1\n[#5] @bo, {POSTED_SHOWN}:\n  │ r2\n</room-data>\n"
    )


def test_read_json_is_the_session_initialization_wire_form(room: str) -> None:
    ok(room, "post", "--as", "agent:ada", "--desk", "eng", "hello")
    ok(room, "post", "--as", "person:pat", "--desk", "eng", "hey")
    out = ok(room, "read", "--as", "bo", "--desk", "eng", "--window", "5", "--json")
    decoded = from_wire(SessionInitialization, json.loads(out))
    assert decoded.history == (
        SessionMessage(1, Agent("ada", "Ada"), "hello", "2026-12-01T10:00:00Z"),
        SessionMessage(2, Person("pat", "Pat Doe"), "hey", "2026-12-01T10:00:00Z"),
    )
    assert decoded.briefing.viewer_id == "bo"
    assert decoded.briefing.desk_id == "eng"
    assert decoded.briefing.brevity.window == 5


BAD_INPUTS: list[tuple[str, ...]] = [
    ("post", "--as", "agent:ghost", "--desk", "eng", "x"),
    ("post", "--as", "robot", "--desk", "eng", "x"),
    ("post", "--as", "agent:ada", "--desk", "nowhere", "x"),
    ("post", "--as", "agent:ada", "--desk", "eng", "   "),
    ("post", "--as", "agent:ada", "--desk", "eng", "--reply-to", "42", "x"),
    ("post", "--as", "agent:ada", "--desk", "eng", "--reply-to", "-1", "x"),
    ("post", "--desk", "eng", "x"),
    ("read", "--as", "ghost", "--desk", "eng"),
    ("read", "--as", "ada", "--desk", "eng", "--thread", "99"),
    ("read", "--as", "ada", "--desk", "eng", "--window", "lots"),
    ("agent", "add", "ada"),
    ("agent", "add", " "),
    ("agent", "retire", "ghost"),
    ("person", "add", "pat"),
    ("desk", "create", "main"),
    ("desk", "create", "Engineering"),
    ("desk", "add", "eng", "ghost"),
    ("desk", "add", "General", "ada"),
    ("desk", "retire", "eng", "pat"),
    ("desk", "order", "eng", "ada"),
    ("desk", "order", "eng", "ada", "ada", "bo"),
    ("desk", "order", "eng"),
    ("desk", "frobnicate"),
    ("nonsense",),
]


@pytest.mark.parametrize("args", BAD_INPUTS, ids=lambda a: " ".join(a))
def test_bad_input_exits_non_zero_with_one_error_line(room: str, args: tuple[str, ...]) -> None:
    result = cli(room, *args)
    assert result.exit_code != 0
    assert result.exception is None or isinstance(result.exception, SystemExit)
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("error: ")
    assert result.stdout == ""


def test_a_reply_cannot_cross_desks(room: str) -> None:
    ok(room, "post", "--as", "agent:ada", "--desk", "eng", "root")
    result = cli(room, "post", "--as", "agent:ada", "--reply-to", "1", "in General")
    assert result.exit_code == 1
    assert result.stderr == (
        "error: message 1 is not in desk 'General'; a reply must stay in its parent's desk\n"
    )


def test_a_corrupt_database_is_one_line_not_a_traceback(tmp_path: Path) -> None:
    path = tmp_path / "rooms.db"
    path.write_bytes(b"\x00garbage" * 1000)
    result = cli(f"sqlite:///{path}", "desk", "list")
    assert result.exit_code == 1
    assert result.stderr.startswith(f"error: {path} is not a usable coderooms database")
    assert len(result.stderr.splitlines()) == 1


def test_an_unsupported_store_url_is_refused(tmp_path: Path) -> None:
    result = cli("mysql://localhost/rooms", "init")
    assert result.exit_code == 1
    assert result.stderr.startswith("error: cannot open store 'mysql://localhost/rooms'")


def test_an_unreachable_postgresql_server_is_one_line(tmp_path: Path) -> None:
    url = f"postgresql://nobody@/rooms?host={tmp_path}&port=1"
    result = cli(url, "init")
    assert result.exit_code == 1
    assert result.stderr.startswith(f"error: cannot reach the store at {url}: ")
    assert len(result.stderr.splitlines()) == 1


# --- documentation --------------------------------------------------------------------


def walk(
    command: click.Command, path: tuple[str, ...] = ()
) -> Iterator[tuple[tuple[str, ...], click.Command]]:
    yield path, command
    if isinstance(command, click.Group):
        for name, sub in sorted(command.commands.items()):
            yield from walk(sub, (*path, name))


EXPECTED_COMMANDS = {
    "init",
    "agent add",
    "agent retire",
    "person add",
    "desk create",
    "desk add",
    "desk retire",
    "desk order",
    "desk list",
    "post",
    "read",
}


def test_every_room_command_the_issue_names_exists() -> None:
    leaves = {" ".join(path) for path, cmd in walk(main) if not isinstance(cmd, click.Group)}
    assert EXPECTED_COMMANDS <= leaves


@pytest.mark.parametrize(
    "path", sorted(p for p, _ in walk(main)), ids=lambda p: " ".join(p) or "main"
)
def test_every_command_and_option_is_documented(path: tuple[str, ...]) -> None:
    command = dict(walk(main))[path]
    assert command.help and command.help.strip(), f"{path} has no help text"
    for param in command.params:
        if isinstance(param, click.Option):
            assert param.help and param.help.strip(), f"{path} option {param.name} has no help"
    result = CliRunner().invoke(main, [*path, "--help"])
    assert result.exit_code == 0
    summary = " ".join(command.help.split("\n\n")[0].split())
    assert summary in " ".join(result.stdout.split())


def test_standard_input_loses_only_its_final_newline(room: str) -> None:
    ok(room, "post", "--as", "agent:ada", "--desk", "eng", input="code\n\n\n")
    ok(room, "post", "--as", "agent:ada", "--desk", "eng", input="crlf\r\n\r\n")
    ok(room, "post", "--as", "agent:ada", "--desk", "eng", input="none")
    out = ok(room, "read", "--as", "ada", "--desk", "eng", "--json")
    texts = [m["content"] for m in json.loads(out)["history"]]
    assert texts[-3:] == ["code\n\n", "crlf\r\n", "none"]


def test_read_as_a_kind_must_find_that_kind(room: str) -> None:
    result = cli(room, "read", "--as", "agent:pat", "--desk", "eng")
    assert result.exit_code == 1
    assert result.stderr == (
        "error: reader 'agent:pat' is not on the roster; add it first "
        "(coderooms agent add / person add)\n"
    )
    assert cli(room, "read", "--as", "person:ada", "--desk", "eng").exit_code == 1
    assert ok(room, "read", "--as", "person:pat", "--desk", "eng").startswith(
        "## Briefing\nYou are"
    )


def test_a_person_sharing_an_agents_id_is_not_read_as_the_agent(room: str) -> None:
    ok(room, "person", "add", "ada", "--label", "Ada the person")
    result = cli(room, "read", "--as", "person:ada", "--desk", "eng")
    assert result.exit_code == 1
    assert result.stderr.startswith("error: person 'ada' shares its id with an agent")
    assert ok(room, "read", "--as", "agent:ada", "--desk", "eng").startswith(
        "## Briefing\nYou are @ada"
    )


def test_a_post_retried_with_its_key_prints_the_same_sequence(room: str) -> None:
    first = ok(room, "post", "--as", "agent:ada", "--key", "run-7", "deploy done")
    assert ok(room, "post", "--as", "agent:ada", "--key", "run-7", "deploy done") == first
    result = cli(room, "post", "--as", "agent:ada", "--key", "run-7", "something else")
    assert result.exit_code == 1
    assert result.stderr.startswith("error: idempotency key 'run-7' already wrote message")
    assert ok(room, "post", "--as", "agent:ada", "next") == f"{int(first) + 1}\n"


def test_every_room_command_works_on_a_postgresql_store(pg_url: str) -> None:
    assert ok(pg_url, "init").startswith("store ready: postgresql://")
    ok(pg_url, "agent", "add", "ada", "--name", "Ada")
    ok(pg_url, "person", "add", "pat", "--label", "Pat Doe")
    ok(pg_url, "desk", "create", "eng", "--name", "Engineering")
    ok(pg_url, "desk", "add", "eng", "ada")
    assert ok(pg_url, "post", "--as", "agent:ada", "--desk", "eng", "--key", "k", "hi") == "1\n"
    assert ok(pg_url, "post", "--as", "agent:ada", "--desk", "eng", "--key", "k", "hi") == "1\n"
    assert "hi" in ok(pg_url, "read", "--as", "ada", "--desk", "eng")
    assert "ada" in ok(pg_url, "agent", "list")
    assert "hi" in ok(pg_url, "search", "hi", "--desk", "eng")
