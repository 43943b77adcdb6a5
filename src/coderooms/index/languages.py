"""Which files are which language, and which of them the indexer parses."""

from __future__ import annotations

# Languages parsed with a tree-sitter grammar (symbols, imports, calls).
PARSED_EXTENSIONS: dict[str, str] = {
    ".py": "python",
    ".pyi": "python",
    ".js": "javascript",
    ".mjs": "javascript",
    ".cjs": "javascript",
    ".jsx": "javascript",
    ".ts": "typescript",
    ".mts": "typescript",
    ".cts": "typescript",
    ".tsx": "tsx",
    ".go": "go",
    ".rs": "rust",
    ".java": "java",
}

# Text files kept at file level (no grammar installed): docs, configs, other code.
TEXT_EXTENSIONS: dict[str, str] = {
    ".md": "markdown",
    ".rst": "rst",
    ".txt": "text",
    ".toml": "toml",
    ".yaml": "yaml",
    ".yml": "yaml",
    ".json": "json",
    ".cfg": "ini",
    ".ini": "ini",
    ".sh": "shell",
    ".bash": "shell",
    ".c": "c",
    ".h": "c",
    ".cc": "cpp",
    ".cpp": "cpp",
    ".hpp": "cpp",
    ".cs": "csharp",
    ".rb": "ruby",
    ".php": "php",
    ".kt": "kotlin",
    ".swift": "swift",
    ".scala": "scala",
    ".lua": "lua",
    ".sql": "sql",
    ".html": "html",
    ".css": "css",
    ".scss": "css",
    ".proto": "protobuf",
}

TEXT_FILENAMES: dict[str, str] = {
    "Makefile": "make",
    "Dockerfile": "docker",
    "README": "text",
    "LICENSE": "text",
}

PARSED_LANGUAGES = frozenset(PARSED_EXTENSIONS.values())


def language_of(path: str) -> str | None:
    """The language of ``path`` by its name, or None when the indexer does not keep it."""
    name = path.rsplit("/", 1)[-1]
    dot = name.rfind(".")
    if dot > 0:
        ext = name[dot:].lower()
        lang = PARSED_EXTENSIONS.get(ext) or TEXT_EXTENSIONS.get(ext)
        if lang is not None:
            return lang
    return TEXT_FILENAMES.get(name)
