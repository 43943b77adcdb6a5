"""Recall commands: search the transcript, show pinboards and thread indexes, pick names.

Each command is a thin call into the room core over the store's log. Text output is for
people; ``--json`` prints wire forms. A query between slashes (``/…/``) is a regular
expression (RE2 syntax); anything else is literal text.
"""

from __future__ import annotations

import json
from typing import Any

import click

from coderooms.cli.app import json_option, run, store_of
from coderooms.rooms.chat import in_desk
from coderooms.rooms.context import SessionContext
from coderooms.rooms.pins import PIN_LIMIT, read_pinboard
from coderooms.rooms.ranking import (
    SELECT_LIMIT,
    Hit,
    Pattern,
    pick_agents_matching,
    pick_desks_matching,
    pick_people_matching,
    regex_source,
)
from coderooms.rooms.records import Conversation, Sequence, author_handle
from coderooms.rooms.search import (
    SEARCH_LIMIT,
    SEARCH_SCAN,
    MessageHit,
    SearchPattern,
    SearchQuery,
    checked_query,
    compile_regex,
    search_messages,
)
from coderooms.rooms.threads import THREAD_INDEX_LIMIT, read_thread_index, search_threads
from coderooms.rooms.wire import to_wire
from coderooms.store import Store, UnknownAuthor, UnknownThread

__all__ = ["register"]


def register(group: click.Group) -> None:
    """Attach every recall command to ``group``."""
    for command in (search, pins, threads, pick):
        group.add_command(command)


def _echo_json(value: Any) -> None:
    click.echo(json.dumps(to_wire(value), ensure_ascii=False, indent=2))


async def _conversation(
    store: Store, desk_ref: str | None, thread: Sequence | None
) -> Conversation:
    """The conversation ``--desk``/``--thread`` name. A thread given without a desk is
    read in the desk of its root."""
    desks = await store.desks()
    root = await store.message(thread) if thread is not None else None
    if thread is not None and root is None:  # no such message in any desk
        raise UnknownThread(thread, desks.resolve(desk_ref or "General").id)
    if desk_ref is not None:
        target = desks.resolve(desk_ref)
    elif root is not None:
        owners = [d for d in desks.desks() if in_desk(root.chat_id, d.id, d.name)]
        target = owners[0] if owners else desks.resolve(root.chat_id or "General")
    else:
        target = desks.resolve("General")
    if thread is not None and (root is None or not in_desk(root.chat_id, target.id, target.name)):
        raise UnknownThread(thread, target.id)
    return Conversation(target.id, target.name, thread)


async def _author_filter(store: Store, author: str | None) -> str | None:
    """``--author`` takes the id a row is filtered by; ``agent:ID``, ``person:ID`` and
    ``system:KIND`` are accepted too and mean the same as the bare id or kind. An
    ``agent:ID`` or ``person:ID`` must name someone on the roster (a retired agent's
    messages stay searchable): a typo is refused, not answered with no matches. A bare
    word may also be a system kind, which only the log knows."""
    if author is None:
        return None
    kind, sep, ident = author.partition(":")
    if not (sep and kind in ("agent", "person", "system") and ident):
        return author
    if kind != "system" and not (await store.roster()).holds(kind, ident):
        raise UnknownAuthor(author)
    return ident


def _hit_line(hit: MessageHit) -> str:
    where = hit.chat_id or "General"
    reply = f", reply to {hit.parent}" if hit.parent is not None else ""
    return (
        f"[{hit.sequence}] {author_handle(hit.author)} in {where}{reply} "
        f"({hit.kind.value} {hit.score}): {hit.excerpt}"
    )


_DESK_HELP = "Desk id or name."
_THREAD_HELP = "Only the thread rooted at message N (its root and direct replies)."


@click.command()
@click.argument("query")
@click.option("--desk", "desk_ref", metavar="DESK", help=_DESK_HELP + " Default: the whole log.")
@click.option("--thread", type=click.IntRange(min=0), metavar="N", help=_THREAD_HELP)
@click.option(
    "--author",
    metavar="ID",
    help="Only messages by this agent or person id, system kind, or 'operator'.",
)
@click.option(
    "--before", type=click.IntRange(min=0), metavar="N", help="Only messages older than N."
)
@click.option(
    "--limit",
    type=click.IntRange(min=0),
    default=SEARCH_LIMIT,
    show_default=True,
    help="At most this many hits.",
)
@json_option("Print the MessageHit wire forms.")
@click.pass_context
def search(
    ctx: click.Context,
    query: str,
    desk_ref: str | None,
    thread: int | None,
    author: str | None,
    before: int | None,
    limit: int,
    as_json: bool,
) -> None:
    """Search the transcript for QUERY, best match first (ties: newest first).

    QUERY is literal text (case-insensitive), or a regular expression between slashes,
    e.g. '/deploy(ed|ing)/'. A desk search includes replies inside its threads. Only the
    newest 2048 messages below the cursor are read: page back with --before.
    """
    store = store_of(ctx, existing=True, read_only=True)

    async def go() -> list[MessageHit]:
        wanted = await _author_filter(store, author)
        scope = None
        if desk_ref is not None or thread is not None:
            scope = await _conversation(store, desk_ref, thread)
        log = store.conversation_log(scope) if scope is not None else store
        search_query = SearchQuery(
            SearchPattern.parse(checked_query(query)), scope, wanted, before, limit
        )
        return await search_messages(log, search_query)

    hits = run(go())
    if as_json:
        _echo_json(hits)
        return
    if not hits:
        click.echo(f"no matches (searched at most the newest {SEARCH_SCAN} messages)")
    for hit in hits:
        click.echo(_hit_line(hit))


