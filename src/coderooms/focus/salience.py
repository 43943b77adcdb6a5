"""Goal-conditioned salience: one deterministic score per node of a code graph.

1. Seeds: the ranked lists of the signals in :mod:`coderooms.focus.signals` (BM25 over
   whole files and over single functions, names the repository defines, dotted names
   and paths, traceback frames, messages found verbatim in the code, file names, and,
   when an embedder is given, static-embedding similarity), fused by weighted
   Reciprocal Rank Fusion.
2. Graph: personalized PageRank from the fused seeds over relation-weighted edges,
   followed both ways, so neighbours of the seeds gain and unrelated hubs do not.
3. Signals: recency and change frequency from git; penalties for tests, vendored and
   generated code. Each one is written into the node's ``why``.

:class:`SalienceIndex` holds what does not depend on the goal (built once per graph);
:func:`rank` does the per-goal work.
"""

from __future__ import annotations

import hashlib
import math
from collections import Counter, defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace

import numpy as np
import scipy.sparse as sp

from coderooms.focus.errors import UnknownSignal
from coderooms.focus.graph import CodeGraph, CodeNode
from coderooms.focus.lexical import BM25
from coderooms.focus.signals import SIGNAL_NAMES, SIGNALS, Query
from coderooms.focus.signals.paths import MAX_TAIL_PARTS
from coderooms.focus.text import tokenize

Embedder = Callable[[Sequence[str]], np.ndarray]

FILE_TEXT_CAP_CHARS = 200_000  # large generated files: index only their head
SYMBOL_TEXT_CAP_CHARS = 8_000
EMBED_TEXT_CAP_CHARS = 600
SOURCE_PRIOR_FLOOR = 0.9
WHY_FLOOR = 0.02  # reasons are written for nodes scoring at least this share of the best
FILE_CHILD_SHARE = 1.0  # how much of a file's best symbol score counts toward the file
PAGERANK_ITERATIONS = 30
PAGERANK_TOLERANCE = 1e-9
EDGE_PREFIX = "edge:"  # names an edge kind in an ablation
STANDALONE_SCRIPTS = "standalone_scripts"  # names the standalone-script prior in an ablation


def _default_signal_weights() -> dict[str, float]:
    return {signal.name: signal.default_weight for signal in SIGNALS}


def _default_edge_weights() -> dict[str, float]:
    return {
        "contains": 1.0,
        "calls": 0.6,
        "name_match": 0.3,  # a call tied by its name only (see index.resolve)
        "references": 0.4,
        "inherits": 0.6,
        "imports": 0.25,
        "tests": 0.3,
        "co_change": 0.3,
    }


@dataclass(frozen=True, slots=True)
class SalienceConfig:
    """Every weight of the ranking; defaults are calibrated on the development split."""

    rrf_k: float = 20.0  # 10-60 all within one dev instance of each other; 100 was worse
    file_context: float = 0.5  # how much a symbol's score leans on its file's strength
    weighted_query: bool = True  # title and prose count more than code and log blocks
    signal_weights: Mapping[str, float] = field(default_factory=_default_signal_weights)
    restart: float = 0.6  # PageRank restart probability: how strongly seeds stay put
    backward: float = 0.6  # weight of an edge followed against its direction
    edge_weights: Mapping[str, float] = field(default_factory=_default_edge_weights)
    test_penalty: float = 0.3
    vendored_penalty: float = 0.2
    generated_penalty: float = 0.2
    nested_vendor_dirs: frozenset[str] = frozenset({"packages", "_vendor", "vendored", "_vendored"})
    auxiliary_penalty: float = 0.3  # documentation, examples and benchmarks
    auxiliary_dirs: frozenset[str] = frozenset(
        {"doc", "docs", "example", "examples", "bench", "benchmark", "benchmarks"}
    )
    document_penalty: float = 0.3  # prose and configuration files (no parsed code)
    code_languages: frozenset[str] = frozenset(
        {"python", "javascript", "typescript", "tsx", "go", "rust", "java", "c", "cpp"}
    )
    standalone_scripts: bool = True  # hold back Python files in no package that nothing imports
    recency_weight: float = 0.05
    recency_half_life_days: float = 180.0
    frequency_weight: float = 0.05

    def weight(self, signal: str) -> float:
        return float(self.signal_weights.get(signal, 0.0))

    def without(self, *names: str) -> SalienceConfig:
        """This configuration with the named signals (see :data:`SIGNAL_NAMES`), edge
        kinds (``edge:calls``) or the standalone-script prior switched off: an ablation."""
        signals = dict(self.signal_weights)
        edges = dict(self.edge_weights)
        standalone = self.standalone_scripts
        for name in names:
            if name == STANDALONE_SCRIPTS:
                standalone = False
            elif name in signals:
                signals[name] = 0.0
            elif name.startswith(EDGE_PREFIX) and name[len(EDGE_PREFIX) :] in edges:
                edges[name[len(EDGE_PREFIX) :]] = 0.0
            else:
                known = list(SIGNAL_NAMES) + [EDGE_PREFIX + kind for kind in sorted(edges)]
                raise UnknownSignal(name, ", ".join([*known, STANDALONE_SCRIPTS]))
        return replace(
            self, signal_weights=signals, edge_weights=edges, standalone_scripts=standalone
        )


