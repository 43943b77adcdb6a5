"""The one ranking: score tiers and density, rank's total order, regex tiers, pickers."""

from __future__ import annotations

import re2
from hypothesis import given
from hypothesis import strategies as st

from coderooms.rooms.desks import Desk, DeskSet
from coderooms.rooms.ranking import (
    DENSITY_SCALE,
    SELECT_LIMIT,
    Candidate,
    Hit,
    MatchField,
    MatchKind,
    Pattern,
    TextMatch,
    pick_agents,
    pick_agents_matching,
    pick_desks,
    pick_desks_matching,
    pick_people,
    pick_people_matching,
    rank,
    rank_matching,
    regex_source,
    score,
)
from coderooms.rooms.roster import Roster, RosterMember, RosterPerson
from coderooms.rooms.wire import from_wire, to_wire


def test_constants() -> None:
    assert SELECT_LIMIT == 8
    assert DENSITY_SCALE == 100
    assert [k.base for k in MatchKind] == [200, 400, 600, 800, 1000]


# --- score ------------------------------------------------------------------------------


def test_exact_match_scores_1100() -> None:
    assert score("Ada", "  ada ") == TextMatch(MatchKind.EXACT, 1100, 0)


def test_prefix_tier_with_density() -> None:
    assert score("ad", "adams") == TextMatch(MatchKind.PREFIX, 800 + 40, 0)


def test_word_prefix_is_the_first_occurrence_at_a_word_start() -> None:
    # "bob" occurs inside "abob" first, then at a word start after the dash
    assert score("bob", "abob-bob") == TextMatch(MatchKind.WORD_PREFIX, 600 + 37, 5)


def test_substring_is_the_first_occurrence_when_none_starts_a_word() -> None:
    assert score("ob", "bobob") == TextMatch(MatchKind.SUBSTRING, 400 + 40, 1)


def test_subsequence_is_greedy_with_offset_at_first_matched_char() -> None:
    assert score("ace", "xabcde") == TextMatch(MatchKind.SUBSEQUENCE, 200 + 50, 1)


def test_no_match_blank_or_longer_query_is_none() -> None:
    assert score("zz", "abc") is None
    assert score("   ", "abc") is None
    assert score("", "abc") is None
    assert score("abcd", "abc") is None
    assert score("a", "   ") is None


def test_case_and_surrounding_whitespace_are_ignored() -> None:
    assert score("  DESK ", "my desk") == TextMatch(MatchKind.WORD_PREFIX, 657, 3)


def test_density_prefers_the_shorter_of_two_same_tier_texts() -> None:
    short, long = score("rev", "review"), score("rev", "reviewer-of-things")
    assert short is not None and long is not None
    assert short.kind == long.kind == MatchKind.PREFIX
    assert short.score > long.score


@given(st.text(min_size=1, max_size=12), st.text(max_size=40))
def test_density_never_promotes_a_tier(query: str, text: str) -> None:
    found = score(query, text)
    if found is None:
        return
    assert found.kind.base <= found.score <= found.kind.base + DENSITY_SCALE
    if found.kind is not MatchKind.EXACT:
        assert found.score <= found.kind.base + DENSITY_SCALE - 1
    assert found.score != 1033


