"""Call edges of the code index against a type-aware reference (jedi), on real code.

    .venv/bin/pip install -e '.[bench]'
    .venv/bin/python benchmarks/callgraph.py [--mirrors DIR] [--repo OWNER/NAME ...]
        [--sites N] [--definitions N] [--seed S] [--out FILE] [--jedi-cache DIR] [--jobs N]

For each repository (default psf/requests, pytest-dev/pytest, sympy/sympy, cloned from
the local mirrors ``../.mirror/<owner>+<name>/repo`` beside the project or under
``$CODEROOMS_MIRROR_DIR``, at the mirror's HEAD): index a fresh checkout, then draw a
seeded sample of call sites (``f(…)`` and ``x.f(…)`` in every Python file, read with
``ast``) and ask jedi where each callee is defined (``goto``, then ``infer``).

A site the reference ties to a function, method or class of the repository is a
*project* site; one it ties only to code outside (builtins, the standard library,
installed packages) is an *external* site; one it says nothing about (dynamic dispatch
it cannot see, or a timeout) is *silent* and kept out of the score, listed. For a site in
``owner`` calling ``name``, our prediction is the set of ``calls`` edges out of
``owner`` to symbols called ``name``, or when there are none, to the reference's target
when it is named like no call of ``owner`` (reached through an alias; an alias binding
the reference does not confirm is not counted either way); and, separately, the
``name_match`` edges:

- precision: predictions that contain a reference target / all sites with a prediction
  and a reference (a prediction at an external site is wrong);
- recall: project sites whose reference target is predicted / all project sites.

Beside ours, in the same run, the baseline every name resolver starts from: bind a call
to the one symbol of the repository with its name, when exactly one has it. Prints the
figures per repository and overall, medians of the jedi time per site and of index
time, and the counts.

Then ``impact --depth 1`` of a seeded sample of functions and methods (``--definitions``
per repository; outside tests, dunder methods left out, same-named twins of a file as
one), both with ``resolved`` dependents alone and with the ``name_match`` ones listed:

- recall: of the mentions of the name (outside imports and definitions; a seeded
  subsample of OCCURRENCES_ASKED), those jedi's goto ties to the definition give its
  reference dependents (their enclosing symbols); the share impact lists;
- precision: each listed dependent (a subsample of DEPENDENTS_ASKED) is right when jedi
  ties a mention of the name inside it to the definition. Kept out of the score, listed
  (column ``out``): dependents jedi is silent on, those where the definition is a
  property and jedi takes ``self.<name> = …`` for an instance attribute (a property is a
  data descriptor: the assignment runs its setter), and those taking a pytest fixture
  as a parameter that jedi does not tie to the fixture (it takes an annotated one for a
  value of its annotation; pytest passes the fixture of that name). A dependent past
  ``MAX_IMPACT_NODES`` is listed too: impact counts it in its ignored tail.

jedi is asked in ``--jobs`` worker processes, nice'd, forked with what the cache knows;
their new answers join the cache as each task ends, and a progress line says how far
each phase is, its wall and CPU seconds per task and the time left.
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import json
import os
import random
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from types import FrameType
from typing import Any

PROJECT_ROOT = Path(__file__).resolve().parent.parent
MIRROR_DIR = Path(os.environ.get("CODEROOMS_MIRROR_DIR", PROJECT_ROOT.parent / ".mirror"))
DEFAULT_REPOS = ("psf/requests", "pytest-dev/pytest", "sympy/sympy")
DEFAULT_SITES = 300
DEFAULT_SEED = 15
# A question jedi spends more CPU on than this is silent: CPU, not wall time, so that the
# reference says the same on a loaded machine (and from nice'd workers) as on an idle one.
JEDI_SITE_CPU_SECONDS = 20
JEDI_SITE_WALL_SECONDS = 600  # the same for wall time: only a question that hangs
JEDI_ALARM_REPEAT = 1.0  # seconds between alarms once a question is over its time
SILENT_SHOWN = 15  # silent sites listed per repository
WRONG_SHOWN = 10  # wrong predictions listed per repository
TARGET_PRECISION = 0.95
TARGET_RECALL = 0.85
TARGET_IMPACT_PRECISION = 0.95
TARGET_IMPACT_RECALL = 0.85
SYMBOL_KINDS = frozenset({"class", "function", "method"})
DEFINITION_KINDS = frozenset({"function", "method"})
DEFAULT_DEFINITIONS = 300  # functions and methods sampled per repository for impact
OCCURRENCES_ASKED = 20  # mentions of a sampled name jedi is asked about (seeded subsample)
DEPENDENTS_ASKED = 20  # of a definition's dependents, checked with jedi (seeded subsample)
MENTIONS_PER_DEPENDENT = 4  # mentions inside one dependent jedi is asked about
DISAGREEMENTS_SHOWN = 10  # missed and wrong dependents listed per repository
CACHE_SAVED_EVERY = 200  # new jedi answers between two writes of the --jedi-cache file
DEFAULT_JOBS = min(2, os.cpu_count() or 1)  # reference worker processes
WORKER_NICENESS = 10  # added to each reference worker's niceness by default
ALARMS = (signal.SIGALRM, signal.SIGVTALRM)  # what the wall and CPU timers send
SITES_PER_TASK = 25  # call sites one reference task asks about


@dataclass(slots=True)
class Site:
    path: str
    line: int
    column: int  # of the called name, 0-based
    name: str
    owner: str = ""
    reference: list[str] = field(default_factory=list)  # project symbol ids
    verdict: str = ""  # project | external | silent
    ours: list[str] = field(default_factory=list)
    by_name: list[str] = field(default_factory=list)
    baseline: list[str] = field(default_factory=list)
    jedi_seconds: float = 0.0


class JediTimeout(Exception):
    pass


def _alarm(signum: int, frame: FrameType | None) -> None:
    raise JediTimeout


def clone(mirrors: Path, repo: str, into: Path) -> tuple[Path, str]:
    mirror = mirrors / repo.replace("/", "+") / "repo"
    if not mirror.exists():
        raise SystemExit(f"no local clone of {repo} at {mirror}; bring it with fetch first")
    target = into / repo.replace("/", "+")
    subprocess.run(["git", "clone", "--quiet", "--shared", str(mirror), str(target)], check=True)
    head = subprocess.run(
        ["git", "-C", str(target), "rev-parse", "HEAD"], capture_output=True, text=True, check=True
    ).stdout.strip()
    return target, head


def _parsed(root: Path, path: str) -> tuple[str, ast.Module] | None:
    """A file's text and syntax tree, or None when it does not parse."""
    try:
        source = (root / path).read_text(encoding="utf-8")
        return source, ast.parse(source)
    except (SyntaxError, UnicodeDecodeError, ValueError):
        return None


