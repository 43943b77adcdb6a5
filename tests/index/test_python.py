"""Python indexing: exact symbols and edges of a small package with tests."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from index_fixtures import edge_set, index, node_ids

PKG_INIT = "from .core import Engine\n"
PKG_CORE = '''"""Core."""
import os
from pkg.util import helper, CONST
from . import util


class Base:
    def run(self):
        return self.step()

    def step(self):
        return 1


class Engine(Base):
    """Drives things."""

    def step(self):
        value = helper(2)
        return util.scale(value) + super().step()

    def start(self):
        return self.run()


def make() -> Engine:
    return Engine()


def twin():
    return 1


def twin():
    return 2
'''
PKG_UTIL = """CONST = 3


def helper(x):
    return x * CONST


def scale(x):
    return os_free(x)


def os_free(x):
    return abs(x)
"""
TEST_CORE = """from pkg import Engine
from pkg.core import make


def test_make():
    assert isinstance(make(), Engine)


class TestEngine:
    def test_step(self):
        assert Engine().step() == 7
"""
FILES = {
    "pkg/__init__.py": PKG_INIT,
    "pkg/core.py": PKG_CORE,
    "pkg/util.py": PKG_UTIL,
    "tests/test_core.py": TEST_CORE,
}
CORE = "pkg/core.py::"
UTIL = "pkg/util.py::"
TEST = "tests/test_core.py::"


def test_symbols_have_readable_ids_kinds_and_lines(make_repo: Callable[..., Path]) -> None:
    _, graph = index(make_repo(FILES))
    assert node_ids(graph, "file") == set(FILES)
    assert node_ids(graph, "class") == {CORE + "Base", CORE + "Engine", TEST + "TestEngine"}
    assert node_ids(graph, "method") == {
        CORE + "Base.run",
        CORE + "Base.step",
        CORE + "Engine.step",
        CORE + "Engine.start",
        TEST + "TestEngine.test_step",
    }
    assert node_ids(graph, "function") == {
        CORE + "make",
        CORE + "twin",
        CORE + "twin#2",
        UTIL + "helper",
        UTIL + "scale",
        UTIL + "os_free",
        TEST + "test_make",
    }
    engine = graph.node(CORE + "Engine")
    assert engine is not None
    assert (engine.start_line, engine.end_line) == (15, 23)
    assert engine.signature == "class Engine(Base)"
    assert engine.docstring == "Drives things."
    assert engine.language == "python"
    assert engine.parent == "pkg/core.py"
    step = graph.node(CORE + "Engine.step")
    assert step is not None and step.qualname == "Engine.step" and step.parent == CORE + "Engine"
    make = graph.node(CORE + "make")
    assert make is not None and make.signature == "def make() -> Engine"


def test_same_named_definitions_both_kept(make_repo: Callable[..., Path]) -> None:
    _, graph = index(make_repo(FILES))
    first, second = graph.node(CORE + "twin"), graph.node(CORE + "twin#2")
    assert first is not None and second is not None
    assert (first.start_line, second.start_line) == (30, 34)
    assert first.content_hash != second.content_hash


def test_contains_edges(make_repo: Callable[..., Path]) -> None:
    _, graph = index(make_repo(FILES))
    assert edge_set(graph, "contains") == {
        ("contains", "pkg/core.py", CORE + "Base"),
        ("contains", "pkg/core.py", CORE + "Engine"),
        ("contains", "pkg/core.py", CORE + "make"),
        ("contains", "pkg/core.py", CORE + "twin"),
        ("contains", "pkg/core.py", CORE + "twin#2"),
        ("contains", CORE + "Base", CORE + "Base.run"),
        ("contains", CORE + "Base", CORE + "Base.step"),
        ("contains", CORE + "Engine", CORE + "Engine.step"),
        ("contains", CORE + "Engine", CORE + "Engine.start"),
        ("contains", "pkg/util.py", UTIL + "helper"),
        ("contains", "pkg/util.py", UTIL + "scale"),
        ("contains", "pkg/util.py", UTIL + "os_free"),
        ("contains", "tests/test_core.py", TEST + "test_make"),
        ("contains", "tests/test_core.py", TEST + "TestEngine"),
        ("contains", TEST + "TestEngine", TEST + "TestEngine.test_step"),
    }


def test_imports_resolve_to_repository_files(make_repo: Callable[..., Path]) -> None:
    _, graph = index(make_repo(FILES))
    assert edge_set(graph, "imports") == {
        ("imports", "pkg/__init__.py", "pkg/core.py"),
        ("imports", "pkg/core.py", "pkg/util.py"),
        ("imports", "tests/test_core.py", "pkg/__init__.py"),
        ("imports", "tests/test_core.py", "pkg/core.py"),
    }


def test_calls_resolve_from_the_enclosing_symbol(make_repo: Callable[..., Path]) -> None:
    _, graph = index(make_repo(FILES))
    assert edge_set(graph, "calls") == {
        ("calls", CORE + "Base.run", CORE + "Base.step"),  # self.step in Base
        ("calls", CORE + "Engine.start", CORE + "Base.run"),  # inherited method
        ("calls", CORE + "Engine.step", CORE + "Base.step"),  # super().step()
        ("calls", CORE + "Engine.step", UTIL + "helper"),  # imported name
        ("calls", CORE + "Engine.step", UTIL + "scale"),  # module attribute
        ("calls", CORE + "make", CORE + "Engine"),  # same file
        ("calls", UTIL + "scale", UTIL + "os_free"),
        ("calls", TEST + "test_make", CORE + "make"),
        ("calls", TEST + "TestEngine.test_step", CORE + "Engine"),  # re-exported by pkg
        ("calls", TEST + "TestEngine.test_step", CORE + "Engine.step"),  # Engine().step()
    }


def test_unresolved_calls_are_counted_not_guessed(make_repo: Callable[..., Path]) -> None:
    ws, _ = index(make_repo(FILES))
    summary = ws.summary()
    # abs, super, isinstance are builtins; Engine().step() is Engine's own step.
    assert summary.unresolved == {"builtin": 3, "external": 0, "ambiguous": 0, "unknown": 0}


def test_inherits_references_and_tests(make_repo: Callable[..., Path]) -> None:
    _, graph = index(make_repo(FILES))
    assert edge_set(graph, "inherits") == {("inherits", CORE + "Engine", CORE + "Base")}
    assert edge_set(graph, "references") == {("references", TEST + "test_make", CORE + "Engine")}
    assert edge_set(graph, "tests") == {
        ("tests", "tests/test_core.py", "pkg/__init__.py"),
        ("tests", "tests/test_core.py", "pkg/core.py"),
        ("tests", TEST + "test_make", CORE + "make"),
        ("tests", TEST + "test_make", CORE + "Engine"),
        ("tests", TEST + "TestEngine.test_step", CORE + "Engine"),
        ("tests", TEST + "TestEngine.test_step", CORE + "Engine.step"),
    }


def test_test_marks(make_repo: Callable[..., Path]) -> None:
    _, graph = index(make_repo(FILES))
    tests = {n.id for n in graph.nodes if n.is_test}
    assert tests == {
        "tests/test_core.py",
        TEST + "test_make",
        TEST + "TestEngine",
        TEST + "TestEngine.test_step",
    }


def test_call_weights_count_call_sites(make_repo: Callable[..., Path]) -> None:
    root = make_repo({"m.py": "def f():\n    pass\n\ndef g():\n    f()\n    f()\n    f()\n"})
    _, graph = index(root)
    (edge,) = [e for e in graph.edges if e.kind == "calls"]
    assert (edge.src, edge.dst, edge.weight) == ("m.py::g", "m.py::f", 3.0)


def test_resolution_order_prefers_scope_then_file_then_imports(
    make_repo: Callable[..., Path],
) -> None:
    root = make_repo(
        {
            "a/lib.py": "def work():\n    pass\n\ndef only_here():\n    pass\n",
            "a/other.py": "def sibling():\n    pass\n",
            "b/unique.py": "def far_away():\n    pass\n",
            "a/main.py": (
                "from a.lib import work\n\n"
                "def work_local():\n    pass\n\n"
                "def outer():\n"
                "    def work():\n        pass\n"
                "    work()\n"  # same scope: the nested one
                "    work_local()\n"  # same file
                "    sibling()\n"  # same directory, never imported: a name match
                "    far_away()\n"  # unique in the repository: a name match
                "    nowhere()\n"  # unknown
                "\n"
                "def uses_import():\n    work()\n"  # imported name
            ),
        }
    )
    ws, graph = index(root)
    calls = edge_set(graph, "calls")
    assert calls == {
        ("calls", "a/main.py::outer", "a/main.py::outer.work"),
        ("calls", "a/main.py::outer", "a/main.py::work_local"),
        ("calls", "a/main.py::uses_import", "a/lib.py::work"),
    }
    assert edge_set(graph, "name_match") == {
        ("name_match", "a/main.py::outer", "a/other.py::sibling"),
        ("name_match", "a/main.py::outer", "b/unique.py::far_away"),
    }
    assert ws.summary().unresolved["unknown"] == 1


def test_ambiguous_repo_wide_name_is_not_resolved(make_repo: Callable[..., Path]) -> None:
    root = make_repo(
        {
            "x/one.py": "def dup():\n    pass\n",
            "y/two.py": "def dup():\n    pass\n",
            "z/main.py": "def go():\n    dup()\n",
        }
    )
    ws, graph = index(root)
    assert edge_set(graph, "calls") == set()
    assert ws.summary().unresolved["ambiguous"] == 1


def test_external_imports_are_counted_external(make_repo: Callable[..., Path]) -> None:
    root = make_repo(
        {"m.py": "import os\nfrom json import dumps\n\ndef f():\n    os.getcwd()\n    dumps(1)\n"}
    )
    ws, graph = index(root)
    assert edge_set(graph, "calls", "imports") == set()
    assert ws.summary().unresolved["external"] == 2


def test_src_layout_and_relative_imports(make_repo: Callable[..., Path]) -> None:
    root = make_repo(
        {
            "src/app/__init__.py": "",
            "src/app/models.py": "class User:\n    pass\n",
            "src/app/sub/__init__.py": "",
            "src/app/sub/views.py": "from ..models import User\nfrom app.models import User as U2\n\ndef show():\n    return User(), U2()\n",
        }
    )
    _, graph = index(root)
    assert edge_set(graph, "imports") == {("imports", "src/app/sub/views.py", "src/app/models.py")}
    assert edge_set(graph, "calls") == {
        ("calls", "src/app/sub/views.py::show", "src/app/models.py::User")
    }


def test_receiver_text_is_read_back_from_the_dot() -> None:
    from coderooms.index.extract.python import receiver_before

    def recv(code: str) -> str:
        data = code.encode()
        return receiver_before(data, data.rindex(b".method"))

    assert recv("self.items.method()") == "self.items"
    assert recv("x = os.path.method()") == "os.path"
    assert recv("super().method()") == "super()"
    assert recv("make().method()") == "make()"
    assert recv("Foo.create('a)', (1, [2]),\n  x=f(y)).method()") == "Foo.create()"
    assert recv("make(rows[0]).method()") == "make()"
    assert recv("a().b().method()") == "?"
    assert recv("make('it\\'s').method()") == "?"  # an escaped quote: not read
    assert recv("make(x  # why\n).method()") == "?"  # a comment: not read
    assert recv("(a).method()") == "?"
    assert recv("rows[0].method()") == "?"
    assert recv("f().attr.method()") == "?"
    assert recv("'text'.method()") == "?"


def test_attribute_references_read_through_spacing_and_comments(tmp_path: Path) -> None:
    """``a.b`` used as a value is one reference however it is spaced, even with a
    comment between the name and the dot (``self.x`` too: it may read a property); a
    called ``a.b()`` is a call, not a reference."""
    from coderooms.index.extract import process_file
    from coderooms.index.facts import FileFacts

    (tmp_path / "m.py").write_text(
        "def f():\n"
        "    x = (os  # the module\n"
        "         .sep)\n"
        "    y = os .  linesep\n"
        "    z = os.getcwd()\n"
        "    return ñame.attr, self.skip, x, y, z\n"
    )
    facts = process_file(str(tmp_path), "m.py")
    assert isinstance(facts, FileFacts)
    pairs = [(receiver, name) for _, receiver, name in facts.refs if receiver]
    assert sorted(pairs) == [("os", "linesep"), ("os", "sep"), ("self", "skip"), ("ñame", "attr")]
    assert ("m.py::f", "os", "getcwd", 1) in facts.calls
