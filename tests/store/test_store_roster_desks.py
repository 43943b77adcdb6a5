"""Roster and desks kept by every store (SQLite and PostgreSQL): every change validated before it commits."""

from __future__ import annotations

import pytest

from coderooms.errors import (
    DuplicateOrderMember,
    IncompleteOrder,
    ReservedDeskIdentity,
    UnknownDesk,
    UnknownOrderMember,
)
from coderooms.rooms.desks import GENERAL_DESK, Desk, DeskMember, DeskOrder, DeskSet
from coderooms.rooms.roster import Roster, RosterMember, RosterPerson
from coderooms.store import (
    AgentExists,
    BlankIdentifier,
    DeskConflict,
    DeskMembership,
    GeneralDeskMembership,
    PersonExists,
    RetiredAuthor,
    UnknownAuthor,
)
from coderooms.store.base import Store
from store_kinds import StoreMaker


async def team(store: Store) -> Store:
    for agent in ("ada", "bo", "cy"):
        await store.add_agent(agent)
    await store.create_desk("eng", "Engineering", "builds things")
    return store


async def test_roster_keeps_agents_in_order_people_and_retirements(new_store: StoreMaker) -> None:
    store = new_store()
    assert await store.add_agent("ada", "Ada") == RosterMember("ada", "Ada")
    await store.add_agent("bo")
    assert await store.add_person("pat", "Pat") == RosterPerson("pat", "Pat")
    await store.retire_agent("ada")
    await store.retire_agent("ada")
    assert await store.roster() == Roster(
        (RosterMember("ada", "Ada"), RosterMember("bo")), (RosterPerson("pat", "Pat"),), ("ada",)
    )


async def test_a_blank_agent_name_means_no_name(new_store: StoreMaker) -> None:
    store = new_store()
    assert await store.add_agent("ada", "  ") == RosterMember("ada", None)


async def test_roster_refusals(new_store: StoreMaker) -> None:
    store = await team(new_store())
    await store.add_person("pat", "Pat")
    with pytest.raises(AgentExists):
        await store.add_agent("ada")
    with pytest.raises(PersonExists):
        await store.add_person("pat", "Other Pat")
    with pytest.raises(BlankIdentifier, match="agent id"):
        await store.add_agent(" ")
    with pytest.raises(BlankIdentifier, match="person id"):
        await store.add_person("", "Nobody")
    with pytest.raises(BlankIdentifier, match="label"):
        await store.add_person("quinn", " ")
    with pytest.raises(UnknownAuthor):
        await store.retire_agent("ghost")


async def test_agent_and_person_ids_are_separate_namespaces(new_store: StoreMaker) -> None:
    store = await team(new_store())
    await store.add_person("ada", "Ada the person")
    assert (await store.roster()).person("ada") == RosterPerson("ada", "Ada the person")


async def test_desks_always_declare_general_and_list_created_desks(new_store: StoreMaker) -> None:
    store = await team(new_store())
    desk = await store.create_desk("ops")
    assert desk == Desk("ops", "ops")
    desks = await store.desks()
    assert desks.declared == (GENERAL_DESK,)
    assert desks.added == (Desk("eng", "Engineering", "builds things"), Desk("ops", "ops"))
    assert desks.resolve("Engineering").id == "eng"


@pytest.mark.parametrize(("desk_id", "name"), [("main", None), ("x", "General"), ("GENERAL", "y")])
async def test_a_desk_cannot_take_the_general_identity(
    desk_id: str, name: str | None, new_store: StoreMaker
) -> None:
    store = await team(new_store())
    with pytest.raises(ReservedDeskIdentity):
        await store.create_desk(desk_id, name)


@pytest.mark.parametrize(
    ("desk_id", "name"), [("eng", "New"), ("new", "eng"), ("Engineering", None)]
)
async def test_a_desk_id_or_name_cannot_repeat_another_desks(
    desk_id: str,
    name: str | None,
    new_store: StoreMaker,
) -> None:
    store = await team(new_store())
    with pytest.raises(DeskConflict):
        await store.create_desk(desk_id, name)
    assert len((await store.desks()).added) == 1


async def test_blank_desk_id_or_name_is_refused(new_store: StoreMaker) -> None:
    store = await team(new_store())
    with pytest.raises(BlankIdentifier):
        await store.create_desk(" ")
    with pytest.raises(BlankIdentifier):
        await store.create_desk("ok", "")


