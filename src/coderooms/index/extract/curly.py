"""JavaScript, TypeScript/TSX, Go, Rust and Java: symbols, imports, calls and bases."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cache

from tree_sitter import Language, Node, Parser, Query, QueryCursor

from coderooms.index.extract.common import DefSite, build_symbols, leading_comment, node_text
from coderooms.index.facts import FileFacts, ImportFact, dedupe_calls

_JS_QUERY = """
(function_declaration) @def.function
(generator_function_declaration) @def.function
(class_declaration) @def.class
(method_definition) @def.function
(variable_declarator name: (identifier) value: [(arrow_function) (function_expression)]) @def.function
(import_statement) @import
(export_statement source: (_)) @import
(call_expression) @call
(new_expression) @new
(class_heritage) @bases
"""

_TS_EXTRA = """
(interface_declaration) @def.class
(abstract_class_declaration) @def.class
(enum_declaration) @def.class
(internal_module) @def.module
(method_signature) @def.function
(function_signature) @def.function
(abstract_method_signature) @def.function
(extends_type_clause) @bases
"""

_GO_QUERY = """
(function_declaration) @def.function
(method_declaration) @def.gomethod
(type_spec) @def.class
(import_spec) @import
(call_expression) @call
"""

_RUST_QUERY = """
(function_item) @def.function
(function_signature_item) @def.function
(struct_item) @def.class
(enum_item) @def.class
(union_item) @def.class
(trait_item) @def.class
(impl_item) @def.impl
(mod_item) @def.module
(use_declaration) @import
(call_expression) @call
"""

_JAVA_QUERY = """
(class_declaration) @def.class
(interface_declaration) @def.class
(enum_declaration) @def.class
(record_declaration) @def.class
(method_declaration) @def.function
(constructor_declaration) @def.function
(import_declaration) @import
(method_invocation) @call
(object_creation_expression) @new
(superclass) @bases
(super_interfaces) @bases
(extends_interfaces) @bases
"""

TYPE_NAME_NODES = frozenset(
    {
        "identifier",
        "type_identifier",
        "member_expression",
        "scoped_type_identifier",
        "nested_identifier",
        "generic_type",
        "scoped_identifier",
    }
)


@dataclass(frozen=True, slots=True)
class Grammar:
    name: str
    load: Callable[[], object]
    query: str


def _ts_lang() -> object:
    import tree_sitter_typescript

    return tree_sitter_typescript.language_typescript()


def _tsx_lang() -> object:
    import tree_sitter_typescript

    return tree_sitter_typescript.language_tsx()


def _js_lang() -> object:
    import tree_sitter_javascript

    return tree_sitter_javascript.language()


def _go_lang() -> object:
    import tree_sitter_go

    return tree_sitter_go.language()


def _rust_lang() -> object:
    import tree_sitter_rust

    return tree_sitter_rust.language()


def _java_lang() -> object:
    import tree_sitter_java

    return tree_sitter_java.language()


GRAMMARS: dict[str, Grammar] = {
    "javascript": Grammar("javascript", _js_lang, _JS_QUERY),
    "typescript": Grammar("typescript", _ts_lang, _JS_QUERY + _TS_EXTRA),
    "tsx": Grammar("tsx", _tsx_lang, _JS_QUERY + _TS_EXTRA),
    "go": Grammar("go", _go_lang, _GO_QUERY),
    "rust": Grammar("rust", _rust_lang, _RUST_QUERY),
    "java": Grammar("java", _java_lang, _JAVA_QUERY),
}


# What a variable is bound to, as evidence of its type (see FileFacts.types): a
# constructor (``new T(…)``, ``&T{…}``, ``T::new()``) or a declared type.
_JS_TYPES = """
(variable_declarator name: (identifier) @var value: (new_expression constructor: [(identifier) (member_expression)] @call))
"""
_TS_TYPES = (
    _JS_TYPES
    + """
