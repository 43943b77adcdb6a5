"""Which files make up the repository: ``git ls-files`` when there is git, else a walk
that honours ``.gitignore``. Symlinks are never followed."""

from __future__ import annotations

import os
import re
import stat
import subprocess
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from coderooms.datadir import DATA_DIR
from coderooms.index.errors import WorkspaceUnreadable
from coderooms.index.facts import Skipped

if TYPE_CHECKING:
    import pathspec

INDEX_DIR = DATA_DIR
INDEX_FILE = "index.db"  # the index database, inside INDEX_DIR
GIT_TIMEOUT_SECONDS = 120
WALK_MAX_DEPTH = 128
"""How many directories deep the walk of a tree without git goes; deeper ones are skipped
(``too_deep``) and counted."""
# Never indexed, with or without git: tool caches and environments.
ALWAYS_IGNORED_DIRS = frozenset({".git", ".hg", ".svn", INDEX_DIR})
WALK_IGNORED_DIRS = frozenset(
    {
        "__pycache__",
        ".venv",
        "venv",
        ".tox",
        ".nox",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        ".hypothesis",
        "node_modules",
        ".eggs",
        ".idea",
        ".vscode",
    }
)


# git's warning for a directory it cannot list (its untracked files go unseen).
GIT_UNREADABLE_DIR = re.compile(r"^warning: could not open directory '(.*)/': ", re.MULTILINE)


@dataclass(slots=True)
class Listing:
    """The candidate files with their (size, change mark), and what was skipped on the way."""

    files: dict[str, tuple[int, int]] = field(default_factory=dict)
    skipped: list[Skipped] = field(default_factory=list)
    git: bool = False


def run_git(root: str, *args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        ["git", "-c", "core.quotepath=off", *args],
        cwd=root,
        capture_output=True,
        timeout=GIT_TIMEOUT_SECONDS,
        check=False,
    )


def is_git_worktree(root: str) -> bool:
    """True inside a git work tree, False outside one (or without git installed).

    A repository git refuses to read (dubious ownership, corruption) is an error, not a
    reason to quietly index without it."""
    try:
        done = run_git(root, "rev-parse", "--is-inside-work-tree")
    except (OSError, subprocess.TimeoutExpired):
        return False
    if done.returncode == 0:
        return done.stdout.strip() == b"true"
    message = done.stderr.decode("utf-8", "replace").strip()
    if "not a git repository" in message:
        return False
    first = message.splitlines()[0] if message else f"git exited with {done.returncode}"
    raise WorkspaceUnreadable(root, first.removeprefix("fatal: "))


def list_files(root: str) -> Listing:
    listing = Listing()
    if is_git_worktree(root):
        listing.git = True
        done = run_git(root, "ls-files", "-z", "--cached", "--others", "--exclude-standard")
        if done.returncode != 0:
            reason = done.stderr.decode("utf-8", "replace").strip().splitlines()
            raise WorkspaceUnreadable(root, reason[0] if reason else "git ls-files failed")
        paths = sorted({p for p in done.stdout.decode("utf-8", "surrogateescape").split("\0") if p})
        if done.stderr:
            errors = done.stderr.decode("utf-8", "surrogateescape")
            for rel in GIT_UNREADABLE_DIR.findall(errors):
                if rel.split("/", 1)[0] not in ALWAYS_IGNORED_DIRS:
                    _skip(listing, rel, "unreadable")
    else:
        paths = _walk(root, listing)
    real_root = os.path.realpath(root)
    for rel in paths:
        first = rel.split("/", 1)[0]
        if first in ALWAYS_IGNORED_DIRS:
            continue
        if not _is_utf8(rel):
            _skip(listing, rel, "undecodable_path")
            continue
        full = os.path.join(root, rel)
        try:
            st = os.lstat(full)
        except FileNotFoundError:
            continue  # tracked but deleted from the working tree
        except OSError:
            listing.skipped.append(Skipped(rel, "unreadable"))  # e.g. in a closed directory
            continue
        mode = st.st_mode
        if stat.S_ISREG(mode):
            listing.files[rel] = (st.st_size, change_mark(st))
        elif stat.S_ISLNK(mode):
            listing.skipped.append(Skipped(rel, _symlink_reason(full, real_root)))
        elif stat.S_ISDIR(mode):  # git lists a submodule as one entry: not this repository's
            listing.skipped.append(Skipped(rel, "submodule"))
        else:
            listing.skipped.append(Skipped(rel, "not_a_file"))  # FIFO, socket, device
    listing.skipped.sort(key=lambda s: s.path)
    return listing


