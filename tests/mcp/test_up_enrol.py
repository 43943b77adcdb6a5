"""`coderooms up --agent ID` starts a fresh room in one command: an agent that is not on
the roster yet is added; a retired one stays refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from coderooms.cli.mcp_cmds import _enrol
from coderooms.mcp.errors import RetiredCaller
from coderooms.store import open_store


async def test_up_adds_an_agent_that_is_not_on_the_roster(tmp_path: Path) -> None:
    store = open_store(f"sqlite:///{tmp_path / 'rooms.db'}")
    try:
        await _enrol(store, "newcomer")
        roster = await store.roster()
        assert [member.id for member in roster.active()] == ["newcomer"]
        await _enrol(store, "newcomer")  # a second start changes nothing
        assert [member.id for member in (await store.roster()).active()] == ["newcomer"]
    finally:
        store.close()


async def test_up_refuses_a_retired_agent(tmp_path: Path) -> None:
    store = open_store(f"sqlite:///{tmp_path / 'rooms.db'}")
    try:
        await store.add_agent("gone")
        await store.retire_agent("gone")
        with pytest.raises(RetiredCaller):
            await _enrol(store, "gone")
    finally:
        store.close()
