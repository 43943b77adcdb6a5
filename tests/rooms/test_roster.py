"""Roster: identity validation, active members, display labels, wire form."""

from __future__ import annotations

import pytest

from coderooms.errors import (
    CoreError,
    DuplicatePersonId,
    DuplicateRosterMemberId,
    EmptyPersonId,
    EmptyRosterMemberId,
    WireError,
)
from coderooms.rooms.roster import Roster, RosterMember, RosterPerson
from coderooms.rooms.wire import from_wire, to_wire


def test_valid_roster_validates() -> None:
    Roster(
        (RosterMember("alice", "Alice"), RosterMember("bob")),
        (RosterPerson("ann", "Ann"),),
        ("bob",),
    ).validate()


def test_blank_member_id_is_rejected_with_its_index() -> None:
    with pytest.raises(EmptyRosterMemberId) as err:
        Roster((RosterMember("alice"), RosterMember("  "))).validate()
    assert err.value.index == 1
    assert isinstance(err.value, CoreError)


def test_empty_member_id_is_rejected() -> None:
    with pytest.raises(EmptyRosterMemberId):
        Roster((RosterMember(""),)).validate()


def test_duplicate_member_id_is_rejected() -> None:
    with pytest.raises(DuplicateRosterMemberId) as err:
        Roster((RosterMember("alice"), RosterMember("alice", "Other"))).validate()
    assert err.value.id == "alice"


def test_blank_person_id_is_rejected() -> None:
    with pytest.raises(EmptyPersonId) as err:
        Roster((), (RosterPerson("\t", "Ann"),)).validate()
    assert err.value.index == 0


def test_duplicate_person_id_is_rejected() -> None:
    with pytest.raises(DuplicatePersonId) as err:
        Roster((), (RosterPerson("ann", "Ann"), RosterPerson("ann", "Anne"))).validate()
    assert err.value.id == "ann"


def test_member_errors_come_before_person_errors() -> None:
    roster = Roster((RosterMember("a"), RosterMember("a")), (RosterPerson("", "x"),))
    with pytest.raises(DuplicateRosterMemberId):
        roster.validate()


def test_blank_id_is_reported_before_a_later_duplicate() -> None:
    roster = Roster((RosterMember(" "), RosterMember("a"), RosterMember("a")))
    with pytest.raises(EmptyRosterMemberId):
        roster.validate()


def test_agent_and_person_ids_are_separate_namespaces() -> None:
    Roster((RosterMember("sam"),), (RosterPerson("sam", "Sam"),)).validate()


def test_aliases_may_collide() -> None:
    Roster(
        (RosterMember("a", "Sam"), RosterMember("b", "Sam")),
        (RosterPerson("p", "Sam"),),
    ).validate()


def test_active_members_keep_roster_order_minus_retired() -> None:
    roster = Roster(
        (RosterMember("c"), RosterMember("a"), RosterMember("b")),
        retired=("a", "ghost"),
    )
    assert roster.active() == [RosterMember("c"), RosterMember("b")]
    assert roster.active_ids() == ["c", "b"]


def test_retirement_matches_ids_exactly() -> None:
    roster = Roster((RosterMember("Alice"),), retired=("alice",))
    assert roster.active_ids() == ["Alice"]


def test_is_active_needs_a_known_unretired_agent() -> None:
    roster = Roster((RosterMember("a"), RosterMember("b")), retired=("b",))
    assert roster.is_active("a")
    assert not roster.is_active("b")
    assert not roster.is_active("nobody")


def test_label_is_the_name_when_present() -> None:
    assert RosterMember("alice", "Alice Liddell").label == "Alice Liddell"


def test_label_falls_back_to_the_id() -> None:
    assert RosterMember("alice").label == "alice"


def test_blank_name_falls_back_to_the_id() -> None:
    assert RosterMember("alice", "  ").label == "alice"


def test_label_of_looks_up_by_id_and_falls_back_for_unknown_ids() -> None:
    roster = Roster((RosterMember("a", "Ada"),))
    assert roster.label_of("a") == "Ada"
    assert roster.label_of("zed") == "zed"


def test_person_lookup_is_by_exact_id() -> None:
    roster = Roster((), (RosterPerson("ann", "Ann"),))
    assert roster.person("ann") == RosterPerson("ann", "Ann")
    assert roster.person("Ann") is None


def test_lists_are_stored_as_tuples_and_compare_by_value() -> None:
    built = Roster([RosterMember("a")], [RosterPerson("p", "P")], ["a"])  # type: ignore[arg-type]
    assert built == Roster((RosterMember("a"),), (RosterPerson("p", "P"),), ("a",))
    assert isinstance(built.members, tuple)


def test_roster_wire_shape_is_pinned() -> None:
    roster = Roster(
        (RosterMember("a", "Ada"), RosterMember("b")), (RosterPerson("p", "Pat"),), ("b",)
    )
    assert to_wire(roster) == {
        "members": [{"id": "a", "name": "Ada"}, {"id": "b", "name": None}],
        "people": [{"id": "p", "label": "Pat"}],
        "retired": ["b"],
    }
    assert from_wire(Roster, to_wire(roster)) == roster


def test_roster_member_wire_requires_name_field() -> None:
    with pytest.raises(WireError):
        from_wire(RosterMember, {"id": "a"})


def test_roster_wire_requires_every_field() -> None:
    with pytest.raises(WireError):
        from_wire(Roster, {"members": [], "people": []})


def test_person_wire_rejects_wrong_type() -> None:
    with pytest.raises(WireError):
        from_wire(RosterPerson, {"id": "p", "label": 3})
