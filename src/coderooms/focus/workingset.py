"""The working set of one agent session: what focus has sent, how hot it is, what leaves.

A :class:`WorkingSet` is a value: the runtime hands one in with a call's outcome and gets
the next one back (:func:`advance`); the store keeps it between calls. Time is counted
in focus calls, never in wall time, so the same calls give the same answers.

**Heat** ranks resident nodes for paging out, coldest first::

    heat = HEAT_PER_ACCESS * min(accesses, ACCESS_CAP)
         + HEAT_RECENCY * HEAT_DECAY ** (calls since the last access)
         + HEAT_PER_GROUNDING * min(grounded, GROUNDING_CAP)

``grounded`` counts what ties a node to the work beyond one call's ranking: a later call
asked for it again, its code was edited after it was sent (the agent is working on
it), or the agent named it in a post (:func:`named_in_post`). Pinned nodes, and nodes loaded for a pinned goal, are never paged out.

**Thrash**: a call's value of information is the salience mass it newly put in the
agent's hands among the items ahead of its goal's salience knee (the items the goal's
ranking sets apart from its tail, as sufficiency counts them; :func:`value_of_information`).
A call brought new material when that mass comes to at least one such item's worth (the
least salient item ahead of the knee, held in full): new code the goal ranks as core,
or edited core code sent again. Below that its value is near zero: what it sent lies
past the knee, or deepens code already held (an outline's body), in the budget the
resident code left free. When its goal also repeats the previous one's terms
(:data:`THRASH_GOAL_OVERLAP`) it asked the same again, and :data:`THRASH_STREAK` such
calls in a row are reported. A call that brought new material ends the streak. The
measure of "near zero" comes from each goal's own salience curve; no floor is tuned.

**Goal drift**: a goal sharing less than :data:`GOAL_DRIFT_OVERLAP` of its terms with
the session's earlier goals (and, with an embedder, less than
:data:`GOAL_DRIFT_SIMILARITY` cosine similarity to each of them) is far from them.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Literal

from coderooms.focus.text import is_code_name, tokenize

__all__ = [
    "named_in_post",
    "post_names",
    "ACCESS_CAP",
    "DEFAULT_SESSION_BUDGET",
    "GOAL_DRIFT_OVERLAP",
    "GOAL_DRIFT_SIMILARITY",
    "GOALS_KEPT",
    "GROUNDING_CAP",
    "HEAT_DECAY",
    "HEAT_DIGITS",
    "HEAT_PER_ACCESS",
    "HEAT_PER_GROUNDING",
    "HEAT_RECENCY",
    "MAX_PINS",
    "MAX_SESSION_BUDGET",
    "MAX_SESSION_ID_CHARS",
    "THRASH_GOAL_OVERLAP",
    "THRASH_STREAK",
    "Arrival",
    "Gain",
    "Hit",
    "PageOut",
    "Resident",
    "Value",
    "WorkingSet",
    "advance",
    "content_digest",
    "dropped",
    "goal_overlap",
    "heat",
    "pageable",
    "plan_page_out",
    "protected_ids",
    "resident_map",
    "value_of_information",
    "with_pins",
    "without_pins",
]

DEFAULT_SESSION_BUDGET = 32_000
"""Tokens a session may hold resident across calls, unless a call sets another."""
MAX_SESSION_BUDGET = 4_000_000
MAX_SESSION_ID_CHARS = 200
MAX_PINS = 200
"""Pinned nodes plus pinned goals one session may hold."""
GOALS_KEPT = 8
"""Earlier goals a session remembers for goal drift (the newest)."""

HEAT_PER_ACCESS = 1.0
ACCESS_CAP = 8
HEAT_RECENCY = 2.0
HEAT_DECAY = 0.7
"""Share of the recency term kept per focus call since a node was last accessed."""
HEAT_PER_GROUNDING = 1.5
GROUNDING_CAP = 3
HEAT_DIGITS = 4

THRASH_GOAL_OVERLAP = 0.75
"""A call that brought nothing new asks the same question again when at least this share
of its goal's terms were in the previous goal (a narrower follow-up asks something else)."""
THRASH_STREAK = 2
"""Low-value calls in a row that are reported as thrash (the third asking of one
question, when the first brought the material)."""

GOAL_DRIFT_OVERLAP = 0.2
GOAL_DRIFT_SIMILARITY = 0.5

Render = Literal["full", "skeleton"]


def content_digest(text: str) -> str:
    """The digest of code as sent: a changed render is a changed digest."""
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


@dataclass(frozen=True, slots=True)
class Resident:
    """A node whose code this session was sent and has not paged out."""

    id: str
    render: Render
    tokens: int
    digest: str  # content_digest of the text as sent
    loaded_by: int  # the call that sent it (the latest, when it was sent again)
    goal: str  # the goal of that call
    accesses: int  # calls that returned it (sent or resident)
    last_access: int
    grounded: int
    salience: float  # its salience in the call that last returned it


