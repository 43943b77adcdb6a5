"""Working sets in the SQLite store: saved whole, read back equal, kept across a restart,
one per agent session, and refused when the stored rows are damaged."""

from __future__ import annotations

import asyncio
import sqlite3
import sys
from dataclasses import replace
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "focus"))

from fixture_repo import shop_engine  # noqa: E402

from coderooms.focus.session import focus_in_session  # noqa: E402
from coderooms.focus.workingset import WorkingSet, with_pins  # noqa: E402
from coderooms.store import CorruptDatabase, SQLiteStore  # noqa: E402
from coderooms.store.sqlite import MIGRATIONS, apply_migrations  # noqa: E402
from coderooms.store.worksets import (  # noqa: E402
    KNOWN_SESSIONS,
    STAMP_BYTES,
    KnownWorkingSets,
    working_set_rows,
)

ENGINE = shop_engine()


def worked(agent: str = "alice", session: str = "s1") -> WorkingSet:
    ws = WorkingSet(agent, session, 5_000)
    for goal in ("Cart.add_item rejects zero quantity", "route_parcel picks the wrong depot"):
        ws = focus_in_session(ENGINE, ws, goal, 200).state
    return with_pins(ws, nodes=["shop/cart.py::Cart"], goals=["the cart"])


def test_a_working_set_reads_back_as_it_was_saved_after_a_restart(tmp_path: Path) -> None:
    path = tmp_path / "rooms.db"
    ws = worked()
    assert ws.resident

    async def save() -> None:
        with SQLiteStore(path) as store:
            await store.working_sets().save(ws)

    async def load() -> WorkingSet | None:
        with SQLiteStore(path) as store:
            return await store.working_sets().load("alice", "s1")

    asyncio.run(save())
    again = asyncio.run(load())
    assert again == ws
    # and it answers as the original does
    goal = "Cart.add_item rejects zero quantity"
    assert again is not None
    assert (
        focus_in_session(ENGINE, again, goal, 200).to_json()
        == focus_in_session(ENGINE, ws, goal, 200).to_json()
    )


def test_saving_again_replaces_the_residents_and_sessions_stay_apart(tmp_path: Path) -> None:
    async def scenario() -> None:
        with SQLiteStore(tmp_path / "rooms.db") as store:
            sets = store.working_sets()
            alice, bob = worked("alice"), worked("bob")
            await sets.save(alice)
            await sets.save(bob)
            smaller = WorkingSet("alice", "s1", 100, alice.calls, alice.resident[:1])
            await sets.save(smaller)
            assert await sets.load("alice", "s1") == smaller
            assert await sets.load("bob", "s1") == bob
            assert await sets.load("alice", "other") is None
            assert await sets.delete("alice", "s1")
            assert not await sets.delete("alice", "s1")
            assert await sets.load("bob", "s1") == bob
            rows = store._query("SELECT count(*) FROM focus_resident WHERE agent_id = 'alice'")
            assert rows == [(0,)]

    asyncio.run(scenario())


