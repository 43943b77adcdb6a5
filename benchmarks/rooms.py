"""Rooms on the embedded SQLite store: projection latency against log size, post throughput.

One command::

    .venv/bin/python benchmarks/rooms.py [--rows 1000000] [--samples 200]

Builds (by bulk import) a small and a large log with the same shape — 20 desks, about a
third of the rows replies in threads — and reports, in one run:

* the median ``project_session`` (window 30) for channel and thread reads at both sizes,
  through the desk/thread-scoped views, and the large/small ratio;
* the same through the whole-log port, for reference;
* median ``read_before`` of a 512-row page called directly vs via ``asyncio.to_thread``;
* posts per second from one process, and from four processes at once, followed by a
  check that no post was lost or duplicated.

Targets (issue 2): median ≤ 5 ms at 1,000,000 rows, large/small ratio ≤ 1.5,
≥ 2,000 posts/s from one process, nothing lost or duplicated under four processes.
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Iterator
from multiprocessing.synchronize import Event
from pathlib import Path

from coderooms.rooms.records import Agent, Conversation, LogMessage, SessionQuery
from coderooms.rooms.session import SessionLog, project_session
from coderooms.store.sqlite import SQLiteStore

DESKS = 20
AGENTS = 10
SMALL_ROWS = 10_000
LARGE_ROWS = 1_000_000
REPLY_SHARE = 0.35
"""Share of rows that reply to a recent root of their desk."""
OPEN_THREADS = 8
"""Recent roots per desk a reply may pick from."""
TEXTS = 4_096
"""Distinct message texts the generator draws from."""
WINDOW = 30
SAMPLES = 200
POSTS_ONE_PROCESS = 5_000
WRITERS = 4
POSTS_PER_WRITER = 1_500
SEED = 20_261_129

TARGET_MEDIAN_MS = 5.0
TARGET_RATIO = 1.5
TARGET_POSTS_PER_SECOND = 2_000.0

WORDS = (
    "build test deploy review merge branch index query cache store thread desk agent "
    "focus budget token graph search pin window latency schema migrate"
).split()


DESK_IDS = tuple(f"desk-{index:02d}" for index in range(DESKS))


def desk_id(index: int) -> str:
    return DESK_IDS[index]


def generate(rows: int, seed: int = SEED) -> Iterator[LogMessage]:
    """A deterministic log: roots and replies spread over every desk."""
    rng = random.Random(seed)
    authors = [Agent(f"agent-{i}", f"Agent {i}") for i in range(AGENTS)]
    texts = [" ".join(rng.choice(WORDS) for _ in range(rng.randint(6, 18))) for _ in range(TEXTS)]
    open_roots: list[list[int]] = [[] for _ in range(DESKS)]
    draw = rng.random
    for sequence in range(1, rows + 1):
        desk = int(draw() * DESKS)
        roots = open_roots[desk]
        parent = roots[int(draw() * len(roots))] if roots and draw() < REPLY_SHARE else None
        if parent is None:
            roots.append(sequence)
            if len(roots) > OPEN_THREADS:
                del roots[0]
        author = authors[int(draw() * AGENTS)]
        content = texts[int(draw() * TEXTS)]
        yield LogMessage(sequence, author, content, desk_id(desk), parent)


def build(path: Path, rows: int) -> tuple[SQLiteStore, float]:
    started = time.perf_counter()
    store = SQLiteStore(path)
    store.import_messages(generate(rows))
    return store, time.perf_counter() - started


async def paired_medians(
    small: list[Callable[[], Awaitable[object]]], large: list[Callable[[], Awaitable[object]]]
) -> tuple[float, float]:
    """Median milliseconds of each list, calls interleaved so both see the same load."""
    for call in (*small[:10], *large[:10]):  # warm the caches
        await call()
    timings: tuple[list[float], list[float]] = ([], [])
    for pair in zip(small, large, strict=True):
        for side, call in enumerate(pair):
            started = time.perf_counter()
            await call()
            timings[side].append((time.perf_counter() - started) * 1000)
    return statistics.median(timings[0]), statistics.median(timings[1])


async def thread_roots(store: SQLiteStore, wanted: int) -> list[tuple[str, int]]:
    """Roots near the tail that have replies, as (desk, root)."""
    found: dict[int, str] = {}
    page = await store.read_before(None, 4096)
    for row in page.messages:
        if row.parent is not None and row.parent not in found and row.chat_id is not None:
            found[row.parent] = row.chat_id
        if len(found) >= wanted:
            break
    return [(desk, root) for root, desk in found.items()]


def projection_calls(
    log_for: Callable[[Conversation], SessionLog], conversations: list[Conversation]
) -> list[Callable[[], Awaitable[object]]]:
    def call(conversation: Conversation) -> Callable[[], Awaitable[object]]:
        query = SessionQuery(conversation, None, WINDOW)
        log = log_for(conversation)
        return lambda: project_session(log, query)

    return [call(c) for c in conversations]


def workloads(
    store: SQLiteStore, roots: list[tuple[str, int]], samples: int
) -> dict[str, list[Callable[[], Awaitable[object]]]]:
    rng = random.Random(SEED)
    channels = [Conversation(d, d) for d in (desk_id(rng.randrange(DESKS)) for _ in range(samples))]
    threads = [Conversation(d, d, r) for d, r in (rng.choice(roots) for _ in range(samples))]

    def whole(_: Conversation) -> SessionLog:
        return store

    return {
        "channel (desk view)": projection_calls(store.conversation_log, channels),
        "thread (thread view)": projection_calls(store.conversation_log, threads),
        "channel (whole log)": projection_calls(whole, channels),
        "thread (whole log)": projection_calls(whole, threads),
    }


async def measure_projection(
    small: SQLiteStore, large: SQLiteStore, samples: int
) -> dict[str, tuple[float, float]]:
    at_small = workloads(small, await thread_roots(small, 50), samples)
    at_large = workloads(large, await thread_roots(large, 50), samples)
    return {name: await paired_medians(at_small[name], at_large[name]) for name in at_small}


async def measure_read_before(store: SQLiteStore, samples: int) -> tuple[float, float]:
    """Median read of a page of desk rows, direct and via a worker thread, interleaved so
    that both see the same machine load."""
    view = store.conversation_log(Conversation(desk_id(0), desk_id(0)))
    direct: list[float] = []
    threaded: list[float] = []
    for _ in range(samples):
        started = time.perf_counter()
        await view.read_before(None, 512)
        direct.append(time.perf_counter() - started)
        started = time.perf_counter()
        await asyncio.to_thread(view.read_before_now, None, 512)  # type: ignore[attr-defined]
        threaded.append(time.perf_counter() - started)
    return statistics.median(direct) * 1000, statistics.median(threaded) * 1000


async def post_many(store: SQLiteStore, writer: int, posts: int) -> None:
    for i in range(posts):
        await store.post(f"agent:agent-{writer}", f"writer {writer} post {i}", desk=desk_id(writer))


def one_process_rate(store: SQLiteStore, posts: int) -> float:
    started = time.perf_counter()
    asyncio.run(post_many(store, 0, posts))
    return posts / (time.perf_counter() - started)


def _writer(path: str, writer: int, posts: int, start: Event) -> None:
    store = SQLiteStore(path)
    start.wait()
    asyncio.run(post_many(store, writer, posts))
    store.close()


def many_process_rate(path: Path, store: SQLiteStore, posts: int) -> tuple[float, str]:
    first = asyncio.run(store.last_sequence()) or 0
    context = multiprocessing.get_context("spawn")
    start = context.Event()
    workers = [
        context.Process(target=_writer, args=(str(path), w + 1, posts, start))
        for w in range(WRITERS)
    ]
    for worker in workers:
        worker.start()
    time.sleep(1.0)  # let every writer import and open the store before the clock starts
    started = time.perf_counter()
    start.set()
    for worker in workers:
        worker.join()
    elapsed = time.perf_counter() - started
    rows = store._db.execute(
        "SELECT sequence, content FROM messages WHERE sequence > ? ORDER BY sequence", (first,)
    ).fetchall()
    expected = {f"writer {w + 1} post {i}" for w in range(WRITERS) for i in range(posts)}
    contents = [content for _, content in rows]
    sequences = [sequence for sequence, _ in rows]
    lost = len(expected - set(contents))
    duplicated = len(contents) - len(set(contents))
    gaps = sequences != list(range(first + 1, first + 1 + len(sequences)))
    failed = [w.exitcode for w in workers if w.exitcode != 0]
    verdict = (
        f"{len(rows)} rows, {lost} lost, {duplicated} duplicated, "
        f"sequences {'with gaps' if gaps else 'contiguous'}, {len(failed)} writers failed"
    )
    ok = not (lost or duplicated or gaps or failed)
    return WRITERS * posts / elapsed, ("ok: " if ok else "FAILED: ") + verdict


async def staff(store: SQLiteStore) -> None:
    for i in range(AGENTS):
        await store.add_agent(f"agent-{i}", f"Agent {i}")
    for d in range(DESKS):
        await store.create_desk(desk_id(d))


def verdict(ok: bool) -> str:
    return "meets target" if ok else "MISSES target"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=LARGE_ROWS, help="rows in the large log")
    parser.add_argument("--samples", type=int, default=SAMPLES, help="timed calls per median")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="coderooms-bench-") as tmp:
        small, small_build = build(Path(tmp) / "small.db", SMALL_ROWS)
        large_path = Path(tmp) / "large.db"
        large, large_build = build(large_path, args.rows)
        print(
            f"built {SMALL_ROWS:,} rows in {small_build:.1f} s, {args.rows:,} rows in {large_build:.1f} s"
        )

        medians = asyncio.run(measure_projection(small, large, args.samples))
        print(f"\nproject_session, window {WINDOW}, median of {args.samples} (ms)")
        print(f"{'':24}{SMALL_ROWS:>12,}{args.rows:>12,}{'ratio':>8}")
        passed = True
        for name, (at_small, at_large) in medians.items():
            ratio = at_large / at_small
            print(f"{name:24}{at_small:>12.3f}{at_large:>12.3f}{ratio:>8.2f}")
            if "view" in name:
                passed &= at_large <= TARGET_MEDIAN_MS and ratio <= TARGET_RATIO
        print(
            f"scoped views: median ≤ {TARGET_MEDIAN_MS} ms and ratio ≤ {TARGET_RATIO}: "
            + verdict(passed)
        )

        direct, threaded = asyncio.run(measure_read_before(large, args.samples))
        print(
            f"\nread_before on a desk view, median (ms): direct {direct:.3f}, "
            f"asyncio.to_thread {threaded:.3f} (ratio {threaded / direct:.2f})"
        )

        asyncio.run(staff(large))
        rate = one_process_rate(large, POSTS_ONE_PROCESS)
        rate_ok = rate >= TARGET_POSTS_PER_SECOND
        print(
            f"\nposts/s, 1 process ({POSTS_ONE_PROCESS:,} posts): {rate:,.0f}  {verdict(rate_ok)}"
        )
        many, check = many_process_rate(large_path, large, POSTS_PER_WRITER)
        print(f"posts/s, {WRITERS} processes ({POSTS_PER_WRITER:,} each): {many:,.0f}  {check}")
        small.close()
        large.close()
    return 0 if passed and rate_ok and check.startswith("ok") else 1


if __name__ == "__main__":
    sys.exit(main())
