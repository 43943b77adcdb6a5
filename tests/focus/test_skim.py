"""The skimmer keeps what the goal needs, stays in budget, and marks every cut."""

from __future__ import annotations

import json
from collections.abc import Sequence

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from coderooms import skim
from coderooms.cli import main
from coderooms.focus.errors import InvalidBudget, SkimBudgetTooSmall
from coderooms.focus.skim import SkimCut, SkimResult, cut_marker, skim_text
from coderooms.tokens import count_tokens


def words(texts: Sequence[str]) -> list[int]:
    """A stand-in counter: one token per whitespace-separated word, plus one per line."""
    return [len(text.split()) + 1 for text in texts]


def log(noise: int, needle: str, tail: int = 0) -> str:
    lines = [f"step {i} copied file_{i}.txt" for i in range(noise)]
    lines.append(needle)
    lines += [f"step {i} cleaned cache" for i in range(tail)]
    return "\n".join(lines)


def accounted(result: SkimResult) -> int:
    """Lines kept plus lines cut (a shortened line is kept, not cut)."""
    runs = [cut for cut in result.cuts if cut.reason != "line_too_long"]
    return result.lines_kept + sum(cut.lines for cut in runs)


def test_text_that_fits_comes_back_unchanged() -> None:
    text = "one\ntwo\nthree"
    result = skim_text(text, "anything", 100, words)
    assert result.text == text
    assert result.cuts == ()
    assert not result.skimmed


def test_the_line_the_goal_names_is_kept_and_the_noise_is_cut() -> None:
    text = log(200, "retry backoff reached its cap of 30 seconds", tail=200)
    result = skim_text(text, "why does the retry backoff stop growing", 120, words)
    assert "retry backoff reached its cap of 30 seconds" in result.text
    assert "step 100 copied" not in result.text
    assert result.tokens_out <= 120
    assert result.skimmed


def test_every_cut_is_marked_in_place_with_its_lines_tokens_and_reason() -> None:
    text = log(50, "the parser fails on tabs", tail=50)
    result = skim_text(text, "parser tabs", 60, words)
    for cut in result.cuts:
        assert cut_marker(cut) in result.text
        assert cut.reason == "no_goal_match"
    assert accounted(result) == result.lines_in == 101


def test_errors_are_kept_whatever_the_goal() -> None:
    text = log(300, "Traceback (most recent call last): ValueError: bad header", tail=300)
    result = skim_text(text, "unrelated goal words", 80, words)
    assert "ValueError: bad header" in result.text


def test_head_and_tail_are_kept() -> None:
    text = log(100, "middle", tail=100)
    result = skim_text(text, "zzz", 60, words)
    assert result.text.startswith("step 0 copied")
    assert result.text.endswith("step 99 cleaned cache")


def test_matches_that_do_not_fit_are_cut_as_over_budget() -> None:
    lines = [f"retry attempt {i} backoff {2**i}" for i in range(300)]
    result = skim_text("\n".join(lines), "retry backoff", 100, words)
    assert any(cut.reason == "over_budget" for cut in result.cuts)
    assert result.tokens_out <= 100


def test_a_very_long_line_is_shortened_and_says_so() -> None:
    text = "x " * 5_000
    result = skim_text(text, "x", 10_000, words)
    assert result.text.endswith(" [... 8000 more characters: line too long]")
    assert len(result.text) < 3_000
    # The input is counted whole, and the shortening is a cut like any other.
    assert result.tokens_in == 5_001
    shortened = words([result.text + "\n"])[0]
    assert result.tokens_out == shortened
    assert result.cuts == (SkimCut(1, 1, 5_001 - shortened, "line_too_long"),)
    assert result.skimmed


def test_a_long_line_cut_whole_counts_all_it_held() -> None:
    lines = ["start", "y " * 3_000, *[f"noise {i}" for i in range(50)], "the needle is here"]
    result = skim_text("\n".join(lines), "needle", 40, words)
    assert result.tokens_in == sum(words([line + "\n" for line in lines]))
    run = next(cut for cut in result.cuts if cut.start_line <= 2 <= cut.end_line)
    assert run.reason == "no_goal_match"
    assert run.tokens >= 3_001
    assert all(cut.reason != "line_too_long" for cut in result.cuts)


