"""The sufficiency verdict, seek and impact."""

from __future__ import annotations

import pytest
from fixture_repo import make_engine, shop_engine

from coderooms.focus.errors import BlankGoal, GoalNotText, InvalidLimit, UnknownTarget
from coderooms.focus.sufficiency import knee

ENGINE = shop_engine()


@pytest.mark.parametrize("goal", ["", "   ", "\n\t \n"])
def test_a_blank_goal_or_query_is_refused_saying_what_to_give(goal: str) -> None:
    # it used to pass as a goal that matches nothing ("gathering"), which reads as if
    # the code had nothing to do with the request
    with pytest.raises(BlankGoal, match="the goal is blank; say what you are after"):
        ENGINE.focus(goal, budget=500)
    with pytest.raises(BlankGoal, match="the query is blank"):
        ENGINE.seek(goal)


@pytest.mark.parametrize("goal", [None, b"bytes", 42])
def test_a_goal_that_is_not_text_is_a_typed_error_in_the_library(goal: object) -> None:
    from coderooms.skimmer import skim

    kind = type(goal).__name__
    with pytest.raises(GoalNotText, match=f"the goal must be text \\(a str\\), not {kind}"):
        ENGINE.focus(goal, budget=500)  # type: ignore[arg-type]
    with pytest.raises(GoalNotText, match="the query must be text"):
        ENGINE.seek(goal)  # type: ignore[arg-type]
    with pytest.raises(GoalNotText, match="the text to skim must be text"):
        skim(goal, "retry")  # type: ignore[arg-type]


def test_an_unrelated_goal_is_gathering_and_says_why() -> None:
    result = ENGINE.focus("bake sourdough bread with rye flour overnight", budget=500)
    assert result.sufficiency.state == "gathering"
    assert result.sufficiency.captured_salience_mass == 0.0


def test_a_generous_budget_on_a_precise_goal_is_saturated() -> None:
    result = ENGINE.focus("route_parcel nearest_depot", budget=100_000)
    assert result.sufficiency.state == "saturated"
    assert result.sufficiency.captured_salience_mass == 1.0


def test_a_tight_budget_that_misses_the_head_is_gathering() -> None:
    result = ENGINE.focus("Cart add_item total_price catalog price_of", budget=5)
    assert result.sufficiency.state == "gathering"
    assert "raise the budget" in result.sufficiency.why


def test_the_knee_of_a_curve() -> None:
    assert knee([1.0, 0.9, 0.1, 0.05, 0.04, 0.03]) == 2
    assert knee([0.5, 0.5]) == 2
    assert knee([]) == 0


def test_seek_lists_ranked_nodes_and_the_rest_as_ignored() -> None:
    result = ENGINE.seek("apply_discount price", limit=2)
    data = result.to_json()
    assert "shop/catalog.py::apply_discount" in [r["id"] for r in data["results"]]
    assert len(data["results"]) == 2
    assert all(entry["why"] == "over_limit" for entry in data["ignored"])
    with pytest.raises(InvalidLimit):
        ENGINE.seek("x", limit=0)


def test_impact_walks_reverse_dependencies_within_depth() -> None:
    result = ENGINE.impact("apply_discount", depth=1)
    ids = [i.node.id for i in result.impacted]
    assert ids == ["shop/catalog.py::Catalog.price_of"]
    assert ("shop/cart.py::Cart.total_price", "beyond_depth") in result.ignored
    deeper = ENGINE.impact("shop/catalog.py::apply_discount", depth=2)
    assert [i.node.id for i in deeper.impacted][-1] == "shop/cart.py::Cart.total_price"


def test_impact_of_a_file_covers_its_symbols() -> None:
    ids = {i.node.id for i in ENGINE.impact("shop/cart.py", depth=1).impacted}
    assert "tests/test_cart.py" in ids
    assert "tests/test_cart.py::test_add_item_rejects_zero" in ids


def test_impact_targets_that_do_not_resolve_are_typed_errors() -> None:
    with pytest.raises(UnknownTarget):
        ENGINE.impact("no_such_thing")
    twins = make_engine({"a.py": "def run():\n    pass\n", "b.py": "def run():\n    pass\n"})
    listed = twins.impact("run")  # several symbols: listed, not refused
    assert listed.target is None and listed.impacted == ()
    assert [c.node.id for c in listed.candidates] == ["a.py::run", "b.py::run"]
    with pytest.raises(InvalidLimit):
        ENGINE.impact("apply_discount", depth=0)


