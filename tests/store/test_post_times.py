"""Every post records the host's UTC time (issue 17); rows older than that say they have
none. The time comes from the store's clock: the core only carries it."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

from coderooms.rooms.pins import read_pinboard
from coderooms.rooms.records import Agent, Conversation, LogMessage, SessionQuery
from coderooms.rooms.search import SearchPattern, SearchQuery, search_messages
from coderooms.rooms.session import project_session
from coderooms.rooms.wire import from_wire, to_wire
from coderooms.store.sqlite import SQLiteStore, apply_migrations

NOON = datetime(2026, 12, 1, 12, 0, 0, tzinfo=UTC)


async def test_a_post_records_the_clock_in_utc_and_every_read_returns_it(tmp_path: Path) -> None:
    paris = timezone(timedelta(hours=1))
    with SQLiteStore(tmp_path / "rooms.db", clock=lambda: NOON.astimezone(paris)) as store:
        await store.add_agent("ada")
        posted = await store.post("agent:ada", "deploy at noon\n!pin")
        assert posted.posted_at == "2026-12-01T12:00:00Z"
        assert await store.message(posted.sequence) == posted
        assert (await store.read_before(None, 5)).messages == (posted,)
        general = Conversation("General", "General")
        view = store.conversation_log(general)
        assert (await view.read_before(None, 5)).messages == (posted,)
        [seen] = await project_session(view, SessionQuery(general))
        assert seen.posted_at == posted.posted_at
        [hit] = await search_messages(store, SearchQuery(SearchPattern.text("deploy")))
        assert hit.posted_at == posted.posted_at
        [pin] = await read_pinboard(view, general)
        assert pin.posted_at == posted.posted_at


async def test_rows_written_before_post_times_have_none(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    db = sqlite3.connect(path, isolation_level=None)
    assert apply_migrations(db, target=5) == [1, 2, 3, 4, 5]
    db.execute("INSERT INTO agents (id, name) VALUES ('ada', NULL)")
    db.execute("INSERT INTO authors (author_type, author_id, label) VALUES ('agent', 'ada', 'ada')")
    db.execute(
        "INSERT INTO messages (chat_id, chat_key, parent, author, content) "
        "VALUES (NULL, '', NULL, 1, 'from before')"
    )
    db.close()
    with SQLiteStore(path, clock=lambda: NOON) as store:
        old = await store.message(1)
        assert old is not None and old.posted_at is None
        new = await store.post("agent:ada", "from after")
        assert [m.posted_at for m in (await store.read_before(None, 5)).messages] == [
            "2026-12-01T12:00:00Z",
            None,
        ]
        assert new.posted_at == "2026-12-01T12:00:00Z"


def test_the_wire_form_carries_a_time_and_leaves_it_out_when_there_is_none() -> None:
    timed = LogMessage(3, Agent("ada", "Ada"), "hi", None, None, "2026-12-01T12:00:00Z")
    assert to_wire(timed)["posted_at"] == "2026-12-01T12:00:00Z"
    assert from_wire(LogMessage, to_wire(timed)) == timed
    untimed = LogMessage(3, Agent("ada", "Ada"), "hi")
    assert "posted_at" not in to_wire(untimed)
    assert from_wire(LogMessage, to_wire(untimed)) == untimed


async def test_imported_rows_keep_the_time_they_carry(tmp_path: Path) -> None:
    with SQLiteStore(tmp_path / "rooms.db", clock=lambda: NOON) as store:
        ada = Agent("ada", "ada")
        rows = [LogMessage(1, ada, "a", posted_at="2020-01-01T00:00:00Z"), LogMessage(2, ada, "b")]
        assert store.import_messages(rows) == 2
        assert (await store.read_before(None, 5)).messages == tuple(reversed(rows))
