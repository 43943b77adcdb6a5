"""Impact through constructors, and how impact targets resolve (or are refused)."""

from __future__ import annotations

from pathlib import Path

import pytest
from fixture_repo import build_graph

from coderooms.errors import CoderoomsError
from coderooms.focus.errors import (
    AbsolutePathTarget,
    AmbiguousTarget,
    DirectoryTarget,
    TargetTooLong,
    UnknownTarget,
)
from coderooms.focus.graph import CodeEdge, CodeGraph, CodeNode
from coderooms.focus.impact import MAX_TARGET_CHARS, impact, resolve_target
from coderooms.workspace import Workspace

WIDGETS = {
    "pkg/__init__.py": "",
    "pkg/a.py": (
        "def helper(x):\n    return x\n\n\n"
        "class Widget:\n    def __init__(self, x):\n        self.x = helper(x)\n"
    ),
    "pkg/b.py": "from pkg.a import Widget\n\n\ndef make(x):\n    return Widget(x)\n",
    "pkg/c.py": "from pkg.b import make\n\n\ndef run():\n    return make(1)\n",
}


def indexed(root: Path, files: dict[str, str]) -> CodeGraph:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    ws = Workspace.open(root)
    try:
        ws.index(workers=1)
        return ws.graph()
    finally:
        ws.close()


def listed(graph: CodeGraph, target: str, depth: int) -> list[tuple[int, str, str]]:
    return [
        (i.distance, i.node.id, f"{i.via} {i.reached_from}")
        for i in impact(graph, target, depth).impacted
    ]


# --- constructors ---------------------------------------------------------------------


def test_impact_goes_on_from_a_constructor_to_whoever_calls_its_class(tmp_path: Path) -> None:
    graph = indexed(tmp_path, WIDGETS)
    assert listed(graph, "helper", 6) == [
        (1, "pkg/a.py::Widget.__init__", "calls pkg/a.py::helper"),
        (2, "pkg/b.py::make", "calls pkg/a.py::Widget"),
        (3, "pkg/c.py::run", "calls pkg/b.py::make"),
    ]
    shallow = impact(graph, "helper", 2)
    assert [i.node.id for i in shallow.impacted][-1] == "pkg/b.py::make"
    assert ("pkg/c.py::run", "beyond_depth") in shallow.ignored
    # A constructor as the target stands for its class too.
    assert listed(graph, "Widget.__init__", 1) == [(1, "pkg/b.py::make", "calls pkg/a.py::Widget")]


def test_new_and_post_init_are_constructors_but_other_methods_are_not() -> None:
    sources = {
        "m.py": (
            "def helper():\n    pass\n\n\nclass A:\n    def __new__(cls):\n        pass\n\n"
            "    def other(self):\n        pass\n\n\nclass B:\n"
            "    def __post_init__(self):\n        pass\n\n\n"
            "def use_a():\n    pass\n\n\ndef use_b():\n    pass\n"
        )
    }
    calls = (
        ("m.py::A.__new__", "m.py::helper"),
        ("m.py::A.other", "m.py::helper"),
        ("m.py::B.__post_init__", "m.py::helper"),
        ("m.py::use_a", "m.py::A"),
        ("m.py::use_b", "m.py::B"),
    )
    graph = build_graph(sources, calls=calls)
    assert {i.node.id for i in impact(graph, "helper", 2).impacted} == {
        "m.py::A.__new__",
        "m.py::A.other",
        "m.py::B.__post_init__",
        "m.py::use_a",
        "m.py::use_b",
    }
    # A plain method leads nowhere further: nobody depends on it, whoever calls A.
    assert listed(graph, "A.other", 3) == []