def call_sites(root: Path, paths: Sequence[str]) -> Iterator[Site]:
    """Every ``f(…)`` and ``x.f(…)`` of the files, where the called name starts."""
    for path in paths:
        parsed = _parsed(root, path)
        if parsed is None:
            continue
        source, tree = parsed
        lines = source.splitlines()
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            fn = node.func
            if isinstance(fn, ast.Name):
                yield Site(path, fn.lineno, fn.col_offset, fn.id)
            elif isinstance(fn, ast.Attribute) and fn.end_lineno is not None:
                line = lines[fn.end_lineno - 1]
                # ast columns count UTF-8 bytes: the name ends where the attribute does.
                end = len(line.encode("utf-8")[: fn.end_col_offset].decode("utf-8", "replace"))
                yield Site(path, fn.end_lineno, end - len(fn.attr), fn.attr)


class Symbols:
    """The index's symbols by file, for owners (innermost around a line) and for the
    definitions jedi names (the symbol starting at, or innermost around, a line)."""

    def __init__(self, graph: Any) -> None:
        self.by_path: dict[str, list[Any]] = defaultdict(list)
        self.by_name: dict[str, list[str]] = defaultdict(list)
        for node in graph.nodes:
            if node.kind in SYMBOL_KINDS:
                self.by_path[node.path].append(node)
                self.by_name[node.name].append(node.id)
        self.name_of = {n.id: n.name for n in graph.nodes}
        self.graph = graph

    def innermost(self, path: str, line: int) -> Any | None:
        around = [n for n in self.by_path.get(path, ()) if n.start_line <= line <= n.end_line]
        return max(around, key=lambda n: (n.start_line, -n.end_line)) if around else None

    def owner(self, path: str, line: int) -> str:
        found = self.innermost(path, line)
        return found.id if found is not None else path

    def defined(self, path: str, line: int, name: str, installed: bool = False) -> str | None:
        around = [
            n
            for n in self.by_path.get(path, ())
            if n.name == name and n.start_line <= line <= n.end_line
        ]
        if around:
            return max(around, key=lambda n: n.start_line).id
        if not installed:
            return None  # a variable or attribute of that name, no symbol
        # An installed copy of the file (another version): the one symbol of that name.
        named = [n.id for n in self.by_path.get(path, ()) if n.name == name]
        return named[0] if len(named) == 1 else None


def _in_checkout(module: Path, root: Path) -> str | None:
    """The checkout's path of a module jedi found, or None when it is outside. An
    installed copy of the project itself (pytest's own venv holds ``_pytest``) counts as
    the checkout's file of the same name: the reference is wrong there, not the index."""
    try:
        return module.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        pass
    parts = module.parts
    if "site-packages" not in parts:
        return None
    tail = Path(*parts[parts.index("site-packages") + 1 :])
    for base in (root / "src", root):
        if (base / tail).is_file():
            return (base / tail).relative_to(root).as_posix()
    return None


def reference(script: Any, site: Site, root: Path, symbols: Symbols) -> tuple[str, list[str]]:
    """(verdict, project symbol ids) of the callee at ``site`` as jedi sees it."""
    outside = False
    for ask in ("goto", "infer"):
        try:
            if ask == "goto":
                found = script.goto(site.line, site.column, follow_imports=True)
            else:
                found = script.infer(site.line, site.column)
        except JediTimeout:
            raise
        except Exception:  # jedi's own failures: the reference is silent there
            continue
        ids: list[str] = []
        for d in found:
            module = d.module_path
            if module is None or d.line is None:
                if d.in_builtin_module():
                    outside = True
                continue
            rel = _in_checkout(Path(module), root)
            if rel is None:
                outside = True
                continue
            installed = not Path(module).resolve().is_relative_to(root.resolve())
            sid = symbols.defined(rel, d.line, d.name, installed)
            if sid is not None and sid not in ids:
                ids.append(sid)
        if ids:
            return "project", ids
    return ("external" if outside else "silent"), []


def _attributed(
    targets: set[str], name: str, called: set[str], symbols: Symbols, reference: list[str]
) -> list[str]:
    """The targets of an owner's edges that a call of ``name`` made: those carrying the
    name; else a target named like no call of the owner (reached through an alias) that
    the reference names. An alias target the reference does not name is not attributed
    (the site cannot tell which of the owner's calls made it): such a binding, if wrong,
    goes uncounted."""
    named = sorted(t for t in targets if symbols.name_of[t] == name)
    if named:
        return named
    aliased = {_symbol(r) for r in reference}
    return sorted(t for t in targets if symbols.name_of[t] not in called and _symbol(t) in aliased)


