"""The socket's limits against hostile local clients, end to end on the real daemon.

* Descriptors: a connection flood past the daemon's open-file limit (set on the daemon
  process with ``setrlimit``) is refused — each excess connection gets one
  ``too_many_connections`` frame naming the limit — and the daemon serves on; running
  out of descriptors at run time makes the listener back off, not crash.
* ``[socket] max_connections`` refuses the excess, and the CLI says why.
* Slow-loris: frames begun and never finished time out (``frame_timeout``), and so do
  connections that sit idle (``idle_timeout``); a subscriber, a client whose requests
  are being worked on and one that keeps talking are left alone.

Every loop here is bounded in count, and every wait by the harness's timeouts.
"""

from __future__ import annotations

import contextlib
import json
import resource
import socket
import subprocess
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from e2e.chatter import conversation, turns
from e2e.harness import (
    REPLY_TIMEOUT,
    SOUPD,
    Daemon,
    Home,
    request_frame,
    wait_for,
)

StartLimited = Callable[..., Daemon]


@pytest.fixture
def start_limited(soupd_home: Home) -> Iterator[StartLimited]:
    """``start_limited(nofile)``: ``soupd start`` whose open-file limit (soft and hard) is
    ``nofile``, set on the daemon process itself; it must stop with exit code 0."""
    daemons: list[Daemon] = []

    def start(nofile: int) -> Daemon:
        home = soupd_home
        home.root.mkdir(parents=True, exist_ok=True)
        log, err = home.root / "daemon-0.out", home.root / "daemon-0.err"

        def limit() -> None:
            resource.setrlimit(resource.RLIMIT_NOFILE, (nofile, nofile))

        with log.open("wb") as out, err.open("wb") as errors:
            proc = subprocess.Popen(
                [str(SOUPD), "start"],
                env=home.env,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=errors,
                start_new_session=True,
                preexec_fn=limit,  # the test process runs no threads of its own here
            )
        daemon = Daemon(home, proc, log, err)
        daemons.append(daemon)
        wait_for(lambda: ready(daemon), "the daemon to be ready")
        return daemon

    yield start
    for daemon in daemons:
        if daemon.proc.poll() is None:
            code = daemon.stop()
            assert code == 0, f"soupd exited with {code} on SIGTERM:\n{daemon.output()}"


def ready(daemon: Daemon) -> bool:
    assert daemon.proc.poll() is None, daemon.output()
    return any(e.get("event") == "daemon.ready" for e in daemon.log())


def open_files(pid: int) -> int:
    return len(list(Path(f"/proc/{pid}/fd").iterdir()))


def connect(path: Path) -> socket.socket:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(REPLY_TIMEOUT)
    sock.connect(str(path))
    return sock


def first_reply(sock: socket.socket) -> dict[str, Any] | None:
    """The first reply line on ``sock``; None when the daemon closed without one."""
    data = b""
    with contextlib.suppress(ConnectionResetError):
        while b"\n" not in data:
            chunk = sock.recv(1 << 16)
            if not chunk:
                break
            data += chunk
    line = data.partition(b"\n")[0]
    return json.loads(line) if line else None


def ask_each(socks: list[socket.socket], soul: str, seed: int) -> list[dict[str, Any] | None]:
    """On every connection, push one chat line and read one reply (or the refusal the
    daemon sent unasked)."""
    lines = turns(seed, len(socks))
    for i, sock in enumerate(socks):
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            sock.sendall(
                request_frame(
                    i, "event.push", {"soul": soul, "text": lines[i], "ref": f"w{seed}-{i}"}
                )
            )
    return [first_reply(sock) for sock in socks]


def connections(daemon: Daemon) -> int | None:
    """Connections the daemon serves (this one included); None while it refuses more."""
    with contextlib.closing(connect(daemon.home.socket)) as sock:
        sock.sendall(request_frame(1, "daemon.status"))
        reply = first_reply(sock)
    if reply is None or "error" in reply:
        assert reply is None or reply["error"]["code"] == "too_many_connections", reply
        return None
    return int(reply["result"]["connections"])


def close_all(socks: list[socket.socket]) -> None:
    for sock in socks:
        sock.close()


def code(reply: dict[str, Any] | None) -> str:
    if reply is None:
        return "closed"
    return reply["error"]["code"] if "error" in reply else reply["result"]["status"]


# --- descriptors ------------------------------------------------------------------------


NOFILE = 256


