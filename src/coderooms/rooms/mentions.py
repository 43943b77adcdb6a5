"""Mentions: who an ``@name`` in a message body addresses.

Grammar. A mention opens with ``@`` at the start of the body or right after ASCII
whitespace or one of ``([{``. ``@#`` restricts the lookup to desks. The alias that follows
starts with a letter, digit or ``_`` and runs to the end of the body, whitespace, or one
of ``,;.?!:)]}'"``; it may not contain another ``@``. The alias is compared
case-insensitively against every alias of the current snapshots:

- active agents: id and (non-blank) name;
- people: label and an ASCII slug of it (``Ada Lovelace`` → ``ada_lovelace``; a slug
  already taken gets ``_2``, ``_3`` … in people order);
- desks: id and name (the only aliases ``@#`` sees);
- ``everyone``, ``channel`` and ``here``.

An alias that names two different targets resolves nothing, and nothing inside code
(:func:`~coderooms.rooms.masking.code_ranges`) is a mention.

Normalisation. Mentions come back in reading order, one per offset; a mention of the
author is dropped; a repeated target stays visible but ``quiet``; and once
``MENTION_CAP`` mentions ping, the rest are quiet too. Only the first non-quiet active
*agent* mention can start a turn (:func:`direct_responder`); person, desk and everyone
mentions are context and never fan out.

Offsets are Python ``str`` indices.
"""

from __future__ import annotations

from dataclasses import dataclass

from coderooms.rooms.desks import DeskSet
from coderooms.rooms.masking import code_ranges, is_masked
from coderooms.rooms.records import Agent, Person, SessionAuthor
from coderooms.rooms.roster import Roster
from coderooms.rooms.wire import register_tagged, wire_omit_default

MENTION_CAP = 50
"""Most mentions of one message that may ping; later ones are kept but quiet."""

EVERYONE_ALIASES = ("everyone", "channel", "here")
"""Aliases that address every member of the conversation."""

_OPENERS = frozenset(" \t\n\r\x0c([{")
_CLOSERS = frozenset(",;.?!:)]}'\"")


class MentionTarget:
    """What a mention addresses (wire tag ``"kind"``): an agent, a person, a desk, or
    everyone in the conversation."""

    __slots__ = ()

    @staticmethod
    def agent(agent_id: str) -> AgentTarget:
        return AgentTarget(agent_id)

    @staticmethod
    def person(person_id: str) -> PersonTarget:
        return PersonTarget(person_id)

    @staticmethod
    def desk(desk_id: str) -> DeskTarget:
        return DeskTarget(desk_id)

    @staticmethod
    def everyone() -> EveryoneTarget:
        return EveryoneTarget()


@dataclass(frozen=True, slots=True)
class AgentTarget(MentionTarget):
    id: str


@dataclass(frozen=True, slots=True)
class PersonTarget(MentionTarget):
    id: str


@dataclass(frozen=True, slots=True)
class DeskTarget(MentionTarget):
    id: str


@dataclass(frozen=True, slots=True)
class EveryoneTarget(MentionTarget):
    pass


register_tagged(
    "kind",
    {"agent": AgentTarget, "person": PersonTarget, "desk": DeskTarget, "everyone": EveryoneTarget},
)


@dataclass(frozen=True, slots=True)
class Mention:
    """One resolved mention: its target, the authored text (``@alice``, ``@#eng``), the
    offset of that text in the body, and whether it is context only (``quiet``, left out
    of the wire form while false)."""

    target: MentionTarget
    text: str
    offset: int
    quiet: bool = wire_omit_default(default=False)


@dataclass(frozen=True, slots=True)
class _Alias:
    target: MentionTarget
    desk: bool


def resolve_mentions(
    text: str,
    roster: Roster,
    desks: DeskSet,
    author_id: str | SessionAuthor | None = None,
) -> list[Mention]:
    """The normalised mentions of ``text`` against the current roster and desks.

    ``author_id`` names who wrote the message, so that self-mentions are dropped: a
    :class:`Agent` or :class:`Person` author matches its own namespace, a plain id
    matches an agent or a person with that id. Raises the roster's or the desks' first
    validation error (a :class:`~coderooms.errors.CoreError`) rather than guessing.
    """
    roster.validate()
    desks.validate()
    aliases = _aliases(roster, desks)
    masked = code_ranges(text)
    found: list[Mention] = []
    start = text.find("@")
    while start >= 0:
        if _opens_at(text, start) and not is_masked(start, masked):
            mention = _mention_at(text, start, aliases)
            if mention is not None:
                found.append(mention)
        start = text.find("@", start + 1)
    return normalize_mentions(found, author_id)


