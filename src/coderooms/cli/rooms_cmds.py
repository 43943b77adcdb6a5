"""Room commands: set up a store, keep the roster and desks, post and read.

Each command is a thin call into the store and the room core; the output is plain text
meant for people, except ``read --json``, which prints the wire form.
"""

from __future__ import annotations

import json
import sys

import click

from coderooms.cli.app import fail, json_option, run, store_of
from coderooms.mcp.errors import NotADeskMember, RetiredCaller
from coderooms.rooms.briefing import SessionInitialization, TeamBriefing
from coderooms.rooms.chat import in_desk
from coderooms.rooms.context import initialize_session_with_context
from coderooms.rooms.desks import Desk, DeskSet
from coderooms.rooms.mentions import AgentTarget, DeskTarget, MentionTarget, PersonTarget
from coderooms.rooms.records import MAX_WINDOW, SESSION_WINDOW, Agent, Conversation, SessionQuery
from coderooms.rooms.wire import to_wire
from coderooms.store import (
    AmbiguousReader,
    InvalidAuthor,
    InvalidText,
    MessageTooLarge,
    Store,
    UnknownAuthor,
    UnknownThread,
    parse_author_ref,
)
from coderooms.store.base import MESSAGE_BYTES_CAP

__all__ = ["register"]


def register(group: click.Group) -> None:
    """Attach every room command to ``group``."""
    for command in (init, agent, person, desk, post, read):
        group.add_command(command)


def _warn_shared_aliases(store: Store, made: MentionTarget) -> None:
    """Say on stderr when what was just made shares a mention alias with something else:
    a mention of that alias then names nobody (aliases may collide: not refused)."""
    from coderooms.rooms.mentions import shared_aliases

    async def clashes() -> list[tuple[str, list[MentionTarget]]]:
        found = shared_aliases(await store.roster(), await store.desks())
        return [(alias, targets) for alias, targets in found if made in targets]

    for alias, targets in run(clashes()):
        named = " and ".join(_target_words(target) for target in targets)
        click.echo(
            f"warning: @{alias} now names {named}: a mention of @{alias} reaches none of "
            "them (rename one, or mention them by another name)",
            err=True,
        )


def _target_words(target: MentionTarget) -> str:
    if isinstance(target, AgentTarget):
        return f"agent {target.id}"
    if isinstance(target, PersonTarget):
        return f"person {target.id}"
    if isinstance(target, DeskTarget):
        return f"desk {target.id}"
    return "everyone"


@click.command()
@click.pass_context
def init(ctx: click.Context) -> None:
    """Create the store (or upgrade an older one) and print where it is."""
    store = store_of(ctx)
    click.echo(f"store ready: {store.location} (schema version {store.schema_version})")


# --- roster ------------------------------------------------------------------------------


@click.group()
def agent() -> None:
    """Add, list and retire agents on the roster."""


@agent.command("add")
@click.argument("agent_id", metavar="ID")
@click.option("--name", help="Display name shown to teammates (default: the id).")
@click.pass_context
def agent_add(ctx: click.Context, agent_id: str, name: str | None) -> None:
    """Add agent ID to the roster."""
    store = store_of(ctx)
    member = run(store.add_agent(agent_id, name))
    click.echo(f"added agent @{member.id} ({member.label})")
    _warn_shared_aliases(store, AgentTarget(member.id))


@agent.command("retire")
@click.argument("agent_id", metavar="ID")
@click.pass_context
def agent_retire(ctx: click.Context, agent_id: str) -> None:
    """Retire agent ID: its messages stay, it can no longer post."""
    run(store_of(ctx, existing=True).retire_agent(agent_id))
    click.echo(f"retired agent @{agent_id}")


