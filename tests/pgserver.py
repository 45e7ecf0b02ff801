"""A throw-away PostgreSQL server for the tests: ``initdb`` into a temp dir, ``postgres``
on loopback (a free port, its unix socket in the same dir, fsync off), stopped at the
end of the session. Debian's ``postgresql`` package provides the binaries
(``/usr/lib/postgresql/<version>/bin``); ``PG_BIN`` may name another folder.

``initdb`` refuses to run as root, and CI runs as root: there every server command runs
as the package's unprivileged ``postgres`` user (``runuser -u postgres --``), in a temp
dir it owns. Nothing is mocked: the store and lease tests talk to this real server.

Without the binaries the PostgreSQL tests are skipped, except in CI (``CI=true``),
where they fail loudly: ``.ci/run`` installs the package when it is missing.
"""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pytest

__all__ = ["PgServer", "find_bin", "missing", "required"]

# The superuser initdb creates, and the only role the tests use (trust on loopback).
USER = "soupd"


def find_bin() -> Path | None:
    """The folder of ``initdb``, ``pg_ctl`` and ``postgres``: ``PG_BIN``, else the
    newest ``/usr/lib/postgresql/*/bin`` that has them."""
    if os.environ.get("PG_BIN"):
        folder = Path(os.environ["PG_BIN"])
        return folder if (folder / "initdb").is_file() else None
    folders = [Path(p).parent for p in glob.glob("/usr/lib/postgresql/*/bin/initdb")]
    found = sorted(folders, key=lambda f: int(f.parent.name) if f.parent.name.isdigit() else 0)
    return found[-1] if found else None


def missing() -> str | None:
    """Why no server can be started here, or None when one can."""
    if find_bin() is None:
        return "PostgreSQL server binaries not found (apt-get install postgresql, or set PG_BIN)"
    if os.geteuid() == 0 and shutil.which("runuser") is None:
        return "running as root, and runuser (to run initdb unprivileged) is missing"
    if os.geteuid() == 0:
        try:
            import pwd

            pwd.getpwnam("postgres")
        except KeyError:
            return "running as root, and there is no unprivileged 'postgres' user for initdb"
    return None


def required() -> None:
    """Skip the test when no server can be started here; in CI (``CI=true``), where
    ``.ci/run`` installs the package, fail it instead."""
    why = missing()
    if why is None:
        return
    if os.environ.get("CI") == "true":
        pytest.fail(f"CI=true and no PostgreSQL: {why}")
    pytest.skip(why)


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@dataclass
class PgServer:
    """A running server; :meth:`start` it, :meth:`stop` it."""

    root: Path  # the temp dir: data/, the socket, the log
    port: int
    bin: Path

    @property
    def dsn(self) -> str:
        return self.dsn_for("postgres")

    def dsn_for(self, database: str) -> str:
        return f"postgresql://{USER}@127.0.0.1:{self.port}/{database}"

    @classmethod
    def start(cls) -> PgServer:
        folder = find_bin()
        assert folder is not None, missing()
        root = Path(tempfile.mkdtemp(prefix="soupd-pg-"))
        server = cls(root, _free_port(), folder)
        if os.geteuid() == 0:
            shutil.chown(root, "postgres", "postgres")
        server._run(
            "initdb", "-D", str(root / "data"), "-U", USER, "--auth=trust", "-E", "UTF8",
            "--locale=C", "--no-sync",
        )  # fmt: skip
        options = (
            f"-c listen_addresses=127.0.0.1 -p {server.port}"
            f" -c unix_socket_directories={root} -c fsync=off -c synchronous_commit=off"
            " -c full_page_writes=off -c max_connections=200"
        )
        try:
            server._run(
                "pg_ctl", "-D", str(root / "data"), "-l", str(root / "log"), "-o", options,
                "-w", "-t", "60", "start",
            )  # fmt: skip
        except subprocess.CalledProcessError as exc:
            log = (root / "log").read_text(errors="replace") if (root / "log").exists() else ""
            raise RuntimeError(f"postgres did not start: {exc.stderr}\n{log}") from exc
        return server

    def stop(self) -> None:
        try:
            self._run("pg_ctl", "-D", str(self.root / "data"), "-m", "immediate", "-w", "stop")
        finally:
            shutil.rmtree(self.root, ignore_errors=True)

    def reload(self) -> None:
        """Have the server read its configuration files again (``pg_ctl reload``)."""
        self._run("pg_ctl", "-D", str(self.root / "data"), "reload")

    def log(self) -> str:
        path = self.root / "log"
        return path.read_text(errors="replace") if path.exists() else ""

    def _run(self, program: str, *args: str) -> None:
        command = [str(self.bin / program), *args]
        if os.geteuid() == 0:
            command = ["runuser", "-u", "postgres", "--", *command]
        subprocess.run(command, check=True, capture_output=True, text=True, timeout=120)
