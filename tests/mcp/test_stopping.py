"""A call `up` cuts short when its stop's grace runs out: answered 503 with a JSON-RPC
error (text off the MCP path), and one log line instead of uvicorn's traceback."""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

from coderooms.mcp.stopping import (
    CUT_SHORT_CODE,
    CUT_SHORT_MESSAGE,
    CutShortLog,
    answering_when_cut_short,
)

MCP = "/mcp"


async def _cut_short(app: Any, path: str) -> list[dict[str, Any]]:
    """Run ``app`` for a request to ``path``, cancel it as uvicorn does at the end of
    the grace, and return what it sent."""
    sent: list[dict[str, Any]] = []
    running = asyncio.Event()

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"{}", "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    async def slow(scope: Any, receive: Any, send: Any) -> None:
        running.set()
        await asyncio.sleep(3600)

    scope = {"type": "http", "path": path, "method": "POST"}
    task = asyncio.create_task(answering_when_cut_short(app or slow, MCP)(scope, receive, send))
    if app is None:
        await running.wait()
    else:
        await asyncio.sleep(0.05)
    task.cancel(msg="Task cancelled, timeout graceful shutdown exceeded")
    try:
        await task
    except asyncio.CancelledError:
        sent.append({"type": "cancelled"})
    return sent


async def test_an_mcp_call_cut_short_is_a_503_json_rpc_error() -> None:
    sent = await _cut_short(None, MCP)
    head, body = sent
    assert head["status"] == 503
    assert dict(head["headers"])[b"content-type"] == b"application/json"
    answer = json.loads(body["body"])
    assert answer == {
        "jsonrpc": "2.0",
        "id": None,
        "error": {"code": CUT_SHORT_CODE, "message": CUT_SHORT_MESSAGE},
    }
    assert int(dict(head["headers"])[b"content-length"]) == len(body["body"])


async def test_a_web_page_cut_short_is_a_503_line_of_text() -> None:
    head, body = await _cut_short(None, "/desks/general")
    assert head["status"] == 503
    assert body["body"].decode() == CUT_SHORT_MESSAGE + "\n"


async def test_a_stream_cut_short_after_its_answer_began_ends_quietly() -> None:
    # a page's event stream at the stop: uvicorn logged a traceback for each open page
    async def begun(scope: Any, receive: Any, send: Any) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await asyncio.sleep(3600)

    sent = await _cut_short(begun, MCP)
    assert [m["type"] for m in sent] == ["http.response.start"]


def test_uvicorns_cancel_line_is_told_in_words_of_the_clients() -> None:
    record = logging.LogRecord(
        "uvicorn.error",
        logging.ERROR,
        __file__,
        1,
        "Cancel %s running task(s), timeout graceful shutdown exceeded",
        (2,),
        None,
    )
    assert CutShortLog(5.0).filter(record)
    assert record.getMessage() == (
        "stopping: 2 call(s) still running after 5 s were cut short; "
        "their clients were told the server stopped"
    )
    assert record.levelname == "WARNING"
    other = logging.LogRecord("uvicorn.error", logging.ERROR, __file__, 1, "other", (), None)
    assert CutShortLog(5.0).filter(other)
    assert other.getMessage() == "other"


async def test_a_store_failing_outside_a_tool_is_a_503_saying_so_not_a_traceback(
    caplog: Any,
) -> None:
    # a shared room's database down while `up` checks a token: every request was a 500
    # with a traceback on the server's stderr
    from coderooms.store.errors import StoreUnavailable

    async def checking_token(scope: Any, receive: Any, send: Any) -> None:
        raise StoreUnavailable("postgresql://db/rooms", "connection refused")

    sent: list[dict[str, Any]] = []

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"{}", "more_body": False}

    app = answering_when_cut_short(checking_token, MCP)
    with caplog.at_level(logging.WARNING, logger="uvicorn.error"):
        await app({"type": "http", "path": MCP, "method": "POST"}, receive, send)
    head, body = sent
    assert head["status"] == 503
    error = json.loads(body["body"])["error"]
    assert error["message"].startswith("StoreUnavailable: cannot reach the store at")
    assert [r.getMessage() for r in caplog.records] == [error["message"]]
    assert all(r.exc_info is None for r in caplog.records)


async def test_a_token_check_that_cannot_reach_the_store_is_a_503_before_the_sdk() -> None:
    # inside the SDK a store failing during the token check was a 500 and a traceback
    from coderooms.mcp.tokens import tokens_checked_first
    from coderooms.store.errors import StoreUnavailable

    class Down:
        async def verify_token(self, token: str) -> None:
            raise StoreUnavailable("postgresql://db/rooms", "connection refused")

    reached: list[str] = []

    async def sdk(scope: Any, receive: Any, send: Any) -> None:
        reached.append(scope["path"])

    sent: list[dict[str, Any]] = []

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"{}", "more_body": False}

    app = tokens_checked_first(sdk, Down())  # type: ignore[arg-type]
    scope = {"type": "http", "path": MCP, "method": "POST"}
    await app({**scope, "headers": [(b"authorization", b"Bearer crt_x")]}, receive, send)
    assert sent[0]["status"] == 503 and not reached
    assert b"cannot reach the store" in sent[1]["body"]
    await app({**scope, "headers": []}, receive, send)  # no token: the SDK says 401
    assert reached == [MCP]
