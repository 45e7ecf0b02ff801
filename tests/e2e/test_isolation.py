"""One soul's faults stay that soul's: the daemon and the other souls keep serving.

A soul that raises on every message reaches its restart intensity and is stopped,
reported failed (``soul.list``, ``soupd souls``, ``soupd status``, one log line),
while its siblings answer every request they are sent, during the crashes as before.
A soul whose database was overwritten with garbage while the daemon was down fails at
start with an error naming the file; the rest of the daemon runs, reloads survive it,
and once the file is moved away a reload brings the soul back.
"""

from __future__ import annotations

import json
import random
import signal
import threading
import time
from pathlib import Path
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

# A soul that serves: awake, or hibernating until its next message.
HEALTHY = ("running", "hibernating")


def reload(daemon: Daemon) -> None:
    """SIGHUP, and wait until the reload is done."""
    seen = sum(1 for e in daemon.log() if e.get("event") == "config.reloaded")
    daemon.send_signal(signal.SIGHUP)
    wait_for(
        lambda: sum(1 for e in daemon.log() if e.get("event") == "config.reloaded") > seen,
        "the reload",
    )


def refused_naming(daemon: Daemon, soul: str, path: Path) -> None:
    """A request to ``soul`` is refused, and the refusal names the file at fault."""
    reply = daemon.call("recall", {"soul": soul, "query": "item"})
    assert reply["error"]["code"] == "soul_unavailable", reply
    assert str(path) in reply["error"]["message"], reply


def soul_row(daemon: Daemon, name: str) -> dict[str, Any]:
    (row,) = [s for s in daemon.result("soul.list")["souls"] if s["name"] == name]
    return row  # type: ignore[no-any-return]


def push_batch(daemon: Daemon, soul: str, prefix: str, n: int) -> tuple[dict[str, int], float]:
    """``n`` pipelined pushes on one connection: reply statuses, and acks per second."""
    blob = pipelined_pushes(
        soul, ((f"{prefix}-{i}", f"{soul} note {prefix} {i}") for i in range(n))
    )
    statuses: dict[str, int] = {}
    started = time.perf_counter()
    with daemon.connect() as conn:
        writer = conn.send_in_background(blob)
        for _ in range(n):
            reply = conn.recv()
            status = reply["result"]["status"] if "result" in reply else reply["error"]["code"]
            statuses[status] = statuses.get(status, 0) + 1
        writer.join(15)
    return statuses, n / (time.perf_counter() - started)


def test_soul_raising_on_every_message_fails_alone(
    soupd_home: Home, start_soupd: StartSoupd, record_property: Any
) -> None:
    soupd_home.write_config(FAULT_INJECTION)
    soupd_home.add_soul("fragile", "[restart]\nmax_restarts = 3\nmax_seconds = 600\n")
    soupd_home.add_soul("steady")
    soupd_home.add_soul("calm")
    daemon = start_soupd()
    daemon.push("fragile", "written before the crashes", ref="f-0")

    before, before_rate = push_batch(daemon, "steady", "before", 1000)
    assert before == {"stored": 1000}

    # fragile is sent nothing but messages that make it raise, as fast as it takes them,
    # while steady and calm are pushed to on their own connections.
    crashing = threading.Event()
    fragile_replies: list[dict[str, Any]] = []

    def hammer() -> None:
        with daemon.connect() as conn:
            crashing.set()
            for i in range(200):
                conn.send(request_frame(i, "debug.crash", {"soul": "fragile", "reason": "every"}))
                fragile_replies.append(conn.recv())
                if soul_row(daemon, "fragile")["state"] == "failed":
                    return

    hammering = threading.Thread(target=hammer)
    hammering.start()
    crashing.wait(15)
    rates: dict[str, float] = {}
    for round_ in range(3):
        for soul in ("steady", "calm"):
            statuses, rates[soul] = push_batch(daemon, soul, f"during-{round_}", 1000)
            assert statuses == {"stored": 1000}, (soul, statuses)
    hammering.join(60)
    assert not hammering.is_alive()

    row = wait_for(
        lambda: (r := soul_row(daemon, "fragile"))["state"] == "failed" and r, "fragile to fail"
    )
    record_property("steady_acks_per_s_before", round(before_rate))
    record_property("steady_acks_per_s_during", round(rates["steady"]))
    record_property("calm_acks_per_s_during", round(rates["calm"]))
    # Every crash request was answered: accepted while fragile ran, refused once it failed.
    assert {("result" in r) or r["error"]["code"] for r in fragile_replies} <= {
        True,
        "soul_unavailable",
    }
    assert "every" in row["last_error"]  # the reason the soul gave when it raised

    failed = [e for e in daemon.log() if e.get("event") == "soul.failed"]
    assert [(e["soul"], e["level"]) for e in failed] == [("fragile", "error")]
    assert "every" in failed[0]["reason"]
    refused = daemon.call("event.push", {"soul": "fragile", "text": "anyone home?"})
    assert refused["error"]["code"] == "soul_unavailable"
    assert "fragile" in refused["error"]["message"]
    assert "failed" in refused["error"]["message"]

    listing = soupd_home.cli("souls")
    assert listing.returncode == 0, listing.stderr
    (line,) = [ln for ln in listing.stdout.splitlines() if ln.startswith("fragile")]
    assert line.split()[1] == "failed"
    status = json.loads(soupd_home.cli("--json", "status").stdout)
    assert (status["souls"], status["souls_failed"]) == (3, 1)

    for name in ("steady", "calm"):
        row = soul_row(daemon, name)
        assert row["state"] in HEALTHY, row
        assert row["restarts"] == 0, row
    assert daemon.counts("steady")[0] == 4000
    assert daemon.counts("calm")[0] == 3000
    assert daemon.stop() == 0


