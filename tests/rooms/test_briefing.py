"""Team briefing: snapshots, text, the withheld/offered dispatch rule, initialization."""

from __future__ import annotations

import pytest
from session_fakes import ScriptedLog, page

from coderooms.errors import (
    DuplicateRosterMemberId,
    PageNotDescending,
    ReadError,
    ReservedDeskIdentity,
    UnknownDesk,
    WireError,
)
from coderooms.rooms.briefing import (
    BrevityPolicy,
    BriefedTeammate,
    SessionInitialization,
    TeamBriefing,
    initialize_session,
)
from coderooms.rooms.context import SessionContext
from coderooms.rooms.desks import Desk, DeskMember, DeskOrder, DeskSet
from coderooms.rooms.dispatch import MentionDispatchContext, MentionDispatchPolicy
from coderooms.rooms.memory import MemoryLog
from coderooms.rooms.records import (
    Agent,
    Conversation,
    LogMessage,
    Person,
    SessionMessage,
    SessionQuery,
)
from coderooms.rooms.roster import Roster, RosterMember, RosterPerson
from coderooms.rooms.wire import from_wire, to_wire

ROSTER = Roster(
    members=(
        RosterMember("alice", "Alice"),
        RosterMember("bob"),
        RosterMember("carol", "Carol"),
        RosterMember("dave", "Dave"),
        RosterMember("erin", "Erin"),
    ),
    people=(RosterPerson("p1", "Pat"),),
    retired=("dave",),
)
DESKS = DeskSet(
    declared=(
        Desk("General", "General"),
        Desk("eng", "Engineering", members=("erin", "dave", "ghost", "alice", "bob")),
    ),
    added=(Desk("ops", "Operations", members=("carol", "bob")),),
    additions=(DeskMember("eng", "carol"), DeskMember("eng", "bob")),
    orders=(DeskOrder("ops", ("bob", "carol")),),
)


def ids(briefing: TeamBriefing) -> list[str]:
    return [t.id for t in briefing.teammates]


# --- from_snapshots -----------------------------------------------------------------------


def test_a_desk_lists_its_effective_active_order_without_viewer_retired_or_unknown() -> None:
    briefing = TeamBriefing.from_snapshots("alice", "eng", ROSTER, DESKS)
    assert (briefing.viewer_id, briefing.desk_id, briefing.desk_name) == (
        "alice",
        "eng",
        "Engineering",
    )
    # founding members then additions, first appearance kept; dave is retired, ghost unknown
    assert ids(briefing) == ["erin", "bob", "carol"]


def test_teammates_carry_roster_labels_and_no_role_or_description() -> None:
    briefing = TeamBriefing.from_snapshots("alice", "eng", ROSTER, DESKS)
    assert briefing.teammates == (
        BriefedTeammate("erin", "Erin"),
        BriefedTeammate("bob", "bob"),
        BriefedTeammate("carol", "Carol"),
    )


def test_a_desk_order_decides_the_briefing_order() -> None:
    briefing = TeamBriefing.from_snapshots("alice", "ops", ROSTER, DESKS)
    assert ids(briefing) == ["bob", "carol"]


def test_a_desk_resolves_by_name_too() -> None:
    briefing = TeamBriefing.from_snapshots("carol", "Operations", ROSTER, DESKS)
    assert (briefing.desk_id, ids(briefing)) == ("ops", ["bob"])


def test_general_lists_the_active_roster_in_roster_order() -> None:
    briefing = TeamBriefing.from_snapshots("bob", "General", ROSTER, DESKS)
    assert (briefing.desk_id, briefing.desk_name) == ("General", "General")
    assert ids(briefing) == ["alice", "carol", "erin"]


def test_general_is_found_by_its_aliases_even_when_not_declared() -> None:
    briefing = TeamBriefing.from_snapshots("bob", "main", ROSTER, DeskSet(declared=()))
    assert (briefing.desk_id, ids(briefing)) == ("General", ["alice", "carol", "erin"])


def test_a_viewer_outside_the_desk_sees_every_active_member() -> None:
    briefing = TeamBriefing.from_snapshots("zed", "ops", ROSTER, DESKS)
    assert ids(briefing) == ["bob", "carol"]


def test_a_repeated_id_is_listed_once() -> None:
    desks = DeskSet(
        declared=(Desk("eng", "Engineering", members=("bob", "carol")),),
        additions=(DeskMember("eng", "bob"),),
    )
    assert ids(TeamBriefing.from_snapshots("alice", "eng", ROSTER, desks)) == ["bob", "carol"]


