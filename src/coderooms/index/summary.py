"""What one index run found and did."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True, slots=True)
class IndexSummary:
    root: str
    files: int  # files in the index (parsed and file-level)
    parsed_files: int  # files with a grammar: symbols and edges
    symbols: int
    edges: dict[str, int]  # by kind
    languages: dict[str, int]  # files by language
    skipped: dict[str, int]  # files left out (or kept without parsing) by reason
    parse_errors: int  # files that did not parse cleanly (indexed as far as they go)
    decode_replaced: int  # files that were not valid UTF-8 (read with replacement)
    unresolved: dict[str, int]  # call sites that resolved to nothing, by why
    changed: dict[str, int] = field(
        default_factory=dict
    )  # this run: parsed, unchanged, deleted, re-resolved
    git: bool = False
    seconds: float = 0.0
    phases: dict[str, float] = field(default_factory=dict)  # seconds per stage of this run

    def to_json(self) -> dict[str, Any]:
        return {
            "root": self.root,
            "files": self.files,
            "parsed_files": self.parsed_files,
            "symbols": self.symbols,
            "edges": dict(sorted(self.edges.items())),
            "languages": dict(sorted(self.languages.items())),
            "skipped": dict(sorted(self.skipped.items())),
            "parse_errors": self.parse_errors,
            "decode_replaced": self.decode_replaced,
            "unresolved": dict(self.unresolved),
            "changed": dict(self.changed),
            "git": self.git,
            "seconds": round(self.seconds, 3),
            "phases": dict(self.phases),
        }

    def lines(self) -> list[str]:
        """A short human summary, one fact per line."""
        edges = ", ".join(f"{k} {v}" for k, v in sorted(self.edges.items())) or "none"
        langs = ", ".join(
            f"{k} {v}" for k, v in sorted(self.languages.items(), key=lambda kv: (-kv[1], kv[0]))
        )
        skipped = ", ".join(f"{k} {v}" for k, v in sorted(self.skipped.items())) or "none"
        unresolved = ", ".join(f"{k} {v}" for k, v in self.unresolved.items() if v) or "none"
        changed = ", ".join(f"{k} {v}" for k, v in self.changed.items())
        return [
            f"indexed {self.files} files ({self.parsed_files} parsed), {self.symbols} symbols in {self.seconds:.2f}s",
            f"edges: {edges}",
            f"languages: {langs or 'none'}",
            f"skipped: {skipped}",
            f"parse errors: {self.parse_errors}, non-UTF-8 files: {self.decode_replaced}",
            f"unresolved calls: {unresolved}",
            f"this run: {changed}",
        ]
