"""Python: symbols, imports, calls, references, bases and tests from one parse."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable
from functools import cache, partial
from itertools import chain, compress, count, repeat
from operator import add, and_, attrgetter, itemgetter, not_

import tree_sitter_python
from tree_sitter import Language, Node, Parser, Query, QueryCursor

from coderooms.index.extract.common import (
    DOCSTRING_MAX_CHARS,
    DefSite,
    build_symbols,
    node_text,
    one_line,
)
from coderooms.index.facts import (
    ANNOTATED,
    DECORATED,
    LOCAL,
    RETURNED,
    STAR_EXPORTS,
    FileFacts,
    ImportFact,
)

# Names that are never worth a reference edge: the receiver conventions of methods.
IGNORED_REFERENCES = frozenset({"self", "cls"})

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
(assignment) @typed
(typed_parameter) @typed
(with_item (as_pattern) @entered)
(with_item (parenthesized_expression (as_pattern) @entered))
(except_clause (as_pattern) @caught)
(typed_default_parameter) @typed
(return_statement (call function: [(identifier) (attribute)] @returns.call))
(return_statement (identifier) @returns.name)
((assignment left: (identifier) @_all) @exports (#eq? @_all "__all__"))
((augmented_assignment left: (identifier) @_all) @exports (#eq? @_all "__all__"))
"""


_LITERAL_TYPES = {
    "list": "list",
    "list_comprehension": "list",
    "dictionary": "dict",
    "dictionary_comprehension": "dict",
    "set": "set",
    "set_comprehension": "set",
    "string": "str",
    "concatenated_string": "str",
}


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


_STRING_START = re.compile(rb"[rRuUbBfF]{0,2}[\"']")
# The opening of a string literal without interpolation, and what may follow a
# statement on its last line.
_PLAIN_STRING_OPEN = re.compile(rb"(?:[rRbBuU]|[rR][bB]|[bB][rR])?(\"\"\"|'''|\"|')")
_LINE_END = re.compile(rb"[ \t]*(?:[\r\n#]|\Z)")
# A line that starts with a backslash: a continuation character out of place (invalid
# source), after which only the tree's recovery says what the string was.
_STRAY_CONTINUATION = re.compile(rb"[ \t]*\\")


def _plain_string(source: bytes, at: int) -> bytes | None:
    """The text between the quotes of the string literal at ``at`` when it is plain (no
    f-prefix, no backslash, on one line unless triple-quoted) and only a comment follows
    it on its last line: what the tree's one string_content holds. None when only the
    tree can tell."""
    opened = _PLAIN_STRING_OPEN.match(source, at)
    if opened is None:
        return None
    quote = opened.group(1)
    start = opened.end()
    end = source.find(quote, start)
    if end < 0:
        return None
    content = source[start:end]
    if b"\\" in content or (len(quote) == 1 and b"\n" in content):
        return None
    if _LINE_END.match(source, end + len(quote)) is None:
        return None
    line_end = source.find(b"\n", end)
    if line_end >= 0 and _STRAY_CONTINUATION.match(source, line_end + 1):
        return None
    return content


def _docstring(source: bytes, d: DefSite) -> str:
    # The body starts where its first statement does: unless that opens a string
    # literal, there is no docstring to look for in the tree; a plain one is read from
    # the text, anything else (f-strings, concatenations, escapes) from the tree.
    if d.signature_end >= 0:
        if _STRING_START.match(source, d.signature_end) is None:
            return ""
        plain = _plain_string(source, d.signature_end)
        if plain is not None:
            return one_line(plain.decode("utf-8", "replace"), DOCSTRING_MAX_CHARS)
    return docstring_from_tree(source, d.node)


def docstring_from_tree(source: bytes, definition: Node) -> str:
    """The docstring of a function or class definition, read from its tree: the text of
    a string literal that is the body's first statement."""
    body = definition.child_by_field_name("body")
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
TYPE_TEXT_MAX_CHARS = 200  # longest annotation kept as type evidence


