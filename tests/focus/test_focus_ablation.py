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
