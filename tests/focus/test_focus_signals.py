"""The precise seeds a goal carries, and the priors that hold back code nobody edits."""

from __future__ import annotations

from fixture_repo import make_engine

from coderooms.focus.text import BLOCK_WEIGHT, TITLE_WEIGHT, prose, weighted_terms

LIB = {
    "lib/__init__.py": "",
    "lib/options.py": """def add_options(parser):
    parser.addoption("--collect-only", action="store_true", help="only collect")
    parser.addoption("--verbose-level", type=int)
""",
    "lib/runner.py": '''def run_session(config):
    """Run every collected item."""
    items = collect(config)
    for item in items:
        item.run()


def collect(config):
    return [config.item]
''',
    "lib/errors.py": """class SessionError(Exception):
    pass


def fail_session(reason):
    raise SessionError("the session could not start because " + reason)
""",
    "lib/packages/urllib9/session.py": '''def run_session(config):
    """Someone else's session runner, copied in."""
    return config
''',
    "docs/example_session.py": '''def run_session_example():
    """Shows how to run a session and collect items."""
    return "session collect run"
''',
}

ENGINE = make_engine(LIB)


def test_an_option_named_in_the_goal_finds_the_code_that_declares_it() -> None:
    goal = "pytest --collect-only needs a one char shortcut"
    assert ENGINE.rank_files(goal)[0] == "lib/options.py"


def test_a_traceback_points_at_the_frames_it_names() -> None:
    goal = """Crash on start

Traceback (most recent call last):
  File "/venv/site-packages/lib/errors.py", line 6, in fail_session
    raise SessionError(...)
lib.errors.SessionError: boom
"""
    assert ENGINE.rank_files(goal)[0] == "lib/errors.py"
    assert ENGINE.rank_functions(goal)[0] == "lib/errors.py::fail_session"


def test_a_warning_line_points_at_the_code_around_its_line() -> None:
    goal = """Noisy output on every run

/venv/lib/python3.10/site-packages/lib/runner.py:9: DeprecationWarning: going away
"""
    assert ENGINE.rank_functions(goal)[0] == "lib/runner.py::collect"
    sal = ENGINE.salience(goal)
    rows = {n.id: i for i, n in enumerate(ENGINE.index.nodes)}
    assert "traceback frame in `collect`" in sal.why[rows["lib/runner.py::collect"]]


def test_a_frame_whose_line_has_moved_does_not_pick_a_function_by_name_alone() -> None:
    goal = """Crash on start

  File "/venv/site-packages/lib/errors.py", line 2, in fail_session
"""
    sal = ENGINE.salience(goal)
    rows = {n.id: i for i, n in enumerate(ENGINE.index.nodes)}
    assert not any("traceback" in w for w in sal.why.get(rows["lib/errors.py::fail_session"], []))
    assert any("traceback frame errors.py:2" in w for w in sal.why[rows["lib/errors.py"]])


def test_a_message_in_the_goal_finds_the_code_that_raises_it() -> None:
    goal = 'Starting fails with "the session could not start because" and nothing else'
    assert ENGINE.rank_functions(goal)[0] == "lib/errors.py::fail_session"


def test_copied_libraries_and_examples_are_held_back_and_say_so() -> None:
    sal = ENGINE.salience("run_session collect items")
    rows = {n.id: i for i, n in enumerate(ENGINE.index.nodes)}
    ours = sal.scores[rows["lib/runner.py::run_session"]]
    copied = sal.scores[rows["lib/packages/urllib9/session.py::run_session"]]
    example = sal.scores[rows["docs/example_session.py::run_session_example"]]
    assert ours > copied and ours > example
    assert any("vendored" in w for w in sal.why[rows["lib/packages/urllib9/session.py"]])
    assert any("documentation" in w for w in ENGINE.index.notes_of(rows["docs/example_session.py"]))


def test_the_title_outweighs_a_log_that_repeats_a_word() -> None:
    goal = "Session hangs on collect\n\n```\n" + "warning: retry\n" * 50 + "```\n"
    weights = weighted_terms(goal)
    assert weights["session"] == TITLE_WEIGHT
    assert BLOCK_WEIGHT < weights["retry"] < TITLE_WEIGHT
    assert "retry" not in prose(goal)


NAMES = {
    "pkg/__init__.py": "",
    "pkg/paths.py": """def path(parts):
    return parts


def join(left, right):
    return left + right


def dirname(value):
    return value
""",
    "pkg/plugins.py": """def load_plugins(registry):
    return list(registry)
""",
}

NAMES_ENGINE = make_engine(NAMES)


