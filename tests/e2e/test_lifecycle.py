"""Start, stop, restart, crash: the daemon's life as an operator sees it (DESIGN §2)."""

from __future__ import annotations

import json
import signal
import stat
from typing import Any

import pytest

from e2e.harness import (
    FAULT_INJECTION,
    Daemon,
    Home,
    StartSoupd,
    pipelined_pushes,
    request_frame,
    wait_for,
)


def soul_row(daemon: Daemon, name: str) -> dict[str, Any]:
    (row,) = [s for s in daemon.result("soul.list")["souls"] if s["name"] == name]
    return row  # type: ignore[no-any-return]


def test_socket_is_private_and_removed_on_sigterm(
    soupd_home: Home, start_soupd: StartSoupd
) -> None:
    daemon = start_soupd()

    info = soupd_home.socket.lstat()
    assert stat.S_ISSOCK(info.st_mode)
    assert stat.S_IMODE(info.st_mode) == 0o600
    assert stat.S_IMODE(soupd_home.socket.parent.stat().st_mode) == 0o700
    events = [e["event"] for e in daemon.log()]
    assert "daemon.ready" in events

    assert daemon.stop(signal.SIGTERM) == 0
    assert not soupd_home.socket.exists()
    assert "daemon.stopping" in [e["event"] for e in daemon.log()]


def test_sigint_stops_cleanly(start_soupd: StartSoupd) -> None:
    daemon = start_soupd()
    daemon.push("default", "an event before SIGINT")

    assert daemon.stop(signal.SIGINT) == 0


def test_no_soul_files_means_one_default_soul(start_soupd: StartSoupd) -> None:
    daemon = start_soupd()

    souls = daemon.result("soul.list")["souls"]
    # Hibernating until its first message: its database is not even opened yet.
    assert [(s["name"], s["state"], s["restarts"]) for s in souls] == [
        ("default", "hibernating", 0)
    ]
    status = daemon.result("daemon.status")
    assert status["pid"] == daemon.pid
    assert status["souls"] == 1
    assert status["souls_failed"] == 0


def test_data_and_context_survive_a_restart(soupd_home: Home, start_soupd: StartSoupd) -> None:
    soupd_home.add_soul("alpha")
    first = start_soupd()
    (soupd_home.soul_dir("alpha") / "SOUL.md").write_text("I am Alpha.\n", encoding="utf-8")
    first.push("alpha", "The staging database moved to host db-7", ref="mv-1")
    first.push("alpha", "天气预报说明天下雨")
    context = first.result("context", {"soul": "alpha", "query": "staging database"})
    assert first.stop() == 0

    second = start_soupd()

    assert second.counts("alpha") == (2, 2)
    (item,) = second.recall("alpha", "databases staging")
    assert item["refs"] == ["mv-1"]
    assert [i["text"] for i in second.recall("alpha", "下雨")] == ["天气预报说明天下雨"]
    assert second.push("alpha", "moved again", ref="mv-1")["status"] == "duplicate"
    assert second.result("context", {"soul": "alpha", "query": "staging database"}) == context


def test_second_start_on_the_same_socket_fails_and_the_first_keeps_running(
    soupd_home: Home, start_soupd: StartSoupd
) -> None:
    first = start_soupd()
    first.push("default", "written by the first daemon")

    second = soupd_home.cli("start")

    assert second.returncode != 0
    lines = second.stderr.strip().splitlines()
    assert len(lines) == 1, second.stderr
    assert "already listening" in lines[0]
    assert str(soupd_home.socket) in lines[0]
    assert first.proc.poll() is None
    assert soupd_home.socket.exists()
    assert first.result("daemon.status")["pid"] == first.pid
    assert first.push("default", "still taking events")["status"] == "stored"
    assert first.counts("default") == (2, 2)