def test_a_flood_past_the_open_file_limit_is_refused_and_the_daemon_serves_on(
    soupd_home: Home, start_limited: StartLimited
) -> None:
    soupd_home.add_soul("alpha")
    daemon = start_limited(NOFILE)
    chat = turns(7, 8)
    waves, per_wave = 3, NOFILE + NOFILE // 5  # 1.2 times what the process may open
    with daemon.connect() as regular:
        assert regular.result("event.push", {"soul": "alpha", "text": chat[0]})["status"] == (
            "stored"
        )
        stored = 1
        for wave in range(waves):
            socks = [connect(soupd_home.socket) for _ in range(per_wave)]
            try:
                # In the middle of the flood an established client is served as usual.
                push = {"soul": "alpha", "text": chat[wave + 1], "ref": f"regular-{wave}"}
                assert regular.result("event.push", push)["status"] == "stored"
                replies = ask_each(socks, "alpha", seed=wave)
            finally:
                close_all(socks)
            codes = Counter(code(reply) for reply in replies)
            assert set(codes) == {"stored", "too_many_connections"}, codes
            # Served: as many as three quarters of the limit allows, less the regular one.
            assert 0 < codes["stored"] <= NOFILE * 3 // 4 - 1, codes
            refusal = next(r for r in replies if code(r) == "too_many_connections")
            assert refusal is not None
            assert refusal["id"] is None
            message = refusal["error"]["message"]
            assert "open-file limit" in message or "max_connections" in message, message
            assert "connect again" in message
            stored += codes["stored"] + 1
            assert daemon.proc.poll() is None, daemon.output()
            wait_for(
                lambda: connections(daemon) == 2,  # regular, this
                "the flood's connections to be closed",
            )
        assert regular.result("soul.stats", {"soul": "alpha"})["events"] == stored
    assert open_files(daemon.pid) < NOFILE // 2  # every refused descriptor was closed
    warnings = [e for e in daemon.log() if e.get("event") == "socket.connection_refused"]
    assert warnings
    assert all(e["count"] >= 1 and e["level"] == "warning" for e in warnings)
    assert not [e for e in daemon.log() if e.get("event") == "child.crashed"], daemon.output()


def test_out_of_descriptors_the_listener_backs_off_and_keeps_serving(
    soupd_home: Home, start_limited: StartLimited
) -> None:
    soupd_home.add_soul("alpha", "[lifecycle]\nhibernate_after = 0\n")
    daemon = start_limited(4096)  # room for max_connections (512) and more
    chat = turns(21, 6)
    with daemon.connect() as regular:
        regular.result("event.push", {"soul": "alpha", "text": chat[0]})
        # Something else took the descriptors: only a handful are left for connections.
        spare = 6
        limit = open_files(daemon.pid) + spare
        resource.prlimit(daemon.pid, resource.RLIMIT_NOFILE, (limit, 4096))
        socks = [connect(soupd_home.socket) for _ in range(40)]
        try:
            assert regular.result("event.push", {"soul": "alpha", "text": chat[1]})["status"] == (
                "stored"
            )
            replies = ask_each(socks, "alpha", seed=99)
        finally:
            close_all(socks)
        codes = Counter(code(reply) for reply in replies)
        assert set(codes) <= {"stored", "too_many_connections"}, codes
        assert codes["too_many_connections"] >= 40 - spare, codes
        refusal = next(r for r in replies if code(r) == "too_many_connections")
        assert refusal is not None
        assert "run out of file descriptors" in refusal["error"]["message"]
        assert f"open-file limit {limit}" in refusal["error"]["message"]

        # Descriptors back: the listener, backed off, takes connections again.
        resource.prlimit(daemon.pid, resource.RLIMIT_NOFILE, (4096, 4096))
        wait_for(lambda: connections(daemon) == 2, "the closes")
        again = [connect(soupd_home.socket) for _ in range(20)]
        try:
            assert Counter(code(r) for r in ask_each(again, "alpha", seed=100)) == {"stored": 20}
        finally:
            close_all(again)
        assert regular.result("event.push", {"soul": "alpha", "text": chat[2]})["status"] == (
            "stored"
        )
    events = [e for e in daemon.log() if e.get("event") == "socket.descriptors_exhausted"]
    assert events
    assert events[0]["error"] == "EMFILE"
    assert events[0]["backoff_s"] > 0
    assert not [e for e in daemon.log() if e.get("event") == "child.crashed"], daemon.output()


