"""soupd as systemd sees it: sd_notify on a real datagram socket standing in for
systemd's, socket activation with a listening socket passed as fd 3, the directories
systemd creates, and priority-prefixed log lines on the journal's stream."""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from .harness import SOUPD, Connection, Daemon, Home, StartSoupd, request_frame


@contextmanager
def notify_socket(folder: Path) -> Iterator[socket.socket]:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(str(folder / "notify.sock"))
    sock.settimeout(15)
    try:
        yield sock
    finally:
        sock.close()


def messages_until(sock: socket.socket, wanted: str) -> list[str]:
    """Datagrams received until one contains ``wanted`` (fails after the timeout)."""
    seen: list[str] = []
    while not any(wanted in m for m in seen):
        seen.append(sock.recv(4096).decode())
    return seen


def test_notify_ready_reloading_and_stopping(soupd_home: Home, start_soupd: StartSoupd) -> None:
    soupd_home.add_soul("ada")
    with notify_socket(soupd_home.runtime) as systemd:
        soupd_home.extra_env["NOTIFY_SOCKET"] = str(soupd_home.runtime / "notify.sock")
        daemon = start_soupd()
        ready = messages_until(systemd, "READY=1")
        assert "STATUS=1 souls running" in ready[-1]

        daemon.send_signal(signal.SIGHUP)
        reload = messages_until(systemd, "READY=1")
        assert reload[0].startswith("RELOADING=1\nMONOTONIC_USEC=")
        assert int(reload[0].split("MONOTONIC_USEC=")[1]) > 0

        assert daemon.stop() == 0
        assert any("STOPPING=1" in m for m in messages_until(systemd, "STOPPING=1"))


def test_watchdog_pings_while_souls_answer(soupd_home: Home, start_soupd: StartSoupd) -> None:
    soupd_home.add_soul("ada")
    with notify_socket(soupd_home.runtime) as systemd:
        soupd_home.extra_env["NOTIFY_SOCKET"] = str(soupd_home.runtime / "notify.sock")
        soupd_home.extra_env["WATCHDOG_USEC"] = "200000"  # ping every 0.1 s
        start_soupd()
        pings = messages_until(systemd, "WATCHDOG=1")
    assert pings[-1] == "WATCHDOG=1"


def test_socket_activation_uses_the_passed_socket(soupd_home: Home, tmp_path: Path) -> None:
    path = soupd_home.runtime / "activated.sock"
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(path))
    listener.listen()
    # LISTEN_PID must be the daemon's own pid: set it in the process that then becomes
    # the daemon (exec keeps the pid), with the listener as fd 3.
    launcher = (
        "import os, sys; os.dup2(int(sys.argv[1]), 3); "
        "os.environ.update(LISTEN_FDS='1', LISTEN_PID=str(os.getpid())); "
        "os.execv(sys.argv[2], [sys.argv[2], 'start'])"
    )
    env = soupd_home.env | {"SOUPD_SOCKET": str(path)}
    out = (tmp_path / "daemon.out").open("wb")
    process = subprocess.Popen(
        [sys.executable, "-c", launcher, str(listener.fileno()), str(SOUPD)],
        env=env,
        stdout=out,
        stderr=subprocess.STDOUT,
        pass_fds=(listener.fileno(),),
    )
    listener.close()  # the daemon holds it now
    try:
        with Connection(path) as conn:
            conn.send(request_frame(1, "soul.list"))
            assert conn.recv()["result"]["souls"][0]["name"] == "default"
        log = [json.loads(line) for line in (tmp_path / "daemon.out").read_text().splitlines()]
        assert any(e.get("event") == "socket.activated" for e in log)
        process.send_signal(signal.SIGTERM)
        assert process.wait(15) == 0
    finally:
        if process.poll() is None:
            process.kill()
        out.close()
    assert path.exists()  # systemd's socket is left in place


def test_systemd_directories_are_used(soupd_home: Home, start_soupd: StartSoupd) -> None:
    state = soupd_home.root / "var-lib-soupd"
    config = soupd_home.root / "etc-soupd"
    (config / "souls").mkdir(parents=True)
    (config / "souls" / "ops.toml").write_text("")
    soupd_home.extra_env.update(STATE_DIRECTORY=str(state), CONFIGURATION_DIRECTORY=str(config))
    daemon = start_soupd()
    daemon.result("event.push", {"soul": "ops", "text": "hello from systemd"})
    assert (state / "souls" / "ops" / "soul.db").exists()
    assert [s["name"] for s in daemon.result("soul.list")["souls"]] == ["ops"]


