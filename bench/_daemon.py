"""Shared by the benchmarks: run a real ``soupd start`` in a throw-away directory."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path


@dataclass
class Daemon:
    root: Path
    socket: Path
    process: subprocess.Popen[bytes]

    def soul_file(self, name: str, toml: str = "") -> Path:
        path = self.root / "config" / "soupd" / "souls" / f"{name}.toml"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(toml)
        return path


def soupd_executable() -> str:
    candidate = Path(sys.executable).parent / "soupd"
    return str(candidate) if candidate.exists() else "soupd"


@contextlib.contextmanager
def running_daemon(souls: dict[str, str] | None = None, daemon_toml: str = "") -> Iterator[Daemon]:
    """Start a daemon with the given soul TOMLs; stop it with SIGTERM at the end."""
    root = Path(tempfile.mkdtemp(prefix="soupd-bench-"))
    env = dict(os.environ)
    env.update(
        XDG_CONFIG_HOME=str(root / "config"),
        XDG_STATE_HOME=str(root / "state"),
        XDG_RUNTIME_DIR=str(root / "run"),
    )
    env.pop("SOUPD_SOCKET", None)
    env.pop("SOUPD_CONFIG", None)
    config = root / "config" / "soupd"
    (config / "souls").mkdir(parents=True)
    (config / "soupd.toml").write_text('[log]\nlevel = "warning"\n' + daemon_toml)
    for name, toml in (souls or {"bench": ""}).items():
        (config / "souls" / f"{name}.toml").write_text(toml)
    sock = root / "run" / "soupd" / "soupd.sock"
    log = open(root / "daemon.log", "wb")  # noqa: SIM115 - closed below
    process = subprocess.Popen([soupd_executable(), "start"], env=env, stdout=log, stderr=log)
    try:
        deadline = time.monotonic() + 30
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"daemon exited: {(root / 'daemon.log').read_text()}")
            with contextlib.suppress(OSError):
                probe = socket.socket(socket.AF_UNIX)
                probe.connect(str(sock))
                probe.close()
                break
            if time.monotonic() > deadline:
                raise RuntimeError("daemon did not start within 30 s")
            time.sleep(0.05)
        yield Daemon(root, sock, process)
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(30)
        except subprocess.TimeoutExpired:
            process.kill()
        log.close()
        shutil.rmtree(root, ignore_errors=True)


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    rank = max(0, min(len(ordered) - 1, round(p / 100 * len(ordered) + 0.5) - 1))
    return ordered[rank]
