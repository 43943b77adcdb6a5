"""Serving MCP over stdio: the SDK's server session on a transport this module owns.

The SDK's dispatcher reads and writes through two small stream protocols
(``ReadStream``, ``WriteStream``); here they are implemented on the process's own
descriptors, instead of the SDK's ``stdio_server``, for three reasons:

* **Speed.** A line is parsed once (the SDK would parse it twice over) and handed
  straight to the SDK's session, and an answer is serialised once and written by the
  task that made it: one hand-off between tasks fewer each way. When stdin and stdout are pipes (how every MCP client starts a server),
  lines move on the asyncio loop's own pipe transports; anything else (a file, a
  terminal, the null device: descriptors epoll cannot watch) is read and written on a
  worker thread.
* **Every request gets an answer.** A line that is not JSON, not a JSON-RPC 2.0
  message, longer than :data:`MAX_LINE_BYTES`, or holding bytes that are not UTF-8 or a
  lone UTF-16 surrogate (text no UTF-8 wire can carry) is answered here with the JSON-RPC error it earns (id null
  when it has none) and a one-line note on stderr; the SDK would drop it without a word.
* **Nothing is lost at the end of input.** A client may write its requests and close
  stdin before the answers come (``coderooms mcp < requests.jsonl``). The input ends
  only once every request read has been answered or cancelled (at most
  :data:`EOF_DRAIN_SECONDS`), so work already done is never left unreported.

As the SDK does, the real descriptors are moved aside while serving: fd 0 reads the null
device and fd 1 writes to stderr, so a stray ``print`` can never corrupt the wire.
"""

from __future__ import annotations

import asyncio
import json
import os
import stat
import sys
import threading
from collections import Counter, deque
from collections.abc import Awaitable, Callable
from contextlib import suppress
from typing import Any, BinaryIO, Self

import anyio
import anyio.from_thread
import anyio.lowlevel
import anyio.to_thread
from mcp.server.mcpserver import MCPServer
from mcp.shared.dispatcher import as_request_id, coerce_request_id
from mcp.shared.message import SessionMessage
from mcp_types import (
    INVALID_PARAMS,
    INVALID_REQUEST,
    PARSE_ERROR,
    JSONRPCError,
    JSONRPCMessage,
    JSONRPCNotification,
    JSONRPCRequest,
    JSONRPCResponse,
    RequestId,
    jsonrpc_message_adapter,
)
from pydantic import ValidationError
from pydantic_core import PydanticSerializationError

from coderooms.mcp.errors import StdioClosed, StdioOutputFailed
from coderooms.mcp.wirechecks import lone_surrogate_at, not_unicode, readable_id

__all__ = ["EOF_DRAIN_SECONDS", "MAX_LINE_BYTES", "check_stdio", "serve_stdio"]

MAX_LINE_BYTES = 64 * 1024 * 1024
"""The longest JSON-RPC line accepted from the client (a message is one line)."""

EOF_DRAIN_SECONDS = 300.0
"""How long the input stays open after stdin ends, for requests still being answered."""

NOTE_PREFIX = "coderooms mcp: "

BOM = "\ufeff"
"""A byte order mark: some Windows tools put one before the first line (RFC 8259 lets a
parser ignore it, and it is never valid JSON)."""

_OVERLONG = object()  # a line longer than MAX_LINE_BYTES, skipped up to its newline


def check_stdio() -> None:
    """Refuse to serve when stdin or stdout is closed: there would be no wire."""
    for fd, stream in ((0, "input"), (1, "output")):
        try:
            os.fstat(fd)
        except OSError:
            raise StdioClosed(stream) from None


def _is_pipe(fd: int) -> bool:
    """A FIFO or a socket: what the loop's pipe transports can watch. (They also take
    character devices, but epoll refuses ``/dev/null`` and would never see its end.)"""
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


def _key(request_id: object) -> RequestId | None:
    """The id the SDK's dispatcher files a request under ("7" and 7 are one id there, so
    a cancel naming either settles it), or None when it is no request id at all."""
    narrowed = as_request_id(request_id)
    return None if narrowed is None else coerce_request_id(narrowed)


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _note(message: str) -> None:
    """One line on stderr, if there is one: a closed or broken stderr (``sys.stderr`` is
    None when fd 2 was closed at start) must not end the server."""
    if sys.stderr is None:
        return
    with suppress(OSError, ValueError):
        sys.stderr.write(f"{NOTE_PREFIX}{message}\n")
        sys.stderr.flush()


