"""Refusals a person can act on: text that is not UTF-8, malformed authors, read-only
files, paths that cannot hold a store, and in-memory stores where data must last."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from coderooms.errors import ECHO_CHARS, CoderoomsError
from coderooms.rooms.records import Agent, LogMessage, Operator, System
from coderooms.store import (
    MESSAGE_BYTES_CAP,
    CorruptDatabase,
    EphemeralStore,
    InvalidAuthor,
    InvalidIdentifier,
    InvalidText,
    MessageTooLarge,
    ReadOnlyStore,
    SQLiteStore,
    StoreError,
    StoreLocation,
    UnknownAuthor,
    UnsupportedStoreUrl,
    open_store,
)

BAD = "bad \udcff"
"""What Python makes of the argv bytes ``bad \\xff`` (surrogateescape)."""


async def staffed() -> SQLiteStore:
    store = SQLiteStore(":memory:")
    await store.add_agent("ada")
    await store.add_person("pat", "Pat")
    await store.create_desk("eng")
    await store.add_desk_member("eng", "ada")
    return store


WRITES: list[tuple[str, Callable[[SQLiteStore], Awaitable[Any]]]] = [
    ("the message content", lambda s: s.post("agent:ada", BAD)),
    ("the author", lambda s: s.post(f"agent:{BAD}", "hi")),
    ("the author", lambda s: s.post(System(BAD, "sys"), "hi")),
    ("the desk", lambda s: s.post("agent:ada", "hi", desk=BAD)),
    ("the agent id", lambda s: s.add_agent(BAD)),
    ("the agent name", lambda s: s.add_agent("cy", BAD)),
    ("the agent id", lambda s: s.retire_agent(BAD)),
    ("the person id", lambda s: s.add_person(BAD, "L")),
    ("the person's label", lambda s: s.add_person("quinn", BAD)),
    ("the desk id", lambda s: s.create_desk(BAD)),
    ("the desk name", lambda s: s.create_desk("ops", BAD)),
    ("the desk description", lambda s: s.create_desk("ops", "Ops", BAD)),
    ("the agent id", lambda s: s.add_desk_member("eng", BAD)),
    ("the desk", lambda s: s.retire_desk_member(BAD, "ada")),
    ("an agent id in the order", lambda s: s.set_desk_order("eng", [BAD])),
]


@pytest.mark.parametrize(
    ("what", "write"), WRITES, ids=[f"{w} {i}" for i, (w, _) in enumerate(WRITES)]
)
async def test_text_that_is_not_utf8_is_a_typed_error_naming_the_field(
    what: str, write: Callable[[SQLiteStore], Awaitable[Any]]
) -> None:
    store = await staffed()
    before = (await store.roster(), await store.desks(), await store.last_sequence())
    with pytest.raises(InvalidText) as caught:
        await write(store)
    assert caught.value.what == what
    message = str(caught.value)
    assert message == f"{what} is not valid UTF-8 text; give it as UTF-8"
    assert "\udcff" not in message and "bad" not in message
    assert (await store.roster(), await store.desks(), await store.last_sequence()) == before


async def test_a_json_lone_surrogate_escape_is_the_same_invalid_text() -> None:
    # what an MCP client's {"content": "\ud800"} decodes to
    content = json.loads('{"content": "hi \\ud800"}')["content"]
    store = await staffed()
    with pytest.raises(InvalidText, match="^the message content is not valid UTF-8 text"):
        await store.post("agent:ada", content, desk="eng")
    assert await store.last_sequence() is None


async def test_import_refuses_text_that_is_not_utf8_and_imports_nothing() -> None:
    store = SQLiteStore(":memory:")
    good = LogMessage(1, Operator(), "fine")
    with pytest.raises(InvalidText, match="^the content of imported message 2 "):
        store.import_messages([good, LogMessage(2, Operator(), BAD)])
    with pytest.raises(InvalidText, match="^the desk of imported message 2 "):
        store.import_messages([good, LogMessage(2, Operator(), "x", chat_id=BAD)])
    with pytest.raises(InvalidText, match="^the author of imported message 1 "):
        store.import_messages([LogMessage(1, Agent(BAD, "A"), "x")])
    assert await store.last_sequence() is None
    assert store.import_messages([good]) == 1


def test_text_reaching_sqlite_unchecked_is_still_a_typed_error() -> None:
    store = SQLiteStore(":memory:")
    with pytest.raises(InvalidText, match="^a value written to the store is not valid UTF-8"):
        store._query("SELECT ?", (BAD,))


@pytest.mark.parametrize("author", ["zed", "agent:", "system:", "person: ", "robot:x"])
async def test_a_malformed_author_says_only_that_its_form_is_wrong(author: str) -> None:
    store = await staffed()
    with pytest.raises(InvalidAuthor) as caught:
        await store.post(author, "hi")
    assert isinstance(caught.value, UnknownAuthor)
    assert caught.value.author == author
    assert str(caught.value) == (
        f"author {author!r} is not agent:ID, person:ID, operator or system:KIND"
    )


async def test_a_well_formed_unknown_author_says_only_that_it_is_not_on_the_roster() -> None:
    store = await staffed()
    with pytest.raises(UnknownAuthor) as caught:
        await store.post("agent:zed", "hi")
    assert not isinstance(caught.value, InvalidAuthor)
    assert str(caught.value) == (
        "agent 'zed' is not on the roster; add it first (coderooms agent add / person add)"
    )
    with pytest.raises(InvalidAuthor, match="^author 'system: ' is not agent:ID"):
        await store.post(System(" ", "blank"), "hi")


async def test_a_huge_reference_is_named_by_its_start_not_echoed_whole() -> None:
    # a client may send a 10 MB desk name or author: the refusal must not repeat it all
    store = await staffed()
    huge = "x" * 10_000_000
    for call in (
        lambda: store.post("agent:ada", "hi", desk=huge),
        lambda: store.post(f"agent:{huge}", "hi"),
        lambda: store.post(huge, "hi"),
    ):
        with pytest.raises(CoderoomsError) as caught:
            await call()
        assert len(str(caught.value)) < ECHO_CHARS + 200
        assert "xxxx…" in str(caught.value)
        kept = vars(caught.value).values()
        assert any(huge in str(value) for value in kept)  # the attribute keeps it whole


def test_message_too_large_without_a_size_says_more_than_the_cap() -> None:
    error = MessageTooLarge(None, MESSAGE_BYTES_CAP)
    assert str(error) == (
        f"message is more than {MESSAGE_BYTES_CAP} bytes of UTF-8; "
        f"the cap is {MESSAGE_BYTES_CAP} bytes"
    )
    assert str(MessageTooLarge(5, 4)) == "message is 5 bytes of UTF-8; the cap is 4 bytes"


async def test_a_read_only_store_says_so_instead_of_corrupt(tmp_path: Path) -> None:
    path = tmp_path / "rooms.db"
    with SQLiteStore(path) as store:
        await store.add_agent("ada")
        # what SQLite answers when the file or its directory is not writable
        store._db.execute("PRAGMA query_only = ON")
        with pytest.raises(ReadOnlyStore) as caught:
            await store.post("agent:ada", "hi")
        assert caught.value.path == str(path)
        assert str(caught.value).startswith(f"{path} is read-only: coderooms cannot write to it")
        assert "not a usable" not in str(caught.value)
        with pytest.raises(ReadOnlyStore):
            await store.add_agent("bo")
        assert [m.id for m in (await store.roster()).members] == ["ada"]


def test_a_read_only_failure_while_opening_is_read_only_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def refuse(connection: sqlite3.Connection, target: int | None = None) -> list[int]:
        raise sqlite3.OperationalError("attempt to write a readonly database")

    monkeypatch.setattr("coderooms.store.sqlite.apply_migrations", refuse)
    with pytest.raises(ReadOnlyStore):
        SQLiteStore(tmp_path / "rooms.db")


@pytest.mark.parametrize("under", ["afile.txt/x.db", "afile.txt/deeper/x.db"])
def test_a_store_below_a_regular_file_says_the_parent_is_not_a_directory(
    tmp_path: Path, under: str
) -> None:
    (tmp_path / "afile.txt").write_text("just a file")
    with pytest.raises(StoreLocation) as caught:
        open_store(f"sqlite:///{tmp_path / under}")
    assert str(caught.value) == (
        f"cannot open the store at {tmp_path / under}: {tmp_path / 'afile.txt'} is not a directory"
    )


def test_a_directory_is_not_a_store_file(tmp_path: Path) -> None:
    with pytest.raises(StoreLocation, match="it is a directory, not a database file"):
        open_store(str(tmp_path))


@pytest.mark.parametrize("url", [":memory:", "sqlite:///:memory:"])
def test_a_durable_open_refuses_an_in_memory_store_the_library_still_allows(url: str) -> None:
    with pytest.raises(EphemeralStore) as caught:
        open_store(url, durable=True)
    assert isinstance(caught.value, StoreError)
    assert "in-memory" in str(caught.value) and "\n" not in str(caught.value)
    with open_store(url) as store:
        assert isinstance(store, SQLiteStore)


def test_a_non_sqlite_file_is_still_a_corrupt_database(tmp_path: Path) -> None:
    path = tmp_path / "rooms.db"
    path.write_bytes(b"not a database at all" * 300)
    with pytest.raises(CorruptDatabase):
        open_store(str(path))


ADDS: list[tuple[str, Callable[[SQLiteStore, str], Awaitable[Any]]]] = [
    ("the agent id", lambda s, i: s.add_agent(i)),
    ("the person id", lambda s, i: s.add_person(i, "Label")),
    ("the desk id", lambda s, i: s.create_desk(i)),
]


@pytest.mark.parametrize(("what", "add"), ADDS, ids=[w for w, _ in ADDS])
async def test_an_id_that_cannot_be_mentioned_is_refused(
    what: str, add: Callable[[SQLiteStore, str], Awaitable[Any]]
) -> None:
    store = await staffed()
    before = (await store.roster(), await store.desks())
    for bad in ("a b/c", "line\nbreak", "@zz", "x:y", "-dash", "é" * 3, "x" * 65, "bot.v2"):
        with pytest.raises(InvalidIdentifier) as caught:
            await add(store, bad)
        message = str(caught.value)
        assert message.startswith(f"{what} ") and "not a usable id" in message
        assert "\n" not in message.replace("\\n", "") and len(message) < 300
    assert (await store.roster(), await store.desks()) == before
    for fine in ("agent-0", "a_b-c", "_x", "X" * 64):
        await add(store, fine)


@pytest.mark.parametrize("url", ["file:/tmp/x.db", "sqlite:x.db", "mysql://h/db"])
def test_store_urls_that_are_not_sqlite_paths_are_refused(url: str) -> None:
    with pytest.raises(UnsupportedStoreUrl) as caught:
        open_store(url)
    assert "sqlite:///PATH" in str(caught.value)


def test_a_store_url_is_decoded_and_a_home_path_expanded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    with open_store("sqlite:///~/my%20rooms/r.db") as store:
        assert isinstance(store, SQLiteStore)
    assert (tmp_path / "my rooms" / "r.db").is_file()
    assert not (tmp_path / "~").exists()
