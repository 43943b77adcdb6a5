"""Scripted logs for walk and projection tests: they answer exactly what a test says,
well-formed or not, and remember every request."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence

from hypothesis import strategies as st

from coderooms.rooms.records import Agent, LogMessage, SessionPage

ALICE = Agent("alice", "Alice")


def row(
    sequence: int, content: str = "hi", chat_id: str | None = "eng", parent: int | None = None
) -> LogMessage:
    return LogMessage(sequence, ALICE, content, chat_id=chat_id, parent=parent)


def page(sequences: Sequence[int], next_before: int | None = None) -> SessionPage:
    return SessionPage(tuple(row(s) for s in sequences), next_before)


class ScriptedLog:
    """Answers read N with the N-th scripted page (or raises it if it is an exception)."""

    def __init__(self, *answers: SessionPage | Exception) -> None:
        self._answers = list(answers)
        self.requests: list[tuple[int | None, int]] = []

    async def read_before(self, before: int | None, limit: int) -> SessionPage:
        self.requests.append((before, limit))
        if len(self.requests) > len(self._answers):
            raise AssertionError(f"unexpected read #{len(self.requests)} ({before}, {limit})")
        answer = self._answers[len(self.requests) - 1]
        if isinstance(answer, Exception):
            raise answer
        return answer


class CountingLog:
    """Wraps a real log and records each request it forwards."""

    def __init__(self, inner: object) -> None:
        self._inner = inner
        self.requests: list[tuple[int | None, int]] = []

    async def read_before(self, before: int | None, limit: int) -> SessionPage:
        self.requests.append((before, limit))
        return await self._inner.read_before(before, limit)  # type: ignore[attr-defined,no-any-return]


def fed_in_batches(
    extend: Callable[[Sequence[LogMessage]], None], rows: Sequence[LogMessage], data: st.DataObject
) -> Iterator[int]:
    """Hand ``rows`` to a fold's ``extend`` in batches hypothesis draws; after each batch,
    yield how many rows were taken so far."""
    taken = 0
    while taken < len(rows):
        batch = data.draw(st.integers(min_value=1, max_value=len(rows) - taken))
        extend(rows[taken : taken + batch])
        taken += batch
        yield taken
