"""focus(goal, budget): the right code first, the budget kept, nothing dropped silently."""

from __future__ import annotations

import json

import pytest
from fixture_repo import count_words, shop_engine
from hypothesis import given, settings
from hypothesis import strategies as st

from coderooms.focus.errors import InvalidBudget, InvalidMode
from coderooms.focus.packing import render
from coderooms.focus.runtime import MAX_BUDGET

ENGINE = shop_engine()


def test_a_bug_report_naming_a_method_ranks_its_file_and_method_first() -> None:
    goal = "Calling `Cart.add_item` with quantity 0 raises ValueError instead of ignoring it"
    assert ENGINE.rank_files(goal)[0] == "shop/cart.py"
    assert ENGINE.rank_functions(goal)[0] == "shop/cart.py::Cart.add_item"
    result = ENGINE.focus(goal, budget=400)
    assert "shop/cart.py::Cart.add_item" in result.covered_ids()


def test_a_goal_reaches_code_it_does_not_mention_through_a_call_edge() -> None:
    goal = "price_of gives wrong results"
    sal = ENGINE.salience(goal)
    rows = {n.id: i for i, n in enumerate(ENGINE.index.nodes)}
    callee = sal.scores[rows["shop/catalog.py::apply_discount"]]
    unrelated = sal.scores[rows["shop/shipping.py::estimate_weight"]]
    assert callee > 0
    assert callee > 5 * unrelated
    assert "linked in the code graph" in " ".join(sal.why[rows["shop/catalog.py::apply_discount"]])


def test_an_error_message_quoted_in_the_goal_finds_the_code_that_raises_it() -> None:
    goal = 'I get "quantity must be a positive number of units" when ordering'
    assert ENGINE.rank_functions(goal)[0] == "shop/cart.py::Cart.add_item"


@settings(max_examples=60, deadline=None)
@given(
    budget=st.integers(min_value=1, max_value=600),
    goal=st.sampled_from(
        [
            "Cart.add_item rejects zero quantity",
            "route_parcel picks the wrong depot",
            "discount applied twice in price_of",
            "receipt header",
        ]
    ),
)
def test_every_candidate_is_loaded_or_ignored_and_the_budget_holds(budget: int, goal: str) -> None:
    result = ENGINE.focus(goal, budget=budget)
    loaded = {item.node.id for item in result.packing.loaded}
    ignored = {entry.what for entry in result.packing.ignored}
    assert set(result.packing.candidates) == loaded | (ignored & set(result.packing.candidates))
    assert not loaded & ignored
    assert result.packing.used <= budget
    assert count_words(result.context()) <= budget
    assert result.to_json()["budget"]["left"] == budget - result.packing.used


def test_code_is_never_paid_for_twice() -> None:
    result = ENGINE.focus("Cart add_item total_price catalog", budget=5000)
    loaded = [item for item in result.packing.loaded if item.render == "full"]
    ids = {item.node.id for item in loaded}
    for item in loaded:
        parent = item.node.parent
        assert parent not in ids, f"{item.node.id} loaded inside {parent}"
    duplicates = [e for e in result.packing.ignored if e.why == "duplicate_of"]
    assert duplicates and all(e.detail in ids for e in duplicates)


def test_a_body_that_does_not_fit_is_loaded_as_its_signature_skeleton() -> None:
    cart = ENGINE.graph.node("shop/cart.py::Cart")
    assert cart is not None
    _text, full_tokens = render(ENGINE.index, cart, "full", count_words)
    tight = ENGINE.focus("Cart add_item total_price", budget=full_tokens - 1)
    outline = next(i for i in tight.packing.loaded if i.node.id == cart.id)
    assert outline.render == "skeleton"
    assert "def add_item(self, sku, quantity):" in outline.text
    assert "raise ValueError" not in outline.text
    assert outline.tokens < full_tokens


def test_a_test_file_is_penalized_and_says_so() -> None:
    sal = ENGINE.salience("add_item rejects zero")
    rows = {n.id: i for i, n in enumerate(ENGINE.index.nodes)}
    assert any("test code" in w for w in sal.why[rows["tests/test_cart.py"]])


def test_the_same_goal_gives_the_same_answer() -> None:
    goal = "total_price is wrong when a discount applies"
    first = json.dumps(shop_engine().focus(goal, budget=300).to_json(), sort_keys=True)
    second = json.dumps(shop_engine().focus(goal, budget=300).to_json(), sort_keys=True)
    assert first == second


def test_the_json_carries_the_api_shape() -> None:
    data = ENGINE.focus("route_parcel depot", budget=200).to_json()
    assert set(data) >= {"goal", "budget", "focus_set", "ignored", "sufficiency", "context"}
    assert set(data["budget"]) == {"limit", "used", "left"}
    item = data["focus_set"][0]
    assert set(item) >= {
        "id",
        "path",
        "kind",
        "name",
        "start_line",
        "end_line",
        "salience",
        "tokens",
        "why",
    }
    assert set(data["sufficiency"]) == {"state", "captured_salience_mass", "why"}
    assert "context" not in ENGINE.focus("route_parcel", budget=200, mode="check").to_json()


@pytest.mark.parametrize("budget", [0, -5, MAX_BUDGET + 1, 2.5, "100", True])
def test_a_bad_budget_is_a_typed_error(budget: object) -> None:
    with pytest.raises(InvalidBudget):
        ENGINE.focus("cart", budget=budget)  # type: ignore[arg-type]


def test_a_bad_mode_is_a_typed_error() -> None:
    with pytest.raises(InvalidMode):
        ENGINE.focus("cart", mode="load")


def test_the_ignored_counts_count_every_node_and_a_summary_is_listed_last() -> None:
    result = ENGINE.focus("Calling Cart.add_item with quantity 0 raises ValueError", budget=30)
    summary = next(e for e in result.packing.ignored if e.why == "below_floor")
    assert summary.nodes > 1
    data = result.to_json(ignored_limit=len(result.packing.ignored))
    assert data["ignored_total"] == len(result.packing.ignored) - 1 + summary.nodes
    assert data["ignored_by_reason"]["below_floor"] == summary.nodes
    assert data["ignored"][-1]["why"] == "below_floor"
    assert [e["salience"] for e in data["ignored"][:-1]] == sorted(
        (e["salience"] for e in data["ignored"][:-1]), reverse=True
    )
    assert len(result.to_json(ignored_limit=2)["ignored"]) == 2
