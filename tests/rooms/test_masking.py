"""code_ranges / fenced_ranges: fences, indented blocks and inline spans."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from coderooms.rooms.masking import code_ranges, fenced_ranges, is_masked


def masked(text: str) -> list[str]:
    return [text[a:b] for a, b in code_ranges(text)]


# --- fences ---------------------------------------------------------------------------


def test_backtick_fence_masks_through_its_closing_line() -> None:
    text = "before\n```\n@a\n```\nafter"
    assert masked(text) == ["```\n@a\n```\n"]


def test_tilde_fence_masks() -> None:
    assert masked("~~~\n@a\n~~~\n@b") == ["~~~\n@a\n~~~\n"]


def test_fence_may_be_indented_up_to_three_spaces() -> None:
    assert masked("   ```\nx\n   ```\ny") == ["   ```\nx\n   ```\n"]


def test_four_space_indent_is_not_a_fence() -> None:
    assert fenced_ranges("p\n    ```\nx") == []


def test_two_char_run_is_not_a_fence() -> None:
    assert fenced_ranges("``\nx\n``") == []


def test_backtick_fence_info_string_may_not_contain_a_backtick() -> None:
    assert fenced_ranges("``` a`b\nx\n") == []


def test_tilde_fence_info_string_may_contain_a_backtick() -> None:
    assert fenced_ranges("~~~ a`b\nx\n~~~") == [(0, 13)]


def test_info_string_line_is_part_of_the_fence() -> None:
    assert masked("```python\nx\n```") == ["```python\nx\n```"]


def test_closer_must_use_the_same_character() -> None:
    text = "```\nx\n~~~\ny"
    assert code_ranges(text) == [(0, len(text))]


def test_closer_must_be_at_least_as_long_as_the_opener() -> None:
    text = "````\nx\n```\ny\n`````\nafter"
    assert masked(text) == ["````\nx\n```\ny\n`````\n"]


def test_closer_may_have_only_whitespace_after_its_run() -> None:
    text = "```\nx\n```rust\ny\n``` \t\nafter"
    assert masked(text) == ["```\nx\n```rust\ny\n``` \t\n"]


def test_unclosed_fence_masks_to_the_end() -> None:
    text = "a\n```\n@x\n@y"
    assert code_ranges(text) == [(2, len(text))]


def test_crlf_lines_close_fences() -> None:
    assert masked("```\r\nx\r\n```\r\nafter") == ["```\r\nx\r\n```\r\n"]


# --- indented blocks ------------------------------------------------------------------


def test_indented_block_at_body_start() -> None:
    assert masked("    code\ntext") == ["    code\n"]


def test_tab_counts_as_four_columns() -> None:
    assert masked("\tcode\ntext") == ["\tcode\n"]


def test_spaces_then_tab_reach_the_next_tab_stop() -> None:
    assert masked("  \tcode") == ["  \tcode"]


def test_three_spaces_are_not_an_indented_block() -> None:
    assert code_ranges("   text") == []


def test_indented_block_after_a_blank_line() -> None:
    assert masked("para\n\n    code\nnext") == ["    code\n"]


def test_indented_line_under_prose_continues_the_paragraph() -> None:
    assert code_ranges("para\n    continued") == []


def test_indented_block_continues_across_blank_lines() -> None:
    assert masked("    a\n\n    b\nc") == ["    a\n\n    b\n"]


def test_indented_block_excludes_trailing_blank_lines() -> None:
    assert masked("    a\n\n\nc") == ["    a\n"]


def test_indented_block_after_a_heading() -> None:
    assert masked("# Title\n    code") == ["    code"]


def test_indented_block_after_a_thematic_break() -> None:
    assert masked("text\n***\n    code") == ["    code"]


def test_indented_block_after_a_setext_underline() -> None:
    assert masked("Title\n=====\n    code") == ["    code"]


def test_indented_block_after_a_fence() -> None:
    assert masked("```\nx\n```\n    code") == ["```\nx\n```\n", "    code"]


def test_hash_without_space_is_not_a_heading() -> None:
    assert code_ranges("#tag\n    more") == []


def test_fence_opener_ends_an_open_indented_block() -> None:
    assert masked("    a\n```\nb\n```") == ["    a\n", "```\nb\n```"]


def test_fenced_ranges_ignore_inline_spans() -> None:
    assert fenced_ranges("`x` and ```y```") == []


# --- inline spans ---------------------------------------------------------------------


def test_single_backtick_span() -> None:
    assert code_ranges("`@alice` @bob") == [(0, 8)]


def test_span_closes_on_a_run_of_exactly_the_same_length() -> None:
    assert masked("a ``x ` y`` z") == ["``x ` y``"]


def test_longer_run_does_not_close_a_shorter_opener() -> None:
    assert masked("`a `` b` c") == ["`a `` b`"]


def test_unclosed_opener_masks_nothing() -> None:
    assert code_ranges("`a @b") == []


def test_unmatched_long_opener_lets_a_later_span_open() -> None:
    assert masked("``a `b` c") == ["`b`"]


def test_backslash_escapes_a_backtick_outside_a_span() -> None:
    assert masked("\\`not` code`") == ["` code`"]


def test_escaped_backslash_leaves_the_backtick_live() -> None:
    assert masked("\\\\`code`") == ["`code`"]


def test_backslash_inside_a_span_does_not_stop_the_closer() -> None:
    assert masked("`a\\` b") == ["`a\\`"]


def test_span_may_cross_a_single_line_break() -> None:
    assert masked("`a\nb` c") == ["`a\nb`"]


def test_span_does_not_cross_a_blank_line() -> None:
    assert code_ranges("`a\n\nb` c") == []


def test_span_does_not_cross_a_heading() -> None:
    assert code_ranges("`a\n# h\nb`") == []


def test_span_does_not_cross_a_thematic_break() -> None:
    assert code_ranges("`a\n- - -\nb`") == []


def test_span_does_not_cross_a_setext_underline() -> None:
    assert code_ranges("`a\n===\nb`") == []


def test_span_does_not_cross_a_fence() -> None:
    text = "`a\n```\nx\n```\nb`"
    assert masked(text) == ["```\nx\n```\n"]


def test_span_inside_a_heading_does_not_reach_the_next_line() -> None:
    assert code_ranges("# `a\nb`") == []


def test_backticks_inside_a_fence_open_no_span() -> None:
    text = "```\n`x\n```\ny`"
    assert code_ranges(text) == [(0, 11)]


def test_several_spans_on_one_line() -> None:
    assert masked("`a` b `c`") == ["`a`", "`c`"]


def test_offsets_are_code_point_indices() -> None:
    text = "é🙂 `x` @a"
    assert code_ranges(text) == [(3, 6)]


def test_is_masked_is_half_open() -> None:
    ranges = code_ranges("`@alice` @bob")
    assert is_masked(0, ranges)
    assert is_masked(7, ranges)
    assert not is_masked(8, ranges)


def test_empty_text_has_no_ranges() -> None:
    assert code_ranges("") == []


# --- properties -----------------------------------------------------------------------


def naive_inline(text: str, blocks: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """A direct character-by-character reading of the inline rules, as an oracle."""
    lines: list[tuple[int, int, str]] = []
    pos = 0
    while pos < len(text):  # lines end at "\n" only
        nl = text.find("\n", pos)
        end = len(text) if nl < 0 else nl + 1
        lines.append((pos, end, text[pos:end].rstrip("\r\n")))
        pos = end
    breaks: set[int] = set()
    for start, end, content in lines:
        stripped = content.strip(" \t")
        lead = len(content) - len(content.lstrip(" "))
        small = content.lstrip(" ") if lead <= 3 and not content[lead : lead + 1] == "\t" else None
        heading = (
            small is not None
            and 1 <= len(small) - len(small.lstrip("#")) <= 6
            and (small.lstrip("#") == "" or small.lstrip("#")[0] in " \t")
        )
        thematic = (
            small is not None
            and small[:1] in ("-", "_", "*")
            and all(c in (small[0], " ", "\t") for c in small)
            and small.count(small[0]) >= 3
        )
        setext = (
            small is not None
            and small[:1] in ("=", "-")
            and small.lstrip(small[0]).strip(" \t") == ""
        )
        if stripped == "" or heading or thematic or setext:
            breaks.update((start, end))

    def in_block(i: int) -> int | None:
        for a, b in blocks:
            if a <= i < b:
                return b
        return None

    out: list[tuple[int, int]] = []
    i = 0
    while i < len(text):
        block_end = in_block(i)
        if block_end is not None:
            i = block_end
            continue
        if text[i] == "\\":
            i += 2
            continue
        if text[i] != "`":
            i += 1
            continue
        run = 1
        while i + run < len(text) and text[i + run] == "`":
            run += 1
        limit = min([b for b in breaks if b > i], default=len(text))
        j = i + run
        closed = None
        while j < limit:
            if in_block(j) is not None:
                break
            if text[j] != "`":
                j += 1
                continue
            k = 1
            while j + k < len(text) and text[j + k] == "`":
                k += 1
            if k == run:
                closed = j + k
                break
            j += k
        if closed is None:
            i += run
        else:
            out.append((i, closed))
            i = closed
    return out


MARKDOWNISH = st.text(alphabet="`~\\ \t\n\r#-=*_a@é", max_size=120)


@settings(max_examples=400, deadline=None)
@given(MARKDOWNISH)
def test_ranges_are_sorted_disjoint_and_in_bounds(text: str) -> None:
    ranges = code_ranges(text)
    for start, end in ranges:
        assert 0 <= start < end <= len(text)
    for (_, end), (start, _) in zip(ranges, ranges[1:], strict=False):
        assert end <= start


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=200))
def test_ranges_are_sorted_disjoint_and_in_bounds_for_any_text(text: str) -> None:
    ranges = code_ranges(text)
    assert ranges == sorted(ranges)
    for start, end in ranges:
        assert 0 <= start < end <= len(text)
    for (_, end), (start, _) in zip(ranges, ranges[1:], strict=False):
        assert end <= start


@settings(max_examples=400, deadline=None)
@given(MARKDOWNISH)
def test_inline_spans_match_a_direct_reading_of_the_rules(text: str) -> None:
    blocks = fenced_ranges(text)
    assert code_ranges(text) == sorted(blocks + naive_inline(text, blocks))


@settings(max_examples=200, deadline=None)
@given(MARKDOWNISH)
def test_code_ranges_contain_every_fenced_range(text: str) -> None:
    ranges = code_ranges(text)
    for block in fenced_ranges(text):
        assert block in ranges