def test_config_file_and_socket_from_the_environment(
    soupd_home: Home, start_soupd: StartSoupd
) -> None:
    elsewhere = soupd_home.root / "etc"
    (elsewhere / "souls").mkdir(parents=True)
    (elsewhere / "souls" / "gamma.toml").write_text("[recall]\nk = 2\n")
    config = elsewhere / "daemon.toml"
    config.write_text('[paths]\nstate_dir = "var"\n')  # relative to the config file
    socket = soupd_home.runtime / "custom.sock"
    soupd_home.extra_env.update(SOUPD_CONFIG=str(config), SOUPD_SOCKET=str(socket))

    daemon = start_soupd()

    assert stat.S_IMODE(socket.lstat().st_mode) == 0o600
    assert [s["name"] for s in daemon.result("soul.list")["souls"]] == ["gamma"]
    status = daemon.result("daemon.status")
    assert (status["socket"], status["config_file"]) == (str(socket), str(config))
    for n in range(3):
        daemon.push("gamma", f"gamma note {n}")
    assert len(daemon.recall("gamma", "note")) == 2  # k from gamma.toml
    assert (elsewhere / "var" / "souls" / "gamma" / "soul.db").exists()
    assert not soupd_home.state_dir.exists()
    assert json.loads(soupd_home.cli("--json", "status").stdout)["pid"] == daemon.pid


def test_bad_config_stops_start_with_the_key_path(soupd_home: Home) -> None:
    soupd_home.write_config('[socket]\nmodee = "0600"\n')

    result = soupd_home.cli("start")

    assert result.returncode == 2
    assert "soupd.toml" in result.stderr
    assert "socket.modee" in result.stderr
    assert not soupd_home.socket.exists()


def test_crashed_soul_is_restarted_keeps_its_data_and_siblings_do_not_notice(
    soupd: Daemon,
) -> None:
    soupd.push("alpha", "alpha remembers the lighthouse", ref="a-1")
    soupd.push("beta", "beta remembers the harbour", ref="b-1")

    assert soupd.result("debug.crash", {"soul": "alpha"}) == {"crashing": "alpha"}

    wait_for(
        lambda: (row := soul_row(soupd, "alpha"))["restarts"] >= 1 and row["state"] == "running",
        "alpha to be restarted",
    )
    alpha = soul_row(soupd, "alpha")
    assert alpha["restarts"] == 1
    assert [i["refs"] for i in soupd.recall("alpha", "lighthouse")] == [["a-1"]]
    assert soupd.push("alpha", "alpha after the crash")["status"] == "stored"
    assert soupd.counts("alpha") == (2, 2)

    beta = soul_row(soupd, "beta")
    assert (beta["state"], beta["restarts"]) == ("running", 0)
    assert [i["refs"] for i in soupd.recall("beta", "harbour")] == [["b-1"]]
    assert soupd.push("beta", "beta carries on")["status"] == "stored"


def test_mail_queued_behind_a_crash_is_either_stored_or_refused(soupd: Daemon) -> None:
    frames = [
        request_frame(i, "event.push", {"soul": "alpha", "text": f"before {i}", "ref": f"r-{i}"})
        for i in range(1, 21)
    ]
    frames.append(request_frame("crash", "debug.crash", {"soul": "alpha"}))
    frames += [
        request_frame(i, "event.push", {"soul": "alpha", "text": f"after {i}", "ref": f"r-{i}"})
        for i in range(21, 41)
    ]
    with soupd.connect() as conn:
        conn.send(b"".join(frames))
        replies = {r["id"]: r for r in (conn.recv() for _ in range(len(frames)))}

    assert replies.pop("crash")["result"] == {"crashing": "alpha"}
    stored = {f"r-{i}" for i, r in replies.items() if r.get("result", {}).get("status") == "stored"}
    refused = {f"r-{i}" for i, r in replies.items() if "error" in r}
    assert stored | refused == {f"r-{i}" for i in range(1, 41)}
    assert all(r["error"]["code"] == "soul_unavailable" for r in replies.values() if "error" in r)
    assert {f"r-{i}" for i in range(1, 21)} <= stored  # queued before the crash
    wait_for(lambda: soul_row(soupd, "alpha")["state"] == "running", "alpha to run again")

    # What was acknowledged is there; what was refused was really not stored.
    again = soupd.result(
        "event.import",
        {"soul": "alpha", "events": [{"text": "replay", "ref": ref} for ref in sorted(stored)]},
    )
    assert (again["duplicate"], again["stored"]) == (len(stored), 0)
    assert soupd.counts("alpha")[0] == len(stored)