def test_max_connections_refuses_the_excess_and_the_cli_says_why(
    soupd_home: Home, start_limited: StartLimited
) -> None:
    soupd_home.write_config("[socket]\nmax_connections = 3\n")
    soupd_home.add_soul("alpha")
    daemon = start_limited(1024)
    held = [daemon.connect() for _ in range(3)]
    try:
        for i, conn in enumerate(held):
            conn.result("event.push", {"soul": "alpha", "text": turns(3, 3)[i]})
        cli = soupd_home.cli("status")
        assert cli.returncode == 1, cli
        assert "too_many_connections" in cli.stderr
        assert "max_connections = 3" in cli.stderr
        assert "close idle connections" in cli.stderr
    finally:
        held.pop().close()
    try:
        wait_for(lambda: soupd_home.cli("status").returncode == 0, "a free slot for the CLI")
    finally:
        for conn in held:
            conn.close()


# --- slow-loris -------------------------------------------------------------------------


def loris_toml(frame: float, idle: float) -> str:
    return f"[socket]\nframe_timeout = {frame}\nidle_timeout = {idle}\n"


def stalled_frame(seed: int, cut: float) -> bytes:
    """A push of a real chat transcript, cut off at ``cut`` of its length."""
    frame = request_frame(seed, "event.push", {"soul": "alpha", "text": conversation(seed, 3000)})
    return frame[: int(len(frame) * cut)]


def test_frames_that_never_end_time_out_and_nothing_is_stored(
    soupd_home: Home, start_limited: StartLimited
) -> None:
    soupd_home.write_config(loris_toml(frame=1.0, idle=60.0))
    soupd_home.add_soul("alpha")
    daemon = start_limited(1024)
    before = daemon.counts("alpha")[0]
    stalled = [connect(soupd_home.socket) for _ in range(40)]
    big = [connect(soupd_home.socket) for _ in range(6)]
    trickle = connect(soupd_home.socket)
    stop = threading.Event()

    def drip() -> None:
        # A byte at a time, a few a second: progress, but the frame never ends.
        with contextlib.suppress(OSError):
            for byte in stalled_frame(500, 1.0)[:200]:
                if stop.wait(0.1):
                    return
                trickle.send(bytes([byte]))

    dripper = threading.Thread(target=drip, daemon=True)
    try:
        for i, sock in enumerate(stalled):
            sock.sendall(stalled_frame(i, 0.2 + 0.6 * i / len(stalled)))
        long = request_frame(
            "big", "event.push", {"soul": "alpha", "text": conversation(77, 700_000)}
        )
        assert len(long) > 900_000
        for sock in big:  # most of a frame's cap, then nothing
            sock.sendall(long[:900_000])
        dripper.start()
        # Meanwhile a client that finishes its frames is served.
        with daemon.connect() as regular:
            for i, line in enumerate(turns(8, 5)):
                push = {"soul": "alpha", "text": line, "ref": f"r{i}"}
                assert regular.result("event.push", push)["status"] == "stored"
        replies = [first_reply(sock) for sock in [*stalled, *big, trickle]]
    finally:
        stop.set()
        close_all([*stalled, *big, trickle])
    for reply in replies:
        assert reply is not None
        assert reply["id"] is None, reply
        assert reply["error"]["code"] == "frame_timeout", reply
        assert "frame_timeout" in reply["error"]["message"]
        assert "one complete line" in reply["error"]["message"]
    assert daemon.counts("alpha")[0] == before + 5
    wait_for(lambda: connections(daemon) == 1, "the closes")
    logged = [e for e in daemon.log() if e.get("event") == "socket.frame_timeout"]
    assert logged  # a line a second at most, with how many there were
    assert sum(e["count"] for e in logged) <= len(replies)


def test_idle_connections_are_closed_and_busy_ones_are_not(
    soupd_home: Home, start_limited: StartLimited
) -> None:
    idle = 1.5
    soupd_home.write_config(loris_toml(frame=5.0, idle=idle))
    soupd_home.add_soul("alpha")
    daemon = start_limited(1024)
    silent = [connect(soupd_home.socket) for _ in range(30)]
    # One that asked something and read the answer, then fell silent.
    talked = daemon.connect()
    talked.result("soul.stats", {"soul": "alpha"})
    subscriber = daemon.connect()
    subscriber.send(request_frame("sub", "subscribe", {"souls": ["alpha"]}))
    assert subscriber.recv()["result"]["subscribed"] is True
    chatty = daemon.connect()
    started = time.monotonic()
    chat = turns(31, 12)
    try:
        # A client that keeps talking, a little slower than nothing at all would be
        # noticed, is never idle: three idle periods go by.
        i = 0
        while time.monotonic() - started < 3 * idle and i < len(chat):
            assert chatty.result("event.push", {"soul": "alpha", "text": chat[i]})["status"] == (
                "stored"
            )
            i += 1
            time.sleep(idle / 3)
        replies = [first_reply(sock) for sock in silent]
        talked_reply = talked.recv()
        # The subscriber is still there: it hears what the soul says.
        chatty.result("reflect", {"soul": "alpha"})
        heard = subscriber.recv()
        assert heard["id"] == "sub", heard
        assert heard["output"]["soul"] == "alpha", heard
        assert chatty.result("soul.stats", {"soul": "alpha"})["events"] == i
    finally:
        close_all(silent)
        for conn in (talked, subscriber, chatty):
            conn.close()
    for reply in [*replies, talked_reply]:
        assert reply is not None
        assert reply["id"] is None, reply
        assert reply["error"]["code"] == "idle_timeout", reply
        assert "idle_timeout" in reply["error"]["message"]
    wait_for(lambda: connections(daemon) == 1, "the closes")
    events = {e.get("event") for e in daemon.log()}
    assert "socket.idle_timeout" in events
    assert "socket.frame_timeout" not in events