@dataclass(frozen=True, slots=True)
class Salience:
    """Per-goal result: scores (summing to 1) over ``index.nodes`` and the reasons."""

    scores: np.ndarray
    why: dict[int, list[str]]
    seeded: int  # nodes that got any seed weight
    precise_cues: int  # goal cues that resolved to code (names, paths, frames, literals)
    term_coverage: float  # share of goal terms found anywhere in the index
    file_strength: np.ndarray | None = None  # per row, for file rows: the file's rank score
    named: frozenset[int] = frozenset()  # rows of the files the goal names by their path


def _module_suffixes(path: str) -> list[str]:
    """``src/pkg/sub/mod.py`` → ``pkg.sub.mod``-style endings: ``mod``, ``sub.mod``, …"""
    stem = path.rsplit(".", 1)[0]
    parts = [p for p in stem.split("/") if p]
    if parts and parts[-1] == "__init__":
        parts = parts[:-1]
    return [".".join(parts[i:]) for i in range(len(parts))]


class SalienceIndex:
    """The goal-independent part of ranking, built once per code graph."""

    def __init__(
        self,
        graph: CodeGraph,
        texts: Mapping[str, str],
        embedder: Embedder | None = None,
        config: SalienceConfig | None = None,
        previous: SalienceIndex | None = None,
    ) -> None:
        """``previous``, an index of an earlier graph of the same repository, lends its
        tokenised documents and embedding rows to every node whose text is unchanged:
        re-indexing after an edit then costs about what the edit touched. The result
        equals an index built from nothing."""
        self.graph = graph
        self.config = config or SalienceConfig()
        self.nodes: tuple[CodeNode, ...] = tuple(sorted(graph.nodes, key=lambda n: n.id))
        self.position = {n.id: i for i, n in enumerate(self.nodes)}
        self.texts = {p: t[:FILE_TEXT_CAP_CHARS] for p, t in texts.items()}
        self.file_rows = [i for i, n in enumerate(self.nodes) if n.kind == "file"]
        self.symbol_rows = [
            i for i, n in enumerate(self.nodes) if n.kind in ("class", "function", "method")
        ]
        self.file_of_path = {self.nodes[i].path: i for i in self.file_rows}
        self.file_row_of = np.asarray(
            [self.file_of_path.get(n.path, i) for i, n in enumerate(self.nodes)], dtype=np.int64
        )
        self._lines = {p: t.splitlines() for p, t in self.texts.items()}
        known_counts = previous._counts if previous is not None else {}
        self._counts: dict[tuple[str | bytes, ...], Counter[str]] = {}
        self.file_bm25 = BM25.from_counts(
            [self._file_counts(self.nodes[i], known_counts) for i in self.file_rows]
        )
        self.symbol_bm25 = BM25.from_counts(
            [self._symbol_counts(self.nodes[i], known_counts) for i in self.symbol_rows]
        )
        self.definitions: dict[str, list[int]] = defaultdict(list)
        self.qualnames: dict[str, list[int]] = defaultdict(list)
        for i in self.symbol_rows:
            node = self.nodes[i]
            self.definitions[node.name].append(i)
            self.qualnames[node.qualname].append(i)
        self.path_tails: dict[str, list[int]] = defaultdict(list)
        for i in self.file_rows:
            parts = self.nodes[i].path.split("/")
            for keep in range(1, min(len(parts), MAX_TAIL_PARTS) + 1):
                self.path_tails["/".join(parts[-keep:])].append(i)
        self.module_ends: dict[str, list[int]] = defaultdict(list)
        self.stems: dict[str, list[int]] = defaultdict(list)
        for i in self.file_rows:
            path = self.nodes[i].path
            for suffix in _module_suffixes(path):
                self.module_ends[suffix].append(i)
            stem = path.rsplit("/", 1)[-1].rsplit(".", 1)[0].lower()
            self.stems[stem].append(i)
        self.symbols_by_file: dict[int, list[int]] = defaultdict(list)
        for i in self.symbol_rows:
            self.symbols_by_file[int(self.file_row_of[i])].append(i)
        self._children: dict[str, list[CodeNode]] = defaultdict(list)
        for node in self.nodes:
            if node.parent:
                self._children[node.parent].append(node)
            elif node.kind != "file" and node.path in self.file_of_path:
                self._children[node.path].append(node)
        for kids in self._children.values():
            kids.sort(key=lambda c: (c.start_line, c.id))
        self.transition = self._transition()
        imported: set[str] = set()
        for edge in self.graph.edges:
            target = self.graph.node(edge.dst) if edge.kind == "imports" else None
            if target is not None:
                imported.add(target.path)
        self._imported = frozenset(imported)
        self._packaged = any(p.rsplit("/", 1)[-1] == "__init__.py" for p in self.file_of_path)
        self.prior = self._prior()
        # Files a verbatim search looks in: code that is not a test, an example or prose.
        self.source_rows = [i for i in self.file_rows if self.prior[i] >= SOURCE_PRIOR_FLOOR]
        self.notes = [self.penalty_notes(i) for i in range(len(self.nodes))]
        self.embeddings: np.ndarray | None = None
        self.embedder = embedder
        self._embedded: dict[bytes, int] = {}  # digest of an embedded text -> its row
        if embedder is not None and self.nodes:
            self.embeddings = self._embed_all(embedder, previous)

    def children_of(self, node_id: str) -> list[CodeNode]:
        """Direct children in source order (top-level symbols for a file)."""
        return self._children.get(node_id, [])

    # --- documents ---------------------------------------------------------------------

    def lines(self, path: str) -> list[str]:
        return self._lines.get(path, [])

    def body(self, node: CodeNode) -> str:
        lines = self._lines.get(node.path, [])
        if node.kind == "file":
            return "\n".join(lines)
        start = max(node.start_line - 1, 0)
        return "\n".join(lines[start : max(node.end_line, start)])

    def _path_terms(self, path: str) -> list[str]:
        return tokenize(path.replace("/", " ").replace(".", " "))

    def _file_counts(
        self, node: CodeNode, known: Mapping[tuple[str | bytes, ...], Counter[str]]
    ) -> Counter[str]:
        """Term counts of a file: its path and its text (reused from ``known`` when the
        file is unchanged)."""
        text = self.texts.get(node.path, "")
        key = (node.path, text)
        counts = known.get(key)
        if counts is None:
            counts = Counter(self._path_terms(node.path) + tokenize(text))
        self._counts[key] = counts
        return counts

    def _symbol_counts(
        self, node: CodeNode, known: Mapping[tuple[str | bytes, ...], Counter[str]]
    ) -> Counter[str]:
        """Term counts of a symbol: its name (twice), its path and its body."""
        body = self.body(node)[:SYMBOL_TEXT_CAP_CHARS]
        key = (node.qualname, node.path, _digest(body))
        counts = known.get(key)
        if counts is None:
            counts = Counter(
                tokenize(node.qualname) * 2 + self._path_terms(node.path) + tokenize(body)
            )
        self._counts[key] = counts
        return counts

    def _embed_all(self, embedder: Embedder, previous: SalienceIndex | None) -> np.ndarray:
        """Unit rows, one per node; a text ``previous`` embedded keeps its row."""
        texts = [self._embed_text(n) for n in self.nodes]
        keys = [_digest(text) for text in texts]
        rows: dict[bytes, np.ndarray] = {}
        if (
            previous is not None
            and previous.embedder is embedder
            and previous.embeddings is not None
        ):
            rows = {key: previous.embeddings[i] for key, i in previous._embedded.items()}
        fresh = sorted(
            {text: key for text, key in zip(texts, keys, strict=True) if key not in rows}.items()
        )
        if fresh:
            vectors = np.asarray(embedder([text for text, _ in fresh]))
            norms = np.linalg.norm(vectors, axis=1, keepdims=True)
            unit = vectors / np.maximum(norms, 1e-12)
            rows.update(zip([key for _, key in fresh], unit, strict=True))
        self._embedded = {key: i for i, key in enumerate(keys)}
        return np.stack([rows[key] for key in keys])

    def _embed_text(self, node: CodeNode) -> str:
        if node.kind == "file":
            # A file reads as its path, its docstring and the names it defines.
            names = " ".join(c.name for c in self.children_of(node.id))
            text = f"{node.path}\n{node.docstring}\n{names}"
        else:
            text = f"{node.path} {node.qualname}\n{node.signature}\n{node.docstring}"
            if len(text) < EMBED_TEXT_CAP_CHARS:
                text += "\n" + self.body(node)
        return text[:EMBED_TEXT_CAP_CHARS]

    # --- graph -------------------------------------------------------------------------

    def _transition(self) -> sp.csr_matrix:
        n = len(self.nodes)
        rows: list[int] = []
        cols: list[int] = []
        data: list[float] = []
        weights = self.config.edge_weights
        for edge in self.graph.edges:
            a = self.position.get(edge.src)
            b = self.position.get(edge.dst)
            w = weights.get(edge.kind, 0.0) * edge.weight
            if a is None or b is None or a == b or w <= 0:
                continue
            rows += [a, b]
            cols += [b, a]
            data += [w, w * self.config.backward]
        for path_a, path_b, together in self.graph.co_changes:
            a = self.file_of_path.get(path_a)
            b = self.file_of_path.get(path_b)
            w = weights.get("co_change", 0.0) * math.log1p(together)
            if a is None or b is None or a == b or w <= 0:
                continue
            rows += [a, b]
            cols += [b, a]
            data += [w, w]
        matrix = sp.csr_matrix((data, (rows, cols)), shape=(n, n), dtype=np.float64)
        out = np.asarray(matrix.sum(axis=1)).ravel()
        inverse = np.divide(1.0, out, out=np.zeros_like(out), where=out > 0)
        return sp.csr_matrix(sp.diags(inverse) @ matrix)

    def _prior(self) -> np.ndarray:
        """Per-node multiplier from penalties and git signals (goal-independent)."""
        config = self.config
        prior = np.ones(len(self.nodes), dtype=np.float64)
        signals = {s.path: s for s in self.graph.signals}
        max_count = max((s.commit_count for s in self.graph.signals), default=0)
        head = self.graph.head_time
        for i, node in enumerate(self.nodes):
            if node.is_test:
                prior[i] *= config.test_penalty
            if self._is_vendored(node):
                prior[i] *= config.vendored_penalty
            if node.is_generated:
                prior[i] *= config.generated_penalty
            if self.is_auxiliary(node) or self.is_standalone_script(node):
                prior[i] *= config.auxiliary_penalty
            if node.language and node.language not in config.code_languages:
                prior[i] *= config.document_penalty
            signal = signals.get(node.path)
            if signal is not None and head and signal.last_change:
                age_days = max(head - signal.last_change, 0) / 86_400
                recency = 0.5 ** (age_days / config.recency_half_life_days)
                prior[i] *= 1.0 + config.recency_weight * recency
            if signal is not None and max_count:
                frequency = math.log1p(signal.commit_count) / math.log1p(max_count)
                prior[i] *= 1.0 + config.frequency_weight * frequency
        return prior

    def _is_vendored(self, node: CodeNode) -> bool:
        """Marked by the index, or inside a ``packages``-like directory nested in a Python
        package (``requests/packages/urllib3``: a copy of someone else's library)."""
        if node.is_vendored:
            return True
        parts = node.path.split("/")[:-1]
        for depth, part in enumerate(parts):
            if part in self.config.nested_vendor_dirs and depth > 0:
                parent = "/".join(parts[:depth]) + "/__init__.py"
                if parent in self.file_of_path:
                    return True
        return False

    def is_auxiliary(self, node: CodeNode) -> bool:
        dirs = self.config.auxiliary_dirs
        return any(part in dirs for part in node.path.split("/")[:-1])

    def is_standalone_script(self, node: CodeNode) -> bool:
        """A Python file outside every package of a packaged repository that no file
        imports: a maintenance script or a build file, not the code the project ships.
        (Learnt from the repository's own layout and imports, not from a list of names.)"""
        if not self.config.standalone_scripts or node.language != "python":
            return False
        if not self._packaged or node.is_test or self._is_vendored(node):
            return False
        folder = node.path.rsplit("/", 1)[0] + "/" if "/" in node.path else ""
        return folder + "__init__.py" not in self.file_of_path and node.path not in self._imported

    def penalty_notes(self, row: int) -> list[str]:
        node = self.nodes[row]
        notes = []
        if self.is_auxiliary(node):
            notes.append(f"documentation/example code ×{self.config.auxiliary_penalty:g}")
        elif self.is_standalone_script(node):
            notes.append(f"standalone script, in no package ×{self.config.auxiliary_penalty:g}")
        if node.language and node.language not in self.config.code_languages:
            notes.append(f"not code ({node.language}) ×{self.config.document_penalty:g}")
        if node.is_test:
            notes.append(f"test code ×{self.config.test_penalty:g}")
        if self._is_vendored(node):
            notes.append(f"vendored ×{self.config.vendored_penalty:g}")
        if node.is_generated:
            notes.append(f"generated ×{self.config.generated_penalty:g}")
        return notes


