"""Python: symbols, imports, calls, references, bases and tests from one parse."""

from __future__ import annotations

import re
from functools import cache

import tree_sitter_python
from tree_sitter import Language, Node, Parser, Query, QueryCursor

from coderooms.index.extract.common import (
    DOCSTRING_MAX_CHARS,
    DefSite,
    build_symbols,
    node_text,
    one_line,
)
from coderooms.index.facts import FileFacts, ImportFact, dedupe_calls

# Names that are never worth a reference edge: the receiver conventions of methods.
IGNORED_REFERENCES = frozenset({"self", "cls"})
_IGNORED_DOTTED = tuple(f"{name}.".encode() for name in sorted(IGNORED_REFERENCES))

_QUERY = """
(function_definition) @def.function
(class_definition) @def.class
(import_statement) @import
(import_from_statement) @import
(call function: (identifier) @call.name)
(call function: (attribute attribute: (identifier) @call.attr))
(attribute object: (identifier) attribute: (identifier)) @ref.pair
(argument_list (identifier) @ref)
(keyword_argument value: (identifier) @ref)
(type (identifier) @ref)
(type (_ (identifier) @ref))
(type (_ (_ (identifier) @ref)))
(decorator (identifier) @ref)
(assignment right: (identifier) @ref)
(return_statement (identifier) @ref)
(expression_list (identifier) @ref)
(list (identifier) @ref)
(tuple (identifier) @ref)
(set (identifier) @ref)
(pair value: (identifier) @ref)
(except_clause (identifier) @ref)
(raise_statement (identifier) @ref)
(default_parameter value: (identifier) @ref)
(typed_default_parameter value: (identifier) @ref)
(conditional_expression (identifier) @ref)
(lambda body: (identifier) @ref)
(class_definition superclasses: (argument_list (identifier) @nofree))
"""


@cache
def language() -> Language:
    return Language(tree_sitter_python.language())


@cache
def query() -> Query:
    return Query(language(), _QUERY)


@cache
def parser() -> Parser:
    return Parser(language())


def is_test_path(path: str) -> bool:
    name = path.rsplit("/", 1)[-1]
    if name.startswith("test_") or name.endswith("_test.py") or name == "conftest.py":
        return True
    parts = path.split("/")[:-1]
    return any(p in ("test", "tests", "testing") for p in parts)


def _docstring(source: bytes, d: DefSite) -> str:
    body = d.node.child_by_field_name("body")
    if body is None or body.named_child_count == 0:
        return ""
    first = body.named_child(0)
    if first is None or first.type != "expression_statement":
        return ""
    string = first.named_child(0)
    if string is None or string.type != "string":
        return ""
    parts = [node_text(source, c) for c in string.named_children if c.type == "string_content"]
    return one_line(" ".join(parts), DOCSTRING_MAX_CHARS)


def _dotted(node: Node | None, source: bytes) -> str:
    return node_text(source, node) if node is not None else ""


def _imports(node: Node, source: bytes) -> ImportFact | list[ImportFact]:
    line = node.start_point[0] + 1
    if node.type == "import_statement":
        facts = []
        for child in node.children_by_field_name("name"):
            if child.type == "aliased_import":
                module = _dotted(child.child_by_field_name("name"), source)
                alias = _dotted(child.child_by_field_name("alias"), source)
            else:
                module = _dotted(child, source)
                alias = module.split(".", 1)[0]
            facts.append(ImportFact(module=module, alias=alias, line=line))
        return facts
    module_node = node.child_by_field_name("module_name")
    level = 0
    module = ""
    if module_node is not None and module_node.type == "relative_import":
        for c in module_node.children:
            if c.type == "import_prefix":
                level = c.end_byte - c.start_byte
            elif c.type == "dotted_name":
                module = _dotted(c, source)
    else:
        module = _dotted(module_node, source)
    names: list[tuple[str, str]] = []
    for child in node.children_by_field_name("name"):
        if child.type == "aliased_import":
            name = _dotted(child.child_by_field_name("name"), source)
            names.append((name, _dotted(child.child_by_field_name("alias"), source)))
        else:
            name = _dotted(child, source)
            names.append((name, name))
    if any(c.type == "wildcard_import" for c in node.children):
        names.append(("*", "*"))
    return ImportFact(module=module, names=tuple(names), level=level, line=line)


_NAME_BYTES = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_."
_DOTTED_NAME = re.compile(rb"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*")
RECEIVER_SCAN_BYTES = 256  # how far back a receiver's dotted name is looked for


def receiver_before(source: bytes, dot: int) -> str:
    """The receiver of a method call whose ``.`` is at byte ``dot``, read from the text:
    a dotted name (``self.items``), ``super()``, or ``?`` for anything else."""
    if dot <= 0 or source[dot : dot + 1] != b".":
        return "?"
    window = source[max(0, dot - RECEIVER_SCAN_BYTES) : dot]
    if window.endswith(b"super()"):
        return "super()"
    # The run of name characters that ends at the dot (rstrip finds where it starts).
    start = len(window.rstrip(_NAME_BYTES))
    tail = window[start:]
    if not tail or _DOTTED_NAME.fullmatch(tail) is None:
        return "?"
    before = window[start - 1 : start] if start > 0 else b""
    if before in (b")", b"]", b"}", b"'", b'"') or (start == 0 and dot > RECEIVER_SCAN_BYTES):
        return "?"  # the tail of a longer expression (f().x, a[0].y …)
    return tail.decode("utf-8", "replace")


