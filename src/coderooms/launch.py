"""The console script's entry point.

Loading the command line takes a few tenths of a second (click, the store, the MCP SDK).
Ctrl-C in that window would otherwise end in Python's traceback, and SIGTERM in silent
death; here each is the same one line and exit status as a command stopped part-way.
This module imports nothing heavy.
"""

from __future__ import annotations

import atexit
import gc
import os
import signal
import sys
import threading
from collections.abc import Callable

EXIT_INTERRUPTED = 128 + signal.SIGINT
"""Exit status after Ctrl-C stopped a command part-way (or while it loaded)."""
EXIT_TERMINATED = 128 + signal.SIGTERM
"""Exit status after SIGTERM stopped a command (or while it loaded)."""


BLAS_THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")
"""Thread counts of numpy's linear algebra, set to one unless the user set them: focus
multiplies small matrices by vectors, which a second BLAS thread does not speed up, and
on a machine busy with agents the spinning BLAS threads made warm focus 1.5-3x slower
(39.7 ms against 122.2 ms measured on pytest under load)."""


def _one_blas_thread() -> None:
    for name in BLAS_THREAD_VARIABLES:
        os.environ.setdefault(name, "1")


def _terminated_while_loading(signum: int, frame: object) -> None:
    """SIGTERM before any command ran: nothing to unwind, one line and the status."""
    os.write(2, b"error: terminated\n")
    os._exit(EXIT_TERMINATED)


def _load() -> tuple[Callable[[], object], bool]:
    """The command line, and whether its command is one of ``ONE_SHOT``."""
    from coderooms.cli import ONE_SHOT, command_name, main_for

    one_shot = command_name(sys.argv[1:]) in ONE_SHOT
    if one_shot:
        gc.disable()  # before the command's own imports: see ONE_SHOT
        _import_sparse_alone()
    return main_for(sys.argv[1:]), one_shot


def _exit_without_teardown() -> None:
    """End a one-shot command that succeeded as the interpreter would, less freeing its
    objects one by one: the command closed what it opened (its workspace and store, with
    its context); the threads that are waited for at exit and the exit functions run,
    the output is flushed, then the process ends. The graph and focus index of a large
    repository are millions of objects: freeing them took 0.40-0.46 s after a first focus
    on sympy (0.06-0.07 s without), with the answer printed and nothing left to do."""
    if not _flushed():
        return  # the normal exit reports it
    current = threading.current_thread()
    for thread in threading.enumerate():
        if thread is not current and not thread.daemon:
            thread.join()
    if threading.active_count() > 1:
        return  # a daemon thread still at work (a model loading): the exit it always had
    atexit._run_exitfuncs()
    if _flushed():  # what the exit functions wrote too
        os._exit(0)


def _flushed() -> bool:
    """Whether standard output and error took what was written to them."""
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        return False
    return True


def _import_sparse_alone() -> None:
    """Import ``scipy.sparse`` (a focus ranks with it) without the numpy modules it has
    numpy import for nothing. As it is imported, scipy copies numpy's namespace into its
    array-API layer: every name ``numpy.__all__`` and ``dir(numpy)`` list, and numpy
    imports a listed submodule (``f2py``, ``testing``, ``ma``, ``polynomial`` ...) when it
    is first asked for; about 0.08 s of CPU of the 0.15-0.17 s that importing
    scipy.sparse takes (measured on this machine), for modules a command that answers
    once never uses. While scipy.sparse is imported, numpy lists only the names it
    already holds; its lists are put back after (a submodule is still there to import:
    only scipy's copy of the namespace lacks it, and scipy asks no array API for them)."""
    import numpy

    if "scipy.sparse" in sys.modules:
        return
    names = vars(numpy)
    listed, exported = names["__dir__"], names["__all__"]
    names["__dir__"] = lambda: [name for name in listed() if name in names]
    names["__all__"] = [name for name in exported if name in names]
    try:
        import scipy.sparse  # noqa: F401  # kept in sys.modules for the command
    finally:
        names["__dir__"], names["__all__"] = listed, exported


def main() -> None:
    signal.signal(signal.SIGTERM, _terminated_while_loading)  # the command line installs its own
    _one_blas_thread()  # before anything imports numpy
    try:
        cli, one_shot = _load()
    except KeyboardInterrupt:
        sys.stderr.write("error: interrupted\n")
        raise SystemExit(EXIT_INTERRUPTED) from None
    try:
        cli()
    except SystemExit as done:
        if one_shot and done.code in (None, 0):
            _exit_without_teardown()
        raise
