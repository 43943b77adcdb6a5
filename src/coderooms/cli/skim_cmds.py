"""``coderooms skim``: verbose tool output cut to what a goal needs, every cut marked."""

from __future__ import annotations

import json

import click

from coderooms.cli.app import json_option
from coderooms.rooms.wire import to_wire
from coderooms.skimmer import DEFAULT_SKIM_BUDGET, skim

__all__ = ["register", "skim_command"]

SKIM_INPUT_CAP = 64 * 1024 * 1024
"""Bytes of input `skim` reads at most; a larger input is refused, not truncated."""
BINARY_SNIFF_BYTES = 8192
"""An input with a NUL byte in its first this many bytes is binary, not tool output (as
the index tells a binary file)."""
SKIM_PROGRESS_BYTES = 4 * 1024 * 1024
"""Input from which skim says on stderr that it is at work (about a second a few MiB)."""


def register(group: click.Group) -> None:
    """Attach ``skim`` to ``group``."""
    group.add_command(skim_command)


@click.command("skim")
@click.argument("source", type=click.File("rb"), default="-", metavar="[FILE]")
@click.option("--goal", required=True, help="What you are trying to do; lines about it are kept.")
@click.option(
    "--budget",
    type=click.IntRange(min=1),
    default=DEFAULT_SKIM_BUDGET,
    show_default=True,
    help="Tokens the skimmed output may take.",
)
@json_option("Print the result and its cuts as JSON.")
def skim_command(source: click.utils.LazyFile, goal: str, budget: int, as_json: bool) -> None:
    """Skim FILE (or standard input): keep the lines GOAL needs, errors and warnings, the
    head and the tail; replace every cut run of lines with a marker saying what went and
    why."""
    data = source.read(SKIM_INPUT_CAP + 1)
    if len(data) > SKIM_INPUT_CAP:
        raise click.ClickException(
            f"input is larger than {SKIM_INPUT_CAP // (1024 * 1024)} MiB; skim a part of it"
        )
    nul = data.find(b"\0", 0, BINARY_SNIFF_BYTES)
    if nul >= 0:
        raise click.ClickException(
            f"the input looks binary (a NUL byte at offset {nul}); skim reads text, such as "
            "a command's output or a log"
        )
    text = data.decode("utf-8", errors="replace")
    if len(data) >= SKIM_PROGRESS_BYTES:  # seconds of work: not in silence
        click.echo(f"skimming {len(data) / (1024 * 1024):.1f} MiB of text …", err=True)
    result = skim(text, goal, budget)
    if as_json:
        payload = to_wire(result)
        payload["skimmed"] = result.skimmed
        click.echo(json.dumps(payload, ensure_ascii=False, indent=2))
        return
    click.echo(result.text, nl=False)  # its final newline is the input's own
    if result.skimmed:
        click.echo(
            f"[skim: kept {result.lines_kept} of {result.lines_in} lines, "
            f"{result.tokens_out} of {result.tokens_in} tokens, {len(result.cuts)} cuts]",
            err=True,
        )
