"""The recall commands end to end: search, pins, threads, pick, and read's context."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_clock import POSTED_SHOWN
from click.testing import CliRunner, Result

from coderooms.cli import main
from coderooms.rooms.briefing import SessionInitialization
from coderooms.rooms.context import Pin
from coderooms.rooms.ranking import MatchKind
from coderooms.rooms.records import Agent, LogMessage, Person
from coderooms.rooms.search import MessageHit
from coderooms.rooms.wire import from_wire
from coderooms.store.sqlite import SQLiteStore


@pytest.fixture
def db(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'rooms.db'}"


def cli(db: str, *args: str) -> Result:
    return CliRunner().invoke(main, ["--db", db, *args])


def ok(db: str, *args: str) -> str:
    result = cli(db, *args)
    assert result.exit_code == 0, result.stderr
    assert result.stderr == ""
    return result.stdout


def refused(db: str, *args: str) -> str:
    result = cli(db, *args)
    assert result.exit_code == 1
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ")
    return lines[0]


@pytest.fixture
def room(db: str) -> str:
    ok(db, "init")
    ok(db, "agent", "add", "ada", "--name", "Ada")
    ok(db, "agent", "add", "rev", "--name", "Reviewer")
    ok(db, "agent", "add", "old", "--name", "Review")
    ok(db, "agent", "retire", "old")
    ok(db, "person", "add", "pat", "--label", "Pat Doe")
    ok(db, "desk", "create", "eng", "--name", "Engineering", "--description", "review tools")
    ok(db, "desk", "create", "review")
    ok(db, "post", "--as", "agent:ada", "--desk", "eng", "We decided: deploy on Friday")  # 1
    ok(
        db,
        "post",
        "--as",
        "person:pat",
        "--desk",
        "eng",
        "--reply-to",
        "1",
        "deploy needs a migration\n!pin #blocker",
    )  # 2
    ok(db, "post", "--as", "agent:rev", "--desk", "eng", "lunch plans")  # 3
    ok(db, "post", "--as", "operator", "deploy the docs too")  # 4, General
    ok(
        db,
        "post",
        "--as",
        "agent:rev",
        "--desk",
        "eng",
        "--reply-to",
        "2",
        "deploy after the migration",
    )  # 5
    return db


# --- search --------------------------------------------------------------------------------


def test_search_ranks_the_whole_log_best_first(room: str) -> None:
    out = ok(room, "search", "deploy")
    # three prefixes, the shortest message densest; then the word-prefix hit
    assert [line.split("]")[0] for line in out.splitlines()] == ["[4", "[5", "[2", "[1"]
    assert out.splitlines()[2] == (
        f"[2] Pat Doe in eng, reply to 1, {POSTED_SHOWN} (prefix 815): "
        "deploy needs a migration !pin #blocker"
    )
    assert out.splitlines()[0] == (
        f"[4] operator in General, {POSTED_SHOWN} (prefix 831): deploy the docs too"
    )


def test_a_desk_search_reaches_into_threads_and_a_thread_search_stays_inside(room: str) -> None:
    desk = ok(room, "search", "migration", "--desk", "Engineering", "--json")
    assert sorted(hit["sequence"] for hit in json.loads(desk)) == [2, 5]
    thread = ok(room, "search", "migration", "--thread", "1", "--json")
    assert [hit["sequence"] for hit in json.loads(thread)] == [2]


def test_search_json_is_the_message_hit_wire_form(room: str) -> None:
    [hit] = json.loads(ok(room, "search", "lunch", "--json"))
    assert from_wire(MessageHit, hit) == MessageHit(
        3,
        "eng",
        None,
        Agent("rev", "Reviewer"),
        "lunch plans",
        845,
        MatchKind.PREFIX,
        "2026-12-01T10:00:00Z",
    )


def test_search_filters_by_author_cursor_and_limit(room: str) -> None:
    by_pat = json.loads(ok(room, "search", "deploy", "--author", "pat", "--json"))
    assert [h["sequence"] for h in by_pat] == [2]
    assert json.loads(ok(room, "search", "deploy", "--author", "person:pat", "--json")) == by_pat
    by_operator = json.loads(ok(room, "search", "deploy", "--author", "operator", "--json"))
    assert [h["sequence"] for h in by_operator] == [4]
    older = json.loads(ok(room, "search", "deploy", "--before", "4", "--json"))
    assert sorted(h["sequence"] for h in older) == [1, 2]
    assert len(json.loads(ok(room, "search", "deploy", "--limit", "1", "--json"))) == 1


def test_search_by_regular_expression(room: str) -> None:
    out = ok(room, "search", "/[Dd]eploy (on|after)/", "--json")
    assert [(h["sequence"], h["kind"]) for h in json.loads(out)] == [
        (5, "prefix"),
        (1, "word_prefix"),
    ]


def test_search_says_when_nothing_matched(room: str) -> None:
    assert ok(room, "search", "zebra") == "no matches (searched at most the newest 2048 messages)\n"


def test_a_blank_or_overlong_query_is_refused_not_answered_with_no_matches(room: str) -> None:
    for command in (["search"], ["pick", "agents"], ["pick", "desks"]):
        # An empty picker box lists (test_new_user.py); a blank expression never does.
        for blank in ("", "   ", "/ /") if command == ["search"] else ("/ /",):
            assert "the query is blank" in refused(room, *command, blank)
        assert "a query holds at most 4096" in refused(room, *command, "x" * 5000)
    assert "a query holds at most 4096" in refused(room, "threads", "x" * 5000)
    # No words for threads is the live index, as over MCP.
    assert ok(room, "threads", "--desk", "eng", "") == ok(room, "threads", "--desk", "eng")


def test_a_bad_expression_is_one_line_and_never_a_literal_search(room: str) -> None:
    line = refused(room, "search", "/(deploy/")
    assert "does not compile" in line and "missing )" in line


def test_unknown_desks_and_threads_are_refused(room: str) -> None:
    assert "no desk" in refused(room, "search", "x", "--desk", "nope")
    assert "no message 99" in refused(room, "search", "x", "--thread", "99")
    assert "no message 3" in refused(room, "search", "x", "--desk", "review", "--thread", "3")


# --- pins and threads ----------------------------------------------------------------------


def test_pins_show_the_desk_board(room: str) -> None:
    board = ok(room, "pins", "--desk", "eng")
    assert board.startswith('## Pinned in Engineering (eng)\n<room-data kind="pins">\n')
    assert (
        f'\n- [#2] #blocker "deploy needs a migration !pin #blocker" (posted {POSTED_SHOWN}) '
        "(pinned by Pat Doe (person pat) at #2)\n</room-data>\n"
    ) in board
    assert ok(room, "pins", "--thread", "1") == board.replace(
        "Engineering (eng)", "Engineering (eng), thread #1"
    )
    assert "\n(nothing pinned)\n" in ok(room, "pins", "--desk", "review")
    [pin] = json.loads(ok(room, "pins", "--desk", "eng", "--json"))
    assert from_wire(Pin, pin).pinned_by == Person("pat", "Pat Doe")


def test_an_unpin_takes_the_message_off_the_board(room: str) -> None:
    ok(room, "post", "--as", "agent:ada", "--desk", "eng", "!unpin ^2 done")
    assert "\n(nothing pinned)\n" in ok(room, "pins", "--desk", "eng")


def test_threads_list_and_rank(room: str) -> None:
    listed = ok(room, "threads", "--desk", "eng")
    assert listed.startswith('## Threads in Engineering (eng)\n<room-data kind="threads">\n')
    assert listed.endswith(
        '- [#3] "lunch plans" — no replies, latest #3\n'
        '- [#1] "We decided: deploy on Friday" — 1 reply, latest #2\n'  # 5 answers 2, not 1
        "</room-data>\n"
    )
    ranked = json.loads(ok(room, "threads", "--desk", "eng", "lunch", "--json"))
    assert [(h["line"]["root"], h["kind"]) for h in ranked] == [(3, "prefix")]
    assert "\n(no threads)\n" in ok(room, "threads", "--desk", "review")
    assert '- [#3] "lunch plans" — no replies, latest #3 (score ' in ok(
        room, "threads", "--desk", "eng", "lunch"
    )


# --- pickers -------------------------------------------------------------------------------


def test_pick_agents_never_offers_retired_agents(room: str) -> None:
    assert ok(room, "pick", "agents", "rev") == "rev — Reviewer (id exact 1100)\n"
    assert "old" not in ok(room, "pick", "agents", "review")


def test_pick_desks_prefers_names_to_descriptions(room: str) -> None:
    assert ok(room, "pick", "desks", "review").splitlines() == [
        "review (label exact 1100)",
        "eng — Engineering (detail prefix 425)",
    ]


def test_pick_people_and_expressions(room: str) -> None:
    [hit] = json.loads(ok(room, "pick", "people", "/^Pat/", "--json"))
    assert hit["candidate"] == {"id": "pat", "label": "Pat Doe", "detail": None}
    assert hit["field"] == "label" and hit["match"]["kind"] == "prefix"
    assert ok(room, "pick", "people", "zz") == "no people match\n"
    assert "does not compile" in refused(room, "pick", "agents", "/[/")


# --- read ----------------------------------------------------------------------------------


def test_read_carries_a_pin_from_two_thousand_rows_back(db: str, tmp_path: Path) -> None:
    ok(db, "init")
    ok(db, "agent", "add", "ada")
    ok(db, "desk", "create", "eng")
    ok(db, "desk", "add", "eng", "ada")  # read --as ada reads what room_read gives ada
    ok(db, "post", "--as", "agent:ada", "--desk", "eng", "Constraint: rows are never rewritten")
    ok(db, "post", "--as", "agent:ada", "--desk", "eng", "!pin ^1 #constraint")
    store = SQLiteStore(tmp_path / "rooms.db")
    ada = Agent("ada", "ada")
    store.import_messages(LogMessage(s, ada, f"chatter {s}", "eng") for s in range(3, 2003))
    store.close()
    out = ok(db, "read", "--as", "ada", "--desk", "eng")
    assert '- [#1] #constraint "Constraint: rows are never rewritten"' in out
    assert "[#1] you (@ada):" not in out  # far outside the window: only the pin carries it
    wire = json.loads(ok(db, "read", "--as", "ada", "--desk", "eng", "--json"))
    initialized = from_wire(SessionInitialization, wire)
    assert [p.sequence for p in initialized.context.pins] == [1]
    assert len(initialized.context.threads) == 5


def test_a_query_that_is_not_utf8_is_refused_not_searched(db: str) -> None:
    ok(db, "init")
    bad = b"q\xff".decode("utf-8", "surrogateescape")  # as Python carries such argv bytes
    expected = "error: the query is not valid UTF-8 text; give it as UTF-8"
    for args in (
        ("search", bad),
        ("search", f"/{bad}/"),
        ("threads", bad),
        ("pick", "agents", bad),
    ):
        assert refused(db, *args) == expected


def test_an_author_filter_naming_nobody_is_refused(db: str) -> None:
    ok(db, "agent", "add", "coder")
    assert refused(db, "search", "x", "--author", "agent:nobody") == (
        "error: agent:nobody is not on the roster; add it first (coderooms agent add / person add)"
    )
    assert refused(db, "search", "x", "--author", "person:coder").startswith(
        "error: person:coder is not on the roster"
    )
    ok(db, "search", "x", "--author", "agent:coder")
    ok(db, "search", "x", "--author", "coder")
    ok(db, "search", "x", "--author", "operator")
    # A bare word names nobody on the roster: refused as its prefixed form is (issue 17);
    # a system kind is spelled system:KIND.
    assert refused(db, "search", "x", "--author", "nobody") == (
        "error: nobody is not on the roster; add it first (coderooms agent add / person add)"
    )
    ok(db, "search", "x", "--author", "system:deploy")


def test_reading_commands_never_create_a_store_at_a_mistyped_path(tmp_path: Path) -> None:
    typo = tmp_path / "typo" / "rooms.db"
    url = f"sqlite:///{typo}"
    for args in (
        ("search", "x"),
        ("pins",),
        ("threads",),
        ("pick", "agents", "a"),
        ("desk", "list"),
        ("read", "--as", "coder"),
    ):
        line = refused(url, *args)
        assert line.startswith(f"error: there is no store at {typo}")
    assert not typo.parent.exists()
    ok(url, "init")
    ok(url, "search", "x")
