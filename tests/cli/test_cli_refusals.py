"""One-line refusals for input the room commands cannot use: bytes that are not UTF-8 (on
the command line or standard input), a closed or oversized standard input, malformed
authors, read-only stores, impossible store paths and in-memory stores."""

from __future__ import annotations

import io
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import NoReturn

import pytest
from click.testing import CliRunner, Result

from coderooms import launch
from coderooms.cli import main
from coderooms.store import MESSAGE_BYTES_CAP

PROGRAM = "from coderooms.cli import main; main()"


@pytest.fixture
def db(tmp_path: Path) -> str:
    url = f"sqlite:///{tmp_path / 'rooms.db'}"
    assert cli(url, "agent", "add", "alice").exit_code == 0
    return url


def cli(db: str, *args: str, input: bytes | str | io.RawIOBase | None = None) -> Result:
    return CliRunner().invoke(main, ["--db", db, *args], input=input)


def refused(result: Result) -> str:
    """The one error line of a refused command (exit 1, nothing on stdout)."""
    assert result.exit_code == 1, (result.stdout, result.stderr)
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("error: ")
    return lines[0]


def run_process(
    argv: list[str | bytes], *, close_stdin: bool = False, user: list[str] | None = None
) -> subprocess.CompletedProcess[bytes]:
    """Run the real command line in a child process: argv bytes stay bytes, and standard
    input can be closed outright (``<&-``)."""
    command: list[str | bytes] = [*(user or []), sys.executable, "-c", PROGRAM, *argv]
    return subprocess.run(
        command,
        capture_output=True,
        stdin=None if close_stdin else subprocess.DEVNULL,
        preexec_fn=(lambda: os.close(0)) if close_stdin else None,
        timeout=60,
        check=False,
    )


def process_error(done: subprocess.CompletedProcess[bytes]) -> str:
    assert done.returncode == 1, done.stderr
    assert done.stdout == b""
    assert b"Traceback" not in done.stderr
    lines = done.stderr.decode("utf-8").splitlines()
    assert len(lines) == 1, done.stderr
    return lines[0]


# --- text that is not UTF-8 ------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "what"),
    [
        ([b"post", b"--as", b"agent:alice", b"bad \xff"], "the message content"),
        ([b"agent", b"add", b"q\xff"], "the agent id"),
        ([b"person", b"add", b"z\xff", b"--label", b"L"], "the person id"),
        ([b"desk", b"create", b"z\xff"], "the desk id"),
        ([b"post", b"--as", b"agent:al\xffce", b"hi"], "the author"),
    ],
    ids=["post", "agent add", "person add", "desk create", "post --as"],
)
def test_argv_bytes_that_are_not_utf8_are_one_line_naming_the_field(
    db: str, args: list[bytes], what: str
) -> None:
    line = process_error(run_process([b"--db", db.encode(), *args]))
    assert line == f"error: {what} is not valid UTF-8 text; give it as UTF-8"


def test_stdin_bytes_that_are_not_utf8_are_one_line_and_nothing_is_posted(db: str) -> None:
    line = refused(cli(db, "post", "--as", "agent:alice", input=b"bad \xff\n"))
    assert line == "error: the message on standard input is not valid UTF-8 text; give it as UTF-8"
    assert cli(db, "post", "--as", "agent:alice", input="fine\n").stdout == "1\n"


# --- standard input ---------------------------------------------------------------------


def test_a_closed_stdin_is_one_line_not_a_traceback(db: str) -> None:
    done = run_process(["--db", db, "post", "--as", "agent:alice"], close_stdin=True)
    assert process_error(done) == (
        "error: no input: standard input is closed; give the message as TEXT"
    )


class Endless(io.RawIOBase):
    """Standard input that never ends; counts the bytes handed out."""

    def __init__(self) -> None:
        self.served = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        buffer[:] = b"a" * len(buffer)
        self.served += len(buffer)
        return len(buffer)


def test_an_oversized_stdin_says_more_than_the_cap_and_is_not_read_whole(db: str) -> None:
    endless = Endless()
    line = refused(cli(db, "post", "--as", "agent:alice", input=endless))
    assert line == (
        f"error: message is more than {MESSAGE_BYTES_CAP} bytes of UTF-8; "
        f"the cap is {MESSAGE_BYTES_CAP} bytes"
    )
    assert endless.served <= MESSAGE_BYTES_CAP + 64 * 1024
    ten_mb = b"a" * (10 * 1024 * 1024)
    assert "more than" in refused(cli(db, "post", "--as", "agent:alice", input=ten_mb))


