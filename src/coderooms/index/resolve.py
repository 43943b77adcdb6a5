"""Cross-file resolution: turn per-file facts into edges of the code graph.

Calls and references are resolved from the enclosing symbol through evidence only: the
same scope, the same file, imported names (re-exports, star imports and module-level
aliases followed), the enclosing class and its bases for ``self``/``cls``/``super()``,
and the type a variable shows where it is bound (an annotation, a constructor call, a
literal). Go and Java also see their package (the same directory) without an import.

A call whose receiver no evidence names is never bound to an arbitrary method that
happens to share its name: when few symbols carry the name, each becomes a
``name_match`` edge weighted by how plausible it is (its file imported, or in the same
directory); a receiver of a builtin or external type, or a method name that builtin
types carry (``append``, ``get``, ``push``), binds to nothing. Whatever does not
resolve is counted by why (builtin, external, ambiguous, unknown).
"""

from __future__ import annotations

import builtins
import hashlib
import posixpath
import re
from bisect import insort
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from operator import itemgetter
from typing import NamedTuple

from coderooms.index.facts import (
    ANNOTATED,
    DECORATED,
    LOCAL,
    RETURNED,
    STAR_EXPORTS,
    FileFacts,
    ImportFact,
)
from coderooms.index.protocols import BUILTIN_RESULT_CALLS, PROTOCOL_METHODS, PYTHON_BUILTIN_TYPES

MAX_REEXPORT_DEPTH = 4  # how far `from a import b` follows re-exports through modules
MAX_BASE_DEPTH = 6  # how many inheritance levels a method lookup climbs
FOLDER_CACHE_SIZE = 65_536  # paths whose folder resolution remembers
EXPORTS_DIGEST_BYTES = 8  # size of the digest of what a file exports (see Resolver.exports)
PYTHON_BUILTINS = frozenset(dir(builtins))
JS_EXTENSIONS = (".ts", ".tsx", ".js", ".jsx", ".mjs", ".cjs", ".mts", ".cts", ".d.ts")
SELF_RECEIVERS = frozenset({"self", "cls", "this", "Self"})
_OWN_CLASS_RETURNS = frozenset({"cls()", "=cls", "=self"})
"""What a method's return gives when it is the class it was called on (or one of it)."""
CLASS_SCOPE_LANGUAGES = frozenset({"java", "javascript", "typescript", "tsx"})
UNRESOLVED_REASONS = ("builtin", "external", "ambiguous", "unknown")
NAME_MATCH = "name_match"  # the edge kind of a call only its name ties to its target
MAX_NAME_CANDIDATES = 3  # a name carried by more symbols than this gets no edge at all
# How much more plausible a candidate is when its file is imported (or is this file),
# or sits in the same directory, than one elsewhere in the repository.
IMPORTED_PLAUSIBILITY = 4.0
SAME_DIR_PLAUSIBILITY = 2.0
ELSEWHERE_PLAUSIBILITY = 1.0
PACKAGE_SCOPE_LANGUAGES = frozenset({"go", "java"})  # a directory's names need no import
BUILTIN_TARGET: tuple[str, str] = ("ext", "builtins")
_EMPTY: frozenset[str] = frozenset()
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
MAX_UNION_MEMBERS = 4  # classes of a union annotation a call on it may mean
MAX_FIXTURE_NAMESAKES = 8  # functions carrying a parameter's name looked at as its fixture
# A decorator making a function a pytest fixture: fixture, pytest.fixture(scope=…).
_FIXTURE_DECORATOR = re.compile(r"(?:pytest\.|_pytest\.fixtures\.)?fixture\b")
# What a generator fixture's annotation wraps: Iterator[T], Generator[T, None, None].
_YIELDED = re.compile(
    r"(?:typing\.|collections\.abc\.)?(?:Iterator|Generator|Iterable)\[\s*([^,\[\]]+)(?:,.*)?\]"
)
# A decorator making a generator function a context manager.
_CONTEXT_MANAGER_DECORATOR = re.compile(r"(?:contextlib\.)?(?:async)?contextmanager$")
ENTER_CALLS = (".__enter__()", ".__aenter__()")  # evidence of a with-statement's target
_PARAMETER = re.compile(r"\s*\*{0,2}\s*([A-Za-z_][A-Za-z0-9_]*)")
# A decorator making a method a property: property, functools.cached_property,
# abc.abstractproperty, x.setter / x.getter / x.deleter.
_PROPERTY_DECORATOR = re.compile(
    r"(?:^|\.)(?:property|cached_property|abstractproperty|setter|getter|deleter)$"
)


class CallBinding(NamedTuple):
    """What one call resolved to: a target, or why not and the candidates its name
    matches (each with its share of the call's weight)."""

    target: str | None
    why: str
    candidates: tuple[tuple[str, float], ...] = ()


class SymbolRow(NamedTuple):
    """One symbol as resolution needs it (a tuple: tables of these are built in bulk,
    straight from sorted query rows, so the sort key comes first)."""

    path: str
    start_line: int
    id: str
    kind: str
    name: str
    parent: str | None
    is_test: int


@dataclass(slots=True)
class Resolution:
    """Edges produced by resolving one file, and what it could not resolve."""

    path: str
    edges: dict[tuple[str, str, str], float] = field(default_factory=dict)
    unresolved: dict[str, int] = field(default_factory=lambda: dict.fromkeys(UNRESOLVED_REASONS, 0))

    def add(self, src: str, dst: str, kind: str, weight: float = 1.0) -> None:
        if src == dst:
            return
        key = (src, dst, kind)
        self.edges[key] = self.edges.get(key, 0.0) + weight


# A binding target: ("sym", id) | ("file", path) | ("pkg", dotted) | ("dir", path)
# | ("ext", module) | ("from", path, name)
Target = tuple[str, ...]


class SymbolTable:
    """Every file and symbol of the repository, indexed for name lookups."""

    def __init__(self, files: dict[str, str], symbols: Iterable[SymbolRow]) -> None:
        """``symbols`` must come sorted by (path, start_line, id): the first-defined
        symbol wins every lookup that finds several."""
        self.sym: dict[str, SymbolRow] = {}
        self.children: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
        self.file_top: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
        self.by_name: dict[str, list[str]] = defaultdict(list)
        self.dir_top: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
        self._nested: dict[str, set[str]] = defaultdict(set)  # path -> names of nested symbols
        self._rows: dict[str, list[SymbolRow]] = defaultdict(list)  # path -> its symbols
        sym, by_name, file_top, dir_top = self.sym, self.by_name, self.file_top, self.dir_top
        children, nested, rows_of = self.children, self._nested, self._rows
        for s in symbols:
            path, _, sid, _, name, parent, _ = s
            sym[sid] = s
            rows_of[path].append(s)
            by_name[name].append(sid)
            if parent is None:
                file_top[path][name].append(sid)
                dir_top[path.rpartition("/")[0]][name].append(sid)
            else:
                children[parent][name].append(sid)
                nested[path].add(name)
        self._index_files(files)

    def _index_files(self, files: dict[str, str]) -> None:
        self.files = files  # path -> language
        self.dirs: set[str] = {p.rpartition("/")[0] for p in files}
        self._dirs_by_language: dict[str, set[str]] = {}
        self.py_modules: dict[str, list[str]] = defaultdict(list)
        self.py_packages: set[str] = set()  # dotted prefixes (namespace packages too)
        self.py_local: dict[tuple[str, str], str] = {}  # (dir, stem) of a script outside packages
        self.stems: dict[str, list[str]] = defaultdict(list)
        for path, lang in files.items():
            self.stems[_stem(path)].append(path)
            if lang == "python":
                local = _python_local_name(path, files)
                if local is not None:
                    self.py_local[local] = path
                for dotted in python_module_names(path, files):
                    self.py_modules[dotted].append(path)
                    head, _, _ = dotted.rpartition(".")
                    while head:
                        self.py_packages.add(head)
                        head, _, _ = head.rpartition(".")

    def _order(self, sid: str) -> tuple[str, int, str]:
        row = self.sym[sid]
        return row.path, row.start_line, sid

    def update(self, files: dict[str, str], changed: dict[str, list[SymbolRow]]) -> None:
        """Bring the table up to date after the files in ``changed`` changed (an empty
        list for a file that left the index), with exactly the lookups a fresh build of
        the new state would give. ``files`` is the new path -> language map."""
        for path in changed:
            for s in self._rows.pop(path, ()):
                del self.sym[s.id]
                _drop(self.by_name, s.name, s.id)
                if s.parent is None:
                    folder = self.dir_top[path.rpartition("/")[0]]
                    _drop(folder, s.name, s.id)
                else:
                    self.children.pop(s.parent, None)
            self.file_top.pop(path, None)
            self._nested.pop(path, None)
        for path, rows in changed.items():
            if not rows:
                continue
            self._rows[path] = rows
            for s in rows:
                self.sym[s.id] = s
            for s in rows:
                insort(self.by_name[s.name], s.id, key=self._order)
                if s.parent is None:
                    self.file_top[path][s.name].append(s.id)
                    insort(self.dir_top[path.rpartition("/")[0]][s.name], s.id, key=self._order)
                else:
                    self.children[s.parent][s.name].append(s.id)
                    self._nested[path].add(s.name)
        if files.keys() != self.files.keys() or files != self.files:
            self._index_files(files)
        else:
            self.files = files

    def nested_names(self, path: str) -> set[str] | frozenset[str]:
        return self._nested.get(path, _EMPTY)

    def dirs_of(self, language: str) -> set[str]:
        """Directories holding at least one file of ``language``."""
        got = self._dirs_by_language.get(language)
        if got is None:
            got = {posixpath.dirname(p) for p, lang in self.files.items() if lang == language}
            self._dirs_by_language[language] = got
        return got