# In a reversed window: brackets, quotes, a comment's # and a backslash.
_SIGNIFICANT = re.compile(rb"[()\[\]{}'\"#\\]")
_CLOSER_OF = {ord(")"): ord("("), ord("]"): ord("["), ord("}"): ord("{")}
_QUOTES = frozenset(b"'\"")
_OPENERS = frozenset(b"([{")


def _call_start(window: bytes) -> int:
    """Where the argument list that ends ``window`` opens (its ``(``), or -1 when the
    brackets do not match inside the window, or a comment or an escaped quote makes
    the text ambiguous. Strings in the arguments are stepped over."""
    text = window[::-1]  # read backwards, jumping from one significant byte to the next
    depth: list[int] = []
    at = 0
    while (found := _SIGNIFICANT.search(text, at)) is not None:
        i = found.start()
        byte = text[i]
        if byte in _QUOTES:
            close = text.find(text[i : i + 1], i + 1)
            if close < 0 or text[close + 1 : close + 2] == b"\\":
                return -1
            at = close + 1
            continue
        if byte in _CLOSER_OF:
            depth.append(_CLOSER_OF[byte])
        elif byte in _OPENERS:
            if not depth or byte != depth[-1]:
                return -1
            depth.pop()
            if not depth:
                return len(window) - 1 - i
        else:  # a comment or a backslash
            return -1
        at = i + 1
    return -1


def receiver_before(source: bytes, dot: int) -> str:
    """The receiver of a method call whose ``.`` is at byte ``dot``, read from the text:
    a dotted name (``self.items``), ``super()``, the result of calling a dotted name
    (``Foo.create(…)`` reads ``Foo.create()``), or ``?`` for anything else."""
    if dot <= 0 or source[dot : dot + 1] != b".":
        return "?"
    window = source[dot - RECEIVER_SCAN_BYTES if dot > RECEIVER_SCAN_BYTES else 0 : dot]
    if window.endswith(b")"):
        if window.endswith(b"super()"):
            return "super()"
        opened = _call_start(window)
        if opened <= 0:
            return "?"
        callee = _name_before(source, dot - len(window) + opened)
        return "?" if callee == "?" else callee + "()"
    return _name_ending(window, dot)  # one call per method call: the window is read once


def _name_before(source: bytes, end: int) -> str:
    """The dotted name whose text ends at byte ``end``, or ``?`` when what ends there
    is not one (or only the tail of a longer expression)."""
    low = end - RECEIVER_SCAN_BYTES
    return _name_ending(source[low if low > 0 else 0 : end], end)


_BEFORE_A_LONGER_EXPRESSION = frozenset(b")]}'\"")  # f().x, a[0].y, "s".z …


def _name_ending(window: bytes, end: int) -> str:
    """:func:`_name_before` of ``end``, given ``window``: the bytes before ``end``, at
    most ``RECEIVER_SCAN_BYTES`` of them."""
    # The run of name characters that ends at the dot (rstrip finds where it starts).
    start = len(window.rstrip(_NAME_BYTES))
    if start == len(window):
        return "?"
    tail = window[start:]
    if _DOTTED_NAME.fullmatch(tail) is None:
        return "?"
    if start:
        if window[start - 1] in _BEFORE_A_LONGER_EXPRESSION:
            return "?"  # the tail of a longer expression
    elif end > RECEIVER_SCAN_BYTES:
        return "?"  # a name longer than the window: only its tail is seen
    return tail.decode("ascii")  # a dotted name is ASCII


def _split_pair(source: bytes, node: Node, start: int, end: int) -> tuple[str, str, int] | None:
    """``(receiver, attribute, attribute start byte)`` of an ``a.b`` node whose sides are
    both plain names, from ``start`` to ``end``; read from the text, through the children
    when the text holds more than the two names and the dot (a comment between them)."""
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


_start = attrgetter("start_byte")
_end = attrgetter("end_byte")
_first = itemgetter(0)
_before = partial(add, -1)  # the byte before an offset