class Asker:
    """jedi over one checkout: where the name at a site is defined, one file's
    inference state at a time, each question bounded by JEDI_SITE_TIMEOUT_SECONDS.

    With a ``cache`` file, answers are kept there keyed by the checkout's commit and
    jedi's version (jedi's answer depends on those alone), and a later run at the same
    commit asks jedi only what no earlier run asked."""

    def __init__(self, project: Any, root: Path, cache: Path | None = None, key: str = "") -> None:
        self.project = project
        self.root = root
        self.scripts: dict[str, Any] = {}
        self.previous: Any = None
        self.cache = cache
        self.key = key
        self.answers: dict[str, list[Any]] = {}
        self.fresh: dict[str, Any] = {}  # answers this process asked jedi for
        self.asked = self.reused = 0
        self.reload()

    def stored(self) -> dict[str, Any]:
        """The answers the cache file holds for this key (none when it has another)."""
        if self.cache is None or not self.cache.is_file():
            return {}
        try:
            stored = json.loads(self.cache.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}  # being replaced, or cut short: what it held is asked again
        return dict(stored["answers"]) if stored.get("key") == self.key else {}

    def reload(self) -> None:
        """Take what another run saved since: an earlier question is not asked again."""
        self.answers = {**self.stored(), **self.answers}

    def __enter__(self) -> Asker:
        self.previous = [signal.signal(kind, _alarm) for kind in ALARMS]
        return self

    def __exit__(self, *exc: object) -> None:
        for kind, previous in zip(ALARMS, self.previous, strict=True):
            signal.signal(kind, previous)
        self.save()

    def save(self) -> None:
        """Write the answers, with those another run saved meanwhile, in one rename."""
        if self.cache is None:
            return
        self.reload()
        text = json.dumps({"key": self.key, "answers": self.answers}, sort_keys=True)
        part = self.cache.with_name(f"{self.cache.name}.{os.getpid()}")
        part.write_text(text, encoding="utf-8")
        part.replace(self.cache)

    def script(self, path: str) -> Any:
        """jedi's script of ``path``, the one file whose inference state is kept."""
        import jedi

        script = self.scripts.get(path)
        if script is None:
            self.scripts.clear()
            code = (self.root / path).read_text(encoding="utf-8")
            script = jedi.Script(code, path=str(self.root / path), project=self.project)
            self.scripts[path] = script
        return script

    def remembered(self, kind: str, site: Site, ask: Callable[[], Any]) -> Any:
        """What ``ask`` answers about ``site``, from the cache when an earlier run
        asked it."""
        key = f"{kind}:{site.path}:{site.line}:{site.column}"
        if key in self.answers:
            self.reused += 1
            return self.answers[key]
        self.asked += 1
        got = ask()
        self.answers[key] = self.fresh[key] = got
        if self.asked % CACHE_SAVED_EVERY == 0:
            self.save()
        return got

    def learn(self, answers: dict[str, Any]) -> None:
        """Take a worker's fresh answers into the cache."""
        before = len(self.answers)
        self.answers.update(answers)
        if len(self.answers) // CACHE_SAVED_EVERY > before // CACHE_SAVED_EVERY:
            self.save()

    def ask(self, site: Site, symbols: Symbols) -> tuple[str, list[str]]:
        verdict, ids = self.remembered("ref", site, lambda: self._ask(site, symbols))
        return verdict, list(ids)

    def _ask(self, site: Site, symbols: Symbols) -> tuple[str, list[str]]:
        # The alarms repeat: one raised where Python ignores exceptions (a __del__ of
        # jedi's) is lost, and the next one stops the question.
        try:
            signal.setitimer(signal.ITIMER_VIRTUAL, JEDI_SITE_CPU_SECONDS, JEDI_ALARM_REPEAT)
            signal.setitimer(signal.ITIMER_REAL, JEDI_SITE_WALL_SECONDS, JEDI_ALARM_REPEAT)
            try:
                return reference(self.script(site.path), site, self.root, symbols)
            finally:
                signal.setitimer(signal.ITIMER_VIRTUAL, 0)
                signal.setitimer(signal.ITIMER_REAL, 0)
        except JediTimeout:
            return "silent", []


@dataclass(slots=True)
class Definition:
    """A sampled function or method, what depends on it by jedi, and by ``impact``."""

    id: str
    name: str
    mentions: int = 0  # of its name in the repository's Python files, outside imports
    asked: int = 0  # of those jedi was asked about
    tied: int = 0  # of those jedi ties to this definition
    reference: list[str] = field(default_factory=list)  # their owners
    ours: list[str] = field(default_factory=list)  # resolved dependents at depth 1
    by_name: list[str] = field(default_factory=list)  # name_match dependents at depth 1
    checked: dict[str, str] = field(default_factory=dict)  # dependent -> right|wrong|silent
    tail: int = 0  # of ours and by_name, those impact lists in its ignored tail (over_limit)


class Sources:
    """The checkout's Python files as lines, with the lines import statements span."""

    def __init__(self, root: Path, paths: Sequence[str]) -> None:
        self.lines: dict[str, list[str]] = {}
        self.imports: dict[str, set[int]] = {}
        for path in paths:
            parsed = _parsed(root, path)
            if parsed is None:
                continue
            text, tree = parsed
            self.lines[path] = text.splitlines()
            spans: set[int] = set()
            for node in ast.walk(tree):
                if isinstance(node, ast.Import | ast.ImportFrom):
                    spans.update(range(node.lineno, (node.end_lineno or node.lineno) + 1))
            self.imports[path] = spans

    def mentions(self, name: str, path: str, first: int = 1, last: int = 0) -> Iterator[Site]:
        """Where ``name`` is written as a word in ``path`` (lines ``first``..``last``),
        outside import statements and lines defining a symbol of that name."""
        pattern = re.compile(rf"(?<![A-Za-z0-9_]){re.escape(name)}(?![A-Za-z0-9_])")
        defines = re.compile(rf"\s*(async\s+def|def|class)\s+{re.escape(name)}\b")
        lines = self.lines.get(path, [])
        imports = self.imports.get(path, set())
        stop = last or len(lines)
        for number in range(max(first, 1), min(stop, len(lines)) + 1):
            if number in imports or defines.match(lines[number - 1]):
                continue  # an import, or a definition (an override) of its own
            for match in pattern.finditer(lines[number - 1]):
                yield Site(path, number, match.start(), name)


