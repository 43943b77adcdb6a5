"""Who is in the room: agents (roster members), the people beside them, and retirements.

Agent ids and person ids are two separate namespaces; each must be non-blank and unique
within its own. Display aliases (names, labels) may collide: mention lookup treats a
colliding alias as ambiguous and resolves nothing.
"""

from __future__ import annotations

from dataclasses import dataclass

from coderooms.errors import (
    DuplicatePersonId,
    DuplicateRosterMemberId,
    EmptyPersonId,
    EmptyRosterMemberId,
)


@dataclass(frozen=True, slots=True)
class RosterMember:
    """An agent on the roster; ``name`` is an optional display name."""

    id: str
    name: str | None = None

    @property
    def label(self) -> str:
        """The display label: the name when there is one (not blank), else the id."""
        return self.name if self.name is not None and self.name.strip() else self.id


@dataclass(frozen=True, slots=True)
class RosterPerson:
    """A person who reads and writes in the room beside the agents."""

    id: str
    label: str


@dataclass(frozen=True, slots=True)
class Roster:
    """A snapshot of agents (in roster order), people, and retired agent ids."""

    members: tuple[RosterMember, ...]
    people: tuple[RosterPerson, ...] = ()
    retired: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        for name in ("members", "people", "retired"):
            value = getattr(self, name)
            if not isinstance(value, tuple):
                object.__setattr__(self, name, tuple(value))

    def validate(self) -> None:
        """Raise the first identity error: agents first (blank, then duplicate, per member
        in order), then people the same way."""
        seen: set[str] = set()
        for index, member in enumerate(self.members):
            if not member.id.strip():
                raise EmptyRosterMemberId(index)
            if member.id in seen:
                raise DuplicateRosterMemberId(member.id)
            seen.add(member.id)
        seen = set()
        for index, person in enumerate(self.people):
            if not person.id.strip():
                raise EmptyPersonId(index)
            if person.id in seen:
                raise DuplicatePersonId(person.id)
            seen.add(person.id)

    def is_retired(self, agent_id: str) -> bool:
        """Whether ``agent_id`` is listed as retired (exact comparison)."""
        return agent_id in self.retired

    def active(self) -> list[RosterMember]:
        """Members that are not retired, in roster order."""
        retired = set(self.retired)
        return [member for member in self.members if member.id not in retired]

    def active_ids(self) -> list[str]:
        """Ids of the active members, in roster order."""
        return [member.id for member in self.active()]

    def member(self, agent_id: str) -> RosterMember | None:
        """The first member with this exact id, retired or not."""
        return next((m for m in self.members if m.id == agent_id), None)

    def active_member(self, agent_id: str) -> RosterMember | None:
        """The member with this exact id if it is on the roster and not retired."""
        if self.is_retired(agent_id):
            return None
        return self.member(agent_id)

    def is_active(self, agent_id: str) -> bool:
        """Whether ``agent_id`` names an active (known, not retired) agent."""
        return self.active_member(agent_id) is not None

    def person(self, person_id: str) -> RosterPerson | None:
        """The first person with this exact id."""
        return next((p for p in self.people if p.id == person_id), None)

    def holds(self, kind: str, ident: str) -> bool:
        """Whether an ``agent`` (retired or not) or a ``person`` with this id is here."""
        found = self.member(ident) if kind == "agent" else self.person(ident)
        return found is not None

    def label_of(self, agent_id: str) -> str:
        """The display label of an agent: its name, else its id (also for unknown ids)."""
        member = self.member(agent_id)
        return member.label if member is not None else agent_id
