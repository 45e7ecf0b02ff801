"""A real ``soupd start`` in a subprocess, and a raw client for its Unix socket.

The end-to-end tests use nothing of soupd's own code to talk to it: frames are built
with the standard ``json`` module and written to a plain blocking socket, so a bug in
the product's client or codec cannot hide a bug in its server.

Every wait here is bounded (``READY_TIMEOUT``, ``STOP_TIMEOUT``, ``REPLY_TIMEOUT``) and
none is a measurement: the tests never assert how fast anything is.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = [
    "FAULT_INJECTION",
    "SOUPD",
    "Connection",
    "Daemon",
    "Home",
    "StartSoupd",
    "pipelined_pushes",
    "request_frame",
    "running",
    "wait_for",
]

# The console script installed next to this interpreter (soupd has no ``__main__``).
SOUPD = Path(sys.executable).parent / "soupd"
READY_TIMEOUT = 15.0
STOP_TIMEOUT = 15.0
REPLY_TIMEOUT = 15.0
CLI_TIMEOUT = 30.0
# A soupd.toml that turns on debug.crash (served only with this switch).
FAULT_INJECTION = "[testing]\nfault_injection = true\n"


def request_frame(id: Any, method: str, params: Any = None) -> bytes:
    """One request line as the protocol defines it (``params`` omitted when None)."""
    body: dict[str, Any] = {"id": id, "method": method}
    if params is not None:
        body["params"] = params
    return json.dumps(body, ensure_ascii=False).encode() + b"\n"


@dataclass
class Home:
    """The XDG directories one daemon uses; they outlive the daemon so it can restart.

    The runtime directory sits in a short private folder under /tmp because a Unix
    socket path may not exceed 107 bytes (pytest's tmp paths can get close).
    """

    root: Path
    runtime: Path = field(default_factory=lambda: Path(tempfile.mkdtemp(prefix="sd-", dir="/tmp")))
    # Extra environment for the daemon and the CLI (e.g. SOUPD_SOCKET, SOUPD_CONFIG).
    extra_env: dict[str, str] = field(default_factory=dict)

    @property
    def config_dir(self) -> Path:
        return self.root / "config" / "soupd"

    @property
    def state_dir(self) -> Path:
        return self.root / "state" / "soupd"

    @property
    def socket(self) -> Path:
        """Where the daemon listens: $SOUPD_SOCKET if set, else the XDG default."""
        override = self.extra_env.get("SOUPD_SOCKET")
        return Path(override) if override else self.runtime / "soupd" / "soupd.sock"

    @property
    def env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if k not in ("SOUPD_SOCKET", "SOUPD_CONFIG")}
        env.update(
            XDG_CONFIG_HOME=str(self.root / "config"),
            XDG_STATE_HOME=str(self.root / "state"),
            XDG_RUNTIME_DIR=str(self.runtime),
        )
        env.update(self.extra_env)
        return env

    def write_config(self, text: str) -> Path:
        """Write ``soupd.toml``."""
        self.config_dir.mkdir(parents=True, exist_ok=True)
        path = self.config_dir / "soupd.toml"
        path.write_text(text, encoding="utf-8")
        return path

    def add_soul(self, name: str, text: str = "") -> Path:
        """Write ``souls/<name>.toml`` (empty: every default)."""
        souls = self.config_dir / "souls"
        souls.mkdir(parents=True, exist_ok=True)
        path = souls / f"{name}.toml"
        path.write_text(text, encoding="utf-8")
        return path

    def soul_dir(self, name: str) -> Path:
        """Database and (by default) brain directory of a soul."""
        return self.state_dir / "souls" / name

    def cli(self, *args: str | os.PathLike[str]) -> subprocess.CompletedProcess[str]:
        """Run ``soupd ARGS`` as a client against this home; never raises on exit code."""
        return subprocess.run(
            [str(SOUPD), *map(str, args)],
            env=self.env,
            capture_output=True,
            text=True,
            timeout=CLI_TIMEOUT,
            check=False,
        )

    def cleanup(self) -> None:
        shutil.rmtree(self.runtime, ignore_errors=True)


class Sender(threading.Thread):
    """Writes bytes to a socket from a thread, 64 KiB per ``sendall``: the socket's
    timeout then bounds each piece, not the whole (a flood may take longer than that
    to get in). The daemon going away (a broken or reset connection) ends it quietly;
    a piece the daemon takes nothing of within the timeout is a failure, which
    :meth:`join` raises."""

    def __init__(self, sock: socket.socket, data: bytes) -> None:
        super().__init__(daemon=True)
        self._sock, self._data = sock, data
        self.error: OSError | None = None

    def run(self) -> None:
        try:
            for start in range(0, len(self._data), 1 << 16):
                self._sock.sendall(self._data[start : start + (1 << 16)])
        except (BrokenPipeError, ConnectionResetError):
            pass
        except OSError as exc:
            self.error = exc

    def join(self, timeout: float | None = None) -> None:
        super().join(timeout)
        if self.error is not None:
            raise AssertionError(
                f"the daemon stopped reading: a write got nowhere in {self._sock.gettimeout()} s"
            ) from self.error


class Connection:
    """One client connection: write raw bytes, read reply frames one at a time."""

    def __init__(self, path: Path) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(REPLY_TIMEOUT)
        try:
            self.sock.connect(str(path))
        except BaseException:
            self.sock.close()
            raise
        self._buffer = b""
        self._ids = iter(range(1, 1 << 62))

    def __enter__(self) -> Connection:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self.sock.close()

    def send(self, data: bytes) -> None:
        self.sock.sendall(data)

    def send_in_background(self, data: bytes) -> Sender:
        """Write ``data`` from a thread, so that replies can be read while it is sent
        (the daemon stops reading a connection whose replies nobody collects)."""
        sender = Sender(self.sock, data)
        sender.start()
        return sender

    def recv(self) -> dict[str, Any]:
        """The next reply frame, decoded. Fails the test after ``REPLY_TIMEOUT``."""
        frame = self.recv_frame()
        if frame is None:
            raise AssertionError("the daemon closed the connection before replying")
        return json.loads(frame)  # type: ignore[no-any-return]

    def recv_frame(self) -> bytes | None:
        """The next raw reply line without its newline; None at end of stream."""
        while b"\n" not in self._buffer:
            chunk = self.sock.recv(1 << 16)
            if not chunk:
                return None
            self._buffer += chunk
        frame, _, self._buffer = self._buffer.partition(b"\n")
        return frame

    def replies(self) -> Iterator[dict[str, Any]]:
        """Every reply until the daemon closes the connection."""
        while (frame := self.recv_frame()) is not None:
            yield json.loads(frame)

    def call(self, method: str, params: Any = None) -> dict[str, Any]:
        """Send one request and return its whole reply (``result`` or ``error``)."""
        request_id = next(self._ids)
        self.send(request_frame(request_id, method, params if params is not None else {}))
        reply = self.recv()
        assert reply.get("id") == request_id, reply
        return reply

    def result(self, method: str, params: Any = None) -> Any:
        """Send one request and return its result; fails the test on an error reply."""
        reply = self.call(method, params)
        assert "error" not in reply, reply
        return reply["result"]


class Daemon:
    """A running ``soupd start`` process; create with :meth:`start`, end with :meth:`stop`."""

    def __init__(self, home: Home, proc: subprocess.Popen[bytes], log: Path, err: Path) -> None:
        self.home = home
        self.proc = proc
        self.log_path = log
        self.err_path = err

    @classmethod
    def start(cls, home: Home, *args: str) -> Daemon:
        """Start the daemon and return once it is ready (socket accepts, ready logged)."""
        home.root.mkdir(parents=True, exist_ok=True)
        count = len(list(home.root.glob("daemon-*.out")))
        log, err = home.root / f"daemon-{count}.out", home.root / f"daemon-{count}.err"
        with log.open("wb") as out, err.open("wb") as errors:
            proc = subprocess.Popen(
                [str(SOUPD), *args, "start"],
                env=home.env,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=errors,
                start_new_session=True,  # a ^C on pytest must not reach it
            )
        daemon = cls(home, proc, log, err)
        daemon._wait_ready()
        return daemon

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + READY_TIMEOUT
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise AssertionError(f"soupd exited with {self.proc.returncode}:\n{self.output()}")
            if self._accepts() and any(e.get("event") == "daemon.ready" for e in self.log()):
                return
            time.sleep(0.02)
        self._kill()
        raise AssertionError(f"soupd not ready within {READY_TIMEOUT} s:\n{self.output()}")

    def _accepts(self) -> bool:
        try:
            Connection(self.home.socket).close()
        except OSError:
            return False
        return True

    @property
    def pid(self) -> int:
        return self.proc.pid

    def connect(self) -> Connection:
        return Connection(self.home.socket)

    def call(self, method: str, params: Any = None) -> dict[str, Any]:
        """One request on a fresh connection; the whole reply."""
        with self.connect() as conn:
            return conn.call(method, params)

    def result(self, method: str, params: Any = None) -> Any:
        """One request on a fresh connection; its result (an error reply fails the test)."""
        with self.connect() as conn:
            return conn.result(method, params)

    def push(self, soul: str, text: str, **fields: Any) -> dict[str, Any]:
        return self.result("event.push", {"soul": soul, "text": text, **fields})  # type: ignore[no-any-return]

    def recall(self, soul: str, query: str, **fields: Any) -> list[dict[str, Any]]:
        return self.result("recall", {"soul": soul, "query": query, **fields})["items"]  # type: ignore[no-any-return]

    def counts(self, soul: str) -> tuple[int, int]:
        """(events, memories) as ``soul.stats`` reports them."""
        stats = self.result("soul.stats", {"soul": soul})
        return stats["events"], stats["memories"]

    def log(self) -> list[dict[str, Any]]:
        """The JSON log lines written so far (a partial last line is skipped)."""
        events = []
        for line in self.log_path.read_bytes().splitlines():
            try:
                events.append(json.loads(line))
            except ValueError:
                continue
        return events

    def output(self) -> str:
        return (
            f"--- stdout ---\n{self.log_path.read_text(errors='replace')[-4000:]}"
            f"\n--- stderr ---\n{self.err_path.read_text(errors='replace')[-4000:]}"
        )

    def send_signal(self, signum: int) -> None:
        if self.proc.poll() is None:
            os.kill(self.proc.pid, signum)

    def wait(self, timeout: float = STOP_TIMEOUT) -> int:
        """The exit code; kills the process and fails the test if it does not exit in time."""
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self._kill()
            raise AssertionError(
                f"soupd did not exit within {timeout} s; killed it:\n{self.output()}"
            ) from None

    def stop(self, signum: int = signal.SIGTERM) -> int:
        """Send ``signum`` and return the exit code."""
        self.send_signal(signum)
        return self.wait()

    def _kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()


def wait_for(condition: Callable[[], Any], what: str, timeout: float = READY_TIMEOUT) -> Any:
    """Poll ``condition`` until it returns something truthy; fail after ``timeout``."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out after {timeout} s waiting for {what}")


# What the ``start_soupd`` fixture is: start a daemon (global CLI args) and return it.
StartSoupd = Callable[..., Daemon]


def pipelined_pushes(soul: str, texts: Iterable[tuple[str, str]], first_id: int = 1) -> bytes:
    """Push frames for (ref, text) pairs, ids counting up from ``first_id``, in one blob."""
    return b"".join(
        request_frame(first_id + i, "event.push", {"soul": soul, "text": text, "ref": ref})
        for i, (ref, text) in enumerate(texts)
    )


@contextmanager
def running(home: Home, *args: str) -> Iterator[Daemon]:
    """A daemon for the block; on exit it must stop on SIGTERM with exit code 0."""
    daemon = Daemon.start(home, *args)
    try:
        yield daemon
    finally:
        if daemon.proc.poll() is None:
            code = daemon.stop()
            assert code == 0, f"soupd exited with {code} on SIGTERM:\n{daemon.output()}"
