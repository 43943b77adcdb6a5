"""Static text embeddings (model2vec), offline.

The package ships a small model2vec model in ``coderooms/data/model`` (256 dimensions,
distilled from all-MiniLM-L6-v2 by ``scripts/make_default_model.py``). ``load_model``
also takes the path of any other model2vec model directory, or the name of a Hugging Face
model that is already in the local cache. Nothing is ever downloaded: a name that is not
cached is an error that says how to pass a local path instead.

Loading needs numpy, ``tokenizers`` and ``safetensors`` only (no torch). Models are loaded
once per process and kept.

``embed`` returns what model2vec's ``StaticModel.encode`` returns (the mean of the token
vectors, after the same character and token truncation), in float32 and of unit length.
For the common BERT-style tokenizer it gets there faster: ASCII whitespace always
separates, and ASCII punctuation always forms, the pieces such a tokenizer works on, so
the text is split at those characters first and each distinct piece is tokenised once and
remembered (a piece of ASCII letters and digits that is a word of the vocabulary is read
from it, without the tokenizer). Source code repeats its identifiers and punctuation
endlessly, which makes this about three times faster than tokenising every text in full.
The pieces of a batch are looked up as one flat run and their tokens counted per text
with numpy, in the order model2vec sums them: the rows are model2vec's to the bit. Other tokenizers, and
texts that contain one of the tokenizer's added tokens (``[PAD]``), go through
``StaticModel.encode`` itself.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache
from itertools import chain
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import scipy.sparse as sp
from tokenizers import Tokenizer
from tokenizers.models import WordPiece
from tokenizers.normalizers import BertNormalizer
from tokenizers.pre_tokenizers import BertPreTokenizer

from coderooms.errors import HostError
from coderooms.focus.discussion import FactoredVectors

if TYPE_CHECKING:
    from model2vec import StaticModel  # imported when a model is made: it brings joblib

__all__ = [
    "DEFAULT_MODEL_DIR",
    "EmbeddingModelUnavailable",
    "embed",
    "embed_factored",
    "load_embedder",
    "load_model",
    "model_tag",
]

DEFAULT_MODEL_DIR = Path(__file__).resolve().parent / "data" / "model"
REQUIRED_FILES = ("config.json", "model.safetensors", "tokenizer.json")
# Weights are stored as float16 to keep the package small; arithmetic on float16 is slow
# on CPUs, so the table is widened once at load.
COMPUTE_DTYPE = "float32"
ENCODE_BATCH = 4096  # texts tokenised and pooled together
MODEL2VEC_MAX_LENGTH = 512  # model2vec's token limit when a model's config names none
MODEL2VEC_NORMALIZE = False  # and whether it normalises, when the config does not say
PIECE_CACHE_MAX_ENTRIES = 200_000  # remembered piece tokenisations; emptied when full
# ASCII whitespace runs, then single ASCII punctuation characters, then everything else:
# boundaries a BERT pre-tokenizer always respects (see the module docstring).
ASCII_PUNCTUATION = r"!-/:-@\[-`{-~"
BERT_PIECES = re.compile(rf"[^ \t\n\r{ASCII_PUNCTUATION}]+|[{ASCII_PUNCTUATION}]")
# What a model name on the Hugging Face hub looks like: "name" or "owner/name".
HUB_NAME = re.compile(r"[A-Za-z0-9][\w.-]*(/[A-Za-z0-9][\w.-]*)?")


class EmbeddingModelUnavailable(HostError):
    """An embedding model that cannot be found or read."""

    fields = ("model", "reason")
    template = "cannot load the embedding model {model!r}: {reason}"


def load_model(name_or_path: str | Path | None = None) -> StaticModel:
    """The model2vec model named by ``name_or_path``; ``None`` is the shipped default."""
    return _encoder(_resolve(name_or_path)).model


def load_embedder(name_or_path: str | Path | None = None) -> None:
    """Load what :func:`embed` needs of the model now (once per process; a first
    embedding does otherwise): a host warms it on another thread while it reads its index.
    For the shipped layout that is the tokenizer and the table, not model2vec's model."""
    _encoder(_resolve(name_or_path))


def model_tag(model: str | Path | None = None) -> str:
    """Names the model ``embed`` would use and the state of its files (path, size and
    modification time of each): what embeddings kept on disk were made with."""
    path = _resolve(model)
    parts = [str(path)]
    for name in REQUIRED_FILES:
        st = (path / name).stat()
        parts.append(f"{name}:{st.st_size}:{st.st_mtime_ns}")
    return "\n".join(parts)