def test_log_lines_carry_a_priority_on_the_journal_stream() -> None:
    script = (
        "import os, sys, structlog; "
        "from supervisor.logs import configure_logging; "
        "st = os.fstat(1); os.environ['JOURNAL_STREAM'] = f'{st.st_dev}:{st.st_ino}'; "
        "configure_logging('info', 'auto'); "
        "structlog.get_logger('t').warning('disk.almost_full'); "
        "structlog.get_logger('t').info('soul.turn')"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=60
    )
    warning, info = done.stdout.splitlines()
    assert warning.startswith("<4>{")
    assert json.loads(warning[3:])["event"] == "disk.almost_full"
    assert info.startswith("<6>{")


def test_logs_over_the_socket_and_private_files(soupd_home: Home, start_soupd: StartSoupd) -> None:
    soupd_home.add_soul("ada")
    soupd_home.add_soul("bob")
    daemon = start_soupd()
    daemon.result("event.push", {"soul": "ada", "text": "hello from ada"})
    daemon.result("event.push", {"soul": "bob", "text": "hello from bob"})
    mine = soupd_home.cli("logs", "ada", "-n", "50")
    assert mine.returncode == 0, mine.stderr
    lines = [json.loads(line) for line in mine.stdout.splitlines()]
    assert lines
    assert {line.get("soul") for line in lines} == {"ada"}
    assert any(line["event"] == "soul.reflected" for line in lines)  # soul.turn: debug
    everything = [json.loads(x) for x in soupd_home.cli("logs").stdout.splitlines()]
    assert {"ada", "bob"} <= {line.get("soul") for line in everything}
    # Soul files are the daemon user's alone.
    soul = soupd_home.soul_dir("ada")
    assert soul.stat().st_mode & 0o077 == 0
    assert (soul / "soul.db").stat().st_mode & 0o077 == 0
    assert (soul / "MEMORY.md").stat().st_mode & 0o077 == 0


def test_status_reports_events_per_second(soupd_home: Home, start_soupd: StartSoupd) -> None:
    soupd_home.write_config("[notify]\nstatus_seconds = 0.2\n")
    soupd_home.add_soul("ada")
    with notify_socket(soupd_home.runtime) as systemd:
        soupd_home.extra_env["NOTIFY_SOCKET"] = str(soupd_home.runtime / "notify.sock")
        daemon = start_soupd()
        messages_until(systemd, "READY=1")
        for n in range(5):
            daemon.result("event.push", {"soul": "ada", "text": f"note {n}"})
        seen = messages_until(systemd, "events/s")
        while not any("events/s" in m and " 0 events/s" not in m for m in seen):
            seen.append(systemd.recv(4096).decode())
    assert any(m.startswith("STATUS=1 souls running; ") for m in seen)


def test_logs_follow_prints_new_lines(soupd_home: Home, start_soupd: StartSoupd) -> None:
    soupd_home.add_soul("ada")
    daemon = start_soupd()
    follower = subprocess.Popen(
        [str(SOUPD), "logs", "ada", "-n", "1", "-f"],
        env=soupd_home.env,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert follower.stdout is not None
        follower.stdout.readline()  # the one recent line (start-up)
        daemon.result("event.push", {"soul": "ada", "text": "something new"})
        line = json.loads(follower.stdout.readline())
    finally:
        follower.terminate()
        follower.wait(10)
        if follower.stdout is not None:
            follower.stdout.close()
    assert line["soul"] == "ada"


def test_a_second_signal_forces_the_exit(soupd_home: Home, tmp_path: Path) -> None:
    """A soul stuck in a call (here: an LLM that never answers) holds the graceful stop;
    a second SIGTERM ends the daemon at once, non-zero."""
    silent = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    silent.bind(("127.0.0.1", 0))
    silent.listen()
    port = silent.getsockname()[1]
    soupd_home.add_soul(
        "ada", f'[llm]\nbase_url = "http://127.0.0.1:{port}/v1"\nmodel = "m"\ntimeout = 60.0\n'
    )
    daemon = Daemon.start(soupd_home)
    try:
        with daemon.connect() as conn:
            conn.send(request_frame(1, "event.push", {"soul": "ada", "text": "think about it"}))
            accepted, _ = silent.accept()  # the soul is now waiting on the model
            daemon.send_signal(signal.SIGTERM)
            time.sleep(0.5)
            assert daemon.proc.poll() is None  # still draining, politely
            daemon.send_signal(signal.SIGTERM)
            assert daemon.proc.wait(10) == 1
            accepted.close()
    finally:
        silent.close()
        if daemon.proc.poll() is None:
            daemon.proc.kill()