@lru_cache(maxsize=FOLDER_CACHE_SIZE)
def _folder(path: str) -> str:
    """``posixpath.dirname``, remembered: resolution asks it of the same few paths again
    and again (the importing file of every external import, the caller of every call)."""
    return posixpath.dirname(path)


def _drop(lists: dict[str, list[str]], key: str, item: str) -> None:
    """Remove ``item`` from ``lists[key]``, and the key once its list is empty (a fresh
    build never has empty lists: membership tests rely on it)."""
    got = lists.get(key)
    if got is None:
        return
    if item in got:
        got.remove(item)
    if not got:
        del lists[key]


def _stem(path: str) -> str:
    name = path.rsplit("/", 1)[-1]
    return name.split(".", 1)[0]


def _is_package(d: str, files: dict[str, str]) -> bool:
    return bool(d) and (f"{d}/__init__.py" in files or f"{d}/__init__.pyi" in files)


def python_module_names(path: str, files: dict[str, str]) -> list[str]:
    """The dotted names under which ``path`` is importable: from the repository root,
    and from the top of its package chain (which covers ``src/`` layouts)."""
    base = path.rsplit(".", 1)[0]
    parts = base.split("/")
    package = parts[-1] == "__init__"
    if package:
        parts = parts[:-1]
    if not parts or not all(p.isidentifier() for p in parts):
        return []
    names = [".".join(parts)]
    # Climb while the enclosing directory is a package.
    i = len(parts) - 1
    while i > 0 and _is_package("/".join(parts[:i]), files):
        i -= 1
    # A module outside any package has no dotted name of its own (see _python_local_name);
    # a top-level package (src/pkg/__init__.py) is importable as pkg.
    if 0 < i and (i < len(parts) - 1 or package):
        names.append(".".join(parts[i:]))
    return names


def _python_local_name(path: str, files: dict[str, str]) -> tuple[str, str] | None:
    """A module outside any package is importable by its stem from its own directory."""
    d = posixpath.dirname(path)
    if _is_package(d, files) or path.endswith(("__init__.py", "__init__.pyi")):
        return None
    return d, _stem(path)


