"""Small code graphs built by hand from Python sources, for the focus tests."""

from __future__ import annotations

import ast
import dataclasses
import hashlib
from collections.abc import Mapping
from typing import Any

import numpy as np

from coderooms.focus.graph import CodeEdge, CodeGraph, CodeNode
from coderooms.focus.lexical import DocumentCounts
from coderooms.focus.runtime import FocusEngine
from coderooms.focus.salience import BuiltIndex


def count_words(text: str) -> int:
    """A deterministic stand-in token counter: whitespace-separated pieces plus lines."""
    return len(text.split()) + text.count("\n")


def build_graph(
    sources: Mapping[str, str],
    calls: tuple[tuple[str, str], ...] = (),
    imports: tuple[tuple[str, str], ...] = (),
    tests: tuple[tuple[str, str], ...] = (),
    hashed: bool = False,
) -> CodeGraph:
    """Nodes for every file, class, function and method; contains edges from the
    nesting, and the call, import and test edges given by id. ``hashed``: file nodes
    carry a hash of their text, as the indexer's do."""
    nodes: list[CodeNode] = []
    edges: list[CodeEdge] = []
    for path, text in sorted(sources.items()):
        is_test = path.rsplit("/", 1)[-1].startswith("test_")
        nodes.append(
            CodeNode(
                path,
                "file",
                path,
                path.rsplit("/", 1)[-1],
                path,
                "python",
                1,
                text.count("\n") + 1,
                content_hash=hashlib.sha256(text.encode()).hexdigest() if hashed else "",
                size_bytes=len(text),
                is_test=is_test,
            )
        )
        lines = text.splitlines()

        def visit(
            body: list[ast.stmt],
            parent: str,
            prefix: str,
            in_class: bool,
            path: str = path,
            lines: list[str] = lines,
            is_test: bool = is_test,
        ) -> None:
            for stmt in body:
                if not isinstance(stmt, ast.ClassDef | ast.FunctionDef):
                    continue
                qual = f"{prefix}.{stmt.name}" if prefix else stmt.name
                node_id = f"{path}::{qual}"
                kind = (
                    "class"
                    if isinstance(stmt, ast.ClassDef)
                    else ("method" if in_class else "function")
                )
                nodes.append(
                    CodeNode(
                        node_id,
                        kind,
                        path,
                        stmt.name,
                        qual,
                        "python",
                        stmt.lineno,
                        stmt.end_lineno or stmt.lineno,
                        signature=lines[stmt.lineno - 1].strip(),
                        docstring=ast.get_docstring(stmt) or "",
                        parent=parent,
                        is_test=is_test,
                    )
                )
                edges.append(CodeEdge(parent, node_id, "contains"))
                visit(stmt.body, node_id, qual, isinstance(stmt, ast.ClassDef))

        visit(ast.parse(text).body, path, "", False)
    edges += [CodeEdge(a, b, "calls") for a, b in calls]
    edges += [CodeEdge(a, b, "imports") for a, b in imports]
    edges += [CodeEdge(a, b, "tests") for a, b in tests]
    return CodeGraph(nodes=tuple(nodes), edges=tuple(edges))


def make_engine(
    sources: Mapping[str, str],
    calls: tuple[tuple[str, str], ...] = (),
    imports: tuple[tuple[str, str], ...] = (),
    tests: tuple[tuple[str, str], ...] = (),
) -> FocusEngine:
    graph = build_graph(sources, calls, imports, tests)
    return FocusEngine(graph, dict(sources), count_words)


SHOP = {
    "shop/cart.py": '''"""The shopping cart."""


class Cart:
    """Items a customer is about to buy."""

    def __init__(self):
        self.items = []

    def add_item(self, sku, quantity):
        """Put an item in the cart."""
        if quantity <= 0:
            raise ValueError("quantity must be a positive number of units")
        self.items.append((sku, quantity))

    def total_price(self, catalog):
        return sum(catalog.price_of(sku) * qty for sku, qty in self.items)
''',
    "shop/catalog.py": '''"""Prices."""


class Catalog:
    def __init__(self, prices):
        self.prices = prices

    def price_of(self, sku):
        return apply_discount(self.prices[sku])


def apply_discount(amount):
    return round(amount * 0.9, 2)
''',
    "shop/shipping.py": '''"""Parcel routing."""


def route_parcel(parcel, carrier):
    """Choose a depot for a parcel."""
    depot = carrier.nearest_depot(parcel.postcode)
    return depot.schedule(parcel)


def estimate_weight(parcel):
    return parcel.grams / 1000
''',
    "shop/mailer.py": '''"""Outgoing mail."""


def send_receipt(address, body):
    header = "Receipt"
    return f"{header}: {address}\\n{body}"
''',
    "tests/test_cart.py": """from shop.cart import Cart


def test_add_item_rejects_zero():
    cart = Cart()
    try:
        cart.add_item("x", 0)
    except ValueError:
        pass
""",
}

SHOP_CALLS = (
    ("shop/cart.py::Cart.total_price", "shop/catalog.py::Catalog.price_of"),
    ("shop/catalog.py::Catalog.price_of", "shop/catalog.py::apply_discount"),
)
SHOP_IMPORTS = (("tests/test_cart.py", "shop/cart.py"),)
SHOP_TESTS = (("tests/test_cart.py::test_add_item_rejects_zero", "shop/cart.py::Cart.add_item"),)


def shop_engine() -> FocusEngine:
    return make_engine(SHOP, SHOP_CALLS, SHOP_IMPORTS, SHOP_TESTS)


def plain(value: Any) -> Any:
    """``value`` with its arrays as (dtype, shape, bytes): compared to the bit. Documents
    compare as each one's terms in order with their counts (an index patched by edits
    numbers its terms otherwise than a cold build)."""
    if isinstance(value, np.ndarray):
        return (value.dtype.str, value.shape, value.tobytes())
    if isinstance(value, DocumentCounts):
        return [ordered_terms(value, row) for row in range(len(value.ptr) - 1)]
    if isinstance(value, tuple) and value and isinstance(value[0], np.ndarray):
        return tuple(plain(part) for part in value)
    return value


def ordered_terms(documents: DocumentCounts, row: int) -> list[tuple[str, int]]:
    start, end = int(documents.ptr[row]), int(documents.ptr[row + 1])
    ids, counts = documents.ids[start:end].tolist(), documents.counts[start:end].tolist()
    return [(documents.terms[i], c) for i, c in zip(ids, counts, strict=True)]


def assert_same_built(mine: BuiltIndex, theirs: BuiltIndex) -> None:
    """Every field of two built indexes equal, arrays to the bit (see :func:`plain`)."""
    for field in dataclasses.fields(mine):
        assert plain(getattr(mine, field.name)) == plain(getattr(theirs, field.name)), field.name
