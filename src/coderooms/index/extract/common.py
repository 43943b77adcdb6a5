"""Pieces every language extractor shares: symbol ids, nesting, owners, hashes."""

from __future__ import annotations

import hashlib
from bisect import bisect_right
from collections.abc import Callable
from dataclasses import dataclass

from tree_sitter import Node

from coderooms.index.facts import SymbolFact

SIGNATURE_MAX_CHARS = 240
DOCSTRING_MAX_CHARS = 400
HASH_DIGEST_BYTES = 16


def content_hash(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=HASH_DIGEST_BYTES).hexdigest()


def one_line(text: str, limit: int) -> str:
    collapsed = " ".join(text.split())
    return collapsed if len(collapsed) <= limit else collapsed[: limit - 1] + "…"


@dataclass(slots=True)
class DefSite:
    """A definition found in the tree, before ids are assigned.

    ``kind`` is "class", "function", "module" or "impl" (a Rust impl block: its
    members belong to the type it names, and it is not a symbol of its own when that
    type is defined in the same file). ``container`` names the type a Go method is
    declared on.
    """

    node: Node
    kind: str
    name: str
    container: str = ""
    signature_end: int = -1  # byte where the signature stops (the body's start)


class Owners:
    """Maps a byte offset to the id of the innermost symbol around it."""

    def __init__(self, file_id: str, spans: list[tuple[int, int, str, int]]) -> None:
        # spans: (start, end, owner id, parent span index or -1), sorted by start
        self._file_id = file_id
        self._starts = [s[0] for s in spans]
        self._spans = spans

    def at(self, pos: int) -> str:
        i = bisect_right(self._starts, pos) - 1
        spans = self._spans
        while i >= 0:
            start, end, owner, parent = spans[i]
            if pos < end:
                return owner
            i = parent
        return self._file_id

    def sweep(self, positions: list[int]) -> list[str]:
        """Owners of many offsets at once; ``positions`` must be ascending."""
        spans = self._spans
        n = len(spans)
        file_id = self._file_id
        out: list[str] = []
        stack: list[tuple[int, str]] = []  # (end, owner) of the spans around the cursor
        j = 0
        for pos in positions:
            while j < n and spans[j][0] <= pos:
                start, end, owner, _ = spans[j]
                while stack and stack[-1][0] <= start:
                    stack.pop()
                stack.append((end, owner))
                j += 1
            while stack and stack[-1][0] <= pos:
                stack.pop()
            out.append(stack[-1][1] if stack else file_id)
        return out