class Resolver:
    """Resolves files against a :class:`SymbolTable`; facts of other files load lazily."""

    def __init__(self, table: SymbolTable, load_facts: Callable[[str], FileFacts | None]) -> None:
        self.t = table
        self._load = load_facts
        self._facts: dict[str, FileFacts | None] = {}
        self._bindings: dict[str, dict[str, Target]] = {}
        self._stars: dict[str, list[Target]] = {}
        self._imported_files: dict[str, list[str]] = {}
        self._bases: dict[str, list[str]] = {}
        self._classes: dict[str, str | None] = {}
        self._file_scope: dict[tuple[str, str], Target | None] = {}  # steps 2-3, per file
        self._of_kinds: dict[tuple[str, frozenset[str]], list[str]] = {}
        # (name, kinds, language family) -> the candidates a call by name weighs.
        self._by_name_of: dict[tuple[str, frozenset[str], str | None], list[str] | None] = {}
        self._types: dict[str, dict[tuple[str, str], list[str]]] = {}  # path -> evidence
        self._module_values: dict[tuple[str, str], Target | None] = {}
        self._attributes: dict[tuple[str, str], Target | None] = {}
        self._returns: dict[str, Target | None] = {}
        self._signatures: dict[str, dict[str, str]] = {}  # path -> symbol id -> signature
        self._typing: set[tuple[str, str, str]] = set()  # (path, owner, name) being typed
        self._params: dict[str, tuple[str, ...]] = {}  # function id -> parameter names
        self._fixtures_of: dict[str, frozenset[str]] = {}  # path -> its fixtures
        self._properties_of: dict[str, frozenset[str]] = {}  # path -> its properties
        self._injected_of: dict[str, frozenset[str]] = {}  # path -> fixtures' parameters

    # --- facts and bindings ---------------------------------------------------------

    def facts(self, path: str) -> FileFacts | None:
        if path not in self._facts:
            self._facts[path] = self._load(path)
        return self._facts[path]

    def prime(self, facts: FileFacts) -> None:
        self._facts[facts.path] = facts

    def bindings(self, path: str) -> dict[str, Target]:
        got = self._bindings.get(path)
        if got is None:
            got = self._bind(path)
        return got

    def _bind(self, path: str) -> dict[str, Target]:
        bindings: dict[str, Target] = {}
        stars: list[Target] = []
        imported: list[str] = []
        self._bindings[path] = bindings  # guards against import cycles
        self._stars[path] = stars
        self._imported_files[path] = imported
        facts = self.facts(path)
        if facts is None:
            return bindings
        lang = facts.language
        for imp in facts.imports:
            if lang == "python":
                self._bind_python(path, imp, bindings, stars, imported)
            else:
                self._bind_other(lang, path, imp, bindings, stars, imported)
        return bindings

    def exports(self, path: str) -> str:
        """A digest of what other files import from ``path``: every name it binds by
        import, followed to where it leads, the modules it star-imports and the names
        its ``__all__`` lists. Names it
        defines itself are not in it (a change to those changes the names other files
        use); when this digest moves, files importing ``path`` may resolve differently."""
        bound = sorted(self.bindings(path).items(), key=lambda item: item[0])
        led = [(name, self._follow(target, 0) or target) for name, target in bound]
        stars = [self._follow(star, 0) or star for star in self._stars.get(path, ())]
        listed = sorted(self._evidence(path).get((path, STAR_EXPORTS), ()))  # __all__
        text = repr((led, stars, listed)).encode("utf-8", "surrogatepass")
        return hashlib.blake2b(text, digest_size=EXPORTS_DIGEST_BYTES).hexdigest()

    def imported_files(self, path: str) -> list[str]:
        self.bindings(path)
        return self._imported_files.get(path, [])

    def _py_module(self, dotted: str, importer: str) -> str | None:
        cands = self.t.py_modules.get(dotted)
        if not cands:
            return self.t.py_local.get((_folder(importer), dotted))
        if len(cands) == 1:
            return cands[0]
        # Several source roots offer this name: prefer the longest shared directory.
        here = posixpath.dirname(importer)
        return max(
            sorted(cands),
            key=lambda c: (
                len(posixpath.commonpath([here, posixpath.dirname(c)]))
                if here and posixpath.dirname(c)
                else 0
            ),
        )

    def _py_relative(self, path: str, level: int, module: str) -> tuple[str | None, str]:
        base = posixpath.dirname(path)
        for _ in range(level - 1):
            base = posixpath.dirname(base)
        rel = module.replace(".", "/") if module else ""
        target = posixpath.join(base, rel) if rel else base
        return self._py_file_at(target), target

    def _py_file_at(self, target: str) -> str | None:
        for cand in (
            target + ".py",
            target + "/__init__.py",
            target + ".pyi",
            target + "/__init__.pyi",
        ):
            cand = cand.lstrip("/")
            if cand in self.t.files:
                return cand
        return None

    def _bind_python(
        self,
        path: str,
        imp: ImportFact,
        bindings: dict[str, Target],
        stars: list[Target],
        imported: list[str],
    ) -> None:
        if imp.level:
            mod_file, mod_dir = self._py_relative(path, imp.level, imp.module)
            external = False
        else:
            mod_file = self._py_module(imp.module, path) if imp.module else None
            mod_dir = (
                mod_file.rsplit("/", 1)[0]
                if mod_file and mod_file.endswith(("__init__.py", "__init__.pyi"))
                else ""
            )
            external = mod_file is None and imp.module not in self.t.py_packages
        if not imp.names:
            # import a.b.c [as x]
            if mod_file is not None:
                imported.append(mod_file)
            if imp.alias and "." not in imp.alias and imp.alias != imp.module.split(".", 1)[0]:
                bindings[imp.alias] = ("file", mod_file) if mod_file else ("ext", imp.module)
            else:
                head = imp.module.split(".", 1)[0]
                head_file = self._py_module(head, path)
                if head_file is not None or mod_file is not None:
                    bindings.setdefault(imp.alias or head, ("pkg", head))
                else:
                    bindings.setdefault(imp.alias or head, ("ext", head))
            return
        binds_module = False  # only submodules imported: the package itself is no edge
        for name, alias in imp.names:
            if name == "*":
                if mod_file is not None:
                    stars.append(("file", mod_file))
                    binds_module = True
                continue
            sub = None
            if imp.level:
                sub = self._py_file_at(posixpath.join(mod_dir, name.replace(".", "/")))
            elif imp.module:
                sub = self._py_module(f"{imp.module}.{name}", path)
            if sub is not None:
                bindings[alias] = ("file", sub)
                if sub not in imported:
                    imported.append(sub)
            elif mod_file is not None:
                bindings[alias] = ("from", mod_file, name)
                binds_module = True
            elif external or not imp.level:
                bindings[alias] = ("ext", imp.module)
        if binds_module and mod_file is not None and mod_file not in imported:
            imported.append(mod_file)

    def _bind_other(
        self,
        lang: str,
        path: str,
        imp: ImportFact,
        bindings: dict[str, Target],
        stars: list[Target],
        imported: list[str],
    ) -> None:
        target: Target | None = None
        if lang in ("javascript", "typescript", "tsx"):
            f = self._js_file(path, imp.module)
            target = ("file", f) if f else ("ext", imp.module)
        elif lang == "go":
            d = self._dir_for_import_path(imp.module)
            target = ("dir", d) if d is not None else ("ext", imp.module)
        elif lang == "rust":
            target = self._rust_target(path, imp.module, imp.level)
        elif lang == "java":
            target = self._java_target(imp.module)
        if target is None:
            target = ("ext", imp.module)
        if target[0] == "file" and target[1] not in imported:
            imported.append(target[1])
        elif target[0] == "dir":
            members = (p for p in self.t.files if posixpath.dirname(p) == target[1])
            for f in sorted(p for p in members if not p.endswith("_test.go")):
                if f != path and f not in imported:
                    imported.append(f)
        elif target[0] == "sym":
            owner_file = self.t.sym[target[1]].path
            if owner_file not in imported:
                imported.append(owner_file)
        if imp.alias:
            bindings[imp.alias] = target
        for name, alias in imp.names:
            if name == "*":
                stars.append(target)
            elif target[0] == "ext":
                bindings[alias] = target
            elif name == "default":
                bindings[alias] = self._js_default(target, alias)
            elif target[0] == "file":
                # Looked up when used, like Python's: binding order never matters then.
                bindings[alias] = ("from", target[1], name)
            else:
                found = self._member(target, name, 0)
                bindings[alias] = found if found is not None else ("ext", imp.module)

    def _js_file(self, path: str, spec: str) -> str | None:
        if not spec.startswith("."):
            return None
        base = posixpath.normpath(posixpath.join(posixpath.dirname(path), spec))
        if base in self.t.files:
            return base
        stripped = (
            base.rsplit(".", 1)[0] if base.endswith((".js", ".jsx", ".mjs", ".cjs")) else base
        )
        for root in (stripped, base):
            for ext in JS_EXTENSIONS:
                if root + ext in self.t.files:
                    return root + ext
            for ext in JS_EXTENSIONS:
                if f"{root}/index{ext}" in self.t.files:
                    return f"{root}/index{ext}"
        return None

    def _js_default(self, target: Target, alias: str) -> Target:
        if target[0] != "file":
            return target
        tops = self.t.file_top.get(target[1], {})
        if alias in tops:
            return ("sym", tops[alias][0])
        only = [ids[0] for ids in tops.values()]
        return ("sym", only[0]) if len(only) == 1 else target

    def _dir_for_import_path(self, module: str) -> str | None:
        """The Go package directory an import path names: the longest suffix match."""
        parts = module.split("/")
        go_dirs = self.t.dirs_of("go")
        for i in range(len(parts)):
            suffix = "/".join(parts[i:])
            found = sorted(d for d in go_dirs if d == suffix or d.endswith("/" + suffix))
            if len(found) == 1:
                return found[0]
            if found:
                return None  # several directories fit equally well: do not guess
        return None

    def _java_target(self, module: str) -> Target | None:
        rel = module.replace(".", "/")
        for path in self.t.files:
            if path.endswith(rel + ".java") and (
                path == rel + ".java" or path.endswith("/" + rel + ".java")
            ):
                tops = self.t.file_top.get(path, {})
                name = module.rsplit(".", 1)[-1]
                return ("sym", tops[name][0]) if name in tops else ("file", path)
        for d in sorted(self.t.dirs_of("java")):
            if d == rel or d.endswith("/" + rel):
                return ("dir", d)
        return None

    def _rust_crate_root(self, path: str) -> str:
        d = posixpath.dirname(path)
        while True:
            for root in ("lib.rs", "main.rs"):
                if posixpath.join(d, root).lstrip("/") in self.t.files:
                    return d
            if not d:
                return posixpath.dirname(path)
            d = posixpath.dirname(d)

    def _rust_module_dir(self, path: str) -> str:
        """The directory where the children of the module ``path`` live."""
        name = path.rsplit("/", 1)[-1]
        d = posixpath.dirname(path)
        if name in ("mod.rs", "lib.rs", "main.rs"):
            return d
        return posixpath.join(d, name[:-3])

    def _rust_parent_module(self, path: str) -> str | None:
        """The file of the module that declares the module ``path`` (``super``)."""
        d = posixpath.dirname(path)
        if path.rsplit("/", 1)[-1] == "mod.rs":
            d = posixpath.dirname(d)
        for cand in (
            posixpath.join(d, "mod.rs"),
            posixpath.join(d, "lib.rs"),
            posixpath.join(d, "main.rs"),
            d + ".rs",
        ):
            if cand in self.t.files and cand != path:
                return cand
        return None

    def _rust_file_at(self, d: str, name: str) -> str | None:
        for cand in (posixpath.join(d, name + ".rs"), posixpath.join(d, name, "mod.rs")):
            if cand in self.t.files:
                return cand
        return None

    def _rust_target(self, path: str, module: str, level: int) -> Target | None:
        if level:  # `mod name;`
            f = self._rust_file_at(self._rust_module_dir(path), module)
            return ("file", f) if f else None
        parts = [p for p in module.split("::") if p]
        if not parts:
            return ("file", path)
        if parts[0] == "crate":
            root = self._rust_crate_root(path)
            cur: Target = ("dir", root)
            parts = parts[1:]
            for main in ("lib.rs", "main.rs"):
                if posixpath.join(root, main).lstrip("/") in self.t.files:
                    cur = ("file", posixpath.join(root, main).lstrip("/"))
                    break
        elif parts[0] in ("self", "super"):
            cur = ("file", path)
            while parts and parts[0] in ("self", "super"):
                if parts[0] == "super":
                    parent = self._rust_parent_module(cur[1]) if cur[0] == "file" else None
                    if parent is None:
                        return None
                    cur = ("file", parent)
                parts = parts[1:]
        else:
            return ("ext", module)
        for part in parts:
            nxt = self._member(cur, part, 0)
            if nxt is None:
                return None
            cur = nxt
        return cur

    # --- lookups ----------------------------------------------------------------------

    def _member(self, cur: Target, part: str, depth: int) -> Target | None:
        """``part`` looked up inside a module, package, directory or class."""
        if depth > MAX_REEXPORT_DEPTH:
            return None
        kind = cur[0]
        t = self.t
        if kind == "pkg":
            dotted = f"{cur[1]}.{part}"
            f = t.py_modules.get(dotted)
            if f:
                return ("file", f[0])
            if dotted in t.py_packages:
                return ("pkg", dotted)
            init = t.py_modules.get(cur[1])  # what the package's __init__ defines or imports
            return self._member(("file", init[0]), part, depth + 1) if init else None
        if kind == "file":
            path = cur[1]
            lang = t.files.get(path)
            tops = t.file_top.get(path, {})
            if part in tops:
                return ("sym", tops[part][0])
            if lang == "python":
                if path.endswith(("__init__.py", "__init__.pyi")):
                    sub = self._py_file_at(posixpath.join(posixpath.dirname(path), part))
                    if sub:
                        return ("file", sub)
            elif lang == "rust":
                sub = self._rust_file_at(self._rust_module_dir(path), part)
                if sub:
                    return ("file", sub)
            b = self.bindings(path).get(part)
            if b is not None:
                return self._follow(b, depth + 1)
            value = self._module_value(path, part) if lang == "python" else None
            if value is not None:
                return value
            for star in self._stars.get(path, ()):  # re-exported wholesale
                found = self._member(star, part, depth + 1) if self._exports(star, part) else None
                if found is not None and found[0] != "ext":
                    return found
            return None
        if kind == "dir":
            tops = t.dir_top.get(cur[1], {})
            if part in tops:
                return ("sym", tops[part][0])
            sub = self._rust_file_at(cur[1], part)
            return ("file", sub) if sub else None
        if kind == "sym":
            member = self._class_member(cur[1], part)
            return ("sym", member) if member else None
        if kind == "from":
            return self._member(self._follow(cur, depth + 1) or ("ext", ""), part, depth + 1)
        if kind == "ext":
            return cur
        return None

    def _follow(self, target: Target, depth: int) -> Target | None:
        if target[0] == "from":
            return self._member(("file", target[1]), target[2], depth)
        return target

    def class_bases(self, class_id: str) -> list[str]:
        got = self._bases.get(class_id)
        if got is not None:
            return got
        self._bases[class_id] = []
        row = self.t.sym.get(class_id)
        facts = self.facts(row.path) if row else None
        found: list[str] = []
        if facts is not None:
            for owner, text in facts.bases:
                if owner == class_id:
                    target = self.resolve_base(facts, owner, text)
                    if target is not None and target not in found:
                        found.append(target)
        self._bases[class_id] = found
        return found

    def _class_member(self, class_id: str, name: str) -> str | None:
        seen: set[str] = set()
        frontier = [class_id]
        for _ in range(MAX_BASE_DEPTH):
            nxt: list[str] = []
            for cid in frontier:
                if cid in seen:
                    continue
                seen.add(cid)
                ids = self.t.children.get(cid, {}).get(name)
                if ids:
                    return ids[0]
                nxt.extend(self.class_bases(cid))
            if not nxt:
                return None
            frontier = nxt
        return None

    def _enclosing_class(self, owner: str) -> str | None:
        if owner in self._classes:
            return self._classes[owner]
        found = None
        cur = self.t.sym.get(owner)
        while cur is not None:
            if cur.kind == "class":
                found = cur.id
                break
            cur = self.t.sym.get(cur.parent) if cur.parent else None
        self._classes[owner] = found
        return found

    def _scoped(self, facts: FileFacts, owner: str, name: str) -> Target | None:
        """Steps 1-3: the enclosing scopes, the file, the file's imports."""
        t = self.t
        class_scope = facts.language in CLASS_SCOPE_LANGUAGES
        # Only names some nested definition of this file carries can be found in a scope.
        cur = t.sym.get(owner) if class_scope or name in t.nested_names(facts.path) else None
        first = True
        if cur is None:
            key = (facts.path, name)
            if key not in self._file_scope:
                self._file_scope[key] = self._file_scoped(facts.path, name)
            return self._file_scope[key]
        while cur is not None:
            if cur.kind != "class" or first or class_scope:
                ids = t.children.get(cur.id, {}).get(name)
                if ids:
                    return ("sym", ids[0])
            if cur.kind == "class" and class_scope:
                found = self._class_member(cur.id, name)
                if found:
                    return ("sym", found)
            first = False
            cur = t.sym.get(cur.parent) if cur.parent else None
        return self._file_scoped(facts.path, name)

    def _file_scoped(self, path: str, name: str) -> Target | None:
        """Steps 2-3: the file's own top-level names, then what it imports."""
        tops = self.t.file_top.get(path)
        if tops and name in tops:
            return ("sym", tops[name][0])
        b = self.bindings(path).get(name)
        if b is not None:
            return self._follow(b, 0) or (b if b[0] == "from" else None)
        value = self._module_value(path, name) if self.t.files.get(path) == "python" else None
        if value is not None:
            return value
        for star in self._stars.get(path, ()):
            found = self._member(star, name, 1) if self._exports(star, name) else None
            if found is not None and found[0] != "ext":
                return found
        return None

    def _exports(self, star: Target, name: str) -> bool:
        """Whether ``from m import *`` of the Python module ``star`` binds ``name``: the
        names its ``__all__`` lists, else its names not starting with ``_``."""
        if star[0] != "file" or self.t.files.get(star[1]) != "python":
            return True
        listed = self._evidence(star[1]).get((star[1], STAR_EXPORTS))
        if not listed:
            return not name.startswith("_")
        return name in listed or STAR_EXPORTS in listed

    def _named(self, name: str, kinds: frozenset[str]) -> list[str]:
        """Every symbol of the repository called ``name`` whose kind is one of ``kinds``
        (asked for again and again: the table does not change during a resolution)."""
        key = (name, kinds)
        got = self._of_kinds.get(key)
        if got is None:
            t = self.t
            got = self._of_kinds[key] = [
                i for i in t.by_name.get(name, ()) if t.sym[i].kind in kinds
            ]
        return got

    def resolve_base(self, facts: FileFacts, owner: str, text: str) -> str | None:
        parts = text.split(".")
        if len(parts) == 1:
            got = self._scoped(facts, owner, text)
            if got is not None and got[0] == "sym":
                return got[1]
            if got is None:
                return self._by_name(facts, text, CLASS_KINDS).target
            return None
        got = self._receiver(facts, owner, ".".join(parts[:-1]))
        if got is None or got[0] == "ext":
            return None
        found = self._member(got, parts[-1], 0)
        return found[1] if found is not None and found[0] == "sym" else None

    def _receiver(self, facts: FileFacts, owner: str, text: str) -> Target | None:
        sep = "::" if "::" in text else "."
        parts = text.removesuffix("::").split(sep)
        head = parts[0]
        python = facts.language == "python"
        if python and text.endswith("()"):  # f(…).m(): what calling f gives
            return self._type_of(facts, owner, text)
        if head in SELF_RECEIVERS:
            cls = self._enclosing_class(owner)
            cur: Target | None = ("sym", cls) if cls else None
            if cls is not None and python and len(parts) > 1:
                # self.x: a member of the class, else what its methods assign to self.x
                cur = self._member(("sym", cls), parts[1], 0)
                cur = self._read(cur) if cur is not None else self._attribute(cls, parts[1])
                parts = parts[1:]
        elif head.endswith("()") and len(parts) == 1:  # (new T()).m(): an instance of T
            cur = self._type_of(facts, owner, head)
        else:
            local = self._local_type(facts, owner, head)
            fixture = (
                self.fixture(facts, owner, head)
                if local is None and python and head in self.injected_parameters(facts)
                else None
            )
            if fixture is not None:
                cur = self._returned(fixture)
            else:
                cur = local or self._scoped(facts, owner, head)
            if cur is not None and cur[0] == "from":
                cur = self._follow(cur, 0)
        for part in parts[1:]:
            if cur is None or cur[0] == "ext":
                return cur
            found = self._member(cur, part, 0)
            if found is None and python and cur[0] == "sym" and self.t.sym[cur[1]].kind == "class":
                found = self._attribute(cur[1], part)  # x.attr: what the class assigns
            elif found is not None and python:
                found = self._read(found)
            cur = found
        return cur

    def _read(self, member: Target) -> Target | None:
        """What reading a member gives: a method read as an attribute in a chain
        (``r.text.strip()``) is a property, whose value is what it returns."""
        if member[0] == "sym" and self.t.sym[member[1]].kind == "method":
            return self._returned(member[1])
        return member

    # --- type evidence (Python) ---------------------------------------------------

    def _evidence(self, path: str) -> dict[tuple[str, str], list[str]]:
        """``(owner, variable) -> evidence`` of the file's bindings (see FileFacts.types)."""
        got = self._types.get(path)
        if got is None:
            got = self._types[path] = defaultdict(list)
            facts = self.facts(path)
            for owner, var, evidence in facts.types if facts is not None else ():
                if evidence == LOCAL:
                    got[owner, var]  # bound there, to nothing known: an empty list
                else:
                    got[owner, var].append(evidence)
        return got

    def _local_type(self, facts: FileFacts, owner: str, name: str) -> Target | None:
        """What ``name`` holds where a function (or one around it) binds it."""
        evidence = self._evidence(facts.path)
        if not evidence:
            return None
        fields = facts.language in CLASS_SCOPE_LANGUAGES  # a class's fields are in scope
        cur = self.t.sym.get(owner)
        while cur is not None:
            found = evidence.get((cur.id, name))
            if found is not None and (fields or cur.kind != "class"):
                if not found:
                    return None  # a local of no known type hides any outer binding
                key = (facts.path, cur.id, name)
                if key in self._typing:
                    return None  # x = x.copy(): the evidence leads back to itself
                self._typing.add(key)
                try:
                    return self._typed(facts, cur.id, found)
                finally:
                    self._typing.discard(key)
            cur = self.t.sym.get(cur.parent) if cur.parent else None
        return None

    def _signature(self, function_id: str) -> str:
        """A symbol's signature as extracted (its definition line, one line)."""
        row = self.t.sym[function_id]
        signatures = self._signatures.get(row.path)
        if signatures is None:
            facts = self.facts(row.path)
            symbols = facts.symbols if facts is not None else ()
            signatures = self._signatures[row.path] = {s.id: s.signature for s in symbols}
        return signatures.get(function_id, "")

    def is_fixture(self, symbol_id: str) -> bool:
        """Whether a Python function is decorated as a pytest fixture."""
        row = self.t.sym[symbol_id]
        return row.kind != "class" and symbol_id in self._fixtures(row.path)

    def _fixtures(self, path: str) -> frozenset[str]:
        """The functions of a Python file decorated as pytest fixtures."""
        got = self._fixtures_of.get(path)
        if got is None:
            facts = self.facts(path) if self.t.files.get(path) == "python" else None
            got = self._fixtures_of[path] = frozenset(
                owner
                for owner, var, evidence in (facts.types if facts is not None else ())
                if var == DECORATED and _FIXTURE_DECORATOR.match(evidence)
            )
        return got

    def _injected(self, function_id: str) -> bool:
        """Whether pytest fills the parameters of a function with fixtures: a test, or
        a fixture itself."""
        row = self.t.sym[function_id]
        return row.kind != "class" and (bool(row.is_test) or self.is_fixture(function_id))

    def fixture(self, facts: FileFacts, owner: str, name: str) -> str | None:
        """The fixture a parameter ``name`` of ``owner`` (or a function around it) receives
        from pytest: the nearest fixture of that name, as pytest looks for it (the same
        file, a ``conftest.py`` here or in a directory above, else the one fixture of
        that name elsewhere, a plugin's)."""
        if facts.language != "python" or name in SELF_RECEIVERS:
            return None
        cur = self.t.sym.get(owner)
        while cur is not None and name not in self.parameters(cur.id):
            cur = self.t.sym.get(cur.parent) if cur.parent else None
        if cur is None or not self._injected(cur.id):
            return None
        namesakes = self._named(name, FUNCTION_KINDS)
        if len(namesakes) > MAX_FIXTURE_NAMESAKES:
            return None
        found = [i for i in namesakes if i != cur.id and self.is_fixture(i)]
        if not found:
            return None
        paths = {self.t.sym[i].path: i for i in reversed(found)}  # the first of a file
        if facts.path in paths:
            return paths[facts.path]
        folder = _folder(facts.path)
        while True:
            conftest = posixpath.join(folder, "conftest.py") if folder else "conftest.py"
            if conftest in paths:
                return paths[conftest]
            if not folder:
                break
            folder = _folder(folder)
        elsewhere = [i for i in found if _stem(self.t.sym[i].path) != "conftest"]
        return elsewhere[0] if len(elsewhere) == 1 else None

    def parameters(self, function_id: str) -> tuple[str, ...]:
        """The parameter names of a function, read from its signature."""
        got = self._params.get(function_id)
        if got is None:
            kind = self.t.sym[function_id].kind
            got = () if kind == "class" else _parameters(self._signature(function_id))
            self._params[function_id] = got
        return got

    def injected_parameters(self, facts: FileFacts) -> frozenset[str]:
        """The parameter names of a file's tests and fixtures: what they name resolves
        from owner to owner."""
        got = self._injected_of.get(facts.path)
        if got is None:
            got = self._injected_of[facts.path] = (
                frozenset(
                    name
                    for s in facts.symbols
                    if s.kind != "class" and self._injected(s.id)
                    for name in self.parameters(s.id)
                )
                if facts.is_test or self._fixtures(facts.path)
                else _EMPTY
            )
        return got

    def _returned(self, function_id: str) -> Target | None:
        """The class a function's return annotation names (``-> Config``, ``-> Self``);
        what a generator fixture yields (``-> Iterator[Config]``)."""
        if function_id in self._returns:
            return self._returns[function_id]
        self._returns[function_id] = None
        row = self.t.sym[function_id]
        facts = self.facts(row.path)
        value: Target | None = None
        if facts is not None:
            text = self._return_annotation(function_id)
            yielded = _YIELDED.fullmatch(text)
            if yielded is not None and self.is_fixture(function_id):
                text = yielded.group(1).strip()
            if text and not text.endswith("…"):
                if text in ("Self", "typing.Self", "typing_extensions.Self"):
                    cls = self._enclosing_class(row.parent) if row.parent else None
                    value = ("sym", cls) if cls else None
                else:
                    value = self._type_of(facts, function_id, text)
            elif not text:  # no annotation: what every return statement agrees on
                returned = self._evidence(row.path).get((function_id, RETURNED))
                value = self._typed(facts, function_id, returned) if returned else None
        self._returns[function_id] = value
        return value

    def _made_by_own_class_method(self, facts: FileFacts, owner: str, callee: str) -> Target | None:
        """``T.make`` (or ``x.clone``, x a T) whose method returns the class it is called
        on (:meth:`_returns_own_class`): a T, though a base class of T defines it."""
        prefix, _, name = callee.rpartition(".")
        base = self._receiver(facts, owner, prefix)
        if base is None or base[0] != "sym" or self.t.sym[base[1]].kind != "class":
            return None
        member = self._member(base, name, 0)
        if member is None or member[0] != "sym" or self.t.sym[member[1]].kind != "method":
            return None
        return base if self._returns_own_class(member[1]) else None

    def _returns_own_class(self, function_id: str) -> bool:
        """Whether a method returns an instance of the class it is called on: annotated
        ``-> Self``, or (unannotated) every return gives ``cls(…)``, ``self`` or ``cls``."""
        text = self._return_annotation(function_id)
        if text:
            return text in ("Self", "typing.Self", "typing_extensions.Self")
        returned = self._evidence(self.t.sym[function_id].path).get((function_id, RETURNED))
        return bool(returned) and all(e in _OWN_CLASS_RETURNS for e in returned)

    def is_property(self, symbol_id: str) -> bool:
        """Whether a Python method is decorated as a property (or its setter): reading
        it runs it, and a call ``x.name()`` calls what it returns, never the method."""
        row = self.t.sym[symbol_id]
        if row.kind != "method" or self.t.files.get(row.path) != "python":
            return False
        got = self._properties_of.get(row.path)
        if got is None:
            facts = self.facts(row.path)
            got = self._properties_of[row.path] = frozenset(
                owner
                for owner, var, evidence in (facts.types if facts is not None else ())
                if var == DECORATED and _PROPERTY_DECORATOR.search(evidence)
            )
        return symbol_id in got

    def _module_value(self, path: str, name: str) -> Target | None:
        """What a module-level ``name = …`` of ``path`` holds: the class or function an
        alias names, or the class an instance was made from."""
        key = (path, name)
        if key in self._module_values:
            return self._module_values[key]
        self._module_values[key] = None  # guards against alias cycles
        facts = self.facts(path)
        found = self._evidence(path).get((path, name)) if facts is not None else None
        value = self._typed(facts, path, found) if facts is not None and found else None
        self._module_values[key] = value
        return value

    def _attribute(self, class_id: str, attr: str) -> Target | None:
        """The type of ``self.attr``: what the class (or a base) annotates or assigns."""
        key = (class_id, attr)
        if key in self._attributes:
            return self._attributes[key]
        self._attributes[key] = None
        row = self.t.sym.get(class_id)
        facts = self.facts(row.path) if row is not None else None
        value: Target | None = None
        if facts is not None:
            evidence = self._evidence(facts.path)
            found = list(evidence.get((class_id, attr), ()))
            owners = [class_id]
            for method in self.t.children.get(class_id, {}).values():
                for mid in method:
                    got = evidence.get((mid, f"self.{attr}"))
                    if got:
                        found.extend(got)
                        owners.append(mid)
            if found:
                value = self._typed(facts, owners[-1], found)
        if value is None:
            for base in self.class_bases(class_id):
                value = self._attribute(base, attr)
                if value is not None:
                    break
        self._attributes[class_id, attr] = value
        return value

    def _typed(self, facts: FileFacts, owner: str, evidence: list[str]) -> Target | None:
        """The one target all of a variable's evidence agrees on, annotations first;
        None when it disagrees or names nothing known."""
        annotated = [e for e in evidence if not e.endswith("()") and not e.startswith("=")]
        chosen = annotated or evidence
        targets = {self._type_of(facts, owner, e) for e in chosen}
        if len(targets) != 1:
            return None
        return targets.pop()

    def _type_of(self, facts: FileFacts, owner: str, evidence: str) -> Target | None:
        if evidence.startswith("="):  # X = Y: X is whatever Y is
            name = evidence[1:]
            if name in SELF_RECEIVERS and facts.language == "python":  # return self
                cls = self._enclosing_class(owner)
                return ("sym", cls) if cls else None
            return self._local_type(facts, owner, name) or self._dotted(facts, owner, name)
        python = facts.language == "python"
        if python and evidence.endswith(ENTER_CALLS):  # with m as x: what m's enter gives
            return self._entered(facts, owner, evidence)
        if evidence.endswith("()"):  # x = T(…): an instance of the class T
            callee = evidence[:-2]
            if python and (callee in BUILTIN_RESULT_CALLS or callee in PYTHON_BUILTIN_TYPES):
                if self._scoped(facts, owner, callee) is None:
                    return BUILTIN_TARGET
            if python and "." in callee:
                made = self._made_by_own_class_method(facts, owner, callee)
                if made is not None:
                    return made
            got = self._receiver(facts, owner, callee) if python else None
            if got is None:
                got = self._dotted(facts, owner, callee)
            if got is not None and got[0] == "sym" and self.t.sym[got[1]].kind != "class":
                return self._returned(got[1])  # a function: what its annotation says
            return got
        text = _annotation_class(evidence) if python else evidence
        if text is None:
            return self._union(facts, owner, evidence) if python else None
        if python and text in PYTHON_BUILTIN_TYPES and self._scoped(facts, owner, text) is None:
            return BUILTIN_TARGET
        got = self._dotted(facts, owner, text)
        if got is not None and got[0] == "sym" and self.t.sym[got[1]].kind != "class":
            return None
        return got

    def _entered(self, facts: FileFacts, owner: str, evidence: str) -> Target | None:
        """What ``with <manager> as x`` binds, from ``<manager>.__enter__()`` evidence:
        what a ``@contextmanager`` function's annotation says it yields; else what the
        enter method of the manager's class (or a base) returns. A builtin manager
        (``open()``, a lock) gives a builtin value; an external one, or a class whose
        enter method is not the project's, gives nothing known."""
        manager, _, method = evidence[:-2].rpartition(".")
        if manager.endswith("()"):
            callee = manager[:-2]
            made = self._receiver(facts, owner, callee) or self._dotted(facts, owner, callee)
            if made is not None and made[0] == "sym" and self.t.sym[made[1]].kind != "class":
                if self._decorated_by(made[1], _CONTEXT_MANAGER_DECORATOR):
                    return self._yielded(made[1])
        value = self._type_of(facts, owner, manager if manager.endswith("()") else "=" + manager)
        if value == BUILTIN_TARGET:
            return value
        if value is None or value[0] != "sym" or self.t.sym[value[1]].kind != "class":
            return None
        enter = self._class_member(value[1], method)
        return self._returned(enter) if enter is not None else None

    def _decorated_by(self, function_id: str, decorator: re.Pattern[str]) -> bool:
        """Whether a Python function carries a decorator ``decorator`` matches."""
        facts = self.facts(self.t.sym[function_id].path)
        return facts is not None and any(
            owner == function_id and var == DECORATED and decorator.match(evidence)
            for owner, var, evidence in facts.types
        )

    def _return_annotation(self, function_id: str) -> str:
        """What a function's signature writes after ``->`` (empty without one); for a
        signature that does not end with it (cut to its bound), the annotation
        extraction kept beside it."""
        kept = self._evidence(self.t.sym[function_id].path).get((function_id, ANNOTATED))
        if kept:
            return kept[0]
        signature = self._signature(function_id).rstrip(":{ ").strip()
        arrow = signature.rfind("->")
        return signature[arrow + 2 :].strip() if arrow >= 0 else ""

    def _yielded(self, function_id: str) -> Target | None:
        """The class a generator's annotation says it yields (``-> Iterator[Config]``)."""
        yielded = _YIELDED.fullmatch(self._return_annotation(function_id))
        if yielded is None:
            return None
        facts = self.facts(self.t.sym[function_id].path)
        return self._type_of(facts, function_id, yielded.group(1).strip()) if facts else None

    def _union(self, facts: FileFacts, owner: str, annotation: str) -> Target | None:
        """``("union", class ids…)`` for an annotation naming several of the project's
        classes (``A | B``, ``Union[A, B]``); None when any member is not one."""
        members = _union_members(annotation)
        if not members:
            return None
        ids: list[str] = []
        for member in members:
            got = self._dotted(facts, owner, member)
            if got is None or got[0] != "sym" or self.t.sym[got[1]].kind != "class":
                return None
            if got[1] not in ids:
                ids.append(got[1])
        return ("union", *ids) if len(ids) > 1 else ("sym", ids[0])

    def _dotted(self, facts: FileFacts, owner: str, text: str) -> Target | None:
        """A dotted name as written in the file, through its scopes and imports."""
        parts = text.split(".")
        if not all(p.isidentifier() for p in parts):
            return None
        cur = self._scoped(facts, owner, parts[0])
        if cur is not None and cur[0] == "from":
            cur = self._follow(cur, 0)
        if cur is None and len(parts) == 1:  # Go and Java: a type of the same package
            found = self._by_name(facts, parts[0], CLASS_KINDS).target
            cur = ("sym", found) if found is not None else None
        for part in parts[1:]:
            if cur is None or cur[0] == "ext":
                return cur
            cur = self._member(cur, part, 0)
        return cur

    def _named_candidates(
        self, name: str, kinds: frozenset[str], language: str
    ) -> list[str] | None:
        """The symbols called ``name`` of one of ``kinds`` that a call from a file in
        ``language`` may mean (see :meth:`_candidates`); None when more than
        :data:`MAX_NAME_CANDIDATES` are. Asked for again and again by calls of common
        names: worked out once per name and language family."""
        key = (name, kinds, LANGUAGE_FAMILIES.get(language, language))
        if key in self._by_name_of:
            return self._by_name_of[key]
        t = self.t
        sym = t.sym
        found = [
            i
            for i in self._named(name, kinds)
            if _same_family(t.files.get(sym[i].path), language)
            and not _in_function(sym, sym[i])
            and not self.is_property(i)
        ]
        kept = None if len(found) > MAX_NAME_CANDIDATES else found
        self._by_name_of[key] = kept
        return kept

    def _candidates(
        self, facts: FileFacts, name: str, kinds: frozenset[str], members: bool = False
    ) -> tuple[tuple[str, float], ...]:
        """The symbols a call could mean by its name alone, each with its share of the
        call: none when more than :data:`MAX_NAME_CANDIDATES` carry the name. A function
        or class defined inside a function is no candidate: its name is bound only in
        that function's scope, where the scoped lookup finds it. When a candidate's file
        is imported by the caller's, candidates from files it neither imports nor sits
        beside are dropped."""
        t = self.t
        sym = t.sym
        found = self._named_candidates(name, kinds, facts.language)
        if found is None:
            return ()  # a common name: functions carrying it count, though none is meant
        if members:
            found = [i for i in found if _in_class(sym, sym[i])]
        if not found:
            return ()
        imported = set(self.imported_files(facts.path))
        imported.add(facts.path)
        here = _folder(facts.path)

        def plausibility(sid: str) -> float:
            path = t.sym[sid].path
            if path in imported:
                return IMPORTED_PLAUSIBILITY
            return SAME_DIR_PLAUSIBILITY if _folder(path) == here else ELSEWHERE_PLAUSIBILITY

        scores = [plausibility(i) for i in found]
        if IMPORTED_PLAUSIBILITY in scores:
            # One is in a file the caller imports (or its own): one neither imported
            # nor beside the caller is not what it means.
            kept = [
                (i, s) for i, s in zip(found, scores, strict=True) if s > ELSEWHERE_PLAUSIBILITY
            ]
            found, scores = [i for i, _ in kept], [s for _, s in kept]
        total = sum(scores)
        return tuple((i, score / total) for i, score in zip(found, scores, strict=True))

    def resolve_call(self, facts: FileFacts, owner: str, receiver: str, name: str) -> CallBinding:
        python = facts.language == "python"
        if receiver == "":
            if not self._may_name(facts.path, name):
                # No symbol anywhere has this name and no import renames one to it.
                builtin = python and name in PYTHON_BUILTINS
                return CallBinding(None, "builtin" if builtin else "unknown")
            if python and self._is_local(facts, owner, name):
                return CallBinding(None, "unknown")  # a variable of the function
            got = self._scoped(facts, owner, name)
            if got is not None:
                if got[0] == "sym":
                    return CallBinding(got[1], "")
                if got[0] == "ext":
                    return CallBinding(None, "builtin" if got == BUILTIN_TARGET else "external")
                return CallBinding(None, "unknown")
            if python and name in PYTHON_BUILTINS:
                return CallBinding(None, "builtin")  # not shadowed here: the builtin
            return self._by_name(facts, name, BARE_CALLABLE_KINDS)
        if receiver == "super()":
            cls = self._enclosing_class(owner)
            for base in self.class_bases(cls) if cls else ():
                inherited = self._class_member(base, name)
                if inherited:
                    return CallBinding(inherited, "")
            return CallBinding(None, "unknown")
        if name not in self.t.by_name:
            # No symbol carries the name: a module of the project may still bind it to
            # code (``from .impl import work as do_work``, ``run = work``); else only say
            # whether the receiver is outside the repo.
            head = receiver.replace("::", ".").split(".", 1)[0]
            bound = self.bindings(facts.path).get(head) if receiver != "?" else None
            external = bound is not None and bound[0] == "ext"
            renamed = self._module_member(facts, owner, receiver, name) if bound else None
            if renamed is not None:
                return CallBinding(renamed, "")
            return CallBinding(None, "external" if external else "unknown")
        if receiver != "?":
            got = self._receiver(facts, owner, receiver)
            if got is None and receiver.endswith("::"):
                return CallBinding(None, "unknown")  # a path outside the repository
            if got is not None:
                if got[0] == "ext":
                    return CallBinding(None, "builtin" if got == BUILTIN_TARGET else "external")
                if got[0] == "union":  # one of several classes: each one's method, a share
                    return self._union_call(got, name)
                found = self._member(got, name, 0)
                if found is not None and found[0] == "sym":
                    return CallBinding(found[1], "")
                if found is not None and found[0] == "ext":
                    return CallBinding(None, "external")
                if got[0] != "sym" or self.t.sym[got[1]].kind != "class":
                    return CallBinding(None, "unknown")
        # An object no evidence names: its name alone ties it to candidates, if any.
        if name in PROTOCOL_METHODS.get(facts.language, _EMPTY):
            return CallBinding(None, "builtin")
        if python:  # x.f(): a project function or class is reached so only through its
            # module, and a module receiver resolves: only members of classes are left
            return self._by_name(facts, name, CALLABLE_KINDS, members=True)
        return self._by_name(facts, name, CALLABLE_KINDS)

    def _module_member(self, facts: FileFacts, owner: str, receiver: str, name: str) -> str | None:
        """The symbol a project module (or package) ``receiver`` binds as ``name``, a name
        no symbol carries: an import renamed to it, or a module-level alias."""
        got = self._receiver(facts, owner, receiver)
        if got is None or got[0] not in ("file", "pkg"):
            return None
        found = self._member(got, name, 0)
        if found is not None and found[0] == "from":
            found = self._follow(found, 0)
        return found[1] if found is not None and found[0] == "sym" else None

    def _union_call(self, union: Target, name: str) -> CallBinding:
        """A call of ``name`` on a value of one of the union's classes: the method each
        class has (or inherits), each a candidate with an equal share."""
        found: list[str] = []
        for cls in union[1:]:
            member = self._class_member(cls, name)
            if member is not None and member not in found:
                found.append(member)
        if len(found) == 1:
            return CallBinding(found[0], "")
        share = 1.0 / len(found) if found else 0.0
        return CallBinding(None, "ambiguous", tuple((m, share) for m in found))

    def _may_name(self, path: str, name: str) -> bool:
        """Whether a bare ``name`` in ``path`` can mean project code: some symbol has the
        name, or an import (a star import included) may bind it."""
        return name in self.t.by_name or name in self.bindings(path) or bool(self._stars[path])

    def _is_local(self, facts: FileFacts, owner: str, name: str) -> bool:
        """Whether ``name`` is a variable a function around ``owner`` binds (a parameter,
        an assignment): such a name never reaches the module's definitions."""
        evidence = self._evidence(facts.path)
        if not evidence:
            return False
        cur = self.t.sym.get(owner)
        while cur is not None:
            if cur.kind != "class" and (cur.id, name) in evidence:
                return True
            cur = self.t.sym.get(cur.parent) if cur.parent else None
        return False

    def _by_name(
        self, facts: FileFacts, name: str, kinds: frozenset[str], members: bool = False
    ) -> CallBinding:
        """A call nothing but its name ties to code: Go and Java see their own package
        (a unique name in the same directory is resolved); otherwise the few symbols
        carrying the name are candidates (with ``members``, those defined in a class)."""
        if facts.language in PACKAGE_SCOPE_LANGUAGES:
            t = self.t
            tops = t.dir_top.get(_folder(facts.path), {}).get(name, ())
            same_dir = [i for i in tops if t.sym[i].kind in kinds]
            if len(same_dir) == 1:
                return CallBinding(same_dir[0], "")
        candidates = self._candidates(facts, name, kinds, members)
        if candidates:
            return CallBinding(None, "ambiguous", candidates)
        if self._named(name, kinds):
            return CallBinding(None, "ambiguous")
        return CallBinding(None, "unknown")

    def resolve_ref(self, facts: FileFacts, owner: str, receiver: str, name: str) -> str | None:
        if receiver == "":
            if not self._may_name(facts.path, name):
                return None
            if facts.language == "python" and self._is_local(facts, owner, name):
                return None
            got = self._scoped(facts, owner, name)
        elif name not in self.t.by_name:
            return self._module_member(facts, owner, receiver, name)
        else:
            head = self._receiver(facts, owner, receiver)
            if head is None or head[0] in ("ext",):
                return None
            got = self._member(head, name, 0)
        if got is not None and got[0] == "from":
            got = self._follow(got, 0)
        return got[1] if got is not None and got[0] == "sym" else None

    # --- one file -----------------------------------------------------------------

    def resolve_file(self, path: str) -> Resolution:
        res = Resolution(path)
        facts = self.facts(path)
        if facts is None:
            return res
        t = self.t
        edges = res.edges
        # Symbol ids are unique and never their parent's: each contains edge is new.
        edges.update(((sym.parent or path, sym.id, "contains"), 1.0) for sym in facts.symbols)
        for f in self.imported_files(path):
            res.add(path, f, "imports")
        for owner, text in facts.bases:
            base = self.resolve_base(facts, owner, text)
            if base is not None:
                res.add(owner, base, "inherits")
        # Most (receiver, name) pairs recur under several owners, and most resolve the
        # same from any owner: those are resolved once per file (a pair is in a memo
        # only when it is owner-free, so a hit is always valid).
        nested = None if facts.language in CLASS_SCOPE_LANGUAGES else t.nested_names(path)
        if nested is not None and facts.types:
            # A variable typed in some function resolves differently from owner to owner.
            nested = nested | {var for owner, var, _ in facts.types if owner != path}
        if nested is not None and facts.language == "python":
            nested = nested | self.injected_parameters(facts)  # fixtures, by parameter
        unresolved = res.unresolved
        call_memo: dict[tuple[str, str], CallBinding] = {}
        call_targets: dict[str, set[str]] = defaultdict(set)
        for owner, receiver, name, count in facts.calls:
            key = (receiver, name)
            got = call_memo.get(key)
            if got is None:
                got = self.resolve_call(facts, owner, receiver, name)
                if nested is not None and _owner_free(receiver, name, nested):
                    call_memo[key] = got
            target, why, candidates = got
            if target is None:
                unresolved[why] += count
                for candidate, share in candidates:
                    if candidate != owner:
                        res.add(owner, candidate, NAME_MATCH, count * share)
                continue
            if target == owner:
                continue
            edge = (owner, target, "calls")
            edges[edge] = edges.get(edge, 0.0) + count
            call_targets[owner].add(target)
        ref_memo: dict[tuple[str, str], str | None] = {}
        for owner, receiver, name in facts.refs:
            key = (receiver, name)
            if key in ref_memo:
                target = ref_memo[key]
            else:
                target = self.resolve_ref(facts, owner, receiver, name)
                if nested is not None and _owner_free(receiver, name, nested):
                    ref_memo[key] = target
            if target is None or target == owner or target in call_targets.get(owner, ()):
                continue
            if _is_ancestor(t, target, owner) or (owner, target, "inherits") in edges:
                continue
            res.add(owner, target, "references")
        if facts.language == "python":
            self._fixture_edges(facts, res)
        if facts.is_test:
            self._tests_edges(facts, res)
        return res

    def _fixture_edges(self, facts: FileFacts, res: Resolution) -> None:
        """A test (or fixture) naming a fixture as a parameter references it."""
        if not facts.is_test and not self._fixtures(facts.path):
            return
        for s in facts.symbols:
            if s.kind == "class" or not self._injected(s.id):
                continue
            for name in self.parameters(s.id):
                found = self.fixture(facts, s.id, name)
                if found is not None and (s.id, found, "calls") not in res.edges:
                    res.add(s.id, found, "references")

    def _tests_edges(self, facts: FileFacts, res: Resolution) -> None:
        t = self.t
        path = facts.path
        # Test functions, and the test file itself for code at its top level (JS/TS tests).
        test_symbols = {s.id for s in facts.symbols if s.is_test} | {path}
        for (src, dst, kind), weight in list(res.edges.items()):
            if kind not in ("calls", "references") or src not in test_symbols:
                continue
            row = t.sym.get(dst)
            if row is not None and not row.is_test and not _is_test_file(t, row.path, self):
                res.add(src, dst, "tests", weight)
        for f in self.imported_files(path):
            if not _is_test_file(t, f, self):
                res.add(path, f, "tests")
        target = _tested_by_name(t, path, self)
        if target is not None:
            res.add(path, target, "tests")


