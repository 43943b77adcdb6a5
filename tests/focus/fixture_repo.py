"""Small code graphs built by hand from Python sources, for the focus tests."""

from __future__ import annotations

import ast
import hashlib
from collections.abc import Mapping

from coderooms.focus.graph import CodeEdge, CodeGraph, CodeNode
from coderooms.focus.runtime import FocusEngine


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
