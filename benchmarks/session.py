"""Focus sessions replayed over the SWE-bench development set: tokens, recall, thrash, drift.

One command::

    .venv/bin/python benchmarks/session.py [--repo psf/requests] [--limit N] [--out r.json]

For each instance of ``../shared/bench/swe-bench-dev.jsonl`` (see ``benchmarks/localize.py``
for the data, the mirrors and the checkout), a scripted session of four ``focus`` calls
at the same per-call budget: the problem statement, then up to three narrower goals
derived from it alone (never from the patch): its title, its code identifiers and its
error text. A statement with no code identifiers or no error line has no such goal: the
session skips it rather than ask the title again (a goal asked twice word for word is a
repeat, not progress). The session runs twice, with a working set (``focus_in_session``)
and without (each call independent), and reports in one run:

- tokens sent over the session with the working set vs without (their ratio), and the
  gold functions the agent holds at the end (covered by what it was sent, or resident);
- thrash: a session asking the problem's title reworded five times — the call that first
  reports thrash (detected by the 3rd call?) — and false alarms over the progressing
  calls, with how many alarms fell on a call that sent any new code (all of it past the
  knee: the detector's value of information is the salience added ahead of it), and both
  figures per repository (the detector has no tuned constant, so each repository is its
  own held-out fold);
- drift: after the session, each resident file is edited in the checkout (a line
  appended); the next call must report every resident node of an edited file as stale;
- the time a working-set-aware ``set`` and a ``status`` add to a warm focus (p50), in the
  pure runtime (against the engine's focus) and through ``focus_call`` with the session
  in a SQLite store (against the workspace's stateless focus, which checks its files
  first as a session ``set`` does), wall and CPU time, with the load average.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from localize import BENCH_DIR, DATA_FILE, MIRROR_DIR, Instance, checkout, load_instances  # noqa: E402

BUDGET_TOKENS = 8_000
SESSION_BUDGET = 64_000
IDENTIFIERS_KEPT = 12
ERROR_LINES_KEPT = 3
REWORDINGS = 5
TIMING_REPEATS = 5
TOKEN_RATIO_TARGET = 0.6
THRASH_BY_CALL = 3
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_.]*")
_ERROR = re.compile(r"(Error|Exception|Traceback|Warning|raise|fails?|crash)", re.IGNORECASE)


def title_of(statement: str) -> str:
    return next((line.strip() for line in statement.splitlines() if line.strip()), statement)


def identifiers_of(statement: str) -> str:
    """The statement's code identifiers ("" when it names none)."""
    from coderooms.focus.text import is_code_like

    seen: list[str] = []
    for word in _WORD.findall(statement):
        if is_code_like(word) and word not in seen:
            seen.append(word)
    return " ".join(seen[:IDENTIFIERS_KEPT])


def error_text_of(statement: str) -> str:
    """The statement's error lines ("" when it has none)."""
    lines = [line.strip() for line in statement.splitlines() if _ERROR.search(line)]
    return "\n".join(lines[:ERROR_LINES_KEPT])


def scripted_goals(statement: str) -> list[str]:
    """The progressing session: the statement, its title, identifiers and error text,
    each goal once (a missing or already asked one is skipped)."""
    goals = [statement, title_of(statement), identifiers_of(statement), error_text_of(statement)]
    return list(dict.fromkeys(g for g in goals if g.strip()))


