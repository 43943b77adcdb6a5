"""The team briefing a turn starts from, and session initialization.

A briefing says who the viewer is, which desk it reads, who else is there and how the
shared room works. It is rebuilt for every turn and never stored: it has no sequence and
does not count against the history window. It describes a team, not a run, so the one
capability that depends on the run — mention dispatch — is offered only through
:meth:`TeamBriefing.system_text_with_dispatch` with a context that allows it.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import ClassVar

from coderooms.rooms.context import SessionContext
from coderooms.rooms.desks import DeskSet
from coderooms.rooms.dispatch import MentionDispatchContext
from coderooms.rooms.records import SESSION_WINDOW, SessionMessage, SessionQuery
from coderooms.rooms.roster import Roster
from coderooms.rooms.session import SessionLog, project_session
from coderooms.rooms.wire import wire_default

__all__ = [
    "BrevityPolicy",
    "BriefedTeammate",
    "SessionInitialization",
    "TeamBriefing",
    "initialize_session",
]

MESSAGE_CHARS = 600
"""The default length budget of one message, in characters (code points)."""


@dataclass(frozen=True, slots=True)
class BrevityPolicy:
    """How much a teammate should write: about ``window`` messages are visible to each
    reader, and one message should stay under ``message_chars`` characters."""

    message_chars: int = MESSAGE_CHARS
    window: int = SESSION_WINDOW

    DEFAULT: ClassVar[BrevityPolicy]

    def overrun(self, content: str) -> int | None:
        """How many characters ``content`` is over budget, or None when it fits."""
        over = len(content) - self.message_chars
        return over if over > 0 else None


BrevityPolicy.DEFAULT = BrevityPolicy()


@dataclass(frozen=True, slots=True)
class BriefedTeammate:
    """One teammate as the briefing lists it. Role and description are optional extras
    a host may supply; snapshots built by :meth:`TeamBriefing.from_snapshots` leave them
    unset."""

    id: str
    label: str
    role: str | None = None
    description: str | None = None

    def line(self) -> str:
        text = f"- @{self.id} — {self.label}"
        if self.role is not None:
            text += f"; role: {self.role}"
        if self.description is not None:
            text += f"; description: {self.description}"
        return text


@dataclass(frozen=True, slots=True)
class TeamBriefing:
    """Who the viewer is, where it reads, who else is there, and the room's rules."""

    viewer_id: str
    desk_id: str
    desk_name: str
    teammates: tuple[BriefedTeammate, ...]
    brevity: BrevityPolicy = wire_default(default=BrevityPolicy.DEFAULT)

    def __post_init__(self) -> None:
        if not isinstance(self.teammates, tuple):
            object.__setattr__(self, "teammates", tuple(self.teammates))

    @classmethod
    def from_snapshots(
        cls, viewer_id: str, desk_ref: str, roster: Roster, desks: DeskSet
    ) -> TeamBriefing:
        """Build a briefing from the host's roster and desk snapshots.

        Both snapshots are validated first. The desk is resolved by id, then by name.
        General lists the active roster in roster order; any other desk lists its
        effective active member order. The viewer, retired and unknown ids, and repeats
        are left out.
        """
        roster.validate()
        desk = desks.resolve(desk_ref)
        teammates: list[BriefedTeammate] = []
        listed = {viewer_id}
        for agent_id in desks.active_order(desk.id, roster):
            if agent_id in listed:
                continue
            listed.add(agent_id)
            teammates.append(BriefedTeammate(agent_id, roster.label_of(agent_id)))
        return cls(viewer_id, desk.id, desk.name, tuple(teammates))

    def system_text(self) -> str:
        """The briefing as the system text a model reads. It never offers mention
        dispatch: a briefing alone cannot know whether the run may use it."""
        return self.system_text_with_dispatch(None)

    def system_text_with_dispatch(self, context: MentionDispatchContext | None) -> str:
        """The briefing's system text, offering mention dispatch when and only when
        ``context`` is given and ``context.may_dispatch`` holds. Every other line is the
        same as :meth:`system_text`."""
        lines = [
            f"You are @{self.viewer_id}, reading the desk {self.desk_name} (id: {self.desk_id})."
        ]
        lines.append("Teammates:")
        if self.teammates:
            lines.extend(teammate.line() for teammate in self.teammates)
        else:
            lines.append("- none")
        lines.append("Shared-session rules:")
        lines.append(
            "- Every message in this session carries its author. Messages by teammates, "
            "people or the operator are theirs, not replies you wrote: answer them, do "
            "not continue them as your own."
        )
        if context is not None and context.may_dispatch:
            lines.append(_DISPATCH_RULE)
        lines.append(
            "- Mentions of everyone, of a desk or of a person are context for the "
            "reader only; they never start a turn for anybody."
        )
        lines.append(
            f"- Be brief: each reader sees about the last {_messages(self.brevity.window)}, "
            f"so keep a message under {self.brevity.message_chars} characters and make "
            "one point in it. Instead of restating earlier messages, pin them or search "
            "the room for them (search takes literal text, or a /regex/ between slashes)."
        )
        lines.append(
            "- To pin, write a line `!pin [^N] [#label] [note]` (without ^N it pins the "
            "message the line is in); `!unpin ^N` takes a pin down."
        )
        return "\n".join(lines)


_DISPATCH_RULE = (
    "- Mentioning one teammate agent directly as @id may start a single bounded turn for "
    "that agent; only the first agent mention in a message can do so."
)


@dataclass(frozen=True, slots=True)
class SessionInitialization:
    """What a turn starts from: the briefing, the recall context, and the history —
    three separate values; the briefing and context are never part of the history."""

    briefing: TeamBriefing
    context: SessionContext
    history: tuple[SessionMessage, ...]

    def __post_init__(self) -> None:
        if not isinstance(self.history, tuple):
            object.__setattr__(self, "history", tuple(self.history))


async def initialize_session(
    log: SessionLog, query: SessionQuery, briefing: TeamBriefing
) -> SessionInitialization:
    """Project the history of ``query`` and pair it with ``briefing``, whose brevity
    window becomes the query's window. The context is empty; projection errors propagate."""
    history = await project_session(log, query)
    briefed = replace(briefing, brevity=replace(briefing.brevity, window=query.window))
    return SessionInitialization(briefed, SessionContext(), tuple(history))


def _messages(count: int) -> str:
    return "1 message" if count == 1 else f"{count} messages"
