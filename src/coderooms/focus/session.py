"""Focus inside an agent session: the working set decides what is sent, kept and paged out.

:func:`focus_in_session` runs one ``set`` (or ``check``) call of a session against a
:class:`~coderooms.focus.runtime.FocusEngine` and the session's
:class:`~coderooms.focus.workingset.WorkingSet`, and returns the answer with the next
working set. Candidates already resident and unchanged come back as ``resident`` (not
their code): a call's budget bounds the goal's whole view (see
:data:`RESIDENT_IN_BUDGET`), so what the agent holds fills its share of the view and
what the view has left goes to the next items not yet held. When the session
budget cannot hold what the call would send, the coldest residents are named in
``page_out`` first. Every resident that leaves is named; every candidate is loaded,
resident or ignored.

Stale evidence: a resident whose code changed since it was sent is reported with the
call that sent it, and the call sends its new code (or pages it out, saying so, when it
does not fit). :func:`session_status` reports the working set itself.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from coderooms.focus.errors import InvalidBudget, NotInWorkingSet, counts_to
from coderooms.focus.graph import CodeNode
from coderooms.focus.packing import Ignored, Loaded, Packing, Render, ancestors, pack_to_budget
from coderooms.focus.packing import render as render_node
from coderooms.focus.runtime import (
    SALIENCE_DIGITS,
    Discussed,
    FocusEngine,
    FocusResult,
    checked_budget,
    checked_goal,
    checked_mode,
)
from coderooms.focus.salience import Salience
from coderooms.focus.sufficiency import KNEE_WINDOW, SKELETON_CREDIT, judge, knee
from coderooms.focus.workingset import (
    GOAL_DRIFT_OVERLAP,
    GOAL_DRIFT_SIMILARITY,
    MAX_SESSION_BUDGET,
    THRASH_STREAK,
    Arrival,
    Gain,
    Hit,
    PageOut,
    Value,
    WorkingSet,
    advance,
    content_digest,
    dropped,
    goal_overlap,
    heat,
    plan_page_out,
    protected_ids,
    value_of_information,
)

__all__ = [
    "DRIFT_LISTED",
    "MAX_REPACKS",
    "RESIDENT_IN_BUDGET",
    "REPEATED_SHOWN",
    "GoalDrift",
    "SessionFocus",
    "Stale",
    "Thrash",
    "check_session_budget",
    "focus_in_session",
    "require_resident",
    "session_status",
]

REPEATED_SHOWN = 3
"""Resident ids a thrash line names as what was asked again."""
RESIDENT_IN_BUDGET = True
"""A call's budget bounds the goal's whole view: resident code the goal ranks takes its
share without being sent again, and the rest goes to the next items not yet held. (False:
resident code costs nothing, and the whole budget goes to code not yet held.)"""
MAX_REPACKS = 4
"""Packings one call tries before it sends nothing new: each within what the session
budget has left after the last one."""
DRIFT_LISTED = 20
"""Residents a goal-drift signal lists as those that may be paged out."""


def check_session_budget(budget: object) -> int:
    if not counts_to(budget, MAX_SESSION_BUDGET):
        raise InvalidBudget(budget, MAX_SESSION_BUDGET)
    return budget


@dataclass(frozen=True, slots=True)
class Stale:
    id: str
    loaded_by: int
    why: str
    resent: bool

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "loaded_by": self.loaded_by, "why": self.why, "resent": self.resent}


@dataclass(frozen=True, slots=True)
class Thrash:
    calls: int  # low-value calls in a row, this one included
    value: float  # the share of the candidates' salience this call added
    repeated: tuple[str, ...]
    pivot: str | None
    why: str

    def to_json(self) -> dict[str, Any]:
        return {
            "calls": self.calls,
            "value": round(self.value, SALIENCE_DIGITS),
            "repeated": list(self.repeated),
            "pivot": self.pivot,
            "why": self.why,
        }


@dataclass(frozen=True, slots=True)
class GoalDrift:
    overlap: float
    similarity: float | None
    may_page_out: tuple[str, ...]
    why: str

    def to_json(self) -> dict[str, Any]:
        return {
            "overlap": round(self.overlap, SALIENCE_DIGITS),
            "similarity": None if self.similarity is None else round(self.similarity, 4),
            "may_page_out": list(self.may_page_out[:DRIFT_LISTED]),
            "why": self.why,
        }


@dataclass(frozen=True, slots=True)
class SessionFocus:
    result: FocusResult
    state: WorkingSet  # after the call (a check leaves it as it was)
    call: int
    page_out: tuple[PageOut, ...]
    stale: tuple[Stale, ...]
    thrash: Thrash | None
    drift: GoalDrift | None
    value: Value | None = None  # the call's value of information (a set's; None: a check)

    def to_json(self, ignored_limit: int | None = None) -> dict[str, Any]:
        out = self.result.to_json(ignored_limit)
        packing = self.result.packing
        # resident code in the call's view takes its share too: limit = used + held + left
        out["budget"] = {**out["budget"], "held": packing.held}
        out["resident"] = [
            {
                "id": kept.node.id,
                "loaded_by": _loaded_by(self.state, kept.node.id, self.call),
                "tokens_saved": kept.tokens,
                "render": kept.render,
                "salience": round(kept.salience, SALIENCE_DIGITS),
            }
            for kept in packing.kept
        ]
        out["page_out"] = [
            {"id": p.id, "heat": p.heat, "why": p.why, "tokens": p.tokens} for p in self.page_out
        ]
        out["session"] = {
            "id": self.state.session,
            "call": self.call,
            "budget": {
                "limit": self.state.budget,
                "used": self.state.used,
                "left": self.state.left,
            },
            "resident_nodes": len(self.state.resident),
            "tokens_saved": sum(kept.tokens for kept in packing.kept),
        }
        out["signals"] = {
            "thrash": None if self.thrash is None else self.thrash.to_json(),
            "stale": [s.to_json() for s in self.stale],
            "goal_drift": None if self.drift is None else self.drift.to_json(),
        }
        return out


def _loaded_by(ws: WorkingSet, node_id: str, call: int) -> int:
    found = ws.get(node_id)
    return found.loaded_by if found is not None else call


def _current(engine: FocusEngine, node: CodeNode, how: Render) -> tuple[str, int]:
    return render_node(engine.index, node, how, engine.count_tokens, engine._renders)


def _check_residents(
    engine: FocusEngine, ws: WorkingSet
) -> tuple[dict[str, tuple[Render, int]], list[Stale], list[str], list[PageOut]]:
    """Residents still as sent (id to render and tokens), the stale ones, and those gone
    from the index (paged out, saying so)."""
    fresh: dict[str, tuple[Render, int]] = {}
    stale: list[Stale] = []
    stale_ids: list[str] = []
    gone: list[PageOut] = []
    now = ws.calls + 1
    for resident in ws.resident:
        node = engine.graph.node(resident.id)
        if node is None:
            gone.append(
                PageOut(
                    resident.id,
                    heat(resident, now),
                    f"gone from the index since call {resident.loaded_by} sent it",
                    resident.tokens,
                )
            )
            continue
        text, tokens = _current(engine, node, resident.render)
        if content_digest(text) == resident.digest:
            fresh[resident.id] = (resident.render, resident.tokens)
        else:
            stale_ids.append(resident.id)
            stale.append(
                Stale(
                    resident.id,
                    resident.loaded_by,
                    f"changed since call {resident.loaded_by}",
                    False,
                )
            )
    return fresh, stale, stale_ids, gone


def _similarity(engine: FocusEngine, goal: str, earlier: tuple[str, ...]) -> float | None:
    embedder = engine.index.embedder
    if embedder is None or not earlier:
        return None
    vectors = np.asarray(embedder([goal, *earlier]), dtype=np.float64)
    norms = np.linalg.norm(vectors, axis=1)
    if norms[0] == 0 or not np.any(norms[1:]):
        return None
    safe = np.where(norms == 0, 1.0, norms)
    cosines = (vectors[1:] @ vectors[0]) / (safe[1:] * safe[0])
    return float(np.max(cosines))


def _goal_drift(
    engine: FocusEngine, ws: WorkingSet, goal: str, hits: Iterable[str]
) -> GoalDrift | None:
    earlier = (*ws.pinned_goals, *[g for g in ws.goals if g not in ws.pinned_goals])
    if goal in earlier:
        return None
    overlap = goal_overlap(goal, earlier)
    if overlap is None or overlap >= GOAL_DRIFT_OVERLAP:
        return None
    similarity = _similarity(engine, goal, earlier)
    if similarity is not None and similarity >= GOAL_DRIFT_SIMILARITY:
        return None
    held = protected_ids(ws) | set(hits)
    now = ws.calls + 1
    old = sorted((r for r in ws.resident if r.id not in held), key=lambda r: (heat(r, now), r.id))
    similar = "" if similarity is None else f", similarity {similarity:.2f}"
    return GoalDrift(
        overlap,
        similarity,
        tuple(r.id for r in old),
        f"this goal shares {overlap:.0%} of its terms with the session's earlier goals"
        f"{similar}: the {len(old)} resident nodes this call did not return may be paged "
        "out (focus mode drop, or reset)",
    )


def _credits(engine: FocusEngine, held: Iterable[tuple[str, Render]]) -> dict[str, float]:
    """The share of each node the agent holds through code held as ``(id, render)``: 1
    for a node held in full and everything inside it, :data:`SKELETON_CREDIT` for an
    outline."""
    out: dict[str, float] = {}
    for node_id, how in held:
        if how != "full":
            out[node_id] = max(out.get(node_id, 0.0), SKELETON_CREDIT)
            continue
        out.update(dict.fromkeys(engine.index.within(node_id), 1.0))
    return out


def _covered(engine: FocusEngine, packing: Packing) -> frozenset[str]:
    held = [(i.node.id, i.render) for i in packing.loaded]
    held += [(k.node.id, k.render) for k in packing.kept]
    return frozenset(n for n, credit in _credits(engine, held).items() if credit >= 1.0)


def _value(
    engine: FocusEngine,
    sal: Salience,
    packing: Packing,
    fresh: Mapping[str, tuple[Render, int]],
) -> Value | None:
    """The call's value of information: the salience its sent code adds to what the
    agent held before (unchanged residents), ahead of the knee and in all."""
    before = _credits(engine, ((node_id, how) for node_id, (how, _tokens) in fresh.items()))
    sent = _credits(engine, ((i.node.id, i.render) for i in packing.loaded))
    position = engine.index.position
    gains = [
        Gain(c, float(sal.scores[position[c]]), before.get(c, 0.0), sent.get(c, 0.0))
        for c in packing.candidates
    ]
    return value_of_information(gains, knee([g.salience for g in gains[:KNEE_WINDOW]]))


def _judged(engine: FocusEngine, packing: Packing, sal: Salience) -> Any:
    """Sufficiency over what the agent holds: sent now or resident."""
    held = tuple(
        Loaded(k.node, k.salience, k.tokens, k.render, "", "resident") for k in packing.kept
    )
    view = Packing(packing.limit, packing.loaded + held, packing.ignored, packing.candidates)
    return judge(view, sal, engine.index)


def _pivot(
    engine: FocusEngine, ws: WorkingSet, packing: Packing, goal: str, discussed: Discussed = ()
) -> str | None:
    """Where unexplored salience lies: the best candidate left out for budget, else the
    best-ranked file holding no resident node."""
    for entry in packing.ignored:
        if entry.why == "over_budget" and entry.nodes == 1:
            return entry.what
    held_paths = set()
    for resident in ws.resident:
        node = engine.graph.node(resident.id)
        if node is not None:
            held_paths.add(node.path)
    return next((p for p in engine.rank_files(goal, discussed) if p not in held_paths), None)


def _absorbed(
    engine: FocusEngine,
    fresh: Mapping[str, tuple[Render, int]],
    packing: Packing,
    now: int,
    ws: WorkingSet,
) -> list[PageOut]:
    """Residents inside code this call sends in full: replaced by it (pinned ones
    excepted: they never leave)."""
    sent_full = {i.node.id for i in packing.loaded if i.render == "full"}
    pinned = protected_ids(ws)  # a pinned node stays resident, even inside sent code
    out: list[PageOut] = []
    for node_id in fresh:
        if node_id in pinned:
            continue
        node = engine.graph.node(node_id)
        if node is None:
            continue
        holder = next((a for a in ancestors(engine.index, node) if a in sent_full), None)
        resident = ws.get(node_id)
        if holder is not None and resident is not None:
            out.append(
                PageOut(
                    node_id,
                    heat(resident, now),
                    f"contained in {holder}, which this call sends in full",
                    resident.tokens,
                    inside=holder,
                )
            )
    return out


def _without_leaving(
    packing: Packing, paged: Iterable[PageOut], absorbed: Iterable[PageOut]
) -> Packing:
    """``packing`` with the candidates this call pages out no longer held. Each moves to
    the ignored tail: as a duplicate of the code it is inside, when that code is sent in
    full now (``absorbed``), else as over the call's budget (why it was out of the
    call's view); in salience order among the single entries."""
    holders = {a.id: a.inside for a in absorbed if a.inside is not None}
    leaving_ids = {p.id for p in paged} | set(holders)
    leaving = [k for k in packing.kept if k.node.id in leaving_ids]
    if not leaving:
        return packing
    tail = list(packing.ignored)
    for gone in sorted(leaving, key=lambda k: (-k.salience, k.node.id)):
        holder = holders.get(gone.node.id)
        entry = (
            Ignored(gone.node.id, "duplicate_of", gone.salience, holder)
            if holder is not None
            else Ignored(gone.node.id, "over_budget", gone.salience)
        )
        at = next(
            (i for i, e in enumerate(tail) if e.nodes > 1 or e.salience < gone.salience),
            len(tail),
        )
        tail.insert(at, entry)
    kept = tuple(k for k in packing.kept if k.node.id not in leaving_ids)
    return replace(packing, kept=kept, ignored=tuple(tail))


