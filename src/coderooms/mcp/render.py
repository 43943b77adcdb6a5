"""The readable text of each tool result: host wording, with every piece of participant
text inside a framed data block (:mod:`coderooms.mcp.framing`).

Nothing here performs I/O.
"""

from __future__ import annotations

from typing import Any

from coderooms.mcp.framing import Block, body_entry, escape_text, quote_inline, render_blocks
from coderooms.mcp.schemas import (
    AuthorOut,
    DeskOut,
    InboxOut,
    PickOut,
    PinOut,
    PinsOut,
    PostOut,
    ReadOut,
    SearchOut,
    ThreadOut,
    ThreadsOut,
)
from coderooms.sessions import session_lines, working_set_lines

__all__ = [
    "candidates_text",
    "render_discussion",
    "render_focus",
    "render_impact",
    "render_inbox",
    "render_pick",
    "render_pins",
    "render_post",
    "render_read",
    "render_search",
    "render_seek",
    "render_threads",
]


def _who(author: AuthorOut) -> str:
    if author.type == "agent":
        name = f"@{author.id}"
        if author.label != author.id:
            name += f" ({author.label})"
        return escape_text(name)
    if author.type == "person":
        return escape_text(f"{author.label} (person {author.id})")
    if author.type == "system":
        return escape_text(f"system/{author.id}")
    return "operator"


TIME_NOT_RECORDED = "time not recorded"
"""What a lead line says for a message posted before post times were kept."""


def posted_when(posted_at: str | None) -> str:
    """A message's post time as a lead line shows it (``2026-12-01 10:19:52 UTC``), or
    :data:`TIME_NOT_RECORDED`."""
    if posted_at is None:
        return TIME_NOT_RECORDED
    shown = posted_at.replace("T", " ", 1)
    if shown.endswith("Z"):
        shown = shown[:-1] + " UTC"
    return escape_text(shown)


def _where(desk: DeskOut, thread: int | None = None) -> str:
    place = desk.name if desk.name == desk.id else f"{desk.name} ({desk.id})"
    if thread is not None:
        place += f", thread #{thread}"
    return place


def _thread_lead(line: ThreadOut, score: int | None = None) -> str:
    replies = {0: "no replies", 1: "1 reply"}.get(line.replies, f"{line.replies} replies")
    lead = f"- [#{line.root}] {quote_inline(line.opening)} — {replies}, latest #{line.latest}"
    if line.landed is not None:
        lead += f" (landed: {escape_text(line.landed)})"
    if score is not None:
        lead += f" (score {score})"
    return lead


def _pin_lead(pin: PinOut) -> str:
    lead = f"- [#{pin.sequence}]"
    if pin.node is not None:
        return _node_pin_lead(pin, lead)
    if pin.label:
        lead += f" #{escape_text(pin.label)}"
    if pin.excerpt is not None:
        lead += f" {quote_inline(pin.excerpt)}"
    else:
        lead += " (the pinned message is older than the pinboard scan)"
    if pin.note:
        lead += f" — {escape_text(pin.note)}"
    if pin.excerpt is not None:
        lead += f" (posted {posted_when(pin.posted_at)})"
    lead += f" (pinned by {_who(pin.pinned_by)} at #{pin.pinned_at})"
    return lead


NODE_CHANGE = {True: "changed since it was pinned", False: "unchanged since it was pinned"}


def _node_pin_lead(pin: PinOut, lead: str) -> str:
    lead += f" code {escape_text(pin.node or '')}"
    if pin.label:
        lead += f" #{escape_text(pin.label)}"
    if pin.signature is not None:
        lead += f": {quote_inline(pin.signature)}"
    if pin.signature is None and pin.changed:
        lead += " (no longer in the code)"
    elif pin.changed is not None:
        lead += f" ({NODE_CHANGE[pin.changed]})"
    elif pin.signature is None:
        lead += " (not looked up here)"
    else:
        lead += " (whether it changed is not known here)"
    if pin.note:
        lead += f" — {escape_text(pin.note)}"
    lead += f" (pinned by {_who(pin.pinned_by)} at #{pin.pinned_at})"
    return lead


def _threads_block(desk: DeskOut, threads: list[ThreadOut], scores: list[int] | None) -> Block:
    entries = tuple(
        body_entry(_thread_lead(line, scores[i] if scores else None), None)
        for i, line in enumerate(threads)
    )
    return Block("threads", f"Threads in {_where(desk)}", entries, "(no threads)")


def _pins_block(desk: DeskOut, thread: int | None, pins: list[PinOut]) -> Block:
    entries = tuple(body_entry(_pin_lead(pin), None) for pin in pins)
    return Block("pins", f"Pinned in {_where(desk, thread)}", entries, "(nothing pinned)")