def test_the_tables_come_from_their_own_recorded_migration(tmp_path: Path) -> None:
    assert "focus working sets" in {m.name for m in MIGRATIONS}
    with SQLiteStore(tmp_path / "rooms.db"):
        pass
    conn = sqlite3.connect(tmp_path / "rooms.db")
    names = {n for (n,) in conn.execute("SELECT name FROM schema_migrations")}
    tables = {n for (n,) in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    conn.close()
    assert "focus working sets" in names
    assert {"focus_sessions", "focus_resident"} <= tables


def test_damaged_session_rows_are_a_typed_error(tmp_path: Path) -> None:
    path = tmp_path / "rooms.db"

    async def scenario() -> None:
        with SQLiteStore(path) as store:
            await store.working_sets().save(worked())
        conn = sqlite3.connect(path)
        conn.execute("UPDATE focus_sessions SET goals = 'not json'")
        conn.commit()
        conn.close()
        with SQLiteStore(path) as store, pytest.raises(CorruptDatabase, match="goals"):
            await store.working_sets().load("alice", "s1")

    asyncio.run(scenario())


# --- every store kind ---------------------------------------------------------------------


async def test_working_sets_and_code_pins_round_trip_in_every_store_kind(new_store) -> None:  # type: ignore[no-untyped-def]
    from coderooms.store.base import CodePinSnapshot

    store = new_store()
    ws, other = worked(), worked("bob", "b1")
    sets = store.working_sets()
    await sets.save(ws)
    await sets.save(other)
    await sets.save(ws)  # saved again: replaced, not doubled
    again = new_store.again(store)
    assert await again.working_sets().load("alice", "s1") == ws
    assert [w.agent for w in await again.working_sets().of_agents(["bob", "alice", "zed"])] == [
        "alice",
        "bob",
    ]
    assert await again.working_sets().delete("bob", "b1")
    assert not await again.working_sets().delete("bob", "b1")
    assert await again.working_sets().load("bob", "b1") is None
    pin = CodePinSnapshot(7, "shop/cart.py::Cart", "h1", "class Cart")
    await store.record_code_pins([pin])
    await store.record_code_pins([CodePinSnapshot(7, "shop/cart.py::Cart", "h2", "class Cart")])
    assert await again.code_pins([7, 8]) == [
        CodePinSnapshot(7, "shop/cart.py::Cart", "h2", "class Cart")
    ]
    assert await again.code_pins([]) == []


async def test_a_working_set_saved_before_stamps_reads_back_and_saves_with_one(
    tmp_path: Path,
) -> None:
    """A file from before migration 10 (session rows without a stamp) upgrades; its
    working sets read back whole, are never taken as known, and the next save stamps
    them."""
    path = tmp_path / "old.db"
    ws = worked()
    db = sqlite3.connect(path, isolation_level=None)
    assert apply_migrations(db, target=9)[-1] == 9
    head, residents = working_set_rows(ws)
    db.execute("INSERT INTO focus_sessions VALUES (?, ?, ?, ?, ?, ?, ?, ?)", head)
    db.executemany(f"INSERT INTO focus_resident VALUES ({', '.join('?' * 12)})", residents)
    db.close()
    with SQLiteStore(path) as store:
        sets = store.working_sets()
        first = await sets.load("alice", "s1")
        assert first == ws
        assert await sets.load("alice", "s1") is not first  # no stamp: read again
        later = with_pins(ws, goals=["the depot"])
        assert await sets.save_if(later, first)
        assert await sets.load("alice", "s1") is later
        stamps = store._query("SELECT stamp FROM focus_sessions")
    assert len(stamps) == 1 and len(stamps[0][0]) == 2 * STAMP_BYTES


def test_a_store_knows_at_most_its_bound_of_working_sets_the_least_recently_used_forgotten() -> (
    None
):
    known = KnownWorkingSets()
    sets = [WorkingSet("alice", f"s{i}", 100) for i in range(KNOWN_SESSIONS + 2)]
    for i, ws in enumerate(sets):
        known.keep(f"stamp{i}", ws)
        if i == 3:
            known.keep("again", sets[0])  # saved again: used now
            assert known.get("alice", "s1") == ("stamp1", sets[1])  # read: used now
    assert known.get("alice", "s2") is None and known.get("alice", "s3") is None
    assert known.get("alice", "s0") == ("again", sets[0])
    assert known.get("alice", "s1") == ("stamp1", sets[1])
    assert known.get("alice", "s4") == ("stamp4", sets[4])
    assert known.stamp_of(sets[-1]) == f"stamp{len(sets) - 1}"
    assert known.stamp_of(WorkingSet("alice", "s3", 101)) is None  # not what is known
    known.keep("", sets[-1])  # stored without a stamp: not known at all
    assert known.get("alice", sets[-1].session) is None


def test_a_working_set_not_in_the_order_a_read_gives_is_not_kept_as_known() -> None:
    ws = worked()
    assert len(ws.resident) > 1
    known = KnownWorkingSets()
    known.keep("s", replace(ws, resident=ws.resident[::-1]))
    assert known.get("alice", "s1") is None
    known.keep("s", ws)
    assert known.get("alice", "s1") == ("s", ws)
