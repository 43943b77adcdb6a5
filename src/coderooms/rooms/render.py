"""Turning a projected history into what a reader is handed.

Two renderings: :func:`render_for_viewer` gives the chat turns a chat-completion API
takes (the viewer's own rows as ``assistant``, everyone else's as attributed ``user``
turns), and :func:`render_transcript` gives the plain ``[seq] who: content`` lines a
person or a tool reads.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from coderooms.rooms.records import Agent, SessionMessage, author_handle

__all__ = ["ChatRole", "ChatTurn", "render_for_viewer", "render_transcript", "transcript_line"]

ChatRole = Literal["user", "assistant"]


@dataclass(frozen=True, slots=True)
class ChatTurn:
    """One chat-completion message."""

    role: ChatRole
    content: str


def is_own(message: SessionMessage, viewer_id: str) -> bool:
    """Whether the viewer (an agent) wrote ``message``."""
    return isinstance(message.author, Agent) and message.author.id == viewer_id


def render_for_viewer(history: Iterable[SessionMessage], viewer_id: str) -> list[ChatTurn]:
    """The viewer's rows become ``assistant`` turns as they are; every other author's
    rows become ``user`` turns prefixed with the author's label, so a peer's words are
    never mistaken for the viewer's own. Order is kept; turns are not merged."""
    turns: list[ChatTurn] = []
    for message in history:
        if is_own(message, viewer_id):
            turns.append(ChatTurn("assistant", message.content))
        else:
            turns.append(ChatTurn("user", f"{message.author.label}: {message.content}"))
    return turns


def transcript_line(message: SessionMessage) -> str:
    """``[seq] who: content`` — who is ``@id`` for an agent, a person's label,
    ``operator``, or ``system/kind``."""
    return f"[{message.sequence}] {author_handle(message.author)}: {message.content}"


def render_transcript(history: Iterable[SessionMessage]) -> str:
    """One :func:`transcript_line` per message, joined by newlines."""
    return "\n".join(transcript_line(message) for message in history)