class _Wire:
    """What the reader and the writer share: the sink, and the requests not yet answered."""

    def __init__(self, write: Callable[[bytes], Awaitable[None]]) -> None:
        self._write = write
        self._lock = anyio.Lock()
        self.pending: Counter[RequestId] = Counter()  # an id sent twice is awaited twice
        self._settled = anyio.Event()  # no request is waiting, or the client is gone
        self._waiting = False
        self.closed = False
        self.failure: StdioOutputFailed | None = None  # why the output broke, if it did

    async def send(self, data: bytes) -> None:
        """Write one line; a client that hung up only ends the output."""
        if self.closed:
            return
        async with self._lock:
            try:
                await self._write(data)
            except (BrokenPipeError, ConnectionResetError):
                self._close()
            except OSError as exc:  # a full disk, a vanished terminal: no wire left either
                self.failure = StdioOutputFailed(exc.strerror or str(exc))
                self._close()

    def _close(self) -> None:
        self.closed = True
        self._settled.set()

    def opened(self, request_id: RequestId) -> None:
        """A request was read; it is pending until answered or cancelled."""
        key = _key(request_id)
        if key is not None:
            self.pending[key] += 1

    def done(self, request_id: object) -> None:
        """A request was answered or cancelled: one fewer is pending under its id."""
        key = _key(request_id)
        if key is not None and key in self.pending:
            self.pending[key] -= 1
            if self.pending[key] <= 0:
                del self.pending[key]
        self._check()

    def _check(self) -> None:
        if self._waiting and not self.pending:
            self._settled.set()

    async def settle(self) -> None:
        """Return once every request read is answered (or the wait runs out)."""
        self._waiting = True
        self._check()
        if self.pending and not self.closed:
            with anyio.move_on_after(EOF_DRAIN_SECONDS):
                await self._settled.wait()

    async def refuse(self, request_id: object, code: int, message: str) -> None:
        """Answer a line the SDK would drop, and say so on stderr."""
        _note(message)
        error = {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}
        await self.send(json.dumps(error, separators=(",", ":")).encode() + b"\n")


class _StreamEnd:
    """What the SDK's stream protocols ask beyond reading or writing: nothing to close
    here (the descriptors belong to :func:`serve_stdio`)."""

    async def aclose(self) -> None:
        return None

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        return None


class _Inbound(_StreamEnd):
    """The server's read stream (the SDK's ``ReadStream``): one message per line, parsed
    once, on the task that dispatches it; every line the SDK would drop is answered here."""

    def __init__(self, readline: Callable[[], Awaitable[object]], wire: _Wire) -> None:
        self._readline = readline
        self._wire = wire

    async def receive(self) -> SessionMessage:
        while True:
            raw = await self._readline()
            if raw is _OVERLONG:
                await self._wire.refuse(
                    None,
                    INVALID_REQUEST,
                    f"Invalid Request: a line of more than {MAX_LINE_BYTES} bytes",
                )
                continue
            assert isinstance(raw, bytes)
            if not raw or self._wire.closed:
                await self._wire.settle()
                raise anyio.EndOfStream
            # bytes that are not UTF-8 become lone surrogates, refused by _diagnose naming
            # where they are: text is never stored with U+FFFD in place of what was sent
            message = await self._admit(raw.decode("utf-8", "surrogateescape"))
            if message is not None:
                return SessionMessage(message)

    async def _admit(self, line: str) -> JSONRPCMessage | None:
        """The message on ``line``, or None when the line was answered here instead."""
        line = line.removeprefix(BOM)
        if not line.strip():
            return None
        message: JSONRPCMessage | None
        try:
            message = jsonrpc_message_adapter.validate_json(line, by_name=False)
        except ValidationError:
            message = await self._diagnose(line)
            if message is None:
                return None
        if isinstance(message, JSONRPCNotification) and '"id"' in line and _has_id(line):
            # the SDK's models read {"id": null | true | 1.5 | {...}, "method": ...} as a
            # notification, which is never answered: it is a request with a bad id
            await self._wire.refuse(
                readable_id(json.loads(line)),
                INVALID_REQUEST,
                "Invalid Request: an id must be a string or an integer",
            )
            return None
        if isinstance(message, JSONRPCRequest):
            self._wire.opened(message.id)
        elif isinstance(message, JSONRPCNotification) and (
            message.method == "notifications/cancelled"
        ):
            self._wire.done((message.params or {}).get("requestId"))
        return message

    async def _diagnose(self, line: str) -> JSONRPCMessage | None:
        """Why a line failed the fast parse, answered; or its message, when only the fast
        parse objected to it."""
        try:
            raw = json.loads(line)
        except ValueError as exc:
            await self._wire.refuse(None, PARSE_ERROR, f"Parse error: {exc}")
            return None
        except RecursionError:
            await self._wire.refuse(None, PARSE_ERROR, "Parse error: nested too deeply")
            return None
        request_id = readable_id(raw)
        where = lone_surrogate_at(raw)
        if where is not None:
            await self._wire.refuse(request_id, INVALID_PARAMS, not_unicode(_one_line(where)))
            return None
        try:
            message: JSONRPCMessage = jsonrpc_message_adapter.validate_python(raw, by_name=False)
        except ValidationError:
            await self._wire.refuse(
                request_id, INVALID_REQUEST, "Invalid Request: not a JSON-RPC 2.0 message"
            )
            return None
        return message

    def __aiter__(self) -> _Inbound:
        return self

    async def __anext__(self) -> SessionMessage:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None


