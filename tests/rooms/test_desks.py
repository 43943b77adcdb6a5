"""Desks: resolution, final members, orders, the reserved General identity, wire forms."""

from __future__ import annotations

import pytest

from coderooms.errors import (
    AmbiguousDesk,
    DuplicateDeskOrder,
    DuplicateOrderMember,
    IncompleteOrder,
    ReservedDeskIdentity,
    UnknownDesk,
    UnknownMemberDesk,
    UnknownOrderDesk,
    UnknownOrderMember,
    WireError,
)
from coderooms.rooms.desks import (
    GENERAL_DESK,
    Desk,
    DeskMember,
    DeskOrder,
    DeskSet,
)
from coderooms.rooms.roster import Roster, RosterMember
from coderooms.rooms.wire import from_wire, to_wire

ENG = Desk("eng", "Engineering", "Build it", ("alice", "bob"))
OPS = Desk("ops", "Operations", members=("carol",))


# --- resolution -----------------------------------------------------------------------


def test_resolve_by_exact_id() -> None:
    assert DeskSet((ENG, OPS)).resolve("ops") == OPS


def test_resolve_by_exact_name() -> None:
    assert DeskSet((ENG, OPS)).resolve("Engineering") == ENG


def test_resolve_prefers_id_over_another_desks_name() -> None:
    named_eng = Desk("x", "eng")
    assert DeskSet((named_eng, ENG)).resolve("eng") == ENG


def test_resolve_is_case_sensitive() -> None:
    with pytest.raises(UnknownDesk) as err:
        DeskSet((ENG,)).resolve("engineering")
    assert err.value.reference == "engineering"


def test_resolve_unknown_desk() -> None:
    with pytest.raises(UnknownDesk):
        DeskSet((ENG,)).resolve("design")


def test_resolve_shared_name_is_ambiguous() -> None:
    with pytest.raises(AmbiguousDesk) as err:
        DeskSet((Desk("a", "Team"), Desk("b", "Team"))).resolve("Team")
    assert err.value.reference == "Team"


def test_resolve_finds_added_desks_after_declared_ones() -> None:
    added = Desk("new", "New")
    assert DeskSet((ENG,), added=(added,)).resolve("New") == added


def test_duplicate_id_resolves_to_the_first_record() -> None:
    later = Desk("eng", "Eng again")
    desks = DeskSet((ENG,), added=(later,))
    assert desks.resolve("eng") == ENG
    assert desks.desks() == [ENG]


def test_general_aliases_resolve_to_the_default_desk_when_none_is_declared() -> None:
    desks = DeskSet((ENG,))
    for ref in ("General", "general", "main", "MAIN", ""):
        assert desks.resolve(ref) == GENERAL_DESK


def test_general_aliases_resolve_to_a_declared_general_desk() -> None:
    general = Desk("General", "General", "Everyone", ("alice",))
    assert DeskSet((general,)).resolve("main") == general


def test_resolve_validates_the_set_first() -> None:
    with pytest.raises(UnknownMemberDesk):
        DeskSet((ENG,), additions=(DeskMember("nope", "x"),)).resolve("eng")


# --- reserved identity ----------------------------------------------------------------


def test_exact_general_desk_is_allowed() -> None:
    DeskSet((Desk("General", "General"),)).validate()


@pytest.mark.parametrize(
    ("desk_id", "name"),
    [
        ("general", "General"),
        ("General", "Lobby"),
        ("lobby", "General"),
        ("main", "Main"),
        ("lobby", "MAIN"),
        ("GENERAL", "GENERAL"),
        ("", "Blank"),
    ],
)
def test_any_other_general_or_main_identity_is_reserved(desk_id: str, name: str) -> None:
    with pytest.raises(ReservedDeskIdentity) as err:
        DeskSet((ENG,), added=(Desk(desk_id, name),)).validate()
    assert err.value.desk_id == desk_id


def test_general_lookalikes_outside_ascii_case_are_not_reserved() -> None:
    DeskSet((Desk("general-2", "Mainline"),)).validate()


# --- members --------------------------------------------------------------------------


