"""Chat roles per viewer and transcript lines."""

from __future__ import annotations

import pytest

from coderooms.errors import WireError
from coderooms.rooms.records import Agent, Operator, Person, SessionMessage, System
from coderooms.rooms.render import (
    ChatTurn,
    render_for_viewer,
    render_transcript,
    transcript_line,
)
from coderooms.rooms.wire import from_wire, to_wire

ALICE = Agent("alice", "Alice")
BOB = Agent("bob", "Bob the Builder")
HISTORY = [
    SessionMessage(1, Person("p7", "Dana"), "Can someone look at the flaky test?"),
    SessionMessage(2, ALICE, "On it."),
    SessionMessage(3, BOB, "  I saw it too\nyesterday "),
    SessionMessage(4, Operator(), "Thanks both."),
    SessionMessage(5, System("ci", "CI"), "build 42 failed"),
    SessionMessage(6, ALICE, "Fixed in 9f3c."),
]


def test_own_rows_are_assistant_turns_and_others_are_attributed_user_turns() -> None:
    assert render_for_viewer(HISTORY, "alice") == [
        ChatTurn("user", "Dana: Can someone look at the flaky test?"),
        ChatTurn("assistant", "On it."),
        ChatTurn("user", "Bob the Builder:   I saw it too\nyesterday "),
        ChatTurn("user", "operator: Thanks both."),
        ChatTurn("user", "CI: build 42 failed"),
        ChatTurn("assistant", "Fixed in 9f3c."),
    ]


def test_another_viewer_sees_the_same_rows_with_roles_swapped() -> None:
    turns = render_for_viewer(HISTORY, "bob")
    assert [t.role for t in turns] == ["user", "user", "assistant", "user", "user", "user"]
    assert turns[1] == ChatTurn("user", "Alice: On it.")
    assert turns[2] == ChatTurn("assistant", "  I saw it too\nyesterday ")


def test_a_person_sharing_the_viewer_id_is_not_the_viewer() -> None:
    turns = render_for_viewer([SessionMessage(1, Person("alice", "Alice P."), "hi")], "alice")
    assert turns == [ChatTurn("user", "Alice P.: hi")]


def test_an_empty_history_renders_no_turns() -> None:
    assert render_for_viewer([], "alice") == []


def test_transcript_lines_name_each_kind_of_author() -> None:
    assert render_transcript(HISTORY) == (
        "[1] Dana: Can someone look at the flaky test?\n"
        "[2] @alice: On it.\n"
        "[3] @bob:   I saw it too\nyesterday \n"
        "[4] operator: Thanks both.\n"
        "[5] system/ci: build 42 failed\n"
        "[6] @alice: Fixed in 9f3c."
    )
    assert transcript_line(HISTORY[1]) == "[2] @alice: On it."
    assert render_transcript([]) == ""


def test_chat_turn_wire_form_is_pinned() -> None:
    assert to_wire(ChatTurn("assistant", "ok")) == {"role": "assistant", "content": "ok"}
    assert from_wire(ChatTurn, {"role": "user", "content": "x"}) == ChatTurn("user", "x")
    with pytest.raises(WireError):
        from_wire(ChatTurn, {"role": "system", "content": "x"})
    with pytest.raises(WireError):
        from_wire(ChatTurn, {"role": "user"})
