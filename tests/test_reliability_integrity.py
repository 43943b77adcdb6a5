"""The reliability benchmark's counting: lost, duplicated and reordered posts, acks that
do not hold their post, a killed writer's cut last line, and how an MCP answer is judged.
The suite itself is not run here."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from typing import Any

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "reliability_integrity.py"
spec = importlib.util.spec_from_file_location("bench_reliability_integrity", SCRIPT)
assert spec is not None and spec.loader is not None
bench: Any = importlib.util.module_from_spec(spec)
sys.modules[spec.name] = bench
spec.loader.exec_module(bench)


def rows(*pairs: tuple[int, int]) -> list[tuple[int, str]]:
    """Rows 1, 2, … holding the posts (writer, index) in the order given."""
    return [(n, bench.post_text(w, i)) for n, (w, i) in enumerate(pairs, start=1)]


def test_a_clean_interleaving_counts_nothing() -> None:
    log = rows((0, 0), (1, 0), (1, 1), (0, 1), (0, 2), (1, 2))
    assert bench.tally(log, 2, 3) == bench.Tally(0, 0, 0, 0, 0)


def test_lost_duplicated_and_reordered_posts_are_each_counted() -> None:
    # writer 0: post 2 lost, post 0 stored twice; writer 1: post 1 stored before post 0
    log = rows((0, 0), (1, 1), (0, 1), (1, 0), (0, 0), (1, 2))
    assert bench.tally(log, 2, 3) == bench.Tally(
        lost=1, duplicated=1, reordered=1, unordered_sequences=0, foreign=0
    )


def test_sequences_out_of_storage_order_and_foreign_rows_are_counted() -> None:
    log = [(1, bench.post_text(0, 0)), (3, "someone else"), (2, bench.post_text(0, 1))]
    log.append((4, bench.post_text(5, 0)))  # a writer that does not exist is foreign too
    counts = bench.tally(log, 1, 2)
    assert (counts.unordered_sequences, counts.foreign, counts.lost) == (1, 2, 0)


def test_an_ack_counts_only_when_its_sequence_holds_its_text() -> None:
    acks = {1: "a", 2: "b", 3: "c"}
    assert bench.misfiled(acks, {1: "a", 2: "b", 3: "c", 4: "d"}) == 0
    assert bench.misfiled(acks, {1: "a", 2: "c"}) == 2  # 2 holds another post, 3 is gone


def test_a_killed_writers_cut_last_line_is_no_ack() -> None:
    output = "7 0\n8 1\n9 2\n1"  # killed while writing "10 3"
    assert bench.parse_acks(output, "round 4") == {
        7: "round 4 post 0",
        8: "round 4 post 1",
        9: "round 4 post 2",
    }
    assert bench.parse_acks("", "r") == {}


def test_mcp_answers_are_judged_by_their_error_shape() -> None:
    def line(message: dict[str, Any]) -> bytes:
        return json.dumps(message).encode() + b"\n"

    typed = {"isError": True, "structuredContent": {"error": {"type": "X", "message": "m"}}}
    assert bench.answer_kind(line({"jsonrpc": "2.0", "id": 1, "result": typed})) == "ok"
    assert bench.answer_kind(line({"id": 1, "result": {"content": []}})) == "ok"
    untyped = {"isError": True, "content": [{"type": "text", "text": "Error executing tool"}]}
    assert bench.answer_kind(line({"id": 1, "result": untyped})) == "untyped"
    internal = {"id": 1, "error": {"code": -32603, "message": "boom"}}
    assert bench.answer_kind(line(internal)) == "internal"
    assert bench.answer_kind(line({"id": 1, "error": {"code": -32700, "message": "x"}})) == "ok"
    assert bench.answer_kind(b"Traceback (most recent call last):\n") == "unreadable"
    huge = {"id": 1, "error": {"code": -32602, "message": "x" * 100_000}}
    assert bench.answer_kind(line(huge)) == "oversized"
    big_result = {"id": 1, "result": {"content": [{"type": "text", "text": "y" * 100_000}]}}
    assert bench.answer_kind(line(big_result)) == "ok"  # only refusals are capped
