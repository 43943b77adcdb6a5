"""What the pages show, read through the room core's own bounded reads.

Nothing here ranks, searches or folds on its own: the transcript is a walk of the desk's
conversation log (:func:`~coderooms.rooms.session.walk_log`, the walk every projection
uses), a thread is :func:`~coderooms.rooms.session.project_session`, and search, pins and
the thread index are the functions ``room_search``, ``room_pins`` and ``room_threads``
call.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from coderooms.rooms.chat import in_desk
from coderooms.rooms.context import Pin, ThreadLine
from coderooms.rooms.desks import Desk
from coderooms.rooms.pins import read_pinboard
from coderooms.rooms.records import (
    MAX_WINDOW,
    Conversation,
    LogMessage,
    Person,
    SessionMessage,
    SessionQuery,
)
from coderooms.rooms.search import (
    SEARCH_LIMIT,
    MessageHit,
    SearchPattern,
    SearchQuery,
    checked_query,
    search_messages,
)
from coderooms.rooms.session import is_blank, project_session, walk_log
from coderooms.rooms.threads import read_thread_index
from coderooms.store.base import Store, author_filter

__all__ = [
    "TRANSCRIPT_ROOTS",
    "TRANSCRIPT_SCAN",
    "UNREAD_CAP",
    "Entry",
    "Transcript",
    "desk_pins",
    "desk_threads",
    "desk_transcript",
    "search_desk",
    "thread_messages",
    "unread_count",
]

TRANSCRIPT_ROOTS = 40
"""Top-level messages (each with its replies) one desk page shows."""
TRANSCRIPT_SCAN = 2048
"""Raw rows one desk page reads at most; a page that reaches it shows what it found."""
UNREAD_CAP = 99
"""Unread messages counted per desk; more shows as "99+"."""
DESK_THREADS = 12
"""Threads the thread index beside a desk lists."""


def conversation_of(desk: Desk, thread: int | None = None) -> Conversation:
    return Conversation(desk.id, desk.name, thread)


@dataclass(frozen=True, slots=True)
class Entry:
    """A top-level message with the replies to it that this page read, or a reply whose
    root is older than the page (``row.parent`` names it)."""

    row: LogMessage
    replies: list[LogMessage] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class Transcript:
    entries: list[Entry]
    older: int | None
    """Where the next older page starts (its ``before``), None at the log's start."""
    newest: int | None
    """The newest sequence this page holds."""


async def desk_transcript(
    store: Store, desk: Desk, before: int | None, roots: int = TRANSCRIPT_ROOTS
) -> Transcript:
    """The newest ``roots`` top-level messages of ``desk`` below ``before``, oldest first,
    each with the replies the walk met, read newest first through the desk's log view."""
    walk = walk_log(store.conversation_log(conversation_of(desk)), before, TRANSCRIPT_SCAN)
    newest_first: list[LogMessage] = []
    top_level = 0
    async for row in walk:
        if not in_desk(row.chat_id, desk.id, desk.name) or is_blank(row.content):
            continue
        newest_first.append(row)
        if row.parent is None:
            top_level += 1
            if top_level >= roots:
                break
    rows = newest_first[::-1]
    shown_roots = {row.sequence for row in rows if row.parent is None}
    entries: dict[int, Entry] = {}
    order: list[Entry] = []
    for row in rows:
        if row.parent is not None and row.parent in shown_roots:
            entries[row.parent].replies.append(row)
            continue
        entry = Entry(row)
        entries[row.sequence] = entry
        order.append(entry)
    done = walk.exhausted and top_level < roots
    older = rows[0].sequence if rows and not done else None
    return Transcript(order, older, rows[-1].sequence if rows else None)


async def thread_messages(store: Store, desk: Desk, root: int) -> list[SessionMessage]:
    """A thread as an agent's projection reads it: its root and newest replies."""
    conversation = conversation_of(desk, root)
    log = store.conversation_log(conversation)
    return await project_session(log, SessionQuery(conversation, None, MAX_WINDOW))


async def desk_pins(store: Store, desk: Desk, thread: int | None = None) -> list[Pin]:
    conversation = conversation_of(desk, thread)
    return await read_pinboard(store.conversation_log(conversation), conversation)


async def desk_threads(store: Store, desk: Desk, limit: int = DESK_THREADS) -> list[ThreadLine]:
    conversation = conversation_of(desk)
    return await read_thread_index(store.conversation_log(conversation), conversation, limit)


async def search_desk(
    store: Store,
    desk: Desk,
    query: str,
    author: str | None = None,
    limit: int = SEARCH_LIMIT,
) -> list[MessageHit]:
    """``room_search``'s answer for ``desk``: the same query grammar (words, or /regex/
    in RE2 syntax; a regex that does not compile is refused), author filter and ranking."""
    pattern = SearchPattern.parse(checked_query(query))
    wanted = author_filter(await store.roster(), author or None)
    conversation = conversation_of(desk)
    return await search_messages(
        store.conversation_log(conversation),
        SearchQuery(pattern, conversation, wanted, None, limit),
    )


async def unread_count(
    store: Store, desk: Desk, seen: int | None, reader: str | None = None
) -> int:
    """Messages of ``desk`` newer than ``seen`` (all, for a desk never opened), counted
    up to ``UNREAD_CAP + 1`` by a walk of the desk's log view that stops at ``seen``; the
    ``reader``'s own posts (a person's id) are never unread to them (one posted from a
    thread page, which does not move ``seen``, had counted)."""
    count = 0
    async for row in walk_log(store.conversation_log(conversation_of(desk)), None, UNREAD_CAP + 1):
        if seen is not None and row.sequence <= seen:
            break
        if isinstance(row.author, Person) and row.author.id == reader:
            continue
        if in_desk(row.chat_id, desk.id, desk.name):
            count += 1
    return count