def _split_pair(source: bytes, node: Node) -> tuple[str, str, int] | None:
    """``(receiver, attribute, attribute start byte)`` of an ``a.b`` node whose sides are
    both plain names; read from the text, through the children when the text holds more
    than the two names and the dot (a comment between them)."""
    start = node.start_byte
    end = node.end_byte
    text = source[start:end].decode("utf-8", "replace")
    dot = text.find(".")
    receiver = text[:dot].rstrip()
    attr = text[dot + 1 :].lstrip()
    if dot > 0 and receiver.isidentifier() and attr.isidentifier():
        return receiver, attr, end - len(attr.encode("utf-8"))
    obj = node.child_by_field_name("object")
    name = node.child_by_field_name("attribute")
    if obj is None or name is None:
        return None
    return node_text(source, obj), node_text(source, name), name.start_byte


def _start(node: Node) -> int:
    return node.start_byte


def _spans(nodes: list[Node] | tuple[()]) -> list[tuple[int, int]]:
    """(start, end) byte spans in document order (capture lists come unordered)."""
    return sorted([(n.start_byte, n.end_byte) for n in nodes])


def extract(facts: FileFacts, source: bytes) -> None:
    """Fill ``facts`` with what one Python file defines and uses."""
    tree = parser().parse(source)
    root = tree.root_node
    facts.parse_error = root.has_error
    caps = QueryCursor(query()).captures(root)
    path = facts.path
    file_is_test = facts.is_test

    defs: list[DefSite] = []
    # Capture lists come in no guaranteed order: sort what is processed in order.
    class_nodes = sorted(caps.get("def.class", ()), key=_start)
    function_nodes = sorted(caps.get("def.function", ()), key=_start)
    for kind, nodes in (("function", function_nodes), ("class", class_nodes)):
        for node in nodes:
            name = node.child_by_field_name("name")
            body = node.child_by_field_name("body")
            if name is not None:
                defs.append(
                    DefSite(
                        node,
                        kind,
                        node_text(source, name),
                        signature_end=body.start_byte if body else -1,
                    )
                )

    def is_test(d: DefSite, qualname: str, parent_qualname: str | None) -> bool:
        if not file_is_test:
            return False
        if d.kind == "class":
            return d.name.startswith("Test")
        if not d.name.startswith("test"):
            return False
        return parent_qualname is None or parent_qualname.split(".")[-1].startswith("Test")

    symbols, owners = build_symbols(
        path, source, defs, docstring=lambda d: _docstring(source, d), is_test=is_test
    )
    facts.symbols = symbols
    owner_at = owners.at

    for node in class_nodes:
        supers = node.child_by_field_name("superclasses")
        if supers is None:
            continue
        owner = owner_at(node.start_byte + 1)
        for base in supers.named_children:
            if base.type in ("identifier", "attribute"):
                facts.bases.append((owner, node_text(source, base)))

    imports: list[ImportFact] = []
    for node in sorted(caps.get("import", ()), key=_start):
        got = _imports(node, source)
        if isinstance(got, list):
            imports.extend(got)
        else:
            imports.append(got)
    imports.sort(key=lambda f: f.line)
    facts.imports = imports

    raw_calls: list[tuple[str, str, str]] = []
    call_name_starts: set[int] = set()
    for node in caps.get("call.name", ()):
        start = node.start_byte
        call_name_starts.add(start)
        raw_calls.append(
            (owner_at(start), "", source[start : node.end_byte].decode("utf-8", "replace"))
        )
    call_attrs = _spans(caps.get("call.attr", ()))
    for (start, end), owner in zip(
        call_attrs, owners.sweep([a for a, _ in call_attrs]), strict=True
    ):
        call_name_starts.add(start)
        receiver = receiver_before(source, start - 1)
        raw_calls.append((owner, receiver, source[start:end].decode("utf-8", "replace")))
    facts.calls = dedupe_calls(raw_calls)

    refs: set[tuple[str, str, str]] = set()
    # Names are taken where they are used as values (arguments, annotations, decorators,
    # returns, assignments …): local arithmetic on variables never names a symbol, and
    # skipping it keeps extraction cheap. Base classes become inherits edges instead.
    not_free = {n.start_byte for n in caps.get("nofree", ())}
    spans = [span for span in _spans(caps.get("ref", ())) if span[0] not in not_free]
    for owner, (a, b) in zip(owners.sweep([a for a, _ in spans]), spans, strict=True):
        ident = source[a:b].decode("utf-8", "replace")
        if ident not in IGNORED_REFERENCES:
            refs.add((owner, "", ident))
    # Each a.b with plain names on both sides, captured whole: split at its dot. Half of
    # them are called (their attribute is a call's name, and ends where the pair ends)
    # and many read self.x or cls.x: both are dropped before any text is decoded.
    call_ends = {end for _, end in call_attrs}
    pairs = sorted(
        (
            n
            for n in caps.get("ref.pair", ())
            if n.end_byte not in call_ends and not source.startswith(_IGNORED_DOTTED, n.start_byte)
        ),
        key=_start,
    )
    for node, owner in zip(pairs, owners.sweep([n.start_byte for n in pairs]), strict=True):
        split = _split_pair(source, node)
        if split is None:
            continue
        receiver, attr, attr_start = split
        if attr_start in call_name_starts or receiver in IGNORED_REFERENCES:
            continue
        refs.add((owner, receiver, attr))
    facts.refs = sorted(refs)
