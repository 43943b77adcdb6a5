"""Git signals from one ``git log`` pass: per-file commit counts, last change time,
and how often two files change in the same commit."""

from __future__ import annotations

import subprocess
import threading
from collections import Counter
from dataclasses import dataclass, field
from itertools import combinations

from coderooms.index.discover import GIT_TIMEOUT_SECONDS

GIT_LOG_MAX_COMMITS = 3_000  # older history is not read: recent change matters most
CO_CHANGE_MAX_FILES = 30  # commits touching more files (mass renames, reformatting) make no pairs
CO_CHANGE_MIN_COUNT = 2  # a pair seen once is noise
CO_CHANGE_MAX_PAIRS = 50_000  # the strongest pairs kept


@dataclass(slots=True)
class GitSignals:
    head_time: int = 0  # the newest commit read: the "now" of recency
    commit_counts: dict[str, int] = field(default_factory=dict)
    last_change: dict[str, int] = field(default_factory=dict)
    co_changes: list[tuple[str, str, int]] = field(default_factory=list)


class GitLogPass:
    """The one ``git log`` pass, started early and drained by a thread so that it
    runs while the files are parsed."""

    def __init__(self, root: str) -> None:
        self._proc = _start(root)
        self._signals = GitSignals()
        self._thread = threading.Thread(target=self._drain, name="coderooms-git-log", daemon=True)
        self._thread.start()

    def _drain(self) -> None:
        try:
            out, _ = self._proc.communicate(timeout=GIT_TIMEOUT_SECONDS)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.communicate()
            return
        if self._proc.returncode == 0:  # not, e.g., in a repository without commits yet
            self._signals = parse_git_log(out.decode("utf-8", "surrogateescape"), None)

    def result(self, indexed: set[str]) -> GitSignals:
        """The signals of the files in ``indexed`` (the log is parsed in the thread)."""
        self._thread.join()
        full = self._signals
        return GitSignals(
            head_time=full.head_time,
            commit_counts={p: n for p, n in full.commit_counts.items() if p in indexed},
            last_change={p: t for p, t in full.last_change.items() if p in indexed},
            co_changes=[c for c in full.co_changes if c[0] in indexed and c[1] in indexed][
                :CO_CHANGE_MAX_PAIRS
            ],
        )

    def cancel(self) -> None:
        if self._proc.poll() is None:
            self._proc.kill()
        self._thread.join()


def _start(root: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [
            "git",
            "-c",
            "core.quotepath=off",
            "log",
            "--no-merges",
            "--no-renames",
            "--relative",
            "--name-only",
            "-z",
            "--format=%x01%H %ct",
            "-n",
            str(GIT_LOG_MAX_COMMITS),
        ],
        cwd=root,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )


def head_commit(root: str) -> str:
    done = subprocess.run(
        ["git", "rev-parse", "-q", "--verify", "HEAD"],
        cwd=root,
        capture_output=True,
        timeout=GIT_TIMEOUT_SECONDS,
        check=False,
    )
    return done.stdout.decode().strip() if done.returncode == 0 else ""


def parse_git_log(text: str, indexed: set[str] | None) -> GitSignals:
    """Fold the log; ``indexed`` (when given) limits it to those paths."""
    signals = GitSignals()
    pairs: Counter[tuple[str, str]] = Counter()
    counts = signals.commit_counts
    last = signals.last_change
    for record in text.split("\x01"):
        if not record:
            continue
        header, _, body = record.partition("\0")
        _, _, ts = header.partition(" ")
        when = int(ts) if ts.strip().isdigit() else 0
        signals.head_time = max(signals.head_time, when)
        touched = {p.strip("\n") for p in body.split("\0") if p.strip("\n")}
        files = sorted(touched & indexed if indexed is not None else touched)
        for path in files:
            counts[path] = counts.get(path, 0) + 1
            if when > last.get(path, 0):
                last[path] = when
        if 1 < len(files) <= CO_CHANGE_MAX_FILES:
            pairs.update(combinations(files, 2))
    strong = [(a, b, n) for (a, b), n in pairs.items() if n >= CO_CHANGE_MIN_COUNT]
    strong.sort(key=lambda p: (-p[2], p[0], p[1]))
    signals.co_changes = strong[:CO_CHANGE_MAX_PAIRS]
    return signals
