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

The same wrapper answers ``503`` when the store fails outside any tool, while a token is
checked: a shared room's database that cannot be reached.
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading
from collections.abc import Callable

from coderooms.mcp.asgi import App, Message, Receive, Scope, Send
from coderooms.store.errors import StoreError

__all__ = [
    "CUT_SHORT_CODE",
    "answer_503",
    "CUT_SHORT_MESSAGE",
    "CutShortLog",
    "answering_when_cut_short",
    "stop_waiting_soon",
    "store_failed",
]


CUT_SHORT_CODE = -32000
"""The JSON-RPC error code of a call the stopping server cut short (the range
-32000..-32099 is the implementation's own)."""
CUT_SHORT_MESSAGE = (
    "the server stopped while this call was still running; a write it made may or may "
    "not have been kept: read before sending it again (a post with an idempotency key "
    "can be sent again safely)"
)
LOGGER = "uvicorn.error"
"""Where `up` says what went wrong, in uvicorn's own format."""
UVICORN_CANCEL_PREFIX = "Cancel %s running task"
"""How uvicorn's own log line for the calls it cancels at the end of the grace begins."""


def answering_when_cut_short(app: App, mcp_path: str) -> App:
    """``app``, where a request cancelled before it answered (only a stopping server
        cancels one) is answered ``503``: a JSON-RPC error on ``mcp_path``, a line of text
        elsewhere. So is one whose store failed outside a tool (the database of a shared
        room gone while a token is checked), with the store's own words and one log line, not
        a 500 and a traceback. One cut short after its answer began (a page's event stream)
    ends quietly: it has nothing more to say."""

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
            if began:  # a stream cut at the stop: its answer is as long as it got
                return
            await answer_503(send, CUT_SHORT_MESSAGE, on_mcp=scope.get("path") == mcp_path)
        except StoreError as err:  # the store failed outside any tool (checking a token)
            if began:
                raise
            logging.getLogger(LOGGER).warning("%s: %s", type(err).__name__, err)
            await answer_503(
                send, f"{type(err).__name__}: {err}", on_mcp=scope.get("path") == mcp_path
            )

    return guarded


async def answer_503(send: Send, message: str, *, on_mcp: bool) -> None:
    """Answer ``503`` with ``message``: a JSON-RPC error (id null) ``on_mcp``, else a line
    of text."""
    if on_mcp:
        error = {"code": CUT_SHORT_CODE, "message": message}
        body = json.dumps({"jsonrpc": "2.0", "id": None, "error": error}).encode()
        kind = b"application/json"
    else:
        body = (message + "\n").encode()
        kind = b"text/plain; charset=utf-8"
    headers = [(b"content-type", kind), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": 503, "headers": headers})
    await send({"type": "http.response.body", "body": body})


async def store_failed(send: Send, err: StoreError, *, on_mcp: bool) -> None:
    """Answer ``503`` with the store's own words, and say them in one log line."""
    logging.getLogger(LOGGER).warning("%s: %s", type(err).__name__, err)
    await answer_503(send, f"{type(err).__name__}: {err}", on_mcp=on_mcp)


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
