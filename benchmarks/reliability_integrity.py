"""Reliability (issue 17), the integrity half: what survives contention, SIGKILL,
hostile MCP input, hostile message texts and a hostile source tree.

One command::

    .venv/bin/python benchmarks/reliability_integrity.py [--quick]

Five rows, every target 0:

1. **Writers × posts.** ``WRITERS`` processes each post ``POSTS_PER_WRITER`` messages into
   one SQLite store through the library (``SQLiteStore.post``). Counted: posts lost,
   duplicated, or out of their writer's order; rows whose sequence does not strictly
   increase in storage order; acknowledged sequences holding another post; and
   ``PRAGMA integrity_check``. Posts/s beside it.
2. **kill -9 rounds.** A writer prints each acknowledged sequence; it is killed with
   SIGKILL at a seeded random moment, ``KILL_ROUNDS`` times. Counted: acknowledged posts
   missing (or changed) after reopening the store.
3. **Generated MCP requests over stdio** against ``coderooms mcp``: malformed JSON-RPC,
   wrong types, unknown tools, a 10 MB payload, deep nesting, invalid UTF-8 bytes, an
   adversarial regex on long text, out-of-range numbers, 10 MB desk, author and tool
   names. Counted: crashes (the server died), hangs (no answer within
   ``ANSWER_TIMEOUT_S``), tracebacks on the wire or stderr, internal or untyped errors,
   and refusals over ``REFUSAL_CAP_BYTES`` (an input echoed back). A skim of 10 MB of
   test log is timed on its own: its cost is linear in the text, so it is a figure, not
   a hang.
4. **Generated message texts through the library** (post, read, search, pins of the MCP
   service): random unicode, control characters, huge lines, mentions, ``!pin`` lines.
   Counted: untyped errors (anything not a ``CoderoomsError``) and round-trip mismatches
   (the stored content, and the row through its wire form as JSON).
5. **A hostile tree** for ``coderooms index`` and ``coderooms focus``: symlinks out of the
   root, a 50 MB file, binary files, invalid UTF-8 source, 200-deep directories, a FIFO,
   a file name that is not UTF-8. Counted: crashes, tracebacks, hangs; the index's own
   skip summary is shown.

``run(quick)`` returns the rows as (measurement, measured, target) for
``benchmarks/reliability.py``; ``main()`` prints them as one table. A progress line per
phase goes to stderr.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import os
import queue
import random
import re
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from coderooms.errors import CoderoomsError
from coderooms.mcp.service import RoomService
from coderooms.rooms.records import LogMessage
from coderooms.rooms.wire import from_wire, to_wire
from coderooms.store.sqlite import SQLiteStore

SEED = 20_261_201

WRITERS, POSTS_PER_WRITER = 8, 2_000
QUICK_WRITERS, QUICK_POSTS_PER_WRITER = 4, 200
WRITER_START_S = 1.0
"""Time every writer gets to import and open the store before the clock starts."""
WRITERS_TIMEOUT_S = 240.0

KILL_ROUNDS, QUICK_KILL_ROUNDS = 30, 5
KILL_MAX_DELAY_S = 0.5
"""The kill lands at a uniform moment in [0, this) after the writer's first ack."""
KILL_FIRST_ACK_TIMEOUT_S = 60.0

MCP_REQUESTS, QUICK_MCP_REQUESTS = 300, 60
ANSWER_TIMEOUT_S = 5.0
"""A request not answered within this is a hang."""
LATE_ANSWER_S = 60.0
"""How long a hung request's late answer is waited for before the server is restarted."""
WARMUP_TIMEOUT_S = 120.0
"""The first focus call indexes the (tiny) working directory and loads the model."""
BIG_PAYLOAD_BYTES = 10 * 1024 * 1024
DEEP_NESTING = 100_000
REFUSAL_CAP_BYTES = 64 * 1024
"""A refusal longer than this repeats its input instead of naming it."""
SKIM_LOG_LINE = "FAILED tests/test_app.py::test_retry[%d] - AssertionError: backoff\n"
ADVERSARIAL_REGEX = "/(a+)+$/"
ADVERSARIAL_TEXT_CHARS = 200_000

TEXTS, QUICK_TEXTS = 400, 80
HUGE_LINE_CHARS = 300_000
SURROGATE_SHARE = 0.05
"""Share of texts holding one lone surrogate (text no store can keep: refused, typed)."""

HOSTILE_BIG_FILE_BYTES = 50 * 1024 * 1024
HOSTILE_DEPTH = 200
HOSTILE_BINARY_FILES = 5
HOSTILE_TIMEOUT_S = 180.0
HOSTILE_GOAL = "fix the parse error in the deepest module"

TARGET = "0"
TRACEBACK = "Traceback (most recent call last)"
INTERNAL_ERROR = -32603
BIN = Path(sys.executable).parent
CODEROOMS = str(BIN / "coderooms")


def progress(message: str) -> None:
    print(f"[reliability_integrity] {message}", file=sys.stderr, flush=True)