def _within(graph: Any, node_id: str, ancestor: str) -> bool:
    """Whether ``node_id`` is ``ancestor`` (or a twin of it) or nested in it."""
    cur = graph.node(node_id)
    while cur is not None:
        if _symbol(cur.id) == ancestor:
            return True
        cur = graph.node(cur.parent) if cur.parent else None
    return False


def impact_sample(graph: Any, wanted: int, seed: int) -> list[Definition]:
    """A seeded sample of the repository's functions and methods outside tests, dunder
    methods left out (their callers never write their names), with ``impact --depth 1``
    of each."""
    pool = sorted(
        n.id
        for n in graph.nodes
        if n.kind in DEFINITION_KINDS
        and n.language == "python"
        and not n.is_test
        and not (n.name.startswith("__") and n.name.endswith("__"))
    )
    # Same-named twins of a file (overloads, if/else branches) count as one definition,
    # as jedi names any of them: their dependents together are the definition's.
    twins: dict[str, list[str]] = defaultdict(list)
    for sid in pool:
        twins[_symbol(sid)].append(sid)
    keys = sorted(twins)
    chosen = sorted(random.Random(seed).sample(keys, min(wanted, len(keys))))
    from coderooms.focus.impact import (
        DEPENDENCY_KINDS,
        NAME_MATCH_KIND,
        dependency_maps,
        impact,
    )

    maps = dependency_maps(graph)  # built once for every question on this graph
    out_edges: dict[str, list[tuple[str, str]]] = {}
    definitions = []
    for key in chosen:
        d = Definition(key, graph.node(twins[key][0]).name)
        for sid in twins[key]:
            result = impact(graph, sid, depth=1, maps=maps)
            for item in result.impacted:
                kept = d.by_name if item.edge == "name_match" else d.ours
                if _symbol(item.node.id) != key and item.node.id not in kept:
                    kept.append(item.node.id)
            # Past MAX_IMPACT_NODES, impact counts a dependent in its ignored tail: it is
            # listed there, with the kind of its edge read from the graph.
            cut = [i for i, why in result.ignored if why == "over_limit"]
            if cut and not out_edges:
                for e in graph.edges:
                    if e.kind in DEPENDENCY_KINDS:
                        out_edges.setdefault(e.src, []).append((e.dst, e.kind))
            for dependent in cut:
                kinds = {k for dst, k in out_edges.get(dependent, ()) if _within(graph, dst, key)}
                kept = d.by_name if kinds == {NAME_MATCH_KIND} else d.ours
                if kinds and _symbol(dependent) != key and dependent not in kept:
                    kept.append(dependent)
                    d.tail += 1
        d.by_name = [x for x in d.by_name if x not in d.ours]
        definitions.append(d)
    return definitions


def ask_definition(asker: Asker, symbols: Symbols, sources: Sources, d: Definition) -> None:
    """Ask jedi about the mentions of the definition's name (recall: owners of the
    mentions it ties to the definition) and inside each listed dependent (precision: a
    dependent is right when jedi ties a mention in it to the definition)."""
    graph = symbols.graph
    found = [
        m
        for path in sorted(sources.lines)
        for m in sources.mentions(d.name, path)
        if not _within(graph, symbols.owner(m.path, m.line), d.id)
    ]
    d.mentions = len(found)
    asked = random.Random(d.id).sample(found, min(OCCURRENCES_ASKED, len(found)))
    asked.sort(key=lambda m: (m.path, m.line, m.column))
    d.asked = len(asked)
    for m in asked:
        verdict, ids = asker.ask(m, symbols)
        if d.id in set(map(_symbol, ids)):
            d.tied += 1
            owner = symbols.owner(m.path, m.line)
            if owner not in d.reference:
                d.reference.append(owner)
    listed = sorted(set(d.ours) | set(d.by_name))
    for dependent in sorted(random.Random(d.id).sample(listed, min(DEPENDENTS_ASKED, len(listed)))):
        d.checked[dependent] = _check_dependent(asker, symbols, sources, d, dependent)


@dataclass(slots=True)
class Shared:
    """What a reference worker reads: set before the pool forks, so each worker holds
    a copy of the index's symbols, the sources and the answers known so far."""

    asker: Asker
    symbols: Symbols
    sources: Sources
    sites: list[Site]
    definitions: list[Definition]


_SHARED: Shared | None = None  # the forked workers' context


def _start_worker(niceness: int) -> None:
    os.nice(niceness)  # the reference yields to everyone else on the machine
    for kind in ALARMS:
        signal.signal(kind, _alarm)
    if _SHARED is not None:
        _SHARED.asker.cache = None  # the parent keeps the cache file, from what tasks send


@dataclass(slots=True)
class Spent:
    """What one task cost: jedi's new answers (for the cache), questions asked and
    answered from the cache, CPU seconds."""

    fresh: dict[str, Any]
    asked: int
    reused: int
    cpu: float


def _task(run: Callable[[Shared], Any]) -> tuple[Any, Spent]:
    assert _SHARED is not None
    asker, clock = _SHARED.asker, time.process_time()
    asker.fresh, asker.asked, asker.reused = {}, 0, 0
    got = run(_SHARED)
    return got, Spent(asker.fresh, asker.asked, asker.reused, time.process_time() - clock)


def _sites_task(start: int, stop: int) -> tuple[list[tuple[str, list[str], float]], Spent]:
    """jedi's answer for sites ``start``..``stop`` of the sample and the seconds each
    took."""

    def run(shared: Shared) -> list[tuple[str, list[str], float]]:
        answered = []
        for site in shared.sites[start:stop]:
            began = time.perf_counter()
            verdict, ids = shared.asker.ask(site, shared.symbols)
            answered.append((verdict, ids, time.perf_counter() - began))
        return answered

    return _task(run)