def _digest(text: str) -> bytes:
    """A short fingerprint of a text, to recognise it in the next index."""
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()


NAMED_FILE_NOTE = "named in the goal: no penalty for prose, configuration or docs"

# --- per-goal ranking ----------------------------------------------------------------


@dataclass(slots=True)
class _Fusion:
    size: int
    k: float
    scores: np.ndarray = field(init=False)
    why: dict[int, list[str]] = field(default_factory=lambda: defaultdict(list))
    lists: int = 0

    def __post_init__(self) -> None:
        self.scores = np.zeros(self.size, dtype=np.float64)

    def add(self, ranked: Sequence[tuple[int, str]], weight: float) -> None:
        """Fuse one ranked list of (row, reason); a row counts at its first rank only."""
        if weight <= 0 or not ranked:
            return
        self.lists += 1
        seen: set[int] = set()
        rank = 0
        for row, reason in ranked:
            if row in seen:
                continue
            seen.add(row)
            self.scores[row] += weight / (self.k + rank + 1)
            if rank < 10 and reason:
                self.why[row].append(reason)
            rank += 1


def _prior_for_goal(index: SalienceIndex, named: list[int]) -> np.ndarray:
    """The index's prior, except that a file the goal names by its path is not held down
    for being configuration or prose, or for sitting among docs and examples: whoever
    wrote ``tox.ini`` or ``docs/usage.rst`` in the goal wants that file. (Test, vendored
    and generated files keep their penalties.)"""
    config = index.config
    prior = index.prior
    for row in sorted(set(named)):
        node = index.nodes[row]
        lift = 1.0
        if node.language and node.language not in config.code_languages:
            lift /= config.document_penalty
        if index.is_auxiliary(node) or index.is_standalone_script(node):
            lift /= config.auxiliary_penalty
        if lift != 1.0:
            if prior is index.prior:
                prior = prior.copy()
            prior[row] *= lift
    return prior


