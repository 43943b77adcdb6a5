"""Goal-conditioned salience: one deterministic score per node of a code graph.

1. Seeds: several ranked lists built from the goal — BM25 over whole files and over
   single functions, names the repository defines, dotted names and paths, traceback
   frames, messages found verbatim in the code, file names, and (when an embedder is
   given) static-embedding similarity — fused by Reciprocal Rank Fusion.
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
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from coderooms.focus.graph import CodeGraph, CodeNode
from coderooms.focus.lexical import BM25, top_ranked
from coderooms.focus.text import (
    STOPWORDS,
    GoalCues,
    goal_cues,
    is_code_like,
    prose,
    split_identifier,
    tokenize,
    weighted_terms,
)

Embedder = Callable[[Sequence[str]], np.ndarray]

FILE_TEXT_CAP_CHARS = 200_000  # large generated files: index only their head
SYMBOL_TEXT_CAP_CHARS = 8_000
EMBED_TEXT_CAP_CHARS = 600
EMBED_GOAL_CHARS = 4_000
SEED_LIST_LIMIT = 50
MAX_NAME_DEFINITIONS = 8
MAX_STEM_FILES = 6
MAX_LITERALS = 12
SOURCE_PRIOR_FLOOR = 0.9
MAX_OPTIONS = 8
MIN_STEM_LENGTH = 4
MAX_TAIL_PARTS = 4  # a path in a goal is matched on at most its last four parts
ABSOLUTE_PATH_MIN_PARTS = 2  # … and an absolute one on at least its last two
WHY_FLOOR = 0.02  # reasons are written for nodes scoring at least this share of the best
FILE_CHILD_SHARE = 1.0  # how much of a file's best symbol score counts toward the file
PAGERANK_ITERATIONS = 30
PAGERANK_TOLERANCE = 1e-9


@dataclass(frozen=True, slots=True)
class SalienceConfig:
    """Every weight of the ranking; defaults are calibrated on the development split."""

    rrf_k: float = 20.0  # 10-60 all within one dev instance of each other; 100 was worse
    file_context: float = 0.5  # how much a symbol's score leans on its file's strength
    weighted_query: bool = True  # title and prose count more than code and log blocks
    w_bm25_file: float = 1.0
    w_bm25_symbol: float = 1.0
    w_bm25_symbol_file: float = 1.0
    w_defined_name: float = 2.0
    w_defined_word: float = 0.5
    w_dotted: float = 1.5
    w_path: float = 2.0
    w_frame: float = 1.5
    w_literal: float = 1.5
    w_option: float = 1.5
    w_stem: float = 0.7
    w_semantic: float = 0.6
    restart: float = 0.6  # PageRank restart probability: how strongly seeds stay put
    backward: float = 0.6  # weight of an edge followed against its direction
    edge_weights: Mapping[str, float] = field(
        default_factory=lambda: {
            "contains": 1.0,
            "calls": 0.6,
            "references": 0.4,
            "inherits": 0.6,
            "imports": 0.25,
            "tests": 0.3,
            "co_change": 0.3,
        }
    )
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
    recency_weight: float = 0.05
    recency_half_life_days: float = 180.0
    frequency_weight: float = 0.05


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
            if self.is_auxiliary(node):
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

    def penalty_notes(self, row: int) -> list[str]:
        node = self.nodes[row]
        notes = []
        if self.is_auxiliary(node):
            notes.append(f"documentation/example code ×{self.config.auxiliary_penalty:g}")
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


def _rank_by(scores: dict[int, float]) -> list[int]:
    return sorted(scores, key=lambda r: (-scores[r], r))


def _defined_name_lists(
    index: SalienceIndex, cues: GoalCues
) -> tuple[list[tuple[int, str]], list[tuple[int, str]]]:
    """Symbols whose name the goal writes in code form; classes it names as plain words
    (a capitalized plain word only inside a sentence, not as its first word).

    A compound or capitalized name (``add_marker``, ``LocalPath``) picks out its
    definition; a single lower-case word (``path``, ``node``: often a part of
    ``os.path.join`` or ``request.node``) names many things, so its definitions go to
    the weak list even when the goal writes it in code form."""
    strong: dict[int, float] = {}
    weak: dict[int, float] = {}
    reasons: dict[int, str] = {}
    names = set(cues.names)
    mid_capitals = set(cues.mid_capitals)
    for name in cues.names:
        rows = index.definitions.get(name, [])
        if not rows or len(rows) > MAX_NAME_DEFINITIONS:
            continue
        target = strong if _is_specific_name(name) else weak
        for row in rows:
            target[row] = target.get(row, 0.0) + 1.0 / len(rows)
            reasons.setdefault(row, f"defines `{name}` named in the goal")
    for dotted in cues.dotted:
        parts = dotted.split(".")
        for i in range(len(parts) - 1):
            qual = ".".join(parts[i:])
            for row in index.qualnames.get(qual, []):
                strong[row] = strong.get(row, 0.0) + 2.0
                reasons.setdefault(row, f"is `{qual}` named in the goal")
    for word in cues.words:
        if word in names or word.lower() in STOPWORDS:
            continue
        if not word[:1].isupper():
            continue
        if not is_code_like(word) and word not in mid_capitals:
            continue  # "Module imported twice": a sentence's first word, not a class
        rows = [r for r in index.definitions.get(word, []) if index.nodes[r].kind == "class"]
        if rows and len(rows) <= MAX_NAME_DEFINITIONS:
            for row in rows:
                weak[row] = weak.get(row, 0.0) + 1.0 / len(rows)
                reasons.setdefault(row, f"defines class `{word}` mentioned in the goal")
    return (
        [(r, reasons[r]) for r in _rank_by(strong)],
        [(r, reasons[r]) for r in _rank_by(weak)],
    )


def _is_specific_name(name: str) -> bool:
    """Spelled like one particular definition rather than an everyday word."""
    return is_code_like(name) or name[:1].isupper()


def _to_files(index: SalienceIndex, ranked: Sequence[tuple[int, str]]) -> list[tuple[int, str]]:
    out: list[tuple[int, str]] = []
    for row, reason in ranked:
        out.append((int(index.file_row_of[row]), reason))
    return out


def _path_lists(
    index: SalienceIndex, cues: GoalCues
) -> tuple[list[tuple[int, str]], list[tuple[int, str]], list[tuple[int, str]]]:
    """(dotted names → module files, paths → files, traceback frames → files/functions)."""
    dotted: list[tuple[int, str]] = []
    for name in cues.dotted:
        parts = name.split(".")
        for cut in range(len(parts), 0, -1):
            suffix = ".".join(parts[:cut])
            rows = index.module_ends.get(suffix, [])
            if rows and len(rows) <= MAX_STEM_FILES and (cut > 1 or len(parts) == 1):
                dotted.extend((r, f"module `{suffix}` named in the goal") for r in rows)
                break
    paths: list[tuple[int, str]] = []
    for path in cues.paths:
        rows = _path_matches(index, path)
        paths.extend((r, f"path `{path}` named in the goal") for r in rows)
    frames: list[tuple[int, str]] = []
    for frame in sorted(cues.frames, key=lambda f: f.depth):
        rows = _path_matches(index, frame.path)
        for row in rows:
            for sym in index.symbols_by_file.get(row, []):
                node = index.nodes[sym]
                if node.name == frame.function and node.start_line <= frame.line <= node.end_line:
                    frames.append((sym, f"traceback frame in `{frame.function}`"))
            frames.append((row, f"traceback frame {frame.path.rsplit('/', 1)[-1]}:{frame.line}"))
    return dotted, paths, frames


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
        if index.is_auxiliary(node):
            lift /= config.auxiliary_penalty
        if lift != 1.0:
            if prior is index.prior:
                prior = prior.copy()
            prior[row] *= lift
    return prior


def _path_matches(index: SalienceIndex, path: str) -> list[int]:
    """Files a path in a goal names: the longest tail of it that is a path of the
    repository (so an absolute path or a URL ending in one counts, and ``README.md``
    means the one at the root); else the files whose path ends the same way, when that
    is unambiguous. An absolute path must share at least its last
    :data:`ABSOLUTE_PATH_MIN_PARTS` parts with the file."""
    path = path.replace("\\", "/")
    parts = [p for p in path.split("/") if p and p != "."]
    # An absolute path is often another copy of the code (a traceback from an installed
    # package): its file name alone is too weak a tie to a file here.
    least = ABSOLUTE_PATH_MIN_PARTS if path.startswith("/") else 1
    for start in range(len(parts) - least + 1):
        row = index.file_of_path.get("/".join(parts[start:]))
        if row is not None:
            return [row]
    for keep in range(min(len(parts), MAX_TAIL_PARTS), least - 1, -1):
        rows = index.path_tails.get("/".join(parts[-keep:]), [])
        if rows and (keep > 1 or len(rows) == 1):
            return rows
    return []


def _innermost_symbol(index: SalienceIndex, row: int, offset: int) -> list[int]:
    text = index.texts[index.nodes[row].path]
    line = text.count("\n", 0, offset) + 1
    inner = [
        s
        for s in index.symbols_by_file.get(row, [])
        if index.nodes[s].start_line <= line <= index.nodes[s].end_line
    ]
    inner.sort(key=lambda s: (index.nodes[s].end_line - index.nodes[s].start_line, s))
    return inner[:1]


def _literal_list(index: SalienceIndex, cues: GoalCues) -> list[tuple[int, str]]:
    """Files (and the function around the spot) holding a goal's message verbatim."""
    found: list[tuple[int, str]] = []
    for literal in cues.literals[:MAX_LITERALS]:
        hits = [i for i in index.source_rows if literal in index.texts.get(index.nodes[i].path, "")]
        if not hits or len(hits) > MAX_STEM_FILES:
            continue
        reason = f"contains the message “{literal[:40]}”"
        for row in hits:
            offset = index.texts[index.nodes[row].path].find(literal)
            found.extend((s, reason) for s in _innermost_symbol(index, row, offset))
            found.append((row, reason))
    return found


