"""Recall commands: search the transcript, show pinboards and thread indexes, pick names.

Each command is a thin call into the room core over the store's log. Text output is for
people; ``--json`` prints wire forms. A query between slashes (``/…/``) is a regular
expression (RE2 syntax); anything else is text, ranked verbatim matches first (see
``search``).
"""

from __future__ import annotations

import json
from typing import Any

import click

from coderooms.cli.app import json_option, run, store_of
from coderooms.rooms.chat import in_desk
from coderooms.rooms.context import Pin
from coderooms.rooms.pins import PIN_LIMIT, read_pinboard
from coderooms.rooms.ranking import (
    SELECT_LIMIT,
    Candidate,
    Hit,
    Pattern,
    agent_candidates,
    desk_candidates,
    person_candidates,
    pick_agents_matching,
    pick_desks_matching,
    pick_people_matching,
    regex_source,
)
from coderooms.rooms.records import Conversation, Sequence, author_handle
from coderooms.rooms.search import (
    MAX_HITS,
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
from coderooms.store import Store, UnknownThread
from coderooms.store.base import author_filter

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


def _hit_line(hit: MessageHit) -> str:
    """One hit; what participants wrote (the excerpt, names) is escaped as MCP escapes
    it, so a control sequence in a message cannot act on the terminal."""
    from coderooms.mcp.framing import escape_text
    from coderooms.mcp.render import posted_when

    where = escape_text(hit.chat_id or "General")
    reply = f", reply to {hit.parent}" if hit.parent is not None else ""
    return (
        f"[{hit.sequence}] {escape_text(author_handle(hit.author))} in {where}{reply}, "
        f"{posted_when(hit.posted_at)} ({hit.kind.value} {hit.score}): "
        f"{escape_text(hit.excerpt)}"
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
    help="Only messages by this agent or person (ID, agent:ID or person:ID; refused when "
    "nobody on the roster has it), system:KIND, or 'operator'.",
)
@click.option(
    "--before", type=click.IntRange(min=0), metavar="N", help="Only messages older than N."
)
@click.option(
    "--limit",
    type=click.IntRange(1, MAX_HITS),
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

    QUERY is text (case-insensitive): messages holding it verbatim rank first, then
    those holding its words, then those holding its letters in order (a typo's match,
    marked "subsequence"). Or a regular expression between slashes, e.g.
    '/deploy(ed|ing)/', which matches exactly. A desk search includes replies inside its
    threads. Only the newest 2048 messages below the cursor are read: page back with
    --before.
    """
    store = store_of(ctx, existing=True, read_only=True)

    async def go() -> list[MessageHit]:
        wanted = author_filter(await store.roster(), author)
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
    type=click.IntRange(min=1),
    default=PIN_LIMIT,
    show_default=True,
    help="At most this many pins.",
)
@click.option(
    "--repo",
    type=click.Path(),
    metavar="PATH",
    help="Repository whose index shows each pinned code node's signature today and "
    "whether it changed since it was pinned.",
)
@json_option("Print the Pin wire forms.")
@click.pass_context
def pins(
    ctx: click.Context,
    desk_ref: str,
    thread: int | None,
    limit: int,
    repo: str | None,
    as_json: bool,
) -> None:
    """Show the pinboard of a desk (or one thread), most recently pinned first.

    The text is room_pins' own: pinned text framed as data and escaped, each pin with
    when its message was posted.

    Pin a message by writing a line '!pin [^N] [#label] [note]' in a post, or code with
    '!pin @path/mod.py::Name'; take it down with '!unpin ^N' or '!unpin @path/mod.py::Name'.
    """
    from coderooms.codepins import NodeState, node_states

    store = store_of(ctx, existing=True, read_only=True)
    lookup = None
    if repo is not None:
        from coderooms.cli.focus_cmds import indexed_workspace

        lookup = indexed_workspace(repo)

    async def go() -> tuple[Conversation, list[Pin], dict[tuple[int, str], NodeState]]:
        conversation = await _conversation(store, desk_ref, thread)
        log = store.conversation_log(conversation)
        board = await read_pinboard(log, conversation, limit)
        return conversation, board, await node_states(store, board, lookup)

    conversation, board, states = run(go())
    if as_json:
        _echo_json(board)
        return
    from coderooms.mcp.render import render_pins
    from coderooms.mcp.schemas import DeskOut, PinsOut
    from coderooms.mcp.service import pin_out

    desk = DeskOut(id=conversation.desk_id, name=conversation.desk_name)
    listed = [pin_out(p, states.get((p.sequence, p.node or ""))) for p in board]
    click.echo(render_pins(PinsOut(desk=desk, thread=thread, pins=listed)))


@click.command()
@click.argument("query", required=False)
@click.option("--desk", "desk_ref", default="General", show_default=True, help=_DESK_HELP)
@click.option(
    "--limit",
    type=click.IntRange(1, MAX_HITS),
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

    The text is room_threads' own: openings framed as data and escaped.

    Only the newest 256 messages are read: which threads are live is a recency question.
    QUERY is matched against each thread's opening words ('/…/' for a regular
    expression).
    """
    store = store_of(ctx, existing=True, read_only=True)

    async def go() -> tuple[Conversation, list[Any]]:
        conversation = await _conversation(store, desk_ref, None)
        log = store.conversation_log(conversation)
        if query is None or not query.strip():  # as over MCP: no words, the live index
            return conversation, await read_thread_index(log, conversation, limit)
        pattern = SearchPattern.parse(checked_query(query))
        return conversation, await search_threads(log, conversation, pattern, limit)

    conversation, found = run(go())
    if as_json:
        _echo_json(found)
        return
    from coderooms.mcp.render import render_threads
    from coderooms.mcp.schemas import DeskOut, ThreadsOut
    from coderooms.mcp.service import thread_out

    ranked = bool(query and query.strip())
    out = ThreadsOut(
        desk=DeskOut(id=conversation.desk_id, name=conversation.desk_name),
        query=query if ranked else None,
        threads=[thread_out(getattr(item, "line", item)) for item in found],
        scores=[item.score for item in found] if ranked else None,
    )
    click.echo(render_threads(out))


_PICKERS = {
    "agents": "active agents on the roster",
    "people": "people on the roster",
    "desks": "desks (a description match ranks below a name match)",
}


@click.command()
@click.argument("kind", type=click.Choice(sorted(_PICKERS)))
@click.argument("query", required=False, default="")
@click.option(
    "--limit",
    type=click.IntRange(1, MAX_HITS),
    default=SELECT_LIMIT,
    show_default=True,
    help="At most this many candidates.",
)
@json_option("Print each hit as JSON (with no QUERY: each candidate's id, label and detail).")
@click.pass_context
def pick(ctx: click.Context, kind: str, query: str, limit: int, as_json: bool) -> None:
    """Rank agents, people or desks by QUERY with the one ranking every picker uses.

    QUERY matches ids and labels (desk descriptions count half); '/…/' is a regular
    expression. Retired agents are never offered. With no QUERY (or a blank one) every
    candidate is listed, in roster or desk order, up to --limit.
    """
    store = store_of(ctx, existing=True, read_only=True)
    if not query.strip():
        _list_candidates(store, kind, limit, as_json)
        return
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


def _list_candidates(store: Store, kind: str, limit: int, as_json: bool) -> None:
    """An empty picker box is a request to list: the snapshot's candidates, in order."""

    async def go() -> list[Candidate]:
        if kind == "desks":
            return desk_candidates(await store.desks())
        roster = await store.roster()
        return agent_candidates(roster) if kind == "agents" else person_candidates(roster)

    candidates = run(go())[:limit]
    if as_json:
        listed = [{"id": c.id, "label": c.label, "detail": c.detail} for c in candidates]
        click.echo(json.dumps(listed, ensure_ascii=False, indent=2))
        return
    if not candidates:
        click.echo(f"no {kind}")
    for candidate in candidates:
        label = "" if candidate.label == candidate.id else f" — {candidate.label}"
        detail = f" ({candidate.detail})" if candidate.detail else ""
        click.echo(f"{candidate.id}{label}{detail}")