async def test_members_are_added_in_order_and_retired(new_store: StoreMaker) -> None:
    store = await team(new_store())
    for agent in ("bo", "ada", "cy"):
        await store.add_desk_member("Engineering", agent)
    await store.retire_desk_member("eng", "ada")
    desks = await store.desks()
    assert desks.members("eng") == ["bo", "cy"]
    assert desks.retired == (DeskMember("eng", "ada"),)


async def test_membership_refusals(new_store: StoreMaker) -> None:
    store = await team(new_store())
    await store.add_desk_member("eng", "ada")
    with pytest.raises(DeskMembership, match="already a member"):
        await store.add_desk_member("eng", "ada")
    with pytest.raises(DeskMembership, match="not a member"):
        await store.retire_desk_member("eng", "bo")
    with pytest.raises(UnknownAuthor):
        await store.add_desk_member("eng", "ghost")
    with pytest.raises(UnknownDesk):
        await store.add_desk_member("nowhere", "ada")
    with pytest.raises(GeneralDeskMembership):
        await store.add_desk_member("main", "ada")
    await store.retire_agent("cy")
    with pytest.raises(RetiredAuthor):
        await store.add_desk_member("eng", "cy")


async def test_a_retired_member_can_rejoin(new_store: StoreMaker) -> None:
    store = await team(new_store())
    await store.add_desk_member("eng", "ada")
    await store.retire_desk_member("eng", "ada")
    await store.add_desk_member("eng", "ada")
    assert (await store.desks()).members("eng") == ["ada"]


async def test_an_order_replaces_the_member_sequence(new_store: StoreMaker) -> None:
    store = await team(new_store())
    for agent in ("ada", "bo", "cy"):
        await store.add_desk_member("eng", agent)
    await store.set_desk_order("eng", ["cy", "ada", "bo"])
    desks = await store.desks()
    assert desks.orders == (DeskOrder("eng", ("cy", "ada", "bo")),)
    assert desks.members("eng") == ["cy", "ada", "bo"]
    await store.set_desk_order("Engineering", ["bo", "cy", "ada"])
    assert (await store.desks()).members("eng") == ["bo", "cy", "ada"]


async def test_an_ordered_desk_keeps_a_whole_order_as_members_come_and_go(
    new_store: StoreMaker,
) -> None:
    store = await team(new_store())
    await store.add_desk_member("eng", "ada")
    await store.add_desk_member("eng", "bo")
    await store.set_desk_order("eng", ["bo", "ada"])
    await store.add_desk_member("eng", "cy")
    assert (await store.desks()).members("eng") == ["bo", "ada", "cy"]
    await store.retire_desk_member("eng", "bo")
    assert (await store.desks()).members("eng") == ["ada", "cy"]


@pytest.mark.parametrize(
    ("order", "error"),
    [
        (["ada", "ada", "bo"], DuplicateOrderMember),
        (["ada", "bo", "cy"], UnknownOrderMember),
        (["ada"], IncompleteOrder),
    ],
)
async def test_a_bad_order_is_refused_and_changes_nothing(
    order: list[str],
    error: type[Exception],
    new_store: StoreMaker,
) -> None:
    store = await team(new_store())
    await store.add_desk_member("eng", "ada")
    await store.add_desk_member("eng", "bo")
    before = await store.desks()
    with pytest.raises(error):
        await store.set_desk_order("eng", order)
    assert await store.desks() == before
    with pytest.raises(GeneralDeskMembership):
        await store.set_desk_order("General", ["ada"])


async def test_two_handles_on_one_store_see_each_others_changes(new_store: StoreMaker) -> None:
    first = new_store()
    second = new_store.again(first)
    assert await second.roster() == Roster(())
    await first.add_agent("ada")
    await first.create_desk("eng")
    assert (await second.roster()).member("ada") == RosterMember("ada")
    assert (await second.post("agent:ada", "hi", desk="eng")).chat_id == "eng"
    await first.retire_agent("ada")
    with pytest.raises(RetiredAuthor):
        await second.post("agent:ada", "again", desk="eng")
    assert isinstance(await second.desks(), DeskSet)


async def test_snapshots_are_the_roster_and_desks_of_one_read(new_store: StoreMaker) -> None:
    store = await team(new_store())
    roster, desks = await store.snapshots()
    assert roster == await store.roster()
    assert desks == await store.desks()
    await store.add_agent("dee")
    roster, desks = await store.snapshots()
    assert roster.member("dee") == RosterMember("dee")
    assert desks == await store.desks()
