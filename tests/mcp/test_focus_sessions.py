"""The focus tool's modes over MCP, in process: each connection its own session, the
working set in the server's store (so a restarted server answers as before), every
mode's answer valid against the tool's output schema, bad input a typed tool error."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from jsonschema.validators import validator_for
from mcp_harness import ok, text_of
from mcp_repo import write_fixture_repo

from coderooms.mcp.server import build_server, fixed_caller
from coderooms.mcp.service import RoomService
from coderooms.store import open_store
from coderooms.workspace import Workspace
from mcp import Client

GOAL = "checkout charges the wrong amount after a coupon discount"


def test_focus_modes_over_mcp(tmp_path: Path) -> None:
    repo = write_fixture_repo(tmp_path / "repo")
    workspace = Workspace.open(repo)
    workspace.index()
    url = f"sqlite:///{tmp_path / 'rooms.db'}"

    async def serve(agent: str) -> Any:
        store = open_store(url)
        return store, build_server(RoomService(store, lambda: workspace), fixed_caller(agent))

    async def scenario() -> None:
        setup = open_store(url)
        await setup.add_agent("alice")
        await setup.add_agent("bob")
        setup.close()
        store, server = await serve("alice")
        other_store, elsewhere = await serve("alice")  # another stdio connection
        try:
            listed = await server.list_tools()
            (tool,) = [t for t in listed if t.name == "focus"]
            check = validator_for(tool.output_schema)(tool.output_schema).validate
            async with Client(server) as first, Client(elsewhere) as second:
                one = ok(await first.call_tool("focus", {"goal": GOAL, "budget": 300}))
                check(one)
                session = one["session"]["id"]
                assert one["resident"] == [] and one["focus_set"]
                two = ok(await first.call_tool("focus", {"goal": GOAL, "budget": 300}))
                check(two)
                assert two["session"]["id"] == session
                held = {r["id"] for r in two["resident"]}
                assert {i["id"] for i in one["focus_set"]} <= held
                result = await first.call_tool("focus", {"goal": GOAL, "budget": 300})
                assert "resident " in text_of(result)
                other = ok(await second.call_tool("focus", {"goal": GOAL, "budget": 300}))
                assert other["session"]["id"] != session and other["resident"] == []

                node = sorted(held)[0]
                for arguments in (
                    {"mode": "status"},
                    {"mode": "pin", "node": node},
                    {"mode": "pin", "goal": GOAL},
                    {"mode": "unpin", "node": node},
                    {"mode": "drop", "node": node},
                    {"mode": "check", "goal": GOAL},
                ):
                    answer = ok(await first.call_tool("focus", arguments))
                    check(answer)
                    assert answer["mode"] == arguments["mode"]
                status = ok(await first.call_tool("focus", {"mode": "status"}))
                assert node not in {n["id"] for n in status["working_set"]["resident"]}
                assert status["working_set"]["pins"]["goals"] == [GOAL]

                for arguments, kind in (
                    ({"mode": "status", "session": "never-made"}, "UnknownSession"),
                    ({"mode": "pin", "node": "no/such.py::thing"}, "UnknownPinTarget"),
                    ({"mode": "drop", "node": "no/such.py"}, "NotInWorkingSet"),
                    ({"goal": GOAL, "budget": 0}, "InvalidBudget"),
                    ({"mode": "set"}, "MissingArgument"),
                    ({"goal": GOAL, "session": ""}, "InvalidSession"),
                ):
                    refused = await first.call_tool("focus", arguments)
                    assert refused.is_error
                    assert refused.structured_content["error"]["type"] == kind  # type: ignore[index]
        finally:
            store.close()
            other_store.close()

        # A restarted server, the same store: the session answers as before; another
        # agent's session of the same id is its own.
        store, server = await serve("alice")
        try:
            async with Client(server) as client:
                again = ok(
                    await client.call_tool(
                        "focus", {"goal": GOAL, "budget": 300, "session": session}
                    )
                )
                assert again["resident"] and again["session"]["call"] == 4
        finally:
            store.close()
        store, server = await serve("bob")
        try:
            async with Client(server) as client:
                theirs = ok(
                    await client.call_tool(
                        "focus", {"goal": GOAL, "budget": 300, "session": session}
                    )
                )
                assert theirs["resident"] == [] and theirs["session"]["call"] == 1
        finally:
            store.close()

    asyncio.run(scenario())
    workspace.close()


def test_seek_impact_and_skim_carry_one_envelope(tmp_path: Path) -> None:
    repo = write_fixture_repo(tmp_path / "repo")
    workspace = Workspace.open(repo)
    workspace.index()
    url = f"sqlite:///{tmp_path / 'rooms.db'}"

    async def scenario() -> None:
        store = open_store(url)
        await store.add_agent("alice")
        server = build_server(RoomService(store, lambda: workspace), fixed_caller("alice"))
        try:
            tools = {t.name: t for t in await server.list_tools()}
            log = "\n".join(
                [f"ok line {i}" for i in range(400)] + ["ERROR: checkout discount wrong"]
            )
            async with Client(server) as client:
                for name, arguments in (
                    ("seek", {"query": GOAL, "limit": 2}),
                    ("impact", {"target": "shop/cart.py::apply_discount"}),
                    ("skim", {"text": log, "goal": "checkout discount", "budget": 60}),
                ):
                    answer = ok(await client.call_tool(name, arguments))
                    schema = tools[name].output_schema
                    validator_for(schema)(schema).validate(answer)
                    assert answer["sufficiency"]["state"] in (
                        "gathering",
                        "sufficient",
                        "saturated",
                    )
                    assert 0.0 <= answer["salience_captured"] <= 1.0
                    assert all(set(p) == {"what", "why"} for p in answer["pruned"])
                    if name == "seek":
                        assert len(answer["pruned"]) == len(answer["ignored"])
                    if name == "skim":
                        assert answer["pruned"] and answer["salience_captured"] < 1.0
        finally:
            store.close()

    asyncio.run(scenario())
    workspace.close()
