"""search_messages: scope, author filter, ordering, the scan bound, excerpts, patterns."""

from __future__ import annotations

import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from session_fakes import CountingLog

from coderooms.errors import (
    BlankQuery,
    InvalidBound,
    InvalidPattern,
    QueryTooLong,
    ReadError,
    RegexUnsupported,
)
from coderooms.rooms.memory import MemoryLog
from coderooms.rooms.ranking import MatchKind, score
from coderooms.rooms.records import (
    Agent,
    Conversation,
    LogMessage,
    Operator,
    Person,
    SessionPage,
    System,
)
from coderooms.rooms.search import (
    EXCERPT_CHARS,
    SEARCH_LIMIT,
    SEARCH_SCAN,
    MessageHit,
    Re2Regex,
    SearchPattern,
    SearchQuery,
    SearchRegex,
    SearchText,
    collapse_whitespace,
    compile_regex,
    excerpt_around,
    original_offset,
    search_messages,
)
from coderooms.rooms.wire import from_wire, to_wire

ADA = Agent("ada", "Ada")
BOB = Person("bob", "Bob")
ENG = Conversation("eng", "Engineering")


def text(query: str, **kwargs: object) -> SearchQuery:
    return SearchQuery(SearchPattern.text(query), **kwargs)  # type: ignore[arg-type]


def regex(source: str, **kwargs: object) -> SearchQuery:
    return SearchQuery(SearchPattern.regex(source), **kwargs)  # type: ignore[arg-type]


def test_constants() -> None:
    assert (SEARCH_LIMIT, SEARCH_SCAN, EXCERPT_CHARS) == (10, 2048, 96)
    assert SearchQuery(SearchPattern.text("x")).limit == SEARCH_LIMIT


# --- patterns and wire forms ---------------------------------------------------------------


def test_parse_reads_slashes_as_an_expression_and_trims_text() -> None:
    assert SearchPattern.parse(" /a+b/ ") == SearchRegex("a+b")
    assert SearchPattern.parse("  deploy plan ") == SearchText("deploy plan")
    assert SearchPattern.parse("//") == SearchText("//")
    assert SearchPattern.parse("/half") == SearchText("/half")


def test_search_query_wire_form() -> None:
    query = SearchQuery(
        SearchPattern.regex("dep.oy"), scope=Conversation("eng", "Eng", 4), author_id="ada"
    )
    wire = {
        "pattern": {"type": "regex", "source": "dep.oy"},
        "scope": {"desk_id": "eng", "desk_name": "Eng", "thread_root": 4},
        "author_id": "ada",
        "before": None,
        "limit": 10,
    }
    assert to_wire(query) == wire
    assert from_wire(SearchQuery, wire) == query
    plain = SearchQuery(SearchPattern.text("x"), before=7, limit=3)
    assert to_wire(plain)["pattern"] == {"type": "text", "query": "x"}
    assert from_wire(SearchQuery, to_wire(plain)) == plain


def test_search_pattern_wire_rejects_unknown_tags_and_missing_fields() -> None:
    from coderooms.errors import WireError

    with pytest.raises(WireError):
        from_wire(SearchPattern, {"type": "glob", "query": "x"})
    with pytest.raises(WireError):
        from_wire(SearchPattern, {"type": "text"})
    with pytest.raises(WireError):
        from_wire(SearchQuery, {"pattern": {"type": "text", "query": "x"}})


def test_message_hit_wire_form() -> None:
    hit = MessageHit(9, "eng", 4, ADA, "the plan", 850, MatchKind.PREFIX)
    wire = {
        "sequence": 9,
        "chat_id": "eng",
        "parent": 4,
        "author": {"type": "agent", "id": "ada", "label": "Ada"},
        "excerpt": "the plan",
        "score": 850,
        "kind": "prefix",
    }
    assert to_wire(hit) == wire
    assert from_wire(MessageHit, wire) == hit


# --- what is read --------------------------------------------------------------------------


async def test_zero_limit_or_blank_pattern_reads_nothing() -> None:
    log = CountingLog(MemoryLog([LogMessage(1, ADA, "hello")]))
    assert await search_messages(log, text("hello", limit=0)) == []
    assert await search_messages(log, text("   ")) == []
    assert await search_messages(log, regex("")) == []
    assert log.requests == []