@dataclass(frozen=True, slots=True)
class WorkingSet:
    agent: str
    session: str
    budget: int
    calls: int = 0
    resident: tuple[Resident, ...] = ()  # by id
    pinned_nodes: tuple[str, ...] = ()  # sorted
    pinned_goals: tuple[str, ...] = ()  # in pinning order
    goals: tuple[str, ...] = ()  # the newest GOALS_KEPT goals, oldest first
    low_value_streak: int = 0

    @property
    def used(self) -> int:
        return sum(r.tokens for r in self.resident)

    @property
    def left(self) -> int:
        return max(self.budget - self.used, 0)

    def get(self, node_id: str) -> Resident | None:
        return next((r for r in self.resident if r.id == node_id), None)


def heat(resident: Resident, now: int) -> float:
    """The heat of ``resident`` at call ``now`` (see the module docstring)."""
    since = max(now - resident.last_access, 0)
    return round(
        HEAT_PER_ACCESS * min(resident.accesses, ACCESS_CAP)
        + HEAT_RECENCY * HEAT_DECAY**since
        + HEAT_PER_GROUNDING * min(resident.grounded, GROUNDING_CAP),
        HEAT_DIGITS,
    )


def protected_ids(ws: WorkingSet) -> frozenset[str]:
    """Resident ids that never page out: pinned, or loaded for a pinned goal."""
    goals = set(ws.pinned_goals)
    pins = set(ws.pinned_nodes)
    return frozenset(r.id for r in ws.resident if r.id in pins or r.goal in goals)


def pageable(ws: WorkingSet, keep: Iterable[str], now: int) -> list[Resident]:
    """Residents that may page out at call ``now``, coldest first (ties: the larger
    first, then by id): neither protected nor in ``keep``."""
    held = protected_ids(ws) | set(keep)
    out = [r for r in ws.resident if r.id not in held]
    out.sort(key=lambda r: (heat(r, now), -r.tokens, r.id))
    return out


@dataclass(frozen=True, slots=True)
class PageOut:
    id: str
    heat: float
    why: str
    tokens: int
    inside: str | None = None  # the code sent in full now that holds it, if that is why


def plan_page_out(ws: WorkingSet, need: int, keep: Iterable[str], now: int) -> list[PageOut]:
    """The coldest pageable residents whose tokens free at least ``need`` beyond what the
    session budget has left; all pageable ones when even that is not enough."""
    short = need - (ws.budget - ws.used)
    out: list[PageOut] = []
    freed = 0
    for resident in pageable(ws, keep, now):
        if freed >= short:
            break
        out.append(
            PageOut(
                resident.id,
                heat(resident, now),
                f"coldest resident (heat {heat(resident, now)}): the session budget "
                f"of {ws.budget} tokens is full",
                resident.tokens,
            )
        )
        freed += resident.tokens
    return out


@dataclass(frozen=True, slots=True)
class Hit:
    """A resident node a call returned again (its code not resent)."""

    id: str
    salience: float


@dataclass(frozen=True, slots=True)
class Arrival:
    """A node a call sent: new, resent after a change (``edited``), or in place of
    resident pieces it contains."""

    id: str
    render: Render
    tokens: int
    digest: str
    salience: float
    edited: bool = False


@dataclass(frozen=True, slots=True)
class Gain:
    """One candidate of a call as the agent holds it: its salience, and how much of it
    the agent held before the call and holds from what the call sent (1 in full,
    :data:`~coderooms.focus.sufficiency.SKELETON_CREDIT` as an outline, 0 not at all)."""

    id: str
    salience: float
    before: float
    sent: float

    @property
    def added(self) -> float:
        return self.salience * max(self.sent - self.before, 0.0)


@dataclass(frozen=True, slots=True)
class Value:
    """What a call's new material is worth, as shares of its candidates' salience."""

    core: float  # added ahead of the goal's salience knee: the value of information
    added: float  # added anywhere, the tail included
    item: float  # one item's worth: the least salient item ahead of the knee

    @property
    def new_material(self) -> bool:
        """Whether the call added at least one core item's worth of salience."""
        return self.core >= self.item


def value_of_information(
    candidates: Sequence[Gain], knee_at: int, total: float | None = None
) -> Value | None:
    """The salience mass a call newly put in the agent's hands: ahead of the knee (the
    first ``knee_at`` candidates, best first, at least one) and in all, beside one core
    item's worth, as shares of the candidates' salience (``total``, default theirs).
    None: the call had no candidate at all."""
    mass = sum(g.salience for g in candidates) if total is None else total
    if not candidates or mass <= 0:
        return None
    head = candidates[: max(knee_at, 1)]
    core = sum(g.added for g in head)
    least = min(g.salience for g in head)
    return Value(core / mass, sum(g.added for g in candidates) / mass, least / mass)