def _definition_task(i: int) -> tuple[Definition, Spent]:
    """Definition ``i`` of the sample with jedi's verdicts."""

    def run(shared: Shared) -> Definition:
        d = shared.definitions[i]
        ask_definition(shared.asker, shared.symbols, shared.sources, d)
        return d

    return _task(run)


class Progress:
    """One stderr line per finished task: done of total, wall and CPU seconds per task,
    and the time left at the pace so far."""

    def __init__(self, repo: str, what: str, total: int, every: int = 1) -> None:
        self.repo, self.what, self.total, self.every = repo, what, total, every
        self.done = 0
        self.cpu = 0.0
        self.started = time.perf_counter()

    def step(self, count: int, cpu: float) -> None:
        self.done += count
        self.cpu += cpu
        if self.done % self.every and self.done != self.total:
            return
        wall = time.perf_counter() - self.started
        left = wall / self.done * (self.total - self.done)
        print(
            f"  {self.repo}: {self.what} {self.done}/{self.total}, "
            f"{wall / self.done:.2f} s wall and {self.cpu / self.done:.2f} s CPU each, "
            f"about {left / 60:.1f} min left (load {os.getloadavg()[0]:.1f})",
            file=sys.stderr,
            flush=True,
        )


def ask_reference(shared: Shared, repo: str, jobs: int, niceness: int) -> dict[str, float]:
    """jedi's verdicts on every sampled site and definition, over ``jobs`` worker
    processes (one jedi each, ``niceness`` added) or in this process when ``jobs`` is 1. Answers
    are merged into the parent's cache as they come; the results do not depend on the
    order tasks finish in. Returns the reference's wall and CPU seconds and the count of
    questions jedi was asked and answered from the cache."""
    global _SHARED
    shared.asker.reload()  # what a run beside this one asked while this one prepared
    started = time.perf_counter()
    total = Spent({}, 0, 0, 0.0)
    chunks = [
        (start, min(start + SITES_PER_TASK, len(shared.sites)))
        for start in range(0, len(shared.sites), SITES_PER_TASK)
    ]
    site_progress = Progress(repo, "sites", len(shared.sites), SITES_PER_TASK)
    impact_progress = Progress(repo, "impact definitions", len(shared.definitions))

    def took(spent: Spent, progress: Progress, count: int) -> None:
        shared.asker.learn(spent.fresh)
        total.asked += spent.asked
        total.reused += spent.reused
        total.cpu += spent.cpu
        progress.step(count, spent.cpu)

    def took_sites(start: int, stop: int, answered: list[tuple[str, list[str], float]]) -> None:
        for site, (verdict, ids, seconds) in zip(shared.sites[start:stop], answered, strict=True):
            site.verdict, site.reference, site.jedi_seconds = verdict, list(ids), seconds

    _SHARED = shared
    try:
        if jobs == 1:
            with shared.asker:
                for start, stop in chunks:
                    answered, spent = _sites_task(start, stop)
                    took_sites(start, stop, answered)
                    took(spent, site_progress, stop - start)
                for i in range(len(shared.definitions)):
                    _, spent = _definition_task(i)
                    took(spent, impact_progress, 1)
        else:
            import multiprocessing
            from concurrent.futures import ProcessPoolExecutor, as_completed

            context = multiprocessing.get_context("fork")
            with ProcessPoolExecutor(
                jobs, mp_context=context, initializer=_start_worker, initargs=(niceness,)
            ) as pool:
                site_tasks = {pool.submit(_sites_task, a, b): (a, b) for a, b in chunks}
                definition_tasks = {
                    pool.submit(_definition_task, i): i for i in range(len(shared.definitions))
                }
                for future in as_completed(site_tasks):
                    (start, stop), (answered, spent) = site_tasks[future], future.result()
                    took_sites(start, stop, answered)
                    took(spent, site_progress, stop - start)
                for future in as_completed(definition_tasks):
                    d, spent = future.result()
                    shared.definitions[definition_tasks[future]] = d
                    took(spent, impact_progress, 1)
    finally:
        _SHARED = None
        shared.asker.save()
    return {
        "wall": time.perf_counter() - started,
        "cpu": total.cpu,
        "asked": total.asked,
        "reused": total.reused,
    }


def _check_dependent(
    asker: Asker, symbols: Symbols, sources: Sources, d: Definition, dependent: str
) -> str:
    """right: jedi ties a mention of the name inside ``dependent`` (not in a symbol
    nested in it) to the definition; silent: jedi says nothing of any mention;
    jedi_wrong (kept out of the score, listed): the definition is a property and jedi
    takes a ``self.<name> = …`` for an instance attribute instead, or it is a pytest
    fixture the dependent takes as a parameter (jedi ties an annotated one to its
    annotation); wrong: jedi ties the mentions elsewhere, or the dependent never
    mentions the name."""
    owner = symbols.graph.node(dependent)
    if owner is None:
        return "wrong"
    first, last = (1, 0) if owner.kind == "file" else (owner.start_line, owner.end_line)
    mentions = [
        m
        for m in sources.mentions(d.name, owner.path, first, last)
        if symbols.owner(m.path, m.line) == dependent
    ][:MENTIONS_PER_DEPENDENT]
    if not mentions:
        return "unmentioned"
    verdicts = []
    for m in mentions:
        verdict, ids = asker.ask(m, symbols)
        if d.id in set(map(_symbol, ids)):
            return "right"
        verdicts.append(verdict)
    if all(v == "silent" for v in verdicts):
        return "silent"
    if _is_property(sources, symbols, d) and any(
        _instance_assignment(asker, m, d.name) for m in mentions
    ):
        return "jedi_wrong"
    if _is_decorated(sources, symbols, d, FIXTURE_DECORATOR) and _takes_parameter(
        sources, owner, d.name
    ):
        return "jedi_wrong"
    return "wrong"