@agent.command("list")
@json_option('Print [{"id", "name", "label", "retired"}, …] in roster order.')
@click.pass_context
def agent_list(ctx: click.Context, as_json: bool) -> None:
    """List the agents on the roster in the order they were added, retired ones marked."""
    roster = run(store_of(ctx, existing=True, read_only=True).roster())
    agents = [
        {
            "id": member.id,
            "name": member.name,
            "label": member.label,
            "retired": roster.is_retired(member.id),
        }
        for member in roster.members
    ]
    if as_json:
        click.echo(json.dumps(agents, ensure_ascii=False, indent=2))
        return
    if not agents:
        click.echo("no agents (add one with `coderooms agent add ID`)")
    for each in agents:
        name = "" if each["label"] == each["id"] else f" ({each['label']})"
        click.echo(f"@{each['id']}{name}" + (" — retired" if each["retired"] else ""))


@click.group()
def person() -> None:
    """Add and list people who read and write beside the agents."""


@person.command("add")
@click.argument("person_id", metavar="ID")
@click.option("--label", required=True, help="How the person is named in transcripts.")
@click.pass_context
def person_add(ctx: click.Context, person_id: str, label: str) -> None:
    """Add person ID to the roster."""
    store = store_of(ctx)
    added = run(store.add_person(person_id, label))
    click.echo(f"added person {added.id} ({added.label})")
    _warn_shared_aliases(store, PersonTarget(added.id))


@person.command("list")
@json_option('Print [{"id", "label"}, …] in roster order.')
@click.pass_context
def person_list(ctx: click.Context, as_json: bool) -> None:
    """List the people on the roster in the order they were added."""
    roster = run(store_of(ctx, existing=True, read_only=True).roster())
    people = [{"id": each.id, "label": each.label} for each in roster.people]
    if as_json:
        click.echo(json.dumps(people, ensure_ascii=False, indent=2))
        return
    if not people:
        click.echo("no people (add one with `coderooms person add ID --label L`)")
    for each in people:
        click.echo(f"{each['id']} — {each['label']}")


# --- desks -------------------------------------------------------------------------------


@click.group()
def desk() -> None:
    """Create desks and manage their members and member order."""


@desk.command("create")
@click.argument("desk_id", metavar="ID")
@click.option("--name", help="Display name (default: the id).")
@click.option("--description", help="What the desk is for.")
@click.pass_context
def desk_create(
    ctx: click.Context, desk_id: str, name: str | None, description: str | None
) -> None:
    """Create desk ID."""
    store = store_of(ctx)
    created = run(store.create_desk(desk_id, name, description))
    click.echo(f"created desk {created.id} ({created.name})")
    _warn_shared_aliases(store, DeskTarget(created.id))


@desk.command("add")
@click.argument("desk_ref", metavar="DESK")
@click.argument("agent_id", metavar="AGENT")
@click.pass_context
def desk_add(ctx: click.Context, desk_ref: str, agent_id: str) -> None:
    """Add AGENT to DESK (by desk id or name)."""
    run(store_of(ctx, existing=True).add_desk_member(desk_ref, agent_id))
    click.echo(f"added @{agent_id} to {desk_ref}")


@desk.command("retire")
@click.argument("desk_ref", metavar="DESK")
@click.argument("agent_id", metavar="AGENT")
@click.pass_context
def desk_retire(ctx: click.Context, desk_ref: str, agent_id: str) -> None:
    """Take AGENT off DESK."""
    run(store_of(ctx, existing=True).retire_desk_member(desk_ref, agent_id))
    click.echo(f"retired @{agent_id} from {desk_ref}")


@desk.command("order")
@click.argument("desk_ref", metavar="DESK")
@click.argument("agents", metavar="AGENT...", nargs=-1, required=True)
@click.pass_context
def desk_order(ctx: click.Context, desk_ref: str, agents: tuple[str, ...]) -> None:
    """Set DESK's member order; list every member exactly once, lead first."""
    run(store_of(ctx, existing=True).set_desk_order(desk_ref, agents))
    click.echo(f"ordered {desk_ref}: " + " ".join(f"@{a}" for a in agents))