def render_read(out: ReadOut) -> str:
    blocks: list[Block] = []
    if out.thread is None:
        blocks.append(_threads_block(out.desk, out.threads, None))
    blocks.append(_pins_block(out.desk, out.thread, out.pins))
    entries = tuple(
        body_entry(
            f"[#{m.sequence}] "
            + (f"you (@{escape_text(out.agent_id)})" if m.role == "assistant" else _who(m.author))
            + f", {posted_when(m.posted_at)}:",
            m.content,
        )
        for m in out.history
    )
    blocks.append(
        Block(
            "history",
            f"History of {_where(out.desk, out.thread)}, oldest first; you are @{out.agent_id}",
            entries,
            "(no messages yet)",
        )
    )
    return render_blocks(out.briefing, blocks)


def render_post(out: PostOut) -> str:
    text = f"Posted #{out.sequence} in {escape_text(_where(out.desk))}"
    if out.parent is not None:
        text += f" as a reply to #{out.parent}"
    text += "."
    if out.over_brevity_budget is not None:
        text += (
            f" It is {out.over_brevity_budget} characters over the brevity budget; "
            "keep the next one shorter."
        )
    if out.dispatch is not None:
        if out.dispatch.to is not None:
            text += f" It asks one turn of @{out.dispatch.to} (hop {out.dispatch.hop})."
        else:
            text += f" Nothing was passed on: {escape_text(out.dispatch.why)}."
    return text


def render_search(out: SearchOut) -> str:
    entries = tuple(
        body_entry(
            f"- [#{hit.sequence}]"
            + (f" (reply to #{hit.parent})" if hit.parent is not None else "")
            + f" {_who(hit.author)}, {posted_when(hit.posted_at)}, {hit.kind} match, "
            f"score {hit.score}: {quote_inline(hit.excerpt)}",
            None,
        )
        for hit in out.hits
    )
    heading = f"Search {out.query} in {_where(out.desk, out.thread)}"
    return render_blocks(None, [Block("search", heading, entries, "(no matches)")])


def render_threads(out: ThreadsOut) -> str:
    return render_blocks(None, [_threads_block(out.desk, out.threads, out.scores)])


def render_pins(out: PinsOut) -> str:
    return render_blocks(None, [_pins_block(out.desk, out.thread, out.pins)])


def render_pick(out: PickOut) -> str:
    lines = [f"{out.kind.capitalize()} matching {out.query!r}:"]
    for hit in out.hits:
        line = f"- {escape_text(hit.id)} — {escape_text(hit.label)}"
        if hit.detail:
            line += f" ({escape_text(hit.detail)})"
        lines.append(line + f" [{hit.kind} on {hit.field}, score {hit.score}]")
    if not out.hits:
        lines.append("- none")
    return "\n".join(lines)


def render_inbox(out: InboxOut) -> str:
    entries = tuple(
        body_entry(
            f"[#{m.sequence}] {_who(m.author)} in {escape_text(_where(m.desk))}, "
            f"{posted_when(m.posted_at)}"
            + (f", reply to #{m.parent}" if m.parent is not None else "")
            + f" (mentions {'you' if m.how == 'agent' else 'your desk' if m.how == 'desk' else 'everyone'}):",
            m.content,
        )
        for m in out.mentions
    )
    block = Block("inbox", f"Mentions of @{out.agent_id}", entries, "(no new mentions)")
    cursor = "none (nothing read yet)" if out.cursor is None else out.cursor
    tail = f"Next cursor: {cursor}" + (" (more remain: call again)" if out.more else "")
    return render_blocks(None, [block]) + "\n\n" + tail


GOAL_SHOWN_CHARS = 300
"""How much of a long goal or query the readable text repeats back."""


def _clip(text: str) -> str:
    """A goal or query on one line (a pasted traceback keeps the header whole), clipped
    to :data:`GOAL_SHOWN_CHARS`."""
    line = " ".join(text.split())
    if len(line) <= GOAL_SHOWN_CHARS:
        return line
    return f"{line[:GOAL_SHOWN_CHARS]}… ({len(text)} characters)"


def render_focus(out: dict[str, Any]) -> str:
    """The readable text of a focus answer (its wire form: the FocusOut schema)."""
    if out.get("budget") is None:  # status, pin, unpin, drop, reset
        return "\n".join([f"Focus ({out['mode']})", *working_set_lines(out), *team_lines(out)])
    budget, sufficiency = out["budget"], out["sufficiency"]
    lines = [
        f"Focus ({out['mode']}) for goal: {_clip(out['goal'])}",
        f"Budget: {budget['used']}/{budget['limit']} tokens used, {budget['left']} left",
        f"Sufficiency: {sufficiency['state']} "
        f"(captured salience mass {sufficiency['captured_salience_mass']}): "
        f"{sufficiency['why']}",
        "Focus set:",
    ]
    lines += [
        f"- {item['path']}:{item['start_line']}-{item['end_line']} {item['kind']} "
        f"{item['name']} (salience {item['salience']}, {item['tokens']} tokens): {item['why']}"
        for item in out["focus_set"]
    ] or ["- none"]
    lines += _ignored_lines(out)
    lines += session_lines(out)
    lines += team_lines(out)
    if out.get("context"):
        lines += ["", "Context:", out["context"]]
    text = "\n".join(lines)
    if out.get("discussion") is not None:
        text += "\n\n" + render_discussion(out["discussion"])
    return text


