"""``coderooms focus``, ``seek``, ``impact`` and ``bench localize``.

Thin calls into :class:`coderooms.workspace.Workspace` (which wires the focus runtime to
the token counter and the embedding model). ``focus`` and ``seek`` bring the index up to
date first. Text output is for people; ``--json`` prints one JSON document.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click

from coderooms.cli.app import fail, json_option
from coderooms.errors import CoderoomsError
from coderooms.focus.impact import MAX_IMPACT_DEPTH
from coderooms.focus.runtime import DEFAULT_BUDGET, DEFAULT_SEEK_LIMIT, FocusResult
from coderooms.workspace import Workspace

__all__ = ["register", "focus", "seek", "impact", "bench"]

IGNORED_SHOWN = 10  # how many ignored entries the text output lists
WHY_CHARS = 90
BENCH_SCRIPT = Path("benchmarks") / "localize.py"


def register(group: click.Group) -> None:
    """Attach ``focus``, ``seek``, ``impact`` and the ``bench`` group to ``group``."""
    group.add_command(focus)
    group.add_command(seek)
    group.add_command(impact)
    group.add_command(bench)


def _workspace(repo: str) -> Workspace:
    ws = Workspace.open(repo)
    ws.index()
    return ws


def _clip(text: str, width: int = WHY_CHARS) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def _print_focus(result: FocusResult, show_context: bool) -> None:
    data = result.to_json()
    budget = data["budget"]
    click.echo(f"focus: {len(data['focus_set'])} items, {budget['used']}/{budget['limit']} tokens")
    for item in data["focus_set"]:
        click.echo(
            f"  {item['salience']:.4f} {item['tokens']:>6} tok  {item['render']:<8} "
            f"{item['id']}:{item['start_line']}-{item['end_line']}"
        )
        click.echo(f"        why: {_clip(item['why'])}")
    ignored = data["ignored"]
    click.echo(f"ignored: {len(ignored)}")
    for entry in ignored[:IGNORED_SHOWN]:
        detail = f" ({entry['detail']})" if entry.get("detail") else ""
        click.echo(f"  {entry['salience']:.4f} {entry['why']:<14} {entry['what']}{detail}")
    if len(ignored) > IGNORED_SHOWN:
        click.echo(f"  … {len(ignored) - IGNORED_SHOWN} more (see --json)")
    verdict = data["sufficiency"]
    click.echo(
        f"sufficiency: {verdict['state']} "
        f"(captured {verdict['captured_salience_mass']:.0%}): {verdict['why']}"
    )
    if show_context:
        click.echo("")
        click.echo(result.context(), nl=False)


@click.command()
@click.argument("goal")
@click.option("--repo", default=".", type=click.Path(), help="Repository root (default: .).")
@click.option(
    "--budget",
    default=DEFAULT_BUDGET,
    show_default=True,
    type=int,
    help="Token budget for the focus set.",
)
@click.option(
    "--mode",
    default="set",
    show_default=True,
    type=click.Choice(["set", "check"]),
    help="set: the focus set and its code; check: the verdict without the code.",
)
@json_option("Print one JSON document.")
@click.option(
    "--context/--no-context",
    "show_context",
    default=True,
    show_default=True,
    help="In set mode, print the focus set's code after the list (text output); "
    "--no-context prints the list only.",
)
def focus(goal: str, repo: str, budget: int, mode: str, as_json: bool, show_context: bool) -> None:
    """The code worth loading for GOAL within a token budget, what was left out and why,
    and whether that is enough. Indexes REPO first when needed."""
    try:
        result = _workspace(repo).focus(goal, budget=budget, mode=mode)
    except CoderoomsError as err:
        fail(err)
    if as_json:
        click.echo(json.dumps(result.to_json(), indent=2))
    else:
        _print_focus(result, show_context and mode == "set")


@click.command()
@click.argument("query")
@click.option("--repo", default=".", type=click.Path(), help="Repository root (default: .).")
@click.option(
    "--limit",
    default=DEFAULT_SEEK_LIMIT,
    show_default=True,
    type=int,
    help="How many ranked nodes to list.",
)
@json_option("Print one JSON document.")
def seek(query: str, repo: str, limit: int, as_json: bool) -> None:
    """Files and symbols ranked by salience for QUERY (no code, no budget)."""
    try:
        result = _workspace(repo).seek(query, limit=limit)
    except CoderoomsError as err:
        fail(err)
    data = result.to_json()
    if as_json:
        click.echo(json.dumps(data, indent=2))
        return
    for item in data["results"]:
        click.echo(
            f"  {item['salience']:.4f}  {item['id']}:{item['start_line']}-{item['end_line']}"
        )
        click.echo(f"          why: {_clip(item['why'])}")
    click.echo(f"ignored: {len(data['ignored'])} more above the relevance floor")
    verdict = data["sufficiency"]
    click.echo(f"sufficiency: {verdict['state']}: {verdict['why']}")


@click.command()
@click.argument("target")
@click.option("--repo", default=".", type=click.Path(), help="Repository root (default: .).")
@click.option(
    "--depth",
    default=2,
    show_default=True,
    type=int,
    help=f"How many dependency steps to follow (1-{MAX_IMPACT_DEPTH}).",
)
@json_option("Print one JSON document.")
def impact(target: str, repo: str, depth: int, as_json: bool) -> None:
    """What depends on TARGET (a path, a symbol id, a qualified or unique name): callers,
    importers, subclasses and tests, up to --depth steps away."""
    try:
        result = _workspace(repo).impact(target, depth=depth)
    except CoderoomsError as err:
        fail(err)
    data: dict[str, Any] = result.to_json()
    if as_json:
        click.echo(json.dumps(data, indent=2))
        return
    by_name = sum(1 for item in data["impacted"] if item["edge"] == "name_match")
    click.echo(
        f"impact of {data['target']} (depth {depth}): {len(data['impacted'])} dependents"
        f" ({len(data['impacted']) - by_name} resolved, {by_name} by name only)"
    )
    for item in data["impacted"]:
        click.echo(f"  {item['distance']}  {item['id']}  ({item['why']}, {item['edge']})")
    if data["ignored"]:
        click.echo(f"ignored: {len(data['ignored'])}")
        for entry in data["ignored"][:IGNORED_SHOWN]:
            click.echo(f"  {entry['why']:<13} {entry['what']}")


@click.group()
def bench() -> None:
    """Measure coderooms on public benchmark data (development use)."""


@bench.command(context_settings={"ignore_unknown_options": True})
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
def localize(args: tuple[str, ...]) -> None:
    """Focus localization quality on the SWE-bench development set, beside BM25 (runs
    benchmarks/localize.py from a source checkout; pass its options after the command,
    e.g. --repo psf/requests, --cv, --without semantic, --out results.json)."""
    import importlib.util

    script = Path.cwd() / BENCH_SCRIPT
    if not script.is_file():
        fail(f"{BENCH_SCRIPT} not found here; run this from a coderooms source checkout")
    spec = importlib.util.spec_from_file_location("coderooms_localize", script)
    if spec is None or spec.loader is None:
        fail(f"cannot load {script}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up here
    spec.loader.exec_module(module)
    status = module.main(list(args))
    if status:
        raise SystemExit(status)