def focus_in_session(
    engine: FocusEngine,
    ws: WorkingSet,
    goal: str,
    budget: int,
    mode: str = "set",
    resident_in_budget: bool = RESIDENT_IN_BUDGET,
    discussed: Discussed = (),
    elsewhere: Mapping[str, str] | None = None,
) -> SessionFocus:
    """One focus call of the session ``ws`` (see the module docstring); ``discussed`` and
    ``elsewhere`` as :meth:`FocusEngine.focus` takes them."""
    goal = checked_goal("goal", goal)
    budget = checked_budget(budget)
    chosen = checked_mode(mode)
    now = ws.calls + 1
    fresh, stale, stale_ids, gone = _check_residents(engine, ws)
    sal = engine.salience(goal, discussed)
    cache = engine._renders

    def pack(limit: int) -> tuple[Packing, list[PageOut], WorkingSet]:
        packing = pack_to_budget(
            engine.index,
            sal,
            limit,
            engine.count_tokens,
            cache,
            resident=fresh,
            resident_in_budget=resident_in_budget,
            elsewhere=elsewhere,
        )
        absorbed = _absorbed(engine, fresh, packing, now, ws)
        base = dropped(ws, [*stale_ids, *(g.id for g in gone), *(a.id for a in absorbed)])
        return packing, absorbed, base

    limit = budget
    for attempt in range(MAX_REPACKS + 1):
        packing, absorbed, base = pack(limit if attempt < MAX_REPACKS else 0)
        # Residents this call's view holds stay; one the goal ranks too low for the view
        # (it did not fit the call's budget) may page out like any other.
        keep = [k.node.id for k in packing.kept if k.in_view or not resident_in_budget]
        paged = plan_page_out(base, packing.used, keep, now)
        room = base.budget - base.used + sum(p.tokens for p in paged)
        if packing.used <= max(room, 0):
            break
        # Even paging out every unprotected resident leaves too little (a smaller
        # budget may also absorb fewer residents): pack again within what is left.
        limit = max(min(limit - 1, room + packing.held), 0)
    # Stale residents the ranking did not send again: their new code, if it fits.
    sent = {i.node.id for i in packing.loaded}
    extra: list[Loaded] = []
    spare = min(packing.left, room - packing.used)
    for entry in stale:
        old = ws.get(entry.id)
        node = engine.graph.node(entry.id)
        if old is None or node is None:
            continue
        inside = any(a in sent for a in ancestors(engine.index, node))
        if entry.id in sent or inside:
            stale[stale.index(entry)] = replace(entry, resent=True)
            continue
        text, tokens = _current(engine, node, old.render)
        if tokens <= spare:
            row = engine.index.position.get(entry.id)
            score = float(sal.scores[row]) if row is not None else 0.0
            why = f"changed since call {old.loaded_by} sent it: its new code"
            extra.append(Loaded(node, score, tokens, old.render, text, why))
            spare -= tokens
            stale[stale.index(entry)] = replace(entry, resent=True)
        else:
            paged.append(
                PageOut(
                    entry.id,
                    heat(old, now),
                    f"changed since call {old.loaded_by} sent it; its new code "
                    f"({tokens} tokens) does not fit this call",
                    old.tokens,
                )
            )
    if extra:
        packing = replace(packing, loaded=packing.loaded + tuple(extra))
    packing = _without_leaving(packing, paged, absorbed)
    verdict = _judged(engine, packing, sal)
    result = FocusResult(goal, chosen, packing, verdict, _covered(engine, packing))
    leaving = [*gone, *absorbed, *paged]
    resent = {s.id for s in stale if s.resent}
    arrivals = [
        Arrival(
            item.node.id,
            item.render,
            item.tokens,
            content_digest(item.text),
            item.salience,
            edited=item.node.id in resent,
        )
        for item in packing.loaded
    ]
    hits = [Hit(k.node.id, k.salience) for k in packing.kept]
    drift = _goal_drift(engine, ws, goal, keep)
    if chosen == "check":
        return SessionFocus(result, ws, now, tuple(leaving), tuple(stale), None, drift)
    value = _value(engine, sal, packing, fresh)
    after = advance(ws, goal, arrivals, hits, [p.id for p in leaving], value)
    thrash = None
    if value is not None and not value.new_material and after.low_value_streak >= THRASH_STREAK:
        repeated = tuple(
            k.node.id for k in sorted(packing.kept, key=lambda k: -k.salience)[:REPEATED_SHOWN]
        )
        pivot = _pivot(engine, after, packing, goal, discussed)
        where = f"pivot to {pivot}" if pivot is not None else "act on what you hold"
        held = f": you already hold its most salient code ({', '.join(repeated)})"
        thrash = Thrash(
            after.low_value_streak + 1,
            value.added,
            repeated,
            pivot,
            f"thrash: {after.low_value_streak + 1} calls in a row asked the same again and "
            f"brought less new code than one item ahead of the salience knee"
            f"{held if repeated else ''}; {where}",
        )
    return SessionFocus(result, after, now, tuple(leaving), tuple(stale), thrash, drift, value)


