"""Focus over the room: a desk's discussion rides beside the code, in one budget."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from mcp_repo import write_fixture_repo

from coderooms.deskrecall import (
    DISCUSSION_SHARE,
    DeskNeedsGoal,
    DeskRecall,
    TeamNeedsDesk,
    UnknownTeamChoice,
    choose_messages,
    focus_over_desk,
    window_sequences,
)
from coderooms.mcp.errors import NotADeskMember
from coderooms.mcp.render import render_focus
from coderooms.mcp.schemas import FocusOut
from coderooms.mcp.server import _published
from coderooms.mcp.service import RoomService
from coderooms.rooms.records import SESSION_WINDOW
from coderooms.store import open_store
from coderooms.tokens import count_tokens
from coderooms.workspace import Workspace

GOAL = "checkout charges the wrong amount after a coupon discount"
DECISION = "We agreed apply_discount must round to cents before checkout adds shipping."


async def _desk(store, chatter: int = SESSION_WINDOW + 5):
    await store.add_agent("alice")
    await store.add_agent("bob")
    await store.create_desk("eng")
    await store.add_desk_member("eng", "alice")
    decision = await store.post("agent:bob", DECISION, desk="eng")
    await store.post("agent:alice", "ok, noted", desk="eng", parent=decision.sequence)
    for i in range(chatter):
        await store.post("agent:bob", f"standup note {i}: lunch menu and parking", desk="eng")
    return decision.sequence


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory):
    repo = write_fixture_repo(tmp_path_factory.mktemp("repo") / "repo")
    ws = Workspace.open(repo)
    ws.index()
    yield ws
    ws.close()


def test_focus_with_a_desk_sends_the_decision_framed_within_one_budget(
    tmp_path: Path, workspace: Workspace
) -> None:
    async def scenario() -> None:
        store = open_store(f"sqlite:///{tmp_path / 'rooms.db'}")
        try:
            decision = await _desk(store)
            service = RoomService(store, lambda: workspace, offload=False)
            plain = await service.focus("alice", GOAL, "set", 2000)
            out = await service.focus("alice", GOAL, "set", 2000, desk="eng")
            check = await service.focus("alice", GOAL, "check", 2000, desk="eng")
            with pytest.raises(NotADeskMember):
                await service.focus("bob", GOAL, "set", 2000, desk="eng")
        finally:
            store.close()
        sent = _published(FocusOut)(out)
        assert FocusOut.model_validate(sent).model_dump(mode="json", exclude_unset=True) == sent
        messages = out["discussion"]["messages"]
        assert messages[0]["sequence"] == decision
        assert messages[0]["content"] == DECISION
        assert "names salient code: apply_discount" in messages[0]["why"]
        assert decision + 1 in {m["sequence"] for m in messages}  # the reply comes along
        code_tokens = sum(item["tokens"] for item in out["focus_set"])
        assert out["budget"]["used"] == code_tokens + out["discussion"]["tokens"] <= 2000
        assert out["budget"]["left"] == 2000 - out["budget"]["used"]
        assert out["discussion"]["tokens"] <= 2000 * DISCUSSION_SHARE
        assert out["ignored_total"] == sum(out["ignored_by_reason"].values())
        assert plain.get("discussion") is None
        assert "desk eng:" in out["sufficiency"]["why"]
        text = render_focus(out)
        assert '<room-data kind="discussion">' in text
        assert f"[#{decision}] @bob" in text and "│ " + DECISION in text
        assert all(m["content"] is None for m in check["discussion"]["messages"])

    asyncio.run(scenario())


def test_the_window_a_turn_already_shows_is_not_sent_again(tmp_path: Path) -> None:
    async def scenario() -> None:
        store = open_store(f"sqlite:///{tmp_path / 'rooms.db'}")
        try:
            await _desk(store, chatter=3)  # the decision is inside the newest window
            desk = (await store.desks()).resolve("eng")
            window = await window_sequences(store, desk)
            recall = DeskRecall()
            ranking = await recall.rank(store, desk, "apply_discount rounding", exclude=window)
            assert ranking.ranked == ()
            assert len(window) == 5
        finally:
            store.close()

    asyncio.run(scenario())


def test_a_desk_index_is_kept_and_extended_by_new_posts(tmp_path: Path) -> None:
    async def scenario() -> None:
        store = open_store(f"sqlite:///{tmp_path / 'rooms.db'}")
        calls: list[int] = []

        def embed(texts):
            calls.append(len(texts))
            return [[1.0, float(len(t))] for t in texts]

        try:
            await _desk(store, chatter=2)
            desk = (await store.desks()).resolve("eng")
            recall = DeskRecall(lambda texts: __import__("numpy").array(embed(texts)))
            first = await recall.rank(store, desk, "rounding cents")
            again = await recall.rank(store, desk, "rounding cents")
            await store.post("agent:alice", "rounding to cents is done now", desk="eng")
            later = await recall.rank(store, desk, "rounding cents")
        finally:
            store.close()
        assert first.ranked == again.ranked and first.read == 4
        assert calls[:2] == [4, 1]  # the desk once and the goal once, remembered after
        assert later.read == 5 and calls[2:] == [1]  # then only the one new row
        assert later.ranked[0].sequence == 5

    asyncio.run(scenario())


def test_a_desk_index_extended_by_posts_ranks_as_one_read_afresh(tmp_path: Path) -> None:
    async def scenario() -> tuple[list, list]:
        store = open_store(f"sqlite:///{tmp_path / 'rooms.db'}")
        try:
            decision = await _desk(store, chatter=3)
            desk = (await store.desks()).resolve("eng")
            await store.post("agent:bob", f"!pin ^{decision + 1}", desk="eng")
            kept = DeskRecall()
            await kept.rank(store, desk, "rounding cents")
            await store.post("agent:bob", "cents rounding is tested", desk="eng", parent=decision)
            await store.post("agent:alice", f"!pin ^{decision} #rounding", desk="eng")
            await store.post("agent:bob", "rounding cents again", desk="eng")
            grown = await kept.rank(store, desk, "rounding cents")
            fresh = await DeskRecall().rank(store, desk, "rounding cents")
        finally:
            store.close()
        return list(grown.ranked), list(fresh.ranked)

    grown, fresh = asyncio.run(scenario())
    assert grown == fresh
    assert sum("pinned" in r.reasons for r in grown) == 2  # pinned before and after


def test_messages_that_do_not_fit_are_listed_with_why(tmp_path: Path) -> None:
    async def scenario() -> None:
        store = open_store(f"sqlite:///{tmp_path / 'rooms.db'}")
        try:
            await _desk(store, chatter=0)
            desk = (await store.desks()).resolve("eng")
            ranking = await DeskRecall().rank(store, desk, "apply_discount cents")
        finally:
            store.close()
        nothing = choose_messages(ranking, 0, lambda row: count_tokens(row.content))
        assert nothing.sent == () and {why for _, why in nothing.ignored} == {"over_budget"}
        room = choose_messages(ranking, 10_000, lambda row: count_tokens(row.content))
        assert room.tokens == sum(count_tokens(row.content) for _, row, _ in room.sent)

    asyncio.run(scenario())


def test_a_bad_budget_is_refused_before_anything_is_read(tmp_path: Path) -> None:
    from coderooms.focus.errors import InvalidBudget

    async def scenario() -> None:
        store = open_store(f"sqlite:///{tmp_path / 'rooms.db'}")
        try:
            await _desk(store, chatter=0)
            desk = (await store.desks()).resolve("eng")

            async def never(_: int) -> dict:
                raise AssertionError("code focus ran")

            with pytest.raises(InvalidBudget):
                await focus_over_desk(store, desk, DeskRecall(), GOAL, 0, "set", never)
        finally:
            store.close()

    asyncio.run(scenario())


def test_cli_focus_takes_a_desk(tmp_path: Path, workspace: Workspace) -> None:
    from coderooms.cli import main

    db = tmp_path / "rooms.db"

    async def seed() -> None:
        store = open_store(f"sqlite:///{db}")
        try:
            await _desk(store)
        finally:
            store.close()

    asyncio.run(seed())
    runner = CliRunner()
    args = ["--db", str(db), "focus", GOAL, "--repo", workspace.root, "--budget", "2000"]
    result = runner.invoke(main, [*args, "--desk", "eng", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["discussion"]["messages"][0]["content"] == DECISION
    text = runner.invoke(main, [*args, "--desk", "eng", "--no-context"])
    assert text.exit_code == 0 and '<room-data kind="discussion">' in text.stdout
    missing = runner.invoke(main, [*args, "--desk", "nowhere"])
    assert missing.exit_code != 0 and "Traceback" not in missing.output
    assert "nowhere" in missing.output


def test_a_desk_shows_what_teammates_hold_and_marks_code_they_hold(
    tmp_path: Path, workspace: Workspace
) -> None:
    async def scenario() -> None:
        store = open_store(f"sqlite:///{tmp_path / 'rooms.db'}")
        try:
            await _desk(store, chatter=0)
            await store.add_desk_member("eng", "bob")
            service = RoomService(store, lambda: workspace, offload=False)
            loaded = await service.focus("bob", GOAL, "set", 2000, session="b1")
            mine = await service.focus("alice", GOAL, "set", 2000, session="a1", desk="eng")
            status = await service.focus("alice", None, "status", session="a1", desk="eng")
            with pytest.raises(DeskNeedsGoal):
                await service.focus("alice", None, "reset", session="a1", desk="eng")
        finally:
            store.close()
        held = {item["id"] for item in loaded["focus_set"]}
        team = status["team"]
        assert team["members"] == ["bob"] and team["resident_total"] == len(held)
        assert {e["id"] for e in team["resident"]} == held
        assert all(e["agent"] == "bob" and e["session"] == "b1" for e in team["resident"])
        heats = [e["heat"] for e in team["resident"]]
        assert heats == sorted(heats, reverse=True)
        assert all(item["held_by"] == ["bob"] for item in mine["focus_set"] if item["id"] in held)
        assert "Held by teammates (@bob)" in render_focus(mine)
        sent = _published(FocusOut)(mine)
        assert FocusOut.model_validate(sent).model_dump(mode="json", exclude_unset=True) == sent

    asyncio.run(scenario())


def test_code_pinned_on_the_desk_is_pinned_in_each_members_session(
    tmp_path: Path, workspace: Workspace
) -> None:
    node = "shop/cart.py::apply_discount"

    async def scenario() -> tuple[dict, dict, dict]:
        store = open_store(f"sqlite:///{tmp_path / 'rooms.db'}")
        try:
            await _desk(store, chatter=0)
            service = RoomService(store, lambda: workspace, offload=False)
            await service.post("alice", f"!pin @{node} #money", "eng")
            args = {"session": "a1", "session_budget": 400, "desk": "eng"}
            first = await service.focus("alice", GOAL, "set", 400, **args)
            later = await service.focus("alice", "shipping cost by weight", "set", 400, **args)
            status = await service.focus("alice", None, "status", session="a1", desk="eng")
        finally:
            store.close()
        return first, later, status

    first, later, status = asyncio.run(scenario())
    assert node in {item["id"] for item in first["focus_set"]}
    assert node not in {entry["id"] for entry in later["page_out"] or []}
    assert node in {r["id"] for r in status["working_set"]["resident"]}
    assert status["team"]["code_pins"] == [node]
    assert node not in status["working_set"]["pins"]["nodes"]  # the desk's pin, not the session's


async def _grounding_around(
    db: Path, workspace: Workspace, posts: list[str | None]
) -> tuple[dict[str, int], dict[str, int], list[int]]:
    """Alice's residents' grounding counts before and after she posts the same finding
    once per entry of ``posts`` (each with that idempotency key), and the sequences."""
    store = open_store(f"sqlite:///{db}")
    try:
        await _desk(store, chatter=0)
        service = RoomService(store, lambda: workspace, offload=False)
        await service.focus("alice", GOAL, "set", 300, session="a1")  # apply_discount held
        before = await service.focus("alice", None, "status", session="a1")
        said = "Found it: apply_discount rounds too early."
        sequences = [
            (await service.post("alice", said, "eng", idempotency_key=key)).sequence
            for key in posts
        ]
        after = await service.focus("alice", None, "status", session="a1")
    finally:
        store.close()
    counts = [
        {r["id"]: r["grounded"] for r in status["working_set"]["resident"]}
        for status in (before, after)
    ]
    return counts[0], counts[1], sequences


def test_an_agents_post_naming_code_it_holds_grounds_it(
    tmp_path: Path, workspace: Workspace
) -> None:
    grounded, now, _ = asyncio.run(_grounding_around(tmp_path / "rooms.db", workspace, [None]))
    named = [node for node in now if node.endswith("::apply_discount")]
    assert named and all(now[n] == grounded[n] + 1 for n in named)
    assert all(now[n] == grounded[n] for n in now if n not in named)


def test_a_retried_post_grounds_what_it_names_only_once(
    tmp_path: Path, workspace: Workspace
) -> None:
    grounded, now, sequences = asyncio.run(
        _grounding_around(tmp_path / "rooms.db", workspace, ["retry-1", "retry-1"])
    )
    assert sequences[0] == sequences[1]
    named = [node for node in now if node.endswith("::apply_discount")]
    assert named and all(now[n] == grounded[n] + 1 for n in named)


BLAME = "The wrong amount after a coupon discount comes from shipping_cost in shop/shipping.py."
ASIDE = "Refactored shipping_cost in shop/shipping.py, no behaviour change."


async def _desk_saying(store, text: str) -> int:
    await store.add_agent("alice")
    await store.add_agent("bob")
    await store.create_desk("eng")
    await store.add_desk_member("eng", "alice")
    said = await store.post("agent:bob", text, desk="eng")
    for i in range(SESSION_WINDOW + 5):
        await store.post("agent:bob", f"standup note {i}: lunch menu and parking", desk="eng")
    return said.sequence


def _place(out: dict, node: str) -> tuple[int, dict]:
    ranked = sorted(out["focus_set"], key=lambda item: (-item["salience"], item["id"]))
    at = next(i for i, item in enumerate(ranked) if item["id"] == node)
    return at, ranked[at]


def test_code_the_desk_discussed_about_the_goal_gains_and_says_which_message(
    tmp_path: Path, workspace: Workspace
) -> None:
    node = "shop/shipping.py"  # loaded whole, shipping_cost with it

    async def scenario() -> tuple[int, dict, dict]:
        store = open_store(f"sqlite:///{tmp_path / 'rooms.db'}")
        try:
            said = await _desk_saying(store, BLAME)
            service = RoomService(store, lambda: workspace, offload=False)
            plain = await service.focus("alice", GOAL, "set", 4000)
            out = await service.focus("alice", GOAL, "set", 4000, desk="eng")
        finally:
            store.close()
        return said, plain, out

    said, plain, out = asyncio.run(scenario())
    _, before = _place(plain, node)
    _, after = _place(out, node)
    assert after["salience"] > 2 * before["salience"]
    assert f"discussed in message #{said}" in after["why"]
    assert "discussed" not in before["why"]
    tail = [entry["what"] for entry in out["ignored"]]
    plain_tail = [entry["what"] for entry in plain["ignored"]]
    symbol = node + "::shipping_cost"
    assert symbol in tail and (
        symbol not in plain_tail or tail.index(symbol) < plain_tail.index(symbol)
    )
    assert out["discussion"]["messages"][0]["sequence"] == said


def test_a_desk_that_only_names_code_leaves_the_code_ranking_as_it_was(
    tmp_path: Path, workspace: Workspace
) -> None:
    async def scenario() -> tuple[dict, dict]:
        store = open_store(f"sqlite:///{tmp_path / 'rooms.db'}")
        try:
            await _desk_saying(store, ASIDE)
            service = RoomService(store, lambda: workspace, offload=False)
            plain = await service.focus("alice", GOAL, "set", 4000)
            out = await service.focus("alice", GOAL, "set", 4000, desk="eng")
        finally:
            store.close()
        return plain, out

    plain, out = asyncio.run(scenario())

    def ranking(answer: dict) -> list[tuple[str, float, str]]:
        return [(i["id"], i["salience"], i["why"]) for i in answer["focus_set"]]

    assert ranking(out) == ranking(plain)


def test_cli_focus_with_a_desk_lifts_the_code_it_discussed(
    tmp_path: Path, workspace: Workspace
) -> None:
    from coderooms.cli import main

    db = tmp_path / "rooms.db"

    async def seed() -> int:
        store = open_store(f"sqlite:///{db}")
        try:
            return await _desk_saying(store, BLAME)
        finally:
            store.close()

    said = asyncio.run(seed())
    args = ["--db", str(db), "focus", GOAL, "--repo", workspace.root, "--budget", "4000"]
    result = CliRunner().invoke(main, [*args, "--desk", "eng", "--json"])
    assert result.exit_code == 0, result.output
    _, item = _place(json.loads(result.stdout), "shop/shipping.py")
    assert f"discussed in message #{said}" in item["why"]


def test_code_names_no_message_writes_give_the_ranking_just_made(tmp_path: Path) -> None:
    async def scenario() -> None:
        store = open_store(f"sqlite:///{tmp_path / 'rooms.db'}")
        try:
            await _desk(store, chatter=3)
            desk = (await store.desks()).resolve("eng")
            recall = DeskRecall()
            first = await recall.rank(store, desk, "rounding cents")
            unnamed = await recall.rank(
                store, desk, "rounding cents", code_names={"ship_parcel": "x.py::ship_parcel"}
            )
            named = await recall.rank(
                store, desk, "rounding cents", code_names={"apply_discount": "shop.py::a"}
            )
        finally:
            store.close()
        assert unnamed is first
        assert named is not first
        assert "names salient code: apply_discount" in named.ranked[0].reasons

    asyncio.run(scenario())


def test_a_focus_may_avoid_or_prefer_what_teammates_hold(
    tmp_path: Path, workspace: Workspace
) -> None:
    async def scenario() -> tuple[dict, dict, dict, dict, dict]:
        store = open_store(f"sqlite:///{tmp_path / 'rooms.db'}")
        try:
            await _desk(store, chatter=0)
            await store.add_desk_member("eng", "bob")
            service = RoomService(store, lambda: workspace, offload=False)
            bobs = await service.focus("bob", GOAL, "set", 2000, session="b1")
            avoided = await service.focus(
                "alice", GOAL, "set", 2000, session="a1", desk="eng", team="avoid"
            )
            plain = await service.focus("alice", GOAL, "set", 2000, desk="eng")
            shipping = await service.focus(
                "bob", "shipping cost per kilogram", "set", 2000, session="b2"
            )
            preferred = await service.focus("alice", GOAL, "set", 2000, desk="eng", team="prefer")
            for bad, desk in (("avoid", None), ("ignore", "eng")):
                with pytest.raises((TeamNeedsDesk, UnknownTeamChoice)) as refused:
                    await service.focus("alice", GOAL, "set", 2000, desk=desk, team=bad)
                assert bad in str(refused.value)
        finally:
            store.close()
        return bobs, avoided, plain, preferred, shipping

    bobs, avoided, plain, preferred, shipping = asyncio.run(scenario())
    held = {item["id"] for item in bobs["focus_set"]}
    assert held and not held & {item["id"] for item in avoided["focus_set"]}
    tail = {e["what"]: e for e in avoided["ignored"] if e["why"] == "held_by_teammate"}
    assert tail and set(tail) <= held and all(e["detail"] == "bob" for e in tail.values())
    assert avoided["team"]["choice"] == "avoid" and plain["team"]["choice"] is None
    assert held & {item["id"] for item in plain["focus_set"]}  # without the choice: sent
    before = {i["id"]: i for i in plain["focus_set"]}
    after = {i["id"]: i for i in preferred["focus_set"]}
    assert "shop/shipping.py" in {i["id"] for i in shipping["focus_set"]}
    lifted = after["shop/shipping.py"]  # bob's, weakly linked to alice's goal: it gains
    assert "held by teammate bob" in lifted["why"] and preferred["team"]["choice"] == "prefer"
    assert lifted["salience"] > before["shop/shipping.py"]["salience"]
    for answer in (avoided, preferred):
        sent = _published(FocusOut)(answer)
        assert FocusOut.model_validate(sent).model_dump(mode="json", exclude_unset=True) == sent


def test_cli_focus_team_needs_a_desk(tmp_path: Path, workspace: Workspace) -> None:
    from coderooms.cli import main

    runner = CliRunner()
    args = ["--db", str(tmp_path / "rooms.db"), "focus", GOAL, "--repo", workspace.root]
    alone = runner.invoke(main, [*args, "--team", "avoid"])
    assert alone.exit_code != 0 and "Traceback" not in alone.output
    assert "give the desk too" in alone.output
    unknown = runner.invoke(main, [*args, "--desk", "eng", "--team", "ignore"])
    assert unknown.exit_code != 0 and "Traceback" not in unknown.output
