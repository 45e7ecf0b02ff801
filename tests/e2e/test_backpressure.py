"""A flood bigger than the mailboxes slows its senders; the daemon's memory stays bounded.

End to end: many connections pipeline far more pushes than a (small) mailbox holds
and every one is stored, while the daemon's peak RSS grows by a small fraction of what
buffering the flood would take; a client that writes without reading its replies is
stopped at its connection's bound (its writes block) and loses nothing once it reads.
Replies are bounded by bytes too: a client that pipelines export pages and reads none
holds at most ``max_buffered_bytes`` of them (the rest of its results are replaced by
``reply_buffer_full``), and one that hangs up has its queued exports skipped.
In process: ``tell_nowait`` on a real soul's full mailbox is refused with ``busy`` and
queues nothing (nothing in the daemon calls it: its senders all wait, by design); mail
whose reply was settled before its turn is skipped. ``bench/flood.py`` prints the same
figures for a bigger flood, ``bench/abuse.py`` those of the byte bound.
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

from e2e.chatter import conversation, turns
from e2e.harness import (
    Connection,
    Daemon,
    Home,
    StartSoupd,
    pipelined_pushes,
    request_frame,
    wait_for,
)
from souls.actor.clock import SystemClock
from souls.actor.mailbox import Future, Mailbox
from souls.actor.soul import Soul
from souls.config import MailboxConfig, SoulConfig
from souls.events import EventIn
from souls.messages import Message, Observe
from supervisor.errors import SoulBusy, SoulUnavailable

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


EXPORTS = 80
# Small on purpose, so that a page of the archive (~1.6 MB) fills a connection's share.
BYTES_TOML = "[socket]\nmax_buffered_bytes = 2097152\nmax_buffered_total = 8388608\n"


def archive_soul(home: Home, start_soupd: StartSoupd) -> Daemon:
    """A daemon whose soul ``archive`` holds 100 long chat transcripts (export pages of
    about 1.6 MB), and a soul ``chat`` for the bystanders."""
    home.write_config(BYTES_TOML)
    home.add_soul("archive")
    home.add_soul("chat")
    daemon = start_soupd()
    for batch in range(2):
        events = [
            {"text": conversation(100 * batch + i, 4000), "ref": f"t{batch}-{i}"} for i in range(50)
        ]
        result = daemon.result("event.import", {"soul": "archive", "events": events})
        assert result["stored"] == 50, result
    return daemon


def export_requests() -> bytes:
    return b"".join(request_frame(i, "export", {"soul": "archive"}) for i in range(1, EXPORTS + 1))


def test_a_client_that_never_reads_its_export_pages_is_held_in_bytes(
    soupd_home: Home, start_soupd: StartSoupd
) -> None:
    daemon = archive_soul(soupd_home, start_soupd)
    page = daemon.result("export", {"soul": "archive"})
    page_bytes = len(json.dumps(page, ensure_ascii=False).encode())
    assert page_bytes > 1 << 20
    before = memory_mib(daemon.pid)
    requests_before = daemon.result("daemon.status")["requests"]
    chat = turns(5, 4)
    with daemon.connect() as hog:
        hog.send(export_requests())  # a few KiB; then it reads nothing for a while
        wait_for_requests(daemon, requests_before + 1 + EXPORTS)
        # Answered after every export queued before it: the soul is through them all.
        daemon.result("soul.stats", {"soul": "archive"})
        during = memory_mib(daemon.pid)
        # Bystanders are served all along.
        for i, line in enumerate(chat):
            assert daemon.push("chat", line, ref=f"c{i}")["status"] == "stored"

        replies_by_id = {reply["id"]: reply for reply in replies(hog, EXPORTS)}
    assert sorted(replies_by_id) == list(range(1, EXPORTS + 1))
    pages = [r for r in replies_by_id.values() if "result" in r]
    refused = [r for r in replies_by_id.values() if "error" in r]
    assert pages, "the first page fits a connection's share"
    assert all(len(r["result"]["records"]) == len(page["records"]) for r in pages)
    assert len(pages) <= 3, len(pages)  # 2 MiB a connection, 1.6 MB a page
    for reply in refused:
        assert reply["error"]["code"] == "reply_buffer_full", reply
        assert "max_buffered_bytes = 2097152" in reply["error"]["message"]
        assert "carried out" in reply["error"]["message"]
    # Unbounded, the pages would take EXPORTS * page_bytes (~130 MB) of memory.
    assert during["VmHWM"] - before["VmRSS"] < RSS_GROWTH_LIMIT_MIB, (before, during)
    assert daemon.counts("chat")[0] == len(chat)


def test_a_client_that_hangs_up_has_its_queued_exports_skipped(
    soupd_home: Home, start_soupd: StartSoupd
) -> None:
    daemon = archive_soul(soupd_home, start_soupd)
    before = memory_mib(daemon.pid)
    requests_before = daemon.result("daemon.status")["requests"]
    with daemon.connect() as quitter:
        quitter.send(export_requests())
        wait_for_requests(daemon, requests_before + 1 + EXPORTS)
    # Gone: the exports still queued are settled at once, and the soul skips them.
    abandoned = wait_for_event(daemon, "socket.abandoned")
    assert EXPORTS // 2 <= abandoned["requests"] <= EXPORTS, abandoned
    assert daemon.push("archive", turns(9, 1)[0], ref="after")["status"] == "stored"
    assert memory_mib(daemon.pid)["VmHWM"] - before["VmRSS"] < RSS_GROWTH_LIMIT_MIB
    wait_for(lambda: daemon.result("daemon.status")["connections"] == 1, "the connection's end")


def wait_for_requests(daemon: Daemon, count: int) -> None:
    """Until the daemon has read ``count`` requests in all (this poll's included)."""
    deadline = time.monotonic() + 15
    while daemon.result("daemon.status")["requests"] < count:
        assert time.monotonic() < deadline, "the daemon did not read the requests"
        time.sleep(0.02)


def wait_for_event(daemon: Daemon, event: str) -> dict[str, Any]:
    deadline = time.monotonic() + 15
    while True:
        found = [e for e in daemon.log() if e.get("event") == event]
        if found:
            return found[0]
        assert time.monotonic() < deadline, f"no {event} in the log:\n{daemon.output()}"
        time.sleep(0.05)


@MAILBOX_HYGIENE[0]
@MAILBOX_HYGIENE[1]
async def test_mail_settled_before_its_turn_is_skipped(tmp_path: Path) -> None:
    """What a socket connection does when its peer hangs up: the replies of its queued
    requests are settled, and the soul does not work for nobody."""
    mailbox: Mailbox[Message] = Mailbox("alpha", 16)
    lines = turns(13, 6)
    futures = [Future() for _ in lines]
    for i, (line, future) in enumerate(zip(lines, futures, strict=True)):
        mailbox.tell_nowait(Observe(EventIn(text=line, ref=f"m{i}")), future)
    for future in futures[1::2]:  # the requester of every other message went away
        future.fail(SoulUnavailable("the client closed the connection before its reply"))
    soul = Soul(
        "alpha", SoulConfig(), db_path=tmp_path / "soul.db", brain_dir=tmp_path, clock=SystemClock()
    )
    with anyio.fail_after(15):
        async with anyio.create_task_group() as tg:
            await tg.start(soul.run, mailbox)
            assert [(await f.wait()).status for f in futures[0::2]] == ["stored"] * 3
            tg.cancel_scope.cancel()
    with closing(sqlite3.connect(tmp_path / "soul.db")) as db:
        refs = {ref for (ref,) in db.execute("SELECT ref FROM events")}
    assert refs == {"m0", "m2", "m4"}
