"""The working-set model alone: heat by call count, page-out choice, pins, the streak."""

from __future__ import annotations

from dataclasses import replace

from hypothesis import given, settings
from hypothesis import strategies as st

from coderooms.focus.workingset import (
    GOALS_KEPT,
    HEAT_DECAY,
    HEAT_RECENCY,
    Arrival,
    Gain,
    Hit,
    Resident,
    Value,
    WorkingSet,
    advance,
    goal_overlap,
    heat,
    plan_page_out,
    protected_ids,
    value_of_information,
    with_pins,
)


def resident(node_id: str, tokens: int = 10, accesses: int = 1, last: int = 1) -> Resident:
    return Resident(node_id, "full", tokens, "d" + node_id, 1, "g", accesses, last, 0, 0.5)


def test_heat_decays_by_calls_not_time() -> None:
    node = resident("a", last=3)
    assert heat(node, 3) > heat(node, 4) > heat(node, 10)
    assert round(heat(node, 3) - heat(node, 4), 4) == round(HEAT_RECENCY * (1 - HEAT_DECAY), 4)
    assert heat(node, 5) == heat(node, 5)


def test_heat_grows_with_accesses_and_grounding() -> None:
    node = resident("a")
    assert heat(replace(node, accesses=3), 2) > heat(node, 2)
    assert heat(replace(node, grounded=1), 2) > heat(node, 2)


def test_the_coldest_pages_out_first_and_only_as_much_as_needed() -> None:
    ws = WorkingSet(
        "a",
        "s",
        30,
        5,
        (resident("hot", accesses=4, last=5), resident("cold"), resident("warm", last=4)),
    )
    out = plan_page_out(ws, 10, (), 6)
    assert [p.id for p in out] == ["cold"]
    out = plan_page_out(ws, 20, (), 6)
    assert [p.id for p in out] == ["cold", "warm"]
    assert all("session budget" in p.why for p in out)
    assert plan_page_out(ws, 0, (), 6) == []


def test_pins_and_a_pinned_goal_protect_their_nodes() -> None:
    ws = WorkingSet("a", "s", 20, 3, (resident("x"), replace(resident("y"), goal="keep me")))
    ws = with_pins(ws, nodes=["x"], goals=["keep me"])
    assert protected_ids(ws) == {"x", "y"}
    assert plan_page_out(ws, 100, (), 4) == []


@settings(max_examples=200, deadline=None)
@given(
    tokens=st.lists(st.integers(1, 50), min_size=1, max_size=12),
    budget=st.integers(1, 400),
    need=st.integers(0, 400),
    pins=st.sets(st.integers(0, 11)),
    keep=st.sets(st.integers(0, 11)),
)
def test_page_out_never_takes_a_pinned_or_kept_node_and_frees_enough_when_it_can(
    tokens: list[int], budget: int, need: int, pins: set[int], keep: set[int]
) -> None:
    residents = tuple(
        resident(f"n{i}", t, accesses=1 + i % 3, last=1 + i % 4) for i, t in enumerate(tokens)
    )
    ws = with_pins(WorkingSet("a", "s", budget, 5, residents), nodes=[f"n{i}" for i in pins])
    kept = {f"n{i}" for i in keep}
    out = plan_page_out(ws, need, kept, 6)
    ids = [p.id for p in out]
    assert len(ids) == len(set(ids))
    assert not set(ids) & (set(ws.pinned_nodes) | kept)
    movable = sum(r.tokens for r in residents if r.id not in set(ws.pinned_nodes) | kept)
    freed = sum(p.tokens for p in out)
    if ws.budget - ws.used + movable >= need:
        assert ws.budget - ws.used + freed >= need
    else:
        assert freed == movable


@settings(max_examples=150, deadline=None)
@given(
    start=st.sets(st.sampled_from("abcdefgh")),
    arriving=st.sets(st.sampled_from("abcdefgh")),
    leaving=st.sets(st.sampled_from("abcdefgh")),
    hit=st.sets(st.sampled_from("abcdefgh")),
)
def test_nothing_leaves_the_working_set_but_what_is_named(
    start: set[str], arriving: set[str], leaving: set[str], hit: set[str]
) -> None:
    ws = WorkingSet("a", "s", 1000, 2, tuple(resident(i) for i in sorted(start)))
    arrivals = [Arrival(i, "full", 5, "new" + i, 0.4) for i in sorted(arriving)]
    hits = [Hit(i, 0.3) for i in sorted(hit & start - leaving)]
    after = advance(ws, "goal", arrivals, hits, leaving - arriving, None)
    assert {r.id for r in after.resident} == (start - (leaving - arriving)) | arriving
    assert after.calls == 3
    for r in after.resident:
        if r.id in arriving:
            assert r.loaded_by == 3 and r.digest == "new" + r.id
        elif r.id in {h.id for h in hits}:
            assert r.accesses == 2 and r.last_access == 3 and r.grounded == 1


