"""Ranking signals: one module each, all of one shape.

A signal reads the goal (as a :class:`~coderooms.focus.signals.base.Query`) and the
goal-independent :class:`~coderooms.focus.salience.SalienceIndex`, and returns a ranked
list of ``(row, reason)`` seeds, best first. The combiner (:func:`coderooms.focus.salience.rank`)
fuses the lists by weighted Reciprocal Rank Fusion; a signal's weight lives in
:class:`~coderooms.focus.salience.SalienceConfig` under its name, so an ablation is a
weight of zero (``SalienceConfig().without("semantic")``).

:data:`SIGNALS` lists them in fusion order (the order reasons are written in).
"""

from __future__ import annotations

from coderooms.focus.signals import (
    block_messages,
    dotted_modules,
    file_stems,
    lexical_files,
    lexical_functions,
    linked_lines,
    literals,
    named_symbols,
    named_words,
    options,
    paths,
    semantic,
    traceback_frames,
)
from coderooms.focus.signals.base import Query, Seed, Signal

SIGNALS: tuple[Signal, ...] = (
    lexical_files.SIGNAL,
    lexical_functions.SIGNAL,
    lexical_functions.BY_FILE,
    named_symbols.SIGNAL,
    named_words.SIGNAL,
    dotted_modules.SIGNAL,
    paths.SIGNAL,
    traceback_frames.SIGNAL,
    linked_lines.SIGNAL,
    literals.SIGNAL,
    block_messages.SIGNAL,
    options.SIGNAL,
    file_stems.SIGNAL,
    semantic.SIGNAL,
)
SIGNAL_NAMES: tuple[str, ...] = tuple(s.name for s in SIGNALS)

__all__ = ["SIGNALS", "SIGNAL_NAMES", "Query", "Seed", "Signal"]
