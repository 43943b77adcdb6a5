"""Mention dispatch: policy guards, the order of checks, fail-closed targets, wire forms."""

from __future__ import annotations

import pytest

from coderooms.errors import EmptyRosterMemberId, WireError
from coderooms.rooms.dispatch import (
    HOP_LIMIT,
    MentionDispatchContext,
    MentionDispatchInput,
    MentionDispatchPolicy,
    MentionTurnRequest,
    NoDispatchReason,
    mention_dispatch,
    mention_dispatch_decision,
)
from coderooms.rooms.mentions import AgentTarget, DeskTarget, EveryoneTarget, Mention, PersonTarget
from coderooms.rooms.records import Conversation
from coderooms.rooms.roster import Roster, RosterMember
from coderooms.rooms.wire import from_wire, to_wire

ROSTER = Roster(
    (RosterMember("alice"), RosterMember("bob"), RosterMember("carol"), RosterMember("gone")),
    retired=("gone",),
)
ON = MentionDispatchPolicy(enabled=True, max_hops=3)
ENG = Conversation("eng", "Engineering", 7)


def reply(*mentions: Mention, author: str = "alice", hop: int = 0) -> MentionDispatchInput:
    return MentionDispatchInput(
        trigger_sequence=42,
        conversation=ENG,
        author_id=author,
        content="over to you",
        mentions=mentions,
        hop=hop,
    )


def agent(agent_id: str, offset: int, quiet: bool = False) -> Mention:
    return Mention(AgentTarget(agent_id), f"@{agent_id}", offset, quiet)


# --- policy and context ---------------------------------------------------------------


def test_default_policy_is_disabled_with_no_budget() -> None:
    assert MentionDispatchPolicy() == MentionDispatchPolicy(enabled=False, max_hops=0)


@pytest.mark.parametrize(
    ("policy", "hop", "expected"),
    [
        (MentionDispatchPolicy(False, 5), 0, False),
        (MentionDispatchPolicy(True, 0), 0, False),
        (MentionDispatchPolicy(True, 2), 2, False),
        (MentionDispatchPolicy(True, 2), 3, False),
        (MentionDispatchPolicy(True, 2), 1, True),
        (MentionDispatchPolicy(True, 1), 0, True),
    ],
)
def test_may_dispatch_needs_enabled_and_hop_below_max(
    policy: MentionDispatchPolicy, hop: int, expected: bool
) -> None:
    assert MentionDispatchContext(policy, hop).may_dispatch is expected


def test_negative_hop_is_rejected() -> None:
    with pytest.raises(ValueError):
        MentionDispatchContext(ON, -1)


def test_hop_budget_beyond_u32_is_rejected() -> None:
    with pytest.raises(ValueError):
        MentionDispatchPolicy(True, HOP_LIMIT + 1)


# --- the order of checks --------------------------------------------------------------


def test_disabled_policy_dispatches_nothing() -> None:
    decision = mention_dispatch_decision(
        MentionDispatchPolicy(False, 3), reply(agent("bob", 0)), ROSTER
    )
    assert decision is NoDispatchReason.DISABLED


def test_zero_budget_dispatches_nothing() -> None:
    decision = mention_dispatch_decision(
        MentionDispatchPolicy(True, 0), reply(agent("bob", 0)), ROSTER
    )
    assert decision is NoDispatchReason.HOP_LIMIT_REACHED


def test_hop_at_max_dispatches_nothing() -> None:
    decision = mention_dispatch_decision(ON, reply(agent("bob", 0), hop=3), ROSTER)
    assert decision is NoDispatchReason.HOP_LIMIT_REACHED


def test_policy_guards_run_before_the_roster_is_validated() -> None:
    broken = Roster((RosterMember(""),))
    off = MentionDispatchPolicy(False, 3)
    assert (
        mention_dispatch_decision(off, reply(agent("bob", 0)), broken) is NoDispatchReason.DISABLED
    )


def test_invalid_roster_raises_once_the_guards_pass() -> None:
    with pytest.raises(EmptyRosterMemberId):
        mention_dispatch(ON, reply(agent("bob", 0)), Roster((RosterMember(""),)))


def test_retired_author_dispatches_nothing() -> None:
    decision = mention_dispatch_decision(ON, reply(agent("bob", 0), author="gone"), ROSTER)
    assert decision is NoDispatchReason.SOURCE_INACTIVE


def test_unknown_author_dispatches_nothing() -> None:
    decision = mention_dispatch_decision(ON, reply(agent("bob", 0), author="ghost"), ROSTER)
    assert decision is NoDispatchReason.SOURCE_INACTIVE