@pytest.mark.parametrize("budget", [-1, 0, 1_000_001])
def test_a_budget_out_of_range_is_a_typed_error(budget: int) -> None:
    with pytest.raises(InvalidBudget):
        skim_text("a", "a", budget, words)


def test_the_goals_line_wins_over_the_head_when_the_budget_is_tight() -> None:
    lines = [f"PASSED tests/test_{i}.py::test_ok" for i in range(300)]
    failed = "FAILED tests/test_fix.py::test_scope - AssertionError: fixture scope teardown"
    text = "\n".join([*lines, failed, *lines])
    result = skim_text(text, "why does the fixture scope test fail", 34, words)
    assert failed in result.text
    assert result.tokens_out <= 34


def test_skimming_is_deterministic() -> None:
    text = log(500, "cache miss for key user:42", tail=500)
    first = skim_text(text, "cache miss", 90, words)
    assert skim_text(text, "cache miss", 90, words) == first


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.text(alphabet="abcdefg xyz\t:", max_size=40), min_size=1, max_size=120),
    st.text(alphabet="abcdefg xyz", max_size=20),
    st.integers(min_value=30, max_value=400),
)
def test_any_output_accounts_for_every_line_and_fits_the_budget(
    lines: list[str], goal: str, budget: int
) -> None:
    text = "\n".join(lines)
    result = skim_text(text, goal, budget, words)
    # A final newline ends the last line rather than starting one more.
    assert accounted(result) == result.lines_in == len(text.splitlines())
    assert result.text.endswith("\n") == text.endswith("\n")
    assert result.tokens_out <= budget
    cuts = [(c.start_line, c.end_line) for c in result.cuts]
    assert cuts == sorted(cuts)
    assert all(a[1] < b[0] for a, b in zip(cuts, cuts[1:], strict=False))


def test_the_package_skim_counts_real_tokens() -> None:
    text = log(2_000, "KeyError: 'timeout' in settings loader", tail=2_000)
    result = skim(text, "settings loader timeout", budget=300)
    assert "KeyError: 'timeout' in settings loader" in result.text
    assert result.tokens_out <= 300 < result.tokens_in


def test_cli_skims_standard_input_and_reports_cuts() -> None:
    text = log(400, "segfault in the tokenizer", tail=400)
    runner = CliRunner()
    done = runner.invoke(
        main, ["skim", "--goal", "tokenizer crash", "--budget", "150", "--json"], input=text
    )
    assert done.exit_code == 0, done.output
    payload = json.loads(done.stdout)
    assert payload["skimmed"] is True
    assert payload["tokens_out"] <= 150
    assert "segfault in the tokenizer" in payload["text"]
    assert {"start_line", "end_line", "tokens", "reason"} <= set(payload["cuts"][0])


def test_cli_reports_a_shortened_line_as_a_cut() -> None:
    text = "x" * 100_000 + "\n"
    done = CliRunner().invoke(main, ["skim", "--goal", "x", "--json"], input=text)
    assert done.exit_code == 0, done.output
    payload = json.loads(done.stdout)
    assert payload["skimmed"] is True
    assert payload["tokens_in"] > payload["tokens_out"]
    assert [cut["reason"] for cut in payload["cuts"]] == ["line_too_long"]


def test_cli_without_a_goal_is_a_one_line_error() -> None:
    done = CliRunner().invoke(main, ["skim"], input="x")
    assert done.exit_code != 0
    assert "goal" in done.output.lower()


def test_the_root_skim_stays_the_function_after_every_surface_is_imported() -> None:
    import importlib

    import coderooms

    for module in ("coderooms.cli", "coderooms.mcp.server", "coderooms.skimmer"):
        importlib.import_module(module)
    assert callable(coderooms.skim)
    assert coderooms.skim is skim


def test_a_final_newline_ends_the_last_line_and_comes_back() -> None:
    numbers = "".join(f"{n}\n" for n in range(1, 51))
    whole = skim_text(numbers, "x", 10_000, words)
    assert (whole.lines_in, whole.text) == (50, numbers)
    cut = skim_text(numbers, "x", 30, words)
    assert cut.lines_in == 50 and cut.text.endswith("\n")
    assert max(c.end_line for c in cut.cuts) <= 50
    empty = skim_text("", "x", 30, words)
    assert (empty.lines_in, empty.tokens_in, empty.text) == (0, 0, "")
    assert skim_text("\n", "x", 30, words).lines_in == 1


