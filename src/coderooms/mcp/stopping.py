"""How ``coderooms up`` ends the calls still running when it is told to stop.

On Ctrl-C or SIGTERM uvicorn stops taking connections and gives the calls in flight
:data:`~coderooms.cli.mcp_cmds.GRACEFUL_SHUTDOWN_S` to finish, then cancels the rest.
Two things make that end clean:

- A write waiting for another writer's lock does not wait out the store's timeout: the
  stop tells the store to stop waiting (:meth:`~coderooms.store.base.Store.stop_waiting`),
  and the call answers at once with the typed ``StoreStopping`` (nothing written).
- A call still running when the grace runs out (a long focus, say) is answered ``503``
  with a JSON-RPC error saying the server stopped (:func:`answering_when_cut_short`), and
  the log says so in one line (:class:`CutShortLog`), where uvicorn would answer ``500``
  and log the cancellation's traceback.
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading
from collections.abc import Callable

from coderooms.mcp.asgi import App, Message, Receive, Scope, Send

__all__ = [
    "CUT_SHORT_CODE",
    "CUT_SHORT_MESSAGE",
    "CutShortLog",
    "answering_when_cut_short",
    "stop_waiting_soon",
]


CUT_SHORT_CODE = -32000
"""The JSON-RPC error code of a call the stopping server cut short (the range
-32000..-32099 is the implementation's own)."""
CUT_SHORT_MESSAGE = (
    "the server stopped while this call was still running; a write it made may or may "
    "not have been kept: read before sending it again (a post with an idempotency key "
    "can be sent again safely)"
)
UVICORN_CANCEL_PREFIX = "Cancel %s running task"
"""How uvicorn's own log line for the calls it cancels at the end of the grace begins."""


def answering_when_cut_short(app: App, mcp_path: str) -> App:
    """``app``, where a request cancelled before it answered (only a stopping server
    cancels one) is answered ``503``: a JSON-RPC error on ``mcp_path``, a line of text
    elsewhere. One cancelled after its answer began has nothing more to say."""

    async def guarded(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await app(scope, receive, send)
            return
        began = False

        async def sending(message: Message) -> None:
            nonlocal began
            if message["type"] == "http.response.start":
                began = True
            await send(message)

        try:
            await app(scope, receive, sending)
        except asyncio.CancelledError:
            if began:
                raise
            await _answer_cut_short(send, on_mcp=scope.get("path") == mcp_path)

    return guarded


async def _answer_cut_short(send: Send, *, on_mcp: bool) -> None:
    if on_mcp:
        error = {"code": CUT_SHORT_CODE, "message": CUT_SHORT_MESSAGE}
        body = json.dumps({"jsonrpc": "2.0", "id": None, "error": error}).encode()
        kind = b"application/json"
    else:
        body = (CUT_SHORT_MESSAGE + "\n").encode()
        kind = b"text/plain; charset=utf-8"
    headers = [(b"content-type", kind), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": 503, "headers": headers})
    await send({"type": "http.response.body", "body": body})


class CutShortLog(logging.Filter):
    """Turns uvicorn's "Cancel N running task(s), timeout graceful shutdown exceeded"
    into a line that says what it means for the clients; other records pass as they
    are."""

    def __init__(self, grace_s: float) -> None:
        super().__init__()
        self.grace_s = grace_s

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.msg, str) and record.msg.startswith(UVICORN_CANCEL_PREFIX):
            count = record.args[0] if isinstance(record.args, tuple) and record.args else "?"
            record.msg = (
                "stopping: %s call(s) still running after %g s were cut short; "
                "their clients were told the server stopped"
            )
            record.args = (count, self.grace_s)
            record.levelno, record.levelname = logging.WARNING, "WARNING"
        return True


def stop_waiting_soon(stop_waiting: Callable[[], None]) -> None:
    """Run ``stop_waiting`` on a thread of its own: a signal handler calls this on the
    event loop's thread, and telling a database server to cancel a wait is I/O."""
    threading.Thread(target=stop_waiting, name="coderooms-stop-waiting", daemon=True).start()