def embed_factored(texts: Sequence[str], model: str | Path | None = None) -> FactoredVectors:
    """The vectors ``embed`` gives (up to their length), as each text's token counts over
    the table rows they use: what a desk's discussion index keeps, so that a goal's
    similarity to every message reads the counts rather than a dense matrix."""
    encoder = _encoder(_resolve(model))
    return encoder.factored(list(texts))


def embed(texts: Sequence[str], model: str | Path | None = None) -> np.ndarray:
    """One float32 row per text, each of unit length.

    A text with no token the model knows (the empty string) gets a row of zeros.
    """
    encoder = _encoder(_resolve(model))
    items = list(texts)
    parts = [
        encoder.mean_vectors(items[start : start + ENCODE_BATCH])
        for start in range(0, len(items), ENCODE_BATCH)
    ]
    vectors = np.concatenate(parts) if parts else np.zeros((0, encoder.dim), dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    unit: np.ndarray = np.divide(vectors, norms, out=np.zeros_like(vectors), where=norms > 0)
    return unit


@dataclass(frozen=True)
class _ModelParts:
    """What the encoder reads of a model2vec model: its tokenizer (padding off), its
    table widened to the compute type, whether it is plain (no token weights and no
    token mapping), and its truncation settings (the median token length worked out
    when a text is long enough to be cut: it reads the whole vocabulary)."""

    tokenizer: Tokenizer
    table: np.ndarray
    plain: bool
    max_length: int | None
    median_token_length: Callable[[], int]
    unk_token_id: int | None

    @classmethod
    def of(cls, model: StaticModel) -> _ModelParts:
        return cls(
            model.tokenizer,
            np.asarray(model.embedding, dtype=np.float32),
            model.weights is None and model.token_mapping is None,
            model.max_length,
            lambda: int(model.median_token_length),
            model.unk_token_id,
        )


class _Encoder:
    """Mean token vectors of a loaded model, with the piece cache for BERT tokenizers.
    ``make_model`` gives the model2vec model itself, made only when a text must go
    through it (see :meth:`mean_vectors`) or :func:`load_model` asks for it."""

    def __init__(self, parts: _ModelParts, make_model: Callable[[], StaticModel]) -> None:
        self._make_model = make_model
        self._model: StaticModel | None = None
        self.table = parts.table
        self.dim = int(self.table.shape[1])
        tokenizer = self.tokenizer = parts.tokenizer
        self.by_pieces = (
            isinstance(tokenizer.normalizer, BertNormalizer)
            and isinstance(tokenizer.pre_tokenizer, BertPreTokenizer)
            and isinstance(tokenizer.model, WordPiece)
            and parts.plain
        )
        added = list(tokenizer.get_added_tokens_decoder().values())
        # Added tokens are matched in the raw text before any splitting; texts holding one
        # go through model2vec whole (and normalised added tokens rule the shortcut out).
        self.by_pieces = self.by_pieces and not any(t.normalized for t in added)
        self.added = tuple(t.content for t in added)
        self.token_limit: int | None = parts.max_length
        self._median_token_length = parts.median_token_length
        self._char_limit: int | None = None
        self.unknown: int | None = parts.unk_token_id
        # Each distinct piece tokenised so far, by its number n: its tokens are
        # runs[run_at[n] : run_at[n] + run_len[n]] (see _learn), in arrays that grow by
        # doubling (a small batch that learns a few pieces copies nothing).
        self.pieces: dict[str, int] = {}
        self._learnt = 0  # pieces numbered
        self._run_at = np.zeros(0, dtype=np.int64)
        self._run_len = np.zeros(0, dtype=np.int64)
        self._runs = np.zeros(0, dtype=np.int64)
        self._tokens = 0  # entries of _runs in use
        # A piece of ASCII letters and digits that is a word of the vocabulary (after
        # the normaliser's lowercasing) is that one token: WordPiece takes a whole word
        # it knows first, and nothing in the normaliser or pre-tokenizer changes such a
        # piece otherwise. _learn reads those straight from the vocabulary.
        self._whole: dict[str, int] = {}
        self._lowercase = False
        self._longest_word = 0
        if self.by_pieces:
            self._whole = tokenizer.get_vocab(with_added_tokens=False)
            self._lowercase = bool(tokenizer.normalizer.lowercase)
            self._longest_word = int(tokenizer.model.max_input_chars_per_word)

    @property
    def char_limit(self) -> int | None:
        """Where model2vec cuts a text before tokenising it (None: nowhere)."""
        if self.token_limit is None:
            return None
        if self._char_limit is None:
            self._char_limit = self.token_limit * self._median_token_length()
        return self._char_limit

    @property
    def model(self) -> StaticModel:
        if self._model is None:
            self._model = self._make_model()
        return self._model

    def mean_vectors(self, texts: list[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        if self.by_pieces:
            direct = [i for i, text in enumerate(texts) if any(a in text for a in self.added)]
        else:
            direct = list(range(len(texts)))
        taken = set(direct)
        split = [i for i in range(len(texts)) if i not in taken]
        if split:
            out[split] = self._by_pieces([texts[i] for i in split])
        if direct:
            encoded = self.model.encode(
                [texts[i] for i in direct],
                show_progress_bar=False,
                batch_size=ENCODE_BATCH,
                use_multiprocessing=False,
                normalize=False,
            )
            out[direct] = np.asarray(encoded, dtype=np.float32)
        return out

    def _by_pieces(self, texts: list[str]) -> np.ndarray:
        occurrences, counts = self._occurrences(texts)
        # Row i of this matrix counts the tokens of text i, so its product with the
        # table sums their vectors without materialising one vector per token.
        sums = np.asarray(occurrences @ self.table, dtype=np.float32)
        return np.divide(sums, np.maximum(counts, 1)[:, None]).astype(np.float32)

    def _occurrences(self, texts: list[str]) -> tuple[sp.csr_matrix, np.ndarray]:
        """Each text's token counts over the table (a row per text) and its tokens.

        The pieces of all texts are looked up as one flat run and the counts gathered
        with numpy: per text, its first ``token_limit`` tokens, less the unknown ones
        (as model2vec truncates before it drops them), summed per table row in the
        canonical order a CSR matrix keeps (rows, then columns ascending)."""
        limit = self.token_limit
        # Every token is a character or more (its median too): a text of at most
        # token_limit characters is never cut, and a goal is read without the vocabulary.
        if limit is not None and any(len(text) > limit for text in texts):
            cut = self.char_limit
            texts = [text[:cut] for text in texts]
        split = list(map(BERT_PIECES.findall, texts))
        flat = list(chain.from_iterable(split))
        self._learn(set(flat))
        numbers = np.fromiter(map(self.pieces.__getitem__, flat), dtype=np.int64, count=len(flat))
        run_at, run_len, runs = self._run_at, self._run_len, self._runs
        lengths = run_len[numbers]
        token_ends = np.concatenate([np.zeros(1, dtype=np.int64), np.cumsum(lengths)])
        # Token t of the flat run, the k-th of its piece's, is runs[run_at[piece] + k].
        first = np.repeat(run_at[numbers] - token_ends[:-1], lengths)
        columns = runs[first + np.arange(len(first))]
        # Where each text's tokens start in ``columns``, and how many it has.
        pieces = np.fromiter(map(len, split), dtype=np.int64, count=len(split))
        piece_ends = np.cumsum(pieces)
        starts = token_ends[piece_ends - pieces]
        counts = token_ends[piece_ends] - starts
        keep: np.ndarray | None = None
        if limit is not None and bool((counts > limit).any()):
            position = np.arange(len(columns)) - np.repeat(starts, counts)
            keep = position < limit
        if self.unknown is not None:
            known = columns != self.unknown
            keep = known if keep is None else keep & known
        if keep is not None and not keep.all():
            owner = np.repeat(np.arange(len(texts)), counts)
            columns = columns[keep]
            counts = np.bincount(owner[keep], minlength=len(texts)).astype(np.int64)
        indptr = np.concatenate([np.zeros(1, dtype=np.int64), np.cumsum(counts)])
        ones = np.ones(len(columns), dtype=np.float32)
        shape = (len(texts), len(self.table))
        occurrences = sp.csr_matrix((ones, columns, indptr), shape=shape)
        occurrences.sum_duplicates()  # sorted columns, one entry each: as from COO rows
        return occurrences, counts

    def factored(self, texts: list[str]) -> FactoredVectors:
        """The vectors of ``texts`` as token counts over the table rows they use (a text
        that holds an added token, or every text of a tokenizer without the shortcut,
        as a row of its own)."""
        direct = [
            i
            for i, text in enumerate(texts)
            if not self.by_pieces or any(a in text for a in self.added)
        ]
        taken = set(direct)
        split = [i for i in range(len(texts)) if i not in taken]
        occurrences, _ = self._occurrences([texts[i] for i in split])
        counts = sp.coo_matrix(occurrences)
        used, column = np.unique(counts.col, return_inverse=True)
        own = (
            self.mean_vectors([texts[i] for i in direct])
            if direct
            else np.zeros((0, self.dim), dtype=np.float32)
        )
        rows = np.concatenate([np.asarray(split, dtype=np.int64)[counts.row], direct])
        columns = np.concatenate(
            [column.astype(np.int64), len(used) + np.arange(len(direct), dtype=np.int64)]
        )
        data = np.concatenate([counts.data, np.ones(len(direct), dtype=np.float32)])
        keys = np.concatenate([used.astype(np.int64), np.full(len(direct), -1, dtype=np.int64)])
        weights = sp.csr_matrix(
            (data.astype(np.float32), (rows, columns)), shape=(len(texts), len(keys))
        )
        basis = np.concatenate([self.table[used], own]).astype(np.float32)
        return FactoredVectors(keys, basis, weights)

    def _learn(self, pieces: set[str]) -> None:
        unseen = pieces.difference(self.pieces)
        if not unseen:
            return
        if self._learnt + len(unseen) > PIECE_CACHE_MAX_ENTRIES:
            self.pieces.clear()
            self._learnt = self._tokens = 0
            unseen = pieces
        ordered = sorted(unseen)
        whole = self._whole
        known: dict[str, list[int]] = {}
        if whole:
            lower, longest = self._lowercase, self._longest_word
            for piece in ordered:
                if piece.isascii() and piece.isalnum() and len(piece) <= longest:
                    token = whole.get(piece.lower() if lower else piece)
                    if token is not None:
                        known[piece] = [token]
        rest = [piece for piece in ordered if piece not in known]
        encodings = self.tokenizer.encode_batch_fast(rest, add_special_tokens=False)
        known.update(zip(rest, (e.ids for e in encodings), strict=True))
        runs = [known[piece] for piece in ordered]
        lengths = np.fromiter(map(len, runs), dtype=np.int64, count=len(runs))
        tokens = np.fromiter(chain.from_iterable(runs), dtype=np.int64, count=int(lengths.sum()))
        first, at = self._learnt, self._tokens
        self._run_at = _room(self._run_at, first + len(runs))
        self._run_len = _room(self._run_len, first + len(runs))
        self._runs = _room(self._runs, at + len(tokens))
        self._run_len[first : first + len(runs)] = lengths
        self._run_at[first : first + len(runs)] = at + np.cumsum(lengths) - lengths
        self._runs[at : at + len(tokens)] = tokens
        self.pieces.update(zip(ordered, range(first, first + len(runs)), strict=True))
        self._learnt, self._tokens = first + len(runs), at + len(tokens)


def _room(array: np.ndarray, size: int) -> np.ndarray:
    """``array``, or a copy twice as long or more, with room for ``size`` entries."""
    if size <= len(array):
        return array
    grown = np.zeros(max(size, 2 * len(array)), dtype=array.dtype)
    grown[: len(array)] = array
    return grown


def _resolve(name_or_path: str | Path | None) -> Path:
    if name_or_path is None:
        if _missing_files(DEFAULT_MODEL_DIR):
            raise EmbeddingModelUnavailable(
                model=str(DEFAULT_MODEL_DIR),
                reason="the model shipped with coderooms is missing; reinstall coderooms",
            )
        return DEFAULT_MODEL_DIR
    text = str(name_or_path)
    if not text.strip():
        raise EmbeddingModelUnavailable(
            model=text, reason="the name is empty; pass a model directory or leave it unset"
        )
    path = Path(text).expanduser()
    if path.exists():
        return _checked_directory(text, path)
    if isinstance(name_or_path, str) and HUB_NAME.fullmatch(text):
        return _checked_directory(text, _cached_hub_model(text))
    raise EmbeddingModelUnavailable(model=text, reason=f"no such directory: {path}")


def _cached_hub_model(name: str) -> Path:
    from huggingface_hub import snapshot_download
    from huggingface_hub.errors import HFValidationError, LocalEntryNotFoundError

    try:
        # local_files_only never opens a connection: it answers from the cache or fails.
        return Path(snapshot_download(repo_id=name, local_files_only=True))
    except (LocalEntryNotFoundError, HFValidationError, OSError) as exc:
        raise EmbeddingModelUnavailable(
            model=name,
            reason=(
                "it is not a local directory and not in the local Hugging Face cache, and "
                "coderooms never downloads models (the hub is unreachable from here); "
                "pass the path of a model2vec model directory instead"
            ),
        ) from exc


def _missing_files(directory: Path) -> list[str]:
    return [name for name in REQUIRED_FILES if not (directory / name).is_file()]


def _checked_directory(model: str, path: Path) -> Path:
    if not path.is_dir():
        raise EmbeddingModelUnavailable(model=model, reason=f"{path} is not a directory")
    missing = _missing_files(path)
    if missing:
        raise EmbeddingModelUnavailable(
            model=model,
            reason=f"{path} is not a model2vec model directory (missing {', '.join(missing)})",
        )
    return path.resolve()


@cache
def _encoder(path: Path) -> _Encoder:
    try:
        plain = _read_plain(path)
        if plain is not None:
            return plain
        from model2vec import StaticModel

        model = StaticModel.from_pretrained(path, quantize_to=COMPUTE_DTYPE, force_download=False)
        return _Encoder(_ModelParts.of(model), lambda: model)
    except EmbeddingModelUnavailable:
        raise
    except Exception as exc:  # corrupt or foreign files surface as many library errors
        raise EmbeddingModelUnavailable(model=str(path), reason=str(exc) or repr(exc)) from exc


def _read_plain(path: Path) -> _Encoder | None:
    """The encoder of the model in ``path`` when it has model2vec's own layout, no model
    card and a BERT-style tokenizer (see :class:`_Encoder`), read as
    ``StaticModel.from_pretrained`` reads it but without importing model2vec: its hub
    support (huggingface_hub) and its own imports (joblib, tqdm) are most of a second of
    a fresh process, and making its model copies the tokenizer twice and sorts the
    vocabulary twice. The model is made only when a text needs it. None for any other
    directory (model2vec's own loader reads it)."""
    if (path / "README.md").exists() or _missing_files(path):
        return None
    import json

    import safetensors

    with safetensors.safe_open(str(path / "model.safetensors"), framework="numpy") as tensors:
        names = set(tensors.keys())
        vectors = tensors.get_tensor("embeddings")
        weights = tensors.get_tensor("weights") if "weights" in names else None
        mapping = tensors.get_tensor("mapping") if "mapping" in names else None
    with open(path / "config.json", encoding="utf-8") as fh:
        config = json.load(fh)
    tokenizer = Tokenizer.from_file(str(path / "tokenizer.json"))
    if not isinstance(tokenizer.model, WordPiece) or (
        mapping is None and len(vectors) != tokenizer.get_vocab_size()
    ):
        return None
    table = vectors.astype(np.float32)  # as model2vec widens it (see COMPUTE_DTYPE)
    max_length = config.get("max_length", MODEL2VEC_MAX_LENGTH)

    def make_model() -> StaticModel:
        from model2vec import StaticModel

        try:
            return StaticModel(
                vectors=table,
                tokenizer=tokenizer,
                config=config,
                normalize=config.get("normalize", MODEL2VEC_NORMALIZE),
                weights=weights,
                token_mapping=mapping,
                max_length=max_length,
            )
        except TypeError:  # another model2vec's signatures: its own loader reads it
            return StaticModel.from_pretrained(path, quantize_to=COMPUTE_DTYPE)

    # Padding off, the pad token kept, as model2vec sets the tokenizer of its model: a
    # batch of pieces must not come back padded to the longest.
    padding = tokenizer.padding
    if padding is not None:
        tokenizer.enable_padding(
            pad_id=padding["pad_id"],
            pad_token=padding["pad_token"],
            pad_type_id=padding["pad_type_id"],
            length=0,
        )
    unknown = tokenizer.model.unk_token
    parts = _ModelParts(
        tokenizer,
        table,
        weights is None and mapping is None,
        max_length,
        lambda: int(np.median([len(token) for token in tokenizer.get_vocab()])),
        None if unknown is None else tokenizer.token_to_id(unknown),
    )
    return _Encoder(parts, make_model)
