"""Wire forms of the log records are pinned, and decoding is strict."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from coderooms import (
    Agent,
    Conversation,
    LogMessage,
    Operator,
    Person,
    Pin,
    SessionContext,
    SessionMessage,
    SessionPage,
    SessionQuery,
    System,
    ThreadLine,
    WireError,
    from_wire,
    to_wire,
)
from coderooms.rooms.records import SessionAuthor


def roundtrip(tp: object, value: object) -> object:
    return from_wire(tp, json.loads(json.dumps(to_wire(value))))


@pytest.mark.parametrize(
    ("author", "wire"),
    [
        (Operator(), {"type": "operator"}),
        (Person("ana", "Ana"), {"type": "person", "id": "ana", "label": "Ana"}),
        (Agent("coder", "Coder"), {"type": "agent", "id": "coder", "label": "Coder"}),
        (
            System("deploy", "Deploy bot"),
            {"type": "system", "kind": "deploy", "label": "Deploy bot"},
        ),
    ],
)
def test_authors_are_tagged_by_type(author: SessionAuthor, wire: dict[str, str]) -> None:
    assert to_wire(author) == wire
    assert from_wire(SessionAuthor, wire) == author


def test_log_message_wire_form_is_pinned() -> None:
    row = LogMessage(7, Agent("a", "A"), "hi", chat_id="eng", parent=3)
    assert to_wire(row) == {
        "sequence": 7,
        "chat_id": "eng",
        "parent": 3,
        "author": {"type": "agent", "id": "a", "label": "A"},
        "content": "hi",
    }
    assert roundtrip(LogMessage, row) == row


def test_page_query_and_message_wire_forms_are_pinned() -> None:
    page = SessionPage((LogMessage(2, Operator(), "x"),), next_before=2)
    assert to_wire(page) == {
        "messages": [
            {
                "sequence": 2,
                "author": {"type": "operator"},
                "content": "x",
                "chat_id": None,
                "parent": None,
            }
        ],
        "next_before": 2,
    }
    query = SessionQuery(Conversation("eng", "Engineering"), before=10, window=5)
    assert to_wire(query) == {
        "conversation": {"desk_id": "eng", "desk_name": "Engineering", "thread_root": None},
        "before": 10,
        "window": 5,
    }
    message = SessionMessage(4, Person("p", "Pat"), "body")
    assert to_wire(message) == {
        "sequence": 4,
        "author": {"type": "person", "id": "p", "label": "Pat"},
        "content": "body",
    }
    for tp, value in ((SessionPage, page), (SessionQuery, query), (SessionMessage, message)):
        assert roundtrip(tp, value) == value


def test_a_missing_required_field_is_an_error_not_a_default() -> None:
    with pytest.raises(WireError, match="missing field 'thread_root'"):
        from_wire(Conversation, {"desk_id": "a", "desk_name": "A"})


def test_a_wrong_type_is_an_error() -> None:
    wire = {
        "sequence": "7",
        "author": {"type": "operator"},
        "content": "",
        "chat_id": None,
        "parent": None,
    }
    with pytest.raises(WireError, match="expected an integer"):
        from_wire(LogMessage, wire)


def test_a_boolean_is_not_a_sequence() -> None:
    with pytest.raises(WireError):
        from_wire(
            SessionQuery,
            {
                "conversation": {"desk_id": "a", "desk_name": "a", "thread_root": None},
                "before": True,
                "window": 3,
            },
        )


def test_an_unknown_tag_is_an_error() -> None:
    with pytest.raises(WireError, match="unknown type 'robot'"):
        from_wire(SessionAuthor, {"type": "robot", "id": "r", "label": "R"})


def test_wire_error_is_a_value_error() -> None:
    assert issubclass(WireError, ValueError)


def test_session_context_pins_may_be_absent_from_an_older_record() -> None:
    assert from_wire(SessionContext, {"threads": [], "notes": []}) == SessionContext()
    with pytest.raises(WireError):
        from_wire(SessionContext, {"pins": []})


def test_session_context_wire_form_is_pinned() -> None:
    context = SessionContext(
        threads=(ThreadLine(1, "opening", 2, 5),),
        pins=(Pin(1, 4, Agent("a", "A"), "decision", None, "text"),),
    )
    assert to_wire(context) == {
        "threads": [{"root": 1, "opening": "opening", "replies": 2, "latest": 5, "landed": None}],
        "pins": [
            {
                "sequence": 1,
                "pinned_at": 4,
                "pinned_by": {"type": "agent", "id": "a", "label": "A"},
                "label": "decision",
                "note": None,
                "excerpt": "text",
            }
        ],
        "notes": [],
    }
    assert roundtrip(SessionContext, context) == context


def test_conversations_are_equivalent_by_general_identity_or_exact_id() -> None:
    assert Conversation("main", "x").equivalent_to(Conversation("General", "General"))
    assert Conversation("eng", "a").equivalent_to(Conversation("eng", "b"))
    assert not Conversation("eng", "a").equivalent_to(Conversation("ENG", "a"))
    assert not Conversation("eng", "a", 1).equivalent_to(Conversation("eng", "a", 2))
    assert not Conversation("General", "General").equivalent_to(Conversation("eng", "General"))


authors = st.one_of(
    st.just(Operator()),
    st.builds(Person, st.text(), st.text()),
    st.builds(Agent, st.text(), st.text()),
    st.builds(System, st.text(), st.text()),
)
rows = st.builds(
    LogMessage,
    st.integers(min_value=0, max_value=2**63),
    authors,
    st.text(),
    st.one_of(st.none(), st.text()),
    st.one_of(st.none(), st.integers(min_value=0, max_value=2**63)),
)


@given(st.lists(rows, max_size=5), st.one_of(st.none(), st.integers(min_value=0)))
def test_any_page_roundtrips_through_json(messages: list[LogMessage], cursor: int | None) -> None:
    page = SessionPage(tuple(messages), cursor)
    assert roundtrip(SessionPage, page) == page