PROPERTY_DECORATOR = re.compile(r"\s*@(?:\w+\.)*(?:property|cached_property|setter)\b")


FIXTURE_DECORATOR = re.compile(r"\s*@(?:pytest\.)?fixture\b")
SIGNATURE_LINES = 8  # lines of a def read for its parameters


def _is_property(sources: Sources, symbols: Symbols, d: Definition) -> bool:
    """Whether the definition (or a twin) is decorated as a property or its setter."""
    return _is_decorated(sources, symbols, d, PROPERTY_DECORATOR)


def _is_decorated(
    sources: Sources, symbols: Symbols, d: Definition, decorator: re.Pattern[str]
) -> bool:
    """Whether the definition (or a twin) carries a decorator ``decorator`` matches."""
    path = d.id.partition("::")[0]
    lines = sources.lines.get(path, [])
    for node in symbols.by_path.get(path, ()):
        if _symbol(node.id) == d.id and 1 < node.start_line <= len(lines):
            start = node.start_line - 1  # the def line, or its first decorator's
            if any(decorator.match(line) for line in lines[max(0, start - 3) : start + 2]):
                return True
    return False


def _takes_parameter(sources: Sources, owner: Any, name: str) -> bool:
    """Whether the test or fixture ``owner`` lists ``name`` as a parameter (pytest
    passes it the fixture of that name)."""
    if owner.kind == "file":
        return False
    lines = sources.lines.get(owner.path, [])
    above = lines[max(0, owner.start_line - 4) : owner.start_line - 1]
    if not owner.is_test and not any(FIXTURE_DECORATOR.match(line) for line in above):
        return False  # pytest fills the parameters of tests and fixtures only
    text = "\n".join(lines[owner.start_line - 1 : owner.start_line - 1 + SIGNATURE_LINES])
    signature = re.search(r"def\s+\w+\s*\((.*?)\)\s*(?:->[^:]*)?:", text, re.DOTALL)
    return (
        signature is not None
        and re.search(rf"(?<![\w.]){re.escape(name)}\s*[:,=)]", signature.group(1) + ")")
        is not None
    )


def _instance_assignment(asker: Asker, m: Site, name: str) -> bool:
    """Whether jedi's goto at ``m`` lands on an assignment ``self.<name> = …``: jedi takes
    it for an instance attribute, where the class's property (a data descriptor) is what
    the assignment and every read reach."""
    return bool(asker.remembered("assigned", m, lambda: _assigned_by_jedi(asker, m, name)))


def _assigned_by_jedi(asker: Asker, m: Site, name: str) -> bool:
    try:
        found = asker.script(m.path).goto(m.line, m.column)
    except Exception:
        return False
    assigned = re.compile(rf"\s*self\.{re.escape(name)}\s*=[^=]")
    for target in found:
        if target.module_path is None or target.line is None:
            continue
        try:
            line = (
                Path(target.module_path).read_text(encoding="utf-8").splitlines()[target.line - 1]
            )
        except (OSError, IndexError, UnicodeDecodeError):
            continue
        if assigned.match(line):
            return True
    return False


def score_impact(
    definitions: list[dict[str, Any]], keys: tuple[str, ...]
) -> dict[str, float | int]:
    """Micro-averaged over the definitions: precision over the checked dependents the
    reference is not silent on, recall over the owners of the mentions jedi ties to the
    definition (the dependents ``keys`` lists)."""
    right = wrong = found = total = 0
    for d in definitions:
        listed = {x for key in keys for x in d[key]}
        for dependent, verdict in d["checked"].items():
            if dependent not in listed:
                continue
            if verdict == "right":
                right += 1
            elif verdict in ("wrong", "unmentioned"):
                wrong += 1
        total += len(d["reference"])
        found += sum(1 for owner in d["reference"] if owner in listed)
    return {
        "precision": right / (right + wrong) if right + wrong else 1.0,
        "recall": found / total if total else 1.0,
        "right": right,
        "wrong": wrong,
        "found": found,
        "reference": total,
    }


