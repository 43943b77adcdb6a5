"""The processes an index run forks: its pool's workers and the children that take a
share of a cold run's work on the other core (see
:class:`~coderooms.index.indexer.ForkedShare` and
:class:`~coderooms.index.handover.FirstBuild`).

Only the parent acts on a stop signal: it ends its children. A child lives in a process
group of its own, so a Ctrl-C at a terminal, ``timeout`` or ``kill -- -PGID`` reach the
parent alone, and a child never unwinds into the parent's code (its transaction, its
pool): whatever happens, it ends where its work ends.
"""

from __future__ import annotations

import gc
import os
import signal
import threading
from collections.abc import Callable

__all__ = ["STOP_SIGNALS", "can_fork", "fork_child", "start_worker"]

STOP_SIGNALS = frozenset({signal.SIGINT, signal.SIGTERM})
"""Signals that stop a command. They are the parent's to act on: it ends its children."""


def start_worker() -> None:
    """Once per forked process (a pool's worker, a child): only the parent stops it.

    A worker that dies of a signal at an arbitrary point may hold a queue's lock (the
    parent's ``pool.terminate()`` then waits for it forever) or print a traceback. So a
    worker leaves the process group and ignores SIGINT. SIGTERM, which ``terminate()``
    sends once it holds the locks, gets its default action back: a forked worker
    inherits the parent's handler. The stop signals were blocked while the parent
    forked (see :func:`fork_child`); one that came meanwhile is delivered now."""
    gc.disable()  # many small, acyclic objects: the cyclic collector only adds pauses
    if hasattr(os, "setpgrp"):
        os.setpgrp()
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP_SIGNALS)


def can_fork() -> bool:
    """Whether this process may fork: not while another thread could hold a lock."""
    return hasattr(os, "fork") and threading.active_count() == 1


def fork_child(work: Callable[[], object], failed: int) -> int | None:
    """Fork a child that runs ``work`` (after :func:`start_worker`) and exits: with
    status 0 when it returned, ``failed`` when it raised (silently: the parent says what
    it does instead). The child's pid, or None when no process could be had (EAGAIN,
    ENOMEM). Call it only when :func:`can_fork`."""
    # A stop signal waits while the process forks: its handler would otherwise run in
    # the middle of a fork (where an exception is ignored, the stop lost).
    blocked = signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
    try:
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child (coverage does not follow it)
            code = failed
            try:
                start_worker()
                work()
                code = 0
            finally:
                os._exit(code)
    except OSError:
        return None
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
    return pid