def test_soul_crashing_past_its_intensity_fails_alone(
    soupd_home: Home, start_soupd: StartSoupd
) -> None:
    soupd_home.write_config(FAULT_INJECTION)
    soupd_home.add_soul("fragile", "[restart]\nmax_restarts = 1\nmax_seconds = 600\n")
    soupd_home.add_soul("steady")
    daemon = start_soupd()
    daemon.push("fragile", "written before the crashes")

    with daemon.connect() as conn:
        for _ in range(2):
            conn.result("debug.crash", {"soul": "fragile"})

    row = wait_for(
        lambda: (r := soul_row(daemon, "fragile"))["state"] == "failed" and r, "fragile to fail"
    )
    assert row["last_error"]
    reply = daemon.call("event.push", {"soul": "fragile", "text": "anyone home?"})
    assert reply["error"]["code"] == "soul_unavailable"
    assert reply["error"]["message"]
    assert daemon.result("daemon.status")["souls_failed"] == 1
    assert daemon.push("steady", "steady is fine")["status"] == "stored"
    assert soul_row(daemon, "steady")["restarts"] == 0
    assert daemon.stop() == 0


def pipeline_then_signal(daemon: Daemon, signum: int, n: int, after: int) -> dict[str, str]:
    """Write ``n`` pushes with unique refs on one connection, send ``signum`` once
    ``after`` replies arrived, read replies until the daemon hangs up.

    Returns ref -> status ("stored" or an error code) for every request answered.
    """
    refs = [f"sig-{i}" for i in range(n)]
    blob = pipelined_pushes("alpha", ((ref, f"shutdown note {ref}") for ref in refs))
    answered: dict[str, str] = {}
    with daemon.connect() as conn:
        writer = conn.send_in_background(blob)
        try:
            for reply in conn.replies():
                ref = refs[reply["id"] - 1]
                assert ref not in answered, f"{ref} answered twice"
                if "result" in reply:
                    answered[ref] = reply["result"]["status"]
                else:
                    answered[ref] = reply["error"]["code"]
                if len(answered) == after:
                    daemon.send_signal(signum)
        except ConnectionResetError:
            # The daemon closed with our unread requests in its buffer: the replies
            # queued before that were all read; the reset only replaces the EOF.
            pass
        writer.join(timeout=15)
    assert len(answered) >= after
    return answered


def assert_acked_events_present(daemon: Daemon, answered: dict[str, str]) -> None:
    acked = sorted(ref for ref, status in answered.items() if status == "stored")
    assert acked
    assert daemon.counts("alpha")[0] >= len(acked)
    replay = daemon.result(
        "event.import",
        {"soul": "alpha", "events": [{"text": "replay", "ref": ref} for ref in acked]},
    )
    assert (replay["duplicate"], replay["stored"], replay["rejected"]) == (len(acked), 0, 0)


def test_sigterm_with_events_in_flight_loses_nothing_acknowledged(
    soupd_home: Home, start_soupd: StartSoupd
) -> None:
    soupd_home.add_soul("alpha")
    daemon = start_soupd()

    answered = pipeline_then_signal(daemon, signal.SIGTERM, n=5000, after=300)

    assert daemon.wait() == 0
    assert set(answered.values()) <= {"stored", "soul_unavailable"}, set(answered.values())
    restarted = start_soupd()
    assert_acked_events_present(restarted, answered)


def test_kill_9_during_ingest_loses_nothing_acknowledged(
    soupd_home: Home, start_soupd: StartSoupd
) -> None:
    soupd_home.add_soul("alpha")
    daemon = start_soupd()

    answered = pipeline_then_signal(daemon, signal.SIGKILL, n=5000, after=300)

    assert daemon.wait() == -signal.SIGKILL
    assert soupd_home.socket.exists()  # stale: the next start must clear it
    restarted = start_soupd()
    assert_acked_events_present(restarted, answered)


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_stop_with_a_failed_soul_still_exits_zero(
    soupd_home: Home, start_soupd: StartSoupd, signum: int
) -> None:
    soupd_home.write_config(FAULT_INJECTION)
    soupd_home.add_soul("fragile", "[restart]\nmax_restarts = 0\nmax_seconds = 600\n")
    daemon = start_soupd()
    daemon.result("debug.crash", {"soul": "fragile"})
    wait_for(lambda: soul_row(daemon, "fragile")["state"] == "failed", "fragile to fail")

    assert daemon.stop(signum) == 0