def evaluate(
    repo: str,
    mirrors: Path,
    sites_wanted: int,
    definitions_wanted: int,
    seed: int,
    cache_dir: Path | None = None,
    jobs: int = 1,
    niceness: int = WORKER_NICENESS,
) -> dict[str, Any]:
    import jedi

    from coderooms.workspace import Workspace

    with tempfile.TemporaryDirectory(prefix="coderooms-callgraph-") as tmp:
        root, head = clone(mirrors, repo, Path(tmp))
        started = time.perf_counter()
        workspace = Workspace.open(root)
        workspace.index()
        graph = workspace.graph()
        index_seconds = time.perf_counter() - started
        symbols = Symbols(graph)
        resolved: dict[str, set[str]] = defaultdict(set)
        by_name: dict[str, set[str]] = defaultdict(set)
        for e in graph.edges:
            if e.kind == "calls":
                resolved[e.src].add(e.dst)
            elif e.kind == "name_match":
                by_name[e.src].add(e.dst)
        paths = sorted(n.path for n in graph.nodes if n.kind == "file" and n.language == "python")
        everything = list(call_sites(root, paths))
        sample = random.Random(seed).sample(everything, min(sites_wanted, len(everything)))
        sample.sort(key=lambda s: (s.path, s.line, s.column))
        # Names each owner of the sample calls: a target named like none of them was
        # reached through an alias (Matrix = MutableDenseMatrix), and counts for each
        # of the owner's sites whose name no target carries.
        sampled_files = {s.path for s in sample}
        called: dict[str, set[str]] = defaultdict(set)
        for other in everything:
            if other.path in sampled_files:
                called[symbols.owner(other.path, other.line)].add(other.name)
        # The checkout before anything installed: an installed copy of the same package
        # (requests is one) would otherwise take its imports.
        roots = [str(root / "src")] if (root / "src").is_dir() else []
        base = [p for p in sys.path if p and Path(p).resolve() != Path.cwd().resolve()]
        project = jedi.Project(path=str(root), sys_path=[*roots, str(root), *base])
        cache = cache_dir / f"{repo.replace('/', '+')}.json" if cache_dir is not None else None
        # jedi's answers name the index's symbols: they hold for the same commit, the same
        # jedi and the same symbols.
        symbol_ids = "\n".join(sorted(symbols.name_of)).encode("utf-8")
        key = f"{head} jedi {jedi.__version__} symbols {hashlib.blake2b(symbol_ids).hexdigest()}"
        asker = Asker(project, root, cache, key)
        for site in sample:
            site.owner = symbols.owner(site.path, site.line)
            unique = symbols.by_name.get(site.name, [])
            site.baseline = list(unique) if len(unique) == 1 else []
        definitions = impact_sample(graph, definitions_wanted, seed)
        shared = Shared(asker, symbols, Sources(root, paths), sample, definitions)
        spent = ask_reference(shared, repo, jobs, niceness)
        for site in sample:
            names = called[site.owner]
            for key, edges in (("ours", resolved), ("by_name", by_name)):
                targets = edges.get(site.owner, set())
                chosen = _attributed(targets, site.name, names, symbols, site.reference)
                setattr(site, key, chosen)
        print(
            f"  {repo}: jedi asked {spent['asked']} questions, {spent['reused']} answered "
            f"from the cache; reference {spent['wall']:.0f} s wall, {spent['cpu']:.0f} s CPU "
            f"over {jobs} process(es)",
            file=sys.stderr,
            flush=True,
        )
        return {
            "repo": repo,
            "commit": head,
            "jedi_asked": spent["asked"],
            "jedi_reused": spent["reused"],
            "reference_wall_seconds": spent["wall"],
            "reference_cpu_seconds": spent["cpu"],
            "jobs": jobs,
            "call_sites": len(everything),
            "index_seconds": index_seconds,
            "sites": [asdict(s) for s in sample],
            "definitions": [asdict(d) for d in definitions],
        }


def _symbol(sid: str) -> str:
    """A symbol id without its twin suffix: jedi names one of several same-named
    definitions of a file (``if``/``else`` branches, overloads), any of them counts."""
    head, sep, tail = sid.rpartition("#")
    return head if sep and tail.isdigit() else sid


def score(sites: list[dict[str, Any]], key: str) -> dict[str, float | int]:
    tp = fp = fn = 0
    for s in sites:
        if s["verdict"] == "silent":
            continue
        predicted = set(map(_symbol, s[key]))
        right = predicted & set(map(_symbol, s["reference"]))
        if predicted:
            if right:
                tp += 1
            else:
                fp += 1
        if s["verdict"] == "project" and not right:
            fn += 1
    project = sum(1 for s in sites if s["verdict"] == "project")
    return {
        "precision": tp / (tp + fp) if tp + fp else 1.0,
        "recall": (project - fn) / project if project else 1.0,
        "predicted": tp + fp,
        "right": tp,
        "wrong": fp,
        "missed": fn,
    }


