"""The localization benchmark's scoring, its leave-one-repository-out choice and its
checkout of a clone that lacks a blob."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

from bench_script import load_benchmark

localize: Any = load_benchmark("localize")


def test_acc_at_k_needs_every_gold_file_or_a_top_k_of_gold_only() -> None:
    assert localize.acc_at(["a", "b", "c"], ["b"], 3)
    assert not localize.acc_at(["a", "b", "c"], ["b"], 1)
    assert not localize.acc_at(["a", "b", "c"], ["b", "z"], 3)
    assert localize.acc_at(["b", "z"], ["b", "z", "y"], 1)  # more gold than k
    assert localize.reciprocal_rank(["a", "b", "c"], ["c", "a"]) == 1 / 3
    assert localize.reciprocal_rank(["a"], ["q"]) == 0.0


def _row(repo: str, good: str) -> dict[str, Any]:
    def scores(hit: bool) -> dict[str, Any]:
        return {"file_acc@1": hit, "file_acc@3": hit, "file_acc@5": hit, "file_rr": float(hit)}

    return {
        "repo": repo,
        "family": {"defaults": scores(good == "defaults"), "x": scores(good == "x")},
    }


def test_the_held_out_repository_never_chooses_its_own_weighting() -> None:
    # Repository c alone prefers "x"; a and b prefer the defaults, and outnumber it.
    rows = [_row("a", "defaults")] * 2 + [_row("b", "defaults")] * 2 + [_row("c", "x")]
    loro = localize.leave_one_repository_out(rows)
    assert loro["chosen"] == {"a": "defaults", "b": "defaults", "c": "defaults"}
    held_out = [r["focus"]["file_acc@5"] for r in loro["rows"] if r["repo"] == "c"]
    assert held_out == [False]


def _scored(file_hit: bool, function_hit: bool | None) -> dict[str, Any]:
    return {
        **{f"file_acc@{k}": file_hit for k in (1, 3, 5)},
        "file_rr": float(file_hit),
        "func_acc@10": function_hit,
        "budget_recall": function_hit,
    }


def test_a_weighting_that_moves_only_functions_can_be_chosen() -> None:
    # "fn" finds the same files as the defaults but more functions; an instance without
    # function labels (None) counts for the files alone.
    def row(repo: str, labelled: bool) -> dict[str, Any]:
        return {
            "repo": repo,
            "family": {
                "defaults": _scored(True, False if labelled else None),
                "fn": _scored(True, True if labelled else None),
            },
        }

    rows = [row("a", True), row("a", False), row("b", True), row("c", True)]
    loro = localize.leave_one_repository_out(rows)
    assert loro["chosen"] == {"a": "fn", "b": "fn", "c": "fn"}


def test_ablation_rows_are_each_switched_off_signal_less_the_defaults() -> None:
    rows = [
        {"family": {"defaults": _scored(True, True), "semantic×0": _scored(False, True)}},
        {"family": {"defaults": _scored(True, None), "semantic×0": _scored(True, None)}},
    ]
    assert localize.ablation_rows(rows) == {
        "semantic": {
            "file_acc@1": -0.5,
            "file_acc@3": -0.5,
            "file_acc@5": -0.5,
            "func_acc@10": 0.0,
            "budget_recall": 0.0,
        }
    }


def test_a_kept_checkout_is_made_once_and_reused(tmp_path: Path) -> None:
    mirror = tmp_path / "mirrors" / "owner+name" / "repo"
    mirror.mkdir(parents=True)
    _git(mirror, "init", "-q")
    (mirror / "a.py").write_text("x = 1\n")
    _git(mirror, "add", ".")
    _git(mirror, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "one")
    inst = localize.Instance("o__n-1", "owner/name", _git(mirror, "rev-parse", "HEAD"), "", (), ())
    keep = tmp_path / "keep"
    root, missing = localize.kept_checkout(tmp_path / "mirrors", inst, keep)
    assert missing == 0 and (root / "a.py").is_file()
    (root / "mark").write_text("kept")  # what an index run leaves beside the files
    again, _ = localize.kept_checkout(tmp_path / "mirrors", inst, keep)
    assert again == root and (again / "mark").read_text() == "kept"
    # a checkout that stopped half-way (no stamp) is made anew
    (keep / inst.instance_id / "missing-blobs").unlink()
    anew, _ = localize.kept_checkout(tmp_path / "mirrors", inst, keep)
    assert anew == root and not (anew / "mark").exists()


def test_held_out_instances_are_other_repositories_with_a_clone(tmp_path: Path) -> None:
    import json

    patch = "diff --git a/pkg/core.py b/pkg/core.py\n+x\ndiff --git a/tests/test_core.py b/tests/test_core.py\n"
    lite = [
        {
            "repo": "dev/one",
            "instance_id": "dev__one-1",
            "base_commit": "a",
            "problem_statement": "p",
            "patch": patch,
        },
        {
            "repo": "new/two",
            "instance_id": "new__two-1",
            "base_commit": "b",
            "problem_statement": "q",
            "patch": patch,
        },
        {
            "repo": "new/three",
            "instance_id": "new__three-1",
            "base_commit": "c",
            "problem_statement": "r",
            "patch": patch,
        },
    ]
    (tmp_path / "swe-bench-lite.json").write_text(json.dumps(lite))
    labels = {"instance_id": "new__two-1", "edit_functions": ["pkg/core.py:Core.run"]}
    (tmp_path / "swe-bench-lite-274-functions.jsonl").write_text(json.dumps(labels) + "\n")
    (tmp_path / "mirrors" / "new+two" / "repo").mkdir(parents=True)
    (tmp_path / "mirrors" / "dev+one" / "repo").mkdir(parents=True)
    dev = [localize.Instance("dev__one-0", "dev/one", "z", "", ("x.py",), ())]
    found = localize.held_out_instances(tmp_path, dev, tmp_path / "mirrors")
    # dev/one is in the development set; new/three has no clone
    assert found == [
        localize.Instance(
            "new__two-1", "new/two", "b", "q", ("pkg/core.py",), ("pkg/core.py::Core.run",)
        )
    ]


def _git(cwd: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(cwd), *args], capture_output=True, check=True)
    return done.stdout.decode().strip()


def test_a_clone_missing_a_blob_checks_out_every_file_it_has(tmp_path: Path) -> None:
    mirror = tmp_path / "mirrors" / "owner+name" / "repo"
    mirror.mkdir(parents=True)
    _git(mirror, "init", "-q")
    (mirror / "small.py").write_text("x = 1\n")
    (mirror / "big.bin").write_text("pretend this is over 4 MiB\n")
    _git(mirror, "add", ".")
    _git(mirror, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "one")
    commit = _git(mirror, "rev-parse", "HEAD")
    big = _git(mirror, "rev-parse", "HEAD:big.bin")
    (mirror / ".git" / "objects" / big[:2] / big[2:]).unlink()
    root, missing = localize.checkout(tmp_path / "mirrors", "owner/name", commit, tmp_path)
    assert missing == 1
    assert (root / "small.py").read_text() == "x = 1\n"
    assert not (root / "big.bin").exists()
    assert _git(root, "rev-parse", "HEAD") == commit


def test_a_label_of_a_nested_function_resolves_to_the_one_node_it_names() -> None:
    known = {
        "m.py::Response.iter_content.generate",
        "m.py::Response.iter_lines",
        "m.py::Other.a.helper",
        "m.py::Other.b.helper",
    }
    assert localize.resolve_label("m.py::Response.generate", known) == (
        "m.py::Response.iter_content.generate"
    )
    assert localize.resolve_label("m.py::Response.iter_lines", known) == "m.py::Response.iter_lines"
    # two nested functions end the same way: the label stays as written (a miss)
    assert localize.resolve_label("m.py::Other.helper", known) == "m.py::Other.helper"
    assert localize.resolve_label("m.py::free", known) == "m.py::free"
