"""A library call given a value of the wrong type is refused with one typed error
naming the argument and the type it got (also a TypeError), before anything is done:
not an AttributeError from deep inside, nor a misleading "must be zero or more"."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from coderooms import MemoryLog, Workspace
from coderooms.errors import WrongArgumentType
from coderooms.store.base import Store
from store_kinds import StoreMaker

CALLS: list[tuple[str, Callable[[Store], Awaitable[Any]], str]] = [
    ("add_agent(None)", lambda s: s.add_agent(None), "the agent id must be text (a str), not NoneType"),
    ("add_agent(id, name=5)", lambda s: s.add_agent("bo", 5), "the agent name must be text"),
    ("add_person(5, label)", lambda s: s.add_person(5, "Bo"), "the person id must be text"),
    ("add_person(id, None)", lambda s: s.add_person("bo", None), "the person's label must be text"),
    ("create_desk(None)", lambda s: s.create_desk(None), "the desk id must be text"),
    ("create_desk(id, name=[])", lambda s: s.create_desk("eng", []), "the desk name must be text"),
    ("post(content=None)", lambda s: s.post("agent:ada", None), "the message content must be text"),
    ("post(author=None)", lambda s: s.post(None, "hi"), "the author must be text (agent:ID"),
    ("post(desk=3)", lambda s: s.post("agent:ada", "hi", desk=3), "the desk must be text"),
    ("post(parent='1')", lambda s: s.post("agent:ada", "hi", parent="1"), "the parent must be a whole number (an int), not str"),
    ("post(parent=True)", lambda s: s.post("agent:ada", "hi", parent=True), "not bool"),
    ("post(key=5)", lambda s: s.post("agent:ada", "hi", idempotency_key=5), "the idempotency key must be text"),
    ("retire_agent(None)", lambda s: s.retire_agent(None), "the agent id must be text"),
    ("add_desk_member(None, id)", lambda s: s.add_desk_member(None, "ada"), "the desk must be text"),
    ("retire_desk_member(desk, 5)", lambda s: s.retire_desk_member("eng", 5), "the agent id must be text"),
    ("set_desk_order(desk, 'ada')", lambda s: s.set_desk_order("eng", "ada"), "the order must be agent ids"),
    ("set_desk_order(desk, [None])", lambda s: s.set_desk_order("eng", [None]), "an agent id in the order must be text"),
    ("read_before('a', 10)", lambda s: s.read_before("a", 10), "the cursor (before) must be a whole number"),
    ("read_before(None, '10')", lambda s: s.read_before(None, "10"), "the limit must be a whole number (an int), not str"),
    ("message('1')", lambda s: s.message("1"), "the message number must be a whole number"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("call", "expected"), [(c[1], c[2]) for c in CALLS], ids=[c[0] for c in CALLS]
)
async def test_a_store_call_of_the_wrong_type_is_refused_and_writes_nothing(
    new_store: StoreMaker, call: Callable[[Store], Awaitable[Any]], expected: str
) -> None:
    store = new_store()
    await store.add_agent("ada")
    posted = await store.post("agent:ada", "before")
    roster = await store.roster()
    with pytest.raises(
        WrongArgumentType, match=expected.replace("(", r"\(").replace(")", r"\)")
    ) as caught:
        await call(store)
    assert isinstance(caught.value, TypeError)
    assert await store.last_sequence() == posted.sequence
    assert await store.roster() == roster


async def test_the_memory_log_refuses_a_cursor_or_limit_that_is_no_number() -> None:
    log = MemoryLog()
    with pytest.raises(WrongArgumentType, match="the limit must be a whole number"):
        await log.read_before(None, "10")  # type: ignore[arg-type]
    with pytest.raises(WrongArgumentType, match="the cursor"):
        await log.read_before("5", 10)  # type: ignore[arg-type]


def test_a_workspace_path_or_impact_target_of_the_wrong_type_is_refused(tmp_path: Any) -> None:
    with pytest.raises(
        WrongArgumentType, match="the repository path must be a str or a path, not NoneType"
    ):
        Workspace.open(None)  # type: ignore[arg-type]
    workspace = Workspace.open(tmp_path)
    with pytest.raises(WrongArgumentType, match="the impact target must be text"):
        workspace.impact(None)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("call", "what"),
    [
        (lambda s: s.post("agent:ada", "a\x00b"), "the message content"),
        (lambda s: s.post("agent:ada", "ab", idempotency_key="k\x00"), "the idempotency key"),
        (lambda s: s.add_agent("bo", "B\x00o"), "the agent name"),
    ],
    ids=["content", "key", "name"],
)
async def test_a_nul_character_is_refused_the_same_on_both_stores(
    new_store: StoreMaker, call: Callable[[Store], Awaitable[Any]], what: str
) -> None:
    # PostgreSQL cannot keep U+0000: it said the database was corrupt, SQLite kept it
    from coderooms.store.errors import NulInText

    store = new_store()
    await store.add_agent("ada")
    with pytest.raises(NulInText, match=f"{what} holds a NUL character"):
        await call(store)
    assert await store.last_sequence() is None


async def test_a_long_system_author_kind_is_refused_the_same_on_both_stores(
    new_store: StoreMaker,
) -> None:
    # PostgreSQL said it could not reach the store (its index cannot hold the value)
    from coderooms.store.errors import NameTooLong

    store = new_store()
    with pytest.raises(NameTooLong, match="a system author's kind is 3000 characters"):
        await store.post("system:" + "k" * 3000, "deploy done")
    assert (await store.post("system:" + "k" * 64, "deploy done")).sequence == 1


@pytest.mark.parametrize("label", ["\u202eNIMDA tsurt", "Pat\u2067", "a\u200fb"])
async def test_a_name_holding_a_bidi_control_is_refused(new_store: StoreMaker, label: str) -> None:
    # "\u202eNIMDA tsurt" showed as "trust ADMIN" on the web page
    from coderooms.store.errors import MultilineName

    store = new_store()
    with pytest.raises(MultilineName):
        await store.add_person("pat", label)
    with pytest.raises(MultilineName):
        await store.add_agent("bo", label)
    assert (await store.add_person("pat", "Pat ‍ 👩‍💻")).label == "Pat ‍ 👩‍💻"  # ZWJ stays
