"""The pure room core: records, wire forms, chat identity, projection, briefing, recall.

Nothing in this package performs I/O; what must wait goes through ``SessionLog``.
"""

from coderooms.rooms.chat import is_general_chat, same_conversation
from coderooms.rooms.context import BriefingNote, Pin, SessionContext, ThreadLine
from coderooms.rooms.records import (
    PAGE_SIZE,
    SCAN_LIMIT,
    SESSION_WINDOW,
    Agent,
    Conversation,
    LogMessage,
    Operator,
    Person,
    SessionAuthor,
    SessionMessage,
    SessionPage,
    SessionQuery,
    System,
)
from coderooms.rooms.wire import from_wire, to_wire

__all__ = [
    "PAGE_SIZE",
    "SCAN_LIMIT",
    "SESSION_WINDOW",
    "Agent",
    "BriefingNote",
    "Conversation",
    "LogMessage",
    "Operator",
    "Person",
    "Pin",
    "SessionAuthor",
    "SessionContext",
    "SessionMessage",
    "SessionPage",
    "SessionQuery",
    "System",
    "ThreadLine",
    "from_wire",
    "is_general_chat",
    "same_conversation",
    "to_wire",
]
