"""`coderooms person token ID`: a web sign-in token for a person on the roster."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from coderooms.cli import main
from coderooms.mcp.tokens import PERSON_TOKEN_PREFIX, TokenBook


def invoke(*args: str):  # type: ignore[no-untyped-def]
    return CliRunner().invoke(main, list(args))


def test_a_person_gets_a_token_that_names_them(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'rooms.db'}"
    assert invoke("--db", db, "person", "add", "pat", "--label", "Pat").exit_code == 0
    result = invoke("--db", db, "person", "token", "pat")
    assert result.exit_code == 0, result.output
    token = result.output.strip()
    assert token.startswith(PERSON_TOKEN_PREFIX)
    book = TokenBook(str(tmp_path / "rooms.db"))
    try:
        assert book.person_for(token) == "pat"
        assert book.agent_for(token) is None  # not a key to MCP
    finally:
        book.close()


def test_a_new_token_replaces_the_old_one(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'rooms.db'}"
    invoke("--db", db, "person", "add", "pat", "--label", "Pat")
    old = invoke("--db", db, "person", "token", "pat").output.strip()
    new = invoke("--db", db, "person", "token", "pat").output.strip()
    book = TokenBook(str(tmp_path / "rooms.db"))
    try:
        assert book.person_for(old) is None and book.person_for(new) == "pat"
    finally:
        book.close()


def test_someone_not_on_the_roster_gets_no_token(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'rooms.db'}"
    invoke("--db", db, "agent", "add", "alice")
    for who in ("zed", "alice"):  # nobody, or an agent rather than a person
        result = invoke("--db", db, "person", "token", who)
        assert result.exit_code == 1
        assert result.output.startswith("error: ") and "is not on the roster" in result.output
        assert "Traceback" not in result.output


def test_an_agent_token_is_not_a_person_token(tmp_path: Path) -> None:
    book = TokenBook(str(tmp_path / "rooms.db"))
    try:
        agent = book.issue("alice")
        assert book.person_for(agent) is None
    finally:
        book.close()


def test_person_tokens_live_in_every_store_kind(new_store) -> None:  # type: ignore[no-untyped-def]
    store = new_store()
    book = TokenBook.for_store(store)
    try:
        first = book.issue_person("pat")
        second = book.issue_person("pat")
        agent = book.issue("pat")
        assert book.person_for(first) is None and book.person_for(second) == "pat"
        assert book.person_for(agent) is None and book.agent_for(second) is None
    finally:
        book.close()
