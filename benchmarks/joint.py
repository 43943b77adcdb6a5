"""Focus over the room on the SWE-bench development set: code and discussion in one budget.

One command::

    .venv/bin/python benchmarks/joint.py [--desk 2000] [--repo psf/requests] [--out r.json]

For each instance of ``../shared/bench/swe-bench-dev.jsonl`` (checked out as
``benchmarks/localize.py`` does), a synthetic desk of ``--desk`` messages is built in a
fresh embedded store: three messages (a root and two replies) where teammates discuss the
bug and name the gold function (or file), forty that name other functions of the same
repository, and conversation turns from ``../shared/bench/locomo-dev.json`` as unrelated
chatter, in sessions of :data:`SESSION_MESSAGES` two hours apart; the discussion sits
outside the newest window. Then focus runs with the problem statement as the goal and a
budget of 8,000 tokens three ways: plainly, with an unrelated desk (the same desk without
its three discussing messages) and with the discussing desk (the path ``focus --desk``
takes), and the run prints, side by side for the three:

* file Acc@1/3/5 and function Acc@5/10 of the code ranking (``benchmarks/localize.py``'s
  scoring), with the code the desk's messages name lifted as focus lifts it;
* budget recall (the share of labelled instances whose every gold function's code is
  loaded);
* how many code nodes the messages lifted, and how often all three discussing messages,
  and at least one, are in the answer;
* warm latency p50 of focus without and with the discussing desk, and their ratio.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # as the command line runs (launch.py)
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

from localize import (  # noqa: E402
    BENCH_DIR,
    BUDGET_TOKENS,
    DATA_FILE,
    FILE_KS,
    FUNCTION_KS,
    MIRROR_DIR,
    RANK_DEPTH,
    Instance,
    checkout,
    load_instances,
    score_rankings,
)

SESSION_MESSAGES = 20
"""Messages of one synthetic session; sessions are two hours apart."""
SESSION_GAP_S = 2 * 3600
DISTRACTORS = 40
"""Messages naming other functions of the repository."""
WARM_RUNS = 3
LOCOMO_FILE = "locomo-dev.json"


def chatter(bench: Path) -> list[tuple[str, str]]:
    """(speaker, text) of every LoCoMo turn: unrelated conversation to fill a desk."""
    turns: list[tuple[str, str]] = []
    for sample in json.loads((bench / LOCOMO_FILE).read_text()):
        conv = sample["conversation"]
        k = 1
        while f"session_{k}" in conv:
            turns.extend((t["speaker"], t["text"]) for t in conv[f"session_{k}"])
            k += 1
    return turns


def synthetic_desk(
    inst: Instance, symbols: list[tuple[str, str]], filler: list[tuple[str, str]], size: int
) -> tuple[list[tuple[str, str, int | None]], list[int]]:
    """(author, text, parent position) rows of a desk, and the positions of the three
    messages that discuss the bug."""
    rng = random.Random(inst.instance_id)
    gold = inst.gold_functions[0] if inst.gold_functions else inst.gold_files[0]
    path, _, qualname = gold.partition("::")
    name = qualname or path
    title = " ".join(inst.problem_statement.split())[:80]
    discussing = [
        ("dana", f"Looked into '{title}': I think the problem is in {name} in {path}.", None),
        ("eli", f"Makes sense; {name.rpartition('.')[2]} changed when we reworked that.", 0),
        ("dana", f"Whoever fixes it: {name} needs a regression test too.", 0),
    ]
    others = [s for s in symbols if s[1] != gold and not s[1].startswith(path + "::")]
    rng.shuffle(others)
    distract = [
        ("eli", f"Refactored {qual} in {sym.partition('::')[0]}, no behaviour change.", None)
        for qual, sym in others[:DISTRACTORS]
    ]
    start = rng.randrange(filler and len(filler) or 1)
    rows: list[tuple[str, str, int | None]] = [
        (filler[(start + i) % len(filler)][0].lower(), filler[(start + i) % len(filler)][1], None)
        for i in range(max(0, size - len(distract) - len(discussing)))
    ]
    for row in distract:
        rows.insert(rng.randrange(len(rows) + 1), row)
    # the discussion sits together, before the newest window (the last 30 messages)
    at = rng.randrange(max(1, len(rows) - 40))
    for offset, (author, text, parent) in enumerate(discussing):
        rows.insert(at + offset, (author, text, None if parent is None else at + parent))
    return rows, [at, at + 1, at + 2]


async def _store_with(rows: list[tuple[str, str, int | None]], path: Path) -> Any:
    from coderooms.rooms.records import LogMessage, Person
    from coderooms.store import open_store

    store = open_store(f"sqlite:///{path}")
    people = sorted({author for author, _, _ in rows})
    for person in people:
        await store.add_person(person, person.title())
    desk = await store.create_desk("work")
    messages = []
    for i, (author, text, parent) in enumerate(rows):
        session, turn = divmod(i, SESSION_MESSAGES)
        moment = 1_700_000_000 + session * SESSION_GAP_S + turn * 30
        stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(moment))
        messages.append(
            LogMessage(
                sequence=i + 1,
                author=Person(author, author.title()),
                content=text,
                chat_id=desk.id,
                parent=None if parent is None else parent + 1,
                posted_at=stamp,
            )
        )
    store.import_messages(messages)
    return store, desk


def unrelated(
    rows: list[tuple[str, str, int | None]], discussing: list[int]
) -> list[tuple[str, str, int | None]]:
    """The desk without its three discussing messages: chatter and other functions only
    (no row of it has a parent)."""
    return [row for i, row in enumerate(rows) if i not in set(discussing)]


ARMS = ("plain", "unrelated", "desk")
"""No desk; a desk that never discusses the bug; the desk that does."""


def evaluate(inst: Instance, mirrors: Path, filler: list[tuple[str, str]], size: int) -> dict:
    from coderooms.deskrecall import DeskRecall, focus_over_desk
    from coderooms.workspace import Workspace

    with tempfile.TemporaryDirectory(prefix="coderooms-joint-") as tmp:
        root, _ = checkout(mirrors, inst.repo, inst.base_commit, Path(tmp) / "repo")
        workspace = Workspace.open(root)
        workspace.index()
        engine = workspace.focus_engine()
        goal = inst.problem_statement
        known = {n.id for n in engine.graph.nodes}
        needed = [g if g in known else g.split("::")[0] for g in inst.gold_functions]
        symbols = sorted(
            (n.qualname, n.id) for n in engine.graph.nodes if n.kind in ("function", "method")
        )
        rows, discussing = synthetic_desk(inst, symbols, filler, size)
        plain = engine.focus(goal, budget=BUDGET_TOKENS)
        plain_ms, plain_cpu = [], []
        for _ in range(WARM_RUNS):
            engine.forget()  # warm, not memoised: the engine remembers its last goals
            began, cpu = time.perf_counter(), time.process_time()
            engine.focus(goal, budget=BUDGET_TOKENS)
            plain_ms.append((time.perf_counter() - began) * 1000)
            plain_cpu.append((time.process_time() - cpu) * 1000)

        async def with_desk(
            desk_rows: list[tuple[str, str, int | None]], name: str, timed: bool
        ) -> tuple[dict, Any, tuple, list[tuple[float, float]]]:
            store, desk = await _store_with(desk_rows, Path(tmp) / f"{name}.db")
            recall = DeskRecall.with_model()
            held: list[Any] = []

            async def code(budget: int, discussed: tuple = ()) -> dict[str, Any]:
                held.append((engine.focus(goal, budget=budget, discussed=discussed), discussed))
                return held[-1][0].to_json()

            symbols_in = recall.symbols_of(engine.graph)
            mentions = recall.mentions_of(engine.graph)

            async def once() -> dict[str, Any]:
                return await focus_over_desk(
                    store,
                    desk,
                    recall,
                    goal,
                    BUDGET_TOKENS,
                    "set",
                    code,
                    symbols_in=symbols_in,
                    mentions=mentions,
                )

            out = await once()
            times = []
            for _ in range(WARM_RUNS if timed else 0):
                engine.forget()
                recall.forget_goals()
                began, cpu = time.perf_counter(), time.process_time()
                await once()
                times.append(
                    ((time.perf_counter() - began) * 1000, (time.process_time() - cpu) * 1000)
                )
            store.close()
            return out, held[0][0], held[0][1], times

        row: dict[str, Any] = {
            "instance_id": inst.instance_id,
            "repo": inst.repo,
            "labelled": bool(needed),
        }
        results = {"plain": (plain, ())}
        out, coded, discussed, desk_ms = asyncio.run(with_desk(rows, "desk", True))
        results["desk"] = (coded, discussed)
        _, coded_u, discussed_u, _ = asyncio.run(
            with_desk(unrelated(rows, discussing), "unrelated", False)
        )
        results["unrelated"] = (coded_u, discussed_u)
        for arm in ARMS:
            result, seeds = results[arm]
            files = engine.rank_files(goal, seeds)[:RANK_DEPTH]
            functions = engine.rank_functions(goal, seeds)[:RANK_DEPTH]
            for key, value in score_rankings(inst, files, functions).items():
                row[f"{arm}:{key}"] = value
            covered = result.covered_ids()
            row[f"{arm}:budget_recall"] = all(n in covered for n in needed) if needed else None
            row[f"{arm}:discussed"] = len(seeds)
        sent = {m["sequence"] for m in out["discussion"]["messages"]}
        wanted = {p + 1 for p in discussing}
        workspace.close()
        row.update(
            {
                "all_sent": wanted <= sent,
                "any_sent": bool(wanted & sent),
                "desk_tokens": out["discussion"]["tokens"],
                "plain_ms": statistics.median(plain_ms),
                "desk_ms": statistics.median(wall for wall, _ in desk_ms),
                "plain_cpu_ms": statistics.median(plain_cpu),
                "desk_cpu_ms": statistics.median(cpu for _, cpu in desk_ms),
            }
        )
        return row


def _mean(values: list[Any]) -> float:
    kept = [float(v) for v in values if v is not None]
    return sum(kept) / len(kept) if kept else float("nan")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--data", type=Path, default=BENCH_DIR / DATA_FILE)
    parser.add_argument("--mirrors", type=Path, default=MIRROR_DIR)
    parser.add_argument("--desk", type=int, default=2000, help="messages in the desk")
    parser.add_argument("--repo", action="append", help="only these repositories")
    parser.add_argument("--instance", action="append", help="only these instance ids")
    parser.add_argument("--limit", type=int, help="only the first N instances")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    instances = load_instances(args.data)
    if args.repo:
        instances = [i for i in instances if i.repo in set(args.repo)]
    if args.instance:
        instances = [i for i in instances if i.instance_id in set(args.instance)]
    if args.limit is not None:
        instances = instances[: args.limit]
    if not instances:
        raise SystemExit("no instance matches")
    filler = chatter(args.data.parent)
    rows = []
    for n, inst in enumerate(instances, 1):
        row = evaluate(inst, args.mirrors, filler, args.desk)
        rows.append(row)
        if args.out:  # a long run keeps the instances it has done
            args.out.write_text(json.dumps({"instances": rows}, indent=1))
        print(
            f"[{n}/{len(instances)}] {inst.instance_id:<36} all sent {row['all_sent']!s:<5} "
            f"budget {row['plain:budget_recall']!s:<5}/{row['desk:budget_recall']!s:<5} "
            f"file@1 {row['plain:file_acc@1']!s:<5}/{row['unrelated:file_acc@1']!s:<5}"
            f"/{row['desk:file_acc@1']!s:<5} "
            f"warm {row['plain_ms']:.0f}/{row['desk_ms']:.0f} ms",
            file=sys.stderr,
            flush=True,
        )
    plain = [r["plain_ms"] for r in rows]
    desk = [r["desk_ms"] for r in rows]
    figures = [f"file_acc@{k}" for k in FILE_KS] + [f"func_acc@{k}" for k in FUNCTION_KS]
    figures.append("budget_recall")
    summary: dict[str, Any] = {"instances": len(rows), "desk_messages": args.desk}
    for figure in figures:
        for arm in ARMS:
            summary[f"{arm}:{figure}"] = _mean([r[f"{arm}:{figure}"] for r in rows])
    summary.update(
        {
            "all_discussing_sent": _mean([r["all_sent"] for r in rows]),
            "any_discussing_sent": _mean([r["any_sent"] for r in rows]),
            "desk_tokens_p50": statistics.median(r["desk_tokens"] for r in rows),
            "discussed_nodes_p50": statistics.median(r["desk:discussed"] for r in rows),
            "unrelated_discussed_nodes_p50": statistics.median(
                r["unrelated:discussed"] for r in rows
            ),
            "warm_ms_p50": statistics.median(plain),
            "warm_ms_desk_p50": statistics.median(desk),
            "warm_ratio_p50": statistics.median(d / p for d, p in zip(desk, plain, strict=True)),
            "warm_cpu_ms_p50": statistics.median(r["plain_cpu_ms"] for r in rows),
            "warm_cpu_ms_desk_p50": statistics.median(r["desk_cpu_ms"] for r in rows),
            "warm_cpu_ratio_p50": statistics.median(
                r["desk_cpu_ms"] / max(r["plain_cpu_ms"], 1e-3) for r in rows
            ),
            "load_average": os.getloadavg(),
        }
    )
    print(f"{len(rows)} instances, a desk of {args.desk} messages each")
    print(f"{'':<16}{'no desk':>10}{'unrelated':>11}{'discussing':>12}")
    for figure in figures:
        cells = "".join(
            f"{summary[f'{arm}:{figure}']:>{w}.3f}"
            for arm, w in zip(ARMS, (10, 11, 12), strict=True)
        )
        print(f"{figure:<16}{cells}")
    print(
        f"code the desk's messages lifted (median nodes): discussing "
        f"{summary['discussed_nodes_p50']}, unrelated {summary['unrelated_discussed_nodes_p50']}"
    )
    print(
        f"discussion in the answer: all three {summary['all_discussing_sent']:.3f}, "
        f"at least one {summary['any_discussing_sent']:.3f} "
        f"(median {summary['desk_tokens_p50']} tokens)"
    )
    print(
        f"warm focus p50: {summary['warm_ms_p50']:.1f} ms without, "
        f"{summary['warm_ms_desk_p50']:.1f} ms with the desk "
        f"(median ratio {summary['warm_ratio_p50']:.2f}x)"
    )
    print(
        f"warm focus CPU p50: {summary['warm_cpu_ms_p50']:.1f} ms without, "
        f"{summary['warm_cpu_ms_desk_p50']:.1f} ms with the desk "
        f"(median ratio {summary['warm_cpu_ratio_p50']:.2f}x); load average "
        + " ".join(f"{x:.1f}" for x in summary["load_average"])
    )
    if args.out:
        args.out.write_text(json.dumps({"summary": summary, "instances": rows}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