def _personalized_pagerank(index: SalienceIndex, seeds: np.ndarray) -> np.ndarray:
    restart = index.config.restart
    p = seeds / seeds.sum()
    r = p.copy()
    transition_t = index.transition.T.tocsr()
    has_out = np.asarray(index.transition.sum(axis=1)).ravel() > 0
    for _ in range(PAGERANK_ITERATIONS):
        spread = transition_t @ r
        dangling = float(r[~has_out].sum())
        nxt = restart * p + (1.0 - restart) * (spread + dangling * p)
        if float(np.abs(nxt - r).sum()) < PAGERANK_TOLERANCE:
            r = nxt
            break
        r = nxt
    return np.asarray(r)


def _file_strength(index: SalienceIndex, scores: np.ndarray) -> np.ndarray:
    """Per file row: its own score plus the best score of the symbols inside it."""
    best = np.zeros(len(index.nodes), dtype=np.float64)
    rows = np.asarray(index.symbol_rows, dtype=np.int64)
    if rows.size:
        np.maximum.at(best, index.file_row_of[rows], scores[rows])
    strength = np.zeros(len(index.nodes), dtype=np.float64)
    files = np.asarray(index.file_rows, dtype=np.int64)
    strength[files] = scores[files] + FILE_CHILD_SHARE * best[files]
    return strength