# --- 1. writers × posts -----------------------------------------------------------------


_POST = re.compile(r"writer (\d+) post (\d+)")


def post_text(writer: int, index: int) -> str:
    return f"writer {writer} post {index}"


@dataclass(frozen=True)
class Tally:
    """What a log of (sequence, content) rows, in storage order, says about the posts."""

    lost: int
    duplicated: int
    reordered: int
    unordered_sequences: int
    """Rows whose sequence is not above the row before them in storage order."""
    foreign: int
    """Rows that are no expected post."""


def tally(rows: Iterable[tuple[int, str]], writers: int, posts: int) -> Tally:
    """Count lost, duplicated and reordered posts among ``rows`` (storage order), where
    writer ``w`` in ``range(writers)`` posted ``post_text(w, i)`` for ``i`` in
    ``range(posts)``, in that order. A post is reordered when its sequence is not above
    that of the same writer's previous post found."""
    seen: Counter[tuple[int, int]] = Counter()
    first_at: dict[tuple[int, int], int] = {}
    unordered = foreign = 0
    previous: int | None = None
    for sequence, content in rows:
        if previous is not None and sequence <= previous:
            unordered += 1
        previous = sequence
        match = _POST.fullmatch(content)
        key = (int(match[1]), int(match[2])) if match else None
        if key is None or not (0 <= key[0] < writers and 0 <= key[1] < posts):
            foreign += 1
            continue
        seen[key] += 1
        first_at.setdefault(key, sequence)
    lost = sum(1 for w in range(writers) for i in range(posts) if (w, i) not in seen)
    duplicated = sum(count - 1 for count in seen.values())
    reordered = 0
    for w in range(writers):
        last: int | None = None
        for i in range(posts):
            at = first_at.get((w, i))
            if at is None:
                continue
            if last is not None and at <= last:
                reordered += 1
            last = at
    return Tally(lost, duplicated, reordered, unordered, foreign)


def misfiled(acks: dict[int, str], stored: dict[int, str]) -> int:
    """Acknowledged sequences whose stored content is missing or another message's."""
    return sum(1 for sequence, text in acks.items() if stored.get(sequence) != text)


async def _post_all(path: str, writer: int, posts: int) -> tuple[list[tuple[int, str]], int]:
    store = SQLiteStore(path)
    acks: list[tuple[int, str]] = []
    errors = 0
    try:
        for i in range(posts):
            text = post_text(writer, i)
            try:
                row = await store.post(f"agent:w{writer}", text)
            except CoderoomsError:
                errors += 1
                continue
            acks.append((row.sequence, text))
    finally:
        store.close()
    return acks, errors


def _writer(path: str, writer: int, posts: int, start: Any, out: Any) -> None:
    start.wait()
    out.put((writer, *asyncio.run(_post_all(path, writer, posts))))


def stored_rows(path: Path) -> list[tuple[int, str]]:
    """(sequence, content) of every row, in the table's storage order."""
    with sqlite3.connect(path) as db:
        return db.execute("SELECT sequence, content FROM messages").fetchall()


def integrity(path: Path) -> str:
    with sqlite3.connect(path) as db:
        return ", ".join(row[0] for row in db.execute("PRAGMA integrity_check"))


async def _staff(path: Path, writers: int) -> None:
    store = SQLiteStore(path)
    try:
        for w in range(writers):
            await store.add_agent(f"w{w}")
    finally:
        store.close()


def one_writer_rate(path: Path, posts: int) -> float:
    """Posts/s of one writer with the store to itself: the baseline for contention."""
    asyncio.run(_staff(path, 1))
    started = time.perf_counter()
    asyncio.run(_post_all(str(path), 0, posts))
    return posts / (time.perf_counter() - started)


def writers_row(tmp: Path, writers: int, posts: int) -> list[tuple[str, str, str]]:
    progress(f"writers: {writers} processes × {posts:,} posts")
    path = tmp / "writers.db"
    asyncio.run(_staff(path, writers))
    context = multiprocessing.get_context("spawn")
    start, out = context.Event(), context.Queue()
    workers = [
        context.Process(target=_writer, args=(str(path), w, posts, start, out))
        for w in range(writers)
    ]
    for worker in workers:
        worker.start()
    time.sleep(WRITER_START_S)
    started = time.perf_counter()
    start.set()
    results = []
    deadline = started + WRITERS_TIMEOUT_S
    for _ in workers:
        try:
            results.append(out.get(timeout=max(0.1, deadline - time.perf_counter())))
        except queue.Empty:
            break
    elapsed = time.perf_counter() - started
    for worker in workers:
        worker.join(timeout=10)
        if worker.is_alive():
            worker.kill()
    failed = sum(1 for worker in workers if worker.exitcode != 0) + writers - len(results)
    refused = sum(errors for _, _, errors in results)
    acks = {sequence: text for _, acked, _ in results for sequence, text in acked}
    rows = stored_rows(path)
    counts = tally(rows, writers, posts)
    wrong_acks = misfiled(acks, dict(rows))
    check = integrity(path)
    rate = writers * posts / elapsed
    alone = one_writer_rate(tmp / "alone.db", posts)
    label = f"{writers} writers × {posts:,} posts"
    return [
        (
            f"{label}: lost / duplicated / reordered",
            f"{counts.lost} / {counts.duplicated} / {counts.reordered}",
            f"{TARGET} / {TARGET} / {TARGET}",
        ),
        (
            f"{label}: sequences not increasing, foreign rows, misfiled acks",
            f"{counts.unordered_sequences}, {counts.foreign}, {wrong_acks}",
            f"{TARGET}, {TARGET}, {TARGET}",
        ),
        (
            f"{label}: writers failed, posts refused (StoreBusy …)",
            f"{failed}, {refused}",
            f"{TARGET}, {TARGET}",
        ),
        (f"{label}: PRAGMA integrity_check", check, "ok"),
        (
            f"{label}: posts/s, all writers (one writer alone)",
            f"{rate:,.0f} ({alone:,.0f}, ratio {rate / alone:.2f})",
            "(reported)",
        ),
    ]