def advance(
    ws: WorkingSet,
    goal: str,
    arrivals: Sequence[Arrival],
    hits: Sequence[Hit],
    leaving: Iterable[str],
    value: Value | None,
) -> WorkingSet:
    """The working set after one focus ``set`` call: ``leaving`` paged out (or replaced),
    ``hits`` accessed again, ``arrivals`` resident, the goal remembered and the thrash
    streak moved by the call's ``value`` (None: it had no candidate; the streak stays)."""
    now = ws.calls + 1
    gone = set(leaving)
    by_id: dict[str, Resident] = {r.id: r for r in ws.resident if r.id not in gone}
    for hit in hits:
        old = by_id.get(hit.id)
        if old is None:
            continue
        by_id[hit.id] = replace(  # returned again by a later call: grounded once more
            old,
            accesses=old.accesses + 1,
            last_access=now,
            grounded=old.grounded + 1,
            salience=hit.salience,
        )
    for arrival in arrivals:
        old = by_id.get(arrival.id)
        accesses = old.accesses + 1 if old is not None else 1
        grounded = (old.grounded if old is not None else 0) + (1 if arrival.edited else 0)
        by_id[arrival.id] = Resident(
            arrival.id,
            arrival.render,
            arrival.tokens,
            arrival.digest,
            now,
            goal,
            accesses,
            now,
            grounded,
            arrival.salience,
        )
    streak = ws.low_value_streak
    if value is not None:
        again = goal_overlap(goal, ws.goals[-1:])
        repeated = again is not None and again >= THRASH_GOAL_OVERLAP
        streak = streak + 1 if not value.new_material and repeated else 0
    goals = (*[g for g in ws.goals if g != goal], goal)[-GOALS_KEPT:]
    return replace(
        ws,
        calls=now,
        resident=tuple(sorted(by_id.values(), key=lambda r: r.id)),
        goals=goals,
        low_value_streak=streak,
    )


def goal_overlap(goal: str, earlier: Iterable[str]) -> float | None:
    """The share of ``goal``'s terms found in the earlier goals (None: no earlier goal,
    or a goal with no terms)."""
    terms = set(tokenize(goal))
    seen: set[str] = set()
    any_goal = False
    for text in earlier:
        any_goal = True
        seen.update(tokenize(text))
    if not any_goal or not terms:
        return None
    return len(terms & seen) / len(terms)


def with_pins(ws: WorkingSet, nodes: Iterable[str] = (), goals: Iterable[str] = ()) -> WorkingSet:
    return replace(
        ws,
        pinned_nodes=tuple(sorted(set(ws.pinned_nodes) | set(nodes))),
        pinned_goals=(*ws.pinned_goals, *[g for g in goals if g not in ws.pinned_goals]),
    )


def without_pins(
    ws: WorkingSet, nodes: Iterable[str] = (), goals: Iterable[str] = ()
) -> WorkingSet:
    drop_nodes, drop_goals = set(nodes), set(goals)
    return replace(
        ws,
        pinned_nodes=tuple(n for n in ws.pinned_nodes if n not in drop_nodes),
        pinned_goals=tuple(g for g in ws.pinned_goals if g not in drop_goals),
    )


def dropped(ws: WorkingSet, node_ids: Iterable[str]) -> WorkingSet:
    gone = set(node_ids)
    return replace(ws, resident=tuple(r for r in ws.resident if r.id not in gone))


def resident_map(ws: WorkingSet) -> Mapping[str, Resident]:
    return {r.id: r for r in ws.resident}


def post_names(node_id: str) -> tuple[str, ...]:
    """How a post may name a node: its id (``pkg/mod.py::Cart.add_item``), its qualified
    name (``Cart.add_item``) and its own name (``add_item``); a name that reads as a plain
    word (``pins``) counts only as part of a longer one."""
    base = node_id.partition("#")[0]
    qualified = base.partition("::")[2]
    tail = qualified.rpartition(".")[2]
    names = [base]
    names += [n for n in (qualified, tail) if n and is_code_name(n)]
    return tuple(dict.fromkeys(names))


def named_in_post(ws: WorkingSet, words: frozenset[str]) -> WorkingSet:
    """``ws`` with every resident a post names (``words``: the identifiers it writes,
    whole and by dotted tails) grounded once more."""
    changed = False
    resident = []
    for r in ws.resident:
        if any(name in words for name in post_names(r.id)):
            r = replace(r, grounded=r.grounded + 1)
            changed = True
        resident.append(r)
    return replace(ws, resident=tuple(resident)) if changed else ws