def normalize_mentions(
    mentions: list[Mention], author_id: str | SessionAuthor | None = None
) -> list[Mention]:
    """Reading order, the first mention per offset, self-mentions dropped, repeated
    targets quiet, and at most ``MENTION_CAP`` non-quiet mentions."""
    out: list[Mention] = []
    offsets: set[int] = set()
    targets: set[MentionTarget] = set()
    pinging = 0
    for mention in sorted(mentions, key=lambda m: m.offset):
        if mention.offset in offsets or _is_self(mention.target, author_id):
            continue
        offsets.add(mention.offset)
        quiet = mention.quiet or mention.target in targets
        targets.add(mention.target)
        if not quiet:
            if pinging >= MENTION_CAP:
                quiet = True
            else:
                pinging += 1
        out.append(Mention(mention.target, mention.text, mention.offset, quiet))
    return out


def direct_responder(mentions: list[Mention], roster: Roster) -> str | None:
    """The id of the first non-quiet mention (reading order) of an active agent, if any.
    Person, desk and everyone mentions never select a responder."""
    for mention in sorted(mentions, key=lambda m: m.offset):
        if mention.quiet or not isinstance(mention.target, AgentTarget):
            continue
        if roster.is_active(mention.target.id):
            return mention.target.id
    return None


def ascii_slug(label: str) -> str:
    """Lowercase ASCII letters and digits of ``label``, runs joined by ``_``."""
    words: list[str] = []
    current: list[str] = []
    for char in label:
        if char.isascii() and char.isalnum():
            current.append(char.lower())
        elif current:
            words.append("".join(current))
            current = []
    if current:
        words.append("".join(current))
    return "_".join(words)


def _aliases(roster: Roster, desks: DeskSet) -> dict[str, list[_Alias]]:
    table: dict[str, list[_Alias]] = {}

    def add(alias: str, target: MentionTarget, desk: bool = False) -> None:
        if _valid_alias(alias):
            table.setdefault(alias.lower(), []).append(_Alias(target, desk))

    for member in roster.active():
        add(member.id, AgentTarget(member.id))
        if member.name is not None and member.name.strip():
            add(member.name, AgentTarget(member.id))
    taken: set[str] = set()
    for person in roster.people:
        target = PersonTarget(person.id)
        if person.label.strip():
            add(person.label, target)
        base = ascii_slug(person.label)
        if base:
            slug, suffix = base, 2
            while slug in taken:
                slug, suffix = f"{base}_{suffix}", suffix + 1
            taken.add(slug)
            add(slug, target)
    for desk in desks.desks():
        add(desk.id, DeskTarget(desk.id), desk=True)
        add(desk.name, DeskTarget(desk.id), desk=True)
    for alias in EVERYONE_ALIASES:
        add(alias, EveryoneTarget())
    return table


def shared_aliases(roster: Roster, desks: DeskSet) -> list[tuple[str, list[MentionTarget]]]:
    """Each alias (lower-cased) that names more than one target, with those targets in
    the order the aliases are made: an ``@alias`` names nobody, so a mention of it wakes
    no one. (Aliases may collide; a host can say so when it makes one that does.)"""
    out: list[tuple[str, list[MentionTarget]]] = []
    for alias, entries in sorted(_aliases(roster, desks).items()):
        targets = list(dict.fromkeys(entry.target for entry in entries))
        if len(targets) > 1:
            out.append((alias, targets))
    return out


def _valid_alias(alias: str) -> bool:
    return bool(alias) and _starts_alias(alias[0]) and not any(map(_closes_alias, alias[1:]))


def _starts_alias(char: str) -> bool:
    return char.isalnum() or char == "_"


def _closes_alias(char: str) -> bool:
    return char.isspace() or char in _CLOSERS


def _opens_at(text: str, offset: int) -> bool:
    return offset == 0 or text[offset - 1] in _OPENERS


def _mention_at(text: str, offset: int, aliases: dict[str, list[_Alias]]) -> Mention | None:
    desk_only = text.startswith("@#", offset)
    start = offset + (2 if desk_only else 1)
    if start >= len(text) or not _starts_alias(text[start]):
        return None
    end = start + 1
    while end < len(text) and not _closes_alias(text[end]):
        end += 1
    authored = text[start:end]
    if "@" in authored:
        return None
    candidates = [a for a in aliases.get(authored.lower(), ()) if a.desk or not desk_only]
    targets = {a.target for a in candidates}
    if len(targets) != 1:
        return None
    return Mention(candidates[0].target, text[offset:end], offset)


def _is_self(target: MentionTarget, author: str | SessionAuthor | None) -> bool:
    if author is None:
        return False
    if isinstance(author, str):
        return isinstance(target, AgentTarget | PersonTarget) and target.id == author
    if isinstance(author, Agent):
        return isinstance(target, AgentTarget) and target.id == author.id
    if isinstance(author, Person):
        return isinstance(target, PersonTarget) and target.id == author.id
    return False