def _node(node_id: str, kind: str, language: str, parent: str | None) -> CodeNode:
    path, _, qual = node_id.partition("::")
    name = qual.rsplit(".", 1)[-1] if qual else path
    return CodeNode(node_id, kind, path, name, qual or path, language, 1, 1, parent=parent)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("language", "path", "ctor"),
    [
        ("javascript", "a.js", "constructor"),
        ("typescript", "a.ts", "constructor"),
        ("java", "A.java", "Gadget"),
    ],
)
def test_js_ts_and_java_constructors_lead_to_their_class(
    language: str, path: str, ctor: str
) -> None:
    nodes = (
        _node(path, "file", language, None),
        _node(f"{path}::help", "function", language, path),
        _node(f"{path}::Gadget", "class", language, path),
        _node(f"{path}::Gadget.{ctor}", "method", language, f"{path}::Gadget"),
        _node(f"{path}::build", "function", language, path),
    )
    edges = (
        CodeEdge(f"{path}::Gadget.{ctor}", f"{path}::help", "calls"),
        CodeEdge(f"{path}::build", f"{path}::Gadget", "calls"),
    )
    graph = CodeGraph(nodes, edges)
    assert listed(graph, "help", 2) == [
        (1, f"{path}::Gadget.{ctor}", f"calls {path}::help"),
        (2, f"{path}::build", f"calls {path}::Gadget"),
    ]


# --- names ----------------------------------------------------------------------------

SETUPS = {
    "conf.py": "def setup(app):\n    pass\n",
    "t.py": (
        "class TestA:\n    def setup(self):\n        pass\n\n\n"
        "class TestB:\n    def setup(self):\n        pass\n"
    ),
}


def test_impact_of_a_name_several_symbols_carry_lists_them_most_depended_on_first() -> None:
    graph = build_graph(
        {
            **SETUPS,
            "use.py": "def one(b):\n    b.setup()\n\n\ndef two(b):\n    b.setup()\n",
        },
        calls=(("use.py::one", "t.py::TestB.setup"), ("use.py::two", "t.py::TestB.setup")),
    )
    result = impact(graph, "setup", depth=3)
    assert result.target is None and result.impacted == () and result.ignored == ()
    assert [(c.node.id, c.dependents) for c in result.candidates] == [
        ("t.py::TestB.setup", 2),
        ("conf.py::setup", 0),
        ("t.py::TestA.setup", 0),
    ]
    data = result.to_json()
    assert data["target"] is None and data["asked"] == "setup" and data["depth"] == 3
    assert data["candidates"][0] == {
        "id": "t.py::TestB.setup",
        "path": "t.py",
        "kind": "method",
        "name": "setup",
        "qualname": "TestB.setup",
        "start_line": 7,
        "end_line": 8,
        "dependents": 2,
    }
    # A target naming one symbol has no candidates, and says what was asked.
    one = impact(graph, "TestB.setup", depth=1).to_json()
    assert one["target"] == "t.py::TestB.setup" and one["asked"] == "TestB.setup"
    assert one["candidates"] == []


def test_candidates_past_the_bound_are_counted_in_the_ignored_tail() -> None:
    from coderooms.focus.impact import MAX_IMPACT_CANDIDATES

    count = MAX_IMPACT_CANDIDATES + 3
    text = "".join(f"class T{i:02}:\n    def go(self):\n        pass\n\n\n" for i in range(count))
    result = impact(build_graph({"t.py": text}), "go", depth=1)
    assert len(result.candidates) == MAX_IMPACT_CANDIDATES
    assert [why for _, why in result.ignored] == ["over_limit"] * 3
    assert result.ignored[-1][0] == f"t.py::T{count - 1:02}.go"


def test_a_plain_name_of_one_top_level_and_several_nested_symbols_is_ambiguous() -> None:
    graph = build_graph(SETUPS)
    with pytest.raises(AmbiguousTarget) as err:
        resolve_target(graph, "setup")
    message = str(err.value)
    assert "\n" not in message
    assert "conf.py::setup, t.py::TestA.setup, t.py::TestB.setup" in message
    # Qualified names and ids still name one symbol each.
    assert resolve_target(graph, "TestA.setup").id == "t.py::TestA.setup"
    assert resolve_target(graph, "conf.py::setup").id == "conf.py::setup"
    assert resolve_target(graph, "conf.py:setup").id == "conf.py::setup"


def test_an_ambiguous_name_shows_a_few_candidates_and_counts_the_rest() -> None:
    text = "".join(f"class T{i}:\n    def go(self):\n        pass\n\n\n" for i in range(9))
    with pytest.raises(AmbiguousTarget) as err:
        resolve_target(build_graph({"t.py": text}), "go")
    assert str(err.value).count("t.py::") == 5
    assert "and 4 more" in str(err.value)