async def test_a_whitespace_expression_is_not_blank() -> None:
    log = MemoryLog([LogMessage(1, ADA, "a b")])
    [hit] = await search_messages(log, regex(" "))
    assert (hit.kind, hit.score) == (MatchKind.SUBSTRING, 433)


async def test_negative_limit_is_an_error() -> None:
    with pytest.raises(InvalidBound):
        await search_messages(MemoryLog(), text("x", limit=-1))


async def test_an_expression_that_does_not_compile_fails_before_reading() -> None:
    log = CountingLog(MemoryLog([LogMessage(1, ADA, "(unclosed")]))
    with pytest.raises(InvalidPattern) as caught:
        await search_messages(log, regex("(unclosed"))
    assert caught.value.pattern == "(unclosed"
    assert "missing )" in caught.value.message
    assert log.requests == []


async def test_backreferences_are_refused_not_searched_literally() -> None:
    log = MemoryLog([LogMessage(1, ADA, r"(a)\1 aa")])
    with pytest.raises(InvalidPattern):
        await search_messages(log, regex(r"(a)\1"))


async def test_no_engine_is_regex_unsupported(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "re2", None)  # import re2 now raises ImportError
    log = CountingLog(MemoryLog([LogMessage(1, ADA, "abc")]))
    with pytest.raises(RegexUnsupported) as caught:
        await search_messages(log, regex("a.c"))
    assert caught.value.pattern == "a.c"
    assert log.requests == []
    # text search does not need the engine
    assert len(await search_messages(log, text("abc"))) == 1


async def test_the_walk_stops_at_search_scan_and_returns_what_it_found() -> None:
    rows = [LogMessage(1, ADA, "needle far back")]
    rows += [LogMessage(i, ADA, "hay") for i in range(2, SEARCH_SCAN + 2)]
    rows[-1] = LogMessage(SEARCH_SCAN + 1, ADA, "needle near")
    log = CountingLog(MemoryLog(rows))
    hits = await search_messages(log, text("needle"))
    assert [h.sequence for h in hits] == [SEARCH_SCAN + 1]
    assert sum(limit for _, limit in log.requests) == SEARCH_SCAN
    # from an older cursor the far one is in range
    older = await search_messages(log, text("needle", before=SEARCH_SCAN + 1))
    assert [h.sequence for h in older] == [1]


async def test_before_is_exclusive() -> None:
    log = MemoryLog([LogMessage(i, ADA, "same words") for i in range(1, 6)])
    hits = await search_messages(log, text("same", before=4))
    assert [h.sequence for h in hits] == [3, 2, 1]


async def test_a_failing_log_is_a_read_error() -> None:
    class Broken:
        async def read_before(self, before: int | None, limit: int) -> SessionPage:
            raise OSError("disk gone")

    with pytest.raises(ReadError):
        await search_messages(Broken(), text("x"))


# --- scope and author ----------------------------------------------------------------------


def _threaded_log() -> MemoryLog:
    log = MemoryLog()
    log.add(ADA, "root of the deploy thread", chat_id="eng")  # 1
    log.add(BOB, "deploy reply inside the thread", chat_id="Engineering", parent=1)  # 2
    log.add(ADA, "deploy reply to the reply", chat_id="eng", parent=2)  # 3
    log.add(ADA, "deploy talk in another desk", chat_id="ops")  # 4
    log.add(ADA, "another deploy thread root", chat_id="eng")  # 5
    log.add(BOB, "deploy reply in the other thread", chat_id="eng", parent=5)  # 6
    log.add(ADA, "ENGINEERING is not this desk: deploy", chat_id="ENGINEERING")  # 7
    return log


async def test_unscoped_search_reads_the_whole_log() -> None:
    hits = await search_messages(_threaded_log(), text("deploy", limit=20))
    assert sorted(h.sequence for h in hits) == [1, 2, 3, 4, 5, 6, 7]


async def test_desk_scope_reaches_replies_buried_in_threads() -> None:
    hits = await search_messages(_threaded_log(), text("deploy", scope=ENG, limit=20))
    assert sorted(h.sequence for h in hits) == [1, 2, 3, 5, 6]