_second = itemgetter(1)
_third = itemgetter(2)


def names_used(facts: FileFacts) -> set[str]:
    """Every name whose definitions can change how this file resolves."""
    names = set(map(_third, facts.calls))
    names.update(map(_third, facts.refs))
    receivers = set(map(_second, facts.calls))
    receivers.update(map(_second, facts.refs))
    receivers.discard("?")
    for receiver in receivers:  # Foo.create() uses Foo and create
        names.update(receiver.replace("::", ".").replace("()", "").split("."))
    for imp in facts.imports:
        names.update(p for p in imp.module.replace("::", ".").replace("/", ".").split(".") if p)
        names.update(n for n, _ in imp.names)
    for _, text in facts.bases:
        names.update(text.split("."))
    for _, _, evidence in facts.types:
        names.update(_IDENTIFIER.findall(evidence))
    if facts.is_test:
        names.add(_tested_stem(facts.path))
    fixtures = {
        owner
        for owner, var, evidence in facts.types
        if var == DECORATED and _FIXTURE_DECORATOR.match(evidence)
    }
    for s in facts.symbols:  # parameters pytest fills with the fixtures of their names
        if s.is_test or s.id in fixtures:
            names.update(_parameters(s.signature))
    names.discard("")
    return names


CALLABLE_KINDS = frozenset({"function", "method", "class"})
BARE_CALLABLE_KINDS = frozenset({"function", "class"})  # what a call without receiver names
CLASS_KINDS = frozenset({"class"})
FUNCTION_KINDS = frozenset({"function", "method"})


