"""The SQLite and PostgreSQL stores side by side, in one run.

One command::

    .venv/bin/python benchmarks/stores.py [--rows 1000000] [--samples 200]
        [--posts 1000] [--writers 4] [--host-posts 2000] [--deliveries 200]

PostgreSQL runs on a throwaway cluster this script starts and stops (durable settings:
fsync on, synchronous commits). For each store it reports:

* median ``project_session`` (window 30, desk view) and median desk search over a full
  2,048-row scan, on a log of ``--rows`` rows (the log of ``benchmarks/rooms.py``);
* posts per second from 1 process and from 8 processes at once;
* two "hosts" (two groups of processes, each its own connections) x ``--writers`` writer
  processes x ``--host-posts`` posts, with a reader polling the tail throughout: rows
  lost, rows duplicated, and any row that appeared below one the reader had already seen;
* live delivery: a post on host A, a waiting ``wait_for_rows`` on host B; p50/p99 from
  the post call to B's wake-up;
* kill -9 of one writer of host A and then of all of host B mid-run: how many
  acknowledged posts are missing afterwards.

Ratios are PostgreSQL against SQLite from the same run. Targets (issue 19): projection
<= 5 ms and search <= 20 ms median at 1M rows, 0 lost, 0 duplicated, 0 out of order,
0 acknowledged posts missing after kill -9.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import multiprocessing
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from multiprocessing.synchronize import Event
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from coderooms.rooms.records import Conversation, SessionQuery  # noqa: E402
from coderooms.rooms.search import SearchPattern, SearchQuery, search_messages  # noqa: E402
from coderooms.rooms.session import project_session  # noqa: E402
from coderooms.store import open_store  # noqa: E402
from coderooms.store.base import Store  # noqa: E402
from coderooms.store.scratch import ScratchCluster  # noqa: E402
from rooms import DESKS, SEED, WINDOW, desk_id, generate  # noqa: E402

ROWS = 1_000_000
SAMPLES = 200
POSTS = 1_000
MANY_PROCESSES = 8
HOST_WRITERS = 4
HOST_POSTS = 2_000
DELIVERIES = 200
AGENTS = 10
KILL_AFTER_ACKS = 20
"""Posts each writer has acknowledged before the first kill -9."""
KILL_WAIT_S = 60.0
"""The longest the kill waits for that."""
KILL_GAP_S = 0.5
"""Between killing the writer of host A and the writers of host B."""
TARGET_PROJECTION_MS = 5.0
TARGET_SEARCH_MS = 20.0

Call = Callable[[], Awaitable[object]]


async def median_ms(calls: list[Call]) -> float:
    for call in calls[:10]:
        await call()
    timings = []
    for call in calls:
        started = time.perf_counter()
        await call()
        timings.append((time.perf_counter() - started) * 1000)
    return statistics.median(timings)


async def staff(store: Store) -> None:
    roster = await store.roster()
    for agent in range(AGENTS):
        if roster.member(f"agent-{agent}") is None:
            await store.add_agent(f"agent-{agent}")
    desks = await store.desks()
    for index in range(DESKS):
        if not any(d.id == desk_id(index) for d in desks.desks()):
            await store.create_desk(desk_id(index))


async def reads(store: Store, samples: int) -> tuple[float, float]:
    rng = random.Random(SEED)
    desks = [Conversation(d, d) for d in (desk_id(rng.randrange(DESKS)) for _ in range(samples))]
    literal = SearchPattern.parse("deploy review")

    def project(conversation: Conversation) -> Call:
        view = store.conversation_log(conversation)
        return lambda: project_session(view, SessionQuery(conversation, None, WINDOW))

    def search(conversation: Conversation) -> Call:
        view = store.conversation_log(conversation)
        return lambda: search_messages(view, SearchQuery(literal, scope=conversation))

    return await median_ms([project(c) for c in desks]), await median_ms([search(c) for c in desks])


async def post_many(store: Store, writer: int, posts: int, tag: str) -> None:
    for n in range(posts):
        await store.post(
            f"agent:agent-{writer % AGENTS}",
            f"{tag} writer {writer} post {n}",
            desk=desk_id(writer % DESKS),
            idempotency_key=f"{tag}-{writer}-{n}",
        )


def _writer(url: str, writer: int, posts: int, tag: str, start: Event) -> None:
    store = open_store(url)
    start.wait()
    asyncio.run(post_many(store, writer, posts, tag))
    store.close()


def posts_per_second(url: str, processes: int, posts: int, tag: str) -> float:
    context = multiprocessing.get_context("spawn")
    start = context.Event()
    workers = [
        context.Process(target=_writer, args=(url, w, posts, tag, start)) for w in range(processes)
    ]
    for worker in workers:
        worker.start()
    time.sleep(2.0)  # let every process import and connect before the clock starts
    started = time.perf_counter()
    start.set()
    for worker in workers:
        worker.join()
    return processes * posts / (time.perf_counter() - started)


async def two_hosts(url: str, writers: int, posts: int) -> tuple[int, int, int, int]:
    """(rows expected, lost, duplicated, seen out of order) for 2 hosts x writers."""
    context = multiprocessing.get_context("spawn")
    start = context.Event()
    workers = [
        context.Process(target=_writer, args=(url, w, posts, f"host{w % 2}", start))
        for w in range(2 * writers)
    ]
    reader = open_store(url)
    first = await reader.last_sequence() or 0
    for worker in workers:
        worker.start()
    time.sleep(2.0)
    start.set()
    seen: list[int] = []
    newest = first
    out_of_order = 0
    while any(w.is_alive() for w in workers) or len(seen) < 2 * writers * posts:
        page = await reader.read_before(None, 4096)
        known = set(seen)
        for message in page.messages:
            if message.sequence > newest:
                continue
            if message.sequence > first and message.sequence not in known:
                out_of_order += 1  # a new row below one already seen
        fresh = sorted(m.sequence for m in page.messages if m.sequence > newest)
        seen.extend(fresh)
        newest = max([newest, *fresh])
        if not any(w.is_alive() for w in workers) and not fresh:
            break
        await asyncio.sleep(0.002)
    for worker in workers:
        worker.join()
    rows = []
    cursor = None
    while True:
        page = await reader.read_before(cursor, 4096)
        rows.extend(m for m in page.messages if m.sequence > first)
        if page.next_before is None or page.next_before <= first + 1:
            break
        cursor = page.next_before
    reader.close()
    contents = [m.content for m in rows]
    expected = 2 * writers * posts
    wanted = {f"host{w % 2} writer {w} post {n}" for w in range(2 * writers) for n in range(posts)}
    lost = len(wanted - set(contents))
    duplicated = len(contents) - len(set(contents))
    return expected, lost, duplicated, out_of_order


def _waiter(url: str, count: int, ready: Event, results: multiprocessing.Queue) -> None:  # type: ignore[type-arg]
    async def go() -> None:
        store = open_store(url)
        newest = await store.last_sequence()
        await store.wait_for_rows(newest, 0.01)  # start the feed
        ready.set()
        for _ in range(count):
            got = await store.wait_for_rows(newest, 30.0)
            woke = time.time()
            if got is None or (newest is not None and got <= newest):
                results.put(None)
                continue
            message = await store.message(got)
            newest = got
            sent = float(message.content.split()[1]) if message is not None else woke
            results.put(woke - sent)
        store.close()

    asyncio.run(go())


async def live_delivery(url: str, count: int) -> tuple[float, float]:
    """p50/p99 ms from a post on host A to the waiting store on host B waking."""
    context = multiprocessing.get_context("spawn")
    ready = context.Event()
    results: multiprocessing.Queue = context.Queue()  # type: ignore[type-arg]
    waiter = context.Process(target=_waiter, args=(url, count, ready, results))
    waiter.start()
    ready.wait(60)
    poster = open_store(url)
    latencies: list[float] = []
    for n in range(count):
        await poster.post("agent:agent-0", f"sent {time.time():.6f} n{n}", desk=desk_id(0))
        latency = results.get(timeout=60)
        if latency is not None:
            latencies.append(latency * 1000)
    waiter.join(60)
    poster.close()
    latencies.sort()
    return statistics.median(latencies), latencies[
        min(len(latencies) - 1, int(0.99 * len(latencies)))
    ]


def _acking_writer(url: str, writer: int, posts: int, acks: str) -> None:
    """Posts, writing each acknowledged post's content to ``acks`` as it returns."""

    async def go() -> None:
        store = open_store(url)
        with open(acks, "a", encoding="utf-8") as out:
            for n in range(posts):
                content = f"kill writer {writer} post {n}"
                await store.post(f"agent:agent-{writer}", content, desk=desk_id(writer))
                out.write(content + "\n")
                out.flush()

    asyncio.run(go())