def _option_list(index: SalienceIndex, cues: GoalCues) -> list[tuple[int, str]]:
    """Files that spell an option the goal names as a string literal (``"--co"``)."""
    found: list[tuple[int, str]] = []
    for option in cues.options[:MAX_OPTIONS]:
        forms = [f'"{option}"', f"'{option}'", f'"--{option}"', f"'--{option}'"]
        hits: list[tuple[int, int]] = []
        for row in index.source_rows:
            text = index.texts.get(index.nodes[row].path, "")
            if option not in text:
                continue
            offsets = [text.find(form) for form in forms]
            offsets = [o for o in offsets if o >= 0]
            if offsets:
                hits.append((row, min(offsets)))
        if not hits or len(hits) > MAX_STEM_FILES:
            continue
        reason = f"defines the option `{option}`"
        for row, offset in hits:
            found.extend((s, reason) for s in _innermost_symbol(index, row, offset))
            found.append((row, reason))
    return found


def _stem_list(index: SalienceIndex, terms: set[str]) -> list[tuple[int, str]]:
    scores: dict[int, float] = {}
    reasons: dict[int, str] = {}
    for stem, rows in index.stems.items():
        if len(rows) > MAX_STEM_FILES or stem.startswith("__"):
            continue
        parts = [p for p in split_identifier(stem) if p not in STOPWORDS]
        if not parts or len(stem) < MIN_STEM_LENGTH:
            continue
        if stem in terms or all(p in terms or p + "s" in terms for p in parts):
            for row in rows:
                scores[row] = len(parts) / len(rows)
                reasons[row] = f"file name `{stem}` matches the goal"
    return [(r, reasons[r]) for r in _rank_by(scores)]


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