def test_an_empty_graph_does_not_crash() -> None:
    engine = make_engine({})
    result = engine.focus("anything at all", budget=100)
    assert result.sufficiency.state == "gathering"
    assert engine.seek("anything").results == ()


def test_a_file_too_large_to_load_whole_is_reached_through_its_loaded_class() -> None:
    result = ENGINE.focus("Cart.add_item rejects a zero quantity", budget=300)
    renders = {item.node.id: item.render for item in result.packing.loaded}
    assert renders["shop/cart.py::Cart"] == "full"
    assert renders.get("shop/cart.py") != "full"
    assert result.sufficiency.state == "saturated"
    assert result.sufficiency.captured_salience_mass > 0.5


def test_a_clear_lead_is_sufficient_only_with_its_best_code_loaded_in_full() -> None:
    leads = 0
    for budget in range(10, 300, 5):
        result = ENGINE.focus("price_of apply_discount rounding", budget=budget)
        if "leads the next file" not in result.sufficiency.why:
            continue
        leads += 1
        assert result.sufficiency.state == "sufficient"
        named = result.sufficiency.why.split("(", 1)[1].split(")", 1)[0]
        assert named in result.covered_ids()
        assert result.sufficiency.why.endswith(
            ("is not loaded in full", "are not loaded in full", "is loaded in full too")
        )
    assert leads > 0


def test_the_clause_after_a_clear_lead_reads_for_any_count() -> None:
    from coderooms.focus.sufficiency import _not_loaded

    assert _not_loaded(0) == "every other item ahead of the knee is loaded in full too"
    assert _not_loaded(1) == "1 other item ahead of the knee is not loaded in full"
    assert _not_loaded(3) == "3 other items ahead of the knee are not loaded in full"


def test_seek_agrees_with_focus_when_nothing_ties_the_query_to_the_code() -> None:
    unrelated = "bake sourdough bread with rye flour overnight"
    seek = ENGINE.seek(unrelated)
    assert seek.sufficiency.state == "gathering"
    assert seek.sufficiency.why.replace("query", "goal") == (
        ENGINE.focus(unrelated, budget=500).sufficiency.why
    )
    assert ENGINE.seek("route_parcel nearest_depot").sufficiency.state != "gathering"


def test_an_empty_index_says_so_instead_of_asking_for_a_better_goal() -> None:
    empty = make_engine({})
    for verdict in (empty.focus("install greet").sufficiency, empty.seek("greet").sufficiency):
        assert verdict.state == "gathering"
        assert verdict.why.startswith("the index holds no files")


def test_a_goal_longer_than_the_limit_is_a_typed_error() -> None:
    from coderooms.focus.errors import GoalTooLong
    from coderooms.focus.runtime import MAX_GOAL_CHARS

    for call in (ENGINE.focus, ENGINE.seek):
        with pytest.raises(GoalTooLong) as caught:
            call("parcel " * (MAX_GOAL_CHARS // 7 + 1))
        assert str(caught.value).startswith("the ") and "\n" not in str(caught.value)
    assert ENGINE.focus("route_parcel " + "x" * (MAX_GOAL_CHARS - 20), budget=100).goal


def test_a_common_name_written_as_code_and_defined_here_is_no_weak_tie() -> None:
    # `fact` is one lower-case word (a weak name for ranking), yet the goal names it and
    # the code defines it: the verdict had said the goal "names no symbol ... found here"
    engine = make_engine(
        {
            "pkg/core.py": "def fact(n):\n    if n <= 1:\n        return 1\n"
            "    return n * fact(n - 1)\n",
            "pkg/util.py": "def helper(x):\n    return x + 1\n",
        }
    )
    result = engine.focus("fix `fact` recursion", budget=100_000)
    assert "defines `fact` named in the goal" in result.packing.loaded[0].why
    assert "names no symbol" not in result.sufficiency.why
    assert result.sufficiency.state == "saturated"
    unnamed = engine.focus("the helper recursion breaks for users on windows", budget=100_000)
    assert "names no symbol" in unnamed.sufficiency.why  # the weak tie is still said


def test_a_nul_in_a_goal_becomes_a_replacement_character() -> None:
    # a session keeps its goals in the store, and PostgreSQL cannot keep U+0000
    from coderooms.focus.runtime import checked_goal

    assert checked_goal("goal", "cart\x00 total") == "cart\ufffd total"