async def test_thread_scope_stays_in_its_thread() -> None:
    scope = Conversation("eng", "Engineering", thread_root=1)
    hits = await search_messages(_threaded_log(), text("deploy", scope=scope, limit=20))
    assert sorted(h.sequence for h in hits) == [1, 2]
    assert {h.parent for h in hits} == {None, 1}


async def test_thread_scope_stops_reading_at_its_root() -> None:
    log = MemoryLog([LogMessage(i, ADA, "filler", chat_id="eng") for i in range(1, 2001)])
    log.add(ADA, "the root", chat_id="eng")  # 2001
    log.add(ADA, "the reply", chat_id="eng", parent=2001)  # 2002
    counting = CountingLog(log)
    scope = Conversation("eng", "eng", thread_root=2001)
    hits = await search_messages(counting, text("the", scope=scope))
    assert sorted(h.sequence for h in hits) == [2001, 2002]
    assert len(counting.requests) == 1


async def test_author_filter_matches_ids_kinds_and_operator() -> None:
    log = MemoryLog()
    log.add(ADA, "note from ada")
    log.add(BOB, "note from bob")
    log.add(System("cron", "Cron"), "note from cron")
    log.add(Operator(), "note from the operator")
    log.add(Agent("bob", "Bob the agent"), "note from agent bob")

    async def authors(who: str) -> list[int]:
        return [h.sequence for h in await search_messages(log, text("note", author_id=who))]

    assert await authors("ada") == [1]
    assert await authors("bob") == [2, 5]  # the shorter row is denser
    assert await authors("cron") == [3]
    assert await authors("operator") == [4]
    assert await authors("nobody") == []


# --- ordering ------------------------------------------------------------------------------


async def test_hits_order_by_score_then_newest_first() -> None:
    log = MemoryLog()
    log.add(ADA, "deploy")  # 1: exact
    log.add(ADA, "we deploy")  # 2: word prefix
    log.add(ADA, "deploy")  # 3: exact, newer
    log.add(ADA, "redeploy now")  # 4: substring
    hits = await search_messages(log, text("DEPLOY"))
    assert [(h.sequence, h.kind) for h in hits] == [
        (3, MatchKind.EXACT),
        (1, MatchKind.EXACT),
        (2, MatchKind.WORD_PREFIX),
        (4, MatchKind.SUBSTRING),
    ]
    assert [h.score for h in hits] == [1100, 1100, 666, 450]
    assert [h.sequence for h in await search_messages(log, text("deploy", limit=2))] == [3, 1]


async def test_literal_and_expression_hits_share_one_score() -> None:
    log = MemoryLog()
    for content in ["deploy", "we deploy", "redeploy now", "deploy plan"]:
        log.add(ADA, content)
    literal = await search_messages(log, text("deploy"))
    expression = await search_messages(log, regex("deploy"))
    assert [(h.sequence, h.score, h.kind) for h in literal] == [
        (h.sequence, h.score, h.kind) for h in expression
    ]
    mixed = sorted(literal[:2] + expression[2:], key=lambda h: -h.score)
    assert [h.score for h in mixed] == sorted((h.score for h in literal), reverse=True)


async def test_matching_uses_whitespace_collapsed_content() -> None:
    log = MemoryLog([LogMessage(1, ADA, "the   deploy\n\n  plan  ")])
    [hit] = await search_messages(log, text("deploy plan"))
    assert hit.excerpt == "the deploy plan"
    assert hit.kind is MatchKind.WORD_PREFIX


async def test_adversarial_expression_runs_on_the_linear_engine() -> None:
    log = MemoryLog([LogMessage(i, ADA, "a" * 30 + "b") for i in range(1, SEARCH_SCAN + 1)])
    assert await search_messages(log, regex("(a+)+$")) == []
    hits = await search_messages(log, regex("(a+)+b$"))
    assert len(hits) == SEARCH_LIMIT
    assert hits[0].kind is MatchKind.EXACT


# --- excerpts ------------------------------------------------------------------------------


def test_short_lines_are_their_own_excerpt() -> None:
    line = "x" * EXCERPT_CHARS
    assert excerpt_around(line, 50) == line