def rank(index: SalienceIndex, goal: str) -> Salience:
    """Score every node of the index for ``goal``."""
    n = len(index.nodes)
    config = index.config
    cues = goal_cues(goal)
    terms = tokenize(goal)
    query = weighted_terms(goal) if config.weighted_query else Counter(terms)
    fusion = _Fusion(n, config.rrf_k)
    if n == 0:
        return Salience(np.zeros(0), {}, 0, 0, 0.0)

    lexical_files = index.file_bm25.scores(query)
    fusion.add(
        [
            (index.file_rows[i], f"lexical match #{k + 1} among files")
            for k, i in enumerate(top_ranked(lexical_files, SEED_LIST_LIMIT))
        ],
        config.w_bm25_file,
    )
    symbol_scores = index.symbol_bm25.scores(query)
    top_symbols = top_ranked(symbol_scores, SEED_LIST_LIMIT * 4)
    fusion.add(
        [
            (index.symbol_rows[i], f"lexical match #{k + 1} among functions")
            for k, i in enumerate(top_symbols[:SEED_LIST_LIMIT])
        ],
        config.w_bm25_symbol,
    )
    by_file: dict[int, float] = {}
    for i in top_symbols:
        file_row = int(index.file_row_of[index.symbol_rows[i]])
        by_file[file_row] = max(by_file.get(file_row, 0.0), float(symbol_scores[i]))
    fusion.add(
        [(r, "holds functions that match the goal") for r in _rank_by(by_file)][:SEED_LIST_LIMIT],
        config.w_bm25_symbol_file,
    )

    strong, weak = _defined_name_lists(index, cues)
    fusion.add(strong, config.w_defined_name)
    fusion.add(_to_files(index, strong), config.w_defined_name)
    fusion.add(weak, config.w_defined_word)
    fusion.add(_to_files(index, weak), config.w_defined_word)

    dotted, paths, frames = _path_lists(index, cues)
    fusion.add(dotted, config.w_dotted)
    fusion.add(paths, config.w_path)
    fusion.add(frames, config.w_frame)
    fusion.add(_to_files(index, frames), config.w_frame)
    literals = _literal_list(index, cues)
    fusion.add(literals, config.w_literal)
    options = _option_list(index, cues)
    fusion.add(options, config.w_option)
    fusion.add(_stem_list(index, set(terms)), config.w_stem)

    if index.embeddings is not None and index.embedder is not None and terms:
        text = prose(goal) if config.weighted_query else goal
        vector = np.asarray(index.embedder([text[:EMBED_GOAL_CHARS]]))[0]
        vector = vector / max(float(np.linalg.norm(vector)), 1e-12)
        similarity = index.embeddings @ vector
        order = top_ranked(np.maximum(similarity, 0.0), SEED_LIST_LIMIT)
        fusion.add(
            [(r, f"similar in meaning (#{k + 1})") for k, r in enumerate(order)], config.w_semantic
        )

    prior = _prior_for_goal(index, [row for row, _ in paths])
    seeds = fusion.scores * prior
    precise = len(strong) + len(dotted) + len(paths) + len(frames) + len(literals) + len(options)
    known = sum(1 for t in set(terms) if index.file_bm25.document_frequency(t) > 0)
    coverage = known / len(set(terms)) if terms else 0.0
    seeded = int(np.count_nonzero(seeds))
    if seeded == 0:
        return Salience(np.zeros(n), {}, 0, precise, coverage)
    scores = _personalized_pagerank(index, seeds) * prior
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
            lifted = ("not code", "documentation/example")
            notes = [NAMED_FILE_NOTE] + [n for n in notes if not n.startswith(lifted)]
        why[row] = reasons + notes
    named = frozenset(row for row, _ in paths)
    return Salience(scores, why, seeded, precise, coverage, strength, named)


def file_scores(index: SalienceIndex, salience: Salience) -> dict[str, float]:
    """Rank files: own score plus the best of their symbols (a file is as relevant as
    the most relevant code inside it)."""
    if salience.file_strength is None:
        return {index.nodes[row].path: 0.0 for row in index.file_rows}
    strength = salience.file_strength
    return {index.nodes[row].path: float(strength[row]) for row in index.file_rows}