def _has_id(line: str) -> bool:
    """Whether the JSON object on ``line`` has an ``id`` member (whatever its value)."""
    try:
        raw = json.loads(line)
    except (ValueError, RecursionError):
        return False
    return isinstance(raw, dict) and "id" in raw


def _serialise(message: JSONRPCMessage) -> bytes:
    """``message`` as one line of UTF-8 JSON, as the SDK spells it. Text that UTF-8
    cannot carry (a lone surrogate, say from a file name that is not UTF-8) is replaced,
    not allowed to end the server."""
    try:
        return message.__pydantic_serializer__.to_json(message, by_alias=True, exclude_unset=True)
    except PydanticSerializationError:
        plain = message.model_dump(mode="json", by_alias=True, exclude_unset=True)
        text = json.dumps(plain, ensure_ascii=False, separators=(",", ":"))
        return text.encode("utf-8", "replace")


class _Outbound(_StreamEnd):
    """The server's write stream (the SDK's ``WriteStream``): each message serialised
    once and written by the task that sends it."""

    def __init__(self, wire: _Wire) -> None:
        self._wire = wire

    async def send(self, item: SessionMessage, /) -> None:
        message = item.message
        await self._wire.send(_serialise(message) + b"\n")
        if isinstance(message, JSONRPCResponse | JSONRPCError):
            self._wire.done(message.id)


def _divert() -> tuple[int, int]:
    """Private copies of fds 0 and 1; the originals now read /dev/null and write stderr."""
    wire_in = os.dup(0)
    wire_out = os.dup(1)
    null = os.open(os.devnull, os.O_RDONLY)
    try:
        os.dup2(null, 0)
    finally:
        os.close(null)
    os.dup2(2, 1)
    return wire_in, wire_out


def _restore(wire_in: int, wire_out: int) -> None:
    with suppress(OSError):
        os.dup2(wire_in, 0)
    with suppress(OSError):
        os.dup2(wire_out, 1)


async def _skip_overlong_pipe(reader: asyncio.StreamReader) -> object:
    """Read past the rest of a line that overran the reader's limit."""
    while True:
        try:
            await reader.readuntil(b"\n")
            return _OVERLONG
        except asyncio.IncompleteReadError:
            return _OVERLONG
        except asyncio.LimitOverrunError as exc:
            await reader.readexactly(max(exc.consumed, 1))


