"""A stdio server in an indexed repository has its focus engine ready before the first
focus; one in a repository never indexed leaves indexing to the first focus call."""

from __future__ import annotations

import asyncio
import json
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from mcp_harness import CODEROOMS, wire_opening
from mcp_repo import write_fixture_repo

from coderooms.cli.mcp_cmds import _indexed, _workspace_factory
from coderooms.index.errors import IndexBusy
from coderooms.mcp.service import RoomService
from coderooms.store import open_store
from coderooms.workspace import Workspace

GOAL = "checkout charges the wrong amount after a coupon discount"


def prepared_then(
    tmp_path: Path, factory: Callable[[], Workspace], then: Callable[[RoomService], Any]
) -> Any:
    """A service over ``factory`` whose preparation has finished, handed to ``then``."""

    async def scenario() -> Any:
        store = open_store(f"sqlite:///{tmp_path / 'rooms.db'}")
        try:
            await store.add_agent("alice")
            service = RoomService(store, factory, offload=False)
            thread = service.prepare_workspace()
            assert thread is not None
            thread.join()
            return await then(service)
        finally:
            store.close()

    return asyncio.run(scenario())


def test_the_workspace_is_opened_once_off_the_calls_and_the_first_focus_uses_it(
    tmp_path: Path,
) -> None:
    repo = write_fixture_repo(tmp_path / "repo")
    opened: list[Workspace] = []

    def factory() -> Workspace:
        workspace = Workspace.open(repo)
        workspace.index()
        opened.append(workspace)
        return workspace

    async def first_focus(service: RoomService) -> dict[str, Any]:
        assert len(opened) == 1
        engine = opened[0].focus_engine()
        assert engine.index._spreading is not None  # the walk's matrix is worked out
        return await service.focus("alice", GOAL, "set", 300)

    answer = prepared_then(tmp_path, factory, first_focus)
    assert len(opened) == 1  # the focus found the prepared workspace
    assert any(item["id"] == "shop/cart.py::apply_discount" for item in answer["focus_set"])


def test_a_failed_preparation_keeps_nothing_and_the_first_focus_reports_it(
    tmp_path: Path,
) -> None:
    calls: list[int] = []

    def factory() -> Workspace:
        calls.append(1)
        raise IndexBusy(str(tmp_path / "index.db"))

    async def first_focus(service: RoomService) -> None:
        with pytest.raises(IndexBusy, match="another process is writing the index"):
            await service.focus("alice", GOAL, "set", 300)

    prepared_then(tmp_path, factory, first_focus)
    assert len(calls) == 2  # tried as the server started, and again by the call


def test_a_service_without_a_repository_has_nothing_to_prepare(tmp_path: Path) -> None:
    store = open_store(f"sqlite:///{tmp_path / 'rooms.db'}")
    try:
        assert RoomService(store).prepare_workspace() is None
    finally:
        store.close()


def test_only_a_repository_with_an_index_is_opened_as_the_server_starts(tmp_path: Path) -> None:
    repo = write_fixture_repo(tmp_path / "repo")
    db = str(tmp_path / "rooms.db")
    subprocess.run([CODEROOMS, "--db", db, "init"], check=True, capture_output=True)
    subprocess.run([CODEROOMS, "--db", db, "agent", "add", "alice"], check=True)
    assert not _indexed(repo)

    def serve_briefly() -> None:
        process = subprocess.Popen(
            [CODEROOMS, "--db", db, "mcp", "--agent", "alice", "--repo", str(repo)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        assert process.stdin is not None and process.stdout is not None
        process.stdin.write(wire_opening().encode())
        process.stdin.flush()
        json.loads(process.stdout.readline())  # initialized: the server is up
        time.sleep(0.5)  # no timing is judged: room for a preparation to start
        process.stdin.close()
        process.wait(timeout=60)

    serve_briefly()
    assert not _indexed(repo)  # never indexed: left to the first focus call
    assert not (repo / ".coderooms").exists()
    Workspace.open(repo).index()
    assert _indexed(repo)
    serve_briefly()  # opened as it starts; a hang-up meanwhile still ends the server


def test_a_servers_first_focus_on_a_repository_never_indexed_takes_the_cold_runs_work(
    tmp_path: Path,
) -> None:
    repo = write_fixture_repo(tmp_path / "repo")
    assert not _indexed(repo)
    workspace = _workspace_factory(repo, echo=False)()  # as a stdio server's first call
    try:
        engine = workspace.focus_engine()
        # The cold run made every document and embedding row as it parsed: the engine
        # counted and embedded nothing after it (it used to read and embed it all again).
        assert engine.index.fresh_work == 0
        assert engine.focus("price of an item", budget=400).packing.loaded
    finally:
        workspace.close()


def test_a_hang_up_while_the_engine_is_prepared_ends_cleanly_and_keeps_the_work(
    tmp_path: Path,
) -> None:
    """The client leaves before the server's preparation (here: indexing 300 edited
    files again) is done: the server lets that work end instead of having the
    interpreter's exit cut it off mid-call (an abort, or a half-started index worker's
    traceback), and what it made is kept for the next server."""
    repo = write_fixture_repo(tmp_path / "repo")
    for n in range(300):
        (repo / f"ledger_{n}.py").write_text(
            "".join(f"def total_{n}_{k}(rows):\n    return sum(rows) + {k}\n\n" for k in range(6))
        )
    Workspace.open(repo).index()
    for n in range(300):  # every ledger edited: the server's preparation indexes them again
        with (repo / f"ledger_{n}.py").open("a") as file:
            file.write("\n# edited\n")
    db = str(tmp_path / "rooms.db")
    subprocess.run([CODEROOMS, "--db", db, "init"], check=True, capture_output=True)
    subprocess.run([CODEROOMS, "--db", db, "agent", "add", "alice"], check=True)
    done = subprocess.run(
        [CODEROOMS, "--db", db, "mcp", "--agent", "alice", "--repo", str(repo)],
        input=wire_opening(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr and "FATAL" not in done.stderr
    assert json.loads(done.stdout.splitlines()[0])["result"]["serverInfo"]
    with Workspace.open(repo) as workspace:
        assert workspace.refresh() is False  # the edits were indexed before the server ended