def test_members_are_founders_then_additions() -> None:
    desks = DeskSet((ENG,), additions=(DeskMember("eng", "dave"), DeskMember("eng", "erin")))
    assert desks.members("eng") == ["alice", "bob", "dave", "erin"]


def test_members_keep_first_appearance() -> None:
    desks = DeskSet(
        (Desk("eng", "Eng", members=("a", "b", "a")),),
        additions=(DeskMember("eng", "b"), DeskMember("eng", "c"), DeskMember("eng", "c")),
    )
    assert desks.members("eng") == ["a", "b", "c"]


def test_members_drop_retired_members_of_that_desk_only() -> None:
    desks = DeskSet(
        (ENG, Desk("ops", "Ops", members=("alice",))),
        retired=(DeskMember("eng", "alice"),),
    )
    assert desks.members("eng") == ["bob"]
    assert desks.members("ops") == ["alice"]


def test_members_resolve_a_name() -> None:
    assert DeskSet((ENG,)).members("Engineering") == ["alice", "bob"]


def test_order_replaces_the_member_sequence() -> None:
    desks = DeskSet((ENG,), orders=(DeskOrder("eng", ("bob", "alice")),))
    assert desks.members("eng") == ["bob", "alice"]
    assert desks.lead("eng") == "bob"


def test_order_covers_added_and_excludes_retired_members() -> None:
    desks = DeskSet(
        (ENG,),
        additions=(DeskMember("eng", "carol"),),
        retired=(DeskMember("eng", "alice"),),
        orders=(DeskOrder("eng", ("carol", "bob")),),
    )
    assert desks.members("eng") == ["carol", "bob"]


def test_lead_of_an_empty_desk_is_none() -> None:
    assert DeskSet((Desk("x", "X"),)).lead("x") is None


# --- overlay and order errors ---------------------------------------------------------


def test_addition_to_unknown_desk() -> None:
    with pytest.raises(UnknownMemberDesk) as err:
        DeskSet((ENG,), additions=(DeskMember("Engineering", "x"),)).validate()
    assert err.value.desk_id == "Engineering"


def test_retirement_from_unknown_desk() -> None:
    with pytest.raises(UnknownMemberDesk):
        DeskSet((ENG,), retired=(DeskMember("ghost", "alice"),)).validate()


def test_order_for_unknown_desk() -> None:
    with pytest.raises(UnknownOrderDesk) as err:
        DeskSet((ENG,), orders=(DeskOrder("ghost", ()),)).validate()
    assert err.value.desk_id == "ghost"


def test_second_order_for_a_desk() -> None:
    order = DeskOrder("eng", ("alice", "bob"))
    with pytest.raises(DuplicateDeskOrder) as err:
        DeskSet((ENG,), orders=(order, order)).validate()
    assert err.value.desk_id == "eng"


def test_order_listing_a_member_twice() -> None:
    with pytest.raises(DuplicateOrderMember) as err:
        DeskSet((ENG,), orders=(DeskOrder("eng", ("alice", "alice", "bob")),)).validate()
    assert (err.value.desk_id, err.value.agent_id) == ("eng", "alice")


def test_order_listing_a_non_member() -> None:
    with pytest.raises(UnknownOrderMember) as err:
        DeskSet((ENG,), orders=(DeskOrder("eng", ("alice", "bob", "zed")),)).validate()
    assert err.value.agent_id == "zed"


def test_order_listing_a_retired_member() -> None:
    desks = DeskSet(
        (ENG,), retired=(DeskMember("eng", "bob"),), orders=(DeskOrder("eng", ("alice", "bob")),)
    )
    with pytest.raises(UnknownOrderMember):
        desks.validate()


def test_order_leaving_members_out() -> None:
    desks = DeskSet(
        (Desk("eng", "Eng", members=("a", "b", "c")),), orders=(DeskOrder("eng", ("b",)),)
    )
    with pytest.raises(IncompleteOrder) as err:
        desks.validate()
    assert err.value.missing == ("a", "c")


def test_duplicate_entry_is_reported_before_a_later_unknown_one() -> None:
    with pytest.raises(DuplicateOrderMember):
        DeskSet((ENG,), orders=(DeskOrder("eng", ("alice", "alice", "zed")),)).validate()


