"""Shared by the benchmarks: run a real ``soupd start`` in a throw-away directory, talk
to it, read its memory use, and print figures as a table or JSON."""

from __future__ import annotations

import contextlib
import json
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
from typing import Any


@dataclass
class Daemon:
    root: Path
    socket: Path
    process: subprocess.Popen[bytes]
    # Seconds from spawning ``soupd start`` until its socket answered daemon.status.
    startup_s: float = 0.0

    def soul_file(self, name: str, toml: str = "") -> Path:
        path = self.root / "config" / "soupd" / "souls" / f"{name}.toml"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(toml)
        return path

    def state(self, soul: str) -> Path:
        """The soul's folder (its ``soul.db``)."""
        return self.root / "state" / "soupd" / "souls" / soul

    def rss_kib(self) -> int:
        return rss_kib(self.process.pid)


def soupd_executable() -> str:
    candidate = Path(sys.executable).parent / "soupd"
    return str(candidate) if candidate.exists() else "soupd"


def rss_kib(pid: int) -> int:
    """VmRSS of ``pid`` from /proc, KiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError(f"no VmRSS for pid {pid}")


@contextlib.contextmanager
def running_daemon(
    souls: dict[str, str] | None = None, daemon_toml: str = "", root: Path | None = None
) -> Iterator[Daemon]:
    """Start a daemon with the given soul TOMLs; stop it with SIGTERM at the end.

    ``root``: a directory to use (and keep) instead of a throw-away one, so that a
    second daemon can start on the state the first one left. Its soul files are
    written only when ``souls`` is given.
    """
    keep = root is not None
    root = root or Path(tempfile.mkdtemp(prefix="soupd-bench-"))
    env = dict(os.environ)
    env.update(
        XDG_CONFIG_HOME=str(root / "config"),
        XDG_STATE_HOME=str(root / "state"),
        XDG_RUNTIME_DIR=str(root / "run"),
    )
    env.pop("SOUPD_SOCKET", None)
    env.pop("SOUPD_CONFIG", None)
    config = root / "config" / "soupd"
    (config / "souls").mkdir(parents=True, exist_ok=True)
    (config / "soupd.toml").write_text('[log]\nlevel = "warning"\n' + daemon_toml)
    if souls is not None or not keep:
        for name, toml in (souls or {"bench": ""}).items():
            (config / "souls" / f"{name}.toml").write_text(toml)
    sock = root / "run" / "soupd" / "soupd.sock"
    log = open(root / "daemon.log", "ab")  # noqa: SIM115 - closed below
    started = time.perf_counter()
    process = subprocess.Popen([soupd_executable(), "start"], env=env, stdout=log, stderr=log)
    try:
        deadline = time.monotonic() + 60
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"daemon exited: {(root / 'daemon.log').read_text()}")
            with contextlib.suppress(OSError):
                with Client(sock) as client:
                    client.call("daemon.status")
                break
            if time.monotonic() > deadline:
                raise RuntimeError("daemon did not start within 60 s")
            time.sleep(0.01)
        yield Daemon(root, sock, process, time.perf_counter() - started)
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(60)
        except subprocess.TimeoutExpired:
            process.kill()
        log.close()
        if not keep:
            shutil.rmtree(root, ignore_errors=True)


class Client:
    """A blocking NDJSON client on one connection, one request at a time."""

    def __init__(self, path: Path) -> None:
        self._sock = socket.socket(socket.AF_UNIX)
        try:
            self._sock.connect(str(path))
        except OSError:
            self._sock.close()
            raise
        self._file = self._sock.makefile("rwb")
        self._ids = 0

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self._file.close()
        self._sock.close()

    def call(self, method: str, params: dict[str, Any] | None = None) -> Any:
        """The request's result; raises RuntimeError on an error reply."""
        return self.send(self.frame(method, params))

    def frame(self, method: str, params: dict[str, Any] | None = None) -> bytes:
        """A request, encoded: made ahead, it costs nothing while a benchmark times
        :meth:`send`."""
        self._ids += 1
        request = {"id": self._ids, "method": method, "params": params or {}}
        return json.dumps(request).encode() + b"\n"

    def send(self, frame: bytes) -> Any:
        """The result of the request ``frame`` (from :meth:`frame`); raises
        RuntimeError on an error reply."""
        self._file.write(frame)
        self._file.flush()
        reply = json.loads(self._file.readline())
        if "error" in reply:
            raise RuntimeError(f"{json.loads(frame)['method']}: {reply['error']}")
        return reply["result"]


def wait_until(condition: Any, what: str, timeout: float = 120.0) -> Any:
    """Poll ``condition()`` until truthy; RuntimeError after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if value := condition():
            return value
        time.sleep(0.05)
    raise RuntimeError(f"timed out after {timeout} s waiting for {what}")


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    rank = max(0, min(len(ordered) - 1, round(p / 100 * len(ordered) + 0.5) - 1))
    return ordered[rank]


def write_json(path: str | None, figures: dict[str, Any]) -> None:
    """Write ``figures`` to ``path`` (``-``: stdout) when a path is given."""
    if path is None:
        return
    text = json.dumps(figures, indent=2, sort_keys=True) + "\n"
    if path == "-":
        sys.stdout.write(text)
    else:
        Path(path).write_text(text)


def machine() -> dict[str, Any]:
    """What the figures were measured on."""
    model = "unknown"
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    return {
        "nproc": len(os.sched_getaffinity(0)),
        "cpu": model,
        "python": sys.version.split()[0],
        "sqlite": __import__("sqlite3").sqlite_version,
    }
