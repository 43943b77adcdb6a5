"""The web UI: people read and join the room, and see what agents are shown.

Served by ``coderooms up`` beside MCP on the same port (:func:`route_by_path`): ``/mcp``
for agents, everything else here. Pages are HTML rendered on the server, readable with
JavaScript off; ``static/app.js`` only adds live updates (an event stream from
:class:`~coderooms.web.feed.ChangeFeed`), paging on scroll and the brevity counter.

A person signs in with a token from ``coderooms person token ID``; the session cookie
holds it (HttpOnly, SameSite=Strict). Every form that writes carries a CSRF field
derived from that token, and a request whose ``Origin`` is another site is refused.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
from collections.abc import AsyncIterator, Awaitable, Callable, MutableMapping
from typing import Any
from urllib.parse import quote, unquote_to_bytes, urlencode

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response, StreamingResponse
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from coderooms.deskrecall import team_residents
from coderooms.errors import CoderoomsError, UnknownDesk
from coderooms.focus.runtime import DEFAULT_BUDGET, MAX_BUDGET
from coderooms.mcp.render import render_read
from coderooms.mcp.service import RoomService
from coderooms.mcp.tokens import TokenBook
from coderooms.rooms.briefing import MESSAGE_CHARS
from coderooms.rooms.chat import in_desk
from coderooms.rooms.desks import GENERAL_DESK_ID, Desk, DeskSet
from coderooms.rooms.records import MAX_WINDOW, Agent, LogMessage, Person, SessionMessage
from coderooms.rooms.roster import Roster
from coderooms.rooms.search import MAX_HITS, SEARCH_LIMIT
from coderooms.store.base import MESSAGE_BYTES_CAP
from coderooms.store.errors import NoWorkingSets
from coderooms.web import reads
from coderooms.web.feed import ChangeFeed
from coderooms.web.graph_svg import GRAPH_FOCUS_NODES, neighbourhood_svg
from coderooms.web.html import Markup, author_html, join, message_body, page, tag

__all__ = [
    "CSRF_FIELD",
    "SEEN_COOKIE",
    "SESSION_COOKIE",
    "build_web_app",
    "csrf_token",
    "route_by_path",
    "working_sets",
]

SESSION_COOKIE = "coderooms_session"
SEEN_COOKIE = "coderooms_seen"
"""Per desk, the newest sequence this browser has shown (for unread counts)."""
CSRF_FIELD = "csrf"
COOKIE_MAX_AGE_S = 30 * 24 * 3600
SEEN_DESKS_KEPT = 64
"""Desks whose last-seen sequence the cookie keeps (a cookie holds about 4 KB)."""
IGNORED_LISTED = 200
"""Ignored entries the focus view lists (all are counted by reason)."""
IGNORED_PER_REASON = 12
"""Entries shown under each reason before "and N more"."""
_CSRF_SALT = b"coderooms web form"

Endpoint = Callable[[Request], Awaitable[Response]]


def csrf_token(session_token: str) -> str:
    """The CSRF field a signed-in person's forms carry: bound to their session token, so
    another site can neither read nor forge it."""
    return hmac.new(session_token.encode(), _CSRF_SALT, hashlib.sha256).hexdigest()


WORKING_SET_ROWS = 60
"""Resident nodes the focus view lists at most across every agent, hottest first."""


async def working_sets(service: RoomService) -> list[dict[str, Any]] | None:
    """Every roster agent's focus sessions' resident nodes, hottest first (what the
    agents hold right now), or None when the store keeps no working sets."""
    try:
        sets = service.store.working_sets()
    except NoWorkingSets:
        return None
    roster = await service.store.roster()
    team, _ = await team_residents(sets, [member.id for member in roster.members])
    rows: list[dict[str, Any]] = team["resident"][:WORKING_SET_ROWS]
    return rows


def _working_sets_html(rows: list[dict[str, Any]] | None) -> Markup:
    if rows is None:
        return tag("p", "This store keeps no working sets.", cls="hint")
    if not rows:
        return tag("p", "No agent holds code in a focus session yet.", cls="hint")
    head = tag("tr", *(tag("th", h) for h in ("agent", "session", "node", "heat", "tokens")))
    body = [
        tag(
            "tr",
            tag("td", f"@{row['agent']}"),
            tag("td", row["session"]),
            tag("td", tag("code", row["id"])),
            tag("td", f"{row['heat']:.3f}"),
            tag("td", str(row["tokens"])),
        )
        for row in rows
    ]
    return join([tag("h2", "Working sets"), tag("table", head, *body, cls="working-sets")])


FORM_PART_MAX_BYTES = 3 * MESSAGE_BYTES_CAP + 4096
"""The largest form field read: a message as big as the store takes, percent-escaped
(every byte of text that is not ASCII is sent as three), with room for the rest. Under
the parser's default a 900,000-byte post the CLI takes was refused."""