def test_half_frames_pin_no_more_than_max_partial_total(
    soupd_home: Home, start_limited: StartLimited
) -> None:
    # Eight peers each send most of a 1 MiB frame and stop; the daemon keeps at most
    # max_partial_total of them (plus the chunk each read was taking), reads the rest
    # only as room comes, still serves a client that finishes its frames, and times
    # every one of them out.
    partial = 2 << 20
    soupd_home.write_config(
        loris_toml(frame=3.0, idle=60.0)
        + f"max_buffered_total = {16 << 20}\nmax_partial_total = {partial}\n"
    )
    soupd_home.add_soul("alpha")
    daemon = start_limited(1024)
    long = request_frame("big", "event.push", {"soul": "alpha", "text": conversation(78, 700_000)})
    peers = [connect(soupd_home.socket) for _ in range(8)]
    sent = [0] * len(peers)
    try:
        for sock in peers:
            sock.setblocking(False)
        held = []
        deadline = time.monotonic() + 1.5
        while time.monotonic() < deadline:
            for i, sock in enumerate(peers):
                with contextlib.suppress(BlockingIOError):
                    sent[i] += sock.send(long[sent[i] : 900_000])
            with daemon.connect() as probe:
                status = probe.result("daemon.status", {})
            held.append(status["partial_bytes"])
            # One frame may go on past the cap (so that some frame always completes).
            assert status["partial_bytes"] <= partial + 900_000 + len(peers) * 65536, status
            assert status["buffered_bytes"] >= status["partial_bytes"]
            time.sleep(0.05)
        assert max(held) >= partial // 2  # the frames were being kept, up to the cap
        assert sum(sent) > partial + 900_000 + len(peers) * 65536  # more than may be held
        with daemon.connect() as regular:
            for i, line in enumerate(turns(9, 3)):
                push = {"soul": "alpha", "text": line, "ref": f"p{i}"}
                assert regular.result("event.push", push)["status"] == "stored"
        for sock in peers:
            sock.setblocking(True)
            sock.settimeout(REPLY_TIMEOUT)
        replies = [first_reply(sock) for sock in peers]
    finally:
        close_all(peers)
    assert [code(reply) for reply in replies] == ["frame_timeout"] * len(peers)
    with daemon.connect() as probe:
        wait_for(
            lambda: probe.result("daemon.status", {})["partial_bytes"] == 0,
            "the half frames to be let go",
        )


def test_a_frame_that_fills_the_partial_budget_alone_still_completes(
    soupd_home: Home, start_limited: StartLimited
) -> None:
    # The frame's own bytes fill max_partial_total before its newline comes: it must
    # not wait for room only it could free.
    size = 65536
    soupd_home.write_config(
        loris_toml(frame=5.0, idle=60.0)
        + f"max_frame_bytes = {size}\nmax_partial_total = {size}\nmax_buffered_bytes = {size}\n"
    )
    soupd_home.add_soul("alpha")
    daemon = start_limited(1024)
    # A valid push whose ref pads it to the cap exactly.
    body = {"soul": "alpha", "text": turns(10, 1)[0], "ref": ""}
    pad = size - len(json.dumps({"id": 1, "method": "event.push", "params": body}).encode())
    body["ref"] = "r" * pad
    frame = json.dumps({"id": 1, "method": "event.push", "params": body}).encode()
    assert len(frame) == size
    with contextlib.closing(connect(soupd_home.socket)) as sock:
        sock.sendall(frame)
        time.sleep(0.5)  # the daemon holds all of it, the budget is full
        sock.sendall(b"\n")
        reply = first_reply(sock)
    assert reply is not None
    assert reply["id"] == 1, reply  # answered, not timed out
    assert code(reply) == "stored", reply
    assert daemon.counts("alpha")[0] == 1
