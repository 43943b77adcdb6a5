"""A stand-in CodeGraph builder for Python trees (stdlib ``ast``), used by the localize
benchmark only when ``coderooms.workspace`` is not importable. Files, classes,
functions, methods; contains, imports and name-resolved call edges."""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

from coderooms.focus.graph import CodeEdge, CodeGraph, CodeNode

SKIP_DIRS = {".git", "node_modules", "__pycache__", ".tox", "build", "dist", ".venv", "venv"}
MAX_FILE_BYTES = 2_000_000


def _is_test(path: str) -> bool:
    parts = path.split("/")
    name = parts[-1]
    return (
        name.startswith("test_")
        or name.endswith("_test.py")
        or name == "conftest.py"
        or any(p in ("tests", "test", "testing") for p in parts[:-1])
    )


def build(root: Path) -> tuple[CodeGraph, dict[str, str]]:
    nodes: list[CodeNode] = []
    edges: list[CodeEdge] = []
    texts: dict[str, str] = {}
    calls: list[tuple[str, str]] = []
    imports: list[tuple[str, str]] = []
    for file in sorted(root.rglob("*.py")):
        rel = file.relative_to(root).as_posix()
        if any(p in SKIP_DIRS for p in rel.split("/")) or file.stat().st_size > MAX_FILE_BYTES:
            continue
        text = file.read_text(encoding="utf-8", errors="replace")
        texts[rel] = text
        is_test = _is_test(rel)
        lines = text.count("\n") + 1
        nodes.append(
            CodeNode(
                rel,
                "file",
                rel,
                rel.rsplit("/", 1)[-1],
                rel,
                "python",
                1,
                lines,
                size_bytes=len(text),
                is_test=is_test,
            )
        )
        try:
            tree = ast.parse(text)
        except (SyntaxError, ValueError):
            continue

        def visit(
            body: list[ast.stmt],
            parent: str,
            prefix: str,
            in_class: bool,
            rel: str = rel,
            text: str = text,
            is_test: bool = is_test,
        ) -> None:
            for stmt in body:
                if isinstance(stmt, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
                    qual = f"{prefix}.{stmt.name}" if prefix else stmt.name
                    nid = f"{rel}::{qual}"
                    kind = (
                        "class"
                        if isinstance(stmt, ast.ClassDef)
                        else ("method" if in_class else "function")
                    )
                    seg = text.splitlines()[stmt.lineno - 1].strip()
                    nodes.append(
                        CodeNode(
                            nid,
                            kind,
                            rel,
                            stmt.name,
                            qual,
                            "python",
                            stmt.lineno,
                            stmt.end_lineno or stmt.lineno,
                            signature=seg,
                            docstring=(ast.get_docstring(stmt) or "")[:300],
                            parent=parent,
                            is_test=is_test,
                        )
                    )
                    edges.append(CodeEdge(parent, nid, "contains"))
                    for sub in ast.walk(stmt):
                        if isinstance(sub, ast.Call):
                            f = sub.func
                            name = (
                                f.id
                                if isinstance(f, ast.Name)
                                else (f.attr if isinstance(f, ast.Attribute) else None)
                            )
                            if name:
                                calls.append((nid, name))
                    visit(stmt.body, nid, qual, isinstance(stmt, ast.ClassDef))

        visit(tree.body, rel, "", False)
        for stmt in ast.walk(tree):
            if isinstance(stmt, ast.ImportFrom) and stmt.module:
                imports.append((rel, stmt.module))
            elif isinstance(stmt, ast.Import):
                imports.extend((rel, a.name) for a in stmt.names)
    by_name: dict[str, list[str]] = defaultdict(list)
    for n in nodes:
        if n.kind != "file":
            by_name[n.name].append(n.id)
    seen: set[tuple[str, str]] = set()
    for src, name in calls:
        targets = by_name.get(name, [])
        if 0 < len(targets) <= 3:
            for t in targets:
                if (src, t) not in seen and src != t:
                    seen.add((src, t))
                    edges.append(CodeEdge(src, t, "calls"))
    modules: dict[str, str] = {}
    for path in texts:
        stem = path[:-3]
        if stem.endswith("/__init__"):
            stem = stem[: -len("/__init__")]
        parts = stem.split("/")
        for i in range(len(parts)):
            modules.setdefault(".".join(parts[i:]), path)
    for src, mod in imports:
        dst = modules.get(mod)
        if dst and dst != src:
            edges.append(CodeEdge(src, dst, "imports"))
    return CodeGraph(nodes=tuple(nodes), edges=tuple(edges)), texts
