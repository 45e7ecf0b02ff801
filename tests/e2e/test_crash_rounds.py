"""``kill -9`` at random moments under concurrent ingest loses no acknowledged event.

Round after round, several clients push events with distinct refs on their own
connections while the daemon is killed with SIGKILL after a random delay (in some
rounds while it is still starting). While it is down its database must pass
``PRAGMA integrity_check``; at the end every event acknowledged as stored is exported
back exactly once, nothing is stored that was never sent, and the full-text index passes
FTS5's integrity-check. The checks are ``souls/store/check.py``'s (what ``soupd check`` runs);
``bench/crash.py`` runs the same experiment for hundreds of rounds.
"""

from __future__ import annotations

import contextlib
import json
import random
import signal
import subprocess
import threading
from collections import Counter
from functools import partial

from e2e.harness import SOUPD, Connection, Daemon, Home, StartSoupd, request_frame, wait_for
from souls.store.check import fts_integrity, integrity, stored_refs

ROUNDS = 15
CLIENTS = 3
PER_CLIENT = 4000  # more than a client gets through before the kill, most rounds
SEED = 8


class Tally:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.sent: set[str] = set()
        self.acked: list[str] = []
        self.other: Counter[str] = Counter()


def push_until_killed(daemon: Daemon, prefix: str, tally: Tally) -> None:
    """Pipeline PER_CLIENT pushes (the ref is the request id) and record each ack."""
    refs = [f"{prefix}-{i}" for i in range(PER_CLIENT)]
    with tally.lock:
        tally.sent.update(refs)
    blob = b"".join(
        request_frame(ref, "event.push", {"soul": "alpha", "text": f"note {ref} ok", "ref": ref})
        for ref in refs
    )
    try:
        conn = Connection(daemon.home.socket)
    except OSError:
        return
    with conn, contextlib.suppress(OSError):
        writer = conn.send_in_background(blob)
        for reply in conn.replies():
            with tally.lock:
                if reply.get("result", {}).get("status") == "stored":
                    tally.acked.append(reply["id"])
                else:
                    tally.other[json.dumps(reply.get("error") or reply["result"])] += 1
        writer.join(15)


def acked_beyond(tally: Tally, n: int) -> bool:
    return len(tally.acked) > n


def exported_refs(daemon: Daemon) -> Counter[str]:
    refs: Counter[str] = Counter()
    cursor = None
    with daemon.connect() as conn:
        while True:
            page = conn.result("export", {"soul": "alpha", "cursor": cursor})
            refs.update(r["ref"] for r in page["records"] if r["type"] == "event")
            if (cursor := page["cursor"]) is None:
                return refs


def kill_while_starting(home: Home, delay: float) -> None:
    """Start ``soupd`` and SIGKILL it ``delay`` s later, ready or not."""
    proc = subprocess.Popen(
        [str(SOUPD), "start"],
        env=home.env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(delay)
    proc.kill()
    proc.wait()


def test_kill_9_rounds_lose_and_duplicate_nothing_acknowledged(
    soupd_home: Home, start_soupd: StartSoupd
) -> None:
    soupd_home.add_soul("alpha")
    database = soupd_home.soul_dir("alpha") / "soul.db"
    rng = random.Random(SEED)
    tally = Tally()
    killed_mid_ingest = 0

    for number in range(ROUNDS):
        if number % 5 == 2:
            kill_while_starting(soupd_home, rng.uniform(0.0, 0.5))
        else:
            daemon = start_soupd()
            clients = [
                threading.Thread(target=push_until_killed, args=(daemon, f"r{number}c{c}", tally))
                for c in range(CLIENTS)
            ]
            for thread in clients:
                thread.start()
            acked_before = len(tally.acked)
            # Wait for the first acks of the round, then a random moment more.
            wait_for(partial(acked_beyond, tally, acked_before), "the first acks of the round")
            threading.Event().wait(rng.uniform(0.0, 0.3))
            daemon.send_signal(signal.SIGKILL)
            assert daemon.wait() == -signal.SIGKILL
            for thread in clients:
                thread.join(30)
                assert not thread.is_alive()
            killed_mid_ingest += len(tally.acked) - acked_before < CLIENTS * PER_CLIENT
        if database.exists():
            assert integrity(database) == ["ok"], f"round {number}"

    assert killed_mid_ingest >= 1  # otherwise the test proved nothing
    assert not tally.other, tally.other  # every reply was "stored" (no error, no duplicate)
    final = start_soupd()
    exported = exported_refs(final)
    assert final.stop() == 0

    acked = Counter(tally.acked)
    assert len(acked) == len(tally.acked), "an event was acknowledged twice"
    assert [ref for ref in acked if exported[ref] != 1] == []  # lost or duplicated
    assert set(exported) <= tally.sent  # nothing stored that was never sent
    assert max(exported.values()) == 1
    assert stored_refs(database) == exported
    assert integrity(database) == ["ok"]
    assert fts_integrity(database) == "ok"
