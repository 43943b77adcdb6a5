"""The console script's entry point.

Loading the command line takes a few tenths of a second (click, the store, the MCP SDK).
Ctrl-C in that window would otherwise end in Python's traceback, and SIGTERM in silent
death; here each is the same one line and exit status as a command stopped part-way.
This module imports nothing heavy.
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Callable

EXIT_INTERRUPTED = 128 + signal.SIGINT
"""Exit status after Ctrl-C stopped a command part-way (or while it loaded)."""
EXIT_TERMINATED = 128 + signal.SIGTERM
"""Exit status after SIGTERM stopped a command (or while it loaded)."""


def _terminated_while_loading(signum: int, frame: object) -> None:
    """SIGTERM before any command ran: nothing to unwind, one line and the status."""
    os.write(2, b"error: terminated\n")
    os._exit(EXIT_TERMINATED)


def _load() -> Callable[[], object]:
    from coderooms.cli import main as cli

    return cli


def main() -> None:
    signal.signal(signal.SIGTERM, _terminated_while_loading)  # the command line installs its own
    try:
        cli = _load()
    except KeyboardInterrupt:
        sys.stderr.write("error: interrupted\n")
        raise SystemExit(EXIT_INTERRUPTED) from None
    cli()