def reworded(statement: str) -> list[str]:
    """One question asked :data:`REWORDINGS` times in other words: the title, then its
    words reordered, cut and repeated."""
    words = title_of(statement).split()
    out = [" ".join(words)]
    out.append(" ".join(reversed(words)))
    out.append("why does " + " ".join(words) + " happen")
    out.append(" ".join(words[len(words) // 2 :] + words[: len(words) // 2]))
    out.append("again: " + " ".join(words) + "?")
    return out[:REWORDINGS]


def _held(engine: Any, ids: set[str]) -> set[str]:
    """``ids`` and every node inside one of them (what holding their full code covers,
    as ``covered_ids`` counts it for a stateless focus)."""
    out: set[str] = set()
    stack = list(ids)
    while stack:
        node_id = stack.pop()
        if node_id in out:
            continue
        out.add(node_id)
        stack.extend(c.id for c in engine.index.children_of(node_id))
    return out


def _traced(answer: Any) -> dict[str, Any]:
    """What the thrash detector saw in one call: its value of information (the salience
    added ahead of the knee), the salience added in all, the code it sent, the streak."""
    value = answer.value
    return {
        "core": None if value is None else round(value.core, 6),
        "added": None if value is None else round(value.added, 6),
        "sent": len(answer.result.packing.loaded),
        "streak": answer.state.low_value_streak,
        "thrash": answer.thrash is not None,
    }


def replay(inst: Instance, mirrors: Path) -> dict[str, Any]:
    from coderooms.focus.session import focus_in_session, session_status
    from coderooms.focus.workingset import WorkingSet
    from coderooms.sessions import focus_call
    from coderooms.store.sqlite import SQLiteStore
    from coderooms.workspace import Workspace

    with tempfile.TemporaryDirectory(prefix="coderooms-session-") as tmp:
        root, _missing = checkout(mirrors, inst.repo, inst.base_commit, Path(tmp))
        workspace = Workspace.open(root)
        workspace.index()
        engine = workspace.focus_engine()
        known = {n.id for n in engine.graph.nodes}
        needed = {g if g in known else g.split("::")[0] for g in inst.gold_functions}
        goals = scripted_goals(inst.problem_statement)

        plain_tokens, plain_held = 0, set()
        for goal in goals:
            result = engine.focus(goal, budget=BUDGET_TOKENS)
            plain_tokens += result.budget_used
            plain_held |= set(result.covered_ids())
        ws = WorkingSet("bench", "progressing", SESSION_BUDGET)
        ws_tokens, false_alarms, alarms_sending, trace = 0, 0, 0, []
        for goal in goals:
            answer = focus_in_session(engine, ws, goal, BUDGET_TOKENS)
            ws = answer.state
            ws_tokens += answer.result.budget_used
            false_alarms += answer.thrash is not None
            alarms_sending += answer.thrash is not None and bool(answer.result.packing.loaded)
            trace.append(_traced(answer))
        full = {r.id for r in ws.resident if r.render == "full"}
        ws_held = _held(engine, full)

        repeat = WorkingSet("bench", "repeating", SESSION_BUDGET)
        thrash_call, repeat_trace = None, []
        for n, goal in enumerate(reworded(inst.problem_statement), 1):
            answer = focus_in_session(engine, repeat, goal, BUDGET_TOKENS)
            repeat = answer.state
            repeat_trace.append(_traced(answer))
            if answer.thrash is not None and thrash_call is None:
                thrash_call = n

        # Warm timing: a stateless focus, a working-set-aware set, a status; and the
        # same two as a user reaches them (focus_call: the session read from a SQLite
        # store, the set saved back only over the working set it read).
        goal = goals[1]
        engine.focus(goal, budget=BUDGET_TOKENS)
        store = SQLiteStore(Path(tmp) / "rooms.db")
        sets = store.working_sets()

        async def direct(work: Any) -> Any:
            return work(workspace)

        async def stored(mode: str) -> Any:
            return await focus_call(
                sets,
                direct,
                ws.agent,
                mode,
                session=ws.session,
                goal=goal if mode == "set" else None,
                budget=BUDGET_TOKENS,
            )

        async def pure(work: Callable[[], Any]) -> Any:
            return work()

        runs: dict[str, Callable[[], Awaitable[Any]]] = {
            "focus": lambda: pure(lambda: engine.focus(goal, budget=BUDGET_TOKENS)),
            # the stateless focus a user reaches: the workspace checks its files first
            "workspace_focus": lambda: pure(lambda: workspace.focus(goal, budget=BUDGET_TOKENS)),
            "set": lambda: pure(lambda: focus_in_session(engine, ws, goal, BUDGET_TOKENS)),
            "status": lambda: pure(lambda: session_status(engine, ws)),
            "stored_set": lambda: stored("set"),
            "stored_status": lambda: stored("status"),
        }
        timings: dict[str, list[float]] = {k: [] for k in runs}
        cpu: dict[str, list[float]] = {k: [] for k in runs}

        async def timed() -> None:
            # one event loop for all, as a server has (its worker threads stay up)
            await sets.save(ws)
            for _ in range(TIMING_REPEATS):  # in turn, so a slower moment hits all alike
                for name, run in runs.items():
                    started, cpu_started = time.perf_counter(), time.process_time()
                    await run()
                    timings[name].append(time.perf_counter() - started)
                    cpu[name].append(time.process_time() - cpu_started)

        asyncio.run(timed())
        store.close()

        # Drift: edit the code of every resident node in the checkout (a comment on a
        # line its sent text holds, so line numbers stay), then call again.
        edits: dict[str, set[int]] = {}
        for r in ws.resident:
            node = engine.graph.node(r.id)
            line = node.start_line
            if r.render == "skeleton" and node.kind == "file":
                children = engine.index.children_of(node.id)
                line = children[0].start_line if children else 1
            edits.setdefault(node.path, set()).add(line)
        for path, lines in edits.items():
            text = (root / path).read_text(encoding="utf-8").split("\n")
            for line in lines:
                text[line - 1] += "  # edited during the session replay"
            (root / path).write_text("\n".join(text), encoding="utf-8")
        changed = {r.id for r in ws.resident}
        answer = workspace.focus_session(ws, goals[0], BUDGET_TOKENS)
        reported = {s.id for s in answer.stale}
        workspace.close()
        return {
            "instance_id": inst.instance_id,
            "repo": inst.repo,
            "plain_tokens": plain_tokens,
            "ws_tokens": ws_tokens,
            "plain_gold_held": len(needed & plain_held),
            "ws_gold_held": len(needed & ws_held),
            "gold": len(needed),
            "thrash_call": thrash_call,
            "false_alarms": false_alarms,
            "false_alarms_sending_code": alarms_sending,
            "progressing_calls": len(goals),
            "progressing_trace": trace,
            "repeating_trace": repeat_trace,
            "drift_expected": len(changed),
            "drift_missed": len(changed - reported),
            "warm_ms": {k: round(statistics.median(v) * 1000, 2) for k, v in timings.items()},
            "warm_cpu_ms": {k: round(statistics.median(v) * 1000, 2) for k, v in cpu.items()},
        }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--data", type=Path, default=BENCH_DIR / DATA_FILE)
    parser.add_argument("--mirrors", type=Path, default=MIRROR_DIR)
    parser.add_argument("--repo", action="append", help="only these repositories")
    parser.add_argument("--limit", type=int, help="at most this many instances per repository")
    parser.add_argument("--out", type=Path, help="write every figure and instance as JSON")
    args = parser.parse_args(argv)
    instances = load_instances(args.data)
    if args.repo:
        instances = [i for i in instances if i.repo in set(args.repo)]
    if args.limit:
        kept: dict[str, int] = {}
        chosen = []
        for inst in instances:
            if kept.get(inst.repo, 0) < args.limit:
                kept[inst.repo] = kept.get(inst.repo, 0) + 1
                chosen.append(inst)
        instances = chosen
    if not instances:
        raise SystemExit("no instance matches")
    rows = []
    for n, inst in enumerate(instances, 1):
        row = replay(inst, args.mirrors)
        rows.append(row)
        print(
            f"[{n}/{len(instances)}] {inst.instance_id:<36} tokens {row['ws_tokens']:>6}/"
            f"{row['plain_tokens']:<6} gold {row['ws_gold_held']}/{row['plain_gold_held']}/"
            f"{row['gold']} thrash@{row['thrash_call']} drift missed {row['drift_missed']}"
            f"/{row['drift_expected']}",
            file=sys.stderr,
            flush=True,
        )
    report = summarize(rows)
    for key, value in report.items():
        if isinstance(value, dict):
            print(key)
            for inner, figure in value.items():
                print(f"  {inner:<32} {figure}")
        else:
            print(f"{key:<34} {value}")
    if args.out:
        args.out.write_text(json.dumps({"summary": report, "instances": rows}, indent=1))
    return 0


def _detected(rows: list[dict[str, Any]]) -> int:
    return sum(
        1 for r in rows if r["thrash_call"] is not None and r["thrash_call"] <= THRASH_BY_CALL
    )


def summarize(rows: list[dict[str, Any]]) -> dict[str, Any]:
    plain = sum(r["plain_tokens"] for r in rows)
    with_ws = sum(r["ws_tokens"] for r in rows)
    ratios = [r["ws_tokens"] / r["plain_tokens"] for r in rows if r["plain_tokens"]]
    detected = _detected(rows)
    calls = sum(r["progressing_calls"] for r in rows)
    alarms = sum(r["false_alarms"] for r in rows)
    folds: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        folds.setdefault(r["repo"], []).append(r)

    def p50(key: str, what: str = "warm_ms") -> float:
        return round(statistics.median(r[what][key] for r in rows), 2)

    return {
        "instances": len(rows),
        "tokens_plain_total": plain,
        "tokens_ws_total": with_ws,
        "tokens_ratio_total": round(with_ws / plain, 3) if plain else None,
        "tokens_ratio_median": round(statistics.median(ratios), 3) if ratios else None,
        "tokens_ratio_target": TOKEN_RATIO_TARGET,
        "gold_held_plain": sum(r["plain_gold_held"] for r in rows),
        "gold_held_ws": sum(r["ws_gold_held"] for r in rows),
        "gold_total": sum(r["gold"] for r in rows),
        "sessions_losing_gold": sum(1 for r in rows if r["ws_gold_held"] < r["plain_gold_held"]),
        "thrash_detected_by_call_3": f"{detected}/{len(rows)} ({detected / len(rows):.0%})",
        "thrash_false_alarms": f"{alarms}/{calls} calls ({alarms / max(calls, 1):.1%})",
        "thrash_false_alarms_sending_code": sum(r["false_alarms_sending_code"] for r in rows),
        "thrash_per_repository": {
            repo: f"detected {_detected(fold)}/{len(fold)}, false alarms "
            f"{sum(r['false_alarms'] for r in fold)}/{sum(r['progressing_calls'] for r in fold)}"
            for repo, fold in sorted(folds.items())
        },
        "drift_missed": f"{sum(r['drift_missed'] for r in rows)}/"
        f"{sum(r['drift_expected'] for r in rows)} edited resident nodes",
        "warm_focus_p50_ms": p50("focus"),
        "warm_ws_set_p50_ms": p50("set"),
        "warm_status_p50_ms": p50("status"),
        "ws_set_added_p50_ms": round(p50("set") - p50("focus"), 2),
        "stored_set_p50_ms": p50("stored_set"),
        "stored_status_p50_ms": p50("stored_status"),
        "warm_workspace_focus_p50_ms": p50("workspace_focus"),
        "stored_set_added_p50_ms": round(p50("stored_set") - p50("workspace_focus"), 2),
        "cpu_p50_ms": {
            k: p50(k, "warm_cpu_ms")
            for k in ("focus", "set", "status", "workspace_focus", "stored_set", "stored_status")
        },
        "load_average": " ".join(f"{v:.2f}" for v in os.getloadavg()),
    }


if __name__ == "__main__":
    raise SystemExit(main())
