"""Working sets in a PostgreSQL store that predates their stamps (migration 3)."""

from __future__ import annotations

import sys
from pathlib import Path

import psycopg

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "focus"))

from fixture_repo import shop_engine  # noqa: E402

from coderooms.focus.session import focus_in_session  # noqa: E402
from coderooms.focus.workingset import WorkingSet, with_pins  # noqa: E402
from coderooms.store.postgres import PostgresStore, apply_migrations  # noqa: E402
from coderooms.store.worksets import STAMP_BYTES, working_set_rows  # noqa: E402
from store_kinds import TEST_DATABASE, next_database  # noqa: E402

ENGINE = shop_engine()


async def test_a_working_set_saved_before_stamps_reads_back_and_saves_with_one(
    pg_cluster,  # type: ignore[no-untyped-def]
) -> None:
    url = pg_cluster.create_schema(TEST_DATABASE, next_database())
    ws = focus_in_session(
        ENGINE, WorkingSet("alice", "s1", 5_000), "Cart.add_item rejects zero quantity", 200
    ).state
    assert ws.resident
    with psycopg.connect(url, autocommit=True) as conn:
        assert apply_migrations(conn, target=2)[-1] == 2
        head, residents = working_set_rows(ws)
        conn.execute("INSERT INTO focus_sessions VALUES (%s, %s, %s, %s, %s, %s, %s, %s)", head)
        for row in residents:
            conn.execute(f"INSERT INTO focus_resident VALUES ({', '.join(['%s'] * 12)})", row)
    store = PostgresStore(url)
    try:
        sets = store.working_sets()
        first = await sets.load("alice", "s1")
        assert first == ws
        assert await sets.load("alice", "s1") is not first  # no stamp: read again
        assert not await sets.save_if(ws, None)
        later = with_pins(ws, goals=["the depot"])
        assert await sets.save_if(later, first)
        assert await sets.load("alice", "s1") is later
        ((stamp,),) = store._query("SELECT stamp FROM focus_sessions")
        assert len(stamp) == 2 * STAMP_BYTES
    finally:
        store.close()
