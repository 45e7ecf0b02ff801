"""A flood bigger than the mailboxes slows its senders; the daemon's memory stays bounded.

End to end: many connections pipeline far more pushes than a (small) mailbox holds
and every one is stored, while the daemon's peak RSS grows by a small fraction of what
buffering the flood would take; a client that writes without reading its replies is
stopped at its connection's bound (its writes block) and loses nothing once it reads.
In process: ``tell_nowait`` on a real soul's full mailbox is refused with ``busy`` and
queues nothing (nothing in the daemon calls it: its senders all wait, by design).
``bench/flood.py`` prints the same figures for a bigger flood.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path
from typing import Any

import anyio
import pytest
from conftest import MAILBOX_HYGIENE

from e2e.harness import Connection, Daemon, Home, StartSoupd, pipelined_pushes
from souls.actor.clock import SystemClock
from souls.actor.mailbox import Future, Mailbox
from souls.actor.soul import Soul
from souls.config import MailboxConfig, SoulConfig
from souls.events import EventIn
from souls.messages import Message, Observe
from supervisor.errors import SoulBusy

CAPACITY = 16
CLIENTS = 4
FLOOD = 120_000
# Generous on purpose: the flood's frames alone are ~17 MiB of bytes, and holding them as
# decoded requests would take several times that; a bounded daemon grows by a few MiB.
RSS_GROWTH_LIMIT_MIB = 64


def memory_mib(pid: int) -> dict[str, int]:
    """VmRSS (now) and VmHWM (peak) of ``pid``, in MiB."""
    found = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            found[key] = int(value.split()[0]) // 1024
    return found


def flood_soul(home: Home, start_soupd: StartSoupd, daemon_toml: str = "") -> Daemon:
    home.write_config(daemon_toml)
    home.add_soul("flood", f"[mailbox]\ncapacity = {CAPACITY}\nbatch = {CAPACITY}\n")
    daemon = start_soupd()
    daemon.push("flood", "warm up the soul before measuring", ref="warm")
    return daemon


def texts(prefix: str, n: int) -> list[tuple[str, str]]:
    return [
        (f"{prefix}-{i}", f"flood {prefix} item {i}: deploy {i % 97} on host-{i % 13}")
        for i in range(n)
    ]


def replies(conn: Connection, n: int) -> Iterator[dict[str, Any]]:
    """The next ``n`` replies, read through a buffered file (the harness's ``recv``
    re-slices its buffer per frame: too slow for a flood's worth of replies)."""
    stream = conn.sock.makefile("rb")
    for _ in range(n):
        line = stream.readline()
        assert line, "the daemon closed the connection"
        yield json.loads(line)


def read_statuses(conn: Connection, n: int) -> dict[str, int]:
    statuses: dict[str, int] = {}
    for reply in replies(conn, n):
        status = reply["result"]["status"] if "result" in reply else reply["error"]["code"]
        statuses[status] = statuses.get(status, 0) + 1
    return statuses


def test_flood_bigger_than_the_mailbox_is_stored_in_bounded_memory(
    soupd_home: Home, start_soupd: StartSoupd, record_property: Any
) -> None:
    daemon = flood_soul(soupd_home, start_soupd)
    before = memory_mib(daemon.pid)
    per_client = FLOOD // CLIENTS
    results: list[dict[str, int]] = []

    def client(c: int) -> None:
        blob = pipelined_pushes("flood", texts(f"c{c}", per_client))
        with daemon.connect() as conn:
            writer = conn.send_in_background(blob)
            results.append(read_statuses(conn, per_client))
            writer.join(60)

    threads = [threading.Thread(target=client, args=(c,)) for c in range(CLIENTS)]
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(180)
        assert not thread.is_alive()
    elapsed = time.perf_counter() - started
    after = memory_mib(daemon.pid)

    assert results == [{"stored": per_client}] * CLIENTS
    assert daemon.counts("flood")[0] == FLOOD + 1
    stats = daemon.result("soul.stats", {"soul": "flood"})
    assert stats["queued"] == 0
    record_property("rss_before_mib", before["VmRSS"])
    record_property("rss_peak_mib", after["VmHWM"])
    record_property("rss_after_mib", after["VmRSS"])
    record_property("acks_per_s", round(FLOOD / elapsed))
    assert after["VmHWM"] - before["VmRSS"] < RSS_GROWTH_LIMIT_MIB, (before, after)


def test_a_client_that_never_reads_is_held_at_its_bound(
    soupd_home: Home, start_soupd: StartSoupd
) -> None:
    daemon = flood_soul(soupd_home, start_soupd, "[socket]\nmax_in_flight = 64\n")
    n = 50_000
    blob = pipelined_pushes("flood", texts("stuck", n))
    before = memory_mib(daemon.pid)
    requests_before = daemon.result("daemon.status")["requests"]

    with daemon.connect() as conn:
        # Write without reading a single reply, until the daemon stops taking bytes.
        conn.sock.setblocking(False)
        sent, deadline = 0, time.monotonic() + 3.0
        while sent < len(blob) and time.monotonic() < deadline:
            try:
                sent += conn.sock.send(blob[sent : sent + 65536])
            except BlockingIOError:
                time.sleep(0.01)
        # The daemon stopped reading this connection long before the end of the flood:
        # at most its in-flight bound plus the replies that fit the socket's buffers.
        assert sent < len(blob) // 2
        taken = daemon.result("daemon.status")["requests"] - requests_before - 1
        assert 64 <= taken < n // 4
        assert daemon.result("soul.stats", {"soul": "flood"})["queued"] <= CAPACITY
        assert memory_mib(daemon.pid)["VmHWM"] - before["VmRSS"] < RSS_GROWTH_LIMIT_MIB
        # Other connections are not held up by the stuck one.
        assert daemon.push("flood", "another client gets through", ref="other")["status"] == (
            "stored"
        )

        # Once it reads, the rest goes through and every request is answered once.
        conn.sock.setblocking(True)
        writer = conn.send_in_background(blob[sent:])
        ids = []
        for reply in replies(conn, n):
            assert reply["result"]["status"] == "stored", reply
            ids.append(reply["id"])
        writer.join(60)
    assert sorted(ids) == list(range(1, n + 1))
    assert daemon.counts("flood")[0] == n + 2


@MAILBOX_HYGIENE[0]
@MAILBOX_HYGIENE[1]
async def test_tell_nowait_to_a_full_soul_is_busy_and_queues_nothing(tmp_path: Path) -> None:
    config = SoulConfig(mailbox=MailboxConfig(capacity=4))
    mailbox: Mailbox[Message] = Mailbox("alpha", config.mailbox.capacity)
    queued = [Future() for _ in range(4)]
    for i, future in enumerate(queued):
        mailbox.tell_nowait(Observe(EventIn(text=f"queued note {i}", ref=f"q{i}")), future)

    with pytest.raises(SoulBusy) as caught:
        mailbox.tell_nowait(Observe(EventIn(text="one note too many", ref="refused")), Future())

    assert caught.value.code == "busy"
    assert "'alpha'" in caught.value.message
    assert "4 messages" in caught.value.message
    assert "retry" in caught.value.message
    soul = Soul(
        "alpha", config, db_path=tmp_path / "soul.db", brain_dir=tmp_path, clock=SystemClock()
    )
    with anyio.fail_after(15):
        async with anyio.create_task_group() as tg:
            await tg.start(soul.run, mailbox)
            assert [(await f.wait()).status for f in queued] == ["stored"] * 4
            again = Future()
            mailbox.tell_nowait(Observe(EventIn(text="room again", ref="later")), again)
            assert (await again.wait()).status == "stored"
            tg.cancel_scope.cancel()
    assert mailbox.statistics().rejected_busy == 1
    assert mailbox.statistics().told == 5
    with closing(sqlite3.connect(tmp_path / "soul.db")) as db:
        refs = {ref for (ref,) in db.execute("SELECT ref FROM events")}
    assert refs == {"q0", "q1", "q2", "q3", "later"}