def _spans(nodes: list[Node] | tuple[()]) -> tuple[list[int], list[int]]:
    """Start and end bytes of ``nodes`` in document order (a capture list comes in an
    order that can change from one process to the next)."""
    if not nodes:
        return [], []
    spans = sorted(zip(map(_start, nodes), map(_end, nodes), strict=True))
    return [start for start, _ in spans], [end for _, end in spans]


def _texts(source: bytes) -> Callable[[Iterable[int], Iterable[int]], list[str]]:
    """A function from start and end bytes to the texts between them: slices of the
    decoded text when every byte is ASCII (bytes and characters line up), decoded
    slices of ``source`` otherwise."""
    if source.isascii():
        text = source.decode("ascii")
        return lambda starts, ends: list(map(text.__getitem__, map(slice, starts, ends)))
    decode = partial(bytes.decode, encoding="utf-8", errors="replace")
    return lambda starts, ends: list(map(decode, map(source.__getitem__, map(slice, starts, ends))))


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

    # Calls, references and pairs are many: they go through C-level maps (start and end
    # bytes, owners by bisection, names by slicing) rather than a Python loop each.
    text_of = _texts(source)
    owners_of = owners.of
    starts, ends = _spans(caps.get("call.name", ()))
    attr_starts, attr_ends = _spans(caps.get("call.attr", ()))
    receivers = map(partial(receiver_before, source), map(_before, attr_starts))
    calls: Counter[tuple[str, str, str]] = Counter(
        chain(
            zip(owners_of(starts), repeat(""), text_of(starts, ends)),
            zip(owners_of(attr_starts), receivers, text_of(attr_starts, attr_ends), strict=True),
        )
    )
    facts.calls = [(o, r, n, c) for (o, r, n), c in calls.items()]

    # Names are taken where they are used as values (arguments, annotations, decorators,
    # returns, assignments …): local arithmetic on variables never names a symbol, and
    # skipping it keeps extraction cheap. Base classes become inherits edges instead.
    ref_starts, ref_ends = _spans(caps.get("ref", ()))
    ref_names = text_of(ref_starts, ref_ends)
    keep = map(not_, map(IGNORED_REFERENCES.__contains__, ref_names))
    not_free = set(map(_start, caps.get("nofree", ())))
    if not_free:
        keep = map(and_, keep, map(not_, map(not_free.__contains__, ref_starts)))
    # A dict keeps first-seen order, and every list is in document order: the facts
    # come out the same in every run.
    refs = dict.fromkeys(compress(zip(owners_of(ref_starts), repeat(""), ref_names), list(keep)))
    # Each a.b with plain names on both sides, captured whole: split at its dot. Half of
    # them are called (their attribute is a call's name, and ends where the pair ends)
    # and many read self.x or cls.x: both are dropped before any text is decoded.
    call_ends = set(attr_ends)
    call_name_starts = set(starts)
    call_name_starts.update(attr_starts)
    # self.x and cls.x stay: a property (or a method passed as a value) is read so.
    # Each node's bytes are read once (a node's offsets cost more than a bisection).
    pair_nodes = caps.get("ref.pair", ())
    pairs = sorted(zip(map(_start, pair_nodes), map(_end, pair_nodes), count()))
    for (start, end, at), owner in zip(pairs, owners_of(map(_first, pairs)), strict=True):
        if end in call_ends:
            continue
        split = _split_pair(source, pair_nodes[at], start, end)
        if split is None:
            continue
        receiver, attr, attr_start = split
        if attr_start in call_name_starts:
            continue
        refs[owner, receiver, attr] = None
    facts.refs = list(refs)
    # What return statements give: T() for a call of T (cls() in a class method), =name
    # for a name (return self); and the names __all__ lists.
    call_starts, call_ends_ = _spans(caps.get("returns.call", ()))
    name_starts, name_ends = _spans(caps.get("returns.name", ()))
    extra = list(
        chain(
            zip(
                owners_of(call_starts),
                repeat(RETURNED),
                map(_called, text_of(call_starts, call_ends_)),
            ),
            zip(
                owners_of(name_starts),
                repeat(RETURNED),
                map(_named, text_of(name_starts, name_ends)),
            ),
        )
    )
    extra.extend(_decorated(function_nodes, source, owner_at))
    # A return annotation the signature may not end with (the signature was cut to its
    # bound, or a comment follows the colon) is kept beside it. Symbols and definitions
    # line up, both in document order.
    for d, symbol in zip(defs, symbols, strict=True):
        signature = symbol.signature
        if d.kind == "function" and (signature.endswith("…") or "#" in signature):
            returns = d.node.child_by_field_name("return_type")
            text = one_line(node_text(source, returns), TYPE_TEXT_MAX_CHARS) if returns else ""
            if text and not signature.endswith(text):
                extra.append((symbol.id, ANNOTATED, text))
    extra.extend(_clause_bound(caps.get("entered", ()), caps.get("caught", ()), source, owner_at))
    for bound in caps.get("exports", ()):
        if _at_module_level(bound):
            extra.extend((path, STAR_EXPORTS, name) for name in _exported(bound, source))
    facts.types = _types(caps.get("typed", ()), source, owner_at, extra)


