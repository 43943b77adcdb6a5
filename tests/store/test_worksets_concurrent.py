"""Two hosts updating one focus session at once: a save only lands on the working set it
was computed from, so neither update is lost; in every store kind."""

from __future__ import annotations

import asyncio
import random
import sys
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "focus"))

from fixture_repo import shop_engine  # noqa: E402

from coderooms.focus.errors import SessionContended  # noqa: E402
from coderooms.focus.session import focus_in_session  # noqa: E402
from coderooms.focus.workingset import Resident, WorkingSet, with_pins  # noqa: E402
from coderooms.sessions import SAVE_ATTEMPTS, focus_call, ground_named_residents  # noqa: E402
from coderooms.store.worksets import working_set_rows  # noqa: E402

ENGINE = shop_engine()
FIRST = "Cart.add_item rejects zero quantity"
SECOND = "route_parcel picks the wrong depot"


class Shop:
    """The face of a workspace focus_call uses, over the fixture engine."""

    def focus(
        self,
        goal: str,
        budget: int = 8000,
        mode: str = "set",
        discussed: Any = (),
        elsewhere: Any = None,
    ) -> Any:
        return ENGINE.focus(
            goal, budget=budget, mode=mode, discussed=discussed, elsewhere=elsewhere
        )

    def focus_session(
        self,
        state: WorkingSet,
        goal: str,
        budget: int = 8000,
        mode: str = "set",
        discussed: Any = (),
        elsewhere: Any = None,
    ) -> Any:
        return focus_in_session(
            ENGINE, state, goal, budget, mode, discussed=discussed, elsewhere=elsewhere
        )

    def focus_engine(self) -> Any:
        return ENGINE


SHOP = Shop()


async def direct(work: Callable[[Shop], Any]) -> Any:
    return work(SHOP)


async def test_save_if_writes_only_over_the_working_set_it_was_computed_from(new_store) -> None:  # type: ignore[no-untyped-def]
    sets = new_store().working_sets()
    start = focus_in_session(ENGINE, WorkingSet("alice", "s1", 5_000), FIRST, 200).state
    assert await sets.save_if(start, None)
    assert not await sets.save_if(start, None)  # the session exists now
    mine = focus_in_session(ENGINE, start, SECOND, 200).state
    theirs = with_pins(start, nodes=["shop/cart.py::Cart"])
    assert await sets.save_if(theirs, start)
    assert not await sets.save_if(mine, start)  # computed from what is no longer stored
    assert await sets.load("alice", "s1") == theirs
    assert await sets.save_if(mine, theirs)
    assert await sets.load("alice", "s1") == mine


async def test_two_hosts_setting_one_session_at_once_both_take_effect(new_store) -> None:  # type: ignore[no-untyped-def]
    here = new_store()
    there = new_store.again(here)  # another host on the same store
    b_saved = asyncio.Event()
    a_read = asyncio.Event()
    runs: list[str] = []

    async def host_a(work: Callable[[Shop], Any]) -> Any:
        runs.append("a")
        a_read.set()
        if runs.count("a") == 1:
            await b_saved.wait()  # host B saves while A works on what it read
        return work(SHOP)

    async def call_a() -> dict[str, Any]:
        return await focus_call(
            here.working_sets(), host_a, "alice", "set", session="s", goal=FIRST, budget=200
        )

    async def call_b() -> dict[str, Any]:
        await a_read.wait()
        out = await focus_call(
            there.working_sets(), direct, "alice", "set", session="s", goal=SECOND, budget=200
        )
        b_saved.set()
        return out

    a, b = await asyncio.gather(call_a(), call_b())
    assert runs.count("a") == 2  # A found the session changed, read it again, redid its call
    stored = await here.working_sets().load("alice", "s")
    assert stored is not None
    assert stored.calls == 2 and set(stored.goals) == {FIRST, SECOND}
    assert b["session"]["call"] == 1 and a["session"]["call"] == 2
    # A's call was redone over B's working set: what B sent is still resident beside
    # what A sent
    sent_by_b = {item["id"] for item in b["focus_set"]}
    sent_by_a = {item["id"] for item in a["focus_set"]}
    assert sent_by_b and {r.id for r in stored.resident} >= sent_by_b | sent_by_a
    # pins, drops and post grounding go through the same check
    await focus_call(there.working_sets(), direct, "alice", "pin", session="s", goal=FIRST)
    after = await here.working_sets().load("alice", "s")
    assert after is not None and after.pinned_goals == (FIRST,) and after.calls == 2