def test_a_compound_name_outweighs_everyday_words_written_as_code() -> None:
    goal = "Plugins vanish: `os.path.join(os.path.dirname(x))` then `load_plugins(reg)`"
    assert NAMES_ENGINE.rank_files(goal)[0] == "pkg/plugins.py"
    sal = NAMES_ENGINE.salience(goal)
    rows = {n.id: i for i, n in enumerate(NAMES_ENGINE.index.nodes)}
    # The everyday names still count, only less: their definitions keep a reason.
    assert any("`join`" in w for w in sal.why[rows["pkg/paths.py::join"]])


CLASSES = {
    "pkg/__init__.py": "",
    "pkg/loader.py": '''class Module:
    """A loaded unit of code."""
''',
    "pkg/registry.py": '''class Registry:
    """Where loaded units are kept."""

    def register(self, unit):
        return unit
''',
}

CLASSES_ENGINE = make_engine(CLASSES)


def test_a_sentence_starting_with_a_class_name_does_not_seed_that_class() -> None:
    seeded = CLASSES_ENGINE.salience("Module loaded twice\n\nSee how units get loaded.")
    named = CLASSES_ENGINE.salience("Loaded twice\n\nSee how the Module gets loaded.")
    rows = {n.id: i for i, n in enumerate(CLASSES_ENGINE.index.nodes)}
    assert rows["pkg/loader.py::Module"] not in seeded.why or not any(
        "class `Module`" in w for w in seeded.why[rows["pkg/loader.py::Module"]]
    )
    assert any("class `Module`" in w for w in named.why[rows["pkg/loader.py::Module"]])


def test_a_link_to_lines_points_at_the_code_holding_them() -> None:
    goal = """Sessions never collect anything

The items are dropped here:
https://github.com/org/lib/blob/0a1b2c3d/lib/runner.py#L8-L9
"""
    assert ENGINE.rank_files(goal)[0] == "lib/runner.py"
    assert ENGINE.rank_functions(goal)[0] == "lib/runner.py::collect"
    sal = ENGINE.salience(goal)
    rows = {n.id: i for i, n in enumerate(ENGINE.index.nodes)}
    assert "holds line 8 of runner.py linked in the goal" in sal.why[rows["lib/runner.py::collect"]]
    assert "lines runner.py#L8-L9 linked in the goal" in sal.why[rows["lib/runner.py"]]
    # without the link's line anchor it is only a path named in the goal
    bare = ENGINE.salience(goal.replace("#L8-L9", ""))
    assert not any("linked" in w for w in bare.why.get(rows["lib/runner.py::collect"], []))


def test_a_constant_named_in_the_goal_finds_the_file_that_assigns_it() -> None:
    engine = make_engine(
        {
            **LIB,
            "lib/deprecated.py": 'NODE_USE_FROM_PARENT = "use from_parent"\nOTHER: str = "x"\n',
            "lib/nodes.py": 'def make_node(parent):\n    if NODE_USE_FROM_PARENT == "x":\n'
            "        return parent\n",
        }
    )
    goal = "The warning NODE_USE_FROM_PARENT should point to the docs"
    sal = engine.salience(goal)
    rows = {n.id: i for i, n in enumerate(engine.index.nodes)}
    assert "assigns `NODE_USE_FROM_PARENT` named in the goal" in sal.why[rows["lib/deprecated.py"]]
    assert not any("assigns" in w for w in sal.why.get(rows["lib/nodes.py"], []))  # a use
    assert sal.scores[rows["lib/deprecated.py"]] > 1.5 * sal.scores[rows["lib/nodes.py"]]
    assert engine.rank_files(goal)[:2] == ["lib/nodes.py", "lib/deprecated.py"]  # nodes.py:
    # its function's score adds to its own (a file of constants has no functions)


def test_a_method_named_alone_and_qualified_gives_each_reason_once() -> None:
    # `step` alone is a weak name and `Base.step` a strong one: the why had said
    # "defines `step` named in the goal" twice and never the qualified name
    engine = make_engine(
        {
            "pkg/core.py": "class Base:\n    def run(self):\n        return self.step()\n\n"
            "    def step(self):\n        return 1\n\n"
            "class Child(Base):\n    def step(self):\n        return 2\n",
        }
    )
    sal = engine.salience("Base.step fails")
    rows = {n.id: i for i, n in enumerate(engine.index.nodes)}
    why = sal.why[rows["pkg/core.py::Base.step"]]
    assert len(why) == len(set(why)), why
    assert "is `Base.step` named in the goal" in why
