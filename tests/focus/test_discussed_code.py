"""The function gains when the room discussed it: the code a desk's messages about the
goal name seeds the code ranking, boundedly, and says which message named it."""

from __future__ import annotations

from fixture_repo import SHOP, build_graph, shop_engine

from coderooms.deskrecall import (
    DISCUSSED_MAX_NODES,
    MENTION_MAX_NODES,
    about_goal,
    discussed_code,
    mention_map,
)
from coderooms.focus.discussion import code_mentions, prose_outside_code, prose_terms

GOAL = "the cart total price is wrong after a discount"
ABOUT = "The wrong total price after a discount comes from route_parcel in shop/shipping.py."


def test_a_node_is_named_by_id_path_qualified_name_or_a_code_shaped_name() -> None:
    mentions = mention_map(build_graph(SHOP))
    assert mentions["shop/cart.py"] == ("shop/cart.py",)
    assert mentions["shop/cart.py::Cart.add_item"] == ("shop/cart.py::Cart.add_item",)
    assert mentions["Cart.add_item"] == ("shop/cart.py::Cart.add_item",)
    assert mentions["add_item"] == ("shop/cart.py::Cart.add_item",)
    assert "Cart" not in mentions  # a plain word names no code
    assert "__init__" not in mentions or len(mentions["__init__"]) <= MENTION_MAX_NODES


def test_a_name_standing_for_many_nodes_names_none() -> None:
    sources = {f"pkg/m{i}.py": "def load_rows():\n    return 1\n" for i in range(4)}
    mentions = mention_map(build_graph(sources))
    assert "load_rows" not in mentions
    assert mentions["pkg/m0.py::load_rows"] == ("pkg/m0.py::load_rows",)


def test_prose_outside_code_drops_words_written_as_code() -> None:
    terms = prose_outside_code("Refactored Cart.add_item in shop/cart.py, no `totalPrice` change.")
    assert terms == frozenset(prose_terms("Refactored in no change"))


def test_only_a_message_whose_prose_is_about_the_goal_lifts_code() -> None:
    mentions = mention_map(build_graph(SHOP))
    aside = "Refactored Cart.total_price in shop/cart.py, no behaviour change."
    assert not about_goal(aside, frozenset(prose_terms(GOAL)))
    assert discussed_code([(4, aside)], mentions, GOAL) == ()
    lifted = discussed_code([(4, aside), (9, ABOUT)], mentions, GOAL)
    assert lifted == (
        ("shop/shipping.py", "discussed in message #9"),
        ("shop/shipping.py::route_parcel", "discussed in message #9"),
    )


def test_the_longest_spelling_wins_and_the_first_message_naming_a_node_is_cited() -> None:
    sources = {
        "a.py": "class Box:\n    def open_lid(self):\n        pass\n",
        "b.py": "def open_lid():\n    pass\n",
    }
    mentions = mention_map(build_graph(sources))
    first = "The wrong total price after a discount: Box.open_lid is the culprit."
    again = "Yes, wrong total price after a discount, open_lid again."
    lifted = dict(discussed_code([(3, first), (5, again)], mentions, GOAL))
    assert lifted["a.py::Box.open_lid"] == "discussed in message #3"
    assert lifted["b.py::open_lid"] == "discussed in message #5"  # the bare name, later


def test_the_code_a_focus_lifts_is_bounded() -> None:
    sources = {f"pkg/m{i}.py": f"def step_{i}():\n    pass\n" for i in range(20)}
    mentions = mention_map(build_graph(sources))
    text = "The wrong total price after a discount: " + " ".join(f"step_{i}" for i in range(20))
    assert len(discussed_code([(1, text)], mentions, GOAL)) == DISCUSSED_MAX_NODES


def test_code_mentions_reads_ids_paths_and_identifiers() -> None:
    words = code_mentions("see `shop/cart.py::Cart.add_item`, and shop/mailer.py.")
    assert {"shop/cart.py::Cart.add_item", "shop/mailer.py", "Cart.add_item", "add_item"} <= words


def test_discussed_code_gains_in_the_ranking_with_its_reason() -> None:
    engine = shop_engine()
    node = "shop/shipping.py::route_parcel"
    plain = engine.rank_functions(GOAL)
    lifted = engine.rank_functions(GOAL, ((node, "discussed in message #9"),))
    assert lifted.index(node) < (plain.index(node) if node in plain else len(plain))
    files = engine.rank_files(GOAL, ((node, "discussed in message #9"),))
    before = engine.rank_files(GOAL)
    after = files.index("shop/shipping.py")
    assert after < (before.index("shop/shipping.py") if "shop/shipping.py" in before else 99)
    result = engine.focus(GOAL, 4000, discussed=((node, "discussed in message #9"),))
    whys = {item.node.id: item.why for item in result.packing.loaded}
    assert "discussed in message #9" in whys["shop/shipping.py"]


def test_no_discussed_code_ranks_as_before_and_unknown_ids_are_passed_over() -> None:
    engine = shop_engine()
    plain = engine.salience(GOAL)
    again = engine.reweighted(engine.index.config).salience(GOAL, (("gone.py::f", "x"),))
    assert list(plain.scores) == list(again.scores) and plain.why == again.why
