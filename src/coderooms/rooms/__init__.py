"""The pure room core: records, wire forms, chat identity, roster and desks, mentions,
projection, briefing and recall.

Nothing in this package performs I/O; what must wait goes through ``SessionLog``.
"""

from coderooms.rooms.briefing import (
    BrevityPolicy,
    BriefedTeammate,
    SessionInitialization,
    TeamBriefing,
    initialize_session,
)
from coderooms.rooms.chat import (
    is_general_chat,
    same_conversation,
)
from coderooms.rooms.context import (
    BriefingNote,
    Pin,
    SessionContext,
    ThreadLine,
)
from coderooms.rooms.desks import (
    GENERAL_DESK,
    Desk,
    DeskMember,
    DeskOrder,
    DeskSet,
)
from coderooms.rooms.dispatch import (
    MentionDispatchContext,
    MentionDispatchInput,
    MentionDispatchPolicy,
    MentionTurnRequest,
    NoDispatchReason,
    mention_dispatch,
    mention_dispatch_decision,
)
from coderooms.rooms.masking import (
    code_ranges,
    fenced_ranges,
)
from coderooms.rooms.memory import (
    MemoryLog,
)
from coderooms.rooms.mentions import (
    MENTION_CAP,
    AgentTarget,
    DeskTarget,
    EveryoneTarget,
    Mention,
    MentionTarget,
    PersonTarget,
    direct_responder,
    resolve_mentions,
)
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
from coderooms.rooms.render import (
    ChatTurn,
    render_for_viewer,
    render_transcript,
    transcript_line,
)
from coderooms.rooms.roster import (
    Roster,
    RosterMember,
    RosterPerson,
)
from coderooms.rooms.session import (
    LogWalk,
    SessionLog,
    narrow_to_roots_and_first_replies,
    project_session,
    walk_log,
)
from coderooms.rooms.wire import (
    from_wire,
    to_wire,
)

__all__ = [
    "Agent",
    "AgentTarget",
    "BrevityPolicy",
    "BriefedTeammate",
    "BriefingNote",
    "ChatTurn",
    "Conversation",
    "Desk",
    "DeskMember",
    "DeskOrder",
    "DeskSet",
    "DeskTarget",
    "EveryoneTarget",
    "GENERAL_DESK",
    "LogMessage",
    "LogWalk",
    "MENTION_CAP",
    "MemoryLog",
    "Mention",
    "MentionDispatchContext",
    "MentionDispatchInput",
    "MentionDispatchPolicy",
    "MentionTarget",
    "MentionTurnRequest",
    "NoDispatchReason",
    "Operator",
    "PAGE_SIZE",
    "Person",
    "PersonTarget",
    "Pin",
    "Roster",
    "RosterMember",
    "RosterPerson",
    "SCAN_LIMIT",
    "SESSION_WINDOW",
    "SessionAuthor",
    "SessionContext",
    "SessionInitialization",
    "SessionLog",
    "SessionMessage",
    "SessionPage",
    "SessionQuery",
    "System",
    "TeamBriefing",
    "ThreadLine",
    "code_ranges",
    "direct_responder",
    "fenced_ranges",
    "from_wire",
    "initialize_session",
    "is_general_chat",
    "mention_dispatch",
    "mention_dispatch_decision",
    "narrow_to_roots_and_first_replies",
    "project_session",
    "render_for_viewer",
    "render_transcript",
    "resolve_mentions",
    "same_conversation",
    "to_wire",
    "transcript_line",
    "walk_log",
]