def _decorated(
    functions: Iterable[Node], source: bytes, owner_at: Callable[[int], str]
) -> list[tuple[str, str, str]]:
    """``(function, DECORATED, decorator)`` for each decorator of a function, as written
    without its ``@`` (``property``, ``functools.cached_property``, ``x.setter``); a
    decorator spanning lines by its first line. Read from the lines just above each
    ``def`` (asking the tree for every function's parent costs more)."""
    rows = []
    for definition in functions:
        at = definition.start_byte
        line_start = source.rfind(b"\n", 0, at) + 1
        found = []
        while line_start > 0:
            above = source.rfind(b"\n", 0, line_start - 1) + 1
            line = source[above : line_start - 1].strip()
            if not line.startswith(b"@"):
                break
            found.append(line[1:].strip().decode("utf-8", "replace"))
            line_start = above
        if found:
            owner = owner_at(at + 1)
            rows.extend(
                (owner, DECORATED, one_line(text, TYPE_TEXT_MAX_CHARS)) for text in reversed(found)
            )
    return rows


def _clause_bound(
    entered: Iterable[Node], caught: Iterable[Node], source: bytes, owner_at: Callable[[int], str]
) -> list[tuple[str, str, str]]:
    """``(owner, name, evidence)`` for the names ``with … as name`` and ``except … as
    name`` bind. A context manager's target is what its enter method gives, written as
    that call (``pytest.raises().__enter__()``, ``lock.__aenter__()`` under ``async
    with``); a caught exception is an instance of the class named (``E()``). A target
    whose value shows no name is a local of no known type."""
    rows: list[tuple[str, str, str]] = []
    for pattern, is_with in chain(zip(entered, repeat(True)), zip(caught, repeat(False))):
        alias = pattern.child_by_field_name("alias")
        var = alias.named_child(0) if alias is not None else None
        value: Node | None = pattern.named_child(0)
        if var is None or var.type != "identifier" or value is None:
            continue
        if value.type == "call":
            function = value.child_by_field_name("function")
            value = function if is_with else None
            called = "()"
        else:
            called = ""
        evidence = LOCAL
        if value is not None and value.type in ("identifier", "attribute"):
            text = node_text(source, value)
            if not is_with:
                evidence = text + "()"
            else:
                evidence = f"{text}{called}.{_enter_method(pattern)}()"
        rows.append((owner_at(var.start_byte), node_text(source, var), evidence))
    return rows


def _enter_method(pattern: Node) -> str:
    """``__aenter__`` for a target of ``async with``, else ``__enter__``."""
    statement = pattern.parent
    while statement is not None and statement.type != "with_statement":
        statement = statement.parent
    first = statement.child(0) if statement is not None else None
    return "__aenter__" if first is not None and first.type == "async" else "__enter__"


