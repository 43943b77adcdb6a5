"""Serving MCP over stdio on the event loop's own pipe transports.

The SDK's default stdio transport reads and writes through a worker thread, which costs
a thread hand-off per line each way; on a busy machine that is most of a tool call. When
stdin and stdout are pipes (how every MCP client starts a server), this module hands the
SDK's ``stdio_server`` non-blocking line streams on the asyncio loop instead. Anything
else (a file, a terminal, the null device: descriptors epoll cannot watch, or need not)
falls back to the SDK's transport.

As the SDK does, the real descriptors are moved aside while serving: fd 0 reads the null
device and fd 1 writes to stderr, so a stray ``print`` can never corrupt the wire.
"""

from __future__ import annotations

import asyncio
import os
import stat
from collections.abc import AsyncIterator
from contextlib import suppress
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.server.stdio import stdio_server

__all__ = ["MAX_LINE_BYTES", "serve_stdio"]

MAX_LINE_BYTES = 64 * 1024 * 1024
"""The longest JSON-RPC line accepted from the client (a message is one line)."""


class _LineReader:
    """Async iteration over decoded lines, as ``stdio_server`` reads its stdin."""

    def __init__(self, reader: asyncio.StreamReader) -> None:
        self._reader = reader

    def __aiter__(self) -> AsyncIterator[str]:
        return self

    async def __anext__(self) -> str:
        line = await self._reader.readline()
        if not line:
            raise StopAsyncIteration
        return line.decode("utf-8", "replace")


class _LineWriter:
    """``write`` and ``flush``, as ``stdio_server`` writes its stdout."""

    def __init__(self, writer: asyncio.StreamWriter) -> None:
        self._writer = writer

    async def write(self, text: str) -> None:
        self._writer.write(text.encode("utf-8"))

    async def flush(self) -> None:
        await self._writer.drain()


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


def _is_pipe(fd: int) -> bool:
    """A FIFO or a socket: what the loop's pipe transports can watch. (They also take
    character devices, but epoll refuses ``/dev/null`` and the server would never see
    its end of input.)"""
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


async def _pipes(wire_in: int, wire_out: int) -> tuple[_LineReader, _LineWriter, Any] | None:
    if not (_is_pipe(wire_in) and _is_pipe(wire_out)):
        return None
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=MAX_LINE_BYTES)
    source = os.fdopen(wire_in, "rb", buffering=0, closefd=False)
    sink = os.fdopen(wire_out, "wb", buffering=0, closefd=False)
    try:
        read_transport, _ = await loop.connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(reader), source
        )
    except ValueError:  # not a pipe, socket or character device
        return None
    try:
        transport, protocol = await loop.connect_write_pipe(asyncio.streams.FlowControlMixin, sink)
    except ValueError:
        read_transport.close()
        return None
    writer = asyncio.StreamWriter(transport, protocol, None, loop)
    return _LineReader(reader), _LineWriter(writer), (read_transport, transport)


async def serve_stdio(server: MCPServer) -> None:
    """Serve ``server`` on this process's stdin and stdout until the client hangs up."""
    wire_in, wire_out = _divert()
    try:
        streams = await _pipes(wire_in, wire_out)
        if streams is None:
            _restore(wire_in, wire_out)
            await server.run_stdio_async()
            return
        lines_in, lines_out, transports = streams
        lowlevel = server._lowlevel_server  # the SDK's own run_stdio_async does the same
        try:
            async with stdio_server(stdin=lines_in, stdout=lines_out) as (read, write):  # type: ignore[arg-type]
                await lowlevel.run(read, write, lowlevel.create_initialization_options())
        finally:
            for transport in transports:
                transport.close()
    finally:
        _restore(wire_in, wire_out)
        for fd in (wire_in, wire_out):
            with suppress(OSError):
                os.close(fd)