# --- paths ----------------------------------------------------------------------------

FILES = {
    "src/x.py": "def f():\n    pass\n",
    "src/sub/y.py": "def g():\n    pass\n",
    "top.py": "def h():\n    pass\n",
}


@pytest.mark.parametrize(
    ("typed", "wanted"),
    [
        ("./src/x.py", "src/x.py"),
        ("src/x.py/", "src/x.py"),
        ("././src//x.py", "src/x.py"),
        ("./top.py", "top.py"),
        ("  src/x.py  ", "src/x.py"),
        ("./src/x.py::f", "src/x.py::f"),
    ],
)
def test_ordinary_path_forms_resolve(typed: str, wanted: str) -> None:
    assert resolve_target(build_graph(FILES), typed).id == wanted


@pytest.mark.parametrize("typed", ["src", "src/", "./src/sub", "./", "."])
def test_a_directory_is_refused_with_a_typed_error_naming_a_file_in_it(typed: str) -> None:
    with pytest.raises(DirectoryTarget) as err:
        resolve_target(build_graph(FILES), typed)
    assert isinstance(err.value, CoderoomsError)
    message = str(err.value)
    assert "directory" in message and "\n" not in message
    assert "src/" in message or "top.py" in message


def test_an_absolute_path_is_left_to_the_caller_with_a_typed_error() -> None:
    # The graph does not know the repository root, so it cannot make the path relative.
    with pytest.raises(AbsolutePathTarget) as err:
        resolve_target(build_graph(FILES), "/home/someone/repo/src/x.py")
    assert "relative to the repository root" in str(err.value)


def test_names_that_match_nothing_are_still_unknown() -> None:
    graph = build_graph(FILES)
    for typed in ("nothing", "src/nothing.py", "Nothing.here", "src/x.py::nothing", ""):
        with pytest.raises(UnknownTarget) as err:
            resolve_target(graph, typed)
        assert type(err.value) is UnknownTarget


# --- length ---------------------------------------------------------------------------


def test_an_overlong_target_is_refused_without_being_echoed() -> None:
    graph = build_graph(FILES)
    for typed in ("x" * 100_000, "src/" * 300, "a\n" * 1_000):
        with pytest.raises(TargetTooLong) as err:
            impact(graph, typed)
        message = str(err.value)
        assert isinstance(err.value, CoderoomsError)
        assert len(message) < 250 and "\n" not in message
        assert str(len(typed)) in message and str(MAX_TARGET_CHARS) in message
    # At the limit a target is still looked up.
    with pytest.raises(UnknownTarget):
        resolve_target(graph, "y" * MAX_TARGET_CHARS)


def test_the_bound_cuts_name_matches_before_resolved_dependents() -> None:
    from coderooms.focus.impact import MAX_IMPACT_NODES

    # Name matches sort first by id; resolved callers past the bound's count follow.
    matched = [f"a.py::m{i:03}" for i in range(MAX_IMPACT_NODES)]
    resolved = [f"b.py::r{i:03}" for i in range(5)]
    both = "a.py::m000"  # a name match and a resolved call: listed as resolved
    nodes = [_node("a.py", "file", "python", None), _node("b.py", "file", "python", None)]
    nodes += [_node(i, "function", "python", i.partition("::")[0]) for i in matched + resolved]
    nodes.append(_node("c.py::target", "function", "python", None))
    edges = [CodeEdge(i, "c.py::target", "name_match") for i in matched]
    edges += [CodeEdge(i, "c.py::target", "calls") for i in [*resolved, both]]
    result = impact(CodeGraph(tuple(nodes), tuple(edges)), "c.py::target", depth=1)
    kinds = {i.node.id: i.edge for i in result.impacted}
    assert len(kinds) == MAX_IMPACT_NODES
    assert all(kinds[i] == "resolved" for i in [*resolved, both])
    cut = [f"a.py::m{i:03}" for i in range(MAX_IMPACT_NODES - 5, MAX_IMPACT_NODES)]
    assert list(result.ignored) == [(i, "over_limit") for i in cut]