def _called(callee: str) -> str:
    return callee + "()"


def _named(name: str) -> str:
    return "=" + name


def _types(
    nodes: Iterable[Node],
    source: bytes,
    owner_at: Callable[[int], str],
    extra: Iterable[tuple[str, str, str]] = (),
) -> list[tuple[str, str, str]]:
    """``(owner, variable, evidence)`` for each name bound where its type shows: the
    evidence is ``T()`` for a call of ``T``, ``T`` for an annotation or a literal of the
    builtin type ``T``, ``=T`` for a module-level ``X = T``. Variables are plain names
    and attributes of ``self`` or ``cls``; ``nodes`` are the bound names (@typed), and
    ``extra`` rows already made (returns, ``__all__``) are kept as they are."""
    found: dict[tuple[str, str, str], None] = dict.fromkeys(extra)
    # Each node's type and offsets are asked for once: every answer is a new object.
    for bound in nodes:
        assigned = bound.type == "assignment"
        if assigned:
            var = bound.child_by_field_name("left")
            if var is None:
                continue
            var_type = var.type
            if var_type in ("pattern_list", "tuple_pattern"):
                for part in var.named_children:  # unpacked names: locals of no known type
                    if part.type == "identifier":
                        found[owner_at(part.start_byte), node_text(source, part), LOCAL] = None
                continue
            if var_type not in ("identifier", "attribute"):
                continue
        else:
            var = bound.child_by_field_name("name") or bound.named_child(0)
            if var is None or var.type != "identifier":
                continue
        var_start = var.start_byte
        name = source[var_start : var.end_byte].decode("utf-8", "replace")
        if "." in name:
            head, _, attr = name.partition(".")
            if head not in IGNORED_REFERENCES or "." in attr:
                continue
        annotation = bound.child_by_field_name("type")
        if annotation is not None:
            evidence = one_line(node_text(source, annotation), TYPE_TEXT_MAX_CHARS)
        else:
            right = bound.child_by_field_name("right") if assigned else None
            if right is None:
                continue
            right_type = right.type
            if right_type == "call":
                function = right.child_by_field_name("function")
                if function is None or function.type not in ("identifier", "attribute"):
                    continue
                evidence = node_text(source, function) + "()"
            elif right_type in ("identifier", "attribute"):
                if not _at_module_level(bound):  # an alias only at module level
                    if "." not in name:
                        found[owner_at(var_start), name, LOCAL] = None
                    continue
                evidence = "=" + node_text(source, right)
            elif right_type in _LITERAL_TYPES:
                evidence = _LITERAL_TYPES[right_type]
            elif "." in name:
                continue
            else:
                evidence = LOCAL  # bound here, to what is not known: still a local name
        # A parameter belongs to its function: its start lies inside the definition.
        found[owner_at(var_start), name, evidence] = None
    return sorted(found)


_EXPORT_SEQUENCES = frozenset({"list", "tuple"})


def _at_module_level(bound: Node) -> bool:
    statement = bound.parent
    return (
        statement is not None and statement.parent is not None and statement.parent.type == "module"
    )


def _exported(bound: Node, source: bytes) -> list[str]:
    """The names an ``__all__ = […]`` (or ``+= […]``) lists (``""`` alone for an empty
    one); ``*`` when it is not a literal sequence of plain strings (the module's
    exports are then not known)."""
    right = bound.child_by_field_name("right")
    if right is None or right.type not in _EXPORT_SEQUENCES:
        return [STAR_EXPORTS]
    names = []
    for item in right.named_children:
        if item.type == "comment":
            continue
        text = node_text(source, item).strip()
        if item.type != "string" or len(text) < 2 or text[0] not in "'\"" or text[-1] != text[0]:
            return [STAR_EXPORTS]
        name = text[1:-1]
        if not name.isidentifier():
            return [STAR_EXPORTS]
        names.append(name)
    return names or [""]  # an empty __all__ exports nothing, unlike none at all