def test_cli_prints_the_text_with_its_own_final_newline_only() -> None:
    runner = CliRunner()
    done = runner.invoke(main, ["skim", "--goal", "x"], input="a\nb\n")
    assert (done.exit_code, done.stdout) == (0, "a\nb\n")
    done = runner.invoke(main, ["skim", "--goal", "x"], input="no newline")
    assert (done.exit_code, done.stdout) == (0, "no newline")


def test_a_budget_that_cannot_hold_one_marker_is_refused_on_every_surface() -> None:
    text = "".join(f"{n}\n" for n in range(1, 51))
    done = CliRunner().invoke(main, ["skim", "--goal", "x", "--budget", "3"], input=text)
    assert done.exit_code == 1
    assert done.stderr.startswith("error: a skim budget of 3 tokens cannot hold even the one")
    assert done.stdout == ""
    with pytest.raises(SkimBudgetTooSmall) as caught:
        skim(text, "x", 3)
    fine = skim(text, "x", caught.value.needed)  # the least it asks for is enough
    assert fine.tokens_out <= caught.value.needed
    assert skim("1\n", "x", 3).text == "1\n"  # text that fits needs no marker


def test_the_text_is_counted_whole_and_never_over_the_budget() -> None:
    # Markers of the longer kind ("nothing in them matches the goal") used to be priced as
    # the shorter one, and pieces counted one by one: 68 tokens came back for a budget of
    # 64, reported as 64.
    lines = ["== test session starts ==", "collected 2000 items"]
    for i in range(2000):
        lines.append(f"tests/test_mod{i % 40}.py::test_case_{i} PASSED          [{i // 20:3d}%]")
        if i == 1234:
            lines.append("tests/test_auth.py::test_proxy_auth_header FAILED                 [ 61%]")
    lines += ["E   requests.exceptions.ProxyError: missing Proxy-Authorization header", "== end =="]
    text = "\n".join(lines) + "\n"
    for budget in range(40, 140, 4):
        result = skim(text, "why proxy connection refused", budget)
        assert result.tokens_out == count_tokens(result.text) <= budget, budget


def test_lines_are_scored_as_splitting_every_line_would_score_them() -> None:
    # the fast path finds candidate lines by case-folded substrings; it must agree with
    # scoring each line's own terms and its own match of the signal pattern
    import math

    from coderooms.focus.skim import _SIGNAL, SIGNAL_WEIGHT, _score_lines
    from coderooms.focus.text import tokenize

    lines = [
        "Worker-3 processed batch 7",
        "\u212aILLED worker-3 (Kelvin sign)",
        "asſert failed in getValue",
        "İstanbul straße timeout",
        "plain line",
        "",
        "FixtureDefs teardown Error",
        "worker3 ran worker7 at 12:00",  # the same shape as the next line
        "worker4 ran worker9 at 13:41",
        "HTTP2Adapter and http3",
    ]
    goal = "why is worker killed in getValue fixtures"
    terms = set(tokenize(goal))
    held = [terms & set(tokenize(line)) for line in lines]
    frequency = {t: sum(t in h for h in held) for t in terms}
    expected = [
        sum(math.log(1 + len(lines) / frequency[t]) for t in sorted(h))
        + (SIGNAL_WEIGHT if _SIGNAL.search(line) else 0.0)
        for line, h in zip(lines, held, strict=True)
    ]
    assert _score_lines(lines, goal) == pytest.approx(expected)
    assert _score_lines(lines, goal)[1] >= SIGNAL_WEIGHT  # "KILLED" with a Kelvin sign
    # a goal term with a digit: lines are not taken by their shape
    numbered = ["http2 client", "http3 client"]
    assert _score_lines(numbered, "http2 fails") == pytest.approx(
        [math.log(1 + 2 / 1) + math.log(1 + 2 / 2), math.log(1 + 2 / 2)]
    )


def test_the_cli_says_it_is_at_work_on_a_large_input() -> None:
    from coderooms.cli.skim_cmds import SKIM_PROGRESS_BYTES

    text = "ok\n" * (SKIM_PROGRESS_BYTES // 3 + 1)
    done = CliRunner().invoke(main, ["skim", "--goal", "x", "--budget", "100"], input=text)
    assert done.exit_code == 0
    assert done.stderr.startswith("skimming 4.0 MiB of text")
