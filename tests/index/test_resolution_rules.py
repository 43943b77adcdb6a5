"""The Python resolution rules beyond plain calls, one fixture each: properties,
decorators that keep the name, ``cls()`` in class methods, chained calls, re-exports
through ``__init__.py`` (``__all__``, ``from x import *``), module-level aliases and
relative imports."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from index_fixtures import index

from coderooms.focus.graph import CodeGraph
from coderooms.focus.impact import impact


def edges_from(graph: CodeGraph, src: str, *kinds: str) -> set[str]:
    wanted = kinds or ("calls",)
    return {e.dst for e in graph.edges if e.kind in wanted and e.src == src}


PROPERTY_CLASS = (
    "class Response:\n"
    "    @property\n    def text(self) -> 'Body':\n        return Body()\n"
    "    def show(self):\n        return self.text\n"
    "class Body:\n    def strip(self):\n        pass\n"
)


def test_a_property_read_is_a_reference_to_it(make_repo: Callable[..., Path]) -> None:
    root = make_repo(
        {
            "web.py": PROPERTY_CLASS,
            "use.py": (
                "from web import Response\n\n"
                "def read(r: Response):\n    return r.text\n"
                "def unknown(r):\n    return r.text\n"
            ),
        }
    )
    _, graph = index(root)
    assert edges_from(graph, "web.py::Response.show", "references") == {"web.py::Response.text"}
    assert edges_from(graph, "use.py::read", "references") == {
        "web.py::Response",  # the annotation
        "web.py::Response.text",
    }
    assert edges_from(graph, "use.py::unknown", "references", "calls", "name_match") == set()
    dependents = {i.node.id for i in impact(graph, "web.py::Response.text", depth=1).impacted}
    assert dependents == {"web.py::Response.show", "use.py::read"}


def test_a_property_types_the_chain_through_its_return_annotation(
    make_repo: Callable[..., Path],
) -> None:
    root = make_repo(
        {
            "web.py": PROPERTY_CLASS,
            "other.py": "class Text:\n    def strip(self):\n        pass\n",
            "use.py": (
                "from web import Response\n\n"
                "def clean(r: Response):\n    r.text.strip()\n"
                "class Wrapper(Response):\n    def clean(self):\n        self.text.strip()\n"
            ),
        }
    )
    _, graph = index(root)
    assert edges_from(graph, "use.py::clean") == {"web.py::Body.strip"}
    assert edges_from(graph, "use.py::Wrapper.clean") == {"web.py::Body.strip"}


def test_decorated_functions_stay_the_call_target(make_repo: Callable[..., Path]) -> None:
    root = make_repo(
        {
            "deco.py": (
                "import functools\n\n"
                "def logged(fn):\n"
                "    @functools.wraps(fn)\n"
                "    def wrapper(*args, **kwargs):\n        return fn(*args, **kwargs)\n"
                "    return wrapper\n\n"
                "@logged\ndef fetch(url):\n    pass\n\n"
                "@functools.lru_cache(maxsize=None)\ndef parse(text):\n    pass\n\n"
                "class Tool:\n"
                "    @staticmethod\n    def build(x):\n        pass\n"
                "    @classmethod\n    def load(cls, x):\n        pass\n"
                "    @functools.cached_property\n    def size(self) -> int:\n        return 1\n"
            ),
            "use.py": (
                "from deco import fetch, parse, Tool\n\n"
                "def main(tool: Tool):\n"
                "    fetch('x')\n    parse('y')\n    Tool.build(1)\n    Tool.load(2)\n"
                "    tool.build(3)\n    return tool.size\n"
            ),
        }
    )
    _, graph = index(root)
    assert edges_from(graph, "use.py::main") == {
        "deco.py::fetch",
        "deco.py::parse",
        "deco.py::Tool.build",
        "deco.py::Tool.load",
    }
    # The annotation names the class; the property read names the cached property.
    assert edges_from(graph, "use.py::main", "references") == {
        "deco.py::Tool",
        "deco.py::Tool.size",
    }


def test_cls_call_in_a_classmethod_is_an_instance_of_the_class(
    make_repo: Callable[..., Path],
) -> None:
    root = make_repo(
        {
            "model.py": (
                "class Foo:\n"
                "    @classmethod\n    def create(cls, n=0):\n        return cls()\n"
                "    def method(self):\n        pass\n"
                "    def chain(self):\n        return self\n"
                "    def nothing(self):\n        return\n"
                "class Bar:\n    def method(self):\n        pass\n"
            ),
            "use.py": (
                "from model import Foo\n\n"
                "def direct():\n    Foo.create().method()\n"
                "def through_a_variable():\n    made = Foo.create(3)\n    made.method()\n"
                "def fluent(f: Foo):\n    f.chain().method()\n"
            ),
        }
    )
    _, graph = index(root)
    assert edges_from(graph, "use.py::direct") == {"model.py::Foo.create", "model.py::Foo.method"}
    assert edges_from(graph, "use.py::through_a_variable") == {
        "model.py::Foo.create",
        "model.py::Foo.method",
    }
    assert edges_from(graph, "use.py::fluent") == {"model.py::Foo.chain", "model.py::Foo.method"}


def test_a_method_called_on_a_constructed_instance_binds(make_repo: Callable[..., Path]) -> None:
    root = make_repo(
        {
            "req.py": (
                "class Request:\n    def prepare(self):\n        pass\n"
                "class Prepared:\n    def prepare(self):\n        pass\n"
            ),
            "use.py": (
                "from req import Request\n\n"
                "def send(url):\n    return Request('GET', url,\n        data=(1, 2)).prepare()\n"
                "def unknown(make):\n    return make(1).prepare()\n"
            ),
        }
    )
    _, graph = index(root)
    assert edges_from(graph, "use.py::send") == {"req.py::Request", "req.py::Request.prepare"}
    assert edges_from(graph, "use.py::unknown") == set()  # unknown result: name only
    assert edges_from(graph, "use.py::unknown", "name_match") == {
        "req.py::Request.prepare",
        "req.py::Prepared.prepare",
    }


def test_all_limits_what_a_star_import_brings(make_repo: Callable[..., Path]) -> None:
    root = make_repo(
        {
            "lib/__init__.py": "from lib.shapes import *\nfrom lib import tools\n",
            "lib/shapes.py": (
                "__all__ = ['Circle']\n\n"
                "class Circle:\n    def area(self):\n        pass\n"
                "class Hidden:\n    pass\n"
            ),
            "lib/tools.py": "def measure():\n    pass\n",
            "app.py": (
                "from lib import *\nimport lib\n\n"
                "def main():\n    Circle().area()\n    lib.tools.measure()\n    Hidden()\n"
            ),
        }
    )
    _, graph = index(root)
    assert edges_from(graph, "app.py::main") == {
        "lib/shapes.py::Circle",
        "lib/shapes.py::Circle.area",
        "lib/tools.py::measure",
    }


def test_all_may_name_a_submodule_and_a_reexported_name(make_repo: Callable[..., Path]) -> None:
    root = make_repo(
        {
            "pkg/__init__.py": ("from .impl import run as start\n__all__ = ['start', 'helpers']\n"),
            "pkg/impl.py": "def run():\n    pass\n",
            "pkg/helpers.py": "def assist():\n    pass\n",
            "main.py": "from pkg import *\n\ndef go():\n    start()\n    helpers.assist()\n",
        }
    )
    _, graph = index(root)
    assert edges_from(graph, "main.py::go") == {"pkg/impl.py::run", "pkg/helpers.py::assist"}


def test_module_level_class_alias_binds_calls_and_methods(make_repo: Callable[..., Path]) -> None:
    root = make_repo(
        {
            "dense.py": "class MutableDense:\n    def col_insert(self, i):\n        pass\n",
            "matrices.py": "from dense import MutableDense\n\nMatrix = MutableDense\n",
            "sparse.py": "class Sparse:\n    def col_insert(self, i):\n        pass\n",
            "use.py": (
                "from matrices import Matrix\n\n"
                "def build():\n    m = Matrix()\n    m.col_insert(1)\n"
                "def typed(m: Matrix):\n    m.col_insert(2)\n"
            ),
        }
    )
    _, graph = index(root)
    assert edges_from(graph, "use.py::build") == {
        "dense.py::MutableDense",
        "dense.py::MutableDense.col_insert",
    }
    assert edges_from(graph, "use.py::typed") == {"dense.py::MutableDense.col_insert"}


def test_relative_imports_of_every_depth(make_repo: Callable[..., Path]) -> None:
    root = make_repo(
        {
            "top/__init__.py": "",
            "top/util.py": "def clean():\n    pass\n",
            "top/sub/__init__.py": "from .inner import work\n",
            "top/sub/inner.py": "def work():\n    pass\n",
            "top/sub/deep.py": (
                "from ..util import clean\nfrom .. import util\nfrom . import inner\n"
                "from . import work as job\n\n"
                "def run():\n    clean()\n    util.clean()\n    inner.work()\n    job()\n"
            ),
        }
    )
    _, graph = index(root)
    assert edges_from(graph, "top/sub/deep.py::run") == {
        "top/util.py::clean",
        "top/sub/inner.py::work",
    }


def test_a_local_variable_shadows_an_imported_name(make_repo: Callable[..., Path]) -> None:
    root = make_repo(
        {
            "api.py": "def patch(url):\n    pass\n",
            "check.py": (
                "from api import patch\n\n"
                "def versions(text):\n"
                "    major, minor, patch = text.split('.')\n"
                "    return (major, minor, patch)\n"
                "def uses():\n    return [patch]\n"
            ),
        }
    )
    _, graph = index(root)
    assert edges_from(graph, "check.py::versions", "references") == set()
    assert edges_from(graph, "check.py::uses", "references") == {"api.py::patch"}


def test_a_name_match_never_reaches_code_defined_inside_a_function(
    make_repo: Callable[..., Path],
) -> None:
    root = make_repo(
        {
            "transforms.py": (
                "def rewrite(expr):\n"
                "    def left(x):\n        return x\n"
                "    class cls:\n        pass\n"
                "    return left(expr), cls()\n"
            ),
            "pretty.py": "class Pict:\n    def left(self, *parts):\n        return self\n",
            "use.py": (
                "def show(p):\n    return p.left('x')\n\n"
                "class Domain:\n"
                "    @classmethod\n    def make(cls):\n        return cls()\n"
            ),
        }
    )
    _, graph = index(root)
    assert edges_from(graph, "use.py::show", "name_match") == {"pretty.py::Pict.left"}
    assert edges_from(graph, "use.py::Domain.make", "name_match", "calls") == set()
    # Inside its own function the nested definition is found by scope, resolved.
    assert edges_from(graph, "transforms.py::rewrite") == {
        "transforms.py::rewrite.left",
        "transforms.py::rewrite.cls",
    }
    assert impact(graph, "transforms.py::rewrite.left", depth=1).impacted[0].edge == "resolved"


def test_a_call_never_name_matches_a_property(make_repo: Callable[..., Path]) -> None:
    root = make_repo(
        {
            "sets.py": (
                "import functools\n\n"
                "class Interval:\n"
                "    @property\n    def left(self):\n        return 0\n"
                "    @functools.cached_property\n    def right(self):\n        return 1\n"
            ),
            "pretty.py": (
                "class Pict:\n"
                "    def left(self, *parts):\n        return self\n"
                "    def right(self, *parts):\n        return self\n"
            ),
            "use.py": (
                "from sets import Interval\n\n"
                "def show(p):\n    return p.left('x'), p.right('y')\n\n"
                "def bounds(i: Interval):\n    return i.left, i.right\n"
            ),
        }
    )
    _, graph = index(root)
    assert edges_from(graph, "use.py::show", "name_match") == {
        "pretty.py::Pict.left",
        "pretty.py::Pict.right",
    }
    assert edges_from(graph, "use.py::bounds", "references") == {
        "sets.py::Interval",
        "sets.py::Interval.left",
        "sets.py::Interval.right",
    }
    listed = impact(graph, "sets.py::Interval.left", depth=1).impacted
    assert [(i.node.id, i.edge) for i in listed] == [("use.py::bounds", "resolved")]


FIXTURES = {
    "src/plug/pytester.py": (
        "import pytest\n\n"
        "class Result:\n    def fnmatch_lines(self, lines):\n        pass\n"
        "class Pytester:\n    def runpytest(self) -> Result:\n        return Result()\n"
        "@pytest.fixture\ndef pytester() -> Pytester:\n    return Pytester()\n"
    ),
    "src/plug/logs.py": (
        "from collections.abc import Iterator\nfrom pytest import fixture\n\n"
        "class Capture:\n    def clear(self):\n        pass\n"
        "@fixture(scope='function')\ndef caplog() -> Iterator[Capture]:\n    yield Capture()\n"
    ),
    "src/other.py": "class Other:\n    def clear(self):\n        pass\n",
    "tests/conftest.py": (
        "import pytest\n\n@pytest.fixture\ndef sample(pytester):\n    return pytester\n"
    ),
    "tests/deep/conftest.py": "import pytest\n\n@pytest.fixture\ndef sample():\n    return 2\n",
    "tests/deep/test_it.py": (
        "def test_run(pytester, caplog, sample):\n"
        "    pytester.runpytest().fnmatch_lines(['*'])\n    caplog.clear()\n\n"
        "def helper(pytester):\n    pytester.runpytest()\n"
    ),
}


def test_a_fixture_parameter_references_the_nearest_fixture_and_types_its_receiver(
    make_repo: Callable[..., Path],
) -> None:
    _, graph = index(make_repo(FIXTURES))
    test = "tests/deep/test_it.py::test_run"
    assert edges_from(graph, test, "references") == {
        "src/plug/pytester.py::pytester",
        "src/plug/logs.py::caplog",
        "tests/deep/conftest.py::sample",  # the nearest conftest's, not tests/conftest.py's
    }
    assert edges_from(graph, test) == {
        "src/plug/pytester.py::Pytester.runpytest",
        "src/plug/pytester.py::Result.fnmatch_lines",
        "src/plug/logs.py::Capture.clear",  # what the generator fixture yields
    }
    # A fixture's own parameters are fixtures too; a plain helper's are not.
    assert edges_from(graph, "tests/conftest.py::sample", "references") == {
        "src/plug/pytester.py::pytester"
    }
    assert edges_from(graph, "tests/deep/test_it.py::helper", "calls", "references") == set()
    dependents = impact(graph, "tests/deep/conftest.py::sample", depth=1).impacted
    assert [(i.node.id, i.edge) for i in dependents] == [(test, "resolved")]


def test_a_call_on_a_union_names_each_members_method_and_nothing_else(
    make_repo: Callable[..., Path],
) -> None:
    root = make_repo(
        {
            "reprs.py": (
                "from typing import Union\n\n"
                "class Base:\n    def toterminal(self, tw):\n        pass\n"
                "class Single(Base):\n    pass\n"
                "class Chain:\n    def toterminal(self, tw):\n        pass\n"
                "class Other:\n    def toterminal(self, tw):\n        pass\n"
                "class Info:\n"
                "    def getrepr(self) -> Single | Chain:\n        return Single()\n"
                "    def one(self) -> Union[Single, None]:\n        return None\n"
            ),
            "use.py": (
                "from reprs import Info\n\n"
                "def show(info: Info, tw):\n"
                "    r = info.getrepr()\n    r.toterminal(tw)\n    info.one().toterminal(tw)\n"
            ),
        }
    )
    _, graph = index(root)
    assert edges_from(graph, "use.py::show", "name_match") == {
        "reprs.py::Base.toterminal",  # Single inherits it
        "reprs.py::Chain.toterminal",
    }
    assert edges_from(graph, "use.py::show") == {
        "reprs.py::Info.getrepr",
        "reprs.py::Info.one",
        "reprs.py::Base.toterminal",  # Optional of one class: that class
    }


def test_a_call_on_an_unknown_receiver_name_matches_only_methods(
    make_repo: Callable[..., Path],
) -> None:
    root = make_repo(
        {
            "euclid.py": "def discriminant(f):\n    return f\n",
            "compat.py": "class Polys:\n    def discriminant(self, f):\n        return f\n",
            "use.py": (
                "from euclid import discriminant\n\n"
                "def check(ring, f):\n    return ring.discriminant(f), discriminant(f)\n"
            ),
        }
    )
    _, graph = index(root)
    assert edges_from(graph, "use.py::check", "name_match") == {"compat.py::Polys.discriminant"}
    assert edges_from(graph, "use.py::check") == {"euclid.py::discriminant"}


def test_a_name_common_among_functions_gets_no_method_candidates(
    make_repo: Callable[..., Path],
) -> None:
    hooks = "def report(x):\n    pass\n"
    root = make_repo(
        {
            "spec.py": hooks,
            "a.py": hooks,
            "b.py": hooks,
            "terminal.py": "class Reporter:\n    def report(self, x):\n        pass\n",
            "use.py": "def run(hook, x):\n    hook.report(x)\n",
        }
    )
    _, graph = index(root)
    assert edges_from(graph, "use.py::run", "name_match", "calls") == set()


CONTEXT_MANAGERS = (
    "import contextlib\n"
    "from typing import Iterator\n\n"
    "class Info:\n    def getrepr(self) -> 'Report':\n        return Report()\n"
    "class Report:\n    def render(self):\n        pass\n"
    "class Other:\n    def render(self):\n        pass\n"
    "class Third:\n    def render(self):\n        pass\n"
    "class Fourth:\n    def render(self):\n        pass\n"
    "class Raises:\n    def __enter__(self) -> Info:\n        return Info()\n"
    "class Chained(Raises):\n    pass\n"
    "class Session:\n    async def __aenter__(self) -> Report:\n        return Report()\n"
    "def raises(kind) -> Raises:\n    return Raises()\n\n"
    "@contextlib.contextmanager\n"
    "def reporting() -> Iterator[Report]:\n    yield Report()\n"
)


def test_a_with_target_is_what_the_managers_enter_method_returns(
    make_repo: Callable[..., Path],
) -> None:
    root = make_repo(
        {
            "ctx.py": CONTEXT_MANAGERS,
            "use.py": (
                "import ctx\nfrom ctx import Chained, Session, reporting\n\n"
                "def through_a_factory():\n"
                "    with ctx.raises(ValueError) as info:\n        info.getrepr().render()\n"
                "def through_a_base():\n"
                "    with Chained() as info:\n        info.getrepr()\n"
                "def through_a_generator():\n"
                "    with reporting() as report:\n        report.render()\n"
                "async def asynchronously(session: Session):\n"
                "    async with session as report:\n        report.render()\n"
                "def a_builtin_manager(path):\n"
                "    with open(path) as fh:\n        fh.render()\n"
            ),
        }
    )
    _, graph = index(root)
    info, report = "ctx.py::Info.getrepr", "ctx.py::Report.render"
    assert edges_from(graph, "use.py::through_a_factory") == {"ctx.py::raises", info, report}
    assert edges_from(graph, "use.py::through_a_base") == {"ctx.py::Chained", info}
    assert edges_from(graph, "use.py::through_a_generator") == {"ctx.py::reporting", report}
    assert edges_from(graph, "use.py::asynchronously") == {report}
    assert edges_from(graph, "use.py::a_builtin_manager", "calls", "name_match") == set()


def test_a_caught_exception_is_an_instance_of_its_class(make_repo: Callable[..., Path]) -> None:
    root = make_repo(
        {
            "errors.py": (
                "class Failed(Exception):\n    def explain(self):\n        pass\n"
                "class Other:\n    def explain(self):\n        pass\n"
            ),
            "use.py": (
                "import errors\n\n"
                "def run(job):\n"
                "    try:\n        job()\n"
                "    except errors.Failed as failure:\n        failure.explain()\n"
            ),
        }
    )
    _, graph = index(root)
    assert edges_from(graph, "use.py::run", "calls", "name_match") == {"errors.py::Failed.explain"}


def test_a_return_annotation_past_the_signatures_bound_still_types_the_result(
    make_repo: Callable[..., Path],
) -> None:
    params = ", ".join(f"option_{i}: bool = False" for i in range(12))
    root = make_repo(
        {
            "report.py": (
                "class Report:\n    def render(self):\n        pass\n"
                "class Other:\n    def render(self):\n        pass\n"
                f"def long_report(\n    {params},\n) -> Report:\n    return make()\n"
                "def commented() -> Report:  # made elsewhere\n    return make()\n"
            ),
            "use.py": (
                "from report import commented, long_report\n\n"
                "def show():\n    long_report().render()\n"
                "def show_commented():\n    made = commented()\n    made.render()\n"
            ),
        }
    )
    _, graph = index(root)
    assert graph.node("report.py::long_report").signature.endswith("…")  # cut at its bound
    render = "report.py::Report.render"
    assert edges_from(graph, "use.py::show") == {"report.py::long_report", render}
    assert edges_from(graph, "use.py::show_commented") == {"report.py::commented", render}


def test_an_inherited_constructor_method_makes_the_class_it_is_called_on(
    make_repo: Callable[..., Path],
) -> None:
    # Square.build() runs Shape.build, whose cls() is a Square: the call chained on it
    # reaches Square.compute, not the base's (the QA report's impact listed the base's).
    root = make_repo(
        {
            "shapes.py": (
                "from typing import Self\n\n"
                "class Shape:\n"
                "    @classmethod\n    def build(cls, n):\n        return cls(n)\n"
                "    @classmethod\n    def make(cls, n) -> Self:\n        return cls(n)\n"
                "    def again(self):\n        return self\n"
                "    def compute(self):\n        return 0\n"
                "class Square(Shape):\n    def compute(self):\n        return 1\n\n"
                "def built():\n    return Square.build(3).compute()\n"
                "def made():\n    return Square.make(3).compute()\n"
                "def cloned(s: Square):\n    return s.again().compute()\n"
                "def base():\n    return Shape.build(3).compute()\n"
            ),
        }
    )
    _, graph = index(root)
    for caller in ("built", "made", "cloned"):
        assert edges_from(graph, f"shapes.py::{caller}") >= {"shapes.py::Square.compute"}
        assert "shapes.py::Shape.compute" not in edges_from(graph, f"shapes.py::{caller}")
    assert "shapes.py::Shape.compute" in edges_from(graph, "shapes.py::base")


def test_a_module_attribute_bound_under_another_name_is_followed(
    make_repo: Callable[..., Path],
) -> None:
    # pkg.do_work() and impl.run() reach work(), though no symbol is called do_work or run
    root = make_repo(
        {
            "pkg/__init__.py": "from .impl import work as do_work\n",
            "pkg/impl.py": "def work():\n    return 1\n\nrun = work\n",
            "use.py": (
                "import pkg\nimport pkg.impl as impl\n\n"
                "def via_reexport():\n    return pkg.do_work()\n"
                "def via_alias():\n    return impl.run()\n"
                "def via_reference():\n    return pkg.do_work\n"
            ),
        }
    )
    _, graph = index(root)
    assert edges_from(graph, "use.py::via_reexport") == {"pkg/impl.py::work"}
    assert edges_from(graph, "use.py::via_alias") == {"pkg/impl.py::work"}
    assert "pkg/impl.py::work" in edges_from(graph, "use.py::via_reference", "references")
    dependents = {i.node.id for i in impact(graph, "pkg/impl.py::work", depth=1).impacted}
    assert {"use.py::via_reexport", "use.py::via_alias"} <= dependents
