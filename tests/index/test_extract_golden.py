"""The facts and focus documents the index workers make of a file, pinned: a corpus of
the constructs extraction reads (receivers, pairs, bindings, docstrings, nesting, odd
spacing and text) must give, field for field, what it gave when the digest below was
taken. A speed-up of the per-file work changes nothing stored; a change that means to
change the facts updates the digest and says why."""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np

from coderooms.index.extract import read_and_process
from coderooms.index.facts import FileFacts
from coderooms.index.handover import file_work

LONG_DOC = " ".join(f"word{i}\n\t" for i in range(700))  # collapsed past any limit

MODULE = f'''"""Module doc."""
import os, sys as system
from . import sibling
from ..pkg.mod import (alpha as a1, beta)
from lib import *

__all__ = ["Shop", "make"]
__all__ += ["extra"]
ALIAS = os.path
CONSTANT: int = 3
left, (right, deep) = 1, (2, 3)
NAMES = ["x", "y"]
TABLE = {{"k": make}}


def make(a, b: "Shop" = None, *args, c: int = CONSTANT, **kw) -> "Shop":
    """{LONG_DOC}"""
    shop = Shop()
    shop.items.append(a)
    os.path.join(a, b).strip().lower()
    system.exit
    value = self_like.attr
    x = f().g
    y = x[0].m(a)
    z = "s".join(NAMES)
    w = (a).b()
    v = a . spaced()
    u = a.  # comment
    u2 = (obj  # comment
          .method())
    super().init()
    return Shop.create(a, b)(c).run()


@property
@functools.lru_cache(maxsize=None)
def decorated(self) -> list[int]:
    r"""Raw \\d doc."""
    return self


class Shop(Base, mixins.Mixin, metaclass=Meta):
    'Single quoted doc.'
    count: int = 0

    def __init__(self, items: list[str] | None = None) -> None:
        self.items: list[str] = items or []
        self.total = 0.0
        self.cache = {{}}
        self.name = "shop"

    async def fetch(self, url):
        async with session.get(url) as response:
            pass
        with open(url) as fh, lock:
            data = fh.read()
        try:
            risky(data)
        except (ValueError, KeyError) as err:
            raise Wrapped(err) from err
        except OSError as oserr:
            log.warning(oserr)
        return response.json()

    def method_with_a_very_long_signature(self, first_argument_name, second_argument_name, third_argument_name, fourth_argument_name) -> dict[str, list[tuple[int, int]]]:  # noqa
        lam = lambda q: helper
        cond = one if flag else two
        return cond, lam

    class Inner:
        def deep(self):
            def deeper():
                return Inner()
            return deeper

    def fetch(self):
        return f"{{self}}"


def test_shop(fixture_a, tmp_path):
    assert make(1, 2)


class TestShop:
    def test_method(self, fixture_b):
        Shop().fetch()
'''

CORPUS: dict[str, bytes] = {
    "pkg/shop.py": MODULE.encode(),
    "tests/test_shop.py": MODULE.replace("Shop", "Store").encode(),
    "pkg/crlf.py": MODULE.replace("\n", "\r\n").encode(),
    "pkg/other_breaks.py": ("x = 1\x0cy = obj.a\u2028z = f(y)\nclass K:\n    pass\n").encode(),
    "pkg/unicode.py": "def naïve(ça):\n    'é doc'\n    return ça.été()\n".encode(),
    "pkg/latin1.py": b"def f():\n    '\xe9'\n    return g.h()\n",
    "pkg/broken.py": b"def f(:\n    return a.b(\nclass\n",
    "pkg/empty.py": b"",
    "README.md": b"# Shop\n\nA shop.\n",
}

# Taken at 26d1fba (before the per-file work was made cheaper) and unchanged since.
PINNED = "f5ed55a179b414bd19ac80d2f883b9ab"


def facts_digest(corpus: dict[str, bytes], root: Path | None = None) -> str:
    """A digest of every field of each file's facts and focus documents."""
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp) if root is None else root
        for rel, data in corpus.items():
            (base / rel).parent.mkdir(parents=True, exist_ok=True)
            (base / rel).write_bytes(data)
        digest = hashlib.md5()
        for rel in sorted(corpus):
            outcome, data = read_and_process(str(base), rel)
            digest.update(repr(outcome).encode())
            if isinstance(outcome, FileFacts):
                work = file_work(outcome, data)
                for name in work.__slots__:
                    value = getattr(work, name)
                    if isinstance(value, np.ndarray):
                        digest.update(str(value.dtype).encode() + value.tobytes())
                    else:
                        digest.update(repr(value).encode())
        return digest.hexdigest()


def test_the_facts_and_documents_of_the_corpus_are_as_pinned(tmp_path: Path) -> None:
    assert facts_digest(CORPUS, tmp_path) == PINNED


def test_old_mac_line_ends_are_lines_as_python_reads_them(tmp_path: Path) -> None:
    # A file whose lines end in a lone carriage return used to be one long line to the
    # parser: a parse error, and every symbol at line 1.
    source = "def cr_only():\n    return 1\n\n\nclass Two:\n    def cr_two(self):\n        return cr_only()\n"
    (tmp_path / "lf.py").write_bytes(source.encode())
    (tmp_path / "cr.py").write_bytes(source.replace("\n", "\r").encode())
    lf, _ = read_and_process(str(tmp_path), "lf.py")
    cr, data = read_and_process(str(tmp_path), "cr.py")
    assert isinstance(lf, FileFacts) and isinstance(cr, FileFacts)
    assert data == source.replace("\n", "\r").encode()  # the file's own bytes, hashed as read
    assert not cr.parse_error and cr.lines == lf.lines == 7
    assert [(s.qualname, s.start_line, s.end_line) for s in cr.symbols] == [
        (s.qualname, s.start_line, s.end_line) for s in lf.symbols
    ]
    assert [call[1:] for call in cr.calls] == [call[1:] for call in lf.calls]
    assert len(file_work(cr, data).document_keys) == len(
        file_work(lf, source.encode()).document_keys
    )