def test_no_agent_mention_dispatches_nothing() -> None:
    others = (
        Mention(PersonTarget("p"), "@pat", 0),
        Mention(DeskTarget("eng"), "@#eng", 5),
        Mention(EveryoneTarget(), "@here", 11),
    )
    assert (
        mention_dispatch_decision(ON, reply(*others), ROSTER)
        is NoDispatchReason.NO_DIRECT_AGENT_MENTION
    )


def test_quiet_agent_mentions_are_skipped() -> None:
    decision = mention_dispatch(ON, reply(agent("bob", 0, quiet=True), agent("carol", 5)), ROSTER)
    assert decision is not None and decision.target_id == "carol"


def test_first_agent_mention_is_chosen_by_offset_not_input_order() -> None:
    decision = mention_dispatch(ON, reply(agent("carol", 9), agent("bob", 2)), ROSTER)
    assert decision is not None and decision.target_id == "bob"


def test_self_mention_fails_closed_without_trying_later_mentions() -> None:
    decision = mention_dispatch_decision(ON, reply(agent("alice", 0), agent("bob", 7)), ROSTER)
    assert decision is NoDispatchReason.SELF_MENTION


def test_inactive_target_fails_closed_without_trying_later_mentions() -> None:
    decision = mention_dispatch_decision(ON, reply(agent("gone", 0), agent("bob", 6)), ROSTER)
    assert decision is NoDispatchReason.TARGET_INACTIVE


def test_unknown_target_fails_closed() -> None:
    decision = mention_dispatch_decision(ON, reply(agent("ghost", 0)), ROSTER)
    assert decision is NoDispatchReason.TARGET_INACTIVE


def test_one_request_carries_the_reply_one_hop_deeper() -> None:
    request = mention_dispatch(ON, reply(agent("bob", 0), hop=2), ROSTER)
    assert request == MentionTurnRequest(
        trigger_sequence=42,
        source_id="alice",
        target_id="bob",
        content="over to you",
        conversation=ENG,
        child_hop=3,
    )


def test_no_library_cap_on_the_budget() -> None:
    policy = MentionDispatchPolicy(True, HOP_LIMIT)
    request = mention_dispatch(policy, reply(agent("bob", 0), hop=HOP_LIMIT - 1), ROSTER)
    assert request is not None and request.child_hop == HOP_LIMIT


def test_mention_dispatch_returns_none_when_refused() -> None:
    assert mention_dispatch(ON, reply(), ROSTER) is None


def test_refusals_about_other_agents_share_one_sentence() -> None:
    no_target = NoDispatchReason.NO_DIRECT_AGENT_MENTION.sentence
    assert NoDispatchReason.TARGET_INACTIVE.sentence == no_target
    assert NoDispatchReason.HOP_OVERFLOW.sentence == NoDispatchReason.HOP_LIMIT_REACHED.sentence
    assert NoDispatchReason.SELF_MENTION.sentence != no_target


# --- wire -----------------------------------------------------------------------------


def test_dispatch_context_wire_shape_is_pinned() -> None:
    context = MentionDispatchContext(MentionDispatchPolicy(True, 2), 1)
    assert to_wire(context) == {"policy": {"enabled": True, "max_hops": 2}, "hop": 1}
    assert from_wire(MentionDispatchContext, to_wire(context)) == context


def test_missing_hop_is_not_decoded_as_zero() -> None:
    with pytest.raises(WireError):
        from_wire(MentionDispatchContext, {"policy": {"enabled": True, "max_hops": 2}})


def test_policy_wire_requires_both_fields() -> None:
    with pytest.raises(WireError):
        from_wire(MentionDispatchPolicy, {"enabled": True})


def test_negative_hop_on_the_wire_is_a_wire_error() -> None:
    with pytest.raises(WireError):
        from_wire(MentionDispatchContext, {"policy": {"enabled": True, "max_hops": 2}, "hop": -1})


def test_turn_request_wire_shape_is_pinned() -> None:
    request = mention_dispatch(ON, reply(agent("bob", 0)), ROSTER)
    assert to_wire(request) == {
        "trigger_sequence": 42,
        "source_id": "alice",
        "target_id": "bob",
        "content": "over to you",
        "conversation": {"desk_id": "eng", "desk_name": "Engineering", "thread_root": 7},
        "child_hop": 1,
    }
    assert from_wire(MentionTurnRequest, to_wire(request)) == request


def test_dispatch_input_round_trips() -> None:
    data = to_wire(reply(agent("bob", 0)))
    assert data["mentions"] == [
        {"target": {"kind": "agent", "id": "bob"}, "text": "@bob", "offset": 0}
    ]
    assert from_wire(MentionDispatchInput, data) == reply(agent("bob", 0))


def test_no_dispatch_reason_travels_as_snake_case() -> None:
    assert to_wire(NoDispatchReason.HOP_LIMIT_REACHED) == "hop_limit_reached"
    assert from_wire(NoDispatchReason, "self_mention") is NoDispatchReason.SELF_MENTION
