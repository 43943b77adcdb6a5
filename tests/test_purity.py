"""The pure core (rooms/, focus/) answers from its arguments alone: it imports no I/O."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "coderooms"
PURE_PACKAGES = ("rooms", "focus")

# Modules whose import would let a core module touch files, sockets, processes, clocks
# or an event loop.
FORBIDDEN = frozenset(
    {
        "asyncio",
        "sqlite3",
        "socket",
        "ssl",
        "select",
        "selectors",
        "subprocess",
        "multiprocessing",
        "threading",
        "concurrent",
        "os",
        "io",
        "shutil",
        "tempfile",
        "pathlib",
        "glob",
        "time",
        "datetime",
        "http",
        "urllib",
        "requests",
        "httpx",
        "psycopg",
        "psycopg2",
        "mcp",
        "uvicorn",
        "starlette",
        "click",
        "tree_sitter",
        "coderooms.store",
        "coderooms.index",
        "coderooms.cli",
        "coderooms.mcp",
        "coderooms.workspace",
        "coderooms.embeddings",
    }
)
FORBIDDEN_CALLS = frozenset({"open", "input", "print", "exec", "eval", "__import__"})


def _core_files() -> list[Path]:
    files: list[Path] = []
    for package in PURE_PACKAGES:
        files.extend(sorted((SRC / package).rglob("*.py")))
    return files


def _imported(tree: ast.AST) -> list[str]:
    names: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.append(node.module)
    return names


def _is_forbidden(module: str) -> bool:
    return any(module == bad or module.startswith(bad + ".") for bad in FORBIDDEN)


@pytest.mark.parametrize("path", _core_files(), ids=lambda p: str(p.relative_to(SRC)))
def test_core_module_imports_no_io(path: Path) -> None:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    bad = [m for m in _imported(tree) if _is_forbidden(m)]
    assert bad == [], f"{path.name} imports I/O modules {bad}"


@pytest.mark.parametrize("path", _core_files(), ids=lambda p: str(p.relative_to(SRC)))
def test_core_module_calls_no_io_builtins(path: Path) -> None:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    calls = [
        node.func.id
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in FORBIDDEN_CALLS
    ]
    assert calls == [], f"{path.name} calls {calls}"


def test_importing_the_room_core_loads_no_io_module() -> None:
    probe = (
        "import sys; import coderooms.rooms; "
        "bad = sorted(m for m in ('sqlite3', 'socket', 'asyncio', 'subprocess', 'http.client', "
        "'urllib.request', 'psycopg', 'coderooms.store', 'coderooms.index') if m in sys.modules); "
        "print(','.join(bad))"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_the_purity_check_catches_a_forbidden_import() -> None:
    tree = ast.parse("import sqlite3\nfrom os import path\nfrom coderooms.store.sqlite import X\n")
    assert [m for m in _imported(tree) if _is_forbidden(m)] == [
        "sqlite3",
        "os",
        "coderooms.store.sqlite",
    ]
