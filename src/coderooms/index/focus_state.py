"""The focus engine's goal-independent work, kept beside the index.

Tokenising every file and symbol and embedding every node is most of what building a
focus engine costs (seconds on a repository of thousands of files), and none of it
depends on the goal. :func:`save` writes an index's :class:`KnownWork` to
``.coderooms/focus.npz`` (flat numpy arrays, no pickle); :func:`load` reads it back in a
new process, which then counts and embeds only the code whose key it does not find: a
file edited since, or nothing.

The file is a cache and never decides an answer: it is written whole under a temporary
name and renamed into place, it names the code and the embedding model it was made
with, and anything that does not match (another format, another model, a damaged file)
reads as no known work at all.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import marshal
import mmap
import os
import struct
import sys
import zipfile
from pathlib import Path
from typing import Any

import numpy as np

from coderooms.datadir import replaced_whole
from coderooms.focus import lexical, salience, text
from coderooms.focus.lexical import DocumentCounts
from coderooms.focus.salience import BuiltIndex, KnownWork

__all__ = [
    "BUILT_FILE",
    "STATE_FILE",
    "TOKENS_FILE",
    "built_key",
    "load",
    "load_built",
    "load_token_counts",
    "load_token_floors",
    "save",
    "save_built",
    "save_token_counts",
    "state_tag",
]

STATE_FILE = "focus.npz"
TOKENS_FILE = "focus-tokens.npz"  # token counts of rendered code, written after a focus
BUILT_FILE = "focus-built.bin"  # the built salience index of one index generation
BUILT_FORMAT = 4
MAX_KEPT_TOKEN_COUNTS = 200_000  # the newest are kept
STATE_FORMAT = 1
KEY_BYTES = 16  # the size of the salience index's keys (blake2b digests)
# The modules whose code decides what a document or an embedding row holds: a change to
# any of them makes earlier files unusable.
DERIVING_MODULES = (lexical, salience, text)
_DOCUMENTS = ("file", "symbol")


def state_tag(embedder: str, counter: str) -> str:
    """What a kept state must have been made with: this format, the code that derives
    documents and rows, the embedding model named by ``embedder`` and the token counter
    named by ``counter``."""
    digest = hashlib.sha256(f"{STATE_FORMAT}\0{embedder}\0{counter}".encode())
    for module in DERIVING_MODULES:
        digest.update(Path(str(module.__file__)).read_bytes())
    return digest.hexdigest()


def load(path: str, tag: str) -> KnownWork | None:
    """The work kept at ``path`` under ``tag``, or None when there is none that fits."""
    try:
        with np.load(path, allow_pickle=False) as data:
            if _text(data["tag"]) != tag:
                return None
            documents = [_documents(data, name) for name in _DOCUMENTS]
            keys = _keys(data["embedding_keys"])
            rows = np.asarray(data["embeddings"])
    except (OSError, KeyError, ValueError, zipfile.BadZipFile, json.JSONDecodeError):
        return None
    if rows.ndim != 2 or len(rows) != len(keys):
        return None
    return KnownWork(documents[0], documents[1], keys, rows if len(keys) else None)


def load_token_counts(path: str, tag: str) -> dict[bytes, int]:
    """Token counts kept at ``path`` under ``tag`` (by text key), or none."""
    return _kept_by_key(path, tag, "keys", "counts")


def load_token_floors(path: str, tag: str) -> dict[bytes, int]:
    """Token floors kept at ``path`` under ``tag`` (by text key: a number of tokens each
    text has at least, found by counting it until it passed a limit), or none."""
    return _kept_by_key(path, tag, "floor_keys", "floors")


def _kept_by_key(path: str, tag: str, keys_name: str, values_name: str) -> dict[bytes, int]:
    """The numbers ``values_name`` kept at ``path`` under ``tag`` by the text keys
    ``keys_name``, or none (another tag, a damaged file, a negative number)."""
    try:
        with np.load(path, allow_pickle=False) as data:
            if _text(data["tag"]) != tag:
                return {}
            keys = _keys(data[keys_name])
            values = np.asarray(data[values_name], dtype=np.int64)
    except (OSError, KeyError, ValueError, zipfile.BadZipFile):
        return {}
    if len(values) != len(keys) or (len(values) and int(values.min()) < 0):
        return {}
    return dict(zip(keys, values.tolist(), strict=True))


def save_token_counts(
    path: str, counts: dict[bytes, int], tag: str, floors: dict[bytes, int] | None = None
) -> None:
    """Keep the newest :data:`MAX_KEPT_TOKEN_COUNTS` of ``counts`` at ``path``, and as
    many of ``floors`` of texts not counted whole (see :func:`load_token_floors`)."""
    kept = list(counts.items())[-MAX_KEPT_TOKEN_COUNTS:]
    short = [(key, floor) for key, floor in (floors or {}).items() if key not in counts]
    short = short[-MAX_KEPT_TOKEN_COUNTS:]
    _write(
        path,
        {
            "tag": _bytes(tag),
            "keys": _key_array(tuple(key for key, _ in kept)),
            "counts": np.asarray([count for _, count in kept], dtype=np.int64),
            "floor_keys": _key_array(tuple(key for key, _ in short)),
            "floors": np.asarray([floor for _, floor in short], dtype=np.int64),
        },
    )


def save(path: str, work: KnownWork, tag: str) -> None:
    """Keep ``work`` at ``path`` (replacing what was there in one step). A failure to
    write leaves the old file or none: the next engine then counts everything again."""
    arrays: dict[str, np.ndarray] = {"tag": _bytes(tag)}
    for name, documents in zip(
        _DOCUMENTS, (work.file_documents, work.symbol_documents), strict=True
    ):
        arrays[f"{name}_keys"] = _key_array(documents.keys)
        arrays[f"{name}_terms"] = _bytes(json.dumps(documents.terms))
        arrays[f"{name}_ptr"] = np.asarray(documents.ptr, dtype=np.int64)
        arrays[f"{name}_ids"] = np.asarray(documents.ids, dtype=np.int32)
        arrays[f"{name}_counts"] = np.asarray(documents.counts, dtype=np.int32)
    embedded = work.embeddings is not None
    arrays["embedding_keys"] = _key_array(work.embedding_keys if embedded else ())
    arrays["embeddings"] = (
        np.asarray(work.embeddings) if work.embeddings is not None else np.zeros((0, 0))
    )
    _write(path, arrays)


def _write(path: str, arrays: dict[str, np.ndarray]) -> None:
    """Write ``arrays`` to ``path`` in one step (see :func:`replaced_whole`)."""
    with replaced_whole(path) as fh:
        np.savez(fh, **arrays)  # type: ignore[arg-type]


def _documents(data: np.lib.npyio.NpzFile, name: str) -> DocumentCounts:
    keys = _keys(data[f"{name}_keys"])
    terms = json.loads(_text(data[f"{name}_terms"]))
    ptr = np.asarray(data[f"{name}_ptr"], dtype=np.int64)
    ids = np.asarray(data[f"{name}_ids"], dtype=np.int64)
    counts = np.asarray(data[f"{name}_counts"], dtype=np.int64)
    if (
        not isinstance(terms, list)
        or len(ptr) != len(keys) + 1
        or len(ids) != len(counts)
        or int(ptr[0]) != 0
        or int(ptr[-1]) != len(ids)
        or bool(np.any(np.diff(ptr) < 0))
        or (len(ids) and (int(ids.min()) < 0 or int(ids.max()) >= len(terms)))
    ):
        raise ValueError(f"inconsistent {name} documents")
    return DocumentCounts(keys, tuple(str(t) for t in terms), ptr, ids, counts)


def _key_array(keys: tuple[bytes, ...]) -> np.ndarray:
    # Not an "S16" array: numpy would drop a digest's trailing zero bytes.
    return np.frombuffer(b"".join(keys), dtype=np.uint8).reshape(len(keys), KEY_BYTES)


def _keys(array: np.ndarray) -> tuple[bytes, ...]:
    if array.ndim != 2 or array.shape[1] != KEY_BYTES:
        raise ValueError("keys of the wrong shape")
    flat = array.astype(np.uint8).tobytes()
    return tuple(flat[i : i + KEY_BYTES] for i in range(0, len(flat), KEY_BYTES))


def _bytes(value: str) -> np.ndarray:
    return np.frombuffer(value.encode("utf-8"), dtype=np.uint8)


def _text(array: np.ndarray) -> str:
    return bytes(array.astype(np.uint8)).decode("utf-8")


def built_key(tag: str, generation: str) -> str:
    """What a kept :class:`BuiltIndex` must have been made for: the state's ``tag`` (the
    code, model and counter), the index ``generation`` it was built over, this format and
    this Python (marshal's format belongs to one version)."""
    python = f"{sys.version_info[0]}.{sys.version_info[1]}"
    return f"coderooms-built-{BUILT_FORMAT}-py{python}\0{tag}\0{generation}"


def save_built(path: str, built: BuiltIndex, key: str) -> None:
    """Keep ``built`` at ``path`` under ``key`` (in one step, as :func:`save` does): a
    marshalled head with the plain fields, then each array's bytes, aligned, so that
    :func:`load_built` maps them instead of reading them."""
    arrays: list[np.ndarray] = []
    fields = {field.name: _encoded(getattr(built, field.name), arrays) for field in _BUILT_FIELDS}
    places: list[tuple[str, tuple[int, ...], int]] = []
    offset = 0
    for array in arrays:
        places.append((array.dtype.str, array.shape, offset))
        offset += _aligned(array.nbytes)
    head = marshal.dumps((key, fields, places))
    start = _aligned(_HEAD_START + len(head))
    with replaced_whole(path) as fh:
        fh.write(_BUILT_MAGIC + _HEAD_SIZE.pack(len(head)))
        fh.write(head)
        for array, (_, _, at) in zip(arrays, places, strict=True):
            fh.seek(start + at)
            # Written from the array's own memory: no copy, and the GIL is let go.
            fh.write(np.ascontiguousarray(array).reshape(-1).view(np.uint8))
        fh.truncate(start + offset)


def load_built(path: str, key: str) -> BuiltIndex | None:
    """The :class:`BuiltIndex` kept at ``path`` under ``key``, or None when there is none
    that fits (missing, damaged, or made for another generation, code or Python). Its
    arrays are mapped from the file, read-only: pages are read as ranking touches them."""
    try:
        with open(path, "rb") as fh:
            first = fh.read(_HEAD_START)
            if not first.startswith(_BUILT_MAGIC):
                return None
            (size,) = _HEAD_SIZE.unpack(first[len(_BUILT_MAGIC) :])
            if size > os.fstat(fh.fileno()).st_size:
                return None
            data = marshal.loads(fh.read(size))
            if not isinstance(data, tuple) or len(data) != 3 or data[0] != key:
                return None
            _, fields, places = data
            start = _aligned(_HEAD_START + size)
            mapped = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) if places else None
        arrays = []
        for dtype, shape, at in places:
            kind = np.dtype(dtype)
            if kind.hasobject:
                raise ValueError("an array of objects")
            count = int(np.prod(shape, dtype=np.int64))
            if count == 0 or mapped is None:
                arrays.append(np.zeros(shape, dtype=kind))
                continue
            array = np.frombuffer(mapped, dtype=kind, count=count, offset=start + at)
            arrays.append(array.reshape(shape))
        return BuiltIndex(**{f.name: _decoded(fields[f.name], arrays) for f in _BUILT_FIELDS})
    except (OSError, EOFError, ValueError, TypeError, KeyError, IndexError, struct.error):
        return None


