"""A throwaway PostgreSQL cluster: for the tests, the benchmarks, and trying the
PostgreSQL store without a server of your own.

:class:`ScratchCluster` runs ``initdb`` into a directory, starts the server on a unix
socket in that directory (and no TCP port), and removes everything on :meth:`stop`.
PostgreSQL refuses to run as root, so as root the server runs as the ``postgres``
user Debian's package creates (the cluster directory is handed to that user).

``python -m coderooms.store.scratch`` starts one, prints the ``--db`` URL to use, and
stops it on Ctrl-C.
"""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import shutil
import signal
import socket
import subprocess
import tempfile
from pathlib import Path

from coderooms.store.errors import StoreError

__all__ = [
    "SCRATCH_START_TIMEOUT_S",
    "SCRATCH_SUPERUSER",
    "ScratchCluster",
    "ScratchUnavailable",
    "find_postgres_bin",
]

SCRATCH_SUPERUSER = "postgres"
"""The cluster's superuser (connections from this machine need no password)."""
SCRATCH_START_TIMEOUT_S = 60
"""How long ``pg_ctl`` may take to start or stop the server."""
SCRATCH_MAX_CONNECTIONS = 200
"""Connections the server accepts (each store pools up to POOL_MAX of them)."""
RUN_AS_WHEN_ROOT = "postgres"
"""The system user the server runs as when coderooms runs as root."""
_PG_BIN_GLOB = "/usr/lib/postgresql/*/bin"
"""Where Debian and Ubuntu install the server binaries (not on $PATH)."""


class ScratchUnavailable(StoreError):
    """No throwaway PostgreSQL cluster can be started here; ``reason`` says why."""

    fields = ("reason",)
    template = "cannot start a scratch PostgreSQL cluster: {reason}"


def find_postgres_bin() -> Path | None:
    """The directory holding ``initdb`` and ``pg_ctl``: from $PATH, else from
    ``pg_config --bindir``, else the newest Debian-style install; None if absent."""
    found = shutil.which("pg_ctl")
    if found and shutil.which("initdb"):
        return Path(os.path.realpath(found)).parent
    with contextlib.suppress(OSError, subprocess.SubprocessError):
        bindir = subprocess.run(
            ["pg_config", "--bindir"], capture_output=True, text=True, check=True
        ).stdout.strip()
        if (Path(bindir) / "initdb").exists():
            return Path(bindir)
    candidates = sorted(glob.glob(_PG_BIN_GLOB), key=lambda p: _version_key(Path(p).parent.name))
    for candidate in reversed(candidates):
        if (Path(candidate) / "initdb").exists() and (Path(candidate) / "pg_ctl").exists():
            return Path(candidate)
    return None


