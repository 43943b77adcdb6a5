"""Helpers for the index tests: fixture repositories are written into tmp dirs."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from coderooms.focus.graph import CodeGraph
from coderooms.workspace import Workspace

Files = dict[str, str | bytes]

GIT_ENV = {
    "GIT_AUTHOR_NAME": "Fixture",
    "GIT_AUTHOR_EMAIL": "fixture@example.com",
    "GIT_COMMITTER_NAME": "Fixture",
    "GIT_COMMITTER_EMAIL": "fixture@example.com",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_CONFIG_NOSYSTEM": "1",
}


# lib.alpha reaches pkg/one.py only as pkg's alias gamma: a rename in lib.py changes
# nothing one.py names, so only pkg's exports digest can send the change on.
ALIASED_REEXPORT: dict[str, str] = {
    "lib.py": "def alpha():\n    return 1\n",
    "pkg/__init__.py": "from lib import alpha as gamma\n",
    "pkg/one.py": "from pkg import gamma\n\n\ndef beta():\n    return gamma()\n",
}
ALPHA_RENAMED = "def delta():\n    return 1\n"


def write_files(root: Path, files: Files) -> None:
    for rel, content in files.items():
        target = root / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            target.write_bytes(content)
        else:
            target.write_text(content, encoding="utf-8")


def git(root: Path, *args: str, when: int = 1_700_000_000) -> str:
    env = {
        **os.environ,
        **GIT_ENV,
        "GIT_AUTHOR_DATE": f"@{when} +0000",
        "GIT_COMMITTER_DATE": f"@{when} +0000",
    }
    done = subprocess.run(
        ["git", *args], cwd=root, env=env, capture_output=True, text=True, check=True
    )
    return done.stdout


def commit_all(root: Path, message: str, when: int) -> None:
    git(root, "add", "-A", when=when)
    git(root, "commit", "-q", "-m", message, when=when)


def new_repo(parent: Path, files: Files, *, use_git: bool = False, name: str = "repo") -> Path:
    root = parent / name
    root.mkdir()
    write_files(root, files)
    if use_git:
        git(root, "init", "-q", "-b", "main")
        commit_all(root, "initial", 1_700_000_000)
    return root


def edge_set(graph: CodeGraph, *kinds: str) -> set[tuple[str, str, str]]:
    return {(e.kind, e.src, e.dst) for e in graph.edges if not kinds or e.kind in kinds}


def node_ids(graph: CodeGraph, kind: str | None = None) -> set[str]:
    return {n.id for n in graph.nodes if kind is None or n.kind == kind}


def index(root: Path, workers: int = 1) -> tuple[Workspace, CodeGraph]:
    ws = Workspace.open(root)
    ws.index(workers=workers)
    return ws, ws.graph()


def dump(root: Path) -> dict[str, object]:
    """Everything an index holds that must not depend on how it was built."""
    import sqlite3

    conn = sqlite3.connect(root / ".coderooms" / "index.db")
    try:
        return {
            "files": sorted(
                conn.execute(
                    "SELECT path, language, content_hash, size, lines, is_test, is_generated, is_vendored, "
                    "parse_error, decode_replaced, facts, uses FROM files"
                )
            ),
            "symbols": sorted(conn.execute("SELECT * FROM symbols")),
            "edges": sorted(conn.execute("SELECT src, dst, kind, weight, origin FROM edges")),
            "unresolved": sorted(conn.execute("SELECT * FROM unresolved")),
            "skipped": sorted(conn.execute("SELECT path, reason FROM skipped")),
        }
    finally:
        conn.close()


def cold_dump(root: Path, scratch: Path) -> dict[str, object]:
    """Index a fresh copy of ``root`` from nothing and dump it."""
    import shutil

    copy = scratch / f"cold-{len(list(scratch.iterdir()))}"
    shutil.copytree(root, copy, symlinks=True, ignore=shutil.ignore_patterns(".coderooms"))
    Workspace.open(copy).index(workers=1)
    return dump(copy)
