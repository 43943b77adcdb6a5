"""A packer that asks only whether a text fits packs exactly as one that counts it all."""

from __future__ import annotations

import json

import pytest
from fixture_repo import SHOP, SHOP_CALLS, SHOP_IMPORTS, SHOP_TESTS, build_graph, count_words
from hypothesis import given, settings
from hypothesis import strategies as st

from coderooms import tokens
from coderooms.focus.packing import CountsJoined, CountsWithin
from coderooms.focus.runtime import CountMemo, FocusEngine
from coderooms.focus.salience import text_key

GOALS = st.sampled_from(
    [
        "add_item raises KeyError for an unknown sku",
        "discount applied twice in price_of",
        "receipt header",
        "cart total",
    ]
)


class GrudgingCounter:
    """Word counts, and past a limit the weakest floor the contract allows (limit + 1):
    every decision the packer bases on a floor must come out as with the full count."""

    def __init__(self) -> None:
        self.whole = 0  # texts counted to their end

    def __call__(self, text: str) -> int:
        self.whole += 1
        return count_words(text)

    def within(self, text: str, limit: int) -> int:
        count = count_words(text)
        if count <= limit:
            self.whole += 1
            return count
        return limit + 1


def engine(counter: object) -> FocusEngine:
    graph = build_graph(SHOP, SHOP_CALLS, SHOP_IMPORTS, SHOP_TESTS)
    return FocusEngine(graph, dict(SHOP), counter)  # type: ignore[arg-type]


@settings(max_examples=150, deadline=None)
@given(st.integers(min_value=1, max_value=700), GOALS)
def test_packing_with_floors_equals_packing_with_full_counts(budget: int, goal: str) -> None:
    grudging = GrudgingCounter()
    assert isinstance(grudging, CountsWithin)
    exact, bounded = engine(count_words), engine(grudging)
    for _ in range(2):  # a second focus meets the floors kept by the first
        expected = json.dumps(exact.focus(goal, budget=budget).to_json(), sort_keys=True)
        got = json.dumps(bounded.focus(goal, budget=budget).to_json(), sort_keys=True)
        assert got == expected


def test_a_small_budget_counts_few_texts_to_their_end() -> None:
    grudging = GrudgingCounter()
    engine(grudging).focus("add_item raises KeyError for an unknown sku", budget=12)
    full = GrudgingCounter()
    full.within = lambda text, limit: full(text)  # type: ignore[method-assign]
    engine(full).focus("add_item raises KeyError for an unknown sku", budget=12)
    assert grudging.whole < full.whole


def test_the_memo_keeps_floors_apart_from_counts() -> None:
    memo = CountMemo(tokens.COUNTER, {})
    text = "counted = words + 1\n" * 2_000
    floor = memo.within(text, 10)
    assert 10 < floor < tokens.count_tokens(text)
    assert memo.within(text, 5) == floor  # known to be over: not counted again
    assert memo.counts == {} and memo.floors == {text_key(text): floor}  # never a count
    assert memo.added == 1  # but new to the host, which keeps floors too
    assert memo.within(text, 10**6) == tokens.count_tokens(text)
    assert memo.added == 2
    assert memo(text) == tokens.count_tokens(text)


def test_real_counts_pack_the_same_with_and_without_stopping_early() -> None:
    for budget in (40, 120, 400, 2_000):
        for goal in ("discount applied twice in price_of", "receipt header"):
            graph = build_graph(SHOP, SHOP_CALLS, SHOP_IMPORTS, SHOP_TESTS)
            whole = FocusEngine(graph, dict(SHOP), tokens.count_tokens).focus(goal, budget=budget)
            early = FocusEngine(graph, dict(SHOP), tokens.COUNTER).focus(goal, budget=budget)
            assert early.to_json() == whole.to_json()


def test_a_second_focus_renders_nothing_again_not_even_what_did_not_fit(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from coderooms.focus import packing

    made: list[str] = []
    make = packing._render_text

    def counted(*args: object) -> str:
        text = make(*args)  # type: ignore[arg-type]
        made.append(text)
        return text

    monkeypatch.setattr(packing, "_render_text", counted)
    focused = engine(GrudgingCounter())
    first = focused.focus("add_item raises KeyError for an unknown sku", budget=12).to_json()
    assert made  # something was rendered, and some of it did not fit in 12 words
    assert any(entry["why"] == "over_budget" for entry in first["ignored"])
    made.clear()
    asked: list[int] = []
    within = focused.counter.within

    def asked_within(text: str, limit: int) -> int:
        asked.append(limit)
        return within(text, limit)

    monkeypatch.setattr(focused.counter, "within", asked_within)
    focused.forget()
    again = focused.focus("add_item raises KeyError for an unknown sku", budget=12).to_json()
    assert again == first and made == [] and asked == []  # nor counted, nor hashed again


@settings(max_examples=60, deadline=None)
@given(st.integers(min_value=1, max_value=4000), GOALS)
def test_the_block_counted_from_its_items_packs_as_the_block_counted_whole(
    budget: int, goal: str
) -> None:
    """The o200k counter knows a block's count from its items' (see CountsJoined); the
    same counter without that knowledge counts the block itself."""

    class WholeBlocks:
        def __call__(self, text: str) -> int:
            return tokens.count_tokens(text)

        def within(self, text: str, limit: int) -> int:
            return tokens.count_tokens_within(text, limit)

    assert isinstance(tokens.COUNTER, CountsJoined)
    assert not isinstance(WholeBlocks(), CountsJoined)
    joined, whole = engine(tokens.COUNTER), engine(WholeBlocks())
    got = joined.focus(goal, budget=budget)
    assert got.packing.block_tokens(joined.counter) == tokens.count_tokens(got.packing.block())
    expected = json.dumps(whole.focus(goal, budget=budget).to_json(), sort_keys=True)
    assert json.dumps(got.to_json(), sort_keys=True) == expected


def test_the_memo_counts_a_block_whole_for_a_counter_that_cannot_join() -> None:
    memo = CountMemo(count_words, {})
    texts = ["# a\nx y\n", "# b\nz\n"]
    assert memo.joined(texts, [4, 3]) == count_words("".join(texts))
    assert memo.added == 1  # counted once as one text, and remembered