def _checked_documents(documents: DocumentCounts) -> DocumentCounts:
    """``documents`` as read back, refused (ValueError) when their arrays disagree."""
    ptr, ids = documents.ptr, documents.ids
    if (
        ptr.ndim != 1
        or len(ptr) < 1
        or len(ids) != len(documents.counts)
        or int(ptr[0]) != 0
        or int(ptr[-1]) != len(ids)
        or (len(ids) and (int(ids.min()) < 0 or int(ids.max()) >= len(documents.terms)))
    ):
        raise ValueError("inconsistent documents")
    return documents


def _aligned(size: int) -> int:
    return -(-size // _ALIGN) * _ALIGN


_BUILT_MAGIC = b"coderooms-built\0"
_HEAD_SIZE = struct.Struct("<Q")
_HEAD_START = len(_BUILT_MAGIC) + _HEAD_SIZE.size
_ALIGN = 64
_BUILT_FIELDS = dataclasses.fields(BuiltIndex)
_DOCUMENT_FIELDS = dataclasses.fields(DocumentCounts)


def _encoded(value: Any, arrays: list[np.ndarray]) -> Any:
    """``value`` in marshal's types; an array becomes its place in ``arrays``."""
    if isinstance(value, np.ndarray):
        arrays.append(value)
        return ("array", len(arrays) - 1)
    if isinstance(value, DocumentCounts):
        parts = {f.name: _encoded(getattr(value, f.name), arrays) for f in _DOCUMENT_FIELDS}
        return ("documents", parts)
    if isinstance(value, tuple) and value and isinstance(value[0], np.ndarray):
        return ("arrays", tuple(_encoded(part, arrays) for part in value))
    return ("plain", value)


def _decoded(value: Any, arrays: list[np.ndarray]) -> Any:
    kind, *rest = value
    if kind == "array":
        return arrays[rest[0]]
    if kind == "documents":
        parts = rest[0]
        documents = {f.name: _decoded(parts[f.name], arrays) for f in _DOCUMENT_FIELDS}
        return _checked_documents(DocumentCounts(**documents))
    if kind == "arrays":
        return tuple(_decoded(part, arrays) for part in rest[0])
    if kind == "plain":
        return rest[0]
    raise ValueError(f"unknown kind {kind!r}")