def _weigh_by_file(
    index: SalienceIndex, scores: np.ndarray, strength: np.ndarray, share: float
) -> np.ndarray:
    """Code inside the strongest files gains: a symbol keeps ``1 - share`` of its score
    and earns ``share`` in proportion to its file's strength against the best file."""
    top = float(strength.max())
    if top <= 0:
        return scores
    relative = strength[index.file_row_of] / top
    factor = np.ones(len(index.nodes), dtype=np.float64)
    rows = np.asarray(index.symbol_rows, dtype=np.int64)
    factor[rows] = (1.0 - share) + share * relative[rows]
    return scores * factor


RANK_TIME_FIELDS = ("rrf_k", "file_context", "weighted_query", "signal_weights")
"""The weights :func:`rank` reads per goal; every other field shapes the index itself."""


def check_rank_time_only(built: SalienceConfig, config: SalienceConfig) -> None:
    """Refuse a ``config`` that differs from ``built`` beyond the rank-time weights."""
    if replace(config, **{f: getattr(built, f) for f in RANK_TIME_FIELDS}) != built:
        raise ValueError("only the rank-time weights may differ from the index's config")


def rank(index: SalienceIndex, goal: str, config: SalienceConfig | None = None) -> Salience:
    """Score every node of the index for ``goal``. ``config`` may change the weights
    :func:`rank` reads (:data:`RANK_TIME_FIELDS`) and nothing else (a refusal otherwise):
    one index then serves many weightings, as an ablation or a weight search needs."""
    n = len(index.nodes)
    if config is None:
        config = index.config
    else:
        check_rank_time_only(index.config, config)
    query = Query(goal, config.weighted_query)
    fusion = _Fusion(n, config.rrf_k)
    if n == 0:
        return Salience(np.zeros(0), {}, 0, 0, 0.0)
    precise = 0
    named: list[int] = []
    for signal in SIGNALS:
        weight = config.weight(signal.name)
        if weight <= 0:
            continue
        seeds = signal.rank(index, query)
        fusion.add(seeds, weight)
        if signal.to_files:
            fusion.add([(int(index.file_row_of[row]), why) for row, why in seeds], weight)
        if signal.precise:
            precise += len(seeds)
        if signal.names_files:
            named.extend(row for row, _ in seeds)
    prior = _prior_for_goal(index, named)
    seeds_mass = fusion.scores * prior
    terms = set(query.terms)
    known = sum(1 for t in terms if index.file_bm25.document_frequency(t) > 0)
    coverage = known / len(terms) if terms else 0.0
    seeded = int(np.count_nonzero(seeds_mass))
    if seeded == 0:
        return Salience(np.zeros(n), {}, 0, precise, coverage)
    scores = _personalized_pagerank(index, seeds_mass) * prior
    scores = scores / scores.sum()
    strength = _file_strength(index, scores)
    if config.file_context > 0:
        scores = _weigh_by_file(index, scores, strength, config.file_context)
        scores = scores / scores.sum()
    why: dict[int, list[str]] = {}
    for found in np.flatnonzero(scores >= WHY_FLOOR * float(scores.max())):
        row = int(found)
        reasons = list(fusion.why.get(row, []))
        if not reasons:
            reasons = ["linked in the code graph to what the goal names"]
        notes = index.notes[row]
        if prior[row] != index.prior[row]:
            lifted = ("not code", "documentation/example", "standalone script")
            notes = [NAMED_FILE_NOTE] + [n for n in notes if not n.startswith(lifted)]
        why[row] = reasons + notes
    return Salience(scores, why, seeded, precise, coverage, strength, frozenset(named))


def file_scores(index: SalienceIndex, salience: Salience) -> dict[str, float]:
    """Rank files: own score plus the best of their symbols (a file is as relevant as
    the most relevant code inside it)."""
    if salience.file_strength is None:
        return {index.nodes[row].path: 0.0 for row in index.file_rows}
    strength = salience.file_strength
    return {index.nodes[row].path: float(strength[row]) for row in index.file_rows}