def _owner_free(receiver: str, name: str, nested: set[str] | frozenset[str]) -> bool:
    """Whether a call or reference resolves the same from every owner in its file (a
    language without class scopes): no scope lookup of ``self``, ``super()`` or a name
    some nested definition of the file carries is involved."""
    if receiver == "":
        return name not in nested
    if receiver == "?":
        return True
    if receiver == "super()":
        return False
    head = receiver.split("::" if "::" in receiver else ".", 1)[0].removesuffix("()")
    return head not in SELF_RECEIVERS and head not in nested


def _parameters(signature: str) -> tuple[str, ...]:
    """The parameter names a ``def`` line lists (``*args`` and ``**kw`` by name, ``self``
    and ``cls`` left out); a cut-off signature gives those it shows."""
    opened = signature.find("(")
    if opened < 0:
        return ()
    names: list[str] = []
    depth = 0
    start = opened + 1
    for i in range(opened + 1, len(signature) + 1):
        ch = signature[i] if i < len(signature) else ")"
        if ch in "([{":
            depth += 1
        elif ch in ")]}" and depth:
            depth -= 1
        elif ch in ",)" and not depth:
            got = _PARAMETER.match(signature, start)
            if got is not None and got.group(1) not in SELF_RECEIVERS:
                names.append(got.group(1))
            start = i + 1
            if ch == ")":
                break
    return tuple(names)