@desk.command("list")
@click.pass_context
def desk_list(ctx: click.Context) -> None:
    """List every desk with its description and members in order."""
    desks = run(store_of(ctx, existing=True, read_only=True).desks())
    for line in desk_lines(desks):
        click.echo(line)


def desk_lines(desks: DeskSet) -> list[str]:
    lines: list[str] = []
    for each in desks.desks():
        lines.append(_desk_heading(each))
        if each.is_general:
            lines.append("  members: the active roster")
            continue
        members = desks.members(each.id)
        lines.append("  members: " + (" ".join(f"@{m}" for m in members) or "none"))
    return lines


def _desk_heading(each: Desk) -> str:
    heading = each.id if each.name == each.id else f"{each.id} ({each.name})"
    return f"{heading} — {each.description}" if each.description else heading


# --- messages ----------------------------------------------------------------------------


@click.command()
@click.option(
    "--as",
    "author",
    required=True,
    metavar="WHO",
    help="Author: agent:ID, person:ID, operator or system:KIND.",
)
@click.option("--desk", "desk_ref", default="General", show_default=True, help="Desk id or name.")
@click.option("--reply-to", type=click.IntRange(min=0), metavar="N", help="Reply to message N.")
@click.option(
    "--repo",
    type=click.Path(),
    metavar="PATH",
    help="Repository whose index checks '!pin @node' markers and remembers the pinned "
    "code, so the pinboard can say when it changes.",
)
@click.option(
    "--key",
    "idempotency_key",
    metavar="KEY",
    help="Idempotency key: posting again with the same KEY prints the message it already "
    "wrote instead of writing it twice (safe to retry after a lost answer).",
)
@click.argument("text", required=False)
@click.pass_context
def post(
    ctx: click.Context,
    author: str,
    desk_ref: str,
    reply_to: int | None,
    repo: str | None,
    idempotency_key: str | None,
    text: str | None,
) -> None:
    """Post TEXT (or standard input, minus its final newline) to a desk and print the
    new message's sequence number. A line '!pin @path/mod.py::Name' pins code."""
    if text is None:
        text = _read_message_input()
    from coderooms.codepins import check_node_pins, node_pins_in, snapshot_node_pins

    snapshots = []
    if repo is not None and node_pins_in(text):
        from coderooms.cli.focus_cmds import indexed_workspace

        snapshots = check_node_pins(text, indexed_workspace(repo))
    # a post needs an author on a roster: on a path with no store (a mistyped --db) it
    # is refused as a read is, rather than making an empty store there first
    store = store_of(ctx, existing=True)

    async def go() -> int:
        posted = await store.post(
            author, text, desk=desk_ref, parent=reply_to, idempotency_key=idempotency_key
        )
        await snapshot_node_pins(store, posted.sequence, snapshots)
        if isinstance(posted.author, Agent):  # code the agent holds and names is grounded
            from coderooms.sessions import ground_named_residents

            await ground_named_residents(store.working_sets(), posted.author.id, text)
        return posted.sequence

    click.echo(str(run(go())))


_STDIN_SLACK = 2
"""Bytes of standard input read past the cap: a final CR LF that is stripped off."""


def _read_message_input() -> str:
    """The message piped on standard input, decoded strictly as UTF-8, minus its final
    newline (transport, not content).

    At most the cap plus a final CR LF plus one byte is read, so a huge input is refused
    as :class:`MessageTooLarge` ("more than the cap") without being held in memory."""
    stream = sys.stdin
    if stream is None or stream.closed:
        fail("no input: standard input is closed; give the message as TEXT")
    if stream.isatty():
        fail("give the message as TEXT or pipe it on standard input")
    limit = MESSAGE_BYTES_CAP + _STDIN_SLACK
    binary = getattr(stream, "buffer", None)
    data: bytes
    if binary is None:  # a text stream without bytes beneath (an embedding caller's)
        data = stream.read(limit + 1).encode("utf-8", "surrogateescape")
    else:
        data = binary.read(limit + 1)
    if len(data) > limit:
        raise MessageTooLarge(None, MESSAGE_BYTES_CAP)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise InvalidText("the message on standard input") from None
    # Only the one newline that ends the input: blank lines before it are content.
    return text[:-2] if text.endswith("\r\n") else text.removesuffix("\n")


