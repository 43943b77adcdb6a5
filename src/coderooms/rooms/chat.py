"""Chat identity: which desk a stored chat id belongs to."""

from __future__ import annotations

from operator import attrgetter
from typing import Protocol, TypeVar

_GENERAL_ALIASES = ("main", "general")


def is_general_chat(chat_id: str | None) -> bool:
    """True for the default desk: no id, an empty id, or ``main``/``General`` in any
    ASCII case."""
    if chat_id is None or chat_id == "":
        return True
    return chat_id.isascii() and chat_id.lower() in _GENERAL_ALIASES


def same_conversation(a: str | None, b: str | None) -> bool:
    """Whether two chat ids name the same desk: both General, or exactly equal."""
    general_a, general_b = is_general_chat(a), is_general_chat(b)
    if general_a or general_b:
        return general_a and general_b
    return a == b


def in_desk(chat_id: str | None, desk_id: str, desk_name: str) -> bool:
    """Whether a row stored under ``chat_id`` belongs to the desk {desk_id, desk_name}."""
    return same_conversation(chat_id, desk_id) or same_conversation(chat_id, desk_name)


class _Stored(Protocol):
    @property
    def chat_id(self) -> str | None: ...


_Row = TypeVar("_Row", bound=_Stored)
_chat_id_of = attrgetter("chat_id")


class DeskTest:
    """:func:`in_desk` for one desk, working out each distinct chat id once: a scan meets
    the same few ids over and over. Remembers at most one answer per id it was asked
    about, so it lives as long as the scan that uses it."""

    __slots__ = ("_answers", "desk_id", "desk_name")

    def __init__(self, desk_id: str, desk_name: str) -> None:
        self.desk_id = desk_id
        self.desk_name = desk_name
        self._answers: dict[str | None, bool] = {}

    def __call__(self, chat_id: str | None) -> bool:
        answer = self._answers.get(chat_id)
        if answer is None:
            answer = self._answers[chat_id] = in_desk(chat_id, self.desk_id, self.desk_name)
        return answer

    def keep(self, rows: tuple[_Row, ...]) -> tuple[_Row, ...]:
        """The rows of ``rows`` stored under this desk, in order. A page of one
        desk's view holds a chat id or two, so each distinct id is tested rather than
        each row: a page wholly in the desk comes back as it is."""
        verdicts = [self(chat_id) for chat_id in set(map(_chat_id_of, rows))]
        if all(verdicts):
            return rows
        if not any(verdicts):
            return ()
        return tuple(row for row in rows if self(row.chat_id))
