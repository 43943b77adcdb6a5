"""The shortcuts extraction and resolution take give exactly what the long way gives:
owners by bisection, docstrings read from the text, long texts put on one line by their
head, facts in a fixed order, and resolutions shared between the owners of one file."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import example, given, settings
from hypothesis import strategies as st
from test_cli import cli
from tree_sitter import QueryCursor

from coderooms.index import indexer
from coderooms.index.errors import UnreadableFacts
from coderooms.index.extract import python
from coderooms.index.extract.common import HEAD_READ_FACTOR, DefSite, Owners, node_text, one_line
from coderooms.workspace import Workspace

# --- owners ------------------------------------------------------------------------


@st.composite
def nested_spans(draw: st.DrawFn) -> list[tuple[int, int, str]]:
    """Spans that nest like definitions do: children inside their parent, siblings
    apart; a child may share its parent's start or end, never both."""
    spans: list[tuple[int, int, str]] = []

    def fill(start: int, end: int, depth: int) -> None:
        cursor = start
        for _ in range(draw(st.integers(0, 3)) if depth < 4 else 0):
            if cursor >= end:
                break
            a = draw(st.integers(cursor, end - 1))
            b = draw(st.integers(a + 1, end))
            if (a, b) == (start, end):
                continue
            spans.append((a, b, f"s{len(spans)}"))
            fill(a, b, depth + 1)
            cursor = b
        return None

    fill(0, draw(st.integers(1, 60)), 0)
    spans.sort(key=lambda s: (s[0], -s[1]))
    return spans


def innermost(spans: list[tuple[int, int, str]], pos: int) -> str:
    around = [s for s in spans if s[0] <= pos < s[1]]
    if not around:
        return "file"
    return min(around, key=lambda s: (-s[0], s[1]))[2]


@settings(max_examples=200, deadline=None)
@given(nested_spans(), st.data())
def test_owners_are_the_innermost_span_around(
    spans: list[tuple[int, int, str]], data: st.DataObject
) -> None:
    owners = Owners("file", spans)
    positions = data.draw(st.lists(st.integers(-2, 64), max_size=30))
    assert owners.of(positions) == [innermost(spans, p) for p in positions]
    for p in positions:
        assert owners.at(p) == innermost(spans, p)


# --- docstrings --------------------------------------------------------------------

PREFIXES = ["", "r", "R", "b", "B", "u", "U", "rb", "Br", "f", "F", "rf", "fR"]
QUOTES = ['"', "'", '"""', "'''"]
CONTENT = st.lists(st.sampled_from(list("ab é\\\"'\n{}#\t") + ["x" * 20]), max_size=30).map("".join)
TRAILERS = ["", "  # note", "\r", " ;x = 1", " + 'y'", " 'z'", ".strip()", ")", "\\\n    'w'"]


@st.composite
def function_source(draw: st.DrawFn) -> bytes:
    prefix = draw(st.sampled_from(PREFIXES))
    quote = draw(st.sampled_from(QUOTES))
    content = draw(CONTENT)
    trailer = draw(st.sampled_from(TRAILERS))
    same_line = draw(st.booleans())
    head = "def f():" + (" " if same_line else "\n    ")
    rest = draw(st.sampled_from(["", "\n    return 1", "\n\n\nclass C:\n    'c doc'\n"]))
    return (head + prefix + quote + content + quote + trailer + rest + "\n").encode()


@settings(max_examples=400, deadline=None)
@given(function_source())
@example(b"def f():\n    'a'\n\\'.strip()\n")  # a stray continuation after the string
def test_docstrings_read_from_the_text_equal_the_tree(source: bytes) -> None:
    tree = python.parser().parse(source)
    caps = QueryCursor(python.query()).captures(tree.root_node)
    for node in caps.get("def.function", []) + caps.get("def.class", []):
        body = node.child_by_field_name("body")
        name = node.child_by_field_name("name")
        site = DefSite(
            node,
            "function",
            node_text(source, name) if name else "",
            signature_end=body.start_byte if body else -1,
        )
        assert python._docstring(source, site) == python.docstring_from_tree(source, node)


# --- one line ---------------------------------------------------------------------


def one_line_the_long_way(text: str, limit: int) -> str:
    collapsed = " ".join(text.split())
    return collapsed if len(collapsed) <= limit else collapsed[: limit - 1] + "…"


# Words and whitespace runs of every kind str.split knows, long enough to pass the head.
SPACED = st.lists(
    st.sampled_from(["w", "word", "é", " ", "  ", "\n", "\t\t", "\r\n", "\u2028", "\xa0", "\x1c"]),
    max_size=120,
).map("".join)


