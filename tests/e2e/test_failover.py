"""Failover on the shared PostgreSQL store (#21): two real daemons on one real database,
clients pushing to three souls through both, and kill -9 of one daemon at a random
moment, twenty rounds over. Every acknowledged event is stored exactly once, every soul
is served again within the bound after each kill, and the souls' writes never
interleave between daemons (each event carries the epoch of the lease it was written
under: in a soul's id order, epochs never go back)."""

from __future__ import annotations

import json
import random
import signal
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import asyncpg
import pytest

from e2e.harness import Daemon, Home
from e2e.shared import shared_home

SOULS = ("alpha", "beta", "gamma")
ROUNDS = 20
TAKEOVER_BOUND = 5.0  # seconds, the bound


def _home(root: Path, name: str, dsn: str) -> Home:
    # Awake from the start: each soul owned by whichever daemon takes it first.
    return shared_home(root, name, dsn, "[lifecycle]\nhibernate_after = 0\n", SOULS)


def _call(home: Home, method: str, params: dict[str, Any]) -> dict[str, Any] | None:
    """One request to the daemon of ``home``; None when it cannot be reached (killed)."""
    try:
        with socket.socket(socket.AF_UNIX) as sock:
            sock.settimeout(10)
            sock.connect(str(home.socket))
            sock.sendall(json.dumps({"id": 1, "method": method, "params": params}).encode() + b"\n")
            reply = b""
            while not reply.endswith(b"\n"):
                chunk = sock.recv(65536)
                if not chunk:
                    return None
                reply += chunk
    except OSError:
        return None
    answer: dict[str, Any] = json.loads(reply)
    return answer


class Pusher(threading.Thread):
    """Pushes numbered events to random souls through a random daemon until stopped.
    A daemon that does not own the soul forwards the push to the one that does; finding
    a daemon gone, or the owner unreachable, it tries the other; each event is sent
    until acknowledged (its ref makes a resend a duplicate, not a copy)."""

    def __init__(self, name: str, homes: tuple[Home, Home], seed: int) -> None:
        super().__init__(name=name, daemon=True)
        self.homes = homes
        self.rng = random.Random(seed)
        self.acked: dict[str, tuple[str, int]] = {}  # ref -> (soul, event id)
        self.stopping = threading.Event()
        self.errors: list[dict[str, Any]] = []

    def run(self) -> None:
        n = 0
        while not self.stopping.is_set():
            n += 1
            ref, soul = f"{self.name}-{n}", self.rng.choice(SOULS)
            params = {"soul": soul, "text": f"{self.name} note {n} for {soul}", "ref": ref}
            first = self.rng.randrange(2)
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                home = self.homes[first]
                reply = _call(home, "event.push", params)
                if reply is not None and "result" in reply:
                    self.acked[ref] = (soul, reply["result"]["event_id"])
                    break
                if reply is not None:
                    error = reply["error"]
                    if error["code"] not in ("soul_elsewhere", "lease_lost", "soul_unavailable"):
                        self.errors.append(error)
                        return
                first = 1 - first
                time.sleep(0.01)
            else:
                self.errors.append({"code": "never acknowledged", "ref": ref})
                return


def _served(home: Home) -> bool:
    """Whether the daemon of ``home`` serves every soul (each takes it on its request)."""
    for soul in SOULS:
        reply = _call(home, "soul.stats", {"soul": soul})
        if reply is None or "result" not in reply:
            return False
    return True


@pytest.fixture
def homes(tmp_path: Path, pg_dsn: str) -> Iterator[tuple[Home, Home]]:
    pair = (_home(tmp_path, "a", pg_dsn), _home(tmp_path, "b", pg_dsn))
    yield pair
    for home in pair:
        home.cleanup()


async def _stored(dsn: str) -> list[tuple[str, int, str, int]]:
    db = await asyncpg.connect(dsn)
    try:
        rows = await db.fetch(
            "SELECT s.name, e.id, e.ref, e.epoch FROM events AS e JOIN souls AS s"
            " ON s.id = e.soul ORDER BY s.name, e.id"
        )
    finally:
        await db.close()
    return [(r["name"], r["id"], r["ref"], r["epoch"]) for r in rows]


def test_twenty_kill_9_rounds_lose_no_acknowledged_event(
    homes: tuple[Home, Home], pg_dsn: str
) -> None:
    rng = random.Random(21)
    daemons = [Daemon.start(homes[0]), Daemon.start(homes[1])]
    pushers = [Pusher(f"p{i}", homes, seed=i) for i in range(2)]
    takeovers: list[float] = []
    try:
        for pusher in pushers:
            pusher.start()
        for _ in range(ROUNDS):
            time.sleep(rng.uniform(0.2, 1.0))  # a random moment, pushes in flight
            victim = rng.randrange(2)
            daemons[victim].send_signal(signal.SIGKILL)
            daemons[victim].wait()
            killed = time.monotonic()
            survivor = homes[1 - victim]
            deadline = killed + 30
            while not _served(survivor):
                assert time.monotonic() < deadline, "the survivor never served every soul"
                time.sleep(0.02)
            takeovers.append(time.monotonic() - killed)
            daemons[victim] = Daemon.start(homes[victim])
        time.sleep(0.5)
        # Both daemons hold every soul as servable still: none failed along the way.
        for home in homes:
            listing = _call(home, "soul.list", {})
            assert listing is not None
            states = {s["name"]: s["state"] for s in listing["result"]["souls"]}
            assert "failed" not in states.values(), states
    finally:
        for pusher in pushers:
            pusher.stopping.set()
        for pusher in pushers:
            pusher.join(90)
        for daemon in daemons:
            if daemon.proc.poll() is None:
                daemon.stop()
    for pusher in pushers:
        assert not pusher.errors, pusher.errors
    acked = {ref: where for pusher in pushers for ref, where in pusher.acked.items()}
    assert len(acked) > 20 * ROUNDS  # pushes went on all along
    stored = anyio.run(_stored, pg_dsn)
    by_ref: dict[str, list[tuple[str, int]]] = {}
    for soul, event_id, ref, _ in stored:
        by_ref.setdefault(ref, []).append((soul, event_id))
    # Every acknowledged event stored exactly once, where its acknowledgement said.
    for ref, where in acked.items():
        assert by_ref.get(ref) == [where], ref
    # Nothing stored twice, acknowledged or not (a push whose reply was lost with its
    # daemon is stored once, and its resend found it).
    assert all(len(places) == 1 for places in by_ref.values())
    # Within each soul, in id order, the lease epochs never go back: no write of an
    # older owner landed after a newer owner's.
    for soul in SOULS:
        epochs = [epoch for name, _, _, epoch in stored if name == soul]
        assert epochs == sorted(epochs), soul
        assert len(set(epochs)) > 1, soul  # it did move between daemons
    assert max(takeovers) < TAKEOVER_BOUND, takeovers