# --- 2. kill -9 rounds ------------------------------------------------------------------


KILL_WRITER = """
import asyncio, sys
from coderooms.store.sqlite import SQLiteStore
async def main(path, tag):
    store = SQLiteStore(path)
    i = 0
    while True:
        row = await store.post("agent:killed", f"{tag} post {i}")
        sys.stdout.write(f"{row.sequence} {i}\\n")
        sys.stdout.flush()
        i += 1
asyncio.run(main(sys.argv[1], sys.argv[2]))
"""


def parse_acks(output: str, tag: str) -> dict[int, str]:
    """The acknowledged (sequence → content) pairs a killed writer printed: only whole
    lines count (the last one may have been cut by the kill)."""
    acks: dict[int, str] = {}
    for line in output.split("\n")[:-1]:
        parts = line.split()
        if len(parts) == 2 and all(p.isdigit() for p in parts):
            acks[int(parts[0])] = f"{tag} post {parts[1]}"
    return acks


def _kill_round(path: Path, tag: str, delay: float) -> tuple[dict[int, str], str]:
    child = subprocess.Popen(
        [sys.executable, "-c", KILL_WRITER, str(path), tag],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert child.stdout is not None and child.stderr is not None
    chunks: list[bytes] = []

    def read_all() -> None:
        assert child.stdout is not None
        while True:
            chunk = child.stdout.read1(65536)  # type: ignore[attr-defined]
            if not chunk:
                return
            chunks.append(chunk)

    reader = threading.Thread(target=read_all, daemon=True)
    reader.start()
    # wait for the first ack (imports take a while), then kill at the drawn moment
    deadline = time.monotonic() + KILL_FIRST_ACK_TIMEOUT_S
    while not chunks and child.poll() is None and time.monotonic() < deadline:
        time.sleep(0.005)
    time.sleep(delay)
    if child.poll() is None:
        os.kill(child.pid, signal.SIGKILL)
    child.wait()
    reader.join()
    output = b"".join(chunks)
    stderr = child.stderr.read().decode("utf-8", "replace")
    return parse_acks(output.decode("utf-8", "replace"), tag), stderr


async def _one_agent(path: Path, agent: str) -> None:
    store = SQLiteStore(path)
    try:
        await store.add_agent(agent)
    finally:
        store.close()


def kill_row(tmp: Path, rounds: int) -> list[tuple[str, str, str]]:
    progress(f"kill -9: {rounds} rounds")
    path = tmp / "killed.db"
    asyncio.run(_one_agent(path, "killed"))
    rng = random.Random(SEED)
    missing = acked = died_early = 0
    for r in range(rounds):
        tag = f"round {r}"
        acks, stderr = _kill_round(path, tag, rng.uniform(0, KILL_MAX_DELAY_S))
        if TRACEBACK in stderr:
            died_early += 1
        store = SQLiteStore(path)  # reopening must work after every kill
        try:
            stored = {
                seq: content
                for seq, content in store._db.execute(
                    "SELECT sequence, content FROM messages WHERE content LIKE ?", (f"{tag} %",)
                )
            }
        finally:
            store.close()
        acked += len(acks)
        missing += misfiled(acks, stored)
    check = integrity(path)
    label = f"kill -9 × {rounds} rounds ({acked:,} acks)"
    return [
        (f"{label}: acknowledged posts missing after reopening", str(missing), TARGET),
        (f"{label}: writers that died on their own (traceback)", str(died_early), TARGET),
        (f"{label}: PRAGMA integrity_check", check, "ok"),
    ]


# --- 3. generated MCP requests over stdio -----------------------------------------------


MCP_AGENT = "fuzz"
MCP_DESK = "Fuzz"
TOOLS = (
    "room_read",
    "room_post",
    "room_search",
    "room_threads",
    "room_pins",
    "room_pick",
    "room_inbox",
    "focus",
    "seek",
    "impact",
    "skim",
)
ODD_NUMBERS: tuple[Any, ...] = (
    -1,
    0,
    2**31,
    2**63,
    -(2**63) - 1,
    2**64,
    10**40,
    1.5,
    -0.0,
    1e308,
    True,
    None,
    "7",
    [],
    {},
)
ODD_VALUES: tuple[Any, ...] = (*ODD_NUMBERS, "", " ", "\x00", "\ud800", "x" * 10_000, [[["deep"]]])


def _request(request_id: int, method: str, params: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}


def _call(request_id: int, tool: str, arguments: Any) -> dict[str, Any]:
    return _request(request_id, "tools/call", {"name": tool, "arguments": arguments})


def _line(message: Any) -> bytes:
    return json.dumps(message).encode() + b"\n"


def _valid_arguments(rng: random.Random, tool: str) -> dict[str, Any]:
    words = rng.choice(("backoff", "retry", "fuzz", "/a+b/", "pin"))
    return {
        "room_read": {"desk": MCP_DESK, "window": rng.randint(1, 50)},
        "room_post": {"desk": MCP_DESK, "content": f"fuzz {words} {rng.random()}"},
        "room_search": {"desk": MCP_DESK, "query": words},
        "room_threads": {"desk": MCP_DESK},
        "room_pins": {"desk": MCP_DESK},
        "room_pick": {"kind": rng.choice(("agents", "people", "desks")), "query": "fu"},
        "room_inbox": {},
        "focus": {"goal": f"fix {words}", "budget": 500},
        "seek": {"query": words},
        "impact": {"target": "app.py", "depth": 1},
        "skim": {"text": "line\n" * 50, "goal": words, "budget": 100},
    }[tool]


def mcp_cases(rng: random.Random, count: int, first_id: int) -> Iterator[tuple[str, bytes]]:
    """``count`` (kind, line) pairs, each one line every server must answer once."""
    kinds = (
        "valid",
        "malformed",
        "wrong_types",
        "unknown_tool",
        "out_of_range",
        "deep_nesting",
        "invalid_utf8",
        "bad_envelope",
    )
    # the expensive ones once each, first
    big = "x" * BIG_PAYLOAD_BYTES
    once: list[tuple[str, dict[str, Any]]] = [
        ("room_post", {"desk": MCP_DESK, "content": big}),
        ("room_search", {"desk": MCP_DESK, "query": big}),
        ("room_read", {"desk": big}),  # a 10 MB desk name
        ("room_search", {"desk": MCP_DESK, "query": "x", "author": big}),
        ("room_post", {"desk": MCP_DESK, "content": "hi", "reply_to": 1, "desk_x": big}),
        (big, {}),  # a 10 MB tool name
        ("focus", {"goal": big}),
        ("impact", {"target": big}),
    ]
    for n, (tool, arguments) in enumerate(once, start=first_id):
        yield "big_payload", _line(_call(n, tool, arguments))
    first_id += len(once)
    yield (
        "adversarial_regex",
        _line(_call(first_id, "room_search", {"desk": MCP_DESK, "query": ADVERSARIAL_REGEX})),
    )
    first_id += 1
    for n in range(first_id, first_id + count - len(once) - 1):
        kind = rng.choice(kinds)
        tool = rng.choice(TOOLS)
        if kind == "valid":
            yield kind, _line(_call(n, tool, _valid_arguments(rng, tool)))
        elif kind == "malformed":
            good = _line(_call(n, tool, _valid_arguments(rng, tool)))
            cut = rng.randrange(1, len(good) - 1)
            yield (
                kind,
                rng.choice(
                    (
                        good[:cut].rstrip(b"\n") + b"\n",
                        b"{" * rng.randint(1, 5) + b"\n",
                        b"not json at all\n",
                        b"[]\n",
                        b"null\n",
                        b"42\n",
                        b'"a string"\n',
                        bytes(rng.randrange(32, 127) for _ in range(rng.randint(1, 80))) + b"\n",
                        b'{"jsonrpc": "2.0", "id": ' + str(n).encode() + b', "method": NaN}\n',
                    )
                ),
            )
        elif kind == "wrong_types":
            arguments = _valid_arguments(rng, tool)
            key = rng.choice([*arguments, "desk", "thread", "limit"])
            arguments[key] = rng.choice(ODD_VALUES)
            params = rng.choice(
                (
                    {"name": tool, "arguments": arguments},
                    {"name": tool, "arguments": rng.choice(ODD_VALUES)},
                    {"name": rng.choice(ODD_VALUES), "arguments": {}},
                    rng.choice(ODD_VALUES),
                )
            )
            yield kind, _line(_request(n, "tools/call", params))
        elif kind == "unknown_tool":
            name = rng.choice(("room_delete", "", "ROOM_READ", "focus ", "../etc", "\u202etool"))
            yield kind, _line(_call(n, name, {}))
        elif kind == "out_of_range":
            arguments = _valid_arguments(rng, tool)
            key = rng.choice(
                ("window", "before", "limit", "thread", "reply_to", "since", "budget", "depth")
            )
            arguments[key] = rng.choice(ODD_NUMBERS[:10])
            yield kind, _line(_call(n, tool, arguments))
        elif kind == "deep_nesting":
            depth = rng.choice((100, 1_000, DEEP_NESTING))
            nested = "[" * depth + "]" * depth
            yield (
                kind,
                (
                    f'{{"jsonrpc":"2.0","id":{n},"method":"tools/call","params":{{"name":"{tool}",'
                    f'"arguments":{{"content":{nested},"query":{nested}}}}}}}\n'
                ).encode(),
            )
        elif kind == "invalid_utf8":
            junk = bytes(rng.choice((0xFF, 0xFE, 0xC0, 0x80, 0xED, 0xA0)) for _ in range(8))
            yield (
                kind,
                (
                    b'{"jsonrpc":"2.0","id":'
                    + str(n).encode()
                    + b',"method":"tools/call","params":{"name":"room_post","arguments":'
                    + b'{"desk":"'
                    + MCP_DESK.encode()
                    + b'","content":"bad '
                    + junk
                    + b' bytes"}}}\n'
                ),
            )
        else:  # bad_envelope
            yield (
                kind,
                _line(
                    rng.choice(
                        (
                            {"jsonrpc": "1.0", "id": n, "method": "tools/list"},
                            {"jsonrpc": "2.0", "id": n, "method": 5},
                            {"jsonrpc": "2.0", "id": n, "method": "no/such/method"},
                            {"jsonrpc": "2.0", "id": [n], "method": "tools/list"},
                            {"jsonrpc": "2.0", "id": 1.5, "method": "tools/list"},
                            {"jsonrpc": "2.0", "id": None, "method": "tools/list"},
                            {"jsonrpc": "2.0", "id": n, "method": "tools/list", "params": 7},
                            {
                                "jsonrpc": "2.0",
                                "id": n,
                                "method": "resources/read",
                                "params": {"uri": "file:///etc/passwd"},
                            },
                        )
                    )
                ),
            )


class WireClient:
    """``coderooms mcp`` as a subprocess: lines in, answer lines out, stderr kept."""

    def __init__(self, db_url: str, cwd: Path) -> None:
        self.process = subprocess.Popen(
            [CODEROOMS, "mcp", "--agent", MCP_AGENT, "--db", db_url],
            cwd=cwd,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        self.answers: queue.Queue[bytes] = queue.Queue()
        self.stderr: list[bytes] = []
        threading.Thread(target=self._pump_out, daemon=True).start()
        threading.Thread(target=self._pump_err, daemon=True).start()

    def _pump_out(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.answers.put(line)

    def _pump_err(self) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:
            self.stderr.append(line)

    def send(self, line: bytes) -> bool:
        assert self.process.stdin is not None
        try:
            self.process.stdin.write(line)
            self.process.stdin.flush()
        except (BrokenPipeError, OSError):
            return False
        return True

    def answer(self, timeout: float) -> bytes | None:
        try:
            return self.answers.get(timeout=timeout)
        except queue.Empty:
            return None

    def open_session(self) -> None:
        self.send(
            _line(
                _request(
                    0,
                    "initialize",
                    {
                        "protocolVersion": "2025-06-18",
                        "capabilities": {},
                        "clientInfo": {"name": "reliability", "version": "1"},
                    },
                )
            )
        )
        if self.answer(WARMUP_TIMEOUT_S) is None:
            raise RuntimeError("coderooms mcp did not answer initialize")
        self.send(_line({"jsonrpc": "2.0", "method": "notifications/initialized"}))

    def close(self) -> None:
        if self.process.stdin is not None:
            try:
                self.process.stdin.close()
            except OSError:
                pass
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def answer_kind(answer: bytes) -> str:
    """``internal`` for a JSON-RPC internal error (-32603: an exception the server did not
    expect), ``untyped`` for a tool error whose structured content names no error type
    (every refusal carries ``{"error": {"type", "message"}}``), ``unreadable`` for a
    line that is not a JSON object, ``oversized`` for a refusal longer than
    :data:`REFUSAL_CAP_BYTES` (an input echoed back), else ``ok``."""
    try:
        message = json.loads(answer)
    except ValueError:
        return "unreadable"
    if not isinstance(message, dict):
        return "unreadable"
    error = message.get("error")
    if isinstance(error, dict) and error.get("code") == INTERNAL_ERROR:
        return "internal"
    result = message.get("result")
    refused = isinstance(error, dict)
    if isinstance(result, dict) and result.get("isError"):
        refused = True
        structured = result.get("structuredContent")
        typed = isinstance(structured, dict) and isinstance(structured.get("error"), dict)
        if not typed or not structured["error"].get("type"):
            return "untyped"
    if refused and len(answer) > REFUSAL_CAP_BYTES:
        return "oversized"
    return "ok"


def cli(db_url: str, *args: str, stdin: bytes | None = None) -> None:
    subprocess.run(
        [CODEROOMS, "--db", db_url, *args],
        input=stdin,
        check=True,
        capture_output=True,
        timeout=120,
    )


def _fresh_client(db_url: str, cwd: Path) -> WireClient:
    client = WireClient(db_url, cwd)
    client.open_session()
    return client


def mcp_row(tmp: Path, requests: int) -> list[tuple[str, str, str]]:
    progress(f"mcp: {requests} generated requests over stdio")
    repo = tmp / "mcp-repo"
    repo.mkdir()
    (repo / "app.py").write_text("def retry_backoff(n):\n    return min(30, 2 ** n)\n")
    db_url = f"sqlite:///{tmp / 'mcp.db'}"
    cli(db_url, "init")
    cli(db_url, "agent", "add", MCP_AGENT)
    cli(db_url, "desk", "create", MCP_DESK)
    cli(db_url, "desk", "add", MCP_DESK, MCP_AGENT)
    cli(
        db_url,
        "post",
        "--as",
        f"agent:{MCP_AGENT}",
        "--desk",
        MCP_DESK,
        stdin=b"a" * ADVERSARIAL_TEXT_CHARS,
    )
    client = _fresh_client(db_url, repo)
    # warm: the first focus indexes the working directory and loads the embedding model
    client.send(_line(_call(1, "focus", {"goal": "retry backoff", "budget": 500})))
    client.answer(WARMUP_TIMEOUT_S)
    crashes = hangs = tracebacks = internal = untyped = garbled = oversized = 0
    kinds: Counter[str] = Counter()
    slowest = 0.0
    rng = random.Random(SEED)
    for kind, line in mcp_cases(rng, requests, first_id=100):
        kinds[kind] += 1
        started = time.perf_counter()
        sent = client.send(line)
        answer = client.answer(ANSWER_TIMEOUT_S) if sent else None
        slowest = max(slowest, time.perf_counter() - started)
        if answer is None:
            if client.process.poll() is not None or not sent:
                crashes += 1
            else:
                hangs += 1
                answer = client.answer(LATE_ANSWER_S)  # keep answers paired with requests
            if answer is None:
                tracebacks += sum(TRACEBACK.encode() in chunk for chunk in client.stderr)
                client.process.kill()
                client.close()
                client = _fresh_client(db_url, repo)
                continue
        if TRACEBACK.encode() in answer:
            tracebacks += 1
        verdict = answer_kind(answer)
        internal += verdict == "internal"
        untyped += verdict == "untyped"
        garbled += verdict == "unreadable"
        oversized += verdict == "oversized"
    # 10 MB of test log through skim, timed on its own: its cost is linear in the text
    lines = BIG_PAYLOAD_BYTES // len(SKIM_LOG_LINE % 0)
    log = "".join(SKIM_LOG_LINE % (i % 1000) for i in range(lines))
    started = time.perf_counter()
    client.send(_line(_call(99, "skim", {"text": log, "goal": "fix the retry backoff"})))
    skimmed = client.answer(LATE_ANSWER_S)
    skim_s = time.perf_counter() - started
    client.close()
    if client.process.returncode not in (0, None):
        crashes += 1
    tracebacks += sum(TRACEBACK.encode() in chunk for chunk in client.stderr)
    mix = ", ".join(f"{k} {v}" for k, v in sorted(kinds.items()))
    label = f"MCP stdio, {requests} generated requests"
    return [
        (
            f"{label}: crashes / hangs (> {ANSWER_TIMEOUT_S:g} s) / tracebacks",
            f"{crashes} / {hangs} / {tracebacks}",
            f"{TARGET} / {TARGET} / {TARGET}",
        ),
        (
            f"{label}: internal errors / untyped tool errors / unreadable answers",
            f"{internal} / {untyped} / {garbled}",
            f"{TARGET} / {TARGET} / {TARGET}",
        ),
        (
            f"{label}: refusals over {REFUSAL_CAP_BYTES // 1024} KiB (input echoed back)",
            str(oversized),
            TARGET,
        ),
        (f"{label}: slowest answer", f"{slowest:.2f} s", f"≤ {ANSWER_TIMEOUT_S:g} s"),
        (
            "MCP stdio: skim of 10 MB of test log, answer time",
            f"{skim_s:.2f} s" if skimmed is not None else f"no answer in {LATE_ANSWER_S:g} s",
            f"≤ {ANSWER_TIMEOUT_S:g} s",
        ),
        (f"{label}: mix", mix, "(reported)"),
    ]


# --- 4. generated message texts through the library -------------------------------------


TEXT_AGENT, TEXT_DESK = "texter", "Texts"
CONTROL = (
    "".join(chr(c) for c in (*range(0, 32), 127, *range(0x80, 0xA0)))
    + "\u2028\u2029\u200b\u202e\ufeff"
)
PIN_LINES = (
    "!pin",
    "!pin #label note",
    "!pin ^1",
    "!pin ^999999999999999999999",
    "!unpin ^1",
    "!pin ^-3",
    "!pin ^",
    "  !pin #x",
)
MENTIONS = (
    "@texter",
    "@Texts",
    "@everyone",
    "@nobody",
    "@",
    "@@",
    "email@example.com",
    "`@texter`",
)


def random_text(rng: random.Random) -> str:
    """One message text from a seeded mix of hostile pieces."""
    parts: list[str] = []
    for _ in range(rng.randint(1, 8)):
        pick = rng.random()
        if pick < 0.25:
            parts.append("".join(_random_char(rng) for _ in range(rng.randint(1, 40))))
        elif pick < 0.4:
            parts.append("".join(rng.choice(CONTROL) for _ in range(rng.randint(1, 10))))
        elif pick < 0.55:
            parts.append(rng.choice(MENTIONS))
        elif pick < 0.7:
            parts.append("\n" + rng.choice(PIN_LINES) + "\n")
        elif pick < 0.75:
            parts.append(rng.choice("xé🙂") * rng.randint(HUGE_LINE_CHARS // 4, HUGE_LINE_CHARS))
        elif pick < 0.9:
            parts.append("```\n!pin in code @texter\n```")
        else:
            parts.append(" \t ")
    if rng.random() < SURROGATE_SHARE:  # a lone surrogate: refused, with a typed error
        parts.insert(rng.randrange(len(parts) + 1), chr(rng.randrange(0xD800, 0xE000)))
    return "".join(parts)


def _random_char(rng: random.Random) -> str:
    """Any code point from space up to the end of plane 2, except surrogates."""
    while True:
        code = rng.randrange(0x20, 0x30000)
        if not 0xD800 <= code < 0xE000:
            return chr(code)


async def _texts(path: Path, count: int) -> tuple[int, int, Counter[str], list[str]]:
    store = SQLiteStore(path)
    await store.add_agent(TEXT_AGENT)
    await store.create_desk(TEXT_DESK)
    await store.add_desk_member(TEXT_DESK, TEXT_AGENT)
    service = RoomService(store)
    rng = random.Random(SEED)
    untyped = mismatched = 0
    refused: Counter[str] = Counter()
    examples: list[str] = []

    def untyped_error(where: str, exc: BaseException) -> None:
        nonlocal untyped
        untyped += 1
        if len(examples) < 3:
            examples.append(f"{where}: {type(exc).__name__}: {str(exc)[:80]}")

    try:
        for _ in range(count):
            text = random_text(rng)
            try:
                posted = await service.post(TEXT_AGENT, text, TEXT_DESK)
            except CoderoomsError as exc:
                refused[type(exc).__name__] += 1
                continue
            except Exception as exc:  # noqa: BLE001 - counting exactly these
                untyped_error("post", exc)
                continue
            row = await store.message(posted.sequence)
            if row is None or row.content != text:
                mismatched += 1
            elif from_wire(LogMessage, json.loads(json.dumps(to_wire(row)))) != row:
                mismatched += 1  # the wire form (as JSON) must give the same row back
            for where, call in (
                ("read", lambda: service.read(TEXT_AGENT, TEXT_DESK)),
                ("pins", lambda: service.pins(TEXT_AGENT, TEXT_DESK)),
                ("threads", lambda: service.threads(TEXT_AGENT, TEXT_DESK)),
                ("inbox", lambda: service.inbox(TEXT_AGENT)),
                ("search", lambda q=text[:200] or "x": service.search(TEXT_AGENT, q, TEXT_DESK)),
            ):
                try:
                    await call()
                except CoderoomsError:
                    pass
                except Exception as exc:  # noqa: BLE001 - counting exactly these
                    untyped_error(where, exc)
    finally:
        store.close()
    return untyped, mismatched, refused, examples


def texts_row(tmp: Path, count: int) -> list[tuple[str, str, str]]:
    progress(f"texts: {count} generated messages through the library")
    untyped, mismatched, refused, examples = asyncio.run(_texts(tmp / "texts.db", count))
    label = f"{count} generated texts (post, read, pins, threads, inbox, search)"
    rows = [
        (
            f"{label}: untyped errors / round-trip mismatches",
            f"{untyped} / {mismatched}",
            f"{TARGET} / {TARGET}",
        ),
        (
            f"{label}: refused with a typed error",
            ", ".join(f"{k} {v}" for k, v in sorted(refused.items())) or "none",
            "(reported)",
        ),
    ]
    rows += [("  untyped example", example, "") for example in examples]
    return rows


# --- 5. a hostile tree for the index ----------------------------------------------------


def build_hostile_tree(root: Path, outside: Path) -> None:
    """A tree with everything an index must survive, beside a small real package."""
    rng = random.Random(SEED)
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "core.py").write_text("def parse(text):\n    return text.split()\n")
    (root / "pkg" / "use.py").write_text(
        "from pkg.core import parse\n\n\ndef run():\n    return parse('a b')\n"
    )
    outside.mkdir(parents=True, exist_ok=True)
    (outside / "secret.py").write_text("SECRET = 'outside the root'\n")
    (root / "escape_dir").symlink_to(outside, target_is_directory=True)
    (root / "escape_file.py").symlink_to(outside / "secret.py")
    (root / "etc_link").symlink_to("/etc", target_is_directory=True)
    (root / "loop").symlink_to(root, target_is_directory=True)
    (root / "dangling.py").symlink_to(root / "does-not-exist.py")
    with open(root / "huge.py", "wb") as big:
        line = b"value = 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx'\n"
        big.write(line * (HOSTILE_BIG_FILE_BYTES // len(line)))
    for i in range(HOSTILE_BINARY_FILES):
        (root / f"blob{i}.py").write_bytes(rng.randbytes(64 * 1024))
    (root / "image.png").write_bytes(b"\x89PNG\r\n\x1a\n" + rng.randbytes(4096))
    (root / "latin1.py").write_bytes(b"# caf\xe9\ndef caf\xe9():\n    return '\xff\xfe'\n")
    (root / "nul.py").write_bytes(b"def f():\n    return 1\x00\x00\n")
    os.mkfifo(root / "pipe.py")
    (root / os.fsdecode(b"bad\xffname.py")).write_text("def odd():\n    pass\n")
    deep = root
    for level in range(HOSTILE_DEPTH):
        deep = deep / f"d{level}"
    deep.mkdir(parents=True)
    (deep / "deepest.py").write_text("def deepest_parse_error():\n    raise ValueError\n")


def _run_bounded(args: list[str], cwd: Path) -> tuple[int | None, str, float]:
    """Exit status (None: timed out), stdout + stderr, seconds."""
    started = time.perf_counter()
    try:
        done = subprocess.run(args, cwd=cwd, capture_output=True, timeout=HOSTILE_TIMEOUT_S)
    except subprocess.TimeoutExpired as exc:
        out = (exc.stdout or b"") + (exc.stderr or b"")
        return None, out.decode("utf-8", "replace"), time.perf_counter() - started
    out = (done.stdout + done.stderr).decode("utf-8", "replace")
    return done.returncode, out, time.perf_counter() - started


def hostile_row(tmp: Path) -> list[tuple[str, str, str]]:
    progress("hostile tree: index and focus")
    root = tmp / "hostile"
    build_hostile_tree(root, tmp / "outside")
    crashes = tracebacks = hangs = 0
    skipped = "?"
    times: list[str] = []
    for name, args in (
        ("index", [CODEROOMS, "index", str(root), "--json"]),
        ("focus", [CODEROOMS, "focus", HOSTILE_GOAL, "--repo", str(root), "--json"]),
    ):
        status, out, seconds = _run_bounded(args, root)
        times.append(f"{name} {seconds:.1f} s")
        if status is None:
            hangs += 1
        elif status != 0:
            crashes += 1
            progress(f"{name} exited {status}: {out[-300:]}")
        if TRACEBACK in out:
            tracebacks += 1
        if name == "index" and status == 0:
            try:
                summary = json.loads(out[: out.rindex("}") + 1])
                shown = ", ".join(f"{k} {v}" for k, v in summary["skipped"].items())
                skipped = f"{shown}; decode_replaced {summary['decode_replaced']}, files {summary['files']}"
            except (ValueError, KeyError):
                skipped = "(summary not readable)"
    label = "hostile tree (index, focus)"
    return [
        (
            f"{label}: crashes / tracebacks / hangs (> {HOSTILE_TIMEOUT_S:g} s)",
            f"{crashes} / {tracebacks} / {hangs}",
            f"{TARGET} / {TARGET} / {TARGET}",
        ),
        (f"{label}: skipped, as the index summary says", skipped, "(reported)"),
        (f"{label}: time", ", ".join(times), "(reported)"),
    ]


# --- the run ----------------------------------------------------------------------------


def run(quick: bool = False) -> list[tuple[str, str, str]]:
    """Every row as (measurement, measured, target)."""
    writers, posts = (
        (QUICK_WRITERS, QUICK_POSTS_PER_WRITER) if quick else (WRITERS, POSTS_PER_WRITER)
    )
    rows: list[tuple[str, str, str]] = []
    with tempfile.TemporaryDirectory(prefix="coderooms-reliability-") as name:
        tmp = Path(name)
        started = time.perf_counter()
        rows += writers_row(tmp, writers, posts)
        rows += kill_row(tmp, QUICK_KILL_ROUNDS if quick else KILL_ROUNDS)
        rows += mcp_row(tmp, QUICK_MCP_REQUESTS if quick else MCP_REQUESTS)
        rows += texts_row(tmp, QUICK_TEXTS if quick else TEXTS)
        rows += hostile_row(tmp)
        progress(f"done in {time.perf_counter() - started:.0f} s")
    return rows


def table(rows: list[tuple[str, str, str]]) -> str:
    heads = ("measurement", "measured", "target")
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(heads)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(heads, widths, strict=True))]
    lines.append("  ".join("-" * w for w in widths))
    lines += ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows]
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="small counts (≤ 60 s)")
    args = parser.parse_args()
    rows = run(args.quick)
    print(table(rows))
    print(f"\nload average: {', '.join(f'{x:.1f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
