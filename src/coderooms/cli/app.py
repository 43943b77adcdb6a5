"""The ``coderooms`` command group and what every command shares.

Every failure a person can cause — a bad option, an unknown agent, a corrupt database —
ends the same way: one ``error: …`` line on stderr and a non-zero exit status, never a
traceback. Usage mistakes exit 2 (as click does), refusals exit 1. A command stopped
part-way by Ctrl-C (SIGINT) or SIGTERM unwinds (rolling back what it was writing) and
exits 130 or 143 with one line; a command whose job is to run until stopped (``up``)
treats the stop as success itself.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar, cast

import click

from coderooms.errors import CoderoomsError
from coderooms.launch import EXIT_INTERRUPTED, EXIT_TERMINATED

if TYPE_CHECKING:
    from coderooms.store import Store

__all__ = [
    "STOP_GRACE_S",
    "CoderoomsGroup",
    "CliState",
    "accept_global_options",
    "Terminated",
    "arm_stop_watchdog",
    "fail",
    "json_option",
    "main",
    "run",
    "run_unawaited",
    "store_of",
]

EXIT_REFUSED = 1
"""Exit status when coderooms refuses the request (a typed error)."""
STOP_GRACE_S = 5.0
"""After SIGTERM, how long a command may take to unwind (roll back, stop its workers)
before the process ends anyway: a worker thread busy in a long call (an index build) or
blocked reading a terminal cannot be interrupted, and the interpreter would wait for it
at exit for as long as it runs."""

DB_ENV = "CODEROOMS_DB"
"""Environment variable naming the store URL when ``--db`` is not given."""

_T = TypeVar("_T")


def _one_line(message: str) -> str:
    return " ".join(message.split()) or "failed"


_json_errors = False
"""Whether this invocation asked for ``--json``: its error is then a JSON document too."""

_F = TypeVar("_F", bound=Callable[..., Any])


def json_option(help: str) -> Callable[[_F], _F]:
    """The ``--json`` flag of a command: it prints JSON, and a refusal is JSON too."""
    return click.option("--json", "as_json", is_flag=True, help=help, callback=_note_json)


def _note_json(ctx: click.Context, param: click.Parameter, value: bool) -> bool:
    """Called as the command's options are read, given or not: sets the flag anew for
    each invocation (tests run many in one process)."""
    global _json_errors
    _json_errors = bool(value)
    return value


def _asks_for_json(args: Sequence[str]) -> bool:
    """Whether ``--json`` is among the options of a command line that did not parse
    (so no option was read): before any ``--``, after which every word is an argument."""
    words = list(args)
    return "--json" in (words[: words.index("--")] if "--" in words else words)


def fail(problem: str | BaseException, status: int = EXIT_REFUSED, kind: str = "") -> NoReturn:
    """Print ``error: …`` as one line on stderr and exit with ``status``.

    Under ``--json`` the error is also one JSON document on stdout, where a program
    reading the answer looks: ``{"error": {"type": …, "message": …, "exit_status": …}}``.
    The type is the error's class (``UnknownNode``, ``UsageError`` …), or ``kind``.
    """
    if isinstance(problem, BaseException):
        kind = kind or getattr(problem, "kind", "") or type(problem).__name__
        message = (
            problem.format_message() if isinstance(problem, click.ClickException) else str(problem)
        )
    else:
        message = problem
    line = _one_line(message)
    global _reported
    _reported = True
    click.echo(f"error: {line}", err=True)
    if _json_errors:
        error = {"type": kind or "Refused", "message": line, "exit_status": status}
        with contextlib.suppress(OSError):  # stdout may be what failed (a full disk)
            click.echo(json.dumps({"error": error}))
    sys.exit(status)


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised where Ctrl-C's KeyboardInterrupt would be: a command unwinds the
    same way for both (its ``finally`` blocks run, a worker pool is shut down)."""


_reported = False
"""Whether this process already printed its ``error:`` line (the watchdog prints none)."""
_watchdog: threading.Thread | None = None


def _stop_watchdog(signum: int) -> None:
    """Once unwinding has had :data:`STOP_GRACE_S`, end the process: with the one
    ``error:`` line if it was not printed yet, and the status it promises."""
    time.sleep(STOP_GRACE_S)
    terminated = signum == signal.SIGTERM
    if not _reported:
        with contextlib.suppress(OSError, ValueError):
            os.write(2, b"error: terminated\n" if terminated else b"error: interrupted\n")
    os._exit(EXIT_TERMINATED if terminated else EXIT_INTERRUPTED)


def arm_stop_watchdog(signum: int) -> None:
    """A stop signal came: however the command unwinds, the process is gone within
    :data:`STOP_GRACE_S` (a thread the interpreter would wait for at exit cannot keep
    it). For whoever handles a stop signal itself, as the stdio server does."""
    global _watchdog
    if _watchdog is None:
        _watchdog = threading.Thread(
            target=_stop_watchdog, args=(signum,), name="coderooms-stop", daemon=True
        )
        _watchdog.start()


def _raise_terminated(signum: int, frame: object) -> None:
    arm_stop_watchdog(signum)
    raise Terminated()


def _stop_of(group: BaseExceptionGroup[BaseException]) -> type[KeyboardInterrupt] | None:
    """The stop a group of exceptions from concurrent tasks carries: SIGTERM's if any
    task saw it, else Ctrl-C's, else None (then the group is not a stop)."""
    if group.subgroup(Terminated) is not None:
        return Terminated
    if group.subgroup(KeyboardInterrupt) is not None:
        return KeyboardInterrupt
    return None