@click.command()
@click.option("--as", "viewer", required=True, metavar="ID", help="The agent (or person) reading.")
@click.option("--desk", "desk_ref", default="General", show_default=True, help="Desk id or name.")
@click.option(
    "--thread", type=click.IntRange(min=0), metavar="N", help="Read the thread rooted at N."
)
@click.option(
    "--window",
    type=click.IntRange(1, MAX_WINDOW),
    default=SESSION_WINDOW,
    show_default=True,
    help="At most this many messages of history.",
)
@json_option("Print the SessionInitialization wire form.")
@click.pass_context
def read(
    ctx: click.Context,
    viewer: str,
    desk_ref: str,
    thread: int | None,
    window: int,
    as_json: bool,
) -> None:
    """Print what a turn would read: the team briefing, the desk's live threads and
    pinboard, and the attributed history.

    The text is what the room_read tool gives an agent: everything participants wrote
    sits in <room-data> blocks, escaped (control characters, line separators and bidi
    overrides are shown as &#x…; entities), each message's lines behind a gutter."""
    store = store_of(ctx, existing=True, read_only=True)
    target, initialization = run(_initialize(store, viewer, desk_ref, thread, window))
    if as_json:
        click.echo(json.dumps(to_wire(initialization), ensure_ascii=False, indent=2))
        return
    # Exactly what room_read shows a model: participant text framed and escaped as data,
    # so a message can neither close the frame nor put control sequences on a terminal.
    from coderooms.mcp.render import render_read
    from coderooms.mcp.service import read_out

    click.echo(render_read(read_out(_viewer_id(viewer), target, thread, initialization)))


async def _initialize(
    store: Store, viewer: str, desk_ref: str, thread: int | None, window: int
) -> tuple[Desk, SessionInitialization]:
    viewer_id = _viewer_id(viewer)
    roster, desks = await store.snapshots()
    kind = viewer.partition(":")[0] if ":" in viewer else ""
    known = {k: roster.holds(k, viewer_id) for k in ("agent", "person")}
    if not (known[kind] if kind in known else any(known.values())):
        raise UnknownAuthor(f"reader {viewer!r}")
    if kind == "person" and known["agent"]:
        # The briefing names its reader by id, and the agent's id would win.
        raise AmbiguousReader(viewer_id)
    target = desks.resolve(desk_ref)
    if kind == "agent" or (not kind and known["agent"]):
        # what room_read gives that agent, so its rules: a retired agent reads nothing,
        # and an agent reads only the desks it is a member of
        if roster.is_retired(viewer_id):
            raise RetiredCaller(viewer_id)
        if viewer_id not in desks.active_order(target.id, roster):
            raise NotADeskMember(viewer_id, target.id)
    if thread is not None:
        root = await store.message(thread)
        if root is None or not in_desk(root.chat_id, target.id, target.name):
            raise UnknownThread(thread, target.id)
    briefing = TeamBriefing.from_snapshots(viewer_id, target.id, roster, desks)
    conversation = Conversation(target.id, target.name, thread)
    query = SessionQuery(conversation, None, window)
    log = store.conversation_log(conversation)
    return target, await initialize_session_with_context(log, query, briefing)


def _viewer_id(viewer: str) -> str:
    if ":" not in viewer:
        return viewer
    try:
        author = parse_author_ref(viewer)
    except ValueError:
        raise InvalidAuthor(viewer) from None
    return getattr(author, "id", viewer)
