"""Mention dispatch: may one agent's committed reply start a turn for the agent it
mentions?

At most one child turn per reply, bounded by a hop budget the host supplies (there is no
library cap; ``max_hops`` 0 disables dispatch). The decision fails closed: once the first
non-quiet agent mention (reading order) is found, a mention of the author or of an
inactive agent stops it, and no later mention is tried.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from coderooms.rooms.mentions import AgentTarget, Mention
from coderooms.rooms.records import Conversation, Sequence
from coderooms.rooms.roster import Roster

HOP_LIMIT = 2**32 - 1
"""Largest hop count or hop budget (hops travel as unsigned 32-bit integers)."""


def _check_hop(name: str, value: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= HOP_LIMIT:
        raise ValueError(f"{name} must be an integer from 0 to {HOP_LIMIT}, got {value!r}")


@dataclass(frozen=True, slots=True)
class MentionDispatchPolicy:
    """The host's dispatch policy: off unless enabled with a positive hop budget."""

    enabled: bool = False
    max_hops: int = 0

    def __post_init__(self) -> None:
        _check_hop("max_hops", self.max_hops)


@dataclass(frozen=True, slots=True)
class MentionDispatchContext:
    """The policy and the current hop of one run: what a briefing needs to know whether
    it may offer dispatch (both fields required on the wire)."""

    policy: MentionDispatchPolicy
    hop: int

    def __post_init__(self) -> None:
        _check_hop("hop", self.hop)

    @property
    def may_dispatch(self) -> bool:
        """Whether this run passes the two guards ``mention_dispatch`` checks first."""
        return self.policy.enabled and self.hop < self.policy.max_hops


@dataclass(frozen=True, slots=True)
class MentionDispatchInput:
    """One committed agent reply, as the dispatch decision sees it."""

    trigger_sequence: Sequence
    conversation: Conversation
    author_id: str
    content: str
    mentions: tuple[Mention, ...]
    hop: int

    def __post_init__(self) -> None:
        if not isinstance(self.mentions, tuple):
            object.__setattr__(self, "mentions", tuple(self.mentions))
        _check_hop("hop", self.hop)


@dataclass(frozen=True, slots=True)
class MentionTurnRequest:
    """The one child turn a reply may start. ``trigger_sequence`` makes enqueueing it
    idempotent; the child stays in the reply's conversation, one hop deeper."""

    trigger_sequence: Sequence
    source_id: str
    target_id: str
    content: str
    conversation: Conversation
    child_hop: int


class NoDispatchReason(enum.Enum):
    """Why a reply started no child turn, in the order the checks run."""

    DISABLED = "disabled"
    HOP_LIMIT_REACHED = "hop_limit_reached"
    SOURCE_INACTIVE = "source_inactive"
    NO_DIRECT_AGENT_MENTION = "no_direct_agent_mention"
    SELF_MENTION = "self_mention"
    TARGET_INACTIVE = "target_inactive"
    HOP_OVERFLOW = "hop_overflow"

    @property
    def sentence(self) -> str:
        """What an agent may be told. Reasons that depend on whether a named other agent
        exists or is active share one sentence, so a refusal cannot be used to probe the
        roster; the exact reason stays in ``value`` for the operator's log."""
        return _SENTENCES[self]


_NO_TARGET = "no available agent was addressed, so nothing was passed on"
_BUDGET_SPENT = "this conversation has already passed messages along as far as it may"
_SENTENCES = {
    NoDispatchReason.DISABLED: "passing messages on to other agents is turned off here",
    NoDispatchReason.HOP_LIMIT_REACHED: _BUDGET_SPENT,
    NoDispatchReason.HOP_OVERFLOW: _BUDGET_SPENT,
    NoDispatchReason.SOURCE_INACTIVE: "the author of this reply is not an active agent",
    NoDispatchReason.SELF_MENTION: "an agent cannot pass a message on to itself",
    NoDispatchReason.NO_DIRECT_AGENT_MENTION: _NO_TARGET,
    NoDispatchReason.TARGET_INACTIVE: _NO_TARGET,
}


def mention_dispatch_decision(
    policy: MentionDispatchPolicy, reply: MentionDispatchInput, roster: Roster
) -> MentionTurnRequest | NoDispatchReason:
    """The request for the one child turn ``reply`` starts, or why it starts none.

    Checks, in order: the policy is enabled; ``hop < max_hops``; the author is an active
    agent (the roster is validated here and its error raised); the first non-quiet agent
    mention exists, is not the author, and is active; the child hop fits.
    """
    if not policy.enabled:
        return NoDispatchReason.DISABLED
    if reply.hop >= policy.max_hops:
        return NoDispatchReason.HOP_LIMIT_REACHED
    roster.validate()
    if not roster.is_active(reply.author_id):
        return NoDispatchReason.SOURCE_INACTIVE
    agent_mentions = [
        (m.offset, m.target.id)
        for m in reply.mentions
        if not m.quiet and isinstance(m.target, AgentTarget)
    ]
    if not agent_mentions:
        return NoDispatchReason.NO_DIRECT_AGENT_MENTION
    _, target_id = min(agent_mentions, key=lambda pair: pair[0])
    if target_id == reply.author_id:
        return NoDispatchReason.SELF_MENTION
    if not roster.is_active(target_id):
        return NoDispatchReason.TARGET_INACTIVE
    child_hop = reply.hop + 1
    if child_hop > HOP_LIMIT:
        return NoDispatchReason.HOP_OVERFLOW
    return MentionTurnRequest(
        trigger_sequence=reply.trigger_sequence,
        source_id=reply.author_id,
        target_id=target_id,
        content=reply.content,
        conversation=reply.conversation,
        child_hop=child_hop,
    )


def mention_dispatch(
    policy: MentionDispatchPolicy, reply: MentionDispatchInput, roster: Roster
) -> MentionTurnRequest | None:
    """The one child turn ``reply`` may start, or None (see
    :func:`mention_dispatch_decision` for the reason)."""
    decision = mention_dispatch_decision(policy, reply, roster)
    return decision if isinstance(decision, MentionTurnRequest) else None
