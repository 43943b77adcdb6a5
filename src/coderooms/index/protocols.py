"""Names that belong to the language, not the project: builtin types, and the methods
builtin and standard-library objects carry.

A call ``x.append(…)`` on a receiver nothing names is far likelier a list's than the one
project class that happens to define ``append``: resolution never binds such a call by
its name alone (see :mod:`coderooms.index.resolve`).
"""

from __future__ import annotations

import builtins
import collections
import io
import logging
import pathlib
import re
import threading

# Python's builtin classes by name (``list``, ``dict``, ``str``, ``ValueError`` …), and the
# typing spellings of the containers: a variable of one of these is no project object.
PYTHON_BUILTIN_TYPES = frozenset(
    name
    for name in dir(builtins)
    if isinstance(getattr(builtins, name), type)
    and name not in ("super", "type", "object", "property", "staticmethod", "classmethod")
) | frozenset(
    {
        "List",
        "Dict",
        "Set",
        "FrozenSet",
        "Tuple",
        "Sequence",
        "MutableSequence",
        "Mapping",
        "MutableMapping",
        "Iterable",
        "Iterator",
        "Generator",
        "Callable",
        "Any",
        "DefaultDict",
        "OrderedDict",
        "Counter",
        "Deque",
        "AbstractSet",
        "MutableSet",
        "Text",
        "AnyStr",
        "IO",
        "TextIO",
        "BinaryIO",
    }
)

# Builtin functions whose result is always a builtin or standard-library object.
BUILTIN_RESULT_CALLS = frozenset(
    {"open", "sorted", "reversed", "enumerate", "zip", "range", "len", "repr", "format"}
    | {"vars", "dir", "input", "hash", "id", "globals", "locals", "divmod", "round", "abs"}
)

_PYTHON_LIBRARY_TYPES: tuple[type, ...] = (
    list,
    dict,
    str,
    bytes,
    bytearray,
    set,
    frozenset,
    tuple,
    int,
    float,
    complex,
    object,
    BaseException,
    type,
    memoryview,
    io.TextIOWrapper,
    io.BytesIO,
    io.StringIO,
    pathlib.PurePath,
    pathlib.Path,
    re.Pattern,
    re.Match,
    logging.Logger,
    collections.deque,
    collections.Counter,
    collections.OrderedDict,
    collections.defaultdict,
    threading.Thread,
    threading.Event,
)

PYTHON_PROTOCOL_METHODS = frozenset(
    name for cls in _PYTHON_LIBRARY_TYPES for name in dir(cls)
) | frozenset({"acquire", "release", "locked", "send", "recv", "connect", "flush"})

JS_PROTOCOL_METHODS = frozenset(
    {
        # Array, String, Object, Map, Set, Promise, JSON, console, DOM events, streams
        "push", "pop", "shift", "unshift", "slice", "splice", "map", "filter", "reduce",
        "forEach", "find", "findIndex", "some", "every", "includes", "indexOf", "join",
        "concat", "sort", "reverse", "keys", "values", "entries", "get", "set", "has",
        "delete", "add", "clear", "then", "catch", "finally", "toString", "split",
        "replace", "trim", "startsWith", "endsWith", "toLowerCase", "toUpperCase",
        "match", "test", "exec", "apply", "call", "bind", "log", "error", "warn", "info",
        "debug", "emit", "on", "off", "once", "addEventListener", "removeEventListener",
        "json", "send", "write", "end", "close", "flat", "flatMap", "fill", "at",
        "substring", "padStart", "padEnd", "charAt", "assign", "freeze", "stringify",
        "parse", "resolve", "reject", "next", "valueOf", "hasOwnProperty",
    }
)  # fmt: skip

GO_PROTOCOL_METHODS = frozenset(
    {"Error", "String", "Close", "Read", "Write", "Len", "Lock", "Unlock", "RLock", "RUnlock"}
    | {"Done", "Err", "Add", "Wait", "Value", "Deadline", "Get", "Set", "Del", "Load", "Store"}
)

RUST_PROTOCOL_METHODS = frozenset(
    {"unwrap", "expect", "clone", "iter", "iter_mut", "into_iter", "map", "collect", "push"}
    | {"len", "is_empty", "to_string", "into", "as_ref", "as_mut", "get", "get_mut", "insert"}
    | {"remove", "contains", "ok", "err", "ok_or", "and_then", "unwrap_or", "as_str", "push_str"}
    | {"borrow", "borrow_mut", "lock", "fmt", "eq", "cmp", "partial_cmp", "hash", "default"}
    | {"extend", "pop", "filter", "next", "send", "recv", "join", "split", "trim", "write"}
)

JAVA_PROTOCOL_METHODS = frozenset(
    {"get", "put", "add", "size", "equals", "hashCode", "toString", "append", "length"}
    | {"isEmpty", "contains", "remove", "iterator", "stream", "close", "println", "print"}
    | {"containsKey", "keySet", "values", "entrySet", "addAll", "clear", "getClass", "map"}
    | {"filter", "collect", "forEach", "of", "valueOf", "compareTo", "substring", "trim"}
    | {"startsWith", "endsWith", "split", "format", "hasNext", "next", "set", "indexOf"}
)

PROTOCOL_METHODS: dict[str, frozenset[str]] = {
    "python": PYTHON_PROTOCOL_METHODS,
    "javascript": JS_PROTOCOL_METHODS,
    "typescript": JS_PROTOCOL_METHODS,
    "tsx": JS_PROTOCOL_METHODS,
    "go": GO_PROTOCOL_METHODS,
    "rust": RUST_PROTOCOL_METHODS,
    "java": JAVA_PROTOCOL_METHODS,
}