class _Refused(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


async def _checked_form(request: Request) -> Any:
    """The posted form, every field of it text: a file upload, or percent-escaped bytes
    that are not UTF-8 (which the form parser would turn into U+FFFD), is refused before
    anything reads it, so no post is ever made of a file's repr or of garbled text."""
    if request.headers.get("content-type", "").startswith("application/x-www-form-urlencoded"):
        for field in (await request.body()).split(b"&"):
            for part in field.split(b"=", 1):
                try:
                    unquote_to_bytes(part.replace(b"+", b" ")).decode("utf-8")
                except UnicodeDecodeError:
                    raise _Refused(
                        400, "the form holds bytes that are not UTF-8: send it as UTF-8"
                    ) from None
    form = await request.form(max_part_size=FORM_PART_MAX_BYTES)
    for name, value in form.multi_items():
        if not isinstance(value, str):
            raise _Refused(400, f"the form field {name[:40]!r} must be text, not a file")
    return form


async def _draft_of(request: Request) -> str | None:
    """The message a refused form post carried, if it carried one."""
    if request.method != "POST":
        return None
    try:
        form = await request.form(max_part_size=FORM_PART_MAX_BYTES)
    except Exception:  # a body that is no form at all: nothing to hand back
        return None
    content = form.get("content")
    return content if isinstance(content, str) and content.strip() else None


def _local(target: str | None, default: str = "/") -> str:
    """A redirect target on this site only (no scheme, no ``//host``)."""
    if not target or not target.startswith("/") or target.startswith("//") or "\\" in target:
        return default
    return target


def _int_arg(value: str | None, name: str) -> int | None:
    if value is None or value == "":
        return None
    try:
        number = int(value)
    except ValueError:
        raise _Refused(400, f"{name} must be a whole number, not {value[:40]!r}") from None
    if number < 0:
        raise _Refused(400, f"{name} must not be negative")
    return number


def _desk_url(desk: Desk, suffix: str = "") -> str:
    return f"/desk/{quote(desk.id, safe='')}{suffix}"


def _thread_url(desk: Desk, root: int, anchor: int | None = None) -> str:
    return _desk_url(desk, f"/thread/{root}") + (f"#m{anchor}" if anchor is not None else "")


def _writer(row: LogMessage | SessionMessage) -> Agent | Person | None:
    """Who wrote ``row``, as the record (a person may share an agent's id)."""
    return row.author if isinstance(row.author, Agent | Person) else None


class WebUI:
    """The pages over one service (and its store), one token book and a change feed."""

    def __init__(self, service: RoomService, book: TokenBook, feed: ChangeFeed) -> None:
        self.service = service
        self.store = service.store
        self.book = book
        self.feed = feed

    # --- who is asking ------------------------------------------------------------------

    async def _person(self, request: Request) -> tuple[str, str] | None:
        token = request.cookies.get(SESSION_COOKIE)
        if not token:
            return None
        person = self.book.person_for(token)
        if person is None or not (await self.store.roster()).holds("person", person):
            return None
        return person, token

    def guarded(self, handler: Callable[[Request, str, str], Awaitable[Response]]) -> Endpoint:
        """A page for signed-in people; a form post also needs the CSRF field and, when
        the browser names one, an ``Origin`` of this site."""

        async def endpoint(request: Request) -> Response:
            try:
                found = await self._person(request)
                if found is None:
                    if request.method == "GET":
                        back = urlencode({"next": request.url.path + _query(request)})
                        return RedirectResponse(f"/signin?{back}", status_code=303)
                    raise _Refused(403, "sign in first")
                person, token = found
                if request.method == "POST":
                    _check_origin(request)
                    form = await _checked_form(request)
                    sent = str(form.get(CSRF_FIELD, ""))
                    if not hmac.compare_digest(sent, csrf_token(token)):
                        raise _Refused(403, "this form has expired: reload the page and retry")
                return await handler(request, person, token)
            except _Refused as refused:
                status, message = refused.status, str(refused)
            except UnknownDesk as exc:
                status, message = 404, f"{type(exc).__name__}: {exc}"
            except CoderoomsError as exc:
                status, message = 400, f"{type(exc).__name__}: {exc}"
            return self._error(request, status, message, await _draft_of(request))

        return endpoint

    async def _live(self, stream: str) -> str:
        """The event stream a page listens to, from the log's newest row as the page was
        rendered (any later row, in any desk, is news)."""
        newest = await self.store.last_sequence()
        return stream if newest is None else f"{stream}?after={newest}"

    def _error(
        self, request: Request, status: int, message: str, draft: str | None = None
    ) -> Response:
        body = join(
            [
                tag("h1", "Refused" if status in (400, 403) else "Not found"),
                tag("p", message, cls="error", role="alert"),
                # a refused post keeps what was typed (a session that ended meanwhile
                # lost it: Back led to the sign-in page)
                tag(
                    "p",
                    tag("label", "Your message was not posted; copy it from here: ", for_="draft"),
                    tag("textarea", draft, id="draft", readonly=True, rows=6),
                )
                if draft
                else "",
                tag("p", tag("a", "Back to the desks", href="/")),
            ]
        )
        return HTMLResponse(page("Refused", body), status_code=status)

    # --- signing in -----------------------------------------------------------------------

    async def signin_page(self, request: Request) -> Response:
        return HTMLResponse(self._signin_html(request.query_params.get("next"), None))

    def _signin_html(self, back: str | None, problem: str | None) -> str:
        body = join(
            [
                tag("h1", "Sign in"),
                tag("p", problem, cls="error", role="alert") if problem else "",
                tag(
                    "form",
                    tag("label", "Token ", tag("input", type="password", name="token", id="token")),
                    tag("input", type="hidden", name="next", value=_local(back)),
                    tag("button", "Sign in", type="submit"),
                    method="post",
                    action="/signin",
                    cls="signin",
                ),
                tag(
                    "p",
                    "Get a token with ",
                    tag("code", "coderooms person token ID"),
                    " (add yourself first: ",
                    tag("code", "coderooms person add ID --label NAME"),
                    ").",
                    cls="hint",
                ),
            ]
        )
        return page("Sign in", body)

    async def signin(self, request: Request) -> Response:
        try:
            _check_origin(request)
        except _Refused as refused:
            return self._error(request, refused.status, str(refused))
        form = await _checked_form(request)
        token = str(form.get("token", "")).strip()
        back = _local(str(form.get("next", "/")))
        person = self.book.person_for(token) if token else None
        if person is None or not (await self.store.roster()).holds("person", person):
            problem = "that token is not a person's sign-in token (or it was replaced)"
            return HTMLResponse(self._signin_html(back, problem), status_code=403)
        response = RedirectResponse(back, status_code=303)
        response.set_cookie(
            SESSION_COOKIE,
            token,
            max_age=COOKIE_MAX_AGE_S,
            httponly=True,
            samesite="strict",
            path="/",
        )
        return response

    async def signout(self, request: Request, person: str, token: str) -> Response:
        response = RedirectResponse("/signin", status_code=303)
        response.delete_cookie(SESSION_COOKIE, path="/", httponly=True, samesite="strict")
        return response

    # --- desks ----------------------------------------------------------------------------

    async def desks_page(self, request: Request, person: str, token: str) -> Response:
        roster, desks = await self.store.snapshots()
        seen = _seen(request)
        rows = []
        for desk in desks.desks():
            members = desks.active_order(desk.id, roster)
            unread = await reads.unread_count(self.store, desk, seen.get(desk.id), person)
            shown = f"{reads.UNREAD_CAP}+" if unread > reads.UNREAD_CAP else str(unread)
            rows.append(
                tag(
                    "tr",
                    tag("td", tag("a", desk.name, href=_desk_url(desk))),
                    tag("td", desk.description or ""),
                    tag("td", join((f"@{m}" for m in members), ", ") or "nobody yet"),
                    tag("td", tag("span", shown, cls="unread" if unread else "read")),
                )
            )
        people = join((p.label for p in roster.people), ", ")
        body = join(
            [
                tag("h1", "Desks"),
                tag(
                    "table",
                    tag(
                        "thead",
                        tag(
                            "tr",
                            tag("th", "Desk"),
                            tag("th", "About"),
                            tag("th", "Agents"),
                            tag("th", "Unread"),
                        ),
                    ),
                    tag("tbody", *rows, id="desk-table"),
                    cls="desks",
                ),
                tag("p", "People: ", people or "none", cls="people"),
            ]
        )
        return HTMLResponse(
            page(
                "Desks", body, session=(person, csrf_token(token)), live=await self._live("/events")
            )
        )

    async def desk_page(self, request: Request, person: str, token: str) -> Response:
        roster, desks = await self.store.snapshots()
        desk = desks.resolve(request.path_params["desk"])
        before = _int_arg(request.query_params.get("before"), "before")
        transcript = await reads.desk_transcript(self.store, desk, before)
        pins = await reads.desk_pins(self.store, desk)
        pinned = {pin.sequence for pin in pins if pin.node is None}
        threads = await reads.desk_threads(self.store, desk)
        csrf = csrf_token(token)
        entries = [
            self._entry_html(entry.row, entry.replies, desk, roster, desks, pinned, csrf)
            for entry in transcript.entries
        ]
        older = (
            tag(
                "a",
                "Older messages",
                href=_desk_url(desk, f"?before={transcript.older}"),
                cls="older",
                rel="prev",
            )
            if transcript.older is not None
            else tag("p", "This is the start of the desk.", cls="start")
        )
        newer = tag("a", "Newest messages", href=_desk_url(desk), cls="newer") if before else ""
        members = desks.active_order(desk.id, roster)
        body = join(
            [
                tag("h1", desk.name),
                tag("p", desk.description, cls="about") if desk.description else "",
                tag("p", "Agents: ", join((f"@{m}" for m in members), ", ") or "none"),
                tag(
                    "div",
                    tag(
                        "section",
                        older,
                        tag("div", *entries, id="transcript", data_before=transcript.older),
                        newer,
                        self._compose(desk, csrf, None, _desk_url(desk)) if not before else "",
                        cls="conversation",
                    ),
                    self._sidebar(desk, pins, threads),
                    cls="desk",
                ),
            ]
        )
        live = await self._live(_desk_url(desk, "/events")) if not before else None
        response = HTMLResponse(
            page(desk.name, body, session=(person, csrf_token(token)), live=live)
        )
        if before is None and transcript.newest is not None:
            _remember_seen(request, response, desk.id, transcript.newest)
        return response

    async def thread_page(self, request: Request, person: str, token: str) -> Response:
        roster, desks = await self.store.snapshots()
        desk = desks.resolve(request.path_params["desk"])
        root = _int_arg(request.path_params["root"], "thread")
        assert root is not None
        found = await self.store.message(root)
        # any message of the desk roots a thread: a reply to a reply is in the thread of
        # the reply it answers (as room_read's thread reads it)
        if found is None or not _in(found, desk):
            raise _Refused(404, f"desk {desk.id!r} has no thread rooted at message {root}")
        messages: list[LogMessage | SessionMessage] = list(
            await reads.thread_messages(self.store, desk, root)
        )
        # a thread longer than the window: its newest replies, under its root
        cut = not messages or messages[0].sequence != root
        if cut:
            messages.insert(0, found)
        pins = await reads.desk_pins(self.store, desk)
        pinned = {pin.sequence for pin in pins if pin.node is None}
        csrf = csrf_token(token)
        here = _thread_url(desk, root)
        items = [
            self._message_html(m, desk, roster, desks, pinned, csrf, here, reply=i > 0)
            for i, m in enumerate(messages)
        ]
        if cut:
            items.insert(
                1,
                tag(
                    "p",
                    f"Earlier replies are not shown: the newest {MAX_WINDOW} are (search the "
                    "desk to find an older one).",
                    cls="gap",
                ),
            )
        body = join(
            [
                tag("p", tag("a", f"← {desk.name}", href=_desk_url(desk))),
                tag("h1", f"Thread ^{root}"),
                tag(
                    "div",
                    tag(
                        "section",
                        tag("div", *items, id="transcript"),
                        self._compose(desk, csrf, root, here),
                        cls="conversation",
                    ),
                    self._sidebar(desk, pins, [], thread=root),
                    cls="desk",
                ),
            ]
        )
        return HTMLResponse(
            page(
                f"Thread {root}",
                body,
                session=(person, csrf_token(token)),
                live=await self._live(_desk_url(desk, "/events")),
            )
        )

    def _entry_html(
        self,
        row: LogMessage,
        replies: list[LogMessage],
        desk: Desk,
        roster: Roster,
        desks: DeskSet,
        pinned: set[int],
        csrf: str,
    ) -> Markup:
        back = _desk_url(desk)
        head = self._message_html(row, desk, roster, desks, pinned, csrf, back)
        if not replies:
            return tag("div", head, cls="entry", data_root=row.sequence)
        folded = tag(
            "details",
            tag("summary", f"{len(replies)} {'reply' if len(replies) == 1 else 'replies'}"),
            *(
                self._message_html(r, desk, roster, desks, pinned, csrf, back, reply=True)
                for r in replies
            ),
            cls="replies",
            open=len(replies) <= 2,
        )
        return tag("div", head, folded, cls="entry", data_root=row.sequence)

    def _message_html(
        self,
        row: LogMessage | SessionMessage,
        desk: Desk,
        roster: Roster,
        desks: DeskSet,
        pinned: set[int],
        csrf: str,
        back: str,
        reply: bool = False,
    ) -> Markup:
        parent = getattr(row, "parent", None)
        root = parent if parent is not None else row.sequence
        is_pinned = row.sequence in pinned
        pin_form = tag(
            "form",
            tag("input", type="hidden", name=CSRF_FIELD, value=csrf),
            tag("input", type="hidden", name="sequence", value=row.sequence),
            tag("input", type="hidden", name="action", value="unpin" if is_pinned else "pin"),
            tag("input", type="hidden", name="next", value=back),
            tag(
                "button",
                "Unpin" if is_pinned else "Pin",
                type="submit",
                # a screen reader hears which message, not forty buttons all called "Pin"
                aria_label=f"{'Unpin' if is_pinned else 'Pin'} message ^{row.sequence}",
            ),
            method="post",
            action=_desk_url(desk, "/pin"),
            cls="pin",
        )
        orphan = (
            tag("a", f"reply to ^{parent}", href=_thread_url(desk, parent), cls="reply-to")
            if parent is not None and not reply
            else ""
        )
        header = tag(
            "header",
            author_html(row.author),
            tag("time", row.posted_at or "", datetime=row.posted_at),
            tag("a", f"^{row.sequence}", href=_thread_url(desk, root, row.sequence), cls="seq"),
            orphan,
            tag("span", "pinned", cls="badge") if is_pinned else "",
            tag("a", "Reply", href=_thread_url(desk, root), cls="reply") if not reply else "",
            pin_form,
        )
        return tag(
            "article",
            header,
            tag("div", message_body(row.content, roster, desks, _writer(row)), cls="body"),
            id=f"m{row.sequence}",
            cls="msg reply" if reply else "msg",
            data_seq=row.sequence,
        )

    def _compose(self, desk: Desk, csrf: str, reply_to: int | None, back: str) -> Markup:
        return tag(
            "form",
            tag("input", type="hidden", name=CSRF_FIELD, value=csrf),
            tag("input", type="hidden", name="reply_to", value=reply_to)
            if reply_to is not None
            else "",
            tag("input", type="hidden", name="next", value=back),
            tag(
                "label",
                "Reply in this thread" if reply_to is not None else f"Post to {desk.name}",
                tag("textarea", name="content", rows=3, required=True, data_brevity=MESSAGE_CHARS),
            ),
            tag(
                "p",
                tag("output", f"up to {MESSAGE_CHARS} characters", cls="counter"),
                " · ",
                tag("code", "!pin ^N"),
                " pins message N; ",
                tag("code", "!unpin ^N"),
                " unpins it",
                cls="hint",
            ),
            tag("button", "Post", type="submit"),
            method="post",
            action=_desk_url(desk, "/post"),
            id="compose",
        )

    def _sidebar(
        self, desk: Desk, pins: list[Any], threads: list[Any], thread: int | None = None
    ) -> Markup:
        pin_items = [
            tag(
                "li",
                tag("a", f"^{pin.sequence}", href=_desk_url(desk, f"/go/{pin.sequence}")),
                f" #{pin.label}" if pin.label else "",
                " ",
                tag("code", pin.node)
                if pin.node is not None
                else tag("q", pin.excerpt)
                if pin.excerpt is not None
                else tag("em", "(not in view)"),
                f" — {pin.note}" if pin.note else "",
                tag("small", " pinned by ", author_html(pin.pinned_by)),
            )
            for pin in pins
        ]
        thread_items = [
            tag(
                "li",
                tag("a", f"^{line.root}", href=_thread_url(desk, line.root)),
                " ",
                tag("q", line.opening),
                f" — {line.replies} {'reply' if line.replies == 1 else 'replies'}",
                f" (landed: {line.landed})" if line.landed else "",
            )
            for line in threads
        ]
        search = tag(
            "form",
            tag(
                "label",
                "Search ",
                tag("input", type="search", name="q", placeholder="words or /regex/"),
            ),
            tag("button", "Search", type="submit"),
            method="get",
            action=_desk_url(desk, "/search"),
            cls="search",
        )
        return tag(
            "aside",
            search,
            tag("h2", "Pinboard"),
            tag("ul", *pin_items, cls="pins") if pin_items else tag("p", "Nothing pinned."),
            tag("h2", "Threads") if thread is None else "",
            (tag("ul", *thread_items, cls="threads") if thread_items else tag("p", "No threads."))
            if thread is None
            else "",
            tag(
                "p",
                tag(
                    "a",
                    "What an agent sees here",
                    href="/agent?" + urlencode({"desk": desk.id}),
                ),
            ),
            id="sidebar",
        )

    async def go_to(self, request: Request, person: str, token: str) -> Response:
        """A message by sequence, in its thread (pins link here)."""
        desks = await self.store.desks()
        desk = desks.resolve(request.path_params["desk"])
        sequence = _int_arg(request.path_params["sequence"], "message")
        assert sequence is not None
        row = await self.store.message(sequence)
        if row is None or not _in(row, desk):
            raise _Refused(404, f"desk {desk.id!r} has no message {sequence}")
        root = row.parent if row.parent is not None else row.sequence
        return RedirectResponse(_thread_url(desk, root, sequence), status_code=303)

    # --- writing --------------------------------------------------------------------------

    async def post(self, request: Request, person: str, token: str) -> Response:
        desks = await self.store.desks()
        desk = desks.resolve(request.path_params["desk"])
        form = await request.form()
        # a browser sends a textarea's line breaks as CRLF: stored as typed, one each
        content = str(form.get("content", "")).replace("\r\n", "\n")
        reply_to = _int_arg(str(form.get("reply_to", "")), "reply_to")
        row = await self.service.post_as_person(person, content, desk.id, reply_to)
        back = _local(str(form.get("next", "")), _desk_url(desk))
        return RedirectResponse(f"{back}#m{row.sequence}", status_code=303)

    async def pin(self, request: Request, person: str, token: str) -> Response:
        """``!pin ^N`` or ``!unpin ^N`` posted as the person, as a button press."""
        desks = await self.store.desks()
        desk = desks.resolve(request.path_params["desk"])
        form = await request.form()
        sequence = _int_arg(str(form.get("sequence", "")), "sequence")
        action = str(form.get("action", ""))
        if sequence is None or action not in ("pin", "unpin"):
            raise _Refused(400, "a pin needs a message sequence and pin or unpin")
        row = await self.store.message(sequence)
        if row is None or not _in(row, desk):
            raise _Refused(404, f"desk {desk.id!r} has no message {sequence}")
        # on the desk itself: a desk pin rides along in every turn read there
        await self.store.post(f"person:{person}", f"!{action} ^{sequence}", desk=desk.id)
        back = _local(str(form.get("next", "")), _desk_url(desk))
        return RedirectResponse(f"{back}#m{sequence}", status_code=303)

    # --- recall ---------------------------------------------------------------------------

    async def search(self, request: Request, person: str, token: str) -> Response:
        desk = (await self.store.desks()).resolve(request.path_params["desk"])
        query = request.query_params.get("q", "")
        author = request.query_params.get("author", "")
        form = tag(
            "form",
            tag(
                "label",
                "Search ",
                tag("input", type="search", name="q", value=query, placeholder="words or /regex/"),
            ),
            tag("label", " by ", tag("input", name="author", value=author, placeholder="anyone")),
            tag("button", "Search", type="submit"),
            method="get",
            action=_desk_url(desk, "/search"),
            cls="search",
        )
        status, results = 200, Markup("")
        asked = _int_arg(request.query_params.get("limit"), "limit")
        limit = min(max(asked if asked is not None else SEARCH_LIMIT, 1), MAX_HITS)
        if query:
            try:
                hits = await reads.search_desk(self.store, desk, query, author, limit)
            except CoderoomsError as exc:
                status = 400
                results = tag("p", f"{type(exc).__name__}: {exc}", cls="error", role="alert")
            else:
                items = [
                    tag(
                        "li",
                        tag(
                            "a",
                            f"^{hit.sequence}",
                            href=_thread_url(
                                desk,
                                hit.parent if hit.parent is not None else hit.sequence,
                                hit.sequence,
                            ),
                        ),
                        " ",
                        author_html(hit.author),
                        " ",
                        tag("span", hit.excerpt, cls="excerpt"),
                        tag("small", f" {hit.kind.value}, score {hit.score}"),
                    )
                    for hit in hits
                ]
                results = (
                    tag("ol", *items, cls="hits") if items else tag("p", "No matches.", cls="none")
                )
                if len(hits) == limit:  # there may be more: say so, and offer them
                    more = min(limit * 2, MAX_HITS)
                    results = join(
                        [
                            results,
                            tag(
                                "p",
                                f"The best {limit} hits are shown; there may be more. ",
                                tag(
                                    "a",
                                    f"Show up to {more}",
                                    href=_desk_url(desk, "/search")
                                    + "?"
                                    + urlencode({"q": query, "author": author, "limit": more}),
                                )
                                if more > limit
                                else "Narrow the query to see the rest.",
                                cls="more",
                            ),
                        ]
                    )
        body = join(
            [
                tag("p", tag("a", f"← {desk.name}", href=_desk_url(desk))),
                tag("h1", f"Search {desk.name}"),
                form,
                tag(
                    "p",
                    "Words match as room_search matches them; put a regular expression "
                    "(RE2) between slashes: ",
                    tag("code", "/fix(ed)?\\b/"),
                    cls="hint",
                ),
                results,
            ]
        )
        return HTMLResponse(
            page("Search", body, session=(person, csrf_token(token))), status_code=status
        )

    async def agent_page(self, request: Request, person: str, token: str) -> Response:
        """Exactly what room_read gives an agent for a desk: the same call, the same text."""
        roster, desks = await self.store.snapshots()
        agent = request.query_params.get("agent") or (
            roster.active_ids()[0] if roster.active_ids() else ""
        )
        desk_ref = request.query_params.get("desk") or GENERAL_DESK_ID
        thread = _int_arg(request.query_params.get("thread"), "thread")
        picker = tag(
            "form",
            tag(
                "label",
                "Agent ",
                tag(
                    "select",
                    *(
                        tag("option", f"@{a}", value=a, selected=a == agent)
                        for a in roster.active_ids()
                    ),
                    name="agent",
                ),
            ),
            tag(
                "label",
                " desk ",
                tag(
                    "select",
                    *(
                        tag("option", d.name, value=d.id, selected=d.id == desk_ref)
                        for d in desks.desks()
                    ),
                    name="desk",
                ),
            ),
            tag("label", " thread ", tag("input", name="thread", value=thread, size=6)),
            tag("button", "Show", type="submit"),
            method="get",
            action="/agent",
            cls="picker",
        )
        shown: Markup
        status = 200
        if not agent:
            shown = tag("p", "No active agents on the roster.")
        else:
            try:
                out = await self.service.read(agent, desk_ref, thread)
            except CoderoomsError as exc:
                status = 400
                shown = tag("p", f"{type(exc).__name__}: {exc}", cls="error", role="alert")
            else:
                shown = join(
                    [
                        tag(
                            "p",
                            f"room_read for @{out.agent_id} in {out.desk.name}: "
                            f"{len(out.history)} messages, {len(out.pins)} pins, "
                            f"{len(out.threads)} threads; newest ^{out.latest}",
                            cls="summary",
                        ),
                        tag("pre", render_read(out), cls="agent-text"),
                    ]
                )
        body = join([tag("h1", "What an agent sees"), picker, shown])
        return HTMLResponse(
            page("Agent view", body, session=(person, csrf_token(token))), status_code=status
        )

    # --- focus ----------------------------------------------------------------------------

    async def focus_page(self, request: Request, person: str, token: str) -> Response:
        goal = request.query_params.get("goal", "")
        asked = _int_arg(request.query_params.get("budget"), "budget")
        budget = DEFAULT_BUDGET if asked is None else asked
        form = tag(
            "form",
            tag("label", "Goal ", tag("input", name="goal", value=goal, size=60, required=True)),
            tag(
                "label",
                " budget ",
                tag("input", name="budget", value=budget, type="number", min=1, max=MAX_BUDGET),
            ),
            tag("button", "Focus", type="submit"),
            method="get",
            action="/focus",
            cls="picker",
        )
        status, shown = 200, Markup("")
        if goal.strip():
            try:
                shown = await self.service.in_workspace(lambda ws: _focus_html(ws, goal, budget))
            except CoderoomsError as exc:
                status = 400
                shown = tag("p", f"{type(exc).__name__}: {exc}", cls="error", role="alert")
        resident = await working_sets(self.service)
        body = join([tag("h1", "Focus"), form, shown, _working_sets_html(resident)])
        return HTMLResponse(
            page("Focus", body, session=(person, csrf_token(token))), status_code=status
        )

    # --- live -----------------------------------------------------------------------------

    async def events(self, request: Request, person: str, token: str) -> Response:
        """Server-sent events: ``change`` with the newest sequence whenever the log grows."""
        after = _int_arg(request.query_params.get("after"), "after")

        async def stream() -> AsyncIterator[str]:
            yield "retry: 1000\n\n"
            async for newest in self.feed.changes(after):
                yield ": beat\n\n" if newest is None else f"event: change\ndata: {newest}\n\n"

        return StreamingResponse(
            stream(),
            media_type="text/event-stream",
            headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"},
        )


def _focus_html(ws: Any, goal: str, budget: int) -> Markup:
    """The focus view of one goal, built on the workspace's own focus call."""
    result = ws.focus(goal, budget=budget, mode="set")
    data = result.to_json(ignored_limit=IGNORED_LISTED)
    verdict = data["sufficiency"]
    spent = data["budget"]
    items = []
    for loaded, item in zip(
        sorted(result.packing.loaded, key=lambda x: -x.salience), _by_salience(data), strict=True
    ):
        items.append(
            tag(
                "article",
                tag(
                    "header",
                    tag("strong", item["id"]),
                    f" {item['kind']} · {item['render']} · salience {item['salience']} · "
                    f"{item['tokens']} tokens",
                ),
                tag("p", item["why"], cls="why"),
                _numbered(loaded.text, item),
                cls="focus-item",
            )
        )
    ids = [item["id"] for item in _by_salience(data)][:GRAPH_FOCUS_NODES]
    edges = []
    for node_id in ids:
        found = ws.edges_of(node_id)
        edges.extend(found.outgoing)
        edges.extend(found.incoming)
    by_reason: dict[str, list[dict[str, Any]]] = {}
    for entry in data["ignored"]:
        by_reason.setdefault(entry["why"], []).append(entry)
    ignored = [
        tag(
            "details",
            tag("summary", f"{reason}: {count}"),
            tag(
                "ul",
                *(
                    tag(
                        "li",
                        entry["what"],
                        f" (salience {entry['salience']})",
                        f" — {entry['detail']}" if entry.get("detail") else "",
                    )
                    for entry in by_reason.get(reason, [])[:IGNORED_PER_REASON]
                ),
            ),
            tag("p", f"and {count - shown} more", cls="hint")
            if (shown := min(len(by_reason.get(reason, [])), IGNORED_PER_REASON)) < count
            else "",
            cls="ignored",
        )
        for reason, count in data["ignored_by_reason"].items()
    ]
    return join(
        [
            tag(
                "section",
                tag("h2", "Sufficiency: ", tag("span", verdict["state"], cls="verdict")),
                tag(
                    "p",
                    f"captured salience mass {verdict['captured_salience_mass']}: ",
                    verdict["why"],
                ),
                tag(
                    "p",
                    tag("meter", min=0, max=spent["limit"], value=spent["used"], cls="budget"),
                    f" {spent['used']:,} of {spent['limit']:,} tokens used, {spent['left']:,} left",
                ),
                cls="verdict-box",
            ),
            tag("h2", f"Focus set ({len(items)})"),
            tag("figure", neighbourhood_svg(ids, edges), tag("figcaption", "Neighbourhood")),
            *items,
            tag("h2", f"Ignored ({data['ignored_total']})"),
            *ignored,
        ]
    )


def _by_salience(data: dict[str, Any]) -> list[dict[str, Any]]:
    return sorted(data["focus_set"], key=lambda item: -item["salience"])


def _numbered(text: str, item: dict[str, Any]) -> Markup:
    """A loaded item's text as the agent gets it, its source line numbers beside it (a
    full render is the node's own lines; a skeleton is shown unnumbered)."""
    header, _, body = text.partition("\n")
    lines = body.rstrip("\n").split("\n")
    start = item["start_line"] if item["render"] == "full" else None
    rows = [
        tag(
            "tr",
            tag("td", start + i if start is not None else "", cls="ln"),
            tag("td", tag("code", line)),
        )
        for i, line in enumerate(lines)
    ]
    return tag(
        "figure",
        tag("figcaption", header),
        tag("table", *rows, cls="code"),
        cls="source",
    )


def _in(row: LogMessage, desk: Desk) -> bool:
    return in_desk(row.chat_id, desk.id, desk.name)


def _query(request: Request) -> str:
    return f"?{request.url.query}" if request.url.query else ""


def _check_origin(request: Request) -> None:
    origin = request.headers.get("origin")
    if origin is None:
        return
    here = f"{request.url.scheme}://{request.url.netloc}"
    if origin != here:
        raise _Refused(403, "a form from another site cannot post here")


def _seen(request: Request) -> dict[str, int]:
    raw = request.cookies.get(SEEN_COOKIE, "")
    try:
        data = json.loads(base64.urlsafe_b64decode(raw.encode() + b"==")) if raw else {}
    except (ValueError, UnicodeDecodeError, RecursionError):  # nested past the parser
        return {}
    if not isinstance(data, dict):
        return {}
    return {str(k): v for k, v in data.items() if isinstance(v, int)}


def _remember_seen(request: Request, response: Response, desk_id: str, newest: int) -> None:
    seen = _seen(request)
    seen.pop(desk_id, None)
    seen[desk_id] = newest
    kept = dict(list(seen.items())[-SEEN_DESKS_KEPT:])
    raw = base64.urlsafe_b64encode(json.dumps(kept).encode()).decode().rstrip("=")
    response.set_cookie(
        SEEN_COOKIE, raw, max_age=COOKIE_MAX_AGE_S, httponly=True, samesite="strict", path="/"
    )


def build_web_app(service: RoomService, book: TokenBook, feed: ChangeFeed | None = None) -> ASGIApp:
    """The web UI over ``service`` (its store and, for the focus view, its workspace)."""
    ui = WebUI(service, book, feed if feed is not None else ChangeFeed(service.store))
    g = ui.guarded
    routes = [
        Route("/", g(ui.desks_page)),
        Route("/signin", ui.signin_page, methods=["GET"]),
        Route("/signin", ui.signin, methods=["POST"]),
        Route("/signout", g(ui.signout), methods=["POST"]),
        Route("/events", g(ui.events)),
        Route("/agent", g(ui.agent_page)),
        Route("/focus", g(ui.focus_page)),
        Route("/desk/{desk}", g(ui.desk_page)),
        Route("/desk/{desk}/thread/{root}", g(ui.thread_page)),
        Route("/desk/{desk}/go/{sequence}", g(ui.go_to)),
        Route("/desk/{desk}/search", g(ui.search)),
        Route("/desk/{desk}/events", g(ui.events)),
        Route("/desk/{desk}/post", g(ui.post), methods=["POST"]),
        Route("/desk/{desk}/pin", g(ui.pin), methods=["POST"]),
        Mount("/static", StaticFiles(packages=[("coderooms.web", "static")]), name="static"),
    ]
    return with_page_headers(Starlette(routes=routes))


PAGE_HEADERS: tuple[tuple[bytes, bytes], ...] = (
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
    (b"content-security-policy", b"frame-ancestors 'none'; object-src 'none'; base-uri 'self'"),
    (b"referrer-policy", b"same-origin"),
)
"""What every answer of the web UI carries: no sniffing, no framing by another site (a
click-jacked Post or Pin button), no plugins, no base tag, no URL leaked to other sites."""
NO_STORE = (b"cache-control", b"no-store")
"""What a page (not a static file) carries besides: a browser keeps no copy, so Back after
signing out shows no desk."""


def with_page_headers(app: ASGIApp) -> ASGIApp:
    """``app`` with :data:`PAGE_HEADERS` on every answer, and :data:`NO_STORE` on every
    answer but a static file's (unless the answer says otherwise)."""

    async def headed(scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await app(scope, receive, send)
            return
        static = str(scope.get("path", "")).startswith("/static/")

        async def sending(message: Any) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                present = {name.lower() for name, _ in headers}
                extra = [h for h in PAGE_HEADERS if h[0] not in present]
                if not static and NO_STORE[0] not in present:
                    extra.append(NO_STORE)
                message = {**message, "headers": headers + extra}
            await send(message)

        await app(scope, receive, sending)

    return headed


Scope = MutableMapping[str, Any]
ASGIApp = Callable[[Scope, Any, Any], Awaitable[None]]


def route_by_path(mcp_app: ASGIApp, web_app: ASGIApp, mcp_path: str) -> ASGIApp:
    """One ASGI app for ``up``'s port: ``mcp_path`` (and OAuth discovery under
    ``/.well-known/``) to MCP, every other request to the web UI. Lifespan events go to
    the MCP app, whose session manager needs them."""

    async def app(scope: Scope, receive: Any, send: Any) -> None:
        path = str(scope.get("path", ""))
        to_mcp = (
            scope["type"] == "lifespan"
            or path == mcp_path
            or path.startswith(mcp_path + "/")
            or path.startswith("/.well-known/")
        )
        await (mcp_app if to_mcp else web_app)(scope, receive, send)

    return app
