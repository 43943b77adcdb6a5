"""coderooms — shared memory and context tools for agentic work.

The public surface (``shared/spec/API.md``) is importable from here. The pure room core
is imported eagerly; host-side names (stores, the code workspace) load on first use so
that importing the core never pulls in a database driver or a parser.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

from coderooms.errors import *  # noqa: F403
from coderooms.errors import __all__ as _error_names
from coderooms.rooms import *  # noqa: F403
from coderooms.rooms import __all__ as _room_names

__version__ = "0.1.0"

_LAZY: dict[str, str] = {
    "open_store": "coderooms.store",
    "Store": "coderooms.store",
    "SQLiteStore": "coderooms.store",
    "Workspace": "coderooms.workspace",
    "skim": "coderooms.skimmer",
    "SkimResult": "coderooms.skimmer",
    "SkimCut": "coderooms.skimmer",
}

__all__ = [*_error_names, *_room_names, *_LAZY, "__version__"]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'coderooms' has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value
    return value