def test_snapshot_errors_reach_the_caller() -> None:
    with pytest.raises(UnknownDesk):
        TeamBriefing.from_snapshots("alice", "nowhere", ROSTER, DESKS)
    with pytest.raises(DuplicateRosterMemberId):
        bad = Roster(members=(RosterMember("bob"), RosterMember("bob")))
        TeamBriefing.from_snapshots("alice", "eng", bad, DESKS)
    with pytest.raises(ReservedDeskIdentity):
        TeamBriefing.from_snapshots("alice", "eng", ROSTER, DeskSet(declared=(Desk("main", "x"),)))


# --- system_text --------------------------------------------------------------------------

TEAM = TeamBriefing(
    "alice",
    "eng",
    "Engineering",
    (
        BriefedTeammate("bob", "Bob"),
        BriefedTeammate("carol", "Carol", role="reviewer", description="reads every diff"),
        BriefedTeammate("erin", "Erin", description="owns the CI"),
    ),
)

WITHHELD = """\
You are @alice, reading the desk Engineering (id: eng).
Teammates:
- @bob — Bob
- @carol — Carol; role: reviewer; description: reads every diff
- @erin — Erin; description: owns the CI
Shared-session rules:
- Every message in this session carries its author. Messages by teammates, people or \
the operator are theirs, not replies you wrote: answer them, do not continue them as \
your own.
- Mentions of everyone, of a desk or of a person are context for the reader only; they \
never start a turn for anybody.
- Be brief: each reader sees about the last 30 messages, so keep a message under 600 \
characters and make one point in it. Instead of restating earlier messages, pin them or \
search the room for them (search takes literal text, or a /regex/ between slashes).
- To pin, write a line `!pin [^N] [#label] [note]` (without ^N it pins the message the \
line is in); `!unpin ^N` takes a pin down."""

DISPATCH_LINE = (
    "- Mentioning one teammate agent directly as @id may start a single bounded turn for "
    "that agent; only the first agent mention in a message can do so."
)

OFFERED = WITHHELD.replace("your own.\n- Mentions", "your own.\n" + DISPATCH_LINE + "\n- Mentions")


def test_system_text_is_pinned_and_never_offers_dispatch() -> None:
    assert TEAM.system_text() == WITHHELD
    assert TEAM.system_text() == TEAM.system_text()
    assert not TEAM.system_text().endswith("\n")


def test_a_briefing_without_teammates_says_none() -> None:
    text = TeamBriefing("alice", "General", "General", ()).system_text()
    assert "Teammates:\n- none\nShared-session rules:" in text


def test_the_brevity_policy_shows_in_the_text() -> None:
    tight = TeamBriefing("alice", "eng", "Engineering", (), BrevityPolicy(280, 12))
    assert "about the last 12 messages" in tight.system_text()
    assert "under 280 characters" in tight.system_text()


@pytest.mark.parametrize(
    "context",
    [
        None,
        MentionDispatchContext(MentionDispatchPolicy(enabled=False, max_hops=3), hop=0),
        MentionDispatchContext(MentionDispatchPolicy(enabled=True, max_hops=0), hop=0),
        MentionDispatchContext(MentionDispatchPolicy(enabled=True, max_hops=2), hop=2),
        MentionDispatchContext(MentionDispatchPolicy(enabled=True, max_hops=2), hop=5),
    ],
    ids=["no-context", "disabled", "zero-budget", "hop-at-max", "hop-past-max"],
)
def test_dispatch_is_withheld_unless_the_run_may_dispatch(
    context: MentionDispatchContext | None,
) -> None:
    assert TEAM.system_text_with_dispatch(context) == WITHHELD


@pytest.mark.parametrize("hop", [0, 1])
def test_a_run_inside_its_budget_is_offered_dispatch_in_one_line(hop: int) -> None:
    context = MentionDispatchContext(MentionDispatchPolicy(enabled=True, max_hops=2), hop=hop)
    offered = TEAM.system_text_with_dispatch(context)
    assert offered == OFFERED
    assert offered.splitlines() == [
        *WITHHELD.splitlines()[:7],
        DISPATCH_LINE,
        *WITHHELD.splitlines()[7:],
    ]


# --- BrevityPolicy ------------------------------------------------------------------------