@click.command()
@click.option(
    "--desk",
    "desk_ref",
    metavar="DESK",
    help=_DESK_HELP + " Default: General, or with --thread the thread's desk.",
)
@click.option("--thread", type=click.IntRange(min=0), metavar="N", help=_THREAD_HELP)
@click.option(
    "--limit",
    type=click.IntRange(min=0),
    default=PIN_LIMIT,
    show_default=True,
    help="At most this many pins.",
)
@json_option("Print the Pin wire forms.")
@click.pass_context
def pins(ctx: click.Context, desk_ref: str, thread: int | None, limit: int, as_json: bool) -> None:
    """Show the pinboard of a desk (or one thread), most recently pinned first.

    Pin a message by writing a line '!pin [^N] [#label] [note]' in a post; take it down
    with '!unpin ^N'.
    """
    store = store_of(ctx, existing=True, read_only=True)

    async def go() -> list[Any]:
        conversation = await _conversation(store, desk_ref, thread)
        return await read_pinboard(store.conversation_log(conversation), conversation, limit)

    board = run(go())
    if as_json:
        _echo_json(board)
        return
    text = SessionContext(pins=tuple(board)).system_text()
    click.echo(text if text is not None else "no pins")


@click.command()
@click.argument("query", required=False)
@click.option("--desk", "desk_ref", default="General", show_default=True, help=_DESK_HELP)
@click.option(
    "--limit",
    type=click.IntRange(min=0),
    default=THREAD_INDEX_LIMIT,
    show_default=True,
    help="At most this many threads.",
)
@json_option("Print the ThreadLine/ThreadHit wire forms.")
@click.pass_context
def threads(
    ctx: click.Context, query: str | None, desk_ref: str, limit: int, as_json: bool
) -> None:
    """List a desk's most recently active threads, or rank them by QUERY.

    Only the newest 256 messages are read: which threads are live is a recency question.
    QUERY is matched against each thread's opening words ('/…/' for a regular
    expression).
    """
    store = store_of(ctx, existing=True, read_only=True)

    async def go() -> list[Any]:
        conversation = await _conversation(store, desk_ref, None)
        log = store.conversation_log(conversation)
        if query is None or not query.strip():  # as over MCP: no words, the live index
            return await read_thread_index(log, conversation, limit)
        pattern = SearchPattern.parse(checked_query(query))
        return await search_threads(log, conversation, pattern, limit)

    found = run(go())
    if as_json:
        _echo_json(found)
        return
    lines = [getattr(item, "line", item) for item in found]
    text = SessionContext(threads=tuple(lines)).system_text()
    click.echo(text if text is not None else "no threads")


_PICKERS = {
    "agents": "active agents on the roster",
    "people": "people on the roster",
    "desks": "desks (a description match ranks below a name match)",
}


@click.command()
@click.argument("kind", type=click.Choice(sorted(_PICKERS)))
@click.argument("query")
@click.option(
    "--limit",
    type=click.IntRange(min=0),
    default=SELECT_LIMIT,
    show_default=True,
    help="At most this many candidates.",
)
@json_option("Print each hit as JSON.")
@click.pass_context
def pick(ctx: click.Context, kind: str, query: str, limit: int, as_json: bool) -> None:
    """Rank agents, people or desks by QUERY with the one ranking every picker uses.

    QUERY matches ids and labels (desk descriptions count half); '/…/' is a regular
    expression. Retired agents are never offered.
    """
    store = store_of(ctx, existing=True, read_only=True)
    source = regex_source(checked_query(query))
    pattern = Pattern.regex(compile_regex(source)) if source is not None else Pattern.text(query)

    async def go() -> list[Hit]:
        if kind == "desks":
            return pick_desks_matching(pattern, await store.desks(), limit)
        roster = await store.roster()
        if kind == "agents":
            return pick_agents_matching(pattern, roster, limit)
        return pick_people_matching(pattern, roster, limit)

    hits = run(go())
    if as_json:
        _echo_json(hits)
        return
    if not hits:
        click.echo(f"no {kind} match")
    for hit in hits:
        label = "" if hit.candidate.label == hit.candidate.id else f" — {hit.candidate.label}"
        click.echo(
            f"{hit.candidate.id}{label} ({hit.field.value} {hit.match.kind.value} {hit.match.score})"
        )
