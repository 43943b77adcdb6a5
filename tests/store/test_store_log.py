"""The SQLite store's log: posting, validation, paging, scoped views and bulk import."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from coderooms.errors import InvalidBound, UnknownDesk
from coderooms.rooms.memory import MemoryLog
from coderooms.rooms.records import (
    Agent,
    Conversation,
    LogMessage,
    Operator,
    Person,
    SessionPage,
    SessionQuery,
    System,
)
from coderooms.rooms.session import project_session, walk_log
from coderooms.store import (
    MESSAGE_BYTES_CAP,
    READ_LIMIT_CAP,
    BlankMessage,
    ImportOrderError,
    MessageTooLarge,
    ParentInOtherDesk,
    RetiredAuthor,
    SQLiteStore,
    UnknownAuthor,
    UnknownParent,
)
from coderooms.store.base import Store
from coderooms.store.sql import _COLUMNS, VIEW_PAGE_ROWS, VIEW_PAGE_ROWS_MAX
from store_kinds import StoreMaker

ENG = Conversation("eng", "Engineering")
ADA = Agent("ada", "Ada")


async def staffed(store: Store) -> Store:
    await store.add_agent("ada", "Ada")
    await store.add_agent("bo")
    await store.add_person("pat", "Pat Doe")
    await store.create_desk("eng", "Engineering")
    await store.create_desk("ops")
    return store


async def all_rows(store: Store) -> list[LogMessage]:
    page = await store.read_before(None, READ_LIMIT_CAP)
    return list(reversed(page.messages))


# --- posting --------------------------------------------------------------------------


async def test_post_assigns_strictly_increasing_sequences_and_reads_back_the_row(
    new_store: StoreMaker,
) -> None:
    store = await staffed(new_store())
    posted = [await store.post("agent:ada", f"note {i}", desk="eng") for i in range(5)]
    assert [m.sequence for m in posted] == [1, 2, 3, 4, 5]
    assert await all_rows(store) == posted
    assert await store.last_sequence() == 5
    assert await store.message(3) == posted[2]


async def test_post_takes_labels_from_the_roster_not_from_the_caller(new_store: StoreMaker) -> None:
    store = await staffed(new_store())
    by_agent = await store.post(Agent("ada", "Impostor"), "hi", desk="eng")
    by_person = await store.post("person:pat", "hello", desk="eng")
    by_plain_agent = await store.post("agent:bo", "yo", desk="eng")
    assert by_agent.author == Agent("ada", "Ada")
    assert by_person.author == Person("pat", "Pat Doe")
    assert by_plain_agent.author == Agent("bo", "bo")


async def test_operator_and_system_authors_need_no_roster_entry(new_store: StoreMaker) -> None:
    store = await staffed(new_store())
    op = await store.post("operator", "from the operator")
    system = await store.post(System("deploy", "Deploy bot"), "shipped")
    assert op.author == Operator()
    assert system.author == System("deploy", "Deploy bot")
    assert (await store.message(system.sequence)) == system


async def test_post_resolves_the_desk_by_id_then_name_and_stores_its_id(
    new_store: StoreMaker,
) -> None:
    store = await staffed(new_store())
    by_name = await store.post("agent:ada", "x", desk="Engineering")
    by_id = await store.post("agent:ada", "y", desk="eng")
    assert by_name.chat_id == by_id.chat_id == "eng"


@pytest.mark.parametrize("alias", ["General", "main", "MAIN", "general"])
async def test_general_aliases_post_to_general_with_no_chat_id(
    alias: str, new_store: StoreMaker
) -> None:
    store = await staffed(new_store())
    row = await store.post("agent:ada", "hello all", desk=alias)
    assert row.chat_id is None


async def test_post_refuses_unknown_desk(new_store: StoreMaker) -> None:
    store = await staffed(new_store())
    with pytest.raises(UnknownDesk):
        await store.post("agent:ada", "x", desk="nowhere")


@pytest.mark.parametrize("content", ["", "   ", "\n\t \n"])
async def test_post_refuses_blank_content(content: str, new_store: StoreMaker) -> None:
    store = await staffed(new_store())
    with pytest.raises(BlankMessage, match="blank"):
        await store.post("agent:ada", content, desk="eng")
    assert await store.last_sequence() is None


async def test_post_refuses_content_over_the_byte_cap_counting_utf8_bytes(
    new_store: StoreMaker,
) -> None:
    store = await staffed(new_store())
    fits = "é" * (MESSAGE_BYTES_CAP // 2)
    assert (await store.post("agent:ada", fits, desk="eng")).content == fits
    with pytest.raises(MessageTooLarge) as caught:
        await store.post("agent:ada", fits + "x", desk="eng")
    assert caught.value.size == MESSAGE_BYTES_CAP + 1
    assert caught.value.cap == MESSAGE_BYTES_CAP


@pytest.mark.parametrize("author", ["agent:nobody", "person:nobody", "system: ", "robot:x", "ada"])
async def test_post_refuses_authors_that_are_not_known(author: str, new_store: StoreMaker) -> None:
    store = await staffed(new_store())
    with pytest.raises(UnknownAuthor):
        await store.post(author, "x", desk="eng")


async def test_post_refuses_a_retired_agent_but_keeps_its_old_rows(new_store: StoreMaker) -> None:
    store = await staffed(new_store())
    old = await store.post("agent:ada", "before retiring", desk="eng")
    await store.retire_agent("ada")
    with pytest.raises(RetiredAuthor, match="retired"):
        await store.post("agent:ada", "after", desk="eng")
    assert await all_rows(store) == [old]


async def test_reply_must_name_an_existing_parent(new_store: StoreMaker) -> None:
    store = await staffed(new_store())
    with pytest.raises(UnknownParent):
        await store.post("agent:ada", "reply", desk="eng", parent=7)


async def test_reply_must_stay_in_its_parents_desk(new_store: StoreMaker) -> None:
    store = await staffed(new_store())
    root = await store.post("agent:ada", "root", desk="eng")
    with pytest.raises(ParentInOtherDesk):
        await store.post("agent:ada", "reply", desk="ops", parent=root.sequence)
    with pytest.raises(ParentInOtherDesk):
        await store.post("agent:ada", "reply", desk="main", parent=root.sequence)
    reply = await store.post("agent:bo", "reply", desk="Engineering", parent=root.sequence)
    assert reply.parent == root.sequence


async def test_a_refused_post_appends_nothing(new_store: StoreMaker) -> None:
    store = await staffed(new_store())
    await store.post("agent:ada", "one", desk="eng")
    for bad in (
        store.post("agent:ghost", "x", desk="eng"),
        store.post("agent:ada", "x", desk="ghost"),
        store.post("agent:ada", "x", desk="eng", parent=99),
    ):
        with pytest.raises(Exception):  # noqa: B017 - each is a different typed refusal
            await bad
    assert await store.last_sequence() == 1
    assert (await store.post("agent:ada", "two", desk="eng")).sequence == 2


# --- reading the whole log -------------------------------------------------------------


async def test_read_before_is_exclusive_newest_first_and_pages_with_a_cursor(
    new_store: StoreMaker,
) -> None:
    store = await staffed(new_store())
    for i in range(7):
        await store.post("agent:ada", f"m{i}", desk="eng")
    page = await store.read_before(6, 3)
    assert [m.sequence for m in page.messages] == [5, 4, 3]
    assert page.next_before == 3
    tail = await store.read_before(3, 3)
    assert [m.sequence for m in tail.messages] == [2, 1]
    assert tail.next_before is None


async def test_read_before_limits(new_store: StoreMaker) -> None:
    store = await staffed(new_store())
    await store.post("agent:ada", "m", desk="eng")
    assert await store.read_before(None, 0) == SessionPage(())
    assert await store.read_before(0, 5) == SessionPage(())
    with pytest.raises(InvalidBound):
        await store.read_before(None, -1)


async def test_read_before_on_an_empty_log_is_an_empty_final_page(new_store: StoreMaker) -> None:
    store = new_store()
    assert await store.read_before(None, 10) == SessionPage(())


# --- scoped views -----------------------------------------------------------------------


def row(sequence: int, chat: str | None, parent: int | None = None) -> LogMessage:
    return LogMessage(sequence, ADA, f"row {sequence}", chat_id=chat, parent=parent)


async def test_desk_view_holds_rows_filed_under_the_desk_id_or_name_only(
    new_store: StoreMaker,
) -> None:
    store = new_store()
    store.import_messages(
        [row(1, "eng"), row(2, "Engineering"), row(3, "ENGINEERING"), row(4, None), row(5, "eng")]
    )
    view = store.conversation_log(ENG)
    page = await view.read_before(None, 10)
    assert [m.sequence for m in page.messages] == [5, 2, 1]
    first = await view.read_before(None, 2)
    assert [m.sequence for m in first.messages] == [5, 2]
    assert first.next_before == 2
    rest = await view.read_before(first.next_before, 2)
    assert [m.sequence for m in rest.messages] == [1]
    assert rest.next_before is None


async def test_general_view_holds_every_general_alias(new_store: StoreMaker) -> None:
    store = new_store()
    store.import_messages(
        [row(1, None), row(2, ""), row(3, "main"), row(4, "GENERAL"), row(5, "eng"), row(6, "mäin")]
    )
    view = store.conversation_log(Conversation("General", "General"))
    page = await view.read_before(None, 10)
    assert [m.sequence for m in page.messages] == [4, 3, 2, 1]


async def test_thread_view_holds_the_root_and_its_direct_replies_in_the_desk(
    new_store: StoreMaker,
) -> None:
    store = new_store()
    store.import_messages(
        [
            row(1, "eng"),
            row(2, "eng", parent=1),
            row(3, "eng"),
            row(4, "eng", parent=2),  # a grandchild: not a direct reply
            row(5, "ops", parent=1),  # filed in another desk
            row(6, "Engineering", parent=1),
        ]
    )
    view = store.conversation_log(Conversation("eng", "Engineering", thread_root=1))
    page = await view.read_before(None, 10)
    assert [m.sequence for m in page.messages] == [6, 2, 1]
    assert [m.sequence for m in (await view.read_before(6, 1)).messages] == [2]
    missing = store.conversation_log(Conversation("eng", "Engineering", thread_root=2**70))
    assert await missing.read_before(None, 10) == SessionPage(())


async def test_views_answer_short_pages_and_still_project_what_the_whole_log_does(
    new_store: StoreMaker,
) -> None:
    rows = [
        row(i, "eng" if i % 3 else "ops", parent=(i - 3 if i % 5 == 0 and i > 3 else None))
        for i in range(1, 400)
    ]
    store = new_store()
    store.import_messages(rows)
    view = store.conversation_log(ENG)
    page = await view.read_before(None, 512)
    assert len(page.messages) == VIEW_PAGE_ROWS
    assert page.next_before == page.messages[-1].sequence
    for window in (30, 100, 300):
        query = SessionQuery(ENG, None, window)
        assert await project_session(view, query) == await project_session(MemoryLog(rows), query)


async def test_a_view_read_that_continues_the_last_one_may_return_twice_as_many(
    new_store: StoreMaker,
) -> None:
    store = new_store()
    store.import_messages(row(i, "eng") for i in range(1, 3000))
    view = store.conversation_log(ENG)
    sizes: list[int] = []
    before = None
    while True:
        page = await view.read_before(before, 512)
        sizes.append(len(page.messages))
        if page.next_before is None:
            break
        before = page.next_before
    assert sizes[:5] == [VIEW_PAGE_ROWS, 2 * VIEW_PAGE_ROWS, 4 * VIEW_PAGE_ROWS, 512, 512]
    assert sum(sizes) == 2999 and max(sizes) == VIEW_PAGE_ROWS_MAX
    # a read from anywhere else starts small again, and a small ask is still honoured
    assert len((await view.read_before(2000, 512)).messages) == VIEW_PAGE_ROWS
    assert len((await view.read_before(2000 - VIEW_PAGE_ROWS, 10)).messages) == 10
    assert len((await view.read_before(None, 512)).messages) == VIEW_PAGE_ROWS


async def test_a_long_walk_over_a_view_takes_few_reads_and_sees_what_the_whole_log_has(
    new_store: StoreMaker,
) -> None:
    rows = [
        row(i, "eng" if i % 4 else "ops", parent=(i - 4 if i % 7 == 0 else None))
        for i in range(1, 5000)
    ]
    store = new_store()
    store.import_messages(rows)
    view = store.conversation_log(ENG)
    sizes: list[int] = []

    class Counted:
        async def read_before(self, before: int | None, limit: int) -> SessionPage:
            page = await view.read_before(before, limit)
            sizes.append(len(page.messages))
            return page

    seen = [r.sequence async for r in walk_log(Counted(), None, 2048)]
    assert seen == [r.sequence for r in reversed(rows) if r.chat_id == "eng"][:2048]
    assert sizes[:3] == [VIEW_PAGE_ROWS, 2 * VIEW_PAGE_ROWS, 4 * VIEW_PAGE_ROWS]
    assert sum(sizes) == 2048 and len(sizes) < 2048 // VIEW_PAGE_ROWS // 4
    thread = store.conversation_log(Conversation("eng", "Engineering", thread_root=3))
    assert [r.sequence async for r in walk_log(thread, None)] == [
        r.sequence
        for r in reversed(rows)
        if r.sequence == 3 or (r.parent == 3 and r.chat_id == "eng")
    ]


def _plan(store: SQLiteStore, sql: str, params: tuple[object, ...]) -> str:
    return " | ".join(r[-1] for r in store._db.execute("EXPLAIN QUERY PLAN " + sql, params))


async def test_reads_are_served_by_indexes_not_table_scans() -> None:
    store = SQLiteStore(":memory:")
    whole = _plan(
        store, "SELECT * FROM messages WHERE sequence <= ? ORDER BY sequence DESC LIMIT ?", (5, 5)
    )
    desk = _plan(
        store,
        "SELECT * FROM messages WHERE chat_key = ? AND sequence <= ? "
        "ORDER BY sequence DESC LIMIT ?",
        ("eng", 5, 5),
    )
    thread = _plan(
        store,
        "SELECT * FROM messages WHERE parent = ? AND sequence <= ? AND chat_key IN (?, ?) "
        "ORDER BY sequence DESC LIMIT ?",
        (1, 5, "eng", "x", 5),
    )
    assert "INTEGER PRIMARY KEY" in whole
    assert "messages_by_chat" in desk and "TEMP B-TREE" not in desk
    desk_page = _plan(
        store,
        f"SELECT {_COLUMNS} FROM messages WHERE chat_key = ? AND sequence <= ? "
        "AND sequence > ? ORDER BY sequence DESC LIMIT ?",
        ("eng", 5, -1, 5),
    )
    assert "COVERING INDEX messages_by_chat" in desk_page
    assert "messages_by_parent" in thread and "TEMP B-TREE" not in thread


rows_strategy = st.lists(
    st.tuples(
        st.sampled_from(["eng", "Engineering", "ops", None, "main", "ENG"]),
        st.integers(min_value=0, max_value=8),
        st.sampled_from(["text", "  ", "more text"]),
        st.sampled_from([ADA, Person("pat", "Pat"), Operator()]),
    ),
    max_size=60,
)


def build_rows(spec: list[tuple[str | None, int, str, object]]) -> list[LogMessage]:
    out: list[LogMessage] = []
    for index, (chat, parent_pick, content, author) in enumerate(spec, start=1):
        parent = parent_pick if 0 < parent_pick < index and parent_pick % 2 else None
        out.append(LogMessage(index, author, content, chat_id=chat, parent=parent))  # type: ignore[arg-type]
    return out


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(
    spec=rows_strategy,
    thread=st.one_of(st.none(), st.integers(min_value=1, max_value=8)),
    window=st.integers(min_value=0, max_value=12),
    before=st.one_of(st.none(), st.integers(min_value=0, max_value=70)),
)
async def test_scoped_views_project_exactly_what_the_whole_log_projects(
    spec: list[tuple[str | None, int, str, object]],
    thread: int | None,
    window: int,
    before: int | None,
    new_store: StoreMaker,
) -> None:
    rows = build_rows(spec)
    store = new_store()
    store.import_messages(rows)
    query = SessionQuery(Conversation("eng", "Engineering", thread), before, window)
    expected = await project_session(MemoryLog(rows), query)
    assert await project_session(store, query) == expected
    assert await project_session(store.conversation_log(query.conversation), query) == expected
    store.close()


# --- bulk import ------------------------------------------------------------------------


async def test_import_keeps_exact_sequences_and_posts_continue_after_them(
    new_store: StoreMaker,
) -> None:
    store = await staffed(new_store())
    imported = [row(10, "eng"), row(20, "eng", parent=10), row(35, None)]
    assert store.import_messages(imported) == 3
    assert await all_rows(store) == imported
    assert (await store.post("agent:ada", "next", desk="eng")).sequence == 36


@pytest.mark.parametrize("sequences", [[3, 3], [5, 4], [-1], [2**63]])
async def test_import_refuses_rows_out_of_order_and_imports_nothing(
    sequences: list[int], new_store: StoreMaker
) -> None:
    store = new_store()
    with pytest.raises(ImportOrderError):
        store.import_messages([row(s, "eng") for s in sequences])
    assert await store.last_sequence() is None


async def test_import_refuses_rows_at_or_below_the_last_row(new_store: StoreMaker) -> None:
    store = await staffed(new_store())
    await store.post("agent:ada", "one", desk="eng")
    with pytest.raises(ImportOrderError):
        store.import_messages([row(1, "eng")])


async def test_rows_survive_reopening_the_store(new_store: StoreMaker) -> None:
    store = await staffed(new_store())
    posted = await store.post("agent:ada", "kept", desk="eng")
    with new_store.again(store) as again:
        assert await again.message(posted.sequence) == posted
        assert (await again.roster()).member("ada") is not None


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(
    spec=rows_strategy,
    limit=st.integers(min_value=1, max_value=7),
    before=st.one_of(st.none(), st.integers(min_value=0, max_value=70)),
)
async def test_a_desk_view_pages_the_desk_rows_of_every_key_newest_first(
    spec: list[tuple[str | None, int, str, object]],
    limit: int,
    before: int | None,
    new_store: StoreMaker,
) -> None:
    # Small pages make each chat key (desk id and desk name) fill a page on its own, so
    # the rows of one key must be merged into the other's without skipping any.
    rows = build_rows(spec)
    store = new_store()
    store.import_messages(rows)
    view = store.conversation_log(Conversation("eng", "Engineering"))
    expected = [
        r.sequence
        for r in reversed(rows)
        if r.chat_id in ("eng", "Engineering") and (before is None or r.sequence < before)
    ]
    seen: list[int] = []
    cursor = before
    while True:
        page = await view.read_before(cursor, limit)
        assert len(page.messages) <= limit
        seen.extend(m.sequence for m in page.messages)
        if page.next_before is None:
            break
        cursor = page.next_before
    assert seen == expected
    store.close()


def test_page_decoding_fills_messages_equal_to_the_constructor() -> None:
    """``_page`` fills ``LogMessage`` slots directly; that is only sound while the record
    has exactly these fields and no ``__post_init__``, and the result must be equal."""
    import dataclasses

    from coderooms.store.sql import _page, _row_message

    assert [f.name for f in dataclasses.fields(LogMessage)] == [
        "sequence",
        "author",
        "content",
        "chat_id",
        "parent",
        "posted_at",
    ]
    assert not hasattr(LogMessage, "__post_init__")
    authors = {1: Agent("ada", "Ada"), 2: Person("bo", "Bo"), 3: Operator()}
    rows = [
        (9, "eng", 4, 1, "second", "2026-12-01T10:00:00Z"),
        (7, None, None, 2, "first", None),
        (5, None, None, 3, "op", None),
    ]
    decoded: dict[int, object] = {}
    page = _page(rows, 3, decoded, authors.__getitem__)  # type: ignore[arg-type]
    assert page.messages == tuple(_row_message(row, authors.__getitem__) for row in rows)
    assert page.next_before == 5
    assert hash(page.messages[0]) == hash(_row_message(rows[0], authors.__getitem__))
    with pytest.raises(dataclasses.FrozenInstanceError):
        page.messages[0].content = "changed"  # type: ignore[misc]


async def test_an_author_added_by_a_post_that_rolled_back_is_not_reused(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "rooms.db")
    await store.add_person("pat", "Pat")
    await store.add_person("quinn", "Quinn")
    # a trigger fails the message insert after the post has added Pat's author row
    store._db.execute(
        "CREATE TRIGGER refuse BEFORE INSERT ON messages WHEN NEW.content = 'boom' "
        "BEGIN SELECT RAISE(ABORT, 'refused by a test trigger'); END"
    )
    with pytest.raises(sqlite3.IntegrityError):
        await store.post("person:pat", "boom")
    # Quinn now takes the reference Pat's rolled-back row had
    by_quinn = await store.post("person:quinn", "first")
    by_pat = await store.post("person:pat", "second")
    page = await store.read_before(None, 10)
    assert [(m.content, m.author) for m in page.messages] == [
        ("second", Person("pat", "Pat")),
        ("first", Person("quinn", "Quinn")),
    ]
    assert (by_quinn.author, by_pat.author) == (Person("quinn", "Quinn"), Person("pat", "Pat"))
    # the store's own cache agrees with a fresh reader of the file
    with SQLiteStore(tmp_path / "rooms.db") as fresh:
        assert (await fresh.read_before(None, 10)).messages == page.messages
    store.close()


async def test_a_pin_of_a_message_its_desk_does_not_hold_is_refused_and_writes_nothing(
    new_store: StoreMaker,
) -> None:
    """``!pin ^N`` used to be taken for any N: a missing message, one of another desk, or
    a word that is no number (``^-1`` pinned the post itself, with "^-1" as its note)."""
    from coderooms.store import InvalidPinTarget, PinTargetNotInDesk

    store = new_store()
    await store.add_agent("ada")
    await store.create_desk("ops")
    here = (await store.post("agent:ada", "in General")).sequence
    elsewhere = (await store.post("agent:ada", "in ops", desk="ops")).sequence
    refused: list[tuple[str, str, type[Exception]]] = [
        ("!pin ^99999", "General", PinTargetNotInDesk),
        (f"!pin ^{elsewhere} #leak look", "General", PinTargetNotInDesk),
        (f"!unpin ^{here}", "ops", PinTargetNotInDesk),
        ("!pin ^-1", "General", InvalidPinTarget),
        ("ok\n!unpin ^99999999999999999999999", "General", InvalidPinTarget),
        ("!pin #label ^x", "General", InvalidPinTarget),
    ]
    for content, desk, error in refused:
        with pytest.raises(error):
            await store.post("agent:ada", content, desk=desk)
    assert await store.last_sequence() == elsewhere  # nothing was written
    pinned = await store.post("agent:ada", f"!pin ^{here} #plan keep this")
    assert pinned.sequence == elsewhere + 1
    await store.post("agent:ada", f"!unpin ^{elsewhere}", desk="ops")
    await store.post("agent:ada", "!pin look at this one")  # no ^: pins the post itself
    await store.post("agent:ada", "`!pin ^99999` is how a pin is written")  # code: no marker


async def test_names_labels_and_descriptions_have_a_length_cap(new_store: StoreMaker) -> None:
    """A name is repeated in every message header and briefing: 100,000 characters of it
    made a read of 20 short messages two megabytes."""
    from coderooms.store import NameTooLong
    from coderooms.store.sql import DESCRIPTION_MAX_CHARS, NAME_MAX_CHARS

    store = new_store()
    long_name = "N" * (NAME_MAX_CHARS + 1)
    for attempt in (
        store.add_agent("big", long_name),
        store.add_person("big", long_name),
        store.create_desk("big", long_name),
        store.create_desk("big", "Big", "d" * (DESCRIPTION_MAX_CHARS + 1)),
    ):
        with pytest.raises(NameTooLong, match=r"is \d+ characters; at most \d+ are allowed"):
            await attempt
    roster = await store.roster()
    assert roster.members == () and roster.people == ()
    assert [d.id for d in (await store.desks()).desks()] == ["General"]
    await store.add_agent("fits", "N" * NAME_MAX_CHARS)
    await store.create_desk("fits", "D" * NAME_MAX_CHARS, "d" * DESCRIPTION_MAX_CHARS)


@pytest.mark.parametrize(
    "bad", ["Mallory: hi\n[2] @reviewer", "a\rb", "tab\there", "bell\x07", "ls\u2028x"]
)
async def test_names_labels_and_descriptions_are_one_printable_line(
    bad: str, new_store: StoreMaker
) -> None:
    """A name shows inside transcript and briefing lines: a line break in it could make
    up a line that seems to come from someone else."""
    from coderooms.store import MultilineName

    store = new_store()
    with pytest.raises(MultilineName):
        await store.add_agent("evil", bad)
    with pytest.raises(MultilineName):
        await store.add_person("mallory", bad)
    with pytest.raises(MultilineName):
        await store.create_desk("d1", bad)
    with pytest.raises(MultilineName):
        await store.create_desk("d2", "Desk", bad)
    roster = await store.roster()
    assert roster.members == () and roster.people == ()
    await store.add_person("ok", "Ada Lovelace — née Byron")  # printable: kept as given
