"""Each ranking signal is one module of one shape; switching one off is a flag."""

from __future__ import annotations

import pytest
from fixture_repo import build_graph, count_words

from coderooms.focus.errors import UnknownSignal
from coderooms.focus.runtime import FocusEngine
from coderooms.focus.salience import SalienceConfig
from coderooms.focus.signals import SIGNAL_NAMES, SIGNALS, Query

SOURCES = {
    "app/options.py": 'def add_options(parser):\n    parser.addoption("--collect-only")\n',
    "app/runner.py": "def run_session(config):\n    return collect(config)\n",
    "app/collect.py": "def collect(config):\n    return [config]\n",
}
GOAL = "`--collect-only` crashes in run_session"


def engine(config: SalienceConfig | None = None) -> FocusEngine:
    return FocusEngine(build_graph(SOURCES), dict(SOURCES), count_words, config=config)


def test_every_signal_has_a_unique_name_and_a_default_weight() -> None:
    assert len(set(SIGNAL_NAMES)) == len(SIGNALS)
    assert SalienceConfig().signal_weights == {s.name: s.default_weight for s in SIGNALS}


def test_a_signal_returns_ranked_seeds_with_reasons() -> None:
    index = engine().index
    seeds = dict(SIGNALS[SIGNAL_NAMES.index("options")].rank(index, Query(GOAL)))
    rows = {index.nodes[r].id: why for r, why in seeds.items()}
    assert rows["app/options.py"] == "defines the option `collect-only`"


def test_an_ablated_signal_no_longer_writes_its_reason() -> None:
    full = engine().seek(GOAL).to_json()["results"]
    assert any("defines the option" in r["why"] for r in full)
    ablated = engine(SalienceConfig().without("options")).seek(GOAL).to_json()["results"]
    assert not any("defines the option" in r["why"] for r in ablated)


def test_edge_kinds_can_be_switched_off_too() -> None:
    config = SalienceConfig().without("edge:calls", "semantic")
    assert config.edge_weights["calls"] == 0.0
    assert config.weight("semantic") == 0.0
    assert SalienceConfig().edge_weights["calls"] > 0


def test_an_unknown_signal_is_a_typed_error_that_lists_the_known_ones() -> None:
    with pytest.raises(UnknownSignal, match="lexical_files"):
        SalienceConfig().without("no_such_signal")


def test_a_line_of_the_goals_output_finds_the_code_that_prints_it() -> None:
    sources = {
        "app/expr.py": (
            "def lex(text):\n    raise ParseError(f'unexpected character \"{text[0]}\"')\n"
        ),
        "app/other.py": "def unrelated():\n    return 'something else entirely'\n",
    }
    goal = 'pytest -k fails\n```\nERROR: at column 23: unexpected character "\\"\n```\n'
    weights = {**SalienceConfig().signal_weights, "block_messages": 1.0}
    engine = FocusEngine(
        build_graph(sources),
        dict(sources),
        count_words,
        config=SalienceConfig(signal_weights=weights),
    )
    seeds = SIGNALS[SIGNAL_NAMES.index("block_messages")].rank(engine.index, Query(goal))
    ids = [engine.index.nodes[row].id for row, _ in seeds]
    assert ids == ["app/expr.py::lex", "app/expr.py"]
    assert "unexpected character" in seeds[0][1]


def test_a_script_in_no_package_that_nothing_imports_is_held_back() -> None:
    sources = {
        "pkg/__init__.py": "",
        "pkg/versions.py": "def bump_version(text):\n    return text + ' version bumped'\n",
        "script/bump_version.py": "def bump_version(text):\n    return text + ' version'\n",
    }
    goal = "bump_version adds the wrong version text"

    def ranked(config: SalienceConfig) -> list[str]:
        return FocusEngine(
            build_graph(sources), dict(sources), count_words, config=config
        ).rank_files(goal)

    assert ranked(SalienceConfig())[0] == "pkg/versions.py"
    index = engine().index
    assert not index.is_standalone_script(index.nodes[index.file_of_path["app/runner.py"]])
    off = FocusEngine(
        build_graph(sources),
        dict(sources),
        count_words,
        config=SalienceConfig().without("standalone_scripts"),
    )
    script = off.index.nodes[off.index.file_of_path["script/bump_version.py"]]
    assert not off.index.is_standalone_script(script)
    on = FocusEngine(build_graph(sources), dict(sources), count_words).index
    assert on.is_standalone_script(on.nodes[on.file_of_path["script/bump_version.py"]])
    assert any(
        "standalone script" in n
        for n in on.penalty_notes(on.file_of_path["script/bump_version.py"])
    )


def test_verbatim_search_reads_only_files_holding_the_rarest_term_and_misses_none() -> None:
    from coderooms.focus.signals._spots import files_holding

    sources = {
        "a.py": "MSG = 'cannot frobnicate the widget now'\n",
        "b.py": "MSG = 'the widget is fine'\n",
        "c.py": "X = 'is it or is it not'\n",
    }
    index = FocusEngine(build_graph(sources), dict(sources), count_words).index
    rows = index.file_rows
    paths = lambda found: [index.nodes[r].path for r in found]  # noqa: E731
    assert paths(files_holding(index, "cannot frobnicate the widget", rows)) == ["a.py"]
    assert paths(files_holding(index, "widget", rows)) == ["a.py", "b.py"]
    # Only stop words: no term to narrow by, so every file is read.
    assert paths(files_holding(index, "is it", rows)) == ["c.py"]
    # The first and last words may be cut from longer ones; they never narrow the search.
    assert paths(files_holding(index, "nnot frobnicate the wid", rows)) == ["a.py"]


def test_a_reweighted_engine_ranks_as_one_built_with_those_weights() -> None:
    config = SalienceConfig().without("options", "lexical_files")
    twin = engine().reweighted(config)
    assert twin.seek(GOAL).to_json() == engine(config).seek(GOAL).to_json()
    assert twin.focus(GOAL).to_json() == engine(config).focus(GOAL).to_json()
    with pytest.raises(ValueError, match="rank-time"):
        engine().reweighted(SalienceConfig(test_penalty=0.9))  # shapes the index itself