def test_stdin_at_the_cap_posts_and_just_above_it_gives_the_exact_size(db: str) -> None:
    at_cap = b"a" * MESSAGE_BYTES_CAP
    assert cli(db, "post", "--as", "agent:alice", input=at_cap + b"\r\n").stdout == "1\n"
    line = refused(cli(db, "post", "--as", "agent:alice", input=at_cap + b"a\n"))
    assert line.startswith(f"error: message is {MESSAGE_BYTES_CAP + 1} bytes of UTF-8")


# --- authors ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("author", "expected"),
    [
        ("zed", "author 'zed' is not agent:ID, person:ID, operator or system:KIND"),
        ("agent:", "author 'agent:' is not agent:ID, person:ID, operator or system:KIND"),
        ("system:", "author 'system:' is not agent:ID, person:ID, operator or system:KIND"),
        (
            "agent:zed",
            "agent 'zed' is not on the roster; add it first (coderooms agent add / person add)",
        ),
        (
            "person:zed",
            "person 'zed' is not on the roster; add it first (coderooms agent add / person add)",
        ),
    ],
)
def test_an_author_error_says_one_thing(db: str, author: str, expected: str) -> None:
    assert refused(cli(db, "post", "--as", author, "hi")) == f"error: {expected}"


def test_a_malformed_reader_says_only_that_its_form_is_wrong(db: str) -> None:
    assert refused(cli(db, "read", "--as", "agent:")) == (
        "error: author 'agent:' is not agent:ID, person:ID, operator or system:KIND"
    )


# --- the store ----------------------------------------------------------------------------


@pytest.fixture
def shared_dir() -> Iterator[Path]:
    """A directory another user can write in (pytest's own is private to its user)."""
    path = Path(tempfile.mkdtemp(prefix="coderooms-ro-"))
    path.chmod(0o777)
    yield path
    shutil.rmtree(path)


def test_a_read_only_store_file_says_it_is_read_only(shared_dir: Path) -> None:
    path = shared_dir / "rooms.db"
    url = f"sqlite:///{path}"
    assert cli(url, "agent", "add", "alice").exit_code == 0
    path.chmod(stat.S_IRUSR | stat.S_IRGRP | stat.S_IROTH)
    user: list[str] = []
    if os.geteuid() == 0:  # root writes whatever the file's mode says: post as nobody
        setpriv = shutil.which("setpriv")
        if setpriv is None:
            pytest.skip("running as root without setpriv to drop to an unprivileged user")
        user = [setpriv, "--reuid=nobody", "--regid=nogroup", "--clear-groups"]
        probe = subprocess.run(
            [*user, sys.executable, "-c", "import coderooms"], capture_output=True, timeout=60
        )
        if probe.returncode != 0:  # e.g. a checkout in a directory private to root
            pytest.skip("the unprivileged user cannot import coderooms from this checkout")
    done = run_process(["--db", url, "post", "--as", "agent:alice", "hi"], user=user)
    assert process_error(done) == (
        f"error: {path} is read-only: coderooms cannot write to it "
        "(check the permissions of the file and of its directory)"
    )


def test_a_store_path_below_a_regular_file_says_it_is_not_a_directory(tmp_path: Path) -> None:
    (tmp_path / "afile.txt").write_text("text")
    url = f"sqlite:///{tmp_path / 'afile.txt' / 'x.db'}"
    assert refused(cli(url, "init")) == (
        f"error: cannot open the store at {tmp_path / 'afile.txt' / 'x.db'}: "
        f"{tmp_path / 'afile.txt'} is not a directory"
    )


@pytest.mark.parametrize("url", [":memory:", "sqlite:///:memory:"])
@pytest.mark.parametrize(
    "args",
    [("post", "--as", "operator", "hi"), ("agent", "add", "x"), ("init",), ("desk", "list")],
    ids=lambda a: " ".join(a),
)
def test_an_in_memory_store_is_refused_on_the_command_line(url: str, args: tuple[str, ...]) -> None:
    assert refused(cli(url, *args)) == (
        f"error: {url!r} is an in-memory store, which is lost when the command exits; "
        "give a file path (sqlite:///PATH)"
    )