def garbage_over_everything(db: Path, rng: random.Random) -> None:
    db.write_bytes(rng.randbytes(max(db.stat().st_size, 8192)))


def garbage_after_the_header(db: Path, rng: random.Random) -> None:
    """The 100-byte header survives, so SQLite opens the file; the pages are noise."""
    data = bytearray(db.read_bytes())
    data[100:] = rng.randbytes(len(data) - 100)
    db.write_bytes(bytes(data))


def garbage_after_the_first_page(db: Path, rng: random.Random) -> None:
    """Page 1 (header and schema) survives; every table and index page is noise."""
    data = bytearray(db.read_bytes())
    data[4096:] = rng.randbytes(len(data) - 4096)
    db.write_bytes(bytes(data))


@pytest.mark.parametrize(
    "corrupt", [garbage_over_everything, garbage_after_the_header, garbage_after_the_first_page]
)
def test_corrupt_database_fails_its_soul_alone(
    soupd_home: Home, start_soupd: StartSoupd, corrupt: Any
) -> None:
    soupd_home.add_soul("broken")
    soupd_home.add_soul("steady")
    first = start_soupd()
    for n in range(200):
        first.push("broken", f"broken remembers item {n}", ref=f"b-{n}")
    first.push("steady", "steady remembers the lighthouse", ref="s-1")
    assert first.stop() == 0
    db = soupd_home.soul_dir("broken") / "soul.db"
    for leftover in (db.with_name("soul.db-wal"), db.with_name("soul.db-shm")):
        leftover.unlink(missing_ok=True)
    corrupt(db, random.Random(7))

    daemon = start_soupd()

    # The first request that needs the database (at start, or when it wakes) fails it.
    refused_naming(daemon, "broken", db)
    row = wait_for(
        lambda: (r := soul_row(daemon, "broken"))["state"] == "failed" and r, "broken to fail"
    )
    assert str(db) in row["last_error"], row
    logged = [e for e in daemon.log() if e.get("soul") == "broken" and e.get("level") == "error"]
    assert logged, "no error line for the broken soul"
    assert any(str(db) in json.dumps(e) for e in logged), logged
    status = daemon.result("daemon.status")
    assert (status["souls"], status["souls_failed"]) == (2, 1)
    listing = soupd_home.cli("souls")
    (line,) = [ln for ln in listing.stdout.splitlines() if ln.startswith("broken")]
    assert line.split()[1] == "failed"
    assert str(db) in line

    # The others serve as ever.
    assert [i["refs"] for i in daemon.recall("steady", "lighthouse")] == [["s-1"]]
    assert daemon.push("steady", "steady carries on")["status"] == "stored"
    assert soul_row(daemon, "steady")["restarts"] == 0

    # A reload that touches the failed soul's config leaves the daemon up (the file is
    # still bad: the soul fails again, naming it)...
    soupd_home.add_soul("broken", "[recall]\nk = 3\n")
    reload(daemon)
    assert daemon.result("daemon.status")["pid"] == daemon.pid
    refused_naming(daemon, "broken", db)
    wait_for(lambda: soul_row(daemon, "broken")["state"] == "failed", "broken to fail again")
    # ...and once the bad file is moved away, the next one brings the soul back, empty.
    db.rename(db.with_name("soul.db.corrupt"))
    soupd_home.add_soul("broken", "[recall]\nk = 4\n")
    reload(daemon)
    assert soul_row(daemon, "broken")["state"] in HEALTHY
    assert daemon.push("broken", "a fresh start", ref="b-new")["status"] == "stored"
    assert daemon.counts("broken")[0] == 1
    assert daemon.stop() == 0
