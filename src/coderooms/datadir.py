"""The ``.coderooms/`` folder a repository or a working directory holds (a host module).

Both the room store (``rooms.db``) and the code index (``index.db``) live in a folder of
this name by default. It is machine state, not source: when coderooms creates it, it
also writes a ``.gitignore`` holding ``*`` inside it, so the folder ignores itself and
never shows in the user's ``git status``, with nothing to add to their own ignore file.
"""

from __future__ import annotations

import contextlib
import io
import os
import threading
from collections.abc import Iterator
from typing import BinaryIO

__all__ = ["DATA_DIR", "SELF_IGNORE", "make_dirs", "replaced_whole"]

DATA_DIR = ".coderooms"
"""The folder's name."""

SELF_IGNORE = "*\n"
"""What the folder's own ``.gitignore`` holds: everything in it (itself included)."""


def make_dirs(path: str | os.PathLike[str]) -> None:
    """``os.makedirs(path, exist_ok=True)``; a folder named :data:`DATA_DIR` that this
    call created gets its ``.gitignore``. Raises ``OSError`` as ``makedirs`` does."""
    folder = os.fspath(path)
    created = not os.path.isdir(folder)
    os.makedirs(folder, exist_ok=True)
    if created and os.path.basename(os.path.normpath(folder)) == DATA_DIR:
        ignore = os.path.join(folder, ".gitignore")
        try:
            with open(ignore, "x", encoding="utf-8") as file:
                file.write(SELF_IGNORE)
        except FileExistsError:  # another process created the folder at the same moment
            pass


@contextlib.contextmanager
def replaced_whole(path: str) -> Iterator[BinaryIO]:
    """A file to write the new content of ``path`` to, renamed over ``path`` when the
    block ends: a reader finds the old file or the new one, never a part. A write that
    fails (OSError) leaves the old file and is not raised: what is kept beside the index
    is a cache, and a lost write only costs the next reader work. When the file cannot
    even be made (a folder gone or read-only), the block writes to nowhere; when the
    block raises, its part-written file is removed."""
    tmp = f"{path}.{os.getpid()}.{threading.get_ident()}.tmp"
    try:
        fh = open(tmp, "wb")  # noqa: SIM115  # closed below, before the rename
    except OSError:
        yield io.BytesIO()  # dropped
        return
    try:
        with fh:
            yield fh
        os.replace(tmp, path)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            os.remove(tmp)
        if not isinstance(exc, OSError):
            raise
