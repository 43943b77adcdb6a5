"""The LoCoMo transcript benchmark end to end on a tiny conversation of the same shape."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from bench_script import load_benchmark

discussion: Any = load_benchmark("discussion")


def _sample(sample_id: str, topic: str) -> dict[str, Any]:
    turns = [
        {"speaker": "Ann", "dia_id": "D1:1", "text": "Morning! How was the weekend?"},
        {"speaker": "Bo", "dia_id": "D1:2", "text": f"Great, I finally started {topic}."},
        {"speaker": "Ann", "dia_id": "D1:3", "text": "Nice, what got you into it?"},
        {"speaker": "Bo", "dia_id": "D1:4", "text": "A friend showed me, I love it."},
    ]
    later = [{"speaker": "Ann", "dia_id": "D2:1", "text": "Lunch on Friday?"}]
    return {
        "sample_id": sample_id,
        "conversation": {
            "speaker_a": "Ann",
            "speaker_b": "Bo",
            "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": turns,
            "session_2_date_time": "3:00 pm on 9 May, 2023",
            "session_2": later,
        },
        "qa": [
            {"question": f"When did Bo start {topic}?", "evidence": ["D1:2"], "category": 2},
            {"question": "What is open?", "evidence": ["D1:1"], "category": 5},
        ],
    }


def test_the_benchmark_scores_recall_beside_bm25_and_holds_out_each_conversation(
    tmp_path: Path, capsys: Any
) -> None:
    data = tmp_path / "locomo.json"
    data.write_text(json.dumps([_sample("c1", "pottery"), _sample("c2", "climbing")]))
    out = tmp_path / "r.json"
    assert discussion.main(["--data", str(data), "--cv", "--out", str(out)]) == 0
    report = json.loads(out.read_text())
    assert report["questions"] == 2  # category 5 has no evidence turns scored here
    assert report["default"]["R@5"] == 1.0 and report["loco"]["R@10"] == 1.0
    assert set(report["choices"]) == {"c1", "c2"}
    printed = capsys.readouterr().out
    assert "LOCO" in printed and "bm25-text" in printed


def test_a_missing_data_file_is_a_clear_refusal(tmp_path: Path, capsys: Any) -> None:
    assert discussion.main(["--data", str(tmp_path / "absent.json")]) == 2
    assert "no LoCoMo file" in capsys.readouterr().err


def test_the_scale_run_times_a_post_on_the_kept_index_against_a_fresh_read(
    tmp_path: Path, capsys: Any
) -> None:
    data = tmp_path / "locomo.json"
    data.write_text(json.dumps([_sample("c1", "pottery")]))
    out = tmp_path / "scale.json"
    assert discussion.main(["--data", str(data), "--scale", "40", "--out", str(out)]) == 0
    figures = json.loads(out.read_text())
    assert figures["messages"] == 40
    assert figures["after_post_cpu_s_p50"] > 0 and figures["afresh_cpu_s_p50"] > 0
    assert "after a new post" in capsys.readouterr().out
    assert discussion.main(["--data", str(data), "--scale", "0"]) == 2
    assert "positive number" in capsys.readouterr().err