async def killed_mid_run(url: str, tmp: str, posts: int) -> tuple[int, int]:
    """4 writers, 2 per host; kill -9 one writer of host A, then both of host B. The
    acknowledged posts, and how many of them are missing afterwards."""
    context = multiprocessing.get_context("spawn")
    acks = [str(Path(tmp) / f"acks-{w}.txt") for w in range(4)]
    workers = [
        context.Process(target=_acking_writer, args=(url, w, posts, acks[w])) for w in range(4)
    ]
    for worker in workers:
        worker.start()
    # kill once every writer is writing (each has acknowledged a few posts)
    deadline = time.monotonic() + KILL_WAIT_S
    while time.monotonic() < deadline and not all(
        Path(path).exists() and len(Path(path).read_text().splitlines()) >= KILL_AFTER_ACKS
        for path in acks
    ):
        time.sleep(0.05)
    workers[0].kill()
    time.sleep(KILL_GAP_S)
    for worker in workers[2:]:
        worker.kill()
    for worker in workers:
        worker.join()
    acknowledged: list[str] = []
    for path in acks:
        with contextlib.suppress(FileNotFoundError):
            acknowledged += Path(path).read_text(encoding="utf-8").splitlines()
    store = open_store(url)
    stored: set[str] = set()
    cursor = None
    while True:
        page = await store.read_before(cursor, 4096)
        stored.update(m.content for m in page.messages if m.content.startswith("kill "))
        if page.next_before is None or not any(
            m.content.startswith("kill ") for m in page.messages
        ):
            break
        cursor = page.next_before
    store.close()
    return len(acknowledged), sum(1 for content in acknowledged if content not in stored)