async def _pipe_ends(
    wire_in: int, wire_out: int
) -> tuple[Callable[[], Awaitable[object]], Callable[[bytes], Awaitable[None]], list[Any]]:
    """Line reads and writes on the loop's pipe transports."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=MAX_LINE_BYTES)
    source = os.fdopen(wire_in, "rb", buffering=0, closefd=False)
    sink = os.fdopen(wire_out, "wb", buffering=0, closefd=False)
    read_transport, _ = await loop.connect_read_pipe(
        lambda: asyncio.StreamReaderProtocol(reader), source
    )
    transport, protocol = await loop.connect_write_pipe(asyncio.streams.FlowControlMixin, sink)
    # drain() returns only once the whole answer is in the pipe: an answer counts as sent
    # when it is, and nothing is left in a buffer the loop drops when serving ends
    transport.set_write_buffer_limits(high=0)
    writer = asyncio.StreamWriter(transport, protocol, None, loop)

    async def readline() -> object:
        try:
            return await reader.readuntil(b"\n")
        except asyncio.IncompleteReadError as exc:
            return exc.partial  # the end of input (b"") or a last line without a newline
        except asyncio.LimitOverrunError:
            return await _skip_overlong_pipe(reader)  # the line is still in the buffer

    async def write(data: bytes) -> None:
        writer.write(data)
        await writer.drain()

    return readline, write, [read_transport, transport]


def _thread_ends(
    wire_in: int, wire_out: int
) -> tuple[Callable[[], Awaitable[object]], Callable[[bytes], Awaitable[None]], list[Any]]:
    """Line reads and writes on a worker thread (files, terminals, the null device)."""
    source: BinaryIO = os.fdopen(wire_in, "rb", closefd=False)
    sink: BinaryIO = os.fdopen(wire_out, "wb", buffering=0, closefd=False)

    def read_line() -> object:
        line = source.readline(MAX_LINE_BYTES + 1)
        if len(line) <= MAX_LINE_BYTES or line.endswith(b"\n"):
            return line
        while line and not line.endswith(b"\n"):
            line = source.readline(MAX_LINE_BYTES)
        return _OVERLONG

    def write_all(data: bytes) -> None:
        view = memoryview(data)
        while view:
            view = view[sink.write(view) or 0 :]

    async def write(data: bytes) -> None:
        await anyio.to_thread.run_sync(write_all, data)

    return _LineReader(read_line).readline, write, []


class _LineReader:
    """Lines read on request by one daemon thread of its own, started by the first read.

    Not one of anyio's workers: a read blocked on a terminal cannot be interrupted, and
    the interpreter waits at exit for every worker thread, so a stopped server would
    wait for a line that may never come. The thread reads a line only when one is asked
    for, as a thread started per line did, without starting a thread per line."""

    def __init__(self, read_line: Callable[[], object]) -> None:
        self._read_line = read_line
        self._asked = threading.Semaphore(0)
        self._requests: deque[tuple[anyio.lowlevel.EventLoopToken, anyio.Event, list[object]]] = (
            deque()
        )
        self._thread: threading.Thread | None = None

    async def readline(self) -> object:
        done = anyio.Event()
        outcome: list[object] = []
        self._requests.append((anyio.lowlevel.current_token(), done, outcome))
        if self._thread is None:
            self._thread = threading.Thread(target=self._serve, name="coderooms-stdin", daemon=True)
            self._thread.start()
        self._asked.release()
        await done.wait()
        if isinstance(outcome[0], BaseException):
            raise outcome[0]
        return outcome[0]

    def _serve(self) -> None:
        while True:
            self._asked.acquire()
            token, done, outcome = self._requests.popleft()
            try:
                outcome.append(self._read_line())
            except BaseException as exc:  # handed to the task that asked
                outcome.append(exc)
            with suppress(RuntimeError):  # the loop is gone: nobody waits any more
                anyio.from_thread.run_sync(done.set, token=token)


async def serve_stdio(server: MCPServer) -> None:
    """Serve ``server`` on this process's stdin and stdout until the client hangs up."""
    check_stdio()
    wire_in, wire_out = _divert()
    blocking = {fd: os.get_blocking(fd) for fd in (wire_in, wire_out)}
    transports: list[Any] = []
    try:
        if _is_pipe(wire_in) and _is_pipe(wire_out):
            readline, write, transports = await _pipe_ends(wire_in, wire_out)
        else:
            readline, write, transports = _thread_ends(wire_in, wire_out)
        wire = _Wire(write)
        lowlevel = server._lowlevel_server  # the SDK's own run_stdio_async does the same
        await lowlevel.run(
            _Inbound(readline, wire), _Outbound(wire), lowlevel.create_initialization_options()
        )
        if wire.failure is not None:
            raise wire.failure
    finally:
        for transport in transports:
            transport.close()
        for fd, mode in blocking.items():  # the pipe transports made them non-blocking,
            with suppress(OSError):  # for every process sharing them
                os.set_blocking(fd, mode)
        _restore(wire_in, wire_out)
        for fd in (wire_in, wire_out):
            with suppress(OSError):
                os.close(fd)
