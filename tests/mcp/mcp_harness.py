"""MCP client sessions held open on a background event loop, so tests stay synchronous.

Each session is opened once per test module (servers are real subprocesses), and a
test calls a tool with ``sessions.call(name, tool, arguments)``. Tests that speak the
stdio wire themselves build their lines with ``wire_opening`` and ``wire_call``.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import AsyncExitStack, contextmanager
from pathlib import Path
from typing import Any

from mcp_types import CallToolResult, ListToolsResult

from coderooms.store import open_store
from mcp import Client

CALL_TIMEOUT_S = 120.0
"""Generous: the machine is shared and a first focus call may index the repository."""

BIN = Path(sys.executable).parent
CODEROOMS = str(BIN / "coderooms")

ClientFactory = Callable[[], Client]


@contextmanager
def serving_up(db: str, repo: Path, cwd: Path) -> Iterator[subprocess.Popen[str]]:
    """``coderooms up`` on ``db`` for ``repo``, on a free port, its banner readable from
    its stdout; stopped with SIGTERM (and waited for) on leaving."""
    process = subprocess.Popen(
        [CODEROOMS, "--db", db, "up", "--port", "0", "--repo", str(repo)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        stdin=subprocess.DEVNULL,
        text=True,
        cwd=cwd,
    )
    try:
        assert process.stdout is not None
        yield process
    finally:
        process.terminate()
        process.wait(CALL_TIMEOUT_S)


class Sessions:
    def __init__(self, factories: dict[str, ClientFactory]) -> None:
        self._factories = factories
        self._clients: dict[str, Client] = {}
        self._loop: asyncio.AbstractEventLoop | None = None
        self._ready = threading.Event()
        self._failure: BaseException | None = None
        self._stop: asyncio.Event | None = None
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> Sessions:
        self._thread.start()
        self._ready.wait(CALL_TIMEOUT_S)
        if self._failure is not None:
            raise self._failure
        if not self._ready.is_set():
            raise TimeoutError("MCP sessions did not open")
        return self

    def __exit__(self, *_: object) -> None:
        if self._loop is not None and self._stop is not None:
            self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(CALL_TIMEOUT_S)

    def _run(self) -> None:
        try:
            asyncio.run(self._main())
        except BaseException as exc:  # surfaced to the test that opened the sessions
            self._failure = exc
            self._ready.set()

    async def _main(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._stop = asyncio.Event()
        async with AsyncExitStack() as stack:
            for name, factory in self._factories.items():
                self._clients[name] = await stack.enter_async_context(factory())
            self._ready.set()
            await self._stop.wait()

    def _submit(self, coroutine: Any) -> Any:
        assert self._loop is not None
        return asyncio.run_coroutine_threadsafe(coroutine, self._loop).result(CALL_TIMEOUT_S)

    def call(self, name: str, tool: str, arguments: dict[str, Any] | None = None) -> CallToolResult:
        result: CallToolResult = self._submit(self._clients[name].call_tool(tool, arguments or {}))
        return result

    def tools(self, name: str) -> ListToolsResult:
        result: ListToolsResult = self._submit(self._clients[name].list_tools())
        return result


def text_of(result: CallToolResult) -> str:
    """The readable text of a result (its one text block)."""
    (block,) = result.content
    text: str = block.text  # type: ignore[union-attr]
    return text


def ok(result: CallToolResult) -> dict[str, Any]:
    """The structured content of a successful result."""
    assert not result.is_error, text_of(result)
    assert result.structured_content is not None
    return result.structured_content


def agent_token(db: str, agent: str) -> str:
    """A fresh HTTP token for ``agent``, issued by the command line."""
    done = subprocess.run(
        [CODEROOMS, "--db", db, "agent", "token", agent],
        capture_output=True,
        text=True,
        check=True,
        timeout=CALL_TIMEOUT_S,
    )
    return done.stdout.strip()


# --- raw JSON-RPC lines for stdio wire tests ---------------------------------------------


def wire_line(message: dict[str, Any]) -> str:
    """One JSON-RPC message as the line a stdio client writes."""
    return json.dumps(message) + "\n"


def wire_opening(client: str = "test") -> str:
    """The lines that open an MCP session: ``initialize`` (id 0), then ``initialized``."""
    return wire_line(
        {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": client, "version": "1"},
            },
        }
    ) + wire_line({"jsonrpc": "2.0", "method": "notifications/initialized"})


def wire_call(request_id: object, tool: str, arguments: dict[str, Any]) -> str:
    """A ``tools/call`` line."""
    return wire_line(
        {
            "jsonrpc": "2.0",
            "id": request_id,
            "method": "tools/call",
            "params": {"name": tool, "arguments": arguments},
        }
    )


def store_with_agents(url: str, *agents: str) -> str:
    """Create the store at ``url`` with ``agents`` on its roster; returns ``url``."""

    async def build() -> None:
        store = open_store(url)
        try:
            for agent in agents:
                await store.add_agent(agent)
        finally:
            store.close()

    asyncio.run(build())
    return url