def team_lines(out: dict[str, Any]) -> list[str]:
    """Readable lines of a desk's shared working set (``team``), when an answer has one."""
    team = out.get("team")
    if team is None:
        return []
    members = ", ".join(f"@{escape_text(m)}" for m in team["members"]) or "nobody else"
    lines = [f"Held by teammates ({members}): {team['resident_total']} resident nodes"]
    lines += [
        f"- @{escape_text(e['agent'])} {escape_text(e['id'])} (heat {e['heat']}, "
        f"{e['tokens']} tokens, session {escape_text(e['session'])})"
        for e in team["resident"]
    ]
    if team["resident_total"] > len(team["resident"]):
        lines.append(f"- … and {team['resident_total'] - len(team['resident'])} more")
    return lines


def render_discussion(discussion: dict[str, Any]) -> str:
    """The desk messages a focus sends, framed as data exactly as ``room_read`` frames
    its history, best first."""
    desk = DeskOut(**discussion["desk"])
    entries = tuple(
        body_entry(
            f"[#{m['sequence']}]"
            + (f" (reply to #{m['parent']})" if m.get("parent") is not None else "")
            + f" {_who(AuthorOut(**m['author']))}, {posted_when(m.get('posted_at'))}"
            + f" (score {m['score']}, {m['tokens']} tokens: {escape_text(m['why'])}):",
            m.get("content"),
        )
        for m in discussion["messages"]
    )
    heading = (
        f"Discussion of the goal in {_where(desk)}, best first "
        f"({len(entries)} of {discussion['considered']} messages, {discussion['tokens']} tokens)"
    )
    return render_blocks(None, [Block("discussion", heading, entries, "(nothing about it)")])


IGNORED_SHOWN = 10
"""Ignored candidates the readable text names; the rest are counted by reason."""


def _ignored_lines(out: dict[str, Any]) -> list[str]:
    total = out["ignored_total"]
    if total == 0:
        return ["Ignored: nothing"]
    reasons = ", ".join(f"{reason} {count}" for reason, count in out["ignored_by_reason"].items())
    listed = out["ignored"][:IGNORED_SHOWN]
    lines = [f"Ignored ({total}: {reasons}), most salient first:"]
    for entry in listed:
        salience = entry.get("salience")
        lines.append(
            f"- {entry.get('what')}: {entry.get('why')}"
            + (f" (salience {salience})" if salience is not None else "")
        )
    if total > len(listed):
        lines.append(f"- … and {total - len(listed)} more")
    return lines


def render_seek(out: dict[str, Any]) -> str:
    """The readable text of a seek answer (the SeekOut schema)."""
    lines = [f"Seek: {_clip(out['query'])}"]
    for result in out["results"]:
        where = result.get("path", "")
        if "start_line" in result:
            where += f":{result['start_line']}-{result.get('end_line', result['start_line'])}"
        lines.append(f"- {result.get('id', '?')} {where} (salience {result.get('salience', '?')})")
    if not out["results"]:
        lines.append("- none")
    lines += _ignored_lines(out)
    sufficiency = out["sufficiency"]
    lines.append(f"Sufficiency: {sufficiency['state']}: {sufficiency['why']}")
    return "\n".join(lines)


def candidates_text(out: dict[str, Any]) -> str:
    """The readable text of an impact answer whose target names several symbols."""
    candidates = out["candidates"]
    more = out.get("ignored_total", len(out["ignored"]))
    lines = [
        f"{out['asked']!r} names {len(candidates) + more} symbols; "
        "ask impact again with one of these ids:"
    ]
    lines += [
        f"- {c['id']} ({c['kind']}, {c['path']}:{c['start_line']}-{c['end_line']}): "
        f"{c['dependents']} direct dependent{'' if c['dependents'] == 1 else 's'}"
        for c in candidates
    ]
    if more:
        lines.append(f"- and {more} more")
    return "\n".join(lines)


def render_impact(out: dict[str, Any]) -> str:
    """The readable text of an impact answer (the ImpactOut schema)."""
    if out["target"] is None:
        return candidates_text(out)
    lines = [f"Impact of {out['target']} (depth {out['depth']}):"]
    lines += [
        f"- {item['id']} {item['path']}:{item['start_line']}-{item['end_line']} at distance "
        f"{item['distance']} ({item['why']}{', by name only' if item['edge'] == 'name_match' else ''})"
        for item in out["impacted"]
    ] or ["- nothing depends on it"]
    lines += _ignored_lines(out)
    return "\n".join(lines)
