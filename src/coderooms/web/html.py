"""HTML for the web UI, written by hand: every piece of text is escaped on its way in.

:class:`Markup` marks a string that is already HTML; :func:`esc` turns anything else into
text; :func:`tag` builds an element from escaped attributes and children. A message body
becomes HTML through :func:`message_body` only, which escapes every character the author
wrote and adds nothing but ``<pre><code>``, ``<code>`` and mention marks around ranges the
room core found (:func:`~coderooms.rooms.masking.code_ranges`,
:func:`~coderooms.rooms.mentions.resolve_mentions`).
"""

from __future__ import annotations

import html
from collections.abc import Iterable

from coderooms.rooms.desks import DeskSet
from coderooms.rooms.masking import code_ranges, fenced_ranges
from coderooms.rooms.mentions import resolve_mentions
from coderooms.rooms.records import Agent, Person, SessionAuthor, author_handle
from coderooms.rooms.roster import Roster

__all__ = ["Markup", "esc", "join", "message_body", "page", "tag"]


class Markup(str):
    """A string that is HTML already (built by this module from escaped parts)."""


def esc(value: object) -> Markup:
    """``value`` as HTML text: ``Markup`` as it is, anything else escaped (quotes too)."""
    if isinstance(value, Markup):
        return value
    if value is None:
        return Markup("")
    return Markup(html.escape(str(value), quote=True))


def join(parts: Iterable[object], sep: str = "") -> Markup:
    return Markup(sep.join(esc(part) for part in parts))


VOID = frozenset({"input", "meta", "link", "br", "hr", "img"})


def tag(element: str, /, *children: object, **attrs: object) -> Markup:
    """``<element attrs>children</element>``; an attribute ``cls`` is ``class``, ``_`` in a name
    is ``-``, a value of True is the bare attribute, None or False leaves it out."""
    rendered = []
    for key, value in attrs.items():
        if value is None or value is False:
            continue
        key = "class" if key == "cls" else key.rstrip("_").replace("_", "-")
        rendered.append(f" {key}" if value is True else f' {key}="{esc(value)}"')
    opening = f"<{element}{''.join(rendered)}>"
    if element in VOID:
        return Markup(opening)
    return Markup(f"{opening}{join(children)}</{element}>")


def author_html(author: SessionAuthor) -> Markup:
    kind = (
        "agent" if isinstance(author, Agent) else "person" if isinstance(author, Person) else "host"
    )
    return tag("span", author_handle(author), cls=f"author {kind}", title=author.label)


def message_body(
    content: str, roster: Roster, desks: DeskSet, writer: str | SessionAuthor | None
) -> Markup:
    """A message as HTML: code blocks as ``<pre><code>``, inline code as ``<code>``,
    resolved mentions marked; everything else is text, line breaks kept (by CSS)."""
    blocks = fenced_ranges(content)
    spans: list[tuple[int, int, str]] = [(a, b, "block") for a, b in blocks]
    spans += [
        (a, b, "inline") for a, b in code_ranges(content) if not any(x <= a < y for x, y in blocks)
    ]
    mentions = resolve_mentions(content, roster, desks, writer) if "@" in content else []
    spans += [(m.offset, m.offset + len(m.text), "mention") for m in mentions]
    spans.sort()
    out: list[str] = []
    at = 0
    for start, end, kind in spans:
        if start < at:
            continue  # overlapping ranges: the first one wins
        out.append(esc(content[at:start]))
        piece = content[start:end]
        if kind == "block":
            out.append(tag("pre", tag("code", _unfenced(piece)), cls="code"))
        elif kind == "inline":
            out.append(tag("code", piece.strip("`")))
        else:
            out.append(tag("mark", piece, cls="mention"))
        at = end
    out.append(esc(content[at:]))
    return Markup("".join(out))


def _unfenced(block: str) -> str:
    """A code block's text without its fence lines (an indented block is kept whole)."""
    lines = block.splitlines()
    if lines and lines[0].lstrip()[:3] in ("```", "~~~"):
        lines = lines[1:]
        if lines and lines[-1].strip()[:3] in ("```", "~~~"):
            lines = lines[:-1]
    return "\n".join(lines)


def page(
    title: str,
    body: Markup,
    *,
    session: tuple[str, str] | None = None,
    live: str | None = None,
) -> str:
    """A whole document: the shared header (with sign-out when signed in: ``session`` is
    the person and their CSRF field), ``body``, and the page script. ``live`` is the
    event-stream address a live page listens to."""
    person, csrf = session if session is not None else (None, None)
    nav = tag(
        "nav",
        tag("a", "coderooms", href="/", cls="brand"),
        tag("a", "Desks", href="/"),
        tag("a", "Agent view", href="/agent"),
        tag("a", "Focus", href="/focus"),
        tag("span", f"signed in as {person}", cls="who") if person else "",
        tag(
            "form",
            tag("input", type="hidden", name="csrf", value=csrf),
            tag("button", "Sign out", type="submit"),
            method="post",
            action="/signout",
            cls="signout",
        )
        if person
        else "",
    )
    document = tag(
        "html",
        tag(
            "head",
            tag("meta", charset="utf-8"),
            tag("meta", name="viewport", content="width=device-width, initial-scale=1"),
            tag("title", f"{title} · coderooms"),
            tag("link", rel="stylesheet", href="/static/app.css"),
            # no icon to fetch: a browser asked for /favicon.ico on every page, a 404
            tag("link", rel="icon", href="data:,"),
        ),
        tag(
            "body",
            # keyboard users skip the navigation and the transcript to the message box
            tag("a", "Skip to the message box", href="#compose", cls="skip"),
            tag("header", nav),
            tag("main", body),
            tag("script", src="/static/app.js", defer=True),
            data_live=live,
        ),
        lang="en",
    )
    return "<!doctype html>\n" + document
