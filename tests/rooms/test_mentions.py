"""Mentions: grammar, alias tables, code masking, normalisation, wire forms."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from coderooms.errors import DuplicateRosterMemberId, ReservedDeskIdentity, WireError
from coderooms.rooms.desks import Desk, DeskSet
from coderooms.rooms.mentions import (
    MENTION_CAP,
    AgentTarget,
    DeskTarget,
    EveryoneTarget,
    Mention,
    MentionTarget,
    PersonTarget,
    ascii_slug,
    direct_responder,
    normalize_mentions,
    resolve_mentions,
)
from coderooms.rooms.records import Agent, Person
from coderooms.rooms.roster import Roster, RosterMember, RosterPerson
from coderooms.rooms.wire import from_wire, to_wire

ROSTER = Roster(
    (RosterMember("alice", "Alice"), RosterMember("bob"), RosterMember("old", "Oldie")),
    (RosterPerson("p1", "Ada Lovelace"),),
    ("old",),
)
DESKS = DeskSet((Desk("eng", "Engineering", members=("alice", "bob")),))
NO_DESKS = DeskSet(())


def targets(text: str, roster: Roster = ROSTER, desks: DeskSet = DESKS) -> list[MentionTarget]:
    return [m.target for m in resolve_mentions(text, roster, desks)]


# --- grammar --------------------------------------------------------------------------


def test_mention_at_body_start() -> None:
    assert resolve_mentions("@alice hi", ROSTER, DESKS) == [
        Mention(AgentTarget("alice"), "@alice", 0)
    ]


def test_mention_after_whitespace() -> None:
    assert resolve_mentions("hi\t@bob", ROSTER, DESKS) == [Mention(AgentTarget("bob"), "@bob", 3)]


@pytest.mark.parametrize("opener", ["(", "[", "{", "\n", "\r", "\x0c"])
def test_mention_after_an_opening_bracket_or_ascii_whitespace(opener: str) -> None:
    assert targets(f"x {opener}@bob") == [AgentTarget("bob")]


@pytest.mark.parametrize("before", ["x", ";", ",", "é", "\u00a0", "@"])
def test_no_mention_after_other_characters(before: str) -> None:
    assert targets(f"{before}@bob") == []


@pytest.mark.parametrize("closer", list(",;.?!:)]}'\"") + [" ", "\n", "\u3000"])
def test_alias_ends_at_a_closing_character(closer: str) -> None:
    found = resolve_mentions(f"@bob{closer}rest", ROSTER, DESKS)
    assert found == [Mention(AgentTarget("bob"), "@bob", 0)]


def test_alias_does_not_end_at_a_hyphen() -> None:
    assert targets("@bob-the-builder") == []


def test_alias_must_start_with_a_letter_digit_or_underscore() -> None:
    assert targets("@-bob @ bob") == []


def test_alias_containing_another_at_sign_resolves_nothing() -> None:
    assert targets("@bob@alice") == []


def test_matching_is_case_insensitive_and_keeps_authored_text() -> None:
    assert resolve_mentions("(@ALICE)", ROSTER, DESKS) == [
        Mention(AgentTarget("alice"), "@ALICE", 1)
    ]


def test_offsets_are_code_point_indices() -> None:
    text = "é🙂 @bob"
    [mention] = resolve_mentions(text, ROSTER, DESKS)
    assert mention.offset == 3
    assert text[mention.offset :].startswith(mention.text)


def test_case_mapping_that_changes_length_still_matches() -> None:
    roster = Roster((RosterMember("agent", "İ"),))
    assert targets("é @i̇", roster, NO_DESKS) == [AgentTarget("agent")]


def test_unknown_alias_resolves_nothing() -> None:
    assert targets("@nobody @_missing") == []


# --- alias tables ---------------------------------------------------------------------


def test_agent_name_is_an_alias() -> None:
    assert targets("@Alice") == [AgentTarget("alice")]


def test_retired_agent_is_not_an_alias() -> None:
    assert targets("@old @Oldie") == []


def test_person_label_is_an_alias() -> None:
    roster = Roster((), (RosterPerson("p", "Grace"),))
    assert targets("@grace", roster, NO_DESKS) == [PersonTarget("p")]


def test_person_slug_is_an_alias() -> None:
    assert targets("@ada_lovelace") == [PersonTarget("p1")]


def test_person_slug_collisions_get_numbered_suffixes_in_people_order() -> None:
    roster = Roster(
        (),
        (RosterPerson("p1", "Ada"), RosterPerson("p2", "Ada"), RosterPerson("p3", "Ada 2")),
    )
    # "ada" itself is both people's label, so it is ambiguous; the slugs are not.
    found = targets("@ada @ada_2 @ada_2_2", roster, NO_DESKS)
    assert found == [PersonTarget("p2"), PersonTarget("p3")]


def test_ascii_slug_joins_ascii_runs_with_underscores() -> None:
    assert ascii_slug("  Chief--Researcher  ") == "chief_researcher"
    assert ascii_slug("A / B / C") == "a_b_c"


def test_ascii_slug_drops_non_ascii_characters() -> None:
    assert ascii_slug("😀 Élodie / Agent 7") == "lodie_agent_7"
    assert ascii_slug("東京") == ""


def test_desk_id_and_name_are_aliases() -> None:
    assert targets("@eng @Engineering") == [DeskTarget("eng"), DeskTarget("eng")]


def test_hash_restricts_to_desks() -> None:
    assert targets("@#engineering!") == [DeskTarget("eng")]
    assert targets("@#alice @#everyone") == []


def test_hash_mention_text_includes_the_hash() -> None:
    [mention] = resolve_mentions("see @#eng", ROSTER, DESKS)
    assert (mention.text, mention.offset) == ("@#eng", 4)


@pytest.mark.parametrize("alias", ["everyone", "channel", "here", "Everyone"])
def test_everyone_aliases(alias: str) -> None:
    assert targets(f"@{alias}") == [EveryoneTarget()]


def test_alias_naming_two_targets_resolves_nothing_but_hash_picks_the_desk() -> None:
    roster = Roster((RosterMember("agent", "Shared"),), (RosterPerson("p", "Shared"),))
    desks = DeskSet((Desk("desk", "Shared"),))
    assert resolve_mentions("@Shared @#Shared", roster, desks) == [
        Mention(DeskTarget("desk"), "@#Shared", 8)
    ]


def test_agent_id_equal_to_its_own_name_is_not_ambiguous() -> None:
    roster = Roster((RosterMember("sam", "Sam"),))
    assert targets("@sam", roster, NO_DESKS) == [AgentTarget("sam")]


def test_alias_with_whitespace_is_unreachable_except_by_slug() -> None:
    assert targets("@Ada Lovelace") == []


# --- code masking ---------------------------------------------------------------------


def test_mentions_inside_code_are_ignored() -> None:
    text = "`@alice` @bob\n```\n@alice\n```\n@alice"
    assert targets(text) == [AgentTarget("bob"), AgentTarget("alice")]


def test_unclosed_backtick_masks_nothing() -> None:
    assert targets("` text @alice") == [AgentTarget("alice")]


def test_indented_code_masks_mentions() -> None:
    assert targets("look:\n\n    @alice\n@bob") == [AgentTarget("bob")]


# --- normalisation --------------------------------------------------------------------


def test_self_mentions_are_dropped() -> None:
    found = resolve_mentions("@alice @bob", ROSTER, DESKS, author_id="alice")
    assert [m.target for m in found] == [AgentTarget("bob")]


def test_agent_author_drops_only_its_agent_namespace() -> None:
    roster = Roster((RosterMember("sam"),), (RosterPerson("sam", "Samantha"),))
    found = resolve_mentions("@sam @samantha", roster, NO_DESKS, author_id=Agent("sam", "sam"))
    assert [m.target for m in found] == [PersonTarget("sam")]


def test_person_author_drops_its_own_person_mention() -> None:
    found = resolve_mentions("@ada_lovelace @bob", ROSTER, DESKS, author_id=Person("p1", "Ada"))
    assert [m.target for m in found] == [AgentTarget("bob")]


def test_repeated_target_is_kept_but_quiet() -> None:
    found = resolve_mentions("@bob @BOB @alice", ROSTER, DESKS)
    assert [m.quiet for m in found] == [False, True, False]


def test_cap_quiets_mentions_beyond_fifty() -> None:
    roster = Roster(tuple(RosterMember(f"a{i}") for i in range(52)))
    text = " ".join(f"@a{i}" for i in range(52))
    found = resolve_mentions(text, roster, NO_DESKS, author_id="a0")
    assert len(found) == 51
    assert sum(not m.quiet for m in found) == MENTION_CAP
    assert found[-1].quiet and found[-1].target == AgentTarget("a51")


def test_quiet_repeats_do_not_count_toward_the_cap() -> None:
    roster = Roster(tuple(RosterMember(f"a{i}") for i in range(50)))
    text = "@a0 @a0 " + " ".join(f"@a{i}" for i in range(1, 50))
    found = resolve_mentions(text, roster, NO_DESKS)
    assert sum(not m.quiet for m in found) == 50
    assert not found[-1].quiet


def test_normalize_sorts_by_offset_and_keeps_the_first_per_offset() -> None:
    supplied = [
        Mention(AgentTarget("a2"), "@a2", 4),
        Mention(AgentTarget("a1"), "@a1", 0),
        Mention(AgentTarget("a2"), "@a1", 0),
    ]
    assert normalize_mentions(supplied) == [
        Mention(AgentTarget("a1"), "@a1", 0),
        Mention(AgentTarget("a2"), "@a2", 4),
    ]


def test_invalid_roster_raises() -> None:
    with pytest.raises(DuplicateRosterMemberId):
        resolve_mentions("@a", Roster((RosterMember("a"), RosterMember("a"))), NO_DESKS)


def test_invalid_desks_raise() -> None:
    with pytest.raises(ReservedDeskIdentity):
        resolve_mentions("@a", ROSTER, DeskSet((Desk("main", "x"),)))


# --- direct responder -----------------------------------------------------------------


def test_direct_responder_is_the_first_non_quiet_active_agent() -> None:
    roster = Roster((RosterMember("alice"), RosterMember("bob")), retired=("alice",))
    mentions = [
        Mention(EveryoneTarget(), "@everyone", 0),
        Mention(AgentTarget("alice"), "@alice", 10),
        Mention(AgentTarget("bob"), "@bob", 17, quiet=True),
        Mention(AgentTarget("bob"), "@bob", 22),
    ]
    assert direct_responder(mentions, roster) == "bob"


def test_person_desk_and_everyone_never_select_a_responder() -> None:
    found = resolve_mentions("@ada_lovelace @#eng @here", ROSTER, DESKS)
    assert len(found) == 3
    assert direct_responder(found, ROSTER) is None


# --- wire -----------------------------------------------------------------------------


def test_mention_wire_shape_omits_quiet_when_false() -> None:
    assert to_wire(Mention(AgentTarget("alice"), "@alice", 2)) == {
        "target": {"kind": "agent", "id": "alice"},
        "text": "@alice",
        "offset": 2,
    }


def test_quiet_mention_wire_shape() -> None:
    data = to_wire(Mention(DeskTarget("eng"), "@#eng", 0, quiet=True))
    assert data == {
        "target": {"kind": "desk", "id": "eng"},
        "text": "@#eng",
        "offset": 0,
        "quiet": True,
    }
    assert from_wire(Mention, data) == Mention(DeskTarget("eng"), "@#eng", 0, True)


@pytest.mark.parametrize(
    ("target", "data"),
    [
        (AgentTarget("a"), {"kind": "agent", "id": "a"}),
        (PersonTarget("p"), {"kind": "person", "id": "p"}),
        (DeskTarget("d"), {"kind": "desk", "id": "d"}),
        (EveryoneTarget(), {"kind": "everyone"}),
    ],
)
def test_mention_target_wire_shapes(target: MentionTarget, data: dict[str, str]) -> None:
    assert to_wire(target) == data
    assert from_wire(MentionTarget, data) == target


def test_mention_target_constructors() -> None:
    assert MentionTarget.agent("a") == AgentTarget("a")
    assert MentionTarget.person("p") == PersonTarget("p")
    assert MentionTarget.desk("d") == DeskTarget("d")
    assert MentionTarget.everyone() == EveryoneTarget()


def test_unknown_mention_kind_is_a_wire_error() -> None:
    with pytest.raises(WireError):
        from_wire(MentionTarget, {"kind": "robot", "id": "x"})


def test_mention_wire_requires_offset() -> None:
    with pytest.raises(WireError):
        from_wire(Mention, {"target": {"kind": "everyone"}, "text": "@here"})


# --- properties -----------------------------------------------------------------------


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="@#`~ \n(abioleBcAL_,.é", max_size=80))
def test_resolved_mentions_are_ordered_unmasked_and_point_at_their_text(text: str) -> None:
    found = resolve_mentions(text, ROSTER, DESKS)
    offsets = [m.offset for m in found]
    assert offsets == sorted(set(offsets))
    for mention in found:
        assert text[mention.offset : mention.offset + len(mention.text)] == mention.text
        assert mention.text.startswith("@")