def _version_key(name: str) -> tuple[int, ...]:
    return tuple(int(part) for part in name.split(".") if part.isdigit())


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class ScratchCluster:
    """One running throwaway cluster. Use as a context manager, or call :meth:`start`
    and :meth:`stop`. ``durable=False`` turns fsync off (tests); the benchmarks keep
    PostgreSQL's durable defaults."""

    def __init__(self, *, durable: bool = True, parent: str | None = None) -> None:
        self.durable = durable
        self.bin = find_postgres_bin()
        self.port = _free_port()
        self._parent = parent
        self.root: Path | None = None

    @property
    def socket_dir(self) -> Path:
        assert self.root is not None
        return self.root / "socket"

    def url(self, database: str = "postgres", schema: str | None = None) -> str:
        """The ``postgresql://`` URL of ``database`` on this cluster (over its socket);
        with ``schema``, of that schema in it (set as the connection's search_path)."""
        url = (
            f"postgresql://{SCRATCH_SUPERUSER}@/{database}?host={self.socket_dir}&port={self.port}"
        )
        if schema is not None:
            url += f"&options=-csearch_path%3D{schema}"
        return url

    def _as_server_user(self) -> list[str]:
        if os.geteuid() != 0:
            return []
        try:
            pwd.getpwnam(RUN_AS_WHEN_ROOT)
        except KeyError:
            raise ScratchUnavailable(
                f"running as root and there is no {RUN_AS_WHEN_ROOT!r} user to run the server as"
            ) from None
        runuser = shutil.which("runuser")
        if runuser is None:
            raise ScratchUnavailable("running as root and runuser is not installed")
        return [runuser, "-u", RUN_AS_WHEN_ROOT, "--"]

    def _run(self, *args: str) -> None:
        done = subprocess.run(
            [*self._as_server_user(), *args],
            capture_output=True,
            text=True,
            timeout=SCRATCH_START_TIMEOUT_S,
            stdin=subprocess.DEVNULL,
        )
        if done.returncode != 0:
            tail = " ".join((done.stderr or done.stdout).split())[-400:]
            raise ScratchUnavailable(f"{Path(args[0]).name} failed: {tail}")

    def start(self) -> ScratchCluster:
        if self.bin is None:
            raise ScratchUnavailable(
                "the PostgreSQL server binaries (initdb, pg_ctl) are not installed "
                "(Debian: apt-get install postgresql)"
            )
        prefix = self._as_server_user()
        self.root = Path(tempfile.mkdtemp(prefix="coderooms-pg-", dir=self._parent))
        self.socket_dir.mkdir()
        if prefix:
            user = pwd.getpwnam(RUN_AS_WHEN_ROOT)
            for path in (self.root, self.socket_dir):
                os.chown(path, user.pw_uid, user.pw_gid)
        self._run(
            str(self.bin / "initdb"),
            "-D",
            str(self.root / "data"),
            "-U",
            SCRATCH_SUPERUSER,
            "--auth=trust",
            "-E",
            "UTF8",
            "--locale=C",
            "--no-sync",
        )
        try:
            self._pg_ctl("start")
        except BaseException:
            shutil.rmtree(self.root, ignore_errors=True)
            self.root = None
            raise
        return self

    def _options(self) -> str:
        options = [
            f"-p {self.port}",
            f"-k {self.socket_dir}",
            "-c listen_addresses=''",
            f"-c max_connections={SCRATCH_MAX_CONNECTIONS}",
        ]
        if not self.durable:
            options += ["-c fsync=off", "-c synchronous_commit=off", "-c full_page_writes=off"]
        return " ".join(options)

    def _pg_ctl(self, action: str, *extra: str) -> None:
        assert self.root is not None and self.bin is not None
        self._run(
            str(self.bin / "pg_ctl"),
            "-D",
            str(self.root / "data"),
            "-l",
            str(self.root / "server.log"),
            "-o",
            self._options(),
            "-w",
            "-t",
            str(SCRATCH_START_TIMEOUT_S),
            *extra,
            action,
        )

    def restart(self) -> None:
        """Restart the server abruptly (``immediate``: as after a crash); every open
        connection is cut."""
        self._pg_ctl("restart", "-m", "immediate")

    def halt(self) -> None:
        """Stop the server but keep its data (:meth:`start` is not for restarting)."""
        self._pg_ctl("stop", "-m", "fast")

    def resume(self) -> None:
        """Start the server again after :meth:`halt`, on its data."""
        self._pg_ctl("start")

    def create_database(self, name: str, template: str | None = None) -> str:
        """Create ``name`` (optionally as a copy of ``template``); its URL."""
        import psycopg

        with psycopg.connect(self.url(), autocommit=True) as admin:
            statement = f'CREATE DATABASE "{name}"'
            if template is not None:
                statement += f' TEMPLATE "{template}"'
            admin.execute(statement)  # type: ignore[arg-type]
        return self.url(name)

    def create_schema(self, database: str, name: str) -> str:
        """Create schema ``name`` in ``database``; the URL of a store kept in it. Much
        cheaper than a database per store (no catalog to copy)."""
        import psycopg

        with psycopg.connect(self.url(database), autocommit=True) as admin:
            admin.execute(f'CREATE SCHEMA "{name}"')  # type: ignore[arg-type]
        return self.url(database, name)

    def stop(self) -> None:
        if self.root is None or self.bin is None:
            return
        with contextlib.suppress(ScratchUnavailable, subprocess.SubprocessError):
            self._pg_ctl("stop", "-m", "fast")
        shutil.rmtree(self.root, ignore_errors=True)
        self.root = None

    def __enter__(self) -> ScratchCluster:
        return self.start()

    def __exit__(self, *_: object) -> None:
        self.stop()


def main() -> None:
    """Start a scratch cluster, print its URL, stop it on Ctrl-C or SIGTERM."""
    with ScratchCluster() as cluster:
        print(f"scratch PostgreSQL is running; use --db '{cluster.url()}'", flush=True)
        print("Ctrl-C stops it and deletes its data.", flush=True)
        with contextlib.suppress(KeyboardInterrupt):
            signal.signal(signal.SIGTERM, signal.default_int_handler)
            signal.pause()


if __name__ == "__main__":
    main()
