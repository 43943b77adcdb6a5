"""Chat identity: the General aliases, same_conversation, in_desk, equivalent_to."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from coderooms.rooms.chat import DeskTest, in_desk, is_general_chat, same_conversation
from coderooms.rooms.records import Conversation, LogMessage, System


@pytest.mark.parametrize(
    "chat_id", [None, "", "main", "MAIN", "Main", "general", "General", "GENERAL"]
)
def test_general_aliases(chat_id: str | None) -> None:
    assert is_general_chat(chat_id)


@pytest.mark.parametrize(
    "chat_id", ["eng", " main", "main ", "General!", "generals", "MAİN", "\u0261eneral"]
)
def test_other_ids_are_not_general(chat_id: str) -> None:
    assert not is_general_chat(chat_id)


def test_all_general_spellings_are_one_conversation() -> None:
    assert same_conversation(None, "General")
    assert same_conversation("main", "")
    assert same_conversation("GENERAL", "Main")


def test_general_never_equals_a_named_desk() -> None:
    assert not same_conversation("main", "eng")
    assert not same_conversation("eng", None)


def test_named_desks_compare_exactly() -> None:
    assert same_conversation("eng", "eng")
    assert not same_conversation("engineering", "Engineering")


def test_row_is_in_desk_by_id_or_display_name() -> None:
    assert in_desk("engineering", "engineering", "Engineering")
    assert in_desk("Engineering", "engineering", "Engineering")
    assert not in_desk("ENGINEERING", "engineering", "Engineering")


def test_general_rows_are_in_the_general_desk() -> None:
    assert in_desk(None, "General", "General")
    assert in_desk("main", "General", "General")
    assert not in_desk(None, "eng", "Engineering")


def test_equivalent_conversations_share_thread_and_desk_id() -> None:
    assert Conversation("eng", "A").equivalent_to(Conversation("eng", "B"))


def test_equivalence_ignores_desk_name() -> None:
    assert Conversation("eng", "Engineering", 3).equivalent_to(Conversation("eng", "Eng", 3))


def test_different_threads_are_not_equivalent() -> None:
    assert not Conversation("eng", "E", 1).equivalent_to(Conversation("eng", "E", 2))
    assert not Conversation("eng", "E").equivalent_to(Conversation("eng", "E", 2))


def test_all_general_conversations_are_equivalent() -> None:
    assert Conversation("main", "x").equivalent_to(Conversation("General", "General"))
    assert Conversation("", "").equivalent_to(Conversation("general", "General"))


def test_general_is_not_equivalent_to_a_desk_named_general() -> None:
    assert not Conversation("General", "General").equivalent_to(Conversation("eng", "General"))


def test_desk_ids_compare_case_sensitively() -> None:
    assert not Conversation("eng", "E").equivalent_to(Conversation("ENG", "E"))


def test_equivalence_is_symmetric() -> None:
    a, b = Conversation("main", "M", 4), Conversation("eng", "E", 4)
    assert a.equivalent_to(b) == b.equivalent_to(a)


_IDS = st.none() | st.sampled_from(["", "main", "MAIN", "General", "eng", "Eng", "ops", "MAİN"])


@given(_IDS.filter(lambda i: i is not None), _IDS.filter(lambda i: i is not None), st.lists(_IDS))
def test_a_desk_test_answers_like_in_desk_every_time(
    desk_id: str, desk_name: str, chat_ids: list[str | None]
) -> None:
    test = DeskTest(desk_id, desk_name)
    for chat_id in chat_ids + chat_ids:  # asked again, it gives the answer it remembered
        assert test(chat_id) == in_desk(chat_id, desk_id, desk_name)


def test_a_desk_test_tells_general_rows_from_desk_rows() -> None:
    general, eng = DeskTest("General", "General"), DeskTest("eng", "Engineering")
    assert [general(c) for c in (None, "main", "eng")] == [True, True, False]
    assert [eng(c) for c in (None, "Engineering", "eng", "ENG")] == [False, True, True, False]


@given(_IDS.filter(lambda i: i is not None), _IDS.filter(lambda i: i is not None), st.lists(_IDS))
def test_a_desk_test_keeps_the_rows_in_desk_in_order(
    desk_id: str, desk_name: str, chat_ids: list[str | None]
) -> None:
    rows = tuple(
        LogMessage(n, System("note", "Note"), "x", chat_id=c) for n, c in enumerate(chat_ids)
    )
    kept = DeskTest(desk_id, desk_name).keep(rows)
    assert kept == tuple(row for row in rows if in_desk(row.chat_id, desk_id, desk_name))