NOTHING_NEW = Value(0.0, 0.0, 0.1)
TAIL_ONLY = Value(0.0, 0.2, 0.1)  # new code, all of it past the knee
NEAR_ZERO = Value(0.05, 0.05, 0.1)  # half a core item's worth: an outline's body
ONE_ITEM = Value(0.1, 0.1, 0.1)  # one whole core item's worth: new material


def test_the_low_value_streak_counts_the_same_question_bringing_nothing_new() -> None:
    asked = "cart total price wrong"
    ws = WorkingSet("a", "s", 1000)
    ws = advance(ws, asked, [Arrival("a", "full", 5, "x", 1.0)], [], (), Value(1.0, 1.0, 0.1))
    assert ws.low_value_streak == 0
    ws = advance(ws, "wrong cart total price", [], [Hit("a", 1.0)], (), NOTHING_NEW)
    ws = advance(ws, "the cart total price is wrong", [], [Hit("a", 1.0)], (), TAIL_ONLY)
    assert ws.low_value_streak == 2
    ws = advance(ws, asked, [Arrival("b", "skeleton", 5, "y", 1.0)], [], (), NEAR_ZERO)
    assert ws.low_value_streak == 3
    # no candidate at all: the streak neither grows nor ends
    assert advance(ws, asked, [], [], (), None).low_value_streak == 3
    # one core item's worth of new material ends it
    ws = advance(ws, asked, [Arrival("c", "full", 5, "z", 1.0)], [Hit("a", 1.0)], (), ONE_ITEM)
    assert ws.low_value_streak == 0
    # a narrower follow-up asking something else is not a repeat, even with nothing new
    ws = advance(ws, "shipping depot routing", [], [Hit("a", 1.0)], (), NOTHING_NEW)
    assert ws.low_value_streak == 0


def test_value_of_information_is_the_salience_newly_held_ahead_of_the_knee() -> None:
    assert value_of_information([], 0) is None
    assert value_of_information([Gain("a", 0.0, 0.0, 1.0)], 1) is None
    gains = [
        Gain("a", 0.4, 1.0, 1.0),  # held in full before: nothing new
        Gain("b", 0.3, 0.5, 1.0),  # an outline before, its body now: half of it new
        Gain("c", 0.2, 0.0, 0.0),  # not held, not sent
        Gain("d", 0.1, 0.0, 0.5),  # past the knee, sent as an outline
    ]
    value = value_of_information(gains, 3)
    assert value is not None
    assert abs(value.core - 0.15) < 1e-12 and abs(value.added - 0.2) < 1e-12
    assert abs(value.item - 0.2) < 1e-12  # "c", the least salient item ahead of the knee
    assert not value.new_material  # an outline's body is less than one core item
    # the least salient core item, new and in full, is one item's worth: new material
    fresh = [gains[0], gains[1], Gain("c", 0.2, 0.0, 1.0), gains[3]]
    found = value_of_information(fresh, 3)
    assert found is not None and found.new_material
    # the same call with nothing new ahead of the knee adds nothing there
    held = [gains[0], Gain("b", 0.3, 1.0, 1.0), gains[2], gains[3]]
    again = value_of_information(held, 3)
    assert again is not None and again.core == 0.0 and again.added > 0
    assert not again.new_material
    # sending less than the agent held is no loss of value, never negative
    less = value_of_information([Gain("a", 1.0, 1.0, 0.5)], 1)
    assert less == Value(0.0, 0.0, 1.0)
    # a knee at 0 still has one item ahead of it
    first = value_of_information([Gain("a", 0.5, 0.0, 1.0), Gain("b", 0.5, 0.0, 0.0)], 0)
    assert first is not None and first.new_material


def test_goals_are_remembered_newest_last_and_bounded() -> None:
    ws = WorkingSet("a", "s", 1000)
    for i in range(GOALS_KEPT + 3):
        ws = advance(ws, f"goal {i}", [], [], (), None)
    assert len(ws.goals) == GOALS_KEPT and ws.goals[-1] == f"goal {GOALS_KEPT + 2}"


def test_goal_overlap_is_the_share_of_terms_seen_before() -> None:
    assert goal_overlap("cart total price", ["the cart price"]) == 2 / 3
    assert goal_overlap("anything", []) is None


def test_a_post_naming_resident_code_grounds_it_once_more() -> None:
    from coderooms.focus.discussion import code_words
    from coderooms.focus.workingset import Resident, WorkingSet, named_in_post, post_names

    def held(node: str) -> Resident:
        return Resident(node, "full", 10, "d", 1, "g", 1, 1, 0, 0.5)

    ws = WorkingSet(
        "ada",
        "s",
        1_000,
        calls=1,
        resident=(held("shop/cart.py::Cart.add_item"), held("shop/cli.py::pins")),
    )
    assert post_names("shop/cli.py::pins") == ("shop/cli.py::pins",)  # a plain word is not a name
    after = named_in_post(ws, code_words("add_item drops zero; the pins stay") | {"x"})
    assert [r.grounded for r in after.resident] == [1, 0]
    assert named_in_post(ws, code_words("nothing here")) is ws