(required_parameter pattern: (identifier) @var type: (type_annotation [(type_identifier) (nested_type_identifier)] @annotation))
(optional_parameter pattern: (identifier) @var type: (type_annotation [(type_identifier) (nested_type_identifier)] @annotation))
(variable_declarator name: (identifier) @var type: (type_annotation [(type_identifier) (nested_type_identifier)] @annotation))
"""
)
_GO_TYPES = """
(parameter_declaration name: (identifier) @var type: [(type_identifier) (pointer_type (type_identifier)) (qualified_type) (pointer_type (qualified_type))] @annotation)
(short_var_declaration left: (expression_list . (identifier) @var .) right: (expression_list . [(composite_literal type: [(type_identifier) (qualified_type)] @call) (unary_expression operand: (composite_literal type: [(type_identifier) (qualified_type)] @call))] .))
(var_spec name: (identifier) @var type: [(type_identifier) (pointer_type (type_identifier)) (qualified_type)] @annotation)
"""
_JAVA_TYPES = """
(local_variable_declaration type: [(type_identifier) (scoped_type_identifier) (generic_type)] @annotation declarator: (variable_declarator name: (identifier) @var))
(formal_parameter type: [(type_identifier) (scoped_type_identifier) (generic_type)] @annotation name: (identifier) @var)
(field_declaration type: [(type_identifier) (scoped_type_identifier) (generic_type)] @annotation declarator: (variable_declarator name: (identifier) @var))
"""
_RUST_TYPES = """
(let_declaration pattern: (identifier) @var type: [(type_identifier) (generic_type)] @annotation)
(let_declaration pattern: (identifier) @var value: (call_expression function: (scoped_identifier path: (identifier) @call name: (identifier) @ctor)))
(let_declaration pattern: (identifier) @var value: (struct_expression name: (type_identifier) @call))
(parameter pattern: (identifier) @var type: [(type_identifier) (reference_type type: (type_identifier))] @annotation)
"""
TYPE_QUERIES = {
    "javascript": _JS_TYPES,
    "typescript": _TS_TYPES,
    "tsx": _TS_TYPES,
    "go": _GO_TYPES,
    "java": _JAVA_TYPES,
    "rust": _RUST_TYPES,
}
RUST_CONSTRUCTORS = frozenset({"new", "default"})  # T::new() is taken to make a T


@cache
def _types_query(language: str) -> Query:
    return Query(Language(GRAMMARS[language].load()), TYPE_QUERIES[language])


def _types(
    language: str, root: Node, source: bytes, owner_at: Callable[[int], str]
) -> list[tuple[str, str, str]]:
    """``(owner, variable, evidence)``: ``T()`` for a value constructed as a ``T``, ``T``
    for a declared type (pointers, references and type arguments dropped)."""
    found: dict[tuple[str, str, str], None] = {}
    for _, caps in QueryCursor(_types_query(language)).matches(root):
        var = caps["var"][0]
        ctor = caps.get("ctor")
        if ctor and node_text(source, ctor[0]) not in RUST_CONSTRUCTORS:
            continue
        if "call" in caps:
            evidence = node_text(source, caps["call"][0]) + "()"
        else:
            text = node_text(source, caps["annotation"][0])
            evidence = _strip_generic(text.lstrip("*&").removeprefix("mut ").strip())
        if "\n" in evidence:
            continue
        found[owner_at(var.start_byte), node_text(source, var), evidence] = None
    return sorted(found)


@cache
def _compiled(language: str) -> tuple[Parser, Query]:
    grammar = GRAMMARS[language]
    lang = Language(grammar.load())
    return Parser(lang), Query(lang, grammar.query)


def parser(language: str) -> Parser:
    return _compiled(language)[0]


def is_test_path(language: str, path: str) -> bool:
    name = path.rsplit("/", 1)[-1]
    dirs = path.split("/")[:-1]
    if language in ("javascript", "typescript", "tsx"):
        return (
            ".test." in name
            or ".spec." in name
            or any(d in ("__tests__", "test", "tests") for d in dirs)
        )
    if language == "go":
        return name.endswith("_test.go")
    if language == "rust":
        return "tests" in dirs
    if language == "java":
        stem = name.removesuffix(".java")
        return "test" in dirs or stem.endswith(("Test", "Tests", "IT"))
    return False


def _strip_type(text: str) -> str:
    """``*pkg.Type[T]`` / ``Vec<T>`` / ``a::b::Type`` -> ``Type``."""
    for opener in ("<", "["):
        text = text.split(opener, 1)[0]
    text = text.strip().lstrip("*&").strip()
    for sep in ("::", "."):
        text = text.rsplit(sep, 1)[-1]
    return text.removeprefix("mut ").strip()


def _string_value(source: bytes, node: Node) -> str:
    return node_text(source, node).strip("\"'`")


def _receiver_text(source: bytes, node: Node | None) -> str:
    if node is None:
        return "?"
    if node.type in ("this", "self", "super"):
        return node.type
    if node.type in ("new_expression", "object_creation_expression"):
        # (new T(…)).m(): the receiver is a T, written as its constructor call
        ctor = node.child_by_field_name("constructor") or node.child_by_field_name("type")
        if ctor is not None and ctor.type in ("identifier", "type_identifier"):
            return node_text(source, ctor) + "()"
        return "?"
    if node.type in (
        "identifier",
        "member_expression",
        "field_expression",
        "selector_expression",
        "scoped_identifier",
        "field_access",
        "type_identifier",
    ):
        text = node_text(source, node)
        return text if "(" not in text and "\n" not in text else "?"
    return "?"


def _has_test_attribute(source: bytes, node: Node) -> bool:
    prev = node.prev_named_sibling
    while prev is not None and prev.type == "attribute_item":
        text = node_text(source, prev)
        if "test" in text:
            return True
        prev = prev.prev_named_sibling
    return False


def _java_annotated_test(source: bytes, node: Node) -> bool:
    for child in node.children:
        if child.type == "modifiers":
            text = node_text(source, child)
            return "@Test" in text or "@ParameterizedTest" in text or "@RepeatedTest" in text
    return False


def _rust_use(source: bytes, node: Node, line: int) -> list[ImportFact]:
    """Flatten a Rust use tree into one ImportFact per module path."""
    facts: list[ImportFact] = []

    def walk(n: Node, prefix: str) -> None:
        t = n.type
        if t == "scoped_use_list":
            path = n.child_by_field_name("path")
            base = _join(prefix, node_text(source, path)) if path is not None else prefix
            lst = n.child_by_field_name("list")
            if lst is not None:
                for c in lst.named_children:
                    walk(c, base)
        elif t == "use_list":
            for c in n.named_children:
                walk(c, prefix)
        elif t == "use_as_clause":
            path = n.child_by_field_name("path")
            alias = n.child_by_field_name("alias")
            full = _join(prefix, node_text(source, path)) if path is not None else prefix
            mod, _, name = full.rpartition("::")
            facts.append(
                ImportFact(
                    module=mod,
                    names=((name, node_text(source, alias) if alias else name),),
                    line=line,
                )
            )
        elif t == "use_wildcard":
            inner = n.named_children[0] if n.named_children else None
            base = _join(prefix, node_text(source, inner)) if inner is not None else prefix
            facts.append(ImportFact(module=base, names=(("*", "*"),), line=line))
        elif t in ("scoped_identifier", "identifier", "crate", "self", "super"):
            full = _join(prefix, node_text(source, n))
            mod, _, name = full.rpartition("::")
            if name == "self":
                mod, _, name = mod.rpartition("::")
            facts.append(ImportFact(module=mod, names=((name, name),), line=line))

    arg = node.child_by_field_name("argument")
    if arg is not None:
        walk(arg, "")
    return facts


def _join(prefix: str, rest: str) -> str:
    return f"{prefix}::{rest}" if prefix else rest


def _js_reexport(source: bytes, node: Node, module: str, line: int) -> ImportFact:
    """``export {a, b as c} from "./x"`` / ``export * from "./y"`` / ``export * as ns from``."""
    names: list[tuple[str, str]] = []
    alias = ""
    for part in node.named_children:
        if part.type == "export_clause":
            for spec in part.named_children:
                name = spec.child_by_field_name("name")
                bound = spec.child_by_field_name("alias")
                if name is not None:
                    text = node_text(source, name)
                    names.append((text, node_text(source, bound) if bound is not None else text))
        elif part.type == "namespace_export":
            ident = part.named_child(0)
            alias = node_text(source, ident) if ident is not None else ""
    if not names and not alias:
        names.append(("*", "*"))
    return ImportFact(module=module, names=tuple(names), alias=alias, line=line)


def _imports(language: str, source: bytes, node: Node) -> list[ImportFact]:
    line = node.start_point[0] + 1
    if language in ("javascript", "typescript", "tsx"):
        src = node.child_by_field_name("source")
        if src is None:
            return []
        if node.type == "export_statement":
            return [_js_reexport(source, node, _string_value(source, src), line)]
        names: list[tuple[str, str]] = []
        alias = ""
        for clause in node.named_children:
            if clause.type != "import_clause":
                continue
            for part in clause.named_children:
                if part.type == "identifier":
                    names.append(("default", node_text(source, part)))
                elif part.type == "namespace_import":
                    ident = part.named_children[0] if part.named_children else None
                    alias = node_text(source, ident) if ident is not None else ""
                elif part.type == "named_imports":
                    for spec in part.named_children:
                        if spec.type != "import_specifier":
                            continue
                        name = spec.child_by_field_name("name")
                        al = spec.child_by_field_name("alias")
                        if name is not None:
                            n = node_text(source, name)
                            names.append((n, node_text(source, al) if al is not None else n))
        return [
            ImportFact(
                module=_string_value(source, src), names=tuple(names), alias=alias, line=line
            )
        ]
    if language == "go":
        path = node.child_by_field_name("path")
        if path is None:
            return []
        module = _string_value(source, path)
        name = node.child_by_field_name("name")
        alias = node_text(source, name) if name is not None else module.rsplit("/", 1)[-1]
        return [ImportFact(module=module, alias=alias, line=line)]
    if language == "rust":
        return _rust_use(source, node, line)
    if language == "java":
        target = None
        star = False
        for c in node.named_children:
            if c.type in ("scoped_identifier", "identifier"):
                target = node_text(source, c)
            elif c.type == "asterisk":
                star = True
        if target is None:
            return []
        if star:
            return [ImportFact(module=target, names=(("*", "*"),), line=line)]
        is_static = any(c.type == "static" for c in node.children)
        if is_static:
            mod, _, member = target.rpartition(".")
            return [ImportFact(module=mod, names=((member, member),), line=line)]
        return [ImportFact(module=target, alias=target.rsplit(".", 1)[-1], line=line)]
    return []


def extract(facts: FileFacts, source: bytes) -> None:
    """Fill ``facts`` for one file of a brace language."""
    language = facts.language
    parser_, query = _compiled(language)
    tree = parser_.parse(source)
    root = tree.root_node
    facts.parse_error = root.has_error
    # Capture lists come in no guaranteed order: sort them by position.
    caps = {k: sorted(v, key=_start) for k, v in QueryCursor(query).captures(root).items()}
    file_is_test = facts.is_test

    defs: list[DefSite] = []
    imports: list[ImportFact] = []

    def body_start(node: Node) -> int:
        body = node.child_by_field_name("body")
        return body.start_byte if body is not None else -1

    for node in caps.get("def.function", ()):
        name = node.child_by_field_name("name")
        if name is None:
            continue
        target = node
        if node.type == "variable_declarator":
            value = node.child_by_field_name("value")
            sig_end = body_start(value) if value is not None else -1
            defs.append(DefSite(target, "function", node_text(source, name), signature_end=sig_end))
            continue
        defs.append(
            DefSite(target, "function", node_text(source, name), signature_end=body_start(node))
        )
    for node in caps.get("def.class", ()):
        name = node.child_by_field_name("name")
        if name is None:
            continue
        sig_end = body_start(node)
        if node.type == "type_spec":
            # `T struct` / `T interface`: stop after the keyword; an alias keeps its type.
            kind_node = node.child_by_field_name("type")
            if kind_node is None:
                sig_end = -1
            elif kind_node.type in ("struct_type", "interface_type") and kind_node.child_count:
                sig_end = kind_node.children[0].end_byte
            else:
                sig_end = kind_node.end_byte
        defs.append(DefSite(node, "class", node_text(source, name), signature_end=sig_end))
    for node in caps.get("def.module", ()):
        name = node.child_by_field_name("name")
        if name is None:
            continue
        if node.type == "mod_item" and node.child_by_field_name("body") is None:
            n = node_text(source, name)
            imports.append(ImportFact(module=n, alias=n, level=1, line=node.start_point[0] + 1))
            continue
        defs.append(
            DefSite(node, "module", node_text(source, name), signature_end=body_start(node))
        )
    for node in caps.get("def.gomethod", ()):
        name = node.child_by_field_name("name")
        receiver = node.child_by_field_name("receiver")
        if name is None:
            continue
        container = ""
        if receiver is not None:
            for param in receiver.named_children:
                rtype = param.child_by_field_name("type")
                if rtype is not None:
                    container = _strip_type(node_text(source, rtype))
        defs.append(
            DefSite(
                node,
                "function",
                node_text(source, name),
                container=container,
                signature_end=body_start(node),
            )
        )
    for node in caps.get("def.impl", ()):
        typ = node.child_by_field_name("type")
        if typ is None:
            continue
        defs.append(
            DefSite(
                node, "impl", _strip_type(node_text(source, typ)), signature_end=body_start(node)
            )
        )

    def docstring(d: DefSite) -> str:
        anchor = d.node
        if anchor.type in ("type_spec", "variable_declarator") and anchor.parent is not None:
            anchor = anchor.parent
        if anchor.parent is not None and anchor.parent.type == "export_statement":
            anchor = anchor.parent
        return leading_comment(source, anchor)

    def is_test(d: DefSite, qualname: str, parent_qualname: str | None) -> bool:
        if language == "rust":
            n: Node | None = d.node
            while n is not None:
                if n.type in ("function_item", "mod_item") and _has_test_attribute(source, n):
                    return True
                n = n.parent
            return False
        if not file_is_test:
            return False
        if language == "go":
            return d.name.startswith(("Test", "Benchmark", "Fuzz", "Example"))
        if language == "java":
            if d.kind == "class":
                return d.name.endswith(("Test", "Tests", "IT"))
            return _java_annotated_test(source, d.node)
        return False

    symbols, owners = build_symbols(facts.path, source, defs, docstring=docstring, is_test=is_test)
    facts.symbols = symbols
    owner_at = owners.at

    for node in caps.get("import", ()):
        imports.extend(_imports(language, source, node))

    raw_calls: list[tuple[str, str, str]] = []
    for node in caps.get("call", ()):
        owner = owner_at(node.start_byte)
        if language == "java":
            method = node.child_by_field_name("name")
            if method is not None:
                obj = node.child_by_field_name("object")
                on = _receiver_text(source, obj) if obj is not None else ""
                raw_calls.append((owner, on, node_text(source, method)))
            continue
        fn = node.child_by_field_name("function")
        if fn is None:
            continue
        t = fn.type
        if t == "identifier":
            callee = node_text(source, fn)
            if callee == "require" and language in ("javascript", "typescript", "tsx"):
                args = node.child_by_field_name("arguments")
                first = args.named_children[0] if args is not None and args.named_children else None
                if first is not None and first.type == "string":
                    parent = node.parent
                    bound = (
                        parent.child_by_field_name("name")
                        if parent is not None and parent.type == "variable_declarator"
                        else None
                    )
                    imports.append(
                        ImportFact(
                            module=_string_value(source, first),
                            alias=node_text(source, bound)
                            if bound is not None and bound.type == "identifier"
                            else "",
                            line=node.start_point[0] + 1,
                        )
                    )
                continue
            raw_calls.append((owner, "", callee))
        elif t == "member_expression":
            prop = fn.child_by_field_name("property")
            if prop is not None:
                raw_calls.append(
                    (
                        owner,
                        _receiver_text(source, fn.child_by_field_name("object")),
                        node_text(source, prop),
                    )
                )
        elif t == "selector_expression":
            field = fn.child_by_field_name("field")
            if field is not None:
                raw_calls.append(
                    (
                        owner,
                        _receiver_text(source, fn.child_by_field_name("operand")),
                        node_text(source, field),
                    )
                )
        elif t == "field_expression":
            field = fn.child_by_field_name("field")
            if field is not None:
                raw_calls.append(
                    (
                        owner,
                        _receiver_text(source, fn.child_by_field_name("value")),
                        node_text(source, field),
                    )
                )
        elif t == "scoped_identifier":
            name_node = fn.child_by_field_name("name")
            path = fn.child_by_field_name("path")
            if name_node is not None:
                raw_calls.append(
                    (
                        owner,
                        # the trailing :: marks a path (a type or module, never a variable)
                        node_text(source, path) + "::" if path is not None else "",
                        node_text(source, name_node),
                    )
                )
    for node in caps.get("new", ()):
        ctor = node.child_by_field_name("constructor") or node.child_by_field_name("type")
        if ctor is not None and ctor.type in ("identifier", "type_identifier"):
            raw_calls.append((owner_at(node.start_byte), "", node_text(source, ctor)))
    facts.calls = dedupe_calls(raw_calls)

    for node in caps.get("bases", ()):
        owner = owner_at(node.start_byte)
        for base in _base_names(node):
            facts.bases.append((owner, _strip_generic(node_text(source, base))))
    if language == "rust":
        for node in caps.get("def.impl", ()):
            trait = node.child_by_field_name("trait")
            if trait is not None:
                facts.bases.append(
                    (
                        owner_at(node.start_byte),
                        _strip_generic(node_text(source, trait)).replace("::", "."),
                    )
                )
    imports.sort(key=lambda f: f.line)
    facts.imports = imports
    facts.types = _types(language, root, source, owner_at)


def _start(node: Node) -> int:
    return node.start_byte


def _strip_generic(text: str) -> str:
    return text.split("<", 1)[0].strip()


def _base_names(node: Node) -> list[Node]:
    """The type expressions named by a heritage clause, however deeply listed."""
    found: list[Node] = []
    stack = list(reversed(node.named_children))
    while stack:
        n = stack.pop()
        if n.type in TYPE_NAME_NODES:
            found.append(n)
        elif n.type in (
            "extends_clause",
            "implements_clause",
            "type_list",
            "extends_type_clause",
            "interfaces",
            "super_interfaces",
            "superclass",
        ):
            stack.extend(reversed(n.named_children))
    return found