async def test_a_session_changed_on_every_attempt_is_a_typed_error_and_nothing_lands(
    new_store,
) -> None:  # type: ignore[no-untyped-def]
    here = new_store()
    there = new_store.again(here)
    await focus_call(
        here.working_sets(), direct, "alice", "set", session="s", goal=FIRST, budget=200
    )
    attempts = 0

    async def contended(work: Callable[[Shop], Any]) -> Any:
        nonlocal attempts
        attempts += 1
        # another host changes the session each time this call has read it
        other = await there.working_sets().load("alice", "s")
        assert other is not None
        await there.working_sets().save(with_pins(other, goals=[f"goal {attempts}"]))
        return work(SHOP)

    with pytest.raises(SessionContended, match="send the call again"):
        await focus_call(
            here.working_sets(), contended, "alice", "set", session="s", goal=SECOND, budget=200
        )
    assert attempts == SAVE_ATTEMPTS
    stored = await here.working_sets().load("alice", "s")
    assert stored is not None and stored.calls == 1  # the contended call saved nothing
    assert len(stored.pinned_goals) == SAVE_ATTEMPTS  # and every other update landed


async def test_grounding_by_a_post_keeps_a_set_saved_meanwhile(new_store) -> None:  # type: ignore[no-untyped-def]
    store = new_store()
    sets = store.working_sets()
    await focus_call(sets, direct, "alice", "set", session="s", goal=FIRST, budget=200)
    before = await sets.load("alice", "s")
    assert before is not None
    held = before.resident[0].id
    newer = focus_in_session(ENGINE, before, SECOND, 200).state
    assert await sets.save_if(newer, before)
    # the post's grounding starts from the stale copy, finds it changed and reads again
    original_of_agents = sets.of_agents

    async def stale_listing(agents: Any) -> list[WorkingSet]:
        return [before]

    sets.of_agents = stale_listing  # type: ignore[method-assign]
    try:
        assert await ground_named_residents(sets, "alice", f"look at `{held}`") == 1
    finally:
        sets.of_agents = original_of_agents  # type: ignore[method-assign]
    stored = await sets.load("alice", "s")
    assert stored is not None and stored.calls == newer.calls
    node = stored.get(held)
    kept = newer.get(held)
    assert node is not None and kept is not None and node.grounded == kept.grounded + 1


async def test_two_agents_at_once_on_one_session_id_keep_their_own_working_sets(new_store) -> None:  # type: ignore[no-untyped-def]
    here = new_store()
    there = new_store.again(here)

    async def calls(store: Any, agent: str, goal: str) -> list[dict[str, Any]]:
        out = []
        for _ in range(3):
            out.append(
                await focus_call(
                    store.working_sets(), direct, agent, "set", session="s", goal=goal, budget=200
                )
            )
            await asyncio.sleep(0)  # let the other agent's call run in between
        return out

    alice, bob = await asyncio.gather(calls(here, "alice", FIRST), calls(there, "bob", SECOND))
    for answers in (alice, bob):
        assert [a["session"]["call"] for a in answers] == [1, 2, 3]
        sent: set[str] = set()
        for answer in answers:  # what is resident is only what this agent was sent
            assert {r["id"] for r in answer["resident"]} <= sent
            sent |= {item["id"] for item in answer["focus_set"]}
        assert answers[-1]["resident"]
    stored = {agent: await here.working_sets().load(agent, "s") for agent in ("alice", "bob")}
    assert stored["alice"] is not None and stored["alice"].goals == (FIRST,)
    assert stored["bob"] is not None and stored["bob"].goals == (SECOND,)
    alone = focus_in_session(ENGINE, WorkingSet("alice", "s", 32_000), FIRST, 200).state
    assert {r.id for r in stored["alice"].resident} == {r.id for r in alone.resident}