def test_long_line_excerpt_starts_24_before_the_match() -> None:
    line = "".join(chr(ord("a") + i % 26) for i in range(300))
    excerpt = excerpt_around(line, 150)
    assert excerpt == "…" + line[126:222] + "…"


def test_excerpt_is_clamped_at_both_ends() -> None:
    line = "".join(chr(ord("a") + i % 26) for i in range(200))
    assert excerpt_around(line, 10) == line[:96] + "…"
    assert excerpt_around(line, 190) == "…" + line[104:]


async def test_excerpt_maps_lowercased_offsets_back_to_the_text() -> None:
    # "İ" lowercases to two characters, so offsets in the lowered text run ahead
    content = "İ" * 100 + " needle " + "z" * 100
    log = MemoryLog([LogMessage(1, ADA, content)])
    [hit] = await search_messages(log, text("needle"))
    assert hit.excerpt == "…" + ("İ" * 23 + " needle " + "z" * 100)[:96] + "…"
    assert "needle" in hit.excerpt


def test_original_offset_covers_expanding_characters() -> None:
    assert original_offset("İx", 0) == 0
    assert original_offset("İx", 1) == 0  # the combining dot belongs to İ
    assert original_offset("İx", 2) == 1
    assert original_offset("abc", 2) == 2


_alphabet = st.sampled_from(list("abc XYZİßσΣ\t\n"))


@settings(max_examples=200)
@given(
    st.text(_alphabet, max_size=150),
    st.text(st.sampled_from(list("abcİ")), min_size=1, max_size=60),
    st.text(_alphabet, max_size=150),
)
async def test_excerpt_contains_the_match_and_stays_bounded(
    before: str, needle: str, after: str
) -> None:
    content = before + " " + needle + " " + after
    log = MemoryLog([LogMessage(1, ADA, content)])
    hits = await search_messages(log, text(needle))
    [hit] = hits
    assert len(hit.excerpt) <= EXCERPT_CHARS + 2
    body = hit.excerpt.removeprefix("…").removesuffix("…")
    assert len(body) <= EXCERPT_CHARS
    assert body in " ".join(content.split())
    found = score(needle, " ".join(content.split()))
    assert found is not None and found.score == hit.score
    if hit.kind is not MatchKind.SUBSEQUENCE:
        assert needle.lower() in hit.excerpt.lower()


# --- the engine adapter --------------------------------------------------------------------


@pytest.mark.parametrize("lean", [True, False])
def test_compiled_expressions_report_character_offsets(lean: bool) -> None:
    compiled = compile_regex("né+dle")
    assert isinstance(compiled, Re2Regex)
    if not lean:  # the module's own search, as used when the direct entry point is absent
        compiled = Re2Regex(
            type("Plain", (), {"pattern": "né+dle", "search": compiled._compiled.search})()
        )
    found = compiled.search("İß ž néédle")
    assert found is not None and found.span() == (5, 11)
    assert compiled.search("nothing") is None
    assert compiled.pattern == "né+dle"
    assert compiled.search("x\udcffnéédle").span() == (2, 8)  # type: ignore[union-attr]


async def test_regex_hits_on_non_ascii_rows_excerpt_at_the_match() -> None:
    content = "ž" * 150 + " needle " + "z" * 150
    log = MemoryLog([LogMessage(1, ADA, content)])
    [hit] = await search_messages(log, regex("ne+dle"))
    assert hit.excerpt == "…" + ("ž" * 23 + " needle " + "z" * 150)[:96] + "…"


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.text(st.sampled_from(list("ab cdA\t\nΣσİß")), max_size=12), max_size=60),
    st.text(st.sampled_from(list("abcA σΣİ")), min_size=1, max_size=4),
    st.integers(min_value=1, max_value=6),
)
async def test_search_returns_exactly_the_best_hits_scored_one_by_one(
    contents: list[str], needle: str, limit: int
) -> None:
    # The definition: score every row, order by score then newest, keep ``limit``.
    rows = [LogMessage(seq, ADA, content) for seq, content in enumerate(contents, start=1)]
    scored = [
        (found.score, row.sequence)
        for row in rows
        if (found := score(needle, " ".join(row.content.split()))) is not None
    ]
    expected = [seq for _, seq in sorted(scored, key=lambda hit: (-hit[0], -hit[1]))[:limit]]
    hits = await search_messages(MemoryLog(rows), text(needle, limit=limit))
    assert [hit.sequence for hit in hits] == expected