def test_reserved_identity_is_reported_before_overlay_errors() -> None:
    desks = DeskSet((Desk("main", "x"),), additions=(DeskMember("ghost", "a"),))
    with pytest.raises(ReservedDeskIdentity):
        desks.validate()


def test_member_desk_errors_come_before_order_errors() -> None:
    desks = DeskSet((ENG,), additions=(DeskMember("ghost", "a"),), orders=(DeskOrder("other", ()),))
    with pytest.raises(UnknownMemberDesk):
        desks.validate()


def test_members_raise_order_errors() -> None:
    with pytest.raises(IncompleteOrder):
        DeskSet((ENG,), orders=(DeskOrder("eng", ("alice",)),)).members("eng")


# --- effective active order (briefing) ------------------------------------------------


ROSTER = Roster(
    (RosterMember("carol"), RosterMember("alice"), RosterMember("bob"), RosterMember("dave")),
    retired=("dave",),
)


def test_general_active_order_is_the_active_roster() -> None:
    assert DeskSet((ENG,)).active_order("main", ROSTER) == ["carol", "alice", "bob"]


def test_desk_active_order_follows_final_members() -> None:
    desks = DeskSet((ENG,), orders=(DeskOrder("eng", ("bob", "alice")),))
    assert desks.active_order("eng", ROSTER) == ["bob", "alice"]


def test_desk_active_order_drops_unknown_and_roster_retired_ids() -> None:
    desks = DeskSet((Desk("eng", "Eng", members=("ghost", "dave", "bob", "alice")),))
    assert desks.active_order("Eng", ROSTER) == ["bob", "alice"]


# --- records and wire -----------------------------------------------------------------


def test_desk_members_given_as_list_compare_equal_to_tuple() -> None:
    assert Desk("a", "A", members=["x"]) == Desk("a", "A", members=("x",))  # type: ignore[arg-type]


def test_desk_wire_omits_lead_responder_mode() -> None:
    assert to_wire(ENG) == {
        "id": "eng",
        "name": "Engineering",
        "description": "Build it",
        "members": ["alice", "bob"],
    }


def test_desk_wire_keeps_auto_responder_mode() -> None:
    desk = Desk("x", "X", responder_mode="auto")
    assert to_wire(desk) == {
        "id": "x",
        "name": "X",
        "description": None,
        "members": [],
        "responder_mode": "auto",
    }
    assert from_wire(Desk, to_wire(desk)) == desk


def test_desk_wire_without_responder_mode_decodes_as_lead() -> None:
    data = {"id": "x", "name": "X", "description": None, "members": []}
    assert from_wire(Desk, data).responder_mode == "lead"


def test_desk_wire_rejects_unknown_responder_mode() -> None:
    data = {"id": "x", "name": "X", "description": None, "members": [], "responder_mode": "all"}
    with pytest.raises(WireError):
        from_wire(Desk, data)


def test_desk_wire_requires_description() -> None:
    with pytest.raises(WireError):
        from_wire(Desk, {"id": "x", "name": "X", "members": []})


def test_desk_member_and_order_wire_shapes() -> None:
    assert to_wire(DeskMember("eng", "a")) == {"desk_id": "eng", "agent_id": "a"}
    assert to_wire(DeskOrder("eng", ("b", "a"))) == {"desk_id": "eng", "ordered": ["b", "a"]}
    assert from_wire(DeskOrder, {"desk_id": "eng", "ordered": ["b", "a"]}) == DeskOrder(
        "eng", ("b", "a")
    )


def test_desk_set_wire_round_trips() -> None:
    desks = DeskSet(
        (ENG,),
        (OPS,),
        (DeskMember("eng", "carol"),),
        (DeskOrder("eng", ("carol", "alice", "bob")),),
        (DeskMember("ops", "carol"),),
    )
    data = to_wire(desks)
    assert sorted(data) == ["added", "additions", "declared", "orders", "retired"]
    assert data["retired"] == [{"desk_id": "ops", "agent_id": "carol"}]
    assert from_wire(DeskSet, data) == desks


def test_desk_set_wire_requires_every_field() -> None:
    with pytest.raises(WireError):
        from_wire(DeskSet, {"declared": [], "added": [], "additions": [], "orders": []})
