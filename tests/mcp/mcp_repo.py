"""A small repository whose right answer is known: a bug report naming a function."""

from __future__ import annotations

from pathlib import Path

FILES = {
    "shop/__init__.py": "",
    "shop/cart.py": '''"""Shopping cart totals."""


def apply_discount(total: float, percent: float) -> float:
    """Apply a percentage discount to a cart total and round to cents."""
    return round(total * (1 - percent / 100), 2)


class Cart:
    def __init__(self) -> None:
        self.items: list[tuple[str, float]] = []

    def add(self, name: str, price: float) -> None:
        self.items.append((name, price))

    def total(self) -> float:
        return sum(price for _, price in self.items)
''',
    "shop/checkout.py": '''from shop.cart import Cart, apply_discount


def checkout(cart: Cart, coupon_percent: float) -> float:
    """Charge the customer: the cart total after the coupon's discount."""
    return apply_discount(cart.total(), coupon_percent)
''',
    "shop/shipping.py": '''"""Shipping costs by weight."""


def shipping_cost(weight_kg: float) -> float:
    """Flat rate up to a kilogram, then a rate per extra kilogram."""
    if weight_kg <= 1:
        return 4.5
    return 4.5 + (weight_kg - 1) * 1.25
''',
    "tests/test_cart.py": """from shop.cart import apply_discount


def test_apply_discount_rounds_to_cents() -> None:
    assert apply_discount(10.0, 15) == 8.5
""",
}


def write_fixture_repo(root: Path) -> Path:
    for relative, text in FILES.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root