def with_names(sites: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The sites with resolved and name-match edges counted as one prediction."""
    return [{**s, "both": s["ours"] + s["by_name"]} for s in sites]


def report(results: list[dict[str, Any]]) -> None:
    rows = [(r["repo"], r["sites"]) for r in results]
    rows.append(("all", [s for r in results for s in r["sites"]]))
    print()
    print(
        f"{'repository':<20} {'sites':>5} {'proj':>5} {'ext':>4} {'silent':>6}  "
        f"{'ours P / R':>13}  {'+name match P / R':>17}  {'unique-name baseline P / R':>26}"
    )
    for repo, sites in rows:
        counts = defaultdict(int)
        for s in sites:
            counts[s["verdict"]] += 1
        ours, both = score(sites, "ours"), score(with_names(sites), "both")
        base = score(sites, "baseline")
        print(
            f"{repo:<20} {len(sites):>5} {counts['project']:>5} {counts['external']:>4} "
            f"{counts['silent']:>6}  {ours['precision']:>6.3f} / {ours['recall']:.3f}  "
            f"{both['precision']:>8.3f} / {both['recall']:.3f}  "
            f"{base['precision']:>17.3f} / {base['recall']:.3f}"
        )
    print()
    print(
        f"{'impact --depth 1':<20} {'defs':>5} {'deps':>5} {'jedi':>5} {'out':>6}  "
        f"{'resolved P / R':>14}  {'all listed P / R':>16}"
    )
    impact_rows = [(r["repo"], r.get("definitions", [])) for r in results]
    impact_rows.append(("all", [d for r in results for d in r.get("definitions", [])]))
    for repo, defs in impact_rows:
        resolved, listed = score_impact(defs, ("ours",)), score_impact(defs, ("ours", "by_name"))
        checked = sum(len(d["checked"]) for d in defs)
        silent = sum(
            1 for d in defs for v in d["checked"].values() if v in ("silent", "jedi_wrong")
        )
        print(
            f"{repo:<20} {len(defs):>5} {checked:>5} {listed['reference']:>5} {silent:>6}  "
            f"{resolved['precision']:>6.3f} / {resolved['recall']:.3f}  "
            f"{listed['precision']:>8.3f} / {listed['recall']:.3f}"
        )
    every_def = impact_rows[-1][1]
    print(
        f"of the dependents, {sum(d.get('tail', 0) for d in every_def)} listed in impact's "
        f"ignored tail (over_limit, past {_max_impact_nodes()} listed)"
    )
    resolved, listed = (
        score_impact(every_def, ("ours",)),
        score_impact(every_def, ("ours", "by_name")),
    )
    print(
        f"impact targets (all listed): precision >= {TARGET_IMPACT_PRECISION} "
        f"({'met' if listed['precision'] >= TARGET_IMPACT_PRECISION else 'NOT met'}), "
        f"recall >= {TARGET_IMPACT_RECALL} "
        f"({'met' if listed['recall'] >= TARGET_IMPACT_RECALL else 'NOT met'})"
    )
    everything = rows[-1][1]
    ours = score(everything, "ours")
    print()
    print(
        f"ours: {ours['predicted']} predictions, {ours['right']} right, {ours['wrong']} wrong, "
        f"{ours['missed']} project sites missed"
    )
    print(
        f"targets: precision >= {TARGET_PRECISION} "
        f"({'met' if ours['precision'] >= TARGET_PRECISION else 'NOT met'}), "
        f"recall >= {TARGET_RECALL} ({'met' if ours['recall'] >= TARGET_RECALL else 'NOT met'})"
    )
    jedi_times = [s["jedi_seconds"] for s in everything]
    index_times = [r["index_seconds"] for r in results]
    if jedi_times:
        print(
            f"median seconds: jedi per site {statistics.median(jedi_times):.3f}, "
            f"index per repository {statistics.median(index_times):.2f}; "
            f"whole index / whole reference "
            f"{sum(index_times) / max(sum(jedi_times), 1e-9):.3f}"
        )
    for r in results:
        print(
            f"\n{r['repo']} @ {r['commit'][:12]}: {r['call_sites']} call sites, sample of "
            f"{len(r['sites'])} (seeded); reference {r['reference_wall_seconds']:.0f} s wall, "
            f"{r['reference_cpu_seconds']:.0f} s CPU over {r['jobs']} process(es), jedi asked "
            f"{r['jedi_asked']} questions, {r['jedi_reused']} answered from the cache"
        )
        wrong = [
            s
            for s in r["sites"]
            if s["verdict"] != "silent"
            and s["ours"]
            and not set(map(_symbol, s["ours"])) & set(map(_symbol, s["reference"]))
        ]
        for s in wrong[:WRONG_SHOWN]:
            ref = ", ".join(s["reference"]) or "outside the repository"
            print(f"  wrong  {s['path']}:{s['line']} {s['name']}: ours {s['ours']}, jedi {ref}")
        silent = [s for s in r["sites"] if s["verdict"] == "silent"]
        for s in silent[:SILENT_SHOWN]:
            print(f"  silent {s['path']}:{s['line']} {s['name']} (ours {s['ours'] or '-'})")
        if len(silent) > SILENT_SHOWN:
            print(f"  … {len(silent) - SILENT_SHOWN} more silent sites (see --out)")
        _disagreements(r.get("definitions", []))


def _max_impact_nodes() -> int:
    from coderooms.focus.impact import MAX_IMPACT_NODES

    return MAX_IMPACT_NODES


def _disagreements(definitions: list[dict[str, Any]]) -> None:
    """The impact disagreements with jedi, for a person to judge: dependents jedi ties
    elsewhere (or never mentioning the name), dependents it is silent or wrong on (kept
    out of the score), and owners of mentions jedi ties to a definition impact misses."""
    shown = {"wrong": 0, "silent": 0, "jedi_wrong": 0, "missed": 0}
    for d in definitions:
        listed = set(d["ours"]) | set(d["by_name"])
        for dependent, verdict in sorted(d["checked"].items()):
            kind = "wrong" if verdict in ("wrong", "unmentioned") else verdict
            if kind in shown and shown[kind] < DISAGREEMENTS_SHOWN:
                shown[kind] += 1
                edge = "resolved" if dependent in d["ours"] else "name_match"
                print(f"  impact {verdict:<11} {d['id']} <- {dependent} ({edge})")
        for owner in d["reference"]:
            if owner not in listed and shown["missed"] < DISAGREEMENTS_SHOWN:
                shown["missed"] += 1
                print(f"  impact missed      {d['id']} <- {owner} (jedi)")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--mirrors", type=Path, default=MIRROR_DIR)
    parser.add_argument("--repo", action="append", help="owner/name (repeatable)")
    parser.add_argument("--sites", type=int, default=DEFAULT_SITES, help="sampled per repository")
    parser.add_argument(
        "--definitions",
        type=int,
        default=DEFAULT_DEFINITIONS,
        help="functions and methods sampled per repository for the impact row",
    )
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    parser.add_argument("--out", type=Path, help="write every site as JSON")
    parser.add_argument(
        "--jedi-cache",
        type=Path,
        help="a directory keeping jedi's answers for a later run at the same commit",
    )
    parser.add_argument(
        "--jobs",
        type=int,
        default=DEFAULT_JOBS,
        help="worker processes asking jedi (nice'd; 1: in this process)",
    )
    parser.add_argument(
        "--nice",
        type=int,
        default=WORKER_NICENESS,
        help="niceness added to each worker (answers do not depend on it: jedi's time is CPU)",
    )
    args = parser.parse_args(argv)
    try:
        import jedi  # noqa: F401
    except ImportError:
        raise SystemExit("jedi is the reference: pip install -e '.[bench]'") from None
    if args.sites < 1 or args.definitions < 0 or args.jobs < 1 or not 0 <= args.nice <= 19:
        raise SystemExit("--sites and --jobs must be at least 1 and --definitions at least 0")
    if args.jedi_cache is not None:
        args.jedi_cache.mkdir(parents=True, exist_ok=True)
    results = []
    for repo in args.repo or DEFAULT_REPOS:
        print(f"{repo}: indexing and asking jedi …", file=sys.stderr, flush=True)
        results.append(
            evaluate(
                repo,
                args.mirrors,
                args.sites,
                args.definitions,
                args.seed,
                args.jedi_cache,
                args.jobs,
                args.nice,
            )
        )
    report(results)
    if args.out:
        args.out.write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
