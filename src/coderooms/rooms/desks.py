"""Desks: declared and operator-added group chats, their members and member order.

A :class:`DeskSet` folds five snapshots the host keeps: desks declared up front, desks
added later, member additions, whole-desk member orders, and per-desk member retirements.
Desks are always considered declared-then-added, and when two records share an id the
first one is the desk. Every query validates the whole set first, so a malformed snapshot
fails closed instead of answering from half of it.

The default desk, General, is reserved: only the desk whose id and name are both exactly
``General`` may use that identity, and no desk may use ``General``/``main`` in any ASCII
case (or the empty string, which chat ids read as General) as its id or name.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

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
)
from coderooms.rooms.chat import is_general_chat
from coderooms.rooms.roster import Roster
from coderooms.rooms.wire import wire_omit_default

GENERAL_DESK_ID = "General"
"""The id and the display name of the default desk."""

ResponderMode = Literal["lead", "auto"]
"""Who answers an unaddressed message: the desk lead, or a model-chosen member."""


@dataclass(frozen=True, slots=True)
class Desk:
    """A group chat: canonical id, display name, founding members in order.

    ``responder_mode`` is left out of the wire form while it is ``"lead"``.
    """

    id: str
    name: str
    description: str | None = None
    members: tuple[str, ...] = ()
    responder_mode: ResponderMode = wire_omit_default(default="lead")

    def __post_init__(self) -> None:
        if not isinstance(self.members, tuple):
            object.__setattr__(self, "members", tuple(self.members))

    @property
    def is_general(self) -> bool:
        """Whether this is the default desk (id and name both exactly ``General``)."""
        return self.id == GENERAL_DESK_ID and self.name == GENERAL_DESK_ID


GENERAL_DESK = Desk(GENERAL_DESK_ID, GENERAL_DESK_ID)
"""The default desk, used when a set does not declare one of its own."""


@dataclass(frozen=True, slots=True)
class DeskMember:
    """An agent added to (or, in ``DeskSet.retired``, retired from) a desk."""

    desk_id: str
    agent_id: str


@dataclass(frozen=True, slots=True)
class DeskOrder:
    """The whole member list of a desk in the order the operator chose."""

    desk_id: str
    ordered: tuple[str, ...]

    def __post_init__(self) -> None:
        if not isinstance(self.ordered, tuple):
            object.__setattr__(self, "ordered", tuple(self.ordered))


def uses_reserved_identity(desk: Desk) -> bool:
    """Whether a desk other than the default one claims the General identity."""
    if desk.is_general:
        return False
    return is_general_chat(desk.id) or is_general_chat(desk.name)


@dataclass(frozen=True, slots=True)
class DeskSet:
    """Declared and added desks with their membership overlays."""

    declared: tuple[Desk, ...]
    added: tuple[Desk, ...] = ()
    additions: tuple[DeskMember, ...] = ()
    orders: tuple[DeskOrder, ...] = ()
    retired: tuple[DeskMember, ...] = ()

    def __post_init__(self) -> None:
        for name in ("declared", "added", "additions", "orders", "retired"):
            value = getattr(self, name)
            if not isinstance(value, tuple):
                object.__setattr__(self, name, tuple(value))

    # --- lookup -----------------------------------------------------------------------

    def desks(self) -> list[Desk]:
        """Every desk, declared then added, each id once (its first record)."""
        seen: set[str] = set()
        out: list[Desk] = []
        for desk in (*self.declared, *self.added):
            if desk.id not in seen:
                seen.add(desk.id)
                out.append(desk)
        return out

    def find(self, desk_id: str) -> Desk | None:
        """The desk with this exact id, without validating or resolving names."""
        return next((d for d in (*self.declared, *self.added) if d.id == desk_id), None)

    def resolve(self, ref: str) -> Desk:
        """The desk ``ref`` names: an exact id first, then an exact display name.

        A General alias (``General``/``main`` in any ASCII case, or ``""``) that matches
        no record names the default desk. Raises the set's first validation error,
        :class:`UnknownDesk`, or :class:`AmbiguousDesk` when several desks share the name.
        """
        self.validate()
        by_id = self.find(ref)
        if by_id is not None:
            return by_id
        named = [d for d in self.desks() if d.name == ref]
        if len(named) > 1:
            raise AmbiguousDesk(ref)
        if named:
            return named[0]
        if is_general_chat(ref):
            return self.find(GENERAL_DESK_ID) or GENERAL_DESK
        raise UnknownDesk(ref)

    def members(self, ref: str) -> list[str]:
        """The final members of a desk, in their effective order.

        Founding members then additions (first appearance kept), minus the desk's
        retirements; the desk's order, when it has one, replaces that sequence.
        """
        desk = self.resolve(ref)
        order = next((o for o in self.orders if o.desk_id == desk.id), None)
        if order is not None:
            return list(order.ordered)
        return self._base_members(desk.id)

    def lead(self, ref: str) -> str | None:
        """The first final member of a desk, if it has any."""
        members = self.members(ref)
        return members[0] if members else None

    def active_order(self, ref: str, roster: Roster) -> list[str]:
        """The effective active desk order a briefing lists.

        General: the active roster in roster order. Any other desk: its final members
        that are active roster agents (unknown and roster-retired ids are dropped).
        """
        desk = self.resolve(ref)
        if desk.is_general:
            return roster.active_ids()
        return [agent_id for agent_id in self.members(desk.id) if roster.is_active(agent_id)]

    # --- validation -------------------------------------------------------------------

    def validate(self) -> None:
        """Raise the first error, checking in this order:

        1. each desk, declared then added: :class:`ReservedDeskIdentity`;
        2. each addition, then each retirement: :class:`UnknownMemberDesk`;
        3. each order in input order: :class:`UnknownOrderDesk`,
           :class:`DuplicateDeskOrder`, then its entries in turn
           (:class:`DuplicateOrderMember`, :class:`UnknownOrderMember`), then
           :class:`IncompleteOrder` listing every member it leaves out.
        """
        for desk in (*self.declared, *self.added):
            if uses_reserved_identity(desk):
                raise ReservedDeskIdentity(desk.id)
        for overlay in (*self.additions, *self.retired):
            if self.find(overlay.desk_id) is None:
                raise UnknownMemberDesk(overlay.desk_id)
        ordered_desks: set[str] = set()
        for order in self.orders:
            if self.find(order.desk_id) is None:
                raise UnknownOrderDesk(order.desk_id)
            if order.desk_id in ordered_desks:
                raise DuplicateDeskOrder(order.desk_id)
            ordered_desks.add(order.desk_id)
            self._validate_order(order)

    def _base_members(self, desk_id: str) -> list[str]:
        desk = self.find(desk_id)
        founding = desk.members if desk is not None else ()
        added = (a.agent_id for a in self.additions if a.desk_id == desk_id)
        retired = {r.agent_id for r in self.retired if r.desk_id == desk_id}
        out: list[str] = []
        seen: set[str] = set()
        for agent_id in (*founding, *added):
            if agent_id not in seen and agent_id not in retired:
                seen.add(agent_id)
                out.append(agent_id)
        return out

    def _validate_order(self, order: DeskOrder) -> None:
        members = self._base_members(order.desk_id)
        known = set(members)
        seen: set[str] = set()
        for agent_id in order.ordered:
            if agent_id in seen:
                raise DuplicateOrderMember(order.desk_id, agent_id)
            seen.add(agent_id)
            if agent_id not in known:
                raise UnknownOrderMember(order.desk_id, agent_id)
        missing = tuple(m for m in members if m not in seen)
        if missing:
            raise IncompleteOrder(order.desk_id, missing)