def _union_of_bars(text: str) -> str:
    """``Union[A, B]`` written as ``A | B`` (a union whose members hold no brackets)."""
    for wrapper in ("Union[", "typing.Union["):
        if text.startswith(wrapper) and text.endswith("]"):
            inner = text[len(wrapper) : -1]
            return text if "[" in inner else inner.replace(",", "|")
    return text


def _union_members(text: str) -> list[str]:
    """The names of a union annotation (``A | B | None``, ``Union[A, B]``,
    ``Optional[Union[A, B]]``) when it joins 2 to :data:`MAX_UNION_MEMBERS` plain
    (dotted) names; else none."""
    text = text.strip().strip("'\"").strip()
    for wrapper in ("Optional[", "typing.Optional["):
        if text.startswith(wrapper) and text.endswith("]"):
            text = text[len(wrapper) : -1].strip()
    text = _union_of_bars(text)
    kept = [part.strip().strip("'\"") for part in text.split("|")]
    kept = [part for part in kept if part not in ("None", "")]
    if not 2 <= len(kept) <= MAX_UNION_MEMBERS:
        return []
    if not all(all(p.isidentifier() for p in part.split(".")) for part in kept):
        return []
    return kept


def _annotation_class(text: str) -> str | None:
    """The class an annotation names: ``Foo``, ``"Foo"``, ``mod.Foo``, ``Optional[Foo]``,
    ``Foo | None``, ``Union[Foo, None]`` and ``Foo[int]`` all name ``Foo``; unions of
    several do not."""
    text = text.strip().strip("'\"").strip()
    for wrapper in ("Optional[", "typing.Optional[", "ClassVar[", "Final[", "Type["):
        if text.startswith(wrapper) and text.endswith("]"):
            text = text[len(wrapper) : -1].strip()
            break
    text = _union_of_bars(text)
    kept = [part.strip() for part in text.split("|") if part.strip() not in ("None", "")]
    if len(kept) != 1:
        return None
    head = kept[0].split("[", 1)[0].strip().strip("'\"")
    return head or None


