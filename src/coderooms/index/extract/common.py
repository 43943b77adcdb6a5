"""Pieces every language extractor shares: symbol ids, nesting, owners, hashes."""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import partial
from hashlib import sha256
from operator import attrgetter

from tree_sitter import Node

from coderooms.index.facts import SymbolFact

SIGNATURE_MAX_CHARS = 240
DOCSTRING_MAX_CHARS = 400
HASH_DIGEST_BYTES = 16
HASH_HEX_CHARS = 2 * HASH_DIGEST_BYTES


def content_hash(data: bytes | memoryview) -> str:
    """Identity of a file's or a symbol's text (SHA-256, the fastest digest here,
    cut to ``HASH_DIGEST_BYTES``)."""
    return sha256(data).hexdigest()[:HASH_HEX_CHARS]


HEAD_READ_FACTOR = 4
"""A text longer than this many times its limit (a long docstring) is first collapsed
by its head alone: when that runs past the limit, so does the whole, and the two agree
up to the head's end."""


def one_line(text: str, limit: int) -> str:
    """``text`` on one line (whitespace runs collapsed to a space), cut to ``limit``
    characters with an ellipsis when longer."""
    if limit > 0 and len(text) > HEAD_READ_FACTOR * limit:
        head = " ".join(text[: HEAD_READ_FACTOR * limit].split())
        if len(head) > limit:
            return head[: limit - 1] + "…"
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
    """Maps a byte offset to the id of the innermost symbol around it.

    Definitions nest, so they cut the file into runs of bytes with one innermost owner
    each: ``bounds`` holds where each run starts and ``owner_of_run`` its owner (the
    file's id before the first run), and a lookup is one bisection.
    """

    def __init__(self, file_id: str, spans: list[tuple[int, int, str]]) -> None:
        # spans: (start, end, owner id), sorted by start, outer before inner
        bounds: list[int] = []
        owner_of_run = [file_id]
        open_spans: list[tuple[int, str]] = []  # (end, owner) of the spans around
        for start, end, owner in spans:
            while open_spans and open_spans[-1][0] <= start:
                bounds.append(open_spans.pop()[0])
                owner_of_run.append(open_spans[-1][1] if open_spans else file_id)
            bounds.append(start)
            owner_of_run.append(owner)
            open_spans.append((end, owner))
        while open_spans:
            bounds.append(open_spans.pop()[0])
            owner_of_run.append(open_spans[-1][1] if open_spans else file_id)
        self._run_at = partial(bisect_right, bounds)
        self._owner_of_run = owner_of_run

    def at(self, pos: int) -> str:
        return self._owner_of_run[self._run_at(pos)]

    def of(self, positions: Iterable[int]) -> list[str]:
        """Owners of many offsets at once, in their order."""
        return list(map(self._owner_of_run.__getitem__, map(self._run_at, positions)))


_LINE_THEN_ID = attrgetter("start_line", "id")


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
    spans = sorted([(d.node.start_byte, -d.node.end_byte, i) for i, d in enumerate(defs)])
    defs[:] = [defs[i] for _, _, i in spans]
    starts = [start for start, _, _ in spans]
    ends = [-end for _, end, _ in spans]
    parents: list[int] = []
    stack: list[int] = []
    for i, start in enumerate(starts):
        while stack and ends[stack[-1]] <= start:
            stack.pop()
        parents.append(stack[-1] if stack else -1)
        stack.append(i)

    whole = memoryview(source)  # symbol hashes read slices without copying them
    seen: dict[str, int] = {}
    id_path: list[str] = []  # the qualname with twin suffixes, used to build child ids
    ids: list[str] = []
    symbols: list[SymbolFact] = []
    symbol_of: list[SymbolFact | None] = []
    pending_parent: list[tuple[SymbolFact, str]] = []
    impl_first: dict[str, int] = {}
    for i, d in enumerate(defs):
        p = parents[i]
        name = d.name
        container = d.container
        if p >= 0:
            base = id_path[p] + "."
        elif container:
            base = container + "."
        else:
            base = ""
        key = base + name
        if d.kind == "impl":
            id_path.append(key)
            ids.append(f"{path}::{key}")
            impl_first.setdefault(key, i)
            symbol_of.append(None)
            continue
        n = seen.get(key, 0) + 1
        seen[key] = n
        if n > 1:
            key = f"{key}#{n}"
        id_path.append(key)
        sid = f"{path}::{key}"
        ids.append(sid)
        parent_sym: SymbolFact | None = None
        kind = d.kind
        if p >= 0:
            parent_sym = symbol_of[p]
            qualname = (parent_sym.qualname if parent_sym else defs[p].name) + "." + name
            if kind == "function" and (defs[p].kind in ("class", "impl") or container):
                kind = "method"
        elif container:
            qualname = container + "." + name
            if kind == "function":
                kind = "method"
        else:
            qualname = name
        node = d.node
        start = starts[i]
        end = ends[i]
        sig_end = d.signature_end if d.signature_end > 0 else end
        sig = one_line(source[start:sig_end].decode("utf-8", "replace"), SIGNATURE_MAX_CHARS)
        sym = SymbolFact(
            sid,
            kind,
            name,
            qualname,
            parent_sym.id if parent_sym else None,
            node.start_point[0] + 1,
            node.end_point[0] + 1,
            sig.rstrip(":{ ").rstrip(),
            docstring(d),
            content_hash(whole[start:end]),
            False,
            end - start,
        )
        sym.is_test = is_test(d, qualname, parent_sym.qualname if parent_sym else None)
        if p >= 0 and parent_sym is None:
            pending_parent.append((sym, ids[p]))  # member of an impl block
        elif container:
            pending_parent.append((sym, f"{path}::{container}"))
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

    symbols.sort(key=_LINE_THEN_ID)
    return symbols, Owners(path, list(zip(starts, ends, ids, strict=True)))


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
