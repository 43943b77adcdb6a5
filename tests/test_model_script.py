"""scripts/make_default_model.py: the training texts it makes of code are the texts
coderooms embeds, and the tokens it averages are as many as the model reads."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

from coderooms.embeddings import DEFAULT_MODEL_DIR
from coderooms.focus.documents import EMBED_TEXT_CAP_CHARS

SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "make_default_model.py"


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("make_default_model", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_the_token_limit_is_the_model_s() -> None:
    script = _script()
    config = json.loads((DEFAULT_MODEL_DIR / "config.json").read_text(encoding="utf-8"))
    assert script.TOKEN_LIMIT == config["max_length"]


def test_code_texts_read_like_embedding_texts(tmp_path: Path) -> None:
    script = _script()
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "queue.py").write_text(
        '"""A queue with a deadline for every item, and the clock it reads."""\n'
        "class Deadline:\n"
        '    """When an item stops being worth handing out, in seconds from now."""\n'
        "    def expired(self, now):\n"
        "        return now > self.at\n"
        "def pop(q):\n"
        "    return q.pop()\n"
    )
    (tmp_path / "pkg" / "broken.py").write_text("def (:\n")
    (tmp_path / "site-packages" / "other").mkdir(parents=True)
    (tmp_path / "site-packages" / "other" / "mod.py").write_text("def elsewhere():\n    pass\n")
    long_body = "x = 1\n" * 200
    (tmp_path / "pkg" / "long.py").write_text(f"def long():\n{long_body.replace('x', '    x')}")

    texts = script.stdlib_texts(tmp_path)

    assert (
        "pkg/queue.py\nA queue with a deadline for every item, and the clock it reads.\n"
        "Deadline pop"
    ) in texts
    assert (
        "pkg/queue.py Deadline.expired\ndef expired(self, now):\n\n"
        "    def expired(self, now):\n        return now > self.at"
    ) in texts
    assert "When an item stops being worth handing out, in seconds from now." in texts
    assert not any("elsewhere" in text for text in texts)  # not the standard library's
    assert not any(text.startswith("pkg/broken.py") for text in texts)
    assert all(len(text) <= EMBED_TEXT_CAP_CHARS for text in texts)
    assert any(
        text.startswith("pkg/long.py long\n") and len(text) == EMBED_TEXT_CAP_CHARS
        for text in texts
    )
