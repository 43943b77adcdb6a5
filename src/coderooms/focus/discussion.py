"""Goal-conditioned recall over a desk's transcript: which messages a goal needs.

The pure part of "focus over the room". A host hands in a desk's messages, oldest first,
(and, if it has an embedder, one vector per message and one for the goal); this module
ranks them for a goal and says why each ranked where it did. It keeps no state beside
what it is given: the host derives the index from the log and may cache it, but the log
stays the only source of truth.

A message's score adds up a few signals, each with a named weight:

* **terms**: BM25 of the goal over the message's words (stemmed prose, stopwords out) and
  its author's label;
* **meaning**: cosine similarity of the message and goal vectors, when vectors are given;
* **speaker**: the goal names the message's author ("what did Caroline say about…");
* **episode**: BM25 of the goal over the whole episode the message belongs to: a run of
  messages with no pause longer than :data:`EPISODE_GAP_SECONDS` between them, replies
  joining their root's episode (a conversation about the goal lifts each of its turns);
* **feedback**: BM25 of the words the goal's best few messages share (pseudo-relevance
  feedback: what the goal's topic is called where the desk talks of it, "fam" for
  "family");
* **pinned** and **recency** as mild priors;
* **code**: the message names a code node the caller says is salient.

Then **neighbours**: a message gains a share of the best score beside it (the message
before or after it in its episode, its parent, its replies), so that a question brings
its answer and an answer its question; and **own turns**: a smaller share of the best
score of its author's previous or next message in the same episode (one person's story
told over several turns, the other speaker's replies in between).

The index can be extended: :func:`extend_discussion_index` appends newer messages to a
built index without reading the older ones again, and gives the index a build over all
of them would give (a full build is an extension of the empty index).

The weights were chosen leave-one-conversation-out on the LoCoMo development set
(``benchmarks/discussion.py``); pins, recency and code have no labelled data there and
are kept small, as priors that break ties rather than decide.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cache, lru_cache
from typing import Any

import numpy as np
import scipy.sparse as sp

from coderooms.focus.lexical import BM25, DocumentCounts
from coderooms.focus.text import is_code_name

__all__ = [
    "DISCUSSION_STOPWORDS",
    "EPISODE_GAP_SECONDS",
    "DiscussionConfig",
    "DiscussionIndex",
    "DeskMessage",
    "FactoredVectors",
    "GoalScores",
    "RankedMessage",
    "build_discussion_index",
    "code_mentions",
    "prose_outside_code",
    "code_words",
    "extend_discussion_index",
    "prose_terms",
    "rank_discussion",
    "score_goal",
]

EPISODE_GAP_SECONDS = 30 * 60
"""A pause longer than this between two top-level messages starts a new episode."""
MIN_PROSE_TERM = 2
"""Shorter words are not search terms."""
PROSE_TERM_CACHE = 200_000
"""Distinct words whose stems are remembered."""
MAX_DOTTED_PARTS = 8
"""Parts of a dotted identifier whose tails count as names (``a.b.c`` gives three);
a longer chain keeps its last ones, so a pasted ``x.x.x…`` costs linear time."""
FEEDBACK_TERMS = 10
"""Words that feedback adds to a goal at most."""
REASON_TERMS = 4
"""Goal terms a reason names at most."""

DISCUSSION_STOPWORDS = frozenset(
    """a about above after again against all am an and any are as at be because been
    before being below between both but by can cannot could did do does doing down during
    each few for from further had has have having he her here hers herself him himself
    his how i if in into is it its itself just let me more most my myself no nor not now
    of off on once only or other ought our ours ourselves out over own same shall she
    should so some such than that the their theirs them themselves then there these they
    this those through to too under until up very was we were what when where which
    while who whom why will with would you your yours yourself yourselves also yeah oh
    really im ive id ill youre dont didnt doesnt isnt wasnt cant wont""".split()
)
"""English function words that say nothing about what a message is about."""

_WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")


@cache
def _stemmer() -> Any:
    # Made when first needed: snowballstemmer loads the stemmers of every language it has
    # when imported, which a focus that reads no discussion need not wait for.
    import snowballstemmer

    return snowballstemmer.stemmer("english")


@lru_cache(maxsize=PROSE_TERM_CACHE)
def _stem(word: str) -> str:
    return str(_stemmer().stemWord(word))


def prose_terms(text: str) -> list[str]:
    """Search terms of prose: lower-cased words, apostrophes folded, stopwords out,
    Porter2-stemmed (so "painted" meets "painting")."""
    terms: list[str] = []
    for raw in _WORD.findall(text.lower()):
        word = raw.replace("'", "")
        if len(word) >= MIN_PROSE_TERM and word not in DISCUSSION_STOPWORDS:
            terms.append(_stem(word))
    return terms


@dataclass(frozen=True, slots=True)
class DeskMessage:
    """One transcript message as the ranking sees it (the host builds these from rows)."""

    sequence: int
    author: str
    text: str
    parent: int | None = None
    posted_at: str | None = None
    pinned: bool = False


@dataclass(frozen=True)
class FactoredVectors:
    """Message vectors as weighted sums of shared rows: message ``i``'s vector is
    ``weights[i] @ basis``. A static embedding gives its vectors this way (a message's
    token counts over the model's table), and a goal's similarity to every message
    then costs a product with the few rows the desk uses and a sparse product with the
    counts, not a pass over a dense matrix of every message's vector.

    ``keys`` names each basis row (a token id): rows of one key are the same row, so
    extending an index adds only the keys it has not seen; key -1 is a row of its own
    (a vector the embedder could not give as counts)."""

    keys: np.ndarray
    basis: np.ndarray
    weights: sp.csr_matrix

    def __len__(self) -> int:
        return int(self.weights.shape[0])

    def dot(self, vector: np.ndarray) -> np.ndarray:
        """Every message vector's dot product with ``vector``."""
        out: np.ndarray = self.weights @ (self.basis @ vector)
        return out


Vectors = np.ndarray | FactoredVectors
"""One vector per message: a dense matrix or its factors."""

NORM_ROWS = 8_192
"""Messages whose factored vectors are summed at once to find their lengths."""


@dataclass(frozen=True, slots=True)
class DiscussionConfig:
    """Weights of the discussion signals (see the module docstring)."""

    meaning: float = 1.0
    speaker: float = 1.0
    episode: float = 0.6
    neighbours: float = 0.5
    own_turns: float = 0.2
    feedback: float = 0.3
    feedback_messages: int = 3
    """Best messages for a goal whose shared words search again (pseudo-relevance
    feedback)."""
    pinned: float = 0.1
    recency: float = 0.05
    code: float = 0.3

    def scaled(self, **factors: float) -> DiscussionConfig:
        """A copy with the named weights multiplied (for ablations and the benchmark)."""
        return replace(self, **{name: getattr(self, name) * f for name, f in factors.items()})


@dataclass(frozen=True, slots=True)
class RankedMessage:
    """A message's place for a goal: its score and the signals that put it there."""

    sequence: int
    score: float
    reasons: tuple[str, ...]


@dataclass(frozen=True)
class _Growth:
    """What extending an index needs beyond what ranking reads: the messages' term counts
    as flat arrays, and where the episode and turn folds stood after the newest message."""

    vocabulary: dict[str, int]
    words: tuple[str, ...]
    ptr: np.ndarray
    ids: np.ndarray
    counts: np.ndarray
    episodes: int
    last_time: float | None
    previous_in: dict[int, int]
    """The newest message of each episode's top level (key: episode) and of each thread
    (key: ``-1 - root position``)."""
    own_previous: dict[tuple[int, str], int]
    """The newest message of each (episode, author)."""
    episode_docs: DocumentCounts | None = None
    """Each episode's term counts (set once the index is made)."""


@dataclass(frozen=True)
class DiscussionIndex:
    """What the ranking needs of a desk, derived once from its messages."""

    messages: tuple[DeskMessage, ...]
    terms: BM25
    episodes: BM25
    episode_of: np.ndarray
    before: np.ndarray
    """Per message, the one before it in its episode's top level or in its thread (-1:
    none); :attr:`after` is the other way round."""
    after: np.ndarray
    parent_at: np.ndarray
    """Per message, its parent's position (-1: none)."""
    reply_parent: np.ndarray
    """With :attr:`reply_child`: each (parent, reply) pair of positions."""
    reply_child: np.ndarray
    own_before: np.ndarray
    """Per message, its author's previous message in the same episode (-1: none);
    :attr:`own_after` is the other way round."""
    own_after: np.ndarray
    authors: tuple[str, ...]
    """Distinct author labels, in the order they first wrote; :attr:`author_of` holds
    each message's place in it."""
    author_of: np.ndarray
    pinned: np.ndarray
    sequences: np.ndarray
    vectors: Vectors | None = None
    """Unit vectors, one per message (dense rows, or factors whose rows are unit)."""
    _position: dict[int, int] = field(default_factory=dict, repr=False)
    _identifiers: dict[str, list[int]] | None = field(default=None, repr=False)
    _replies: tuple[np.ndarray, np.ndarray] | None = field(default=None, repr=False)
    _growth: _Growth | None = field(default=None, repr=False)

    def position(self, sequence: int) -> int | None:
        """Where the message with ``sequence`` sits in :attr:`messages`, if it does."""
        return self._position.get(sequence)

    def naming(self, name: str) -> list[int]:
        """Positions of the messages that write the identifier ``name`` whole (or as a
        dotted tail); the identifier map is built on the first question."""
        if self._identifiers is None:
            found: dict[str, list[int]] = {}
            _add_identifiers(found, self.messages, 0)
            object.__setattr__(self, "_identifiers", found)
        assert self._identifiers is not None
        return self._identifiers.get(name, [])

    def replies(self) -> tuple[np.ndarray, np.ndarray]:
        """Every message's replies as compressed rows: those of message ``i`` are
        ``children[ptr[i]:ptr[i + 1]]``, ascending (built on the first question)."""
        if self._replies is None:
            order = np.lexsort((self.reply_child, self.reply_parent))
            ptr = np.zeros(len(self.messages) + 1, dtype=np.int64)
            np.cumsum(np.bincount(self.reply_parent, minlength=len(self.messages)), out=ptr[1:])
            object.__setattr__(self, "_replies", (ptr, self.reply_child[order]))
        assert self._replies is not None
        return self._replies

    def neighbours_of(self, i: int) -> list[int]:
        """The messages beside message ``i`` (its neighbours in its episode, its parent
        and its replies)."""
        ptr, children = self.replies()
        near = [int(self.before[i]), int(self.after[i]), int(self.parent_at[i])]
        near.extend(int(j) for j in children[ptr[i] : ptr[i + 1]])
        return sorted({j for j in near if j >= 0})

    def own_turns_of(self, i: int) -> list[int]:
        """Message ``i``'s author's previous and next message in its episode."""
        return [int(j) for j in (self.own_before[i], self.own_after[i]) if j >= 0]


def _add_identifiers(
    found: dict[str, list[int]], messages: Sequence[DeskMessage], start: int
) -> None:
    for i, message in enumerate(messages, start):
        for word in code_words(message.text):
            found.setdefault(word, []).append(i)


_POSTED_AT = re.compile(r"(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2}):(\d{2})")


def _days_from_civil(year: int, month: int, day: int) -> int:
    """Days since 1970-01-01 of a proleptic Gregorian date (no clock, no tz database)."""
    year -= month <= 2
    era = year // 400
    year_of_era = year - era * 400
    day_of_year = (153 * (month + (-3 if month > 2 else 9)) + 2) // 5 + day - 1
    day_of_era = year_of_era * 365 + year_of_era // 4 - year_of_era // 100 + day_of_year
    return era * 146097 + day_of_era - 719468


def _seconds(posted_at: str | None) -> float | None:
    """Seconds of a UTC ``posted_at`` (``2026-12-01T10:19:52Z``) on one scale, or None."""
    if posted_at is None:
        return None
    match = _POSTED_AT.match(posted_at)
    if match is None:
        return None
    year, month, day, hour, minute, second = map(int, match.groups())
    days = _days_from_civil(year, month, day)
    return float(((days * 24 + hour) * 60 + minute) * 60 + second)


def _episode_terms(
    growth: _Growth, episode_of: np.ndarray, members: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The term counts of the episodes of ``members`` (positions, ascending, every
    message of those episodes): each episode as one document of all its messages' words,
    a term's counts summed, terms in the order they first occur. Gives the episodes
    (ascending), each one's number of terms, and the terms and counts in episode order."""
    sizes = np.diff(growth.ptr)[members]
    offsets = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
    entry = np.repeat(growth.ptr[members] - offsets, sizes) + np.arange(int(sizes.sum()))
    episode = np.repeat(episode_of[members], sizes)
    order = np.argsort(episode, kind="stable")  # messages, then their terms, in order
    ids = growth.ids[entry][order]
    key = episode[order] * max(len(growth.words), 1) + ids
    unique, first, inverse = np.unique(key, return_index=True, return_inverse=True)
    summed = np.bincount(inverse, weights=growth.counts[entry][order], minlength=len(unique))
    ranked = np.argsort(first, kind="stable")  # episodes ascend with first occurrence
    held, per_episode = np.unique(episode[order][first], return_counts=True)
    return held, per_episode, ids[first][ranked], summed[ranked].astype(np.int64)


def _episode_documents(
    growth: _Growth,
    episode_of: np.ndarray,
    count: int,
    old: DocumentCounts | None,
    touched: Iterable[int],
) -> DocumentCounts:
    """The episodes' term counts (see :func:`_episode_terms`): those of ``old`` kept, and
    the ``touched`` episodes' (every episode, without ``old``) counted again."""
    if old is None:
        members = np.arange(len(episode_of), dtype=np.int64)
    else:
        members = np.flatnonzero(np.isin(episode_of, np.fromiter(touched, dtype=np.int64)))
    held, per_episode, ids, counts = _episode_terms(growth, episode_of, members)
    sizes = np.zeros(count, dtype=np.int64)
    ids_parts: list[np.ndarray] = []
    count_parts: list[np.ndarray] = []
    kept = 0  # old episodes [kept, e) are copied before episode e is counted again
    at = np.concatenate([[0], np.cumsum(per_episode)]).astype(np.int64)
    if old is not None:
        sizes[: old.size] = np.diff(old.ptr)
    for k, e in enumerate(int(e) for e in held):
        if old is not None and kept < min(e, old.size):
            ids_parts.append(old.ids[old.ptr[kept] : old.ptr[min(e, old.size)]])
            count_parts.append(old.counts[old.ptr[kept] : old.ptr[min(e, old.size)]])
        kept = e + 1
        sizes[e] = per_episode[k]
        ids_parts.append(ids[at[k] : at[k + 1]])
        count_parts.append(counts[at[k] : at[k + 1]])
    if old is not None and kept < old.size:
        ids_parts.append(old.ids[old.ptr[kept] :])
        count_parts.append(old.counts[old.ptr[kept] :])
    if old is None:
        sizes[held] = per_episode
    return DocumentCounts(
        keys=(b"",) * count,
        terms=growth.words,
        ptr=np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64),
        ids=np.concatenate([_EMPTY, *ids_parts]),
        counts=np.concatenate([_EMPTY, *count_parts]),
    )


_EMPTY = np.zeros(0, dtype=np.int64)


def _grown(positions: np.ndarray, added: int) -> np.ndarray:
    """A copy of ``positions`` with ``added`` more, each -1 (none) for now."""
    return np.concatenate([positions, np.full(added, -1, dtype=np.int64)])


def build_discussion_index(
    messages: Iterable[DeskMessage], vectors: Vectors | None = None
) -> DiscussionIndex:
    """Derive the ranking's index from a desk's messages, oldest first.

    ``vectors``, when given, holds one row per message (any scale: rows are normalised
    here)."""
    return extend_discussion_index(None, messages, vectors)


def extend_discussion_index(
    index: DiscussionIndex | None,
    messages: Iterable[DeskMessage],
    vectors: Vectors | None = None,
    *,
    pinned: frozenset[int] | None = None,
) -> DiscussionIndex:
    """``index`` with ``messages`` (each newer than its newest) appended: the index
    :func:`build_discussion_index` gives over all of them, made without going over the
    older messages' words again. ``vectors`` holds one row per new message (required
    when ``index`` has vectors; not allowed when it has none). ``pinned``, when given,
    is every pinned sequence (a new ``!pin`` marker pins an older message); otherwise
    each message's own flag counts."""
    added = tuple(messages)
    old = index.messages if index is not None else ()
    start = len(old)
    ordered = old + added
    growth = index._growth if index is not None else None
    if index is not None and growth is None:
        raise ValueError("this index cannot be extended (build it with build_discussion_index)")
    position = dict(index._position) if index is not None else {}
    for i, message in enumerate(added, start):
        position[message.sequence] = i
    # term counts of the new messages, appended to the flat arrays
    vocabulary = dict(growth.vocabulary) if growth is not None else {}
    new_ids: list[int] = []
    new_counts: list[int] = []
    sizes: list[int] = []
    for message in added:
        counted = Counter(prose_terms(f"{message.text} {message.author}"))
        sizes.append(len(counted))
        for term, n in counted.items():
            new_ids.append(vocabulary.setdefault(term, len(vocabulary)))
            new_counts.append(n)
    old_ptr = growth.ptr if growth is not None else np.zeros(1, dtype=np.int64)
    ptr = np.concatenate([old_ptr, old_ptr[-1] + np.cumsum(sizes, dtype=np.int64)])
    ids = np.concatenate([growth.ids if growth else _EMPTY, np.asarray(new_ids, np.int64)])
    counts = np.concatenate([growth.counts if growth else _EMPTY, np.asarray(new_counts, np.int64)])
    # episodes and turns: the folds go on from where they stood
    episode: list[int] = index.episode_of.tolist() if index is not None else []
    current = growth.episodes - 1 if growth is not None else -1
    last_time = growth.last_time if growth is not None else None
    previous_in = dict(growth.previous_in) if growth is not None else {}
    own_previous = dict(growth.own_previous) if growth is not None else {}
    before = _grown(index.before if index else _EMPTY, len(added))
    after = _grown(index.after if index else _EMPTY, len(added))
    parent_at = _grown(index.parent_at if index else _EMPTY, len(added))
    own_before = _grown(index.own_before if index else _EMPTY, len(added))
    own_after = _grown(index.own_after if index else _EMPTY, len(added))
    replies: list[tuple[int, int]] = []
    for i, message in enumerate(added, start):
        parent = position.get(message.parent) if message.parent is not None else None
        if parent is not None and parent >= i:
            parent = None  # a reply names an earlier message
        if parent is not None:
            episode.append(episode[parent])
            parent_at[i] = parent
            replies.append((parent, i))
        else:
            moment = _seconds(message.posted_at)
            if (
                current < 0
                or moment is None
                or last_time is None
                or moment - last_time > EPISODE_GAP_SECONDS
            ):
                current += 1
            last_time = moment
            episode.append(current)
        key = episode[i] if parent is None else -1 - parent
        previous = previous_in.get(key)
        if previous is not None:
            before[i], after[previous] = previous, i
        previous_in[key] = i
        turn = (episode[i], message.author)
        mine = own_previous.get(turn)
        if mine is not None:
            own_before[i], own_after[mine] = mine, i
        own_previous[turn] = i
    episode_of = np.asarray(episode, dtype=np.int64)
    count = current + 1
    words = tuple(vocabulary)
    grown = _Growth(
        vocabulary, words, ptr, ids, counts, count, last_time, previous_in, own_previous
    )
    # only the exchanges a new message joined are counted again
    episode_docs = _episode_documents(
        grown,
        episode_of,
        count,
        growth.episode_docs if growth is not None else None,
        sorted(set(episode[start:])),
    )
    grown = replace(grown, episode_docs=episode_docs)
    new_replies = np.asarray(replies, dtype=np.int64).reshape(-1, 2)
    authors = list(index.authors) if index is not None else []
    place = {label: n for n, label in enumerate(authors)}
    for message in added:
        if message.author not in place:
            place[message.author] = len(authors)
            authors.append(message.author)
    author_of = np.fromiter((place[m.author] for m in added), dtype=np.int64, count=len(added))
    if pinned is None:
        flags = np.fromiter((m.pinned for m in added), dtype=bool, count=len(added))
        pins = np.concatenate([index.pinned, flags]) if index is not None else flags
    else:
        pins = np.fromiter((m.sequence in pinned for m in ordered), dtype=bool, count=len(ordered))
    normalised = _normalised(index, vectors, len(added))
    identifiers = None
    if index is not None and index._identifiers is not None:
        identifiers = dict(index._identifiers)
        fresh: dict[str, list[int]] = {}
        _add_identifiers(fresh, added, start)
        for word, at in fresh.items():
            identifiers[word] = identifiers.get(word, []) + at
    sequences = np.fromiter((m.sequence for m in added), dtype=np.int64, count=len(added))
    return DiscussionIndex(
        messages=ordered,
        terms=BM25.from_documents(DocumentCounts((b"",) * len(ordered), words, ptr, ids, counts)),
        episodes=BM25.from_documents(episode_docs),
        episode_of=episode_of,
        before=before,
        after=after,
        parent_at=parent_at,
        reply_parent=np.concatenate([index.reply_parent if index else _EMPTY, new_replies[:, 0]]),
        reply_child=np.concatenate([index.reply_child if index else _EMPTY, new_replies[:, 1]]),
        own_before=own_before,
        own_after=own_after,
        authors=tuple(authors),
        author_of=np.concatenate([index.author_of, author_of]) if index else author_of,
        pinned=pins,
        sequences=np.concatenate([index.sequences, sequences]) if index else sequences,
        vectors=normalised,
        _position=position,
        _identifiers=identifiers,
        _growth=grown,
    )


def _normalised(
    index: DiscussionIndex | None, vectors: Vectors | None, added: int
) -> Vectors | None:
    """The index's unit vectors with the new messages' ``vectors`` appended."""
    if vectors is None:
        if index is not None and index.vectors is not None and added:
            raise ValueError(f"no vectors for {added} new messages of an index with vectors")
        return index.vectors if index is not None else None
    if len(vectors) != added:
        raise ValueError(f"{len(vectors)} vectors for {added} messages")
    if index is not None and index.vectors is None and len(index.messages):
        raise ValueError("vectors for new messages of an index without vectors")
    old = index.vectors if index is not None and len(index.messages) else None
    if isinstance(vectors, FactoredVectors) or isinstance(old, FactoredVectors):
        if not isinstance(vectors, FactoredVectors) or not (
            old is None or isinstance(old, FactoredVectors)
        ):
            raise ValueError("factored and dense vectors in one index")
        return _factored_unit(old, vectors)
    matrix = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    unit = matrix / np.where(norms > 0, norms, 1.0)
    if old is None:
        return unit
    return np.concatenate([old, unit])


def _factored_unit(old: FactoredVectors | None, new: FactoredVectors) -> FactoredVectors:
    """``old`` with ``new``'s rows appended, each scaled to unit length: the keys
    ``old`` holds keep their rows, the others are added after them."""
    width = new.basis.shape[1] if old is None else old.basis.shape[1]
    if new.basis.shape[1] != width:
        raise ValueError(f"vectors of {new.basis.shape[1]} dimensions for an index of {width}")
    column = {key: col for col, key in enumerate(old.keys.tolist())} if old is not None else {}
    start = len(column) if old is None else len(old.keys)
    placed = np.empty(len(new.keys), dtype=np.int64)
    fresh: list[int] = []
    for j, key in enumerate(new.keys.tolist()):
        at = column.get(key) if key >= 0 else None
        if at is None:
            at = start + len(fresh)
            fresh.append(j)
            if key >= 0:
                column[key] = at
        placed[j] = at
    keys = new.keys[fresh] if old is None else np.concatenate([old.keys, new.keys[fresh]])
    rows = np.asarray(new.basis[fresh], dtype=np.float32)
    basis = rows if old is None else np.concatenate([old.basis, rows])
    counts = sp.csr_matrix(
        (
            np.asarray(new.weights.data, dtype=np.float32),
            placed[new.weights.indices],
            new.weights.indptr,
        ),
        shape=(len(new), len(keys)),
    )
    norms = np.concatenate(
        [
            np.linalg.norm(np.asarray(counts[i : i + NORM_ROWS] @ basis), axis=1)
            for i in range(0, len(new), NORM_ROWS)
        ]
        or [np.zeros(0)]
    )
    scale = np.divide(1.0, norms, out=np.zeros_like(norms), where=norms > 0).astype(np.float32)
    unit = sp.csr_matrix(sp.diags(scale) @ counts, dtype=np.float32)
    if old is None:
        return FactoredVectors(keys, basis, unit)
    wider = sp.csr_matrix(
        (old.weights.data, old.weights.indices, old.weights.indptr),
        shape=(len(old), len(keys)),
    )
    return FactoredVectors(keys, basis, sp.csr_matrix(sp.vstack([wider, unit], format="csr")))


def _unit(scores: np.ndarray) -> np.ndarray:
    top = float(scores.max()) if scores.size else 0.0
    return scores / top if top > 0 else np.zeros_like(scores)


_CODE_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*")


def code_words(text: str) -> frozenset[str]:
    """The identifiers a message writes, whole and by dotted tails
    (``a.Session.send`` gives itself, ``Session.send`` and ``send``)."""
    words: set[str] = set()
    for word in _CODE_WORD.findall(text):
        parts = word.split(".")[-MAX_DOTTED_PARTS:]
        words.update(".".join(parts[i:]) for i in range(len(parts)))
    return frozenset(words)


MENTION_SCAN_CHARS = 20_000
"""How much of a message :func:`code_mentions` reads (a pasted dump names no code)."""


def node_refs(text: str) -> frozenset[str]:
    """Words of ``text`` written like node ids (``src/app/cart.py::Cart.add``, a path with
    a directory), trailing punctuation dropped: one pass, no backtracking."""
    refs = set()
    for word in text.split():
        word = word.strip("`'\"()[]{}<>,;:!?")
        if "/" in word or "::" in word:
            refs.add(word.rstrip("."))
    return frozenset(refs)


def code_mentions(text: str) -> frozenset[str]:
    """What the head of a message may name code by: its identifiers (whole and by dotted
    tails, :func:`code_words`) and its words written like node ids or paths."""
    head = text[:MENTION_SCAN_CHARS]
    return code_words(head) | node_refs(head)


def prose_outside_code(text: str) -> frozenset[str]:
    """The search terms of a message's prose alone: its words minus those written as
    code (dotted, snake or camel case, paths, node ids), so that a message naming
    ``MockRequest.add_header`` is not about headers for that alone."""
    kept = []
    for word in text[:MENTION_SCAN_CHARS].split():
        bare = word.strip("`'\"()[]{}<>,;:!?.")
        if "/" in bare or "::" in bare or is_code_name(bare):
            continue
        kept.append(word)
    return frozenset(prose_terms(" ".join(kept)))


def _named(label: str, goal_words: frozenset[str]) -> bool:
    words = _WORD.findall(label.lower())
    return bool(words) and all(w in goal_words for w in words)


@dataclass(frozen=True)
class GoalScores:
    """What a goal scores on each message before code names and neighbours: the part of
    a ranking that a second ranking for the same goal (with code names) can reuse."""

    goal_terms: tuple[str, ...]
    lexical: np.ndarray
    meaning: np.ndarray
    spoken: np.ndarray
    episode: np.ndarray
    score: np.ndarray
    feedback: np.ndarray | None = None
    positions: dict[tuple[int | None, bytes], np.ndarray] = field(
        default_factory=dict, compare=False, repr=False
    )
    """The positions a ranking with no code names computed (see
    :func:`_ranked_positions`), by limit and left-out positions: a ranking with code
    names needs only these and the positions around the messages naming code."""


def score_goal(
    index: DiscussionIndex,
    goal: str,
    *,
    goal_vector: np.ndarray | None = None,
    config: DiscussionConfig | None = None,
) -> GoalScores:
    """The goal's term, meaning, speaker, episode, feedback and pin scores over ``index``."""
    weights = config or DiscussionConfig()
    count = len(index.messages)
    goal_terms = prose_terms(goal)
    lexical = _unit(index.terms.scores(goal_terms)) if goal_terms and count else np.zeros(count)
    # the sums below run in place: a desk of many messages makes each array large
    score = lexical.astype(np.float64)
    meaning = np.zeros(count)
    if index.vectors is not None and goal_vector is not None and weights.meaning and count:
        vector = np.asarray(goal_vector, dtype=np.float32)
        norm = float(np.linalg.norm(vector))
        if norm > 0:
            goal_unit = vector / norm
            vectors = index.vectors
            cosine = (
                vectors.dot(goal_unit)
                if isinstance(vectors, FactoredVectors)
                else vectors @ goal_unit
            )
            meaning = _unit(np.clip(cosine, 0.0, None, out=cosine)).astype(np.float64)
            score += weights.meaning * meaning
    # "Ann's" names Ann
    goal_words = frozenset(w.partition("'")[0] for w in _WORD.findall(goal.lower()))
    named_authors = [n for n, label in enumerate(index.authors) if _named(label, goal_words)]
    spoken = np.isin(index.author_of, named_authors)
    if named_authors:
        score += weights.speaker * spoken
    episode = np.zeros(count)
    if goal_terms and weights.episode and count:
        episode = _unit(index.episodes.scores(goal_terms))[index.episode_of]
        score += weights.episode * episode
    feedback = None
    if goal_terms and weights.feedback and count:
        extra = _feedback_terms(index, score, frozenset(goal_terms), weights.feedback_messages)
        if extra:
            feedback = _unit(index.terms.scores(extra))
            score += weights.feedback * feedback
    if index.pinned.any():
        score += weights.pinned * index.pinned * (score > 0)
    return GoalScores(tuple(goal_terms), lexical, meaning, spoken, episode, score, feedback)


def _feedback_terms(
    index: DiscussionIndex, score: np.ndarray, goal: frozenset[str], depth: int
) -> list[str]:
    """The words the best ``depth`` messages for the goal share most
    (by how many of them hold each; ties by first use), the goal's own and the authors'
    names left out, at most
    :data:`FEEDBACK_TERMS`: what the goal's topic is called where the desk talks of it."""
    growth = index._growth
    if growth is None:
        return []
    if score.size > depth:
        kth = np.partition(score, score.size - depth)[score.size - depth]
        candidates = np.flatnonzero(score >= max(kth, np.nextafter(0.0, 1.0)))
    else:
        candidates = np.flatnonzero(score > 0)
    best = _top(score, index.sequences, candidates, depth)
    held: Counter[str] = Counter()
    for i in sorted(int(i) for i in best):
        held.update(growth.words[t] for t in growth.ids[growth.ptr[i] : growth.ptr[i + 1]])
    # an author's name says who wrote the best messages, not what they are about
    left_out = goal.union(*(prose_terms(label) for label in index.authors))
    return [term for term, _ in held.most_common() if term not in left_out][:FEEDBACK_TERMS]


def _top(
    score: np.ndarray, sequences: np.ndarray, candidates: np.ndarray, limit: int | None
) -> np.ndarray:
    """``candidates`` best first (ties: the newer message first), at most ``limit``."""
    if limit is not None and candidates.size > limit:
        values = score[candidates]
        kth = np.partition(-values, limit - 1)[limit - 1]
        candidates = candidates[-values <= kth]  # every tie at the cut stays in the running
    order = candidates[np.lexsort((-sequences[candidates], -score[candidates]))]
    return order if limit is None else order[:limit]


def _best_of(own: np.ndarray, at: np.ndarray, *sides: np.ndarray) -> np.ndarray:
    """Per position of ``at``, the best ``own`` score among the positions ``sides`` give
    it (each a position per message, -1 for none), 0 if none."""
    best = np.zeros(at.shape[0])
    for side in sides:
        near = side[at]
        np.maximum(best, np.where(near >= 0, own[near], 0.0), out=best)
    return best


def _best_reply(
    own: np.ndarray, at: np.ndarray, replies: tuple[np.ndarray, np.ndarray]
) -> np.ndarray:
    """Per position of ``at``, the best ``own`` score of its replies, 0 if none."""
    ptr, children = replies
    best = np.zeros(at.shape[0])
    sizes = ptr[at + 1] - ptr[at]
    held = np.flatnonzero(sizes)
    if held.size:
        starts = ptr[at[held]]
        offsets = np.concatenate([[0], np.cumsum(sizes[held])[:-1]]).astype(np.int64)
        flat = np.repeat(starts - offsets, sizes[held]) + np.arange(int(sizes[held].sum()))
        best[held] = np.maximum.reduceat(own[children[flat]], offsets)
    return best


def _final_scores(
    index: DiscussionIndex, own: np.ndarray, at: np.ndarray, weights: DiscussionConfig
) -> np.ndarray:
    """The final scores of the messages at positions ``at``: their ``own`` scores, a share
    of the best beside them and of their own turns', and the recency prior."""
    beside = np.maximum(
        _best_of(own, at, index.before, index.after, index.parent_at),
        _best_reply(own, at, index.replies()),
    )
    turns = _best_of(own, at, index.own_before, index.own_after)
    score: np.ndarray = own[at] + weights.neighbours * beside + weights.own_turns * turns
    score += weights.recency * _recency(at, len(index.messages)) * (score > 0)
    return score


def _recency(at: np.ndarray, count: int) -> np.ndarray:
    """The recency prior of the messages at positions ``at``: 1 for the newest message,
    falling linearly towards 0 for the oldest."""
    return (at + 1).astype(np.float64) / count


def _placed(
    index: DiscussionIndex,
    at: np.ndarray,
    final: np.ndarray,
    weights: DiscussionConfig,
    left_out: np.ndarray,
) -> np.ndarray:
    """Which of the messages at positions ``at`` may be ranked: a signal beyond the
    recency prior, and not one of the positions ``left_out``."""
    signal = final > weights.recency * _recency(at, len(index.messages)) + 1e-12
    signal[np.isin(at, left_out)] = False
    return signal


RANKING_POOL = 512
"""Messages of best own score around which a bounded ranking computes final scores
first (see :func:`_ranked_positions`)."""


def _ranked_positions(
    index: DiscussionIndex,
    own: np.ndarray,
    weights: DiscussionConfig,
    limit: int | None,
    left_out: np.ndarray,
) -> np.ndarray:
    """Positions whose final scores decide the best ``limit`` messages, ascending: all
    of them, or, when that is provably enough, the :data:`RANKING_POOL` messages of best
    own score, the messages beside them or their turns, and every other message whose
    own score could still place (a message beside none of the pool gains less than the
    pool's lowest own score from each neighbour). The ranking over these positions is
    the ranking over all."""
    count = len(own)
    everything = np.arange(count, dtype=np.int64)
    shares = (weights.neighbours, weights.own_turns, weights.recency)
    if limit is None or count <= 4 * RANKING_POOL or min(shares) < 0:
        return everything
    floor = float(np.partition(own, count - RANKING_POOL)[count - RANKING_POOL])
    if floor <= 0:
        return everything
    first = _around(index, np.flatnonzero(own >= floor))
    final = _final_scores(index, own, first, weights)
    placed = final[_placed(index, first, final, weights, left_out)]
    if placed.size < limit:
        return everything
    cut = float(np.partition(placed, placed.size - limit)[placed.size - limit])
    gain = (weights.neighbours + weights.own_turns) * floor + weights.recency
    # a margin for rounding: a message let in needlessly only costs its computation
    rest = np.flatnonzero(own >= cut - gain - 1e-9)
    return _distinct(np.concatenate([first, rest]))


def _near(index: DiscussionIndex, at: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Every (k, j) where message ``j`` is beside message ``at[k]`` or is its author's
    previous or next turn, as two arrays (``j`` is -1 where a side has none)."""
    ptr, children = index.replies()
    sizes = ptr[at + 1] - ptr[at]
    offsets = np.repeat(ptr[at] - np.concatenate([[0], np.cumsum(sizes)[:-1]]), sizes)
    replies = children[offsets + np.arange(int(sizes.sum()))]
    sides = (index.before, index.after, index.parent_at, index.own_before, index.own_after)
    slots = np.arange(len(at), dtype=np.int64)
    owner = np.concatenate([np.repeat(slots, sizes), *(slots for _ in sides)])
    return owner, np.concatenate([replies, *(side[at] for side in sides)])


def _around(index: DiscussionIndex, at: np.ndarray) -> np.ndarray:
    """The positions ``at`` and the messages beside them or their turns, ascending."""
    return _distinct(np.concatenate([at, _near(index, at)[1]]))


def _strongest_beside(index: DiscussionIndex, own: np.ndarray, at: np.ndarray) -> list[int]:
    """Per position of ``at``, the message beside it or of its own turns with the best
    ``own`` score (the oldest on ties) when that beats its own score, else -1."""
    owner, near = _near(index, at)
    held = near >= 0
    owner, near = owner[held], near[held]
    order = np.lexsort((near, -own[near], owner))
    owner, near = owner[order], near[order]
    first = np.concatenate([[True], owner[1:] != owner[:-1]])[: owner.size]
    best = np.full(len(at), -1, dtype=np.int64)
    best[owner[first]] = near[first]
    best[(best >= 0) & (own[np.maximum(best, 0)] <= own[at])] = -1
    out: list[int] = best.tolist()
    return out


def _distinct(positions: np.ndarray) -> np.ndarray:
    """The non-negative ``positions``, each once, ascending (a sort: hashing small arrays
    of positions is slower)."""
    ordered = np.sort(positions[positions >= 0])
    kept: np.ndarray = ordered[
        np.concatenate([[True], ordered[1:] != ordered[:-1]])[: ordered.size]
    ]
    return kept


def _shared_terms(index: DiscussionIndex, i: int, goal: set[str]) -> set[str]:
    """The goal terms message ``i``'s words hold (its author's name aside)."""
    growth = index._growth
    message = index.messages[i]
    if growth is None:
        return goal & set(prose_terms(message.text))
    held = goal.intersection(growth.words[t] for t in growth.ids[growth.ptr[i] : growth.ptr[i + 1]])
    if held.intersection(prose_terms(message.author)):  # the index counts the author's name
        return goal & set(prose_terms(message.text))
    return held


def rank_discussion(
    index: DiscussionIndex,
    goal: str,
    *,
    goal_vector: np.ndarray | None = None,
    code_names: Mapping[str, str] | None = None,
    config: DiscussionConfig | None = None,
    exclude: Iterable[int] = (),
    limit: int | None = None,
    scores: GoalScores | None = None,
) -> list[RankedMessage]:
    """Rank ``index``'s messages for ``goal``, best first, at most ``limit`` of them;
    messages with no signal, and the sequences in ``exclude``, are left out.
    ``code_names`` maps a salient code name (``resolve_redirects``) to the node id it
    stands for; a message naming it gains the ``code`` weight. ``scores``, from
    :func:`score_goal` for the same goal and config, saves computing them again."""
    weights = config or DiscussionConfig()
    count = len(index.messages)
    if count == 0:
        return []
    if scores is None:
        scores = score_goal(index, goal, goal_vector=goal_vector, config=weights)
    lexical, meaning, spoken, episode = (
        scores.lexical,
        scores.meaning,
        scores.spoken,
        scores.episode,
    )
    goal_terms = scores.goal_terms
    own = scores.score
    code_hits: dict[int, list[str]] = {}
    if code_names and weights.code:
        for name in sorted(code_names):
            for i in index.naming(name):
                code_hits.setdefault(i, []).append(name)
        if code_hits:
            own = own.copy()
            own[sorted(code_hits)] += weights.code
    left_out = np.fromiter(
        (p for p in map(index.position, exclude) if p is not None), dtype=np.int64
    )
    key = (limit, left_out.tobytes())
    at = scores.positions.get(key)
    if at is None:
        at = scores.positions[key] = _ranked_positions(
            index, scores.score, weights, limit, left_out
        )
    if code_hits:
        # code names only raise scores: a message that could not place before still
        # cannot unless it, or a message beside it, names code
        named = np.fromiter(sorted(code_hits), dtype=np.int64)
        at = (
            _distinct(np.concatenate([at, _around(index, named)]))
            if weights.code > 0
            else _ranked_positions(index, own, weights, limit, left_out)
        )
    final = _final_scores(index, own, at, weights)
    kept = np.flatnonzero(_placed(index, at, final, weights, left_out))
    local = _top(final, index.sequences[at], kept, limit)
    order = at[local]
    final_of = final[local].tolist()
    beside = _strongest_beside(index, own, order)
    lexical_of, meaning_of, episode_of = (a[order].tolist() for a in (lexical, meaning, episode))
    spoken_of, pinned_of = spoken[order].tolist(), index.pinned[order].tolist()
    feedback_of = scores.feedback[order].tolist() if scores.feedback is not None else None
    ranked: list[RankedMessage] = []
    goal_set = set(goal_terms)
    for k, i in enumerate(order.tolist()):
        message = index.messages[i]
        reasons: list[str] = []
        if lexical_of[k] > 0:
            shared = sorted(_shared_terms(index, i, goal_set))[:REASON_TERMS]
            reasons.append("matches the goal" + (f" ({', '.join(shared)})" if shared else ""))
        if meaning_of[k] > 0.5:
            reasons.append("close in meaning to the goal")
        if spoken_of[k]:
            reasons.append(f"by {message.author}, named in the goal")
        if episode_of[k] > 0.5:
            reasons.append("in an exchange about the goal")
        if feedback_of is not None and feedback_of[k] > 0.5:
            reasons.append("uses the words of the goal's best matches")
        if pinned_of[k]:
            reasons.append("pinned")
        if i in code_hits:
            reasons.append("names salient code: " + ", ".join(code_hits[i][:REASON_TERMS]))
        if beside[k] >= 0:
            reasons.append(f"beside message {index.messages[beside[k]].sequence}")
        ranked.append(RankedMessage(message.sequence, final_of[k], tuple(reasons)))
    return ranked