@settings(max_examples=500, deadline=None)
@given(SPACED, st.integers(1, 12))
@example(" " * (HEAD_READ_FACTOR * 3) + "a b c d", 3)  # a head of whitespace alone
@example("ab" * (HEAD_READ_FACTOR * 3 // 2) + " c", 3)  # the head cut inside a word
@example("a " * (HEAD_READ_FACTOR * 2) + "b", 4)  # past the limit by the last word only
def test_a_long_text_on_one_line_by_its_head_equals_the_whole(text: str, limit: int) -> None:
    assert one_line(text, limit) == one_line_the_long_way(text, limit)


def test_plain_docstrings_skip_the_tree_and_others_still_read() -> None:
    source = (
        b'def a():\n    """Plain text."""\n'
        b"def b():\n    r'raw \\d'\n"
        b'def c():\n    f"""{x} formatted"""\n'
        b'def d():\n    "one" "two"\n'
        b"def e():\n    # a comment first\n    'still the docstring'\n"
    )
    tree = python.parser().parse(source)
    caps = QueryCursor(python.query()).captures(tree.root_node)
    got = {}
    for node in sorted(caps["def.function"], key=lambda n: n.start_byte):
        body = node.child_by_field_name("body")
        assert body is not None
        site = DefSite(node, "function", "", signature_end=body.start_byte)
        got[node_text(source, node.child_by_field_name("name"))] = python._docstring(source, site)
    assert got == {
        "a": "Plain text.",
        "b": "raw \\d",
        "c": "formatted",  # the tree's text parts around the interpolation
        "d": "",
        "e": "still the docstring",
    }


# --- facts in a fixed order ------------------------------------------------------------

ORDER_PROBE = """
import sys

from facts_probe import process_file

facts = process_file(sys.argv[1], "m.py")
print(facts.encoded)
print(facts.uses)
"""


def test_facts_come_out_the_same_under_any_hash_seed(tmp_path: Path) -> None:
    """Capture lists come in an order that changes between processes: the stored facts
    must not (an index built twice would otherwise differ)."""
    body = "\n".join(
        f"def f{i}(a):\n    g{i % 3}(a, x{i})\n    obj.m{i % 4}(a)\n    return mod.v{i}, b{i}\n"
        for i in range(12)
    )
    (tmp_path / "m.py").write_text(body)
    (tmp_path / "facts_probe.py").write_text("from coderooms.index.extract import process_file\n")
    outputs = set()
    for seed in ("1", "2", "3"):
        done = subprocess.run(
            [sys.executable, "-c", ORDER_PROBE, str(tmp_path)],
            cwd=tmp_path,
            env={"PYTHONHASHSEED": seed, "PATH": "/usr/bin:/bin"},
            capture_output=True,
            text=True,
            check=True,
        )
        outputs.add(done.stdout)
    assert len(outputs) == 1
    encoded = json.loads(outputs.pop().splitlines()[0])
    assert len(encoded["c"]) == 24 and len(encoded["r"]) >= 24


# --- resolution shared between owners ----------------------------------------------------

SHADOWS = {
    "m.py": (
        "def helper():\n    return 0\n\n\n"
        "def f():\n    def helper():\n        return 1\n\n    helper()\n\n\n"
        "def g():\n    helper()\n\n\n"
        "def h():\n    def helper():\n        return 2\n\n    return [helper]\n\n\n"
        "def k():\n    return [helper]\n\n\n"
        "class A:\n    def run(self):\n        self.go()\n\n    def go(self):\n        pass\n\n\n"
        "class B(A):\n    def run(self):\n        self.go()\n        super().run()\n\n"
        "    def go(self):\n        pass\n"
    )
}


def test_one_name_resolves_per_owner_where_scopes_differ(
    make_repo: Callable[..., Path],
) -> None:
    root = make_repo(SHADOWS)
    ws = Workspace.open(root)
    ws.index(workers=1)
    conn = sqlite3.connect(root / ".coderooms" / "index.db")
    edges = set(conn.execute("SELECT src, dst, kind FROM edges WHERE kind != 'contains'"))
    conn.close()
    assert ("m.py::f", "m.py::f.helper", "calls") in edges
    assert ("m.py::g", "m.py::helper", "calls") in edges
    assert ("m.py::h", "m.py::h.helper", "references") in edges
    assert ("m.py::k", "m.py::helper", "references") in edges
    assert ("m.py::A.run", "m.py::A.go", "calls") in edges
    assert ("m.py::B.run", "m.py::B.go", "calls") in edges
    assert ("m.py::B.run", "m.py::A.run", "calls") in edges
    assert ("m.py::A.run", "m.py::B.go", "calls") not in edges


# --- stored facts that do not decode -------------------------------------------------------

USES = {
    "a.py": "from b import beta\n\n\ndef alpha():\n    return beta()\n",
    "b.py": "def beta():\n    return 1\n",
}


def test_stored_facts_that_do_not_decode_are_a_typed_one_line_error(
    make_repo: Callable[..., Path],
) -> None:
    root = make_repo(USES)
    Workspace.open(root).index(workers=1)
    conn = sqlite3.connect(root / ".coderooms" / "index.db")
    conn.execute("UPDATE files SET facts = '{\"c\": [' WHERE path = 'a.py'")
    conn.commit()
    conn.close()
    # A change to b.py's names sends a.py, which uses them, back to resolution.
    (root / "b.py").write_text("def beta():\n    return 1\n\n\ndef gamma():\n    return 2\n")
    (root / "b.py").write_text("def gamma():\n    return 2\n")
    with pytest.raises(UnreadableFacts) as err:
        Workspace.open(root).index(workers=1)
    assert err.value.path == "a.py"
    result = CliRunner().invoke(cli(), ["index", str(root)])
    assert result.exit_code == 1
    phases = (indexer.PARSE_PHASE, indexer.RESOLVE_PHASE)
    shown = [line for line in result.output.splitlines() if not line.startswith(phases)]
    assert len(shown) == 1  # progress aside, one line
    assert shown[0].startswith("error: the index database holds unreadable facts for a.py")
