"""coderooms — shared memory and context tools for agentic work.

The public surface (``shared/spec/API.md``) is importable from here. The errors are
imported eagerly; the room core and the host-side names (stores, the code workspace)
load on first use, so that importing any part of the package (a focus reads
``coderooms.focus``) never pulls in a database driver, a parser or the room core.
"""

from __future__ import annotations

from importlib import import_module
from importlib.util import find_spec
from typing import Any

from coderooms.errors import *  # noqa: F403
from coderooms.errors import __all__ as _error_names

__version__ = "0.1.0"

ROOM_CORE = "coderooms.rooms"
"""The module whose names (its ``__all__``) are also this package's."""
_LAZY: dict[str, str] = {
    "open_store": "coderooms.store",
    "Store": "coderooms.store",
    "SQLiteStore": "coderooms.store",
    "Workspace": "coderooms.workspace",
    "skim": "coderooms.skimmer",
    "SkimResult": "coderooms.skimmer",
    "SkimCut": "coderooms.skimmer",
}


def _room_names() -> list[str]:
    return list(import_module(ROOM_CORE).__all__)


def _is_submodule(name: str) -> bool:
    return find_spec(f"{__name__}.{name}") is not None


def __getattr__(name: str) -> Any:
    if name == "__all__":  # asked for by `from coderooms import *` and by dir()
        names = [*_error_names, *_room_names(), *_LAZY, "__version__"]
        globals()["__all__"] = names
        return names
    module = _LAZY.get(name)
    if module is None:
        # `from coderooms import tokens` asks here first for a submodule not loaded yet:
        # the import system loads it when this says there is no such name.
        if name.startswith("__") or _is_submodule(name) or name not in _room_names():
            raise AttributeError(f"module 'coderooms' has no attribute {name!r}")
        module = ROOM_CORE
    value = getattr(import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__getattr__("__all__")})
