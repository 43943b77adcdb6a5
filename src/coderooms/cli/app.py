"""The ``coderooms`` command group and what every command shares.

Every failure a person can cause — a bad option, an unknown agent, a corrupt database —
ends the same way: one ``error: …`` line on stderr and a non-zero exit status, never a
traceback. Usage mistakes exit 2 (as click does), refusals exit 1.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Coroutine, Sequence
from dataclasses import dataclass
from typing import Any, NoReturn, TypeVar

import click

from coderooms.errors import CoderoomsError
from coderooms.store import Store, open_store

__all__ = ["CoderoomsGroup", "CliState", "fail", "main", "run", "store_of"]

EXIT_REFUSED = 1
"""Exit status when coderooms refuses the request (a typed error)."""

DB_ENV = "CODEROOMS_DB"
"""Environment variable naming the store URL when ``--db`` is not given."""

_T = TypeVar("_T")


def _one_line(message: str) -> str:
    return " ".join(message.split()) or "failed"


def fail(message: str, status: int = EXIT_REFUSED) -> NoReturn:
    """Print ``error: message`` as one line on stderr and exit with ``status``."""
    click.echo(f"error: {_one_line(message)}", err=True)
    sys.exit(status)


class CoderoomsGroup(click.Group):
    """A click group whose failures are one-line errors instead of usage dumps or
    tracebacks."""

    def main(
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        **extra: Any,
    ) -> Any:
        try:
            result = super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        except click.ClickException as err:
            fail(err.format_message(), err.exit_code)
        except click.Abort:
            fail("aborted")
        except CoderoomsError as err:
            fail(str(err))
        except OSError as err:
            fail(f"{err.strerror or err}: {err.filename}" if err.filename else str(err))
        if isinstance(result, int) and not isinstance(result, bool) and result != 0:
            sys.exit(result)
        if standalone_mode:
            sys.exit(0)
        return result


@dataclass
class CliState:
    """Per-invocation settings shared by every subcommand."""

    db: str | None


def store_of(ctx: click.Context) -> Store:
    """Open the store this invocation names (``--db``, ``$CODEROOMS_DB``, or the default).

    An in-memory store is refused: whatever a command wrote would be gone when it exits."""
    state = ctx.find_object(CliState)
    store = open_store(state.db if state is not None else None, durable=True)
    ctx.call_on_close(store.close)
    return store


def run(coroutine: Coroutine[Any, Any, _T]) -> _T:
    """Drive one async store call to completion from a command."""
    return asyncio.run(coroutine)


@click.group(cls=CoderoomsGroup)
@click.option(
    "--db",
    envvar=DB_ENV,
    metavar="URL",
    help=(
        "Store to use: sqlite:///PATH (or a plain file path). "
        f"Defaults to ${DB_ENV}, else .coderooms/rooms.db under the working directory."
    ),
)
@click.version_option(package_name="coderooms", prog_name="coderooms")
@click.pass_context
def main(ctx: click.Context, db: str | None) -> None:
    """Shared rooms for coding agents: a durable, attributed log per desk.

    Start with `coderooms init`, add agents and desks, then `post` and `read`.
    """
    ctx.obj = CliState(db)
