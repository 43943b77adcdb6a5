"""Call resolution binds through evidence only: one rule per test, on small repositories."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from index_fixtures import index

from coderooms.focus.graph import CodeGraph
from coderooms.focus.impact import impact

MEMORY_LOG = (
    "class MemoryLog:\n"
    "    def __init__(self):\n        self.items = []\n"
    "    def append(self, item):\n        self.items.append(item)\n"
)


def calls_from(graph: CodeGraph, src: str, kind: str = "calls") -> set[str]:
    return {e.dst for e in graph.edges if e.kind == kind and e.src == src}


def test_list_append_on_a_local_list_binds_to_no_project_method(
    make_repo: Callable[..., Path],
) -> None:
    # The failure quoted in the issue: applied.append(...) listed MemoryLog.append.
    root = make_repo(
        {
            "store/log.py": MEMORY_LOG,
            "store/migrate.py": (
                "def apply_migrations(steps):\n"
                "    applied = []\n"
                "    for step in steps:\n        applied.append(step)\n"
                "    done = list(steps)\n    done.append(1)\n"
                "    return applied\n"
                "def unknown_receiver(thing):\n    thing.append(1)\n"
            ),
        }
    )
    _, graph = index(root)
    assert not any(
        e.dst == "store/log.py::MemoryLog.append" for e in graph.edges if e.kind != "contains"
    )
    result = impact(graph, "MemoryLog.append", depth=1)
    assert result.impacted == ()


def test_self_call_binds_through_the_class_and_its_bases(make_repo: Callable[..., Path]) -> None:
    root = make_repo(
        {
            "app/base.py": "class Mixin:\n    def helper(self):\n        pass\n",
            "app/impl.py": (
                "from app.base import Mixin\n\n"
                "class Other:\n    def helper(self):\n        pass\n\n"
                "class Impl(Mixin):\n"
                "    def run(self):\n        self.helper()\n"
                "    @classmethod\n    def make(cls):\n        cls.helper(None)\n"
            ),
        }
    )
    _, graph = index(root)
    assert calls_from(graph, "app/impl.py::Impl.run") == {"app/base.py::Mixin.helper"}
    assert calls_from(graph, "app/impl.py::Impl.make") == {"app/base.py::Mixin.helper"}


def test_super_call_binds_to_the_base_method(make_repo: Callable[..., Path]) -> None:
    root = make_repo(
        {
            "m.py": (
                "class A:\n    def save(self):\n        pass\n"
                "class B(A):\n    def save(self):\n        super().save()\n"
            )
        }
    )
    _, graph = index(root)
    assert calls_from(graph, "m.py::B.save") == {"m.py::A.save"}


def test_annotated_parameter_and_variable_bind_to_their_class(
    make_repo: Callable[..., Path],
) -> None:
    root = make_repo(
        {
            "pkg/__init__.py": "",
            "pkg/shapes.py": (
                "class Square:\n    def area(self):\n        return 1\n"
                "class Circle:\n    def area(self):\n        return 2\n"
            ),
            "pkg/use.py": (
                "from typing import Optional\n"
                "from pkg.shapes import Circle, Square\n\n"
                "def by_param(s: Square):\n    return s.area()\n"
                "def by_optional(c: Optional[Circle] = None):\n    return c.area()\n"
                "def by_string(c: 'Circle | None'):\n    return c.area()\n"
                "def by_variable():\n    s: Square = make()\n    return s.area()\n"
                "def untyped(x):\n    return x.area()\n"
            ),
        }
    )
    _, graph = index(root)
    assert calls_from(graph, "pkg/use.py::by_param") == {"pkg/shapes.py::Square.area"}
    assert calls_from(graph, "pkg/use.py::by_optional") == {"pkg/shapes.py::Circle.area"}
    assert calls_from(graph, "pkg/use.py::by_string") == {"pkg/shapes.py::Circle.area"}
    assert calls_from(graph, "pkg/use.py::by_variable") == {"pkg/shapes.py::Square.area"}
    # No evidence: both candidates kept as name matches, sharing the call's weight.
    assert calls_from(graph, "pkg/use.py::untyped") == set()
    matches = {
        (e.dst, e.weight)
        for e in graph.edges
        if e.kind == "name_match" and e.src == "pkg/use.py::untyped"
    }
    assert matches == {("pkg/shapes.py::Square.area", 0.5), ("pkg/shapes.py::Circle.area", 0.5)}


def test_constructor_assignment_and_self_attribute_bind(make_repo: Callable[..., Path]) -> None:
    root = make_repo(
        {
            "a.py": (
                "class Engine:\n    def start(self):\n        pass\n"
                "class Other:\n    def start(self):\n        pass\n"
                "def local():\n    e = Engine()\n    e.start()\n"
                "class Car:\n"
                "    def __init__(self):\n        self.engine = Engine()\n"
                "    def go(self):\n        self.engine.start()\n"
                "def conflicting(flag):\n"
                "    e = Engine()\n    if flag:\n        e = Other()\n    e.start()\n"
            )
        }
    )
    _, graph = index(root)
    assert calls_from(graph, "a.py::local") == {"a.py::Engine"} | {"a.py::Engine.start"}
    assert calls_from(graph, "a.py::Car.go") == {"a.py::Engine.start"}
    # Two classes assigned: the evidence disagrees, nothing is resolved.
    assert "a.py::Engine.start" not in calls_from(graph, "a.py::conflicting")
    assert "a.py::Other.start" not in calls_from(graph, "a.py::conflicting")


def test_builtin_receivers_and_builtin_names_never_bind(make_repo: Callable[..., Path]) -> None:
    root = make_repo(
        {
            "lib.py": (
                "class Box:\n"
                "    def get(self, k):\n        pass\n"
                "    def keys(self):\n        pass\n"
                "    def upper(self):\n        pass\n"
                "def open(path):\n    pass\n"
            ),
            "use.py": (
                "import os\n\n"
                "def f(d: dict, s: str, anything):\n"
                "    d.get(1)\n    s.upper()\n    {}.keys()\n"
                "    anything.get(2)\n    os.path.join('a')\n"
                "    open('x')\n"
            ),
        }
    )
    ws, graph = index(root)
    assert calls_from(graph, "use.py::f") == set()
    assert calls_from(graph, "use.py::f", "name_match") == set()
    assert ws.summary().unresolved["builtin"] >= 4


def test_imports_relative_aliases_reexports_and_stars(make_repo: Callable[..., Path]) -> None:
    root = make_repo(
        {
            "pkg/__init__.py": "from .core import Widget as Gadget\n__all__ = ['Gadget']\n",
            "pkg/core.py": "class Widget:\n    def spin(self):\n        pass\n\nAlias = Widget\n",
            "pkg/stars.py": "from pkg.core import *\n\ndef g():\n    w = Widget()\n    w.spin()\n",
            "pkg/rel.py": (
                "from . import core\nfrom .core import Alias\nimport pkg.core as c\n\n"
                "def h():\n    core.Widget()\n    Alias()\n    c.Widget()\n"
            ),
            "app.py": "import pkg\nfrom pkg import Gadget\n\ndef main():\n    Gadget()\n    pkg.Gadget()\n",
        }
    )
    _, graph = index(root)
    assert calls_from(graph, "pkg/stars.py::g") == {
        "pkg/core.py::Widget",
        "pkg/core.py::Widget.spin",
    }
    assert calls_from(graph, "pkg/rel.py::h") == {"pkg/core.py::Widget"}
    assert calls_from(graph, "app.py::main") == {"pkg/core.py::Widget"}


def test_src_layout_package_is_importable_by_its_name(make_repo: Callable[..., Path]) -> None:
    root = make_repo(
        {
            "src/tool/__init__.py": "from .api import get\n",
            "src/tool/api.py": "def get(url):\n    pass\n",
            "tests/test_api.py": "import tool\n\ndef test_get():\n    tool.get('x')\n",
        }
    )
    _, graph = index(root)
    assert calls_from(graph, "tests/test_api.py::test_get") == {"src/tool/api.py::get"}


def test_bare_call_of_a_builtin_is_not_a_project_function(make_repo: Callable[..., Path]) -> None:
    root = make_repo(
        {"a/files.py": "def open(p):\n    pass\n", "b/use.py": "def f():\n    open('x')\n"}
    )
    _, graph = index(root)
    assert not any(e.src == "b/use.py::f" for e in graph.edges)


def test_many_candidates_give_no_edge(make_repo: Callable[..., Path]) -> None:
    files = {f"m{i}.py": "class C:\n    def frob(self):\n        pass\n" for i in range(4)}
    files["use.py"] = "def f(x):\n    x.frob()\n"
    _, graph = index(make_repo(files))
    assert not any(e.src == "use.py::f" for e in graph.edges)


FROBS = {
    "near.py": "class A:\n    def frob(self):\n        pass\n",
    "pkg/side.py": "class S:\n    def frob(self):\n        pass\n",
    "far/x.py": "class B:\n    def frob(self):\n        pass\n",
}


def name_match_weights(make_repo: Callable[..., Path], use: str) -> dict[str, float]:
    _, graph = index(make_repo({**FROBS, "pkg/use.py": use}))
    return {e.dst: e.weight for e in graph.edges if e.kind == "name_match"}


def test_imported_candidate_is_more_plausible(make_repo: Callable[..., Path]) -> None:
    # Nothing imported: beside the caller counts twice what is elsewhere.
    assert name_match_weights(make_repo, "def f(x):\n    x.frob()\n") == {
        "near.py::A.frob": 0.25,
        "pkg/side.py::S.frob": 0.5,
        "far/x.py::B.frob": 0.25,
    }


def test_a_call_by_name_weighs_the_candidates_of_its_own_language_family(
    make_repo: Callable[..., Path],
) -> None:
    # The JavaScript caller resolves first (paths in order): what its name found there
    # is not what the Python caller's finds.
    root = make_repo(
        {
            "a/py_side.py": "def render():\n    pass\n",
            "b/js_side.js": "function render() {}\n",
            "c/use.js": "function show() { render(); }\n",
            "c/use.py": "def show():\n    render()\n",
        }
    )
    _, graph = index(root)
    assert calls_from(graph, "c/use.js::show", "name_match") == {"b/js_side.js::render"}
    assert calls_from(graph, "c/use.py::show", "name_match") == {"a/py_side.py::render"}


def test_an_imported_candidate_drops_those_neither_imported_nor_beside(
    make_repo: Callable[..., Path],
) -> None:
    weights = name_match_weights(make_repo, "import near\n\ndef f(x):\n    x.frob()\n")
    assert weights == {"near.py::A.frob": 4 / 6, "pkg/side.py::S.frob": 2 / 6}


def test_impact_tells_resolved_dependents_from_name_matches(
    make_repo: Callable[..., Path],
) -> None:
    root = make_repo(
        {
            "lib.py": "class Mat:\n    def col_insert(self, i):\n        pass\n",
            "other.py": "class Sparse:\n    def col_insert(self, i):\n        pass\n",
            "use.py": (
                "from lib import Mat\n\n"
                "def typed(m: Mat):\n    m.col_insert(1)\n"
                "def untyped(m):\n    m.col_insert(1)\n"
            ),
        }
    )
    _, graph = index(root)
    result = impact(graph, "Mat.col_insert", depth=1)
    edges = {i.node.id: i.edge for i in result.impacted}
    assert edges == {"use.py::typed": "resolved", "use.py::untyped": "name_match"}
    rows = {row["id"]: row["edge"] for row in result.to_json()["impacted"]}
    assert rows == edges


def test_go_receiver_and_typescript_constructor_bind(make_repo: Callable[..., Path]) -> None:
    root = make_repo(
        {
            "go/srv.go": (
                "package main\n\ntype Server struct{}\ntype Client struct{}\n\n"
                "func (s *Server) Start() {\n\ts.listen()\n}\n\n"
                "func (s *Server) listen() {}\n\nfunc (c *Client) listen() {}\n\n"
                "func main() {\n\tsrv := &Server{}\n\tsrv.Start()\n}\n"
            ),
            "web/a.ts": (
                "export class P { go(): void {} }\nexport class Q { go(): void {} }\n"
                "export function f(q: Q) { const p = new P(); p.go(); q.go(); }\n"
                "export function g(x: any) { x.go(); }\n"
            ),
        }
    )
    _, graph = index(root)
    assert calls_from(graph, "go/srv.go::Server.Start") == {"go/srv.go::Server.listen"}
    assert calls_from(graph, "go/srv.go::main") == {"go/srv.go::Server.Start"}
    assert calls_from(graph, "web/a.ts::f") == {"web/a.ts::P", "web/a.ts::P.go", "web/a.ts::Q.go"}
    assert calls_from(graph, "web/a.ts::g") == set()  # unknown receiver: name matches only
    assert calls_from(graph, "web/a.ts::g", "name_match") == {"web/a.ts::P.go", "web/a.ts::Q.go"}


def test_return_annotations_and_attribute_chains_bind(make_repo: Callable[..., Path]) -> None:
    root = make_repo(
        {
            "tool.py": (
                "class Matcher:\n    def fnmatch_lines(self, lines):\n        pass\n"
                "class Other:\n    def fnmatch_lines(self, lines):\n        pass\n"
                "class Result:\n    def __init__(self):\n        self.stdout = Matcher()\n"
                "class Runner:\n"
                "    def run(self) -> 'Result':\n        return Result()\n"
                "    def again(self) -> Self:\n        return self\n"
            ),
            "test_tool.py": (
                "from tool import Runner\n\n"
                "def test_it(runner: Runner):\n"
                "    result = runner.run()\n    result.stdout.fnmatch_lines([])\n"
                "    same = runner.again()\n    same.run()\n"
            ),
        }
    )
    _, graph = index(root)
    assert calls_from(graph, "test_tool.py::test_it") == {
        "tool.py::Runner.run",
        "tool.py::Runner.again",
        "tool.py::Matcher.fnmatch_lines",
    }
