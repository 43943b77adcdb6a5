"""Words out of code and goals; BM25."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from coderooms.focus.lexical import BM25, top_ranked
from coderooms.focus.text import (
    STOPWORDS,
    LinkedLines,
    blank_runs,
    goal_cues,
    run_terms,
    split_identifier,
    tokenize,
    word_terms,
)

TRACEBACK = """Running the suite fails:

Traceback (most recent call last):
  File "/usr/lib/python3/site-packages/shop/cart.py", line 12, in add_item
    self.check(quantity)
  File "/home/me/src/shop/checks.py", line 3, in check
    raise QuantityError(f"quantity must be a positive number of units, got {q}")
shop.errors.QuantityError: quantity must be a positive number of units, got 0
"""


def test_identifiers_split_on_case_and_underscores() -> None:
    assert split_identifier("retry_backoffPolicy") == ["retry", "backoff", "policy"]
    assert split_identifier("HTTPAdapter") == ["http", "adapter"]
    assert split_identifier("__init__") == ["init"]


def test_tokenize_keeps_whole_compound_names_and_drops_stopwords() -> None:
    terms = tokenize("The register_hook is called")
    assert "register" in terms and "hook" in terms and "register_hook" in terms
    assert "the" not in terms and "is" not in terms


def test_goal_cues_read_a_traceback() -> None:
    cues = goal_cues(TRACEBACK)
    assert [f.function for f in cues.frames] == ["add_item", "check"]
    assert cues.frames[-1].depth == 0
    assert "QuantityError" in cues.exceptions
    assert "quantity must be a positive number of units, got" in cues.literals
    assert "shop.errors.QuantityError" in cues.dotted


def test_goal_cues_take_no_message_between_apostrophes() -> None:
    prose = "We're on 1.95 in paths we can't update yet, so I've pinned the user's copy."
    assert goal_cues(prose).literals == ()
    quoted = "it's raised with 'quantity must be positive' and \"no such fixture found\" now"
    assert goal_cues(quoted).literals == ("quantity must be positive", "no such fixture found")


PYTEST_TRACEBACK = """The hook crashes:

/venv/lib/python3.8/site-packages/shop/runner.py:341: in from_call
    result = func()
shop/cart.py:12: in add_item
    self.check(quantity)
E   ValueError: bad quantity
shop/checks.py:3: ValueError
/venv/lib/python3.8/site-packages/shop/legacy.py:470: FutureWarning: `np.long` is going away
shop/cart.py:1:0: C0114: Missing module docstring (missing-module-docstring)
"""


def test_goal_cues_read_pytest_frames_and_warning_lines_but_not_lint_messages() -> None:
    frames = goal_cues(PYTEST_TRACEBACK).frames
    assert [(f.path.rsplit("/", 1)[-1], f.line, f.function) for f in frames] == [
        ("runner.py", 341, "from_call"),
        ("cart.py", 12, "add_item"),
        ("checks.py", 3, ""),  # the raising frame names its exception, not its function
        ("legacy.py", 470, ""),
    ]
    assert [f.depth for f in frames] == [3, 2, 1, 0]


def test_goal_cues_order_frames_of_both_forms_as_written() -> None:
    text = 'File "a/one.py", line 3, in first\nb/two.py:9: in second\nFile "c/three.py", line 5, in third'
    assert [f.function for f in goal_cues(text).frames] == ["first", "second", "third"]


def test_goal_cues_find_names_written_as_code() -> None:
    cues = goal_cues("`Session.send` ignores proxies; see requests/adapters.py and get_env()")
    assert "Session.send" in cues.dotted
    assert {"Session", "send", "get_env"} <= set(cues.names)
    assert "requests/adapters.py" in cues.paths


def test_bm25_prefers_the_document_with_the_rare_term() -> None:
    index = BM25([["cart", "item"], ["cart", "depot"], ["cart", "cart"]])
    scores = index.scores(["depot", "cart"])
    assert top_ranked(scores, 3)[0] == 1
    assert index.document_frequency("cart") == 3
    assert list(index.scores(["absent"])) == [0.0, 0.0, 0.0]


def test_a_capital_counts_as_a_name_only_inside_a_sentence() -> None:
    cues = goal_cues("Module imported twice\nPackage    Version\nthe Session object, then Pool")
    assert "Session" in cues.mid_capitals and "Pool" in cues.mid_capitals
    assert "Module" not in cues.mid_capitals and "Package" not in cues.mid_capitals


def test_goal_cues_find_configuration_and_prose_files_by_their_path() -> None:
    cues = goal_cues(
        "tox.ini: the docs env fails; see docs/usage.rst, setup.cfg and MANIFEST.in "
        "(not numpy.c_ or obj.method or e.g. v1.2)"
    )
    assert cues.paths == ("tox.ini", "docs/usage.rst", "setup.cfg", "MANIFEST.in")


# Identifier-shaped words (what tokenize takes for one), weighted towards the spots
# where splitting at underscores first could differ: case runs, digits, underscores.
_WORDS = st.from_regex(r"\A[A-Za-z_][A-Za-z0-9_]{0,14}\Z").map(lambda w: w.rstrip("\n"))


@given(_WORDS)
@settings(max_examples=400, deadline=None)
def test_word_terms_are_the_parts_split_identifier_finds(word: str) -> None:
    """Parts are found in one pass over the word: they are those of its underscore-free
    chunks, and word_terms gives them normalized and filtered the documented way."""
    parts = split_identifier(word)
    assert parts == [part for chunk in word.split("_") for part in split_identifier(chunk)]
    expected = [
        part[:-1] if len(part) > 4 and part.endswith("s") and not part.endswith("ss") else part
        for part in parts
        if len(part) >= 2 and part not in STOPWORDS and not part.isdigit()
    ]
    if len(parts) > 1:
        expected.append(word.lower())
    assert list(word_terms(word)) == expected
    assert tokenize(word) == expected


def test_word_terms_of_words_with_underscores_between_case_runs() -> None:
    assert word_terms("AB_Cd") == ("ab", "cd", "ab_cd")
    assert word_terms("HTTP_ServerNames") == ("http", "server", "name", "http_servernames")
    assert word_terms("x__Y2") == ("x__y2",)


# Text where words meet digits, non-ASCII letters, punctuation and line breaks.
_CODE_TEXT = st.text(
    alphabet=st.sampled_from(list("aZ_09 .(\n\t\r\x0cé€\u2028ß")) | st.characters(), max_size=60
)


@given(_CODE_TEXT)
@settings(max_examples=400, deadline=None)
def test_blanked_runs_give_the_terms_tokenize_gives(text: str) -> None:
    """A text's runs of word characters after blank_runs, split at whitespace, have the
    terms the word pattern's words have, line for line."""
    blanked = blank_runs(text)
    assert len(blanked) == len(text)
    assert [t for run in blanked.split() for t in run_terms(run)] == tokenize(text)
    lines = text.split("\n")
    for line, blank_line in zip(lines, blanked.split("\n"), strict=True):
        assert [t for run in blank_line.split() for t in run_terms(run)] == tokenize(line)