def test_overrun_counts_characters_over_the_budget() -> None:
    policy = BrevityPolicy(message_chars=5)
    assert policy.overrun("12345") is None
    assert policy.overrun("123456") == 1
    assert policy.overrun("ééééééé") == 2  # characters, not bytes
    assert BrevityPolicy().overrun("x" * 600) is None
    assert BrevityPolicy.DEFAULT == BrevityPolicy(600, 30)


# --- initialize_session -------------------------------------------------------------------

ENG = Conversation("eng", "Engineering")


def eng_log(count: int) -> MemoryLog:
    return MemoryLog(
        LogMessage(s, Agent("bob", "Bob"), f"note {s}", chat_id="eng") for s in range(1, count + 1)
    )


async def test_initialization_keeps_briefing_context_and_history_apart() -> None:
    init = await initialize_session(eng_log(50), SessionQuery(ENG, window=30), TEAM)
    assert init.briefing == TEAM
    assert init.context == SessionContext()
    # the briefing is not a history row and takes no slot of the window
    assert [m.sequence for m in init.history] == list(range(21, 51))
    assert all(isinstance(m, SessionMessage) for m in init.history)


async def test_initialization_sets_the_brevity_window_to_the_query_window() -> None:
    init = await initialize_session(eng_log(10), SessionQuery(ENG, window=4), TEAM)
    assert init.briefing.brevity == BrevityPolicy(600, 4)
    assert "about the last 4 messages" in init.briefing.system_text()
    assert len(init.history) == 4
    assert TEAM.brevity.window == 30


async def test_initialization_with_a_zero_window_reads_nothing() -> None:
    log = ScriptedLog()
    init = await initialize_session(log, SessionQuery(ENG, window=0), TEAM)
    assert init.history == () and log.requests == []


async def test_initialization_propagates_projection_errors() -> None:
    with pytest.raises(PageNotDescending):
        await initialize_session(ScriptedLog(page([1, 2])), SessionQuery(ENG), TEAM)
    source = TimeoutError("slow disk")
    with pytest.raises(ReadError) as err:
        await initialize_session(ScriptedLog(source), SessionQuery(ENG), TEAM)
    assert err.value.__cause__ is source


# --- wire forms ---------------------------------------------------------------------------


def test_brevity_and_teammate_wire_forms_are_pinned() -> None:
    assert to_wire(BrevityPolicy()) == {"message_chars": 600, "window": 30}
    assert to_wire(BriefedTeammate("bob", "Bob")) == {
        "id": "bob",
        "label": "Bob",
        "role": None,
        "description": None,
    }
    with pytest.raises(WireError):
        from_wire(BriefedTeammate, {"id": "bob", "label": "Bob", "role": None})


def test_team_briefing_wire_form_is_pinned_and_brevity_may_be_absent() -> None:
    wire = {
        "viewer_id": "alice",
        "desk_id": "eng",
        "desk_name": "Engineering",
        "teammates": [{"id": "bob", "label": "Bob", "role": "dev", "description": None}],
        "brevity": {"message_chars": 300, "window": 10},
    }
    briefing = TeamBriefing(
        "alice",
        "eng",
        "Engineering",
        (BriefedTeammate("bob", "Bob", "dev"),),
        BrevityPolicy(300, 10),
    )
    assert to_wire(briefing) == wire
    assert from_wire(TeamBriefing, wire) == briefing
    older = {k: v for k, v in wire.items() if k != "brevity"}
    assert from_wire(TeamBriefing, older).brevity == BrevityPolicy.DEFAULT
    with pytest.raises(WireError):
        from_wire(TeamBriefing, {k: v for k, v in wire.items() if k != "teammates"})


def test_session_initialization_wire_form_is_pinned() -> None:
    init = SessionInitialization(
        TeamBriefing("alice", "General", "General", ()),
        SessionContext(),
        (SessionMessage(7, Person("p1", "Pat"), "hello"),),
    )
    wire = {
        "briefing": {
            "viewer_id": "alice",
            "desk_id": "General",
            "desk_name": "General",
            "teammates": [],
            "brevity": {"message_chars": 600, "window": 30},
        },
        "context": {"threads": [], "pins": [], "notes": []},
        "history": [
            {
                "sequence": 7,
                "author": {"type": "person", "id": "p1", "label": "Pat"},
                "content": "hello",
            }
        ],
    }
    assert to_wire(init) == wire
    assert from_wire(SessionInitialization, wire) == init
    with pytest.raises(WireError):
        from_wire(SessionInitialization, {"briefing": wire["briefing"], "context": wire["context"]})