def change_mark(st: os.stat_result) -> int:
    """When a file last changed, as far as its status tells: the later of its mtime and
    its ctime. Copying a file over another with its mtime kept (``cp -p``, ``rsync -a``,
    ``tar x``) moves the ctime, which nothing can set back. Stored where the index keeps
    a file's ``mtime_ns``."""
    return max(st.st_mtime_ns, st.st_ctime_ns)


def _is_utf8(path: str) -> bool:
    """Paths are stored as text: a name that is not valid UTF-8 cannot be."""
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _skip(listing: Listing, rel: str, reason: str) -> None:
    """Count ``rel`` as skipped; a name that is not valid UTF-8 is stored readably."""
    if not _is_utf8(rel):
        rel = rel.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
        reason = "undecodable_path"
    listing.skipped.append(Skipped(rel, reason))


def _symlink_reason(full: str, real_root: str) -> str:
    try:
        target = os.path.realpath(full, strict=False)
    except (OSError, RuntimeError):
        return "symlink_loop"
    if target != real_root and not target.startswith(real_root + os.sep):
        return "symlink_outside_root"
    if not os.path.exists(target):
        return "symlink_broken"
    return "symlink"


def _walk(root: str, listing: Listing) -> list[str]:
    """All files under ``root``, honouring every ``.gitignore`` on the way down.

    The walk keeps its own stack (``os.walk`` recurses once per level, so a deep enough
    tree was a RecursionError), and goes at most :data:`WALK_MAX_DEPTH` directories
    down: a directory below that is skipped as ``too_deep``, counted like every other
    skip."""
    import pathspec  # only a walk reads .gitignore files: not loaded to answer a focus

    found: list[str] = []
    real_root = os.path.realpath(root)
    specs: list[tuple[str, pathspec.GitIgnoreSpec]] = []  # (directory prefix, its .gitignore)

    def ignored(rel: str, is_dir: bool) -> bool:
        for prefix, spec in specs:
            if prefix and not rel.startswith(prefix + "/"):
                continue
            sub = rel[len(prefix) + 1 :] if prefix else rel
            if spec.match_file(sub + "/" if is_dir else sub):
                return True
        return False

    stack: list[tuple[str, int]] = [("", 0)]  # (directory relative to root, its depth)
    while stack:
        rel_dir, depth = stack.pop()
        dirpath = os.path.join(root, rel_dir) if rel_dir else root
        try:
            with os.scandir(dirpath) as entries:
                # (name, a directory?, a link to a directory?): the entry knows both.
                listed = [
                    (entry.name, entry.is_dir(follow_symlinks=False), _links_to_dir(entry))
                    for entry in entries
                ]
        except OSError as exc:
            if not rel_dir:
                raise WorkspaceUnreadable(root, exc.strerror or str(exc)) from exc
            _skip(listing, rel_dir, "unreadable")
            continue
        names = {name for name, _, _ in listed}
        if ".gitignore" in names:
            try:
                with open(
                    os.path.join(dirpath, ".gitignore"), encoding="utf-8", errors="replace"
                ) as fh:
                    specs.append(
                        (rel_dir, pathspec.GitIgnoreSpec.from_lines(fh.read().splitlines()))
                    )
            except OSError:
                pass
        below: list[str] = []
        for name, is_dir, dir_link in sorted(listed):
            rel = f"{rel_dir}/{name}" if rel_dir else name
            if is_dir or dir_link:
                if name in ALWAYS_IGNORED_DIRS or name in WALK_IGNORED_DIRS or ignored(rel, True):
                    continue
                if dir_link:
                    _skip(listing, rel, _symlink_reason(os.path.join(dirpath, name), real_root))
                elif depth + 1 > WALK_MAX_DEPTH:
                    _skip(listing, rel, "too_deep")
                else:
                    below.append(rel)
            elif not ignored(rel, False):
                found.append(rel)
        stack.extend((rel, depth + 1) for rel in reversed(below))
    return sorted(found)


def _links_to_dir(entry: os.DirEntry[str]) -> bool:
    """A symlink to a directory (the walk skips it with its reason); a link to anything
    else is listed as a file."""
    try:
        return entry.is_symlink() and entry.is_dir()
    except OSError:
        return False
