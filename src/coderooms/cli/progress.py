"""Progress of long work, on standard error only (standard output stays the answer).

:class:`PhaseProgress` is a :data:`~coderooms.focus.salience.Report`: the workspace tells
it of each phase of work as it goes (indexing files, counting terms, embedding code). On
a terminal each phase draws a bar (click's); elsewhere each phase is one line, so a log
shows what a slow start was doing. A phase that does no work is never shown.
"""

from __future__ import annotations

import sys
from typing import Any

import click

__all__ = ["PhaseProgress"]


class PhaseProgress:
    def __init__(self, terminal: bool | None = None) -> None:
        self.terminal = sys.stderr.isatty() if terminal is None else terminal
        self._phase: str | None = None
        self._bar: Any = None
        self._shown = 0

    def __call__(self, phase: str, done: int, total: int) -> None:
        if phase != self._phase:
            self.close()
            self._phase = phase
            if self.terminal:
                self._bar = click.progressbar(length=total, label=phase, file=sys.stderr)
                self._bar.__enter__()
            else:
                click.echo(f"{phase}: {total}", err=True)
        if self._bar is not None:
            self._bar.update(done - self._shown)
            self._shown = done
        if done >= total:
            self.close()

    def close(self) -> None:
        """End the phase on show (a bar is drawn full and its line ended)."""
        if self._bar is not None:
            self._bar.__exit__(None, None, None)
        self._bar = None
        self._phase = None
        self._shown = 0