def test_runs_led_by_digits_have_the_terms_of_the_word_past_them() -> None:
    assert run_terms("0x1F") == word_terms("x1F") == ("x1f",)
    assert run_terms("12fooBar") == word_terms("fooBar") == ("foo", "bar", "foobar")
    assert run_terms("123") == ()


def test_goal_cues_read_links_to_lines_of_a_file_on_a_code_host() -> None:
    text = (
        "Only one doctest is collected because of this:\n"
        "https://github.com/org/proj/blob/e986d84466df/src/proj/main.py#L768-L781\n"
        "and see https://gitlab.com/org/proj/-/blob/main/src/proj/util.py#L12 too, "
        "again https://github.com/org/proj/blob/e986d84466df/src/proj/main.py#L768-L781; "
        "the file https://github.com/org/proj/blob/main/src/proj/io.py has no lines, "
        "nor does src/proj/cli.py#L3 (no host)."
    )
    assert goal_cues(text).links == (
        LinkedLines("src/proj/main.py", 768, 781),
        LinkedLines("src/proj/util.py", 12, 12),
    )
    assert any(p.endswith("/src/proj/io.py") for p in goal_cues(text).paths)  # a path still


def test_goal_cues_read_runs_of_path_characters_from_where_they_start() -> None:
    # A run is read from its start only: what a start inside it would find, the start
    # found already (a path's tail, a call's name after digits, a drive after a word).
    cues = goal_cues(
        "see " + "pkg/" * 3000 + "mod.py and 3dplot_axes(x)\nlogC:\\proj\\mod.py:3: in f"
    )
    assert cues.paths[0].endswith("pkg/pkg/mod.py") and len(cues.paths[0]) == 4 * 3000 + 6
    assert "dplot_axes" in cues.names
    assert [(f.path, f.line, f.function) for f in cues.frames] == [("C:\\proj\\mod.py", 3, "f")]


def test_goal_cues_take_no_line_number_longer_than_a_file_could_have() -> None:
    huge = "9" * 5000  # int() refuses a number this long: the cue is left out, not a crash
    goal = (
        f"see https://github.com/o/p/blob/main/src/p/x.py#L{huge}\n"
        f'File "src/p/x.py", line {huge}, in f\nsrc/p/x.py:{huge}: in f\n'
        "https://github.com/o/p/blob/main/src/p/y.py#L12\n"
    )
    cues = goal_cues(goal)
    assert cues.frames == ()
    assert cues.links == (LinkedLines("src/p/y.py", 12, 12),)


def test_goal_cues_find_an_exception_line_after_many_blank_lines() -> None:
    cues = goal_cues("Crash\n" + "\n \n" * 3000 + "ValueError: the depot code is not known here")
    assert cues.exceptions == ("ValueError",)
    assert "the depot code is not known here" in cues.literals


def test_a_common_word_written_as_code_is_a_name_but_a_keyword_never_is() -> None:
    # `get`, get(...) and session.get(...) name code although "get" is a stop word; the
    # words of a longer snippet and Python's keywords do not
    cues = goal_cues("`get` fails; so does session.make(x) and `new()`")
    assert {"get", "make", "new"} <= set(cues.names)
    assert goal_cues("run `pip install make`").names == ("pip", "install")  # as before
    assert not {"return", "self", "None", "print"} & set(
        goal_cues("`return` and `self` and print(x) and `None`").names
    )


def test_a_goal_of_nothing_but_common_words_takes_them_as_names() -> None:
    assert goal_cues("get").names == ("get",)
    assert goal_cues("hello one").names == ("hello", "one")
    assert goal_cues("an if").names == ()  # shorter than a name, or a keyword
    assert goal_cues("get the session").names == ()  # "session" is a term to search for


def test_focus_finds_a_function_named_by_a_common_word_alone() -> None:
    from fixture_repo import make_engine

    engine = make_engine({"pkg/api.py": "def get(url):\n    return url\n", "pkg/b.py": "x = 1\n"})
    found = engine.focus("get", budget=500)
    assert [item.node.id for item in found.packing.loaded] == ["pkg/api.py"]
    assert "defines `get` named in the goal" in found.packing.loaded[0].why