class _Stopped(click.ClickException):
    """A command stopped part-way by a signal: one line, exit 128 + the signal."""

    def __init__(self, message: str, exit_code: int) -> None:
        super().__init__(message)
        self.exit_code = exit_code
        self.kind = message.capitalize()


class CoderoomsGroup(click.Group):
    """A click group whose failures are one-line errors instead of usage dumps or
    tracebacks."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except BaseExceptionGroup as group:
            # a stop that reached several tasks at once (a server's, say, while its input
            # closed) is still one stop, not a traceback
            stop = _stop_of(group)
            if stop is None:
                raise
            raise self._stopped(stop) from None
        except KeyboardInterrupt as stop:
            raise self._stopped(type(stop)) from None

    @staticmethod
    def _stopped(stop: type[KeyboardInterrupt]) -> _Stopped:
        if issubclass(stop, Terminated):
            return _Stopped("terminated", EXIT_TERMINATED)
        if sys.stderr.isatty():
            click.echo(err=True)  # past the terminal's ^C echo
        return _Stopped("interrupted", EXIT_INTERRUPTED)

    def main(
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        **extra: Any,
    ) -> Any:
        global _json_errors
        previous = _on_sigterm(_raise_terminated)
        wanted = _json_errors
        _json_errors = False  # set when a command's --json flag is read (json_option)
        try:
            result = super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        except click.UsageError as err:
            _json_errors = _json_errors or _asks_for_json(sys.argv[1:] if args is None else args)
            fail(err, err.exit_code)
        except click.ClickException as err:
            fail(err, err.exit_code)
        except click.Abort:
            fail("aborted", kind="Aborted")
        except CoderoomsError as err:
            fail(err)
        except OSError as err:
            fail(
                f"{err.strerror or err}: {err.filename}" if err.filename else str(err),
                kind="OSError",
            )
        finally:
            _json_errors = wanted
            _on_sigterm(previous)
        if isinstance(result, int) and not isinstance(result, bool) and result != 0:
            sys.exit(result)
        if standalone_mode:
            sys.exit(0)
        return result


def _on_sigterm(handler: Any) -> Any:
    """Install ``handler`` for SIGTERM (from the main thread only); the one it replaces."""
    if handler is None or threading.current_thread() is not threading.main_thread():
        return None
    return signal.signal(signal.SIGTERM, handler)


@dataclass
class CliState:
    """Per-invocation settings shared by every subcommand."""

    db: str | None


def store_of(ctx: click.Context, *, existing: bool = False, read_only: bool = False) -> Store:
    """Open the store this invocation names (``--db``, ``$CODEROOMS_DB``, or the default).

    An in-memory store is refused: whatever a command wrote would be gone when it exits.
    With ``existing`` a path with no store is refused. A command that only reads also
    passes ``read_only``: the file is opened without write access, so it answers beside
    another process's write and from a read-only file or mount."""
    from coderooms.store import open_store  # not loaded by a command that needs no store

    state = ctx.find_object(CliState)
    store = open_store(
        state.db if state is not None else None,
        durable=True,
        existing=existing,
        read_only=read_only,
    )
    ctx.call_on_close(store.close)
    return store


def run(coroutine: Coroutine[Any, Any, _T]) -> _T:
    """Drive one async store call to completion from a command."""
    import asyncio  # not imported by a command that awaits nothing (see run_unawaited)

    return asyncio.run(coroutine)


def run_unawaited(coroutine: Coroutine[Any, Any, _T]) -> _T:
    """Drive a call that waits for nothing (no store, no task: each of its awaits is of a
    coroutine that returns without suspending) to completion without an event loop: a
    focus outside any session and desk does not import asyncio (~0.03 s of CPU of a
    fresh process). A call that suspends after all is a programming error."""
    try:
        coroutine.send(None)
    except StopIteration as done:
        return cast(_T, done.value)
    coroutine.close()
    raise RuntimeError("a call run without an event loop waited for something")


DB_HELP = (
    "Store to use: sqlite:///PATH (or a plain file path), or a PostgreSQL database shared "
    "by many hosts as postgresql://USER@HOST:PORT/DB. "
    f"Defaults to ${DB_ENV}, else .coderooms/rooms.db under the working directory."
)


def _db_given_here(ctx: click.Context, param: click.Parameter, value: str | None) -> None:
    """A ``--db`` typed after a command name: the same setting as one typed before it."""
    state = ctx.find_object(CliState)
    if value is not None and state is not None:
        state.db = value


def accept_global_options(group: click.Group) -> None:
    """Let every command under ``group`` take ``--db`` where a person types it:
    ``coderooms read --db URL`` means ``coderooms --db URL read``, and each command's
    help lists it."""
    for command in group.commands.values():
        if not any(param.name == "db" for param in command.params):
            command.params.append(
                click.Option(
                    ["--db"],
                    metavar="URL",
                    expose_value=False,
                    callback=_db_given_here,
                    help=DB_HELP,
                )
            )
        if isinstance(command, click.Group):
            accept_global_options(command)


@click.group(cls=CoderoomsGroup)
@click.option("--db", envvar=DB_ENV, metavar="URL", help=DB_HELP)
@click.version_option(package_name="coderooms", prog_name="coderooms")
@click.pass_context
def main(ctx: click.Context, db: str | None) -> None:
    """Shared rooms for coding agents: a durable, attributed log per desk.

    Start with `coderooms init`, add agents and desks, then `post` and `read`.
    """
    ctx.obj = CliState(db)
