"""The focus commands end to end over a real index of a small repository."""

from __future__ import annotations

import json
from pathlib import Path

import click
import pytest
from click.testing import CliRunner
from fixture_repo import SHOP

from coderooms.cli.app import CoderoomsGroup
from coderooms.cli.focus_cmds import register


@click.group(cls=CoderoomsGroup)
def cli() -> None:
    """Test group."""


register(cli)


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("shop")
    for path, text in SHOP.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    return root


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.stdout, result.stderr


def test_focus_json_names_the_method_a_bug_report_points_at(repo: Path) -> None:
    code, out, _ = run(
        "focus",
        "Cart.add_item accepts a zero quantity",
        "--repo",
        str(repo),
        "--budget",
        "2000",
        "--json",
    )
    assert code == 0
    data = json.loads(out)
    assert data["budget"]["used"] <= 2000
    assert data["focus_set"][0]["path"] == "shop/cart.py"
    assert "def add_item" in data["context"]
    assert data["sufficiency"]["state"] in ("gathering", "sufficient", "saturated")


def test_focus_text_shows_the_set_the_tail_and_the_verdict(repo: Path) -> None:
    code, out, _ = run("focus", "route_parcel depot", "--repo", str(repo), "--budget", "60")
    assert code == 0
    assert out.startswith("focus: ")
    assert "ignored: " in out
    assert "sufficiency: " in out


def test_seek_and_impact(repo: Path) -> None:
    code, out, _ = run("seek", "apply_discount", "--repo", str(repo), "--json")
    assert code == 0
    assert "shop/catalog.py::apply_discount" in [r["id"] for r in json.loads(out)["results"]]
    code, out, _ = run("impact", "Cart.add_item", "--repo", str(repo), "--json")
    assert code == 0
    assert json.loads(out)["target"] == "shop/cart.py::Cart.add_item"


def test_impact_of_a_shared_name_lists_its_symbols(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("def run():\n    pass\n")
    (tmp_path / "b.py").write_text("def run():\n    pass\n\n\ndef go():\n    run()\n")
    code, out, _ = run("impact", "run", "--repo", str(tmp_path))
    assert code == 0
    assert out == (
        "'run' names 2 symbols; ask impact again with one of these ids:\n"
        "- b.py::run (function, b.py:1-2): 1 direct dependent\n"
        "- a.py::run (function, a.py:1-2): 0 direct dependents\n"
    )
    code, out, _ = run("impact", "run", "--repo", str(tmp_path), "--json")
    data = json.loads(out)
    assert code == 0 and data["target"] is None and data["impacted"] == []
    assert [c["id"] for c in data["candidates"]] == ["b.py::run", "a.py::run"]


@pytest.mark.parametrize(
    "args",
    [
        ("focus", "x", "--budget", "0"),
        ("impact", "nothing_is_named_this"),
        ("impact", "Cart", "--depth", "99"),
        ("seek", "x", "--limit", "0"),
    ],
)
def test_bad_input_is_one_error_line(repo: Path, args: tuple[str, ...]) -> None:
    code, out, err = run(*args, "--repo", str(repo))
    assert code == 1
    assert err.startswith("error: ") and err.count("\n") == 1


@pytest.mark.parametrize(
    ("args", "refusal"),
    [
        (("focus", "Cart.add_item", "--budget", "0"), "budget must be"),
        (("focus", "Cart.add_item", "--budget", "2000000"), "budget must be"),
        (("focus", "Cart.add_item", "--mode", "check", "--budget", "-1"), "budget must be"),
        (("seek", "Cart", "--limit", "0"), "limit must be"),
        (("impact", "Cart", "--depth", "99"), "depth must be"),
    ],
)
def test_bad_input_is_refused_before_a_repository_is_indexed(
    tmp_path: Path, args: tuple[str, ...], refusal: str
) -> None:
    for path, text in SHOP.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(text)
    code, _, err = run(*args, "--repo", str(tmp_path))
    assert code == 1
    assert err.startswith(f"error: {refusal}") and err.count("\n") == 1
    assert not (tmp_path / ".coderooms").exists()  # nothing indexed, nothing written


def test_a_missing_repository_is_one_error_line(tmp_path: Path) -> None:
    code, _, err = run("focus", "x", "--repo", str(tmp_path / "absent"))
    assert code == 1
    assert err.startswith("error: ")


def test_focus_text_prints_the_code_its_help_promises(repo: Path) -> None:
    """Issue 17: --mode set is 'the focus set and its code'; the code came only with
    --context. It is printed by default now; --no-context leaves it out, and check mode
    (the verdict without the code) never prints it."""
    goal = "Cart.add_item accepts a zero quantity"
    code, out, _ = run("focus", goal, "--repo", str(repo), "--budget", "2000")
    assert code == 0
    listing, _, context = out.partition("\n\n")
    assert listing.startswith("focus: ") and "sufficiency: " in listing
    assert "def add_item" in context
    _, bare, _ = run("focus", goal, "--repo", str(repo), "--budget", "2000", "--no-context")
    assert bare == listing + "\n"
    _, checked, _ = run("focus", goal, "--repo", str(repo), "--mode", "check")
    assert "def add_item" not in checked