def session_status(engine: FocusEngine | None, ws: WorkingSet) -> dict[str, Any]:
    """The working set as JSON-ready data: residents hottest first with their heat, the
    pins, the budget used and left, and stale residents (when an engine is given)."""
    now = ws.calls
    stale: list[Stale] = []
    if engine is not None:
        _fresh, stale, _ids, gone = _check_residents(engine, ws)
        stale += [Stale(g.id, _loaded_by(ws, g.id, now), g.why, False) for g in gone]
    held = protected_ids(ws)
    residents = sorted(ws.resident, key=lambda r: (-heat(r, now), r.id))
    return {
        "session": ws.session,
        "calls": ws.calls,
        "budget": {"limit": ws.budget, "used": ws.used, "left": ws.left},
        "resident": [
            {
                "id": r.id,
                "render": r.render,
                "tokens": r.tokens,
                "loaded_by": r.loaded_by,
                "heat": heat(r, now),
                "accesses": r.accesses,
                "grounded": r.grounded,
                "pinned": r.id in held,
            }
            for r in residents
        ],
        "pins": {"nodes": list(ws.pinned_nodes), "goals": list(ws.pinned_goals)},
        "goals": list(ws.goals),
        "stale": [s.to_json() for s in stale],
        "low_value_streak": ws.low_value_streak,
    }


def require_resident(ws: WorkingSet, node_id: str) -> None:
    if ws.get(node_id) is None:
        raise NotInWorkingSet(node_id, ws.session)