def build_symbols(
    path: str,
    source: bytes,
    defs: list[DefSite],
    *,
    docstring: Callable[[DefSite], str],
    is_test: Callable[[DefSite, str, str | None], bool],
) -> tuple[list[SymbolFact], Owners]:
    """Assign readable, stable ids to definitions and work out who contains whom.

    Ids are ``path::Outer.inner``; a second definition with the same id in one file
    gets ``#2`` (then ``#3`` …), in document order, so nothing is dropped.
    """
    defs.sort(key=lambda d: (d.node.start_byte, -d.node.end_byte))
    parents: list[int] = []
    stack: list[int] = []
    for i, d in enumerate(defs):
        start = d.node.start_byte
        while stack and defs[stack[-1]].node.end_byte <= start:
            stack.pop()
        parents.append(stack[-1] if stack else -1)
        stack.append(i)

    seen: dict[str, int] = {}
    id_path: list[str] = []  # the qualname with twin suffixes, used to build child ids
    ids: list[str] = []
    symbols: list[SymbolFact] = []
    symbol_of: list[SymbolFact | None] = []
    pending_parent: list[tuple[SymbolFact, str]] = []
    impl_first: dict[str, int] = {}
    for i, d in enumerate(defs):
        p = parents[i]
        base = id_path[p] + "." if p >= 0 else ""
        if d.container and p < 0:
            base = d.container + "."
        if d.kind == "impl":
            key = base + d.name
            id_path.append(key)
            ids.append(f"{path}::{key}")
            impl_first.setdefault(key, i)
            symbol_of.append(None)
            continue
        key = base + d.name
        n = seen.get(key, 0) + 1
        seen[key] = n
        if n > 1:
            key = f"{key}#{n}"
        id_path.append(key)
        sid = f"{path}::{key}"
        ids.append(sid)
        qual_prefix = ""
        parent_sym: SymbolFact | None = None
        if p >= 0:
            parent_sym = symbol_of[p]
            qual_prefix = (parent_sym.qualname if parent_sym else defs[p].name) + "."
        elif d.container:
            qual_prefix = d.container + "."
        kind = d.kind
        parent_kind = defs[p].kind if p >= 0 else ""
        if kind == "function" and (parent_kind in ("class", "impl") or d.container):
            kind = "method"
        node = d.node
        sig_end = d.signature_end if d.signature_end > 0 else node.end_byte
        sig = one_line(
            source[node.start_byte : sig_end].decode("utf-8", "replace"), SIGNATURE_MAX_CHARS
        )
        sym = SymbolFact(
            id=sid,
            kind=kind,
            name=d.name,
            qualname=qual_prefix + d.name,
            parent=parent_sym.id if parent_sym else None,
            start_line=node.start_point[0] + 1,
            end_line=node.end_point[0] + 1,
            signature=sig.rstrip(":{ ").rstrip(),
            docstring=docstring(d),
            content_hash=content_hash(source[node.start_byte : node.end_byte]),
            size_bytes=node.end_byte - node.start_byte,
        )
        sym.is_test = is_test(d, sym.qualname, parent_sym.qualname if parent_sym else None)
        if p >= 0 and parent_sym is None:
            pending_parent.append((sym, ids[p]))  # member of an impl block
        elif d.container:
            pending_parent.append((sym, f"{path}::{d.container}"))
        symbols.append(sym)
        symbol_of.append(sym)

    by_id = {s.id: s for s in symbols}
    # An impl block whose type is not defined in this file stands in for that type.
    for key, i in sorted(impl_first.items(), key=lambda kv: kv[1]):
        sid = f"{path}::{key}"
        if sid in by_id:
            continue
        node = defs[i].node
        stand_in = SymbolFact(
            id=sid,
            kind="class",
            name=defs[i].name,
            qualname=key,
            parent=None,
            start_line=node.start_point[0] + 1,
            end_line=node.end_point[0] + 1,
            signature=one_line(
                source[
                    node.start_byte : defs[i].signature_end
                    if defs[i].signature_end > 0
                    else node.end_byte
                ].decode("utf-8", "replace"),
                SIGNATURE_MAX_CHARS,
            ).rstrip("{ "),
            docstring=docstring(defs[i]),
            content_hash=content_hash(source[node.start_byte : node.end_byte]),
            size_bytes=node.end_byte - node.start_byte,
        )
        by_id[sid] = stand_in
        symbols.append(stand_in)
    for sym, parent_id in pending_parent:
        if parent_id in by_id:
            sym.parent = parent_id

    spans = [(d.node.start_byte, d.node.end_byte, ids[i], parents[i]) for i, d in enumerate(defs)]
    symbols.sort(key=lambda s: (s.start_line, s.id))
    return symbols, Owners(path, spans)


def node_text(source: bytes, node: Node) -> str:
    return source[node.start_byte : node.end_byte].decode("utf-8", "replace")


def leading_comment(source: bytes, node: Node) -> str:
    """The comment block right above a definition (JS/Go/Rust/Java doc comments)."""
    lines: list[str] = []
    prev = node.prev_named_sibling
    expected_row = node.start_point[0] - 1
    while prev is not None and prev.type in ("comment", "line_comment", "block_comment"):
        if prev.end_point[0] != expected_row:
            break
        lines.insert(0, node_text(source, prev))
        expected_row = prev.start_point[0] - 1
        prev = prev.prev_named_sibling
    if not lines:
        return ""
    cleaned = []
    for text in lines:
        for raw in text.splitlines():
            line = raw.strip()
            for mark in ("/**", "/*", "*/", "///", "//!", "//"):
                if line.startswith(mark):
                    line = line[len(mark) :]
            line = line.removesuffix("*/").strip().lstrip("*").strip()
            if line:
                cleaned.append(line)
    return one_line(" ".join(cleaned), DOCSTRING_MAX_CHARS)
