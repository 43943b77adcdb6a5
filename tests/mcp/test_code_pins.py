"""Code in the room: '!pin @node' is checked against the index and the pinboard says
whether the pinned code changed since."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from click.testing import CliRunner
from mcp_repo import write_fixture_repo

from coderooms.index.errors import UnknownNode
from coderooms.mcp.render import render_pins
from coderooms.mcp.service import RoomService
from coderooms.store import open_store
from coderooms.workspace import Workspace

NODE = "shop/cart.py::apply_discount"


def test_a_pinned_node_shows_its_signature_and_whether_it_changed(tmp_path: Path) -> None:
    repo = write_fixture_repo(tmp_path / "repo")
    workspace = Workspace.open(repo)
    workspace.index()

    async def scenario() -> None:
        store = open_store(f"sqlite:///{tmp_path / 'rooms.db'}")
        try:
            await store.add_agent("alice")
            await store.create_desk("eng")
            await store.add_desk_member("eng", "alice")
            service = RoomService(store, lambda: workspace, offload=False)
            with pytest.raises(UnknownNode):
                await service.post("alice", "!pin @shop/cart.py::nowhere", "eng")
            assert await store.last_sequence() is None  # refused before anything was written
            posted = await service.post("alice", f"!pin @{NODE} #money round to cents", "eng")
            before = await service.pins("alice", "eng")
            source = repo / "shop" / "cart.py"
            source.write_text(
                source.read_text().replace(
                    "def apply_discount(total: float, percent: float)",
                    "def apply_discount(total: float, percent: float, cap: float = 1.0)",
                )
            )
            workspace.index()
            after = await service.pins("alice", "eng")
        finally:
            store.close()
        [pin] = before.pins
        assert (pin.sequence, pin.node, pin.label, pin.changed) == (
            posted.sequence,
            NODE,
            "money",
            False,
        )
        assert pin.signature is not None and "apply_discount" in pin.signature
        assert "unchanged since it was pinned" in render_pins(before)
        [changed] = after.pins
        assert changed.changed is True and "cap" in (changed.signature or "")
        assert "changed since it was pinned" in render_pins(after)

    asyncio.run(scenario())
    workspace.close()


def test_cli_post_and_pins_take_a_repository(tmp_path: Path) -> None:
    from coderooms.cli import main

    repo = write_fixture_repo(tmp_path / "repo")
    db = str(tmp_path / "rooms.db")
    runner = CliRunner()
    assert runner.invoke(main, ["--db", db, "init"]).exit_code == 0
    args = ["--db", db, "post", "--as", "operator", "--repo", str(repo)]
    refused = runner.invoke(main, [*args, "!pin @shop/cart.py::nowhere"])
    assert refused.exit_code != 0 and "Traceback" not in refused.output
    assert "shop/cart.py::nowhere" in refused.output
    assert runner.invoke(main, [*args, f"!pin @{NODE}"]).exit_code == 0
    shown = runner.invoke(main, ["--db", db, "pins", "--repo", str(repo)])
    assert shown.exit_code == 0, shown.output
    assert f"code {NODE}" in shown.stdout and "unchanged since it was pinned" in shown.stdout
    plain = runner.invoke(main, ["--db", db, "pins"])
    assert "whether it changed is not known here" in plain.stdout
