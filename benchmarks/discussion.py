"""Transcript recall on LoCoMo: does focus over a desk find the turns a question needs?

One command::

    .venv/bin/python benchmarks/discussion.py [--data PATH] [--cv] [--out FILE]

Loads each of the development set's conversations (``../shared/bench/locomo-dev.json``
relative to the project root) into a desk of a fresh embedded store, in order, the two
speakers as people and each session's turns posted at its date (a second apart), a
shared photo as ``[shares a photo: caption]``. Every question of categories 1–4 is
asked as the goal through :class:`coderooms.deskrecall.DeskRecall`, the path
``focus --desk`` takes, and scored by evidence recall@5 and @10 (the share of a
question's evidence turns among the first k messages) and recall within a 1,000-token
budget (messages taken best first while their tokens fit; ``sent@1k``: the messages
focus itself would send within 1,000 tokens, its floor and message cap applied). Beside it, in the same run,
two BM25 baselines with the same stemmed terms: over each turn's words and speaker
(``bm25``, the stronger) and over its words alone (``bm25-text``).

``--cv`` scores a small family of weightings (each weight of
:class:`~coderooms.focus.discussion.DiscussionConfig` at ×0, ×0.5 and ×2, and the
feedback depth one message fewer and more) and, for each
conversation, picks the best on the other five (recall@10) and scores it on the held-out
one: the leave-one-conversation-out figure.

``--scale N`` times a desk of N messages instead (the turns over and over): the first
read, a warm ranking for a new goal, and the ranking after each of a few new posts on the
kept index (extended by the post) against a recall that reads the desk afresh.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import asdict, dataclass, fields, replace
from datetime import datetime, timedelta
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from coderooms import tokens  # noqa: E402
from coderooms.deskrecall import DeskRecall, choose_messages  # noqa: E402
from coderooms.focus.discussion import DiscussionConfig, prose_terms  # noqa: E402
from coderooms.focus.lexical import BM25  # noqa: E402
from coderooms.rooms.records import LogMessage, Person  # noqa: E402
from coderooms.store import open_store  # noqa: E402

DEFAULT_DATA = ROOT.parent / "shared" / "bench" / "locomo-dev.json"
CATEGORIES = (1, 2, 3, 4)
KS = (5, 10)
TOKEN_BUDGET = 1_000
DATE_FORMAT = "%I:%M %p on %d %B, %Y"


@dataclass
class Turn:
    dia_id: str
    speaker: str
    text: str
    posted_at: str


@dataclass
class Dialogue:
    sample: str
    speakers: tuple[str, str]
    turns: list[Turn]
    questions: list[dict]


def _session_time(text: str | None, fallback: datetime) -> datetime:
    if text:
        try:
            return datetime.strptime(text.strip(), DATE_FORMAT)
        except ValueError:
            pass
    return fallback


def load(path: Path) -> list[Dialogue]:
    dialogues = []
    for sample in json.loads(path.read_text()):
        conv = sample["conversation"]
        turns: list[Turn] = []
        k, clock = 1, datetime(2020, 1, 1)
        while f"session_{k}" in conv:
            start = _session_time(conv.get(f"session_{k}_date_time"), clock)
            for i, t in enumerate(conv[f"session_{k}"]):
                text = t["text"]
                if t.get("blip_caption"):
                    text += f" [shares a photo: {t['blip_caption']}]"
                moment = start + timedelta(seconds=i)
                turns.append(Turn(t["dia_id"], t["speaker"], text, moment.isoformat() + "Z"))
            clock = start + timedelta(days=1)
            k += 1
        questions = [
            q for q in sample["qa"] if q.get("category") in CATEGORIES and q.get("evidence")
        ]
        dialogues.append(
            Dialogue(sample["sample_id"], (conv["speaker_a"], conv["speaker_b"]), turns, questions)
        )
    return dialogues


async def _desk_store(dialogue: Dialogue):
    store = open_store("sqlite:///:memory:")
    ids = {}
    for n, who in enumerate(dialogue.speakers):
        ids[who] = f"p{n}"
        await store.add_person(ids[who], who)
    desk = await store.create_desk("talk", "talk")
    rows = [
        LogMessage(
            sequence=i + 1,
            author=Person(ids[t.speaker], t.speaker),
            content=t.text,
            chat_id=desk.id,
            posted_at=t.posted_at,
        )
        for i, t in enumerate(dialogue.turns)
    ]
    store.import_messages(rows)
    return store, desk


def _recalls(order: list[int], evidence: set[int], cost: Callable[[int], int]) -> dict[str, float]:
    out = {f"R@{k}": len(evidence & set(order[:k])) / len(evidence) for k in KS}
    used, taken = 0, set()
    for seq in order:
        c = cost(seq)
        if used + c > TOKEN_BUDGET:
            continue
        used += c
        taken.add(seq)
    out["R@1k"] = len(evidence & taken) / len(evidence)
    return out


async def run(dialogues: list[Dialogue], configs: dict[str, DiscussionConfig]) -> dict:
    """Per configuration (and BM25), per dialogue, per question: the recall figures."""
    results: dict[str, dict[str, list[tuple[int, dict[str, float]]]]] = defaultdict(dict)
    timings = []
    for d_i, dialogue in enumerate(dialogues):
        store, desk = await _desk_store(dialogue)
        seq_of = {t.dia_id: i + 1 for i, t in enumerate(dialogue.turns)}
        token_of = {i + 1: tokens.count_tokens(t.text) for i, t in enumerate(dialogue.turns)}
        for name, with_speaker in (("bm25", True), ("bm25-text", False)):
            bm25 = BM25(
                [
                    prose_terms(f"{t.text} {t.speaker}" if with_speaker else t.text)
                    for t in dialogue.turns
                ]
            )
            base = []
            for q in dialogue.questions:
                scores = bm25.scores(prose_terms(q["question"]))
                order = [int(i) + 1 for i in np.argsort(-scores, kind="stable")]
                ev = {seq_of[e] for e in q["evidence"] if e in seq_of}
                if ev:
                    base.append((q["category"], _recalls(order, ev, token_of.__getitem__)))
            results[name][dialogue.sample] = base
        for name, config in configs.items():
            recall = DeskRecall.with_model(config)
            rows = []
            for q in dialogue.questions:
                ev = {seq_of[e] for e in q["evidence"] if e in seq_of}
                if not ev:
                    continue
                began = time.perf_counter()
                ranking = await recall.rank(store, desk, q["question"])
                timings.append(time.perf_counter() - began)
                order = [r.sequence for r in ranking.ranked]
                figures = _recalls(order, ev, token_of.__getitem__)
                chosen = choose_messages(
                    ranking, TOKEN_BUDGET, lambda row, t=token_of: t[row.sequence]
                )
                sent = {row.sequence for _, row, _ in chosen.sent}
                figures["sent@1k"] = len(ev & sent) / len(ev)
                rows.append((q["category"], figures))
            results[name][dialogue.sample] = rows
        store.close()
        print(f"  [{d_i + 1}/{len(dialogues)}] {dialogue.sample}", file=sys.stderr, flush=True)
    return {"results": results, "timings": timings}


def _mean(rows: list[tuple[int, dict[str, float]]], metric: str, category=None) -> float:
    values = [r[metric] for c, r in rows if category is None or c == category]
    return sum(values) / len(values) if values else float("nan")


def _flat(by_dialogue: dict[str, list]) -> list:
    return [row for rows in by_dialogue.values() for row in rows]


def family() -> dict[str, DiscussionConfig]:
    """The default, each weight at x0, x0.5 and x2, and each count one lower and higher."""
    configs = {"default": DiscussionConfig()}
    for f in fields(DiscussionConfig):
        value = getattr(DiscussionConfig(), f.name)
        if isinstance(value, int):
            for step in (-1, 1):
                configs[f"{f.name}{step:+d}"] = replace(
                    DiscussionConfig(), **{f.name: value + step}
                )
            continue
        for factor in (0.0, 0.5, 2.0):
            configs[f"{f.name}x{factor:g}"] = DiscussionConfig().scaled(**{f.name: factor})
    return configs


SCALE_POSTS = 5
"""New posts the ``--scale`` run times one by one."""
SCALE_GOALS = 20
"""Goals the ``--scale`` run times the warm ranking with."""


async def scale(dialogues: list[Dialogue], size: int) -> dict:
    """A desk of ``size`` messages (the conversations' turns over and over, two people):
    CPU of the first read, of a warm ranking for a new goal, and, after each of
    :data:`SCALE_POSTS` new posts, of the next ranking on the kept index (extended by
    the post) against a recall reading the desk afresh, in the same run."""
    turns = [t for d in dialogues for t in d.turns]
    store = open_store("sqlite:///:memory:")
    for n in range(2):
        await store.add_person(f"p{n}", f"Speaker{n}")
    desk = await store.create_desk("talk", "talk")
    start = datetime(2020, 1, 1)
    store.import_messages(
        LogMessage(
            sequence=i + 1,
            author=Person(f"p{i % 2}", f"Speaker{i % 2}"),
            content=turns[i % len(turns)].text,
            chat_id=desk.id,
            posted_at=(start + timedelta(seconds=20 * i)).isoformat() + "Z",
        )
        for i in range(size)
    )
    goals = [q["question"] for d in dialogues for q in d.questions][:SCALE_GOALS]
    goals = goals or [turns[0].text]
    kept = DeskRecall.with_model()
    cpu = time.process_time()
    await kept.rank(store, desk, goals[0])
    first = time.process_time() - cpu
    warm = []
    for goal in goals:
        kept.forget_goals()
        cpu = time.process_time()
        await kept.rank(store, desk, goal)
        warm.append((time.process_time() - cpu) * 1000)
    extended, afresh = [], []
    for k in range(SCALE_POSTS):
        await store.post("person:p0", f"new post {k}: {turns[k].text}", desk="talk")
        cpu = time.process_time()
        await kept.rank(store, desk, goals[k % len(goals)])
        extended.append(time.process_time() - cpu)
        fresh = DeskRecall.with_model()
        cpu = time.process_time()
        await fresh.rank(store, desk, goals[k % len(goals)])
        afresh.append(time.process_time() - cpu)
        print(f"  post {k + 1}/{SCALE_POSTS}", file=sys.stderr, flush=True)
    store.close()
    return {
        "messages": size,
        "first_read_cpu_s": first,
        "warm_rank_cpu_ms_p50": statistics.median(warm),
        "after_post_cpu_s_p50": statistics.median(extended),
        "afresh_cpu_s_p50": statistics.median(afresh),
        "after_post_ratio_p50": statistics.median(
            e / max(a, 1e-9) for e, a in zip(extended, afresh, strict=True)
        ),
        "load_average": os.getloadavg(),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--cv", action="store_true", help="leave-one-conversation-out")
    parser.add_argument("--out", type=Path)
    parser.add_argument("--scale", type=int, metavar="N", help="time a desk of N messages instead")
    args = parser.parse_args(argv)
    if not args.data.is_file():
        print(f"error: no LoCoMo file at {args.data} (--data PATH)", file=sys.stderr)
        return 2
    dialogues = load(args.data)
    if args.scale is not None:
        if args.scale < 1:
            print("error: --scale takes a positive number of messages", file=sys.stderr)
            return 2
        figures = asyncio.run(scale(dialogues, args.scale))
        print(
            f"desk of {figures['messages']} messages: first read {figures['first_read_cpu_s']:.2f} s "
            f"CPU, warm ranking p50 {figures['warm_rank_cpu_ms_p50']:.1f} ms CPU; after a new "
            f"post p50 {figures['after_post_cpu_s_p50']:.3f} s CPU against "
            f"{figures['afresh_cpu_s_p50']:.2f} s read afresh "
            f"(ratio {figures['after_post_ratio_p50']:.3f}); load average "
            + " ".join(f"{x:.1f}" for x in figures["load_average"])
        )
        if args.out:
            args.out.write_text(json.dumps(figures, indent=2, sort_keys=True))
        return 0
    configs = family() if args.cv else {"default": DiscussionConfig()}
    print(
        f"{len(dialogues)} conversations, {sum(len(d.questions) for d in dialogues)} questions "
        f"(categories 1-4), {len(configs)} weighting(s)",
        file=sys.stderr,
    )
    out = asyncio.run(run(dialogues, configs))
    results = out["results"]
    metrics = ("R@5", "R@10", "R@1k", "sent@1k")
    print(f"{'':10s} " + " ".join(f"{m:>13s}" for m in metrics) + "   R@10 by category 1/2/3/4")
    for name in ("default", "bm25", "bm25-text"):
        rows = _flat(results[name])
        if name != "default":
            rows = [(c, {**r, "sent@1k": float("nan")}) for c, r in rows]
        cats = " ".join(f"{_mean(rows, 'R@10', c):.3f}" for c in CATEGORIES)
        print(f"{name:10s} " + " ".join(f"{_mean(rows, m):13.3f}" for m in metrics) + f"   {cats}")
    report: dict = {
        "questions": len(_flat(results["default"])),
        "default": {m: _mean(_flat(results["default"]), m) for m in metrics},
        "bm25": {m: _mean(_flat(results["bm25"]), m) for m in metrics[:3]},
        "bm25_text": {m: _mean(_flat(results["bm25-text"]), m) for m in metrics[:3]},
        "config": asdict(DiscussionConfig()),
    }
    if args.cv:
        held: list = []
        choices = {}
        for sample in results["default"]:

            def train_score(name: str, held_out: str = sample) -> tuple[float, float]:
                rows = [r for s, rs in results[name].items() if s != held_out for r in rs]
                return (_mean(rows, "R@10"), _mean(rows, "R@5"))

            best = max(configs, key=lambda name: (train_score(name), name == "default"))
            choices[sample] = best
            held.extend(results[best][sample])
        cats = " ".join(f"{_mean(held, 'R@10', c):.3f}" for c in CATEGORIES)
        print(
            f"{'LOCO':10s} " + " ".join(f"{_mean(held, m):13.3f}" for m in metrics) + f"   {cats}"
        )
        print("held-out choices: " + ", ".join(f"{s}={c}" for s, c in choices.items()))
        report["loco"] = {m: _mean(held, m) for m in metrics}
        report["choices"] = choices
        report["family"] = {
            name: {m: _mean(_flat(results[name]), m) for m in metrics} for name in configs
        }
    ms = sorted(t * 1000 for t in out["timings"])
    if ms:
        p95 = ms[int(0.95 * (len(ms) - 1))]
        print(f"warm ranking per question: p50 {statistics.median(ms):.1f} ms, p95 {p95:.1f} ms")
        report["warm_ms"] = {"p50": statistics.median(ms), "p95": p95}
    if args.out:
        args.out.write_text(json.dumps(report, indent=2, sort_keys=True))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