async def test_save_if_writes_what_changed_and_each_state_loads_back_whole(new_store) -> None:  # type: ignore[no-untyped-def]
    """A save over the stored working set writes only the residents that differ: after
    each of many saves that add, drop and change residents, the store gives back
    exactly the working set saved (nothing stale kept, nothing unchanged lost)."""
    sets = new_store().working_sets()
    rng = random.Random(11)
    ws = WorkingSet("alice", "s", 10_000)
    stored: WorkingSet | None = None
    for call in range(1, 31):
        residents = {r.id: r for r in ws.resident}
        for node in rng.sample(sorted(residents), min(len(residents), rng.randint(0, 3))):
            del residents[node]
        for _ in range(rng.randint(0, 4)):
            node = f"shop/n{rng.randint(0, 15)}.py::f"
            old = residents.get(node)
            residents[node] = Resident(
                node,
                rng.choice(("full", "skeleton")),
                rng.randint(1, 900),
                f"digest-{rng.randint(0, 3)}",
                call,
                f"goal {call}",
                (old.accesses + 1) if old else 1,
                call,
                rng.randint(0, 2),
                rng.randint(0, 64) / 8,  # exact in any float column
            )
        saved = replace(
            ws, calls=call, resident=tuple(sorted(residents.values(), key=lambda r: r.id))
        )
        assert await sets.save_if(saved, stored)
        stored = await sets.load("alice", "s")
        assert stored == saved
        ws = saved
    assert ws.resident  # the walk ended holding some


async def test_a_store_answers_from_what_it_last_saved_until_another_host_changes_it(
    new_store,
) -> None:  # type: ignore[no-untyped-def]
    """A store knows the working set it last read or wrote by the session's stamp: a
    load hands back that set while nobody saved over it, and reads the new one (whole,
    and equal to what was saved) once another host has, or after a delete."""
    here = new_store()
    there = new_store.again(here)
    mine = focus_in_session(ENGINE, WorkingSet("alice", "s", 5_000), FIRST, 200).state
    assert await here.working_sets().save_if(mine, None)
    assert await here.working_sets().load("alice", "s") is mine  # known: not read again
    read_there = await there.working_sets().load("alice", "s")
    assert read_there == mine and read_there is not mine
    theirs = focus_in_session(ENGINE, read_there, SECOND, 200).state
    assert await there.working_sets().save_if(theirs, read_there)
    assert not await here.working_sets().save_if(with_pins(mine, goals=["late"]), mine)
    again = await here.working_sets().load("alice", "s")
    assert again == theirs and again is not theirs
    assert await here.working_sets().load("alice", "s") is again
    # an equal copy of what is stored saves over it as the set itself does
    pinned = with_pins(theirs, goals=["the cart"])
    assert await here.working_sets().save_if(pinned, replace(again))
    assert await there.working_sets().load("alice", "s") == pinned
    # deleted elsewhere and made again with the very same content: read anew
    assert await there.working_sets().delete("alice", "s")
    assert await there.working_sets().save_if(pinned, None)
    fresh = await here.working_sets().load("alice", "s")
    assert fresh == pinned and fresh is not pinned
    assert await there.working_sets().delete("alice", "s")
    assert await here.working_sets().load("alice", "s") is None


# How a host running the code from before the stamp saved a session's row: while hosts
# upgrade one by one, an old one may still write so beside new ones.
_UNSTAMPED_UPSERT = (
    "INSERT INTO focus_sessions (agent_id, session_id, budget, calls, low_value_streak, "
    "pinned_nodes, pinned_goals, goals) VALUES (?, ?, ?, ?, ?, ?, ?, ?) "
    "ON CONFLICT (agent_id, session_id) DO UPDATE SET budget = excluded.budget, "
    "calls = excluded.calls, low_value_streak = excluded.low_value_streak, "
    "pinned_nodes = excluded.pinned_nodes, pinned_goals = excluded.pinned_goals, "
    "goals = excluded.goals"
)


async def test_a_host_from_before_the_stamp_saving_meanwhile_loses_no_update(new_store) -> None:  # type: ignore[no-untyped-def]
    """A session row saved without a new stamp (by a host not yet upgraded) clears its
    stamp, so a new host reads the set again instead of answering from what it knew,
    and its save over what it knew does not land."""
    here = new_store()
    there = new_store.again(here)
    mine = focus_in_session(ENGINE, WorkingSet("alice", "s", 5_000), FIRST, 200).state
    assert await here.working_sets().save_if(mine, None)
    theirs = with_pins(mine, goals=["an old host's pin"])
    head, _ = working_set_rows(theirs)
    await there._writing(lambda db: db.execute(_UNSTAMPED_UPSERT, head))
    assert not await here.working_sets().save_if(with_pins(mine, goals=["late"]), mine)
    again = await here.working_sets().load("alice", "s")
    assert again == theirs
    following = with_pins(again, goals=["next"])
    assert await here.working_sets().save_if(following, again)
    stored = await there.working_sets().load("alice", "s")
    assert stored is not None and stored.pinned_goals == ("an old host's pin", "next")
    assert await here.working_sets().load("alice", "s") is following  # stamped: known again