def _naive_score(query: str, text: str) -> TextMatch | None:
    """score written out directly from its definition, for comparison."""
    q, t = query.strip().lower(), text.strip().lower()
    if not q or len(q) > len(t):
        return None

    def scored(kind: MatchKind, offset: int) -> TextMatch:
        return TextMatch(kind, kind.base + min(100, 100 * len(q) // len(t)), offset)

    if q == t:
        return scored(MatchKind.EXACT, 0)
    if t.startswith(q):
        return scored(MatchKind.PREFIX, 0)
    occurrences = [i for i in range(len(t)) if t.startswith(q, i)]
    at_words = [i for i in occurrences if not t[i - 1].isalnum()]
    if at_words:
        return scored(MatchKind.WORD_PREFIX, at_words[0])
    if occurrences:
        return scored(MatchKind.SUBSTRING, occurrences[0])
    position, first = -1, None
    for char in q:
        position = t.find(char, position + 1)
        if position < 0:
            return None
        first = position if first is None else first
    assert first is not None
    return scored(MatchKind.SUBSEQUENCE, first)


_tricky = st.text(alphabet=st.sampled_from(list("ab]^[\\-.*? \nİ")), max_size=14)


@given(_tricky, _tricky)
def test_score_agrees_with_its_definition(query: str, text: str) -> None:
    assert score(query, text) == _naive_score(query, text)


# --- rank -------------------------------------------------------------------------------


def test_exact_name_beats_containment_beats_description_mention() -> None:
    candidates = [
        Candidate("d3", "general chatter", "talk about the review process"),
        Candidate("d2", "code-review-queue"),
        Candidate("d1", "review"),
    ]
    hits = rank("review", candidates, 8)
    assert [h.candidate.id for h in hits] == ["d1", "d2", "d3"]
    assert [h.field for h in hits] == [MatchField.LABEL, MatchField.LABEL, MatchField.DETAIL]
    assert hits[0].match == TextMatch(MatchKind.EXACT, 1100, 0)


def test_detail_scores_half_keeping_tier_and_offset() -> None:
    [hit] = rank("ops", [Candidate("x", "alpha", "ops team")], 8)
    assert hit.field is MatchField.DETAIL
    assert hit.match == TextMatch(MatchKind.PREFIX, (800 + 37) // 2, 0)


def test_id_counts_at_full_weight() -> None:
    [hit] = rank("ada-7", [Candidate("ada-7", "Ada Lovelace")], 8)
    assert hit.field is MatchField.ID
    assert hit.match.score == 1100


def test_field_ties_prefer_label_then_id() -> None:
    [hit] = rank("same", [Candidate("same", "same", "same")], 8)
    assert hit.field is MatchField.LABEL
    [hit] = rank("zz", [Candidate("zz", "qq", "zz")], 8)
    assert hit.field is MatchField.ID


def test_ties_break_on_offset_then_label_length_then_input_order() -> None:
    candidates = [
        Candidate("a", "xx beta"),  # word prefix at 3
        Candidate("b", "beta x"),  # prefix, scores 866
        Candidate("c", "beta y"),  # same as b: input order decides
        Candidate("d", "y beta"),  # word prefix at 2, density 66
    ]
    ids = [h.candidate.id for h in rank("beta", candidates, 8)]
    assert ids == ["b", "c", "d", "a"]
    # densities 200/42 and 200/41 both floor to 4: equal scores and offsets
    equal = [Candidate("long", "ab " + "x" * 39), Candidate("short", "ab " + "x" * 38)]
    hits = rank("ab", equal, 8)
    assert hits[0].match == hits[1].match
    assert [h.candidate.id for h in hits] == ["short", "long"]


def test_blank_query_zero_limit_or_no_match_is_empty() -> None:
    candidates = [Candidate("a", "alpha")]
    assert rank("  ", candidates, 8) == []
    assert rank("alpha", candidates, 0) == []
    assert rank("zzz", candidates, 8) == []


def test_limit_truncates() -> None:
    candidates = [Candidate(str(i), f"item {i}") for i in range(20)]
    assert len(rank("item", candidates, 3)) == 3


def test_hit_wire_forms_are_snake_case() -> None:
    match = TextMatch(MatchKind.WORD_PREFIX, 650, 3)
    assert to_wire(match) == {"kind": "word_prefix", "score": 650, "offset": 3}
    assert from_wire(TextMatch, {"kind": "word_prefix", "score": 650, "offset": 3}) == match
    assert to_wire(MatchField.DETAIL) == "detail"
    assert [to_wire(k) for k in MatchKind] == [
        "subsequence",
        "substring",
        "word_prefix",
        "prefix",
        "exact",
    ]


_labels = st.text(alphabet="abcde -_", min_size=0, max_size=10)
_candidates = st.lists(
    st.builds(Candidate, _labels, _labels, st.none() | _labels), min_size=0, max_size=12
)


def _oracle(query: str, candidates: list[Candidate]) -> list[Hit]:
    """rank written out the slow way: every field scored, the best kept, then sorted."""
    entries = []
    for position, candidate in enumerate(candidates):
        options = [(score(query, candidate.label), MatchField.LABEL, 0)]
        options.append((score(query, candidate.id), MatchField.ID, 1))
        if candidate.detail is not None:
            found = score(query, candidate.detail)
            if found is not None:
                found = TextMatch(found.kind, found.score // 2, found.offset)
            options.append((found, MatchField.DETAIL, 2))
        scored = [(m, f, order) for m, f, order in options if m is not None]
        if not scored:
            continue
        match, field, _ = min(scored, key=lambda item: (-item[0].score, item[2]))
        hit = Hit(candidate, field, match)
        entries.append(((-match.score, match.offset, len(candidate.label), position), hit))
    return [hit for _, hit in sorted(entries, key=lambda entry: entry[0])]


def _key(hit: Hit) -> tuple[int, int, int]:
    return (-hit.match.score, hit.match.offset, len(hit.candidate.label))


@given(st.text(alphabet="abcde -", min_size=1, max_size=4), _candidates, st.randoms())
def test_rank_is_total_and_deterministic_under_any_order(
    query: str, candidates: list[Candidate], rnd: object
) -> None:
    first = rank(query, candidates, 100)
    assert rank(query, candidates, 100) == first
    assert first == _oracle(query, candidates)
    keys = [_key(h) for h in first]
    shuffled = list(candidates)
    rnd.shuffle(shuffled)  # type: ignore[attr-defined]
    again = rank(query, shuffled, 100)
    assert [_key(h) for h in again] == keys
    assert sorted(map(repr, (h.candidate for h in again))) == sorted(
        map(repr, (h.candidate for h in first))
    )


# --- regular expressions ----------------------------------------------------------------


def _regex(source: str) -> Pattern:
    return Pattern.regex(re2.compile(source))


def test_regex_span_reads_onto_the_same_tiers() -> None:
    candidates = [
        Candidate("1", "ops"),  # whole text: exact
        Candidate("2", "opsfoo"),  # at 0: prefix
        Candidate("3", "x ops"),  # after a space: word prefix
        Candidate("4", "xops"),  # inside a word: substring
    ]
    hits = rank_matching(_regex("ops"), candidates, 8)
    assert [(h.candidate.id, h.match.kind) for h in hits] == [
        ("1", MatchKind.EXACT),
        ("2", MatchKind.PREFIX),
        ("3", MatchKind.WORD_PREFIX),
        ("4", MatchKind.SUBSTRING),
    ]
    assert hits[0].match.score == 1100
    assert hits[1].match.score == 800 + 50


def test_zero_width_regex_match_is_the_weakest_substring() -> None:
    [hit] = rank_matching(_regex("x*"), [Candidate("1", "abc")], 8)
    assert hit.match == TextMatch(MatchKind.SUBSTRING, 400, 0)


def test_regex_is_case_sensitive_unless_asked() -> None:
    assert rank_matching(_regex("OPS"), [Candidate("1", "ops")], 8) == []
    assert len(rank_matching(_regex("(?i)OPS"), [Candidate("1", "ops")], 8)) == 1


def test_regex_and_literal_hits_compare_on_one_scale() -> None:
    candidates = [Candidate("1", "deploy"), Candidate("2", "a deploy plan")]
    literal = rank("deploy", candidates, 8)
    expression = rank_matching(_regex("deploy"), candidates, 8)
    assert [(h.candidate.id, h.match) for h in literal] == [
        (h.candidate.id, h.match) for h in expression
    ]


def test_empty_regex_source_is_blank() -> None:
    assert rank_matching(_regex(""), [Candidate("1", "abc")], 8) == []


def test_regex_source_needs_both_slashes_and_an_inside() -> None:
    assert regex_source("/ab+c/") == "ab+c"
    assert regex_source("  / a /  ") == " a "
    assert regex_source("//") is None
    assert regex_source("/") is None
    assert regex_source("/abc") is None
    assert regex_source("abc/") is None
    assert regex_source("plain") is None


def test_pattern_match_scores_one_text() -> None:
    assert Pattern.text("ab").match("abc") == score("ab", "abc")
    assert Pattern.text(" ").match("abc") is None


# --- pickers ----------------------------------------------------------------------------

ROSTER = Roster(
    members=(
        RosterMember("rev-1", "Reviewer"),
        RosterMember("rev-2", "Review Bot"),
        RosterMember("old-rev", "Review"),
        RosterMember("builder"),
    ),
    people=(RosterPerson("p1", "Riva Evans"), RosterPerson("p2", "Bob")),
    retired=("old-rev",),
)


def test_agents_never_offers_retired_agents() -> None:
    hits = pick_agents("review", ROSTER)
    # both prefixes; the shorter label is denser ("old-rev", an exact match, is retired)
    assert [h.candidate.id for h in hits] == ["rev-1", "rev-2"]
    assert [h.match.score for h in hits] == [875, 860]


def test_agents_label_falls_back_to_id() -> None:
    [hit] = pick_agents("builder", ROSTER)
    assert hit.candidate == Candidate("builder", "builder")
    assert hit.match.kind is MatchKind.EXACT


def test_people_rank_by_label_and_id() -> None:
    assert [h.candidate.id for h in pick_people("bob", ROSTER)] == ["p2"]
    assert [h.candidate.id for h in pick_people("p1", ROSTER)] == ["p1"]


def test_desk_named_for_the_query_outranks_one_that_mentions_it() -> None:
    desks = DeskSet(
        declared=(
            Desk("ops-chat", "Ops Chat", description="incidents and the release"),
            Desk("release", "Release"),
        ),
        added=(Desk("release", "Release (dup)"), Desk("misc", "Misc", description="release")),
    )
    hits = pick_desks("release", desks)
    assert [h.candidate.id for h in hits] == ["release", "misc", "ops-chat"]
    assert hits[0].candidate.label == "Release"  # the first record of a duplicated id
    assert [h.field for h in hits] == [MatchField.LABEL, MatchField.DETAIL, MatchField.DETAIL]


def test_pickers_default_to_select_limit() -> None:
    roster = Roster(members=tuple(RosterMember(f"a{i}") for i in range(20)))
    assert len(pick_agents("a", roster)) == SELECT_LIMIT
    assert len(pick_agents("a", roster, limit=3)) == 3


def test_matching_forms_take_a_pattern() -> None:
    assert [h.candidate.id for h in pick_agents_matching(_regex("^rev-"), ROSTER)] == [
        "rev-1",
        "rev-2",
    ]
    assert [h.candidate.id for h in pick_people_matching(_regex("Bo"), ROSTER)] == ["p2"]
    desks = DeskSet(declared=(Desk("a", "Alpha"), Desk("b", "Beta")))
    assert [h.candidate.id for h in pick_desks_matching(Pattern.text("bet"), desks)] == ["b"]
