"""The ``coderooms`` command line (a surface: thin calls into the store and the core).

``main`` is the click group behind the console script, every command family registered
on it. The console script itself takes :func:`main_for` its command line: a command
whose family stands alone (``focus``, ``index``, ``skim`` …) loads only that family, so
that a focus does not first import the rooms, recall and MCP commands.
"""

from __future__ import annotations

from collections.abc import Sequence
from importlib import import_module
from typing import Any

import click

__all__ = ["FAMILIES", "ALONE", "ONE_SHOT", "main", "main_for", "command_name"]

FAMILIES = ("rooms_cmds", "recall_cmds", "mcp_cmds", "index_cmds", "focus_cmds", "skim_cmds")
"""The modules that register the commands, in the order they register them."""
ALONE = {
    "focus": "focus_cmds",
    "seek": "focus_cmds",
    "impact": "focus_cmds",
    "bench": "focus_cmds",
    "index": "index_cmds",
    "graph": "index_cmds",
    "skim": "skim_cmds",
}
"""Commands whose family registers them whole (``agent`` and ``person`` take commands
from two families): the family a command line running one of them loads alone."""
ONE_SHOT = frozenset({"focus", "seek", "impact"})
"""Commands that answer once and exit: the console script runs them without the cyclic
garbage collector. They load a graph and a focus index of hundreds of thousands of small
objects, which every collection walks again and frees nothing of; a process that exits
after one answer needs none (on sympy, 0.1-0.25 s of a fresh focus's 1.5-2 s)."""
_VALUED_OPTIONS = frozenset({"--db"})  # the group's options that take a value


def __getattr__(name: str) -> Any:
    if name == "main":
        group = _registered(FAMILIES)
        globals()["main"] = group
        return group
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def main_for(args: Sequence[str]) -> click.Group:
    """The command group with what the command line ``args`` (without the program's
    name) runs registered: the family of an :data:`ALONE` command, else every family
    (help, a group's own options, a mistyped name all need every command)."""
    family = ALONE.get(command_name(args) or "")
    return _registered((family,) if family else FAMILIES)


def _registered(families: Sequence[str]) -> click.Group:
    from coderooms.cli.app import accept_global_options, main

    for family in families:
        import_module(f"{__name__}.{family}").register(main)
    accept_global_options(main)  # after every command is registered
    return main


def command_name(args: Sequence[str]) -> str | None:
    """The command a command line names: its first word that is neither an option of
    the group nor an option's value."""
    words = iter(args)
    for word in words:
        if word in _VALUED_OPTIONS:
            next(words, None)
        elif not word.startswith("-"):
            return word
    return None