async def measure(url: str, store: Store, args: argparse.Namespace) -> dict[str, float]:
    figures: dict[str, float] = {}
    figures["projection ms"], figures["search ms"] = await reads(store, args.samples)
    figures["posts/s, 1 process"] = posts_per_second(url, 1, args.posts, "one")
    figures["posts/s, 8 processes"] = posts_per_second(
        url, MANY_PROCESSES, args.posts // 4, "eight"
    )
    expected, lost, duplicated, disorder = await two_hosts(url, args.writers, args.host_posts)
    figures["2 hosts: rows"] = expected
    figures["2 hosts: lost"] = lost
    figures["2 hosts: duplicated"] = duplicated
    figures["2 hosts: out of order"] = disorder
    figures["live p50 ms"], figures["live p99 ms"] = await live_delivery(url, args.deliveries)
    with tempfile.TemporaryDirectory() as tmp:
        acked, missing = await killed_mid_run(url, tmp, args.posts)
    figures["kill -9: acknowledged"] = acked
    figures["kill -9: missing"] = missing
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=ROWS)
    parser.add_argument("--samples", type=int, default=SAMPLES)
    parser.add_argument("--posts", type=int, default=POSTS)
    parser.add_argument("--writers", type=int, default=HOST_WRITERS)
    parser.add_argument("--host-posts", type=int, default=HOST_POSTS)
    parser.add_argument("--deliveries", type=int, default=DELIVERIES)
    args = parser.parse_args()
    results: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory() as tmp, ScratchCluster() as cluster:
        urls = {"sqlite": f"sqlite:///{Path(tmp) / 'rooms.db'}", "postgres": cluster.url()}
        for kind, url in urls.items():
            store = open_store(url)
            started = time.perf_counter()
            store.import_messages(generate(args.rows))
            asyncio.run(staff(store))
            print(f"{kind}: imported {args.rows:,} rows in {time.perf_counter() - started:.1f} s")
            results[kind] = asyncio.run(measure(url, store, args))
            store.close()
            print(f"{kind}: " + ", ".join(f"{k} {v:,.2f}" for k, v in results[kind].items()))
    print()
    print(f"{'':28} {'sqlite':>12} {'postgres':>12} {'pg/sqlite':>10}")
    for name in results["sqlite"]:
        lite, pg = results["sqlite"][name], results["postgres"][name]
        ratio = f"{pg / lite:.2f}" if lite else "-"
        print(f"{name:28} {lite:12,.2f} {pg:12,.2f} {ratio:>10}")
    for kind, figures in results.items():
        verdict = (
            figures["projection ms"] <= TARGET_PROJECTION_MS
            and figures["search ms"] <= TARGET_SEARCH_MS
            and figures["2 hosts: lost"] == 0
            and figures["2 hosts: duplicated"] == 0
            and figures["2 hosts: out of order"] == 0
            and figures["kill -9: missing"] == 0
        )
        print(f"{kind}: targets {'met' if verdict else 'NOT met'}")


if __name__ == "__main__":
    main()