async def test_an_older_denser_subsequence_match_still_beats_a_newer_sparser_one() -> None:
    rows = [LogMessage(1, ADA, "a b"), LogMessage(2, ADA, "a ccccb")]
    [hit] = await search_messages(MemoryLog(rows), text("ab", limit=1))
    assert (hit.sequence, hit.score, hit.kind) == (1, 266, MatchKind.SUBSEQUENCE)


async def test_a_match_that_only_whitespace_collapsing_makes_is_found_after_pruning() -> None:
    # The newest row fills the one slot with a verbatim match, so older rows are tested
    # for verbatim matches only; the oldest matches exactly once its newline collapses.
    rows = [
        LogMessage(1, ADA, "Deploy\n\tREVIEW"),
        LogMessage(2, ADA, "nothing here"),
        LogMessage(3, ADA, "then deploy review later"),
    ]
    [hit] = await search_messages(MemoryLog(rows), text("deploy review", limit=1))
    assert (hit.sequence, hit.kind) == (1, MatchKind.EXACT)


_WHITESPACE = [chr(c) for c in range(sys.maxunicode + 1) if chr(c).isspace()]


@settings(max_examples=400)
@given(st.text(st.one_of(st.sampled_from([*_WHITESPACE, "a", "É", "x"]), st.characters())))
def test_collapsing_whitespace_equals_splitting_and_joining(text: str) -> None:
    assert collapse_whitespace(text) == " ".join(text.split())


def test_every_whitespace_but_the_space_is_unprintable() -> None:
    # what lets collapse_whitespace return a printable single-spaced text untouched
    assert [c for c in _WHITESPACE if c.isprintable()] == [" "]
    assert collapse_whitespace("one two") == "one two"
    assert collapse_whitespace(" one\u00a0two\u2028") == "one two"


def test_a_typed_query_is_checked_for_blankness_and_length() -> None:
    from coderooms.rooms.search import QUERY_MAX_CHARS, checked_query

    for blank in ("", "  \n", "/ /", " /  / "):
        with pytest.raises(BlankQuery):
            checked_query(blank)
    with pytest.raises(QueryTooLong) as too_long:
        checked_query("a" * (QUERY_MAX_CHARS + 1))
    assert (too_long.value.length, too_long.value.limit) == (QUERY_MAX_CHARS + 1, QUERY_MAX_CHARS)
    for fine in ("deploy", "//", "/dep.oy/", "a" * QUERY_MAX_CHARS):
        assert checked_query(fine) == fine


def test_an_any_byte_expression_on_text_that_is_not_ascii_never_crashes() -> None:
    # RE2's \C matches one byte, so a match could end inside a character: the character
    # offsets were decoded from the cut bytes, a UnicodeDecodeError on CLI and web
    pytest.importorskip("re2")
    from coderooms.rooms.search import Re2Regex, compile_regex

    compiled = compile_regex(r"\C")
    assert isinstance(compiled, Re2Regex)
    assert compiled.leftmost("naïve") == (0, 1)
    assert compiled.leftmost("ïx") == (0, 0)  # the first byte of ï: no whole character
    assert compiled.leftmost("") is None


async def test_a_typed_author_filter_keeps_only_that_kind_of_author() -> None:
    # `--author person:coder` also listed agent coder's posts, `system:ci` agent ci's
    log = MemoryLog()
    log.add(Agent("coder", "Coder"), "note from agent coder")
    log.add(Person("coder", "Coder Person"), "note from person coder")
    log.add(Agent("ci", "CI bot"), "note from agent ci")
    log.add(System("ci", "CI"), "note from system ci")

    async def authors(who: str) -> list[int]:
        hits = await search_messages(log, text("note", author_id=who))
        return sorted(h.sequence for h in hits)

    assert await authors("agent:coder") == [1]
    assert await authors("person:coder") == [2]
    assert await authors("coder") == [1, 2]  # bare: as the room's semantics say
    assert await authors("system:ci") == [4]
    assert await authors("agent:ci") == [3]
    assert await authors("ci") == [3, 4]
