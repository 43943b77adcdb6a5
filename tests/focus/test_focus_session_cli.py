"""``coderooms focus --session``: every mode end to end over a real index, with the
working set kept in the --db store between invocations."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from fixture_repo import SHOP

from coderooms.cli import main

GOAL = "Cart.add_item accepts a zero quantity"


@pytest.fixture()
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "shop"
    for path, text in SHOP.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    return root


def run(db: Path, repo: Path, *args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, ["--db", str(db), "focus", *args, "--repo", str(repo)])
    return result.exit_code, result.stdout, result.stderr


def answer(db: Path, repo: Path, *args: str) -> dict[str, object]:
    code, out, err = run(db, repo, *args, "--json")
    assert code == 0, err
    data: dict[str, object] = json.loads(out)
    return data


def test_a_session_remembers_what_it_was_sent_across_invocations(
    tmp_path: Path, repo: Path
) -> None:
    db = tmp_path / "rooms.db"
    first = answer(db, repo, GOAL, "--session", "s1", "--budget", "300")
    sent = {item["id"] for item in first["focus_set"]}  # type: ignore[attr-defined]
    assert sent and first["resident"] == []
    second = answer(db, repo, GOAL, "--session", "s1", "--budget", "300")
    assert sent <= {r["id"] for r in second["resident"]}  # type: ignore[attr-defined]
    assert second["session"]["call"] == 2  # type: ignore[index]
    other = answer(db, repo, GOAL, "--session", "s2", "--budget", "300")
    assert other["resident"] == []
    plain = answer(db, repo, GOAL, "--budget", "300")
    assert "session" not in plain  # no session: today's answer


def test_status_pin_unpin_drop_and_reset(tmp_path: Path, repo: Path) -> None:
    db = tmp_path / "rooms.db"
    answer(db, repo, GOAL, "--session", "s", "--budget", "300")
    status = answer(db, repo, "--mode", "status", "--session", "s")
    held = [node["id"] for node in status["working_set"]["resident"]]  # type: ignore[index]
    assert held
    pinned = answer(db, repo, "--mode", "pin", "--session", "s", "--node", held[0])
    assert pinned["working_set"]["pins"]["nodes"] == [held[0]]  # type: ignore[index]
    code, out, _ = run(db, repo, "--mode", "status", "--session", "s")
    assert code == 0 and f"{held[0]} (call 1" in out and "pinned" in out
    answer(db, repo, GOAL, "--mode", "pin", "--session", "s")
    unpinned = answer(db, repo, "--mode", "unpin", "--session", "s", "--node", held[0])
    assert unpinned["working_set"]["pins"] == {"nodes": [], "goals": [GOAL]}  # type: ignore[index]
    dropped = answer(db, repo, "--mode", "drop", "--session", "s", "--node", held[0])
    ids = [n["id"] for n in dropped["working_set"]["resident"]]  # type: ignore[index]
    assert held[0] not in ids
    assert answer(db, repo, "--mode", "reset", "--session", "s")["working_set"] is None
    code, _, err = run(db, repo, "--mode", "status", "--session", "s")
    assert code == 1 and "no focus session 's'" in err


@pytest.mark.parametrize(
    "args",
    [
        ("--mode", "status", "--session", "unknown"),
        ("--mode", "pin", "--session", "s", "--node", "shop/nothing.py::nope"),
        ("--mode", "drop", "--session", "s", "--node", "shop/cart.py"),
        ("--mode", "status"),
        ("--mode", "set", "--session", "s"),
        (GOAL, "--session", "s", "--budget", "0"),
        (GOAL, "--session", "s", "--session-budget", "0"),
        (GOAL, "--session", " "),
        ("--mode", "unpin", "--session", "s", "--node", "shop/cart.py"),
    ],
)
def test_bad_session_input_is_one_error_line(
    tmp_path: Path, repo: Path, args: tuple[str, ...]
) -> None:
    db = tmp_path / "rooms.db"
    answer(db, repo, "the cart", "--session", "s", "--budget", "5")
    code, _, err = run(db, repo, *args)
    assert code == 1
    assert err.startswith("error: ") and err.count("\n") == 1


@pytest.mark.parametrize(
    "args",
    [
        (GOAL, "--session", "s", "--budget", "0"),
        (GOAL, "--session", "s", "--session-budget", "0"),
        (GOAL, "--session", " "),
        ("--mode", "pin", "--session", "s", "--session-budget", "-3"),
        ("--mode", "jump", "--session", "s"),
        (GOAL, "--session", "s", "--agent", ""),
        (GOAL, "--session", "s", "--agent", "bad id! @@"),
        (GOAL, "--session", "s", "--agent", "x" * 300),
    ],
)
def test_bad_session_input_opens_no_store_and_no_index(
    tmp_path: Path, repo: Path, args: tuple[str, ...]
) -> None:
    db = tmp_path / "rooms.db"
    code, _, err = run(db, repo, *args)
    assert code != 0 and err.count("\n") >= 1
    assert not db.exists() and not (repo / ".coderooms").exists()


@pytest.mark.parametrize("mode", ["status", "unpin", "drop", "reset"])
def test_a_session_that_does_not_exist_is_refused_before_anything_is_indexed(
    tmp_path: Path, repo: Path, mode: str
) -> None:
    db = tmp_path / "rooms.db"
    assert CliRunner().invoke(main, ["--db", str(db), "init"]).exit_code == 0
    extra = ("--node", "shop/cart.py") if mode in ("unpin", "drop") else ()
    code, _, err = run(db, repo, "--mode", mode, "--session", "nope", *extra)
    assert code == 1 and "nope" in err and err.count("\n") == 1, err
    assert not (repo / ".coderooms").exists()  # a whole index, then the refusal, before


def test_an_edited_file_is_reported_on_the_next_call(tmp_path: Path, repo: Path) -> None:
    db = tmp_path / "rooms.db"
    answer(db, repo, GOAL, "--session", "s", "--budget", "300")
    cart = repo / "shop" / "cart.py"
    cart.write_text(cart.read_text().replace("if quantity <= 0:", "if quantity < 0:"))
    code, out, _ = run(db, repo, "route_parcel depot", "--session", "s", "--no-context")
    assert code == 0 and "stale: shop/cart.py" in out and "changed since call 1" in out
