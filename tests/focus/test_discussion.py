"""Goal-conditioned ranking of a desk's messages (the pure part of focus over the room)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from coderooms.focus import discussion
from coderooms.focus.discussion import (
    EPISODE_GAP_SECONDS,
    DeskMessage,
    DiscussionConfig,
    FactoredVectors,
    build_discussion_index,
    extend_discussion_index,
    prose_terms,
    rank_discussion,
)


def at(seconds: int) -> str:
    hours, rest = divmod(seconds, 3600)
    return f"2026-11-{1 + hours // 24:02d}T{hours % 24:02d}:{rest // 60:02d}:{rest % 60:02d}Z"


def talk(*lines: tuple[str, str], gap: int = 1, start: int = 0) -> list[DeskMessage]:
    return [
        DeskMessage(start + i + 1, who, text, posted_at=at(start * 10 + i * gap))
        for i, (who, text) in enumerate(lines)
    ]


def test_prose_terms_stem_and_drop_function_words() -> None:
    assert prose_terms("She painted the sunrise; I'm painting sunsets") == [
        "paint",
        "sunris",
        "paint",
        "sunset",
    ]


def test_the_message_that_matches_ranks_first_and_says_which_words_matched() -> None:
    messages = talk(
        ("Ann", "lunch was nice"),
        ("Bo", "the retry backoff doubles on every timeout"),
        ("Ann", "weather is grey"),
    )
    ranked = rank_discussion(build_discussion_index(messages), "why does the backoff double?")
    assert ranked[0].sequence == 2
    assert ranked[0].reasons[0].startswith("matches the goal (")
    assert "backoff" in ranked[0].reasons[0]


def test_a_question_brings_its_answer_along() -> None:
    messages = [
        DeskMessage(1, "Ann", "which timeout does the uploader use?", posted_at=at(0)),
        DeskMessage(2, "Cy", "unrelated: the build is green", posted_at=at(1)),
        DeskMessage(3, "Bo", "thirty seconds, set in config", parent=1, posted_at=at(2)),
    ]
    quiet = DiscussionConfig(episode=0.0)
    ranked = rank_discussion(build_discussion_index(messages), "uploader timeout", config=quiet)
    order = [r.sequence for r in ranked]
    assert order[:2] == [1, 3]
    assert any(reason == "beside message 1" for reason in ranked[1].reasons)
    without = rank_discussion(
        build_discussion_index(messages), "uploader timeout", config=quiet.scaled(neighbours=0)
    )
    assert [r.sequence for r in without] == [1]


def test_a_goal_naming_a_speaker_lifts_what_they_said() -> None:
    messages = talk(("Ann", "I moved the cache"), ("Bo", "I moved the cache too"))
    ranked = rank_discussion(build_discussion_index(messages), "where did Ann move the cache?")
    assert ranked[0].sequence == 1
    assert "by Ann, named in the goal" in ranked[0].reasons


def test_a_long_pause_starts_a_new_episode() -> None:
    early = talk(("Ann", "the parser drops comments"), ("Bo", "yes, since the rewrite"))
    late = [
        DeskMessage(3, "Ann", "lunch?", posted_at=at(EPISODE_GAP_SECONDS + 100)),
        DeskMessage(4, "Bo", "sure", posted_at=at(EPISODE_GAP_SECONDS + 101)),
    ]
    index = build_discussion_index(early + late)
    assert list(index.episode_of) == [0, 0, 1, 1]
    ranked = rank_discussion(index, "parser comments")
    assert {r.sequence for r in ranked} == {1, 2}
    assert "in an exchange about the goal" in ranked[1].reasons


def test_salient_code_names_lift_the_messages_that_write_them_whole() -> None:
    messages = talk(
        ("Ann", "we should not touch resolve_redirects before the release"),
        ("Bo", "redirects resolve fine for me"),
        ("Cy", "resolve_redirects_later is another function"),
    )
    index = build_discussion_index(messages)
    names = {"resolve_redirects": "requests/sessions.py::Session.resolve_redirects"}
    ranked = rank_discussion(index, "redirect loop", code_names=names)
    assert ranked[0].sequence == 1
    assert "names salient code: resolve_redirects" in ranked[0].reasons
    assert not any("salient code" in r for m in ranked[1:] for r in m.reasons)


def test_meaning_counts_when_vectors_are_given() -> None:
    messages = talk(("Ann", "alpha"), ("Bo", "beta"))
    vectors = np.array([[1.0, 0.0], [0.0, 1.0]])
    index = build_discussion_index(messages, vectors)
    ranked = rank_discussion(index, "gamma", goal_vector=np.array([0.1, 1.0]))
    assert ranked[0].sequence == 2
    assert "close in meaning to the goal" in ranked[0].reasons
    with pytest.raises(ValueError, match="1 vectors for 2 messages"):
        build_discussion_index(messages, vectors[:1])


def test_nothing_to_say_gives_nothing() -> None:
    assert rank_discussion(build_discussion_index([]), "anything") == []
    messages = talk(("Ann", "lunch"), ("Bo", "coffee"))
    assert rank_discussion(build_discussion_index(messages), "compiler flags") == []


words = st.sampled_from(["cache", "parser", "lunch", "retry", "token", "desk", "focus"])


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.lists(words, min_size=1, max_size=6).map(" ".join), min_size=1, max_size=30),
    st.lists(words, min_size=1, max_size=3).map(" ".join),
)
def test_ranking_is_deterministic_ordered_and_names_each_message_once(
    texts: list[str], goal: str
) -> None:
    messages = [
        DeskMessage(i + 1, "Ann" if i % 2 else "Bo", t, posted_at=at(i))
        for i, t in enumerate(texts)
    ]
    first = rank_discussion(build_discussion_index(messages), goal)
    again = rank_discussion(build_discussion_index(messages), goal)
    assert first == again
    scores = [r.score for r in first]
    assert scores == sorted(scores, reverse=True)
    assert len({r.sequence for r in first}) == len(first)
    assert all(r.reasons for r in first)


@given(st.datetimes(min_value=__import__("datetime").datetime(1900, 1, 1)))
def test_post_times_are_read_without_a_clock_as_the_calendar_reads_them(moment) -> None:
    from datetime import UTC

    from coderooms.focus.discussion import _seconds

    text = moment.strftime("%Y-%m-%dT%H:%M:%SZ")
    assert _seconds(text) == float(int(moment.replace(tzinfo=UTC, microsecond=0).timestamp()))


def test_a_story_told_over_several_turns_brings_its_other_turns() -> None:
    messages = talk(
        ("Ann", "we rewrote the uploader retries last week"),
        ("Bo", "oh nice, how did it go?"),
        ("Ann", "fine, it waits thirty seconds now"),
        ("Bo", "lunch later?"),
    )
    quiet = DiscussionConfig(episode=0.0, neighbours=0.0, recency=0.0)
    ranked = rank_discussion(build_discussion_index(messages), "uploader retries", config=quiet)
    assert [r.sequence for r in ranked] == [1, 3]
    assert "beside message 1" in ranked[1].reasons
    alone = rank_discussion(
        build_discussion_index(messages), "uploader retries", config=quiet.scaled(own_turns=0)
    )
    assert [r.sequence for r in alone] == [1]


def test_a_turn_of_another_episode_is_not_an_own_turn() -> None:
    early = talk(("Ann", "the uploader retries"), ("Bo", "ok"))
    late = [DeskMessage(3, "Ann", "see you", posted_at=at(EPISODE_GAP_SECONDS + 100))]
    index = build_discussion_index(early + late)
    assert index.own_turns_of(0) == []
    assert index.own_turns_of(2) == []


def test_pins_given_whole_to_an_extension_mark_older_messages() -> None:
    messages = talk(("Ann", "the cache key is the path"), ("Bo", "!pin 1"))
    index = build_discussion_index(messages[:1])
    grown = extend_discussion_index(index, messages[1:], pinned=frozenset({1}))
    assert list(grown.pinned) == [True, False]
    assert list(index.pinned) == [False]


def test_an_extension_refuses_vectors_that_do_not_fit() -> None:
    messages = talk(("Ann", "alpha"), ("Bo", "beta"))
    with_vectors = build_discussion_index(messages[:1], np.array([[1.0, 0.0]]))
    with pytest.raises(ValueError, match="no vectors for 1 new messages"):
        extend_discussion_index(with_vectors, messages[1:])
    with pytest.raises(ValueError, match="2 vectors for 1 messages"):
        extend_discussion_index(with_vectors, messages[1:], np.ones((2, 2)))
    without = build_discussion_index(messages[:1])
    with pytest.raises(ValueError, match="index without vectors"):
        extend_discussion_index(without, messages[1:], np.ones((1, 2)))


message_rows = st.lists(
    st.tuples(
        st.sampled_from(["Ann", "Bo", "Cy"]),
        st.lists(words, min_size=0, max_size=5).map(" ".join),
        st.integers(min_value=0, max_value=3 * EPISODE_GAP_SECONDS),
        st.one_of(st.none(), st.integers(min_value=0, max_value=40)),
    ),
    min_size=1,
    max_size=40,
)


def desk_of(rows: list[tuple[str, str, int, int | None]]) -> list[DeskMessage]:
    """Messages of (author, text, pause before it, parent position) rows."""
    moment = 0
    messages = []
    for i, (who, text, pause, parent) in enumerate(rows):
        moment += pause
        up = parent + 1 if parent is not None and parent < i else None
        messages.append(DeskMessage(i + 1, who, text, parent=up, posted_at=at(moment)))
    return messages


@settings(max_examples=60, deadline=None)
@given(message_rows, st.integers(min_value=0, max_value=40), st.booleans())
def test_an_extended_index_is_the_index_built_over_all_its_messages(
    rows: list[tuple[str, str, int, int | None]], cut: int, vectored: bool
) -> None:
    messages = desk_of(rows)
    vectors = np.random.default_rng(len(rows)).random((len(rows), 3)) if vectored else None
    cut = min(cut, len(messages))
    whole = build_discussion_index(messages, vectors)
    part = build_discussion_index(messages[:cut], None if vectors is None else vectors[:cut])
    part.naming("cache")  # an identifier map already built is extended too
    grown = extend_discussion_index(
        part, messages[cut:], None if vectors is None else vectors[cut:]
    )
    for name in ("episode_of", "before", "after", "parent_at", "own_before", "own_after"):
        assert np.array_equal(getattr(grown, name), getattr(whole, name)), name
    assert np.array_equal(grown.author_of, whole.author_of)
    assert np.array_equal(grown.reply_parent, whole.reply_parent)
    assert np.array_equal(grown.reply_child, whole.reply_child)
    assert grown.authors == whole.authors
    for goal in ("cache parser", "lunch retry token", "desk focus Ann"):
        vector = None if vectors is None else np.ones(3)
        for bm25 in ("terms", "episodes"):
            assert np.array_equal(
                getattr(grown, bm25).scores(prose_terms(goal)),
                getattr(whole, bm25).scores(prose_terms(goal)),
            )
        assert rank_discussion(grown, goal, goal_vector=vector) == rank_discussion(
            whole, goal, goal_vector=vector
        )
    assert grown.naming("cache") == whole.naming("cache")


def apart(*lines: tuple[str, str]) -> list[DeskMessage]:
    """Messages each in an episode of its own."""
    return [
        DeskMessage(i + 1, who, text, posted_at=at(i * 2 * EPISODE_GAP_SECONDS))
        for i, (who, text) in enumerate(lines)
    ]


def test_feedback_finds_a_message_in_the_words_of_the_best_matches() -> None:
    messages = apart(
        ("Ann", "our family camping trip to the lake with the fam"),
        ("Bo", "build is green"),
        ("Ann", "the fam loved the lake"),
        ("Bo", "lunch?"),
    )
    index = build_discussion_index(messages)
    ranked = rank_discussion(index, "family camping")
    assert [r.sequence for r in ranked] == [1, 3]
    assert "uses the words of the goal's best matches" in ranked[1].reasons
    plain = rank_discussion(index, "family camping", config=DiscussionConfig(feedback=0.0))
    assert [r.sequence for r in plain] == [1]


def test_feedback_leaves_the_authors_names_out() -> None:
    messages = apart(("Ann", "the cache key is the path"), ("Ann", "lunch?"))
    ranked = rank_discussion(build_discussion_index(messages), "cache key")
    assert [r.sequence for r in ranked] == [1]


def test_a_possessive_names_the_speaker() -> None:
    messages = apart(("Ann", "I moved it"), ("Bo", "I moved it too"))
    ranked = rank_discussion(build_discussion_index(messages), "where is Ann's move?")
    assert ranked[0].sequence == 1
    assert "by Ann, named in the goal" in ranked[0].reasons


def _plain_ranking(index, own, config, exclude, limit):
    """The ranking's definition, one message at a time: own score, a share of the best
    beside and of the best own turn, the recency prior; best first, newer first on ties."""
    count = len(index.messages)
    out = []
    for i in range(count):
        beside = max([own[j] for j in index.neighbours_of(i)], default=0.0)
        turns = max([own[j] for j in index.own_turns_of(i)], default=0.0)
        final = own[i] + config.neighbours * beside + config.own_turns * turns
        recency = (i + 1) / count
        final = final + config.recency * recency * (final > 0)
        if final > config.recency * recency + 1e-12 and index.messages[i].sequence not in exclude:
            out.append((-final, -index.messages[i].sequence, i))
    return [(index.messages[i].sequence, -f) for f, _, i in sorted(out)[:limit]]


@settings(max_examples=80, deadline=None)
@given(
    message_rows,
    st.lists(words, min_size=1, max_size=3).map(" ".join),
    st.integers(min_value=1, max_value=6),
    st.frozensets(st.integers(min_value=1, max_value=40), max_size=6),
    st.sampled_from(["", "cache", "parser lunch"]),
)
def test_a_bounded_ranking_is_the_ranking_over_every_message(
    rows, goal, limit, exclude, code
) -> None:
    messages = desk_of(rows)
    vectors = np.random.default_rng(len(rows)).random((len(rows), 3))
    index = build_discussion_index(messages, vectors)
    config = DiscussionConfig()
    scores = discussion.score_goal(index, goal, goal_vector=np.ones(3), config=config)
    names = {name: name for name in code.split()}
    own = scores.score.copy()
    for i in sorted({i for name in names for i in index.naming(name)}):
        own[i] += config.code
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(discussion, "RANKING_POOL", 2)  # prune from 9 messages on
        plain = rank_discussion(index, goal, exclude=exclude, limit=limit, scores=scores)
        # the second ranking starts from the positions the first one kept
        ranked = rank_discussion(
            index, goal, code_names=names, exclude=exclude, limit=limit, scores=scores
        )
    assert [(r.sequence, r.score) for r in plain] == _plain_ranking(
        index, scores.score, config, exclude, limit
    )
    assert [(r.sequence, r.score) for r in ranked] == _plain_ranking(
        index, own, config, exclude, limit
    )
    for r in ranked:  # the strongest message beside it, the oldest on ties
        i = index.position(r.sequence)
        near = index.neighbours_of(i) + index.own_turns_of(i)
        best = max(near, key=lambda j: (own[j], -j)) if near else None
        said = [x for x in r.reasons if x.startswith("beside message ")]
        if best is not None and own[best] > own[i]:
            assert said == [f"beside message {index.messages[best].sequence}"]
        else:
            assert said == []


def test_a_bounded_ranking_computes_only_the_messages_that_may_place() -> None:
    count = 6000
    messages = [
        DeskMessage(i + 1, "Ann" if i % 2 else "Bo", f"note {i}", posted_at=at(i))
        for i in range(count)
    ]
    angles = np.random.default_rng(7).uniform(0, np.pi / 2, count)
    vectors = np.stack([np.cos(angles), np.sin(angles)], axis=1)
    index = build_discussion_index(messages, vectors)
    goal = np.array([1.0, 0.0])
    own = discussion.score_goal(index, "notes", goal_vector=goal).score
    positions = discussion._ranked_positions(
        index, own, DiscussionConfig(), 10, np.zeros(0, dtype=np.int64)
    )
    assert 0 < len(positions) < count // 2
    ranked = rank_discussion(index, "notes", goal_vector=goal, limit=10)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(discussion, "RANKING_POOL", count)  # every message computed
        assert rank_discussion(index, "notes", goal_vector=goal, limit=10) == ranked


@settings(max_examples=40, deadline=None)
@given(message_rows, st.integers(min_value=0, max_value=40))
def test_factored_vectors_rank_as_their_dense_rows_and_extend_as_a_build(
    rows: list[tuple[str, str, int, int | None]], cut: int
) -> None:
    messages = desk_of(rows)
    rng = np.random.default_rng(len(rows))
    token_of = {w: k for k, w in enumerate(sorted({"cache", "parser", "lunch", "retry"}))}
    basis = rng.random((len(token_of), 3)).astype(np.float32)
    # each message's own row points its own way: parallel rows tied every message's
    # meaning to within float rounding, and the rounding then chose among the ties
    own_rows = rng.random((len(messages) + 1, 3)).astype(np.float32)

    def factored(part: list[DeskMessage]) -> FactoredVectors:
        # each word a shared row (its key), the message's author a row of its own
        entries = [[(token_of[w], 1.0) for w in m.text.split() if w in token_of] for m in part]
        keys = np.array([*token_of.values(), *[-1] * len(part)], dtype=np.int64)
        rows_ = [r for r, e in enumerate(entries) for _ in e] + list(range(len(part)))
        cols = [c for e in entries for c, _ in e] + [len(token_of) + r for r in range(len(part))]
        weights = sp.csr_matrix(
            (np.ones(len(cols), dtype=np.float32), (rows_, cols)), shape=(len(part), len(keys))
        )
        own = own_rows[[m.sequence for m in part]]
        return FactoredVectors(keys, np.concatenate([basis, own]), weights)

    whole = factored(messages)
    dense = np.asarray(whole.weights @ whole.basis)
    cut = min(cut, len(messages))
    grown = extend_discussion_index(
        build_discussion_index(messages[:cut], factored(messages[:cut])),
        messages[cut:],
        factored(messages[cut:]),
    )
    built = build_discussion_index(messages, whole)
    plain = build_discussion_index(messages, dense)
    goal = np.array([0.3, 0.5, 0.2])
    for index in (grown, built):
        assert np.allclose(index.vectors.dot(goal), plain.vectors @ goal, atol=1e-6)
        ranked = rank_discussion(index, "cache lunch", goal_vector=goal)
        expected = rank_discussion(plain, "cache lunch", goal_vector=goal)
        assert [r.score for r in ranked] == pytest.approx([r.score for r in expected])


def test_factored_and_dense_vectors_do_not_mix_in_one_index() -> None:
    messages = talk(("Ann", "alpha"), ("Bo", "beta"))
    dense = build_discussion_index(messages[:1], np.array([[1.0, 0.0]]))
    one = FactoredVectors(
        np.array([-1]), np.array([[1.0, 0.0]], dtype=np.float32), sp.csr_matrix(np.ones((1, 1)))
    )
    with pytest.raises(ValueError, match="factored and dense"):
        extend_discussion_index(dense, messages[1:], one)