def test_ctrl_c_while_the_command_line_loads_is_one_line_and_exit_130(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def interrupted() -> NoReturn:
        raise KeyboardInterrupt

    monkeypatch.setattr(launch, "_load", interrupted)
    with pytest.raises(SystemExit) as stopped:
        launch.main()
    assert stopped.value.code == 130
    assert capsys.readouterr().err == "error: interrupted\n"


def test_a_one_shot_command_with_a_daemon_thread_at_work_exits_as_it_always_did(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The exit without teardown is only taken with every other thread done: a daemon
    still at work (a model loading, say) gets the interpreter's exit."""
    ended: list[int] = []
    monkeypatch.setattr(launch.os, "_exit", ended.append)
    release = threading.Event()
    loading = threading.Thread(target=release.wait, daemon=True)
    loading.start()
    try:
        launch._exit_without_teardown()
    finally:
        release.set()
        loading.join()
    assert ended == []


def test_the_console_script_runs_the_command_line() -> None:
    done = subprocess.run(
        [sys.executable, "-c", "from coderooms.launch import main; main()", "--help"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0 and "Usage:" in done.stdout


def test_the_command_line_runs_numpy_on_one_blas_thread_unless_told_otherwise() -> None:
    probe = (
        "import os; from coderooms import launch; launch._one_blas_thread(); "
        "print(os.environ['OPENBLAS_NUM_THREADS'], os.environ['OMP_NUM_THREADS'])"
    )
    env = {k: v for k, v in os.environ.items() if k not in launch.BLAS_THREAD_VARIABLES}
    quiet = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True)
    assert quiet.stdout.split() == ["1", "1"]
    chosen = subprocess.run(
        [sys.executable, "-c", probe],
        env={**env, "OPENBLAS_NUM_THREADS": "2"},
        capture_output=True,
        text=True,
    )
    assert chosen.stdout.split() == ["2", "1"]


@pytest.mark.parametrize(
    ("args", "collecting"),
    [(("focus", "goal"), False), (("seek", "q"), False), (("impact", "x"), False)]
    + [(("index",), True), (("post", "--as", "a", "hi"), True), (("--db", "focus", "up"), True)],
    ids=lambda a: " ".join(a) if isinstance(a, tuple) else str(a),
)
def test_a_one_shot_command_loads_and_runs_without_the_cyclic_collector(
    args: tuple[str, ...], collecting: bool
) -> None:
    probe = "import gc; from coderooms import launch; launch._load(); print(gc.isenabled())"
    done = subprocess.run(
        [sys.executable, "-c", probe, *args], capture_output=True, text=True, check=True
    )
    assert done.stdout.split() == [str(collecting)]


def test_a_one_shot_command_imports_scipy_sparse_without_numpys_idle_submodules() -> None:
    script = (
        "import sys, numpy; from coderooms import launch; launch._import_sparse_alone(); "
        "import scipy.sparse as sp; "
        "idle = [m for m in ('numpy.f2py', 'numpy.testing', 'numpy.ma') if m in sys.modules]; "
        "product = sp.csr_matrix(numpy.eye(3)) @ numpy.arange(3.0); "
        "print(idle, product.tolist(), 'f2py' in dir(numpy), 'ma' in numpy.__all__, "
        "numpy.ma.masked_array([1]).sum())"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    # none imported for scipy; numpy's own lists put back; a submodule still imports
    assert done.stdout.split() == ["[]", "[0.0,", "1.0,", "2.0]", "True", "True", "1"]


def test_a_call_that_waits_for_nothing_runs_without_an_event_loop() -> None:
    from coderooms.cli.app import run_unawaited

    async def inner() -> int:
        return 41

    async def outer() -> int:
        return await inner() + 1

    async def refusing() -> int:
        raise ValueError("refused")

    async def waiting() -> int:
        import asyncio

        await asyncio.sleep(0)
        return 0

    assert run_unawaited(outer()) == 42
    with pytest.raises(ValueError, match="refused"):
        run_unawaited(refusing())
    with pytest.raises(RuntimeError, match="without an event loop"):
        run_unawaited(waiting())


def test_the_focus_commands_load_without_asyncio() -> None:
    script = "import sys, coderooms.cli.focus_cmds; print('asyncio' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False"