def _in_class(sym: dict[str, SymbolRow], row: SymbolRow) -> bool:
    """Whether ``row`` is defined directly inside a class."""
    parent = sym.get(row.parent) if row.parent else None
    return parent is not None and parent.kind == "class"


def _in_function(sym: dict[str, SymbolRow], row: SymbolRow) -> bool:
    """Whether ``row`` is defined directly inside a function or method."""
    parent = sym.get(row.parent) if row.parent else None
    return parent is not None and parent.kind != "class"


def _is_ancestor(t: SymbolTable, candidate: str, owner: str) -> bool:
    cur = t.sym.get(owner)
    while cur is not None and cur.parent:
        if cur.parent == candidate:
            return True
        cur = t.sym.get(cur.parent)
    return False


def _is_test_file(t: SymbolTable, path: str, resolver: Resolver) -> bool:
    facts = resolver.facts(path)
    return bool(facts and facts.is_test)


LANGUAGE_FAMILIES = {"typescript": "js", "tsx": "js", "javascript": "js"}


def _same_family(a: str | None, b: str | None) -> bool:
    """A .test.ts may test a .tsx or .js file: the JavaScript family counts as one."""
    return a is not None and LANGUAGE_FAMILIES.get(a, a) == LANGUAGE_FAMILIES.get(b or "", b)


def _tested_stem(path: str) -> str:
    stem = _stem(path)
    for prefix in ("test_",):
        if stem.startswith(prefix):
            return stem[len(prefix) :]
    for suffix in ("_test", "Tests", "Test", "IT"):
        if stem.endswith(suffix) and len(stem) > len(suffix):
            return stem[: -len(suffix)]
    return stem


def _tested_by_name(t: SymbolTable, path: str, resolver: Resolver) -> str | None:
    """test_foo.py / foo_test.go / foo.test.ts / FooTest.java -> the file it is named after."""
    stem = _tested_stem(path)
    name = path.rsplit("/", 1)[-1]
    if stem == _stem(path) and ".test." not in name and ".spec." not in name:
        return None
    cands = [
        p
        for p in t.stems.get(stem, ())
        if p != path
        and _same_family(t.files.get(p), t.files.get(path))
        and not _is_test_file(t, p, resolver)
    ]
    if not cands:
        return None
    here = posixpath.dirname(path)
    same = [p for p in cands if posixpath.dirname(p) == here]
    if len(same) == 1:
        return same[0]
    return cands[0] if len(cands) == 1 else None
