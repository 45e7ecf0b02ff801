"""Crash durability: ``kill -9`` the daemon at random moments while clients push.

Each round starts the daemon on the same state, lets ``--clients`` connections push
events with unique refs (pipelined, one reply per push), and kills the daemon with
SIGKILL after a random delay; now and then the kill lands while the daemon is still
starting. While it is down, the soul's database is opened read-only and must pass
``PRAGMA integrity_check``. At the end the daemon is started once more and every event
it acknowledged as stored must come back through the socket (``export``) exactly once;
no event may be there twice, nor one that was never sent. The full-text index is
checked too (FTS5 ``integrity-check`` on a copy). The checks are ``souls/store/check.py``'s,
which ``soupd check`` runs too.

    python bench/crash.py [--rounds 200] [--clients 4] [--seed 1]

Exit status 1 when any acknowledged event was lost or duplicated, or a check failed.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from _daemon import soupd_executable

from souls.store.check import fts_integrity, integrity, stored_refs
from supervisor.paths import soul_database

SOUL = "crash"
# Pushes a client writes at most per round: bounds the database's growth.
PER_CLIENT = 5000
TEXTS = [
    "deploy {i} of service-{r} finished in {s} seconds",
    "user {r} asked about the invoice for order {i}",
    "build {i} failed: test_{r} timed out after {s}s",
    "the lighthouse keeper logged ship {i} passing at {s} knots",
    "数据库迁移 {i} 在 {s} 秒内完成",
]


@dataclass
class Home:
    """One daemon's private directories; they outlive each (killed) daemon."""

    root: Path

    @property
    def socket(self) -> Path:
        return self.root / "run" / "soupd" / "soupd.sock"

    @property
    def database(self) -> Path:
        return soul_database(self.root / "state" / "soupd" / "souls" / SOUL)

    def prepare(self) -> None:
        config = self.root / "config" / "soupd"
        (config / "souls").mkdir(parents=True)
        (config / "soupd.toml").write_text('[log]\nlevel = "warning"\n')
        (config / "souls" / f"{SOUL}.toml").write_text("")

    def spawn(self) -> subprocess.Popen[bytes]:
        env = {k: v for k, v in os.environ.items() if k not in ("SOUPD_SOCKET", "SOUPD_CONFIG")}
        env.update(
            XDG_CONFIG_HOME=str(self.root / "config"),
            XDG_STATE_HOME=str(self.root / "state"),
            XDG_RUNTIME_DIR=str(self.root / "run"),
        )
        log = (self.root / "daemon.log").open("ab")
        with log:
            return subprocess.Popen(
                [soupd_executable(), "start"],
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=log,
                start_new_session=True,
            )

    def wait_ready(self, process: subprocess.Popen[bytes], timeout: float = 30.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if process.poll() is not None:
                raise RuntimeError(f"daemon exited with {process.returncode}; see the log")
            try:
                with socket.socket(socket.AF_UNIX) as probe:
                    probe.connect(str(self.socket))
                return
            except OSError:
                time.sleep(0.02)
        raise RuntimeError(f"daemon not ready within {timeout} s")


@dataclass
class Tally:
    """What the clients saw, shared by their threads (each list append is atomic)."""

    sent: set[str] = field(default_factory=set)
    acked: list[str] = field(default_factory=list)
    statuses: Counter[str] = field(default_factory=Counter)
    lock: threading.Lock = field(default_factory=threading.Lock)


def push_frame(ref: str, i: int) -> bytes:
    text = TEXTS[i % len(TEXTS)].format(i=i, r=i % 97, s=i % 60)
    params = {"soul": SOUL, "text": f"{text} ({ref})", "ref": ref}
    # The ref is also the request id, so a reply names the event it acknowledges.
    return json.dumps({"id": ref, "method": "event.push", "params": params}).encode() + b"\n"


def client(path: Path, prefix: str, tally: Tally) -> None:
    """Push until PER_CLIENT or the daemon dies; record every acknowledgement."""
    try:
        sock = socket.socket(socket.AF_UNIX)
        sock.connect(str(path))
    except OSError:
        return
    refs = [f"{prefix}-{i}" for i in range(PER_CLIENT)]
    with tally.lock:
        tally.sent.update(refs)

    def write() -> None:
        with contextlib.suppress(OSError):
            for start in range(0, len(refs), 64):
                chunk = refs[start : start + 64]
                sock.sendall(b"".join(push_frame(r, start + n) for n, r in enumerate(chunk)))

    writer = threading.Thread(target=write, daemon=True)
    writer.start()
    buffer = b""
    answered = 0
    with sock, contextlib.suppress(OSError):
        while answered < len(refs):
            chunk = sock.recv(1 << 16)
            if not chunk:
                break
            buffer += chunk
            *lines, buffer = buffer.split(b"\n")
            for line in lines:
                reply = json.loads(line)
                answered += 1
                if "result" in reply:
                    status = reply["result"]["status"]
                    if status == "stored":
                        tally.acked.append(reply["id"])
                else:
                    status = reply["error"]["code"]
                with tally.lock:
                    tally.statuses[status] += 1
    writer.join(5)


def sound(database: Path) -> str:
    """``PRAGMA integrity_check`` on a read-only connection ("ok" when sound)."""
    if not database.exists():
        return "ok"  # killed before the soul created it
    return "; ".join(integrity(database))


def exported_refs(path: Path) -> Counter[str]:
    """Event refs as the daemon exports them, page by page, over the socket."""
    refs: Counter[str] = Counter()
    cursor: str | None = None
    with socket.socket(socket.AF_UNIX) as sock:
        sock.connect(str(path))
        stream = sock.makefile("rb")
        for page in range(1_000_000):
            params: dict[str, Any] = {"soul": SOUL, "cursor": cursor}
            sock.sendall(json.dumps({"id": page, "method": "export", "params": params}).encode())
            sock.sendall(b"\n")
            reply = json.loads(stream.readline())
            result = reply["result"]
            refs.update(r["ref"] for r in result["records"] if r["type"] == "event")
            cursor = result["cursor"]
            if cursor is None:
                break
    return refs


def crash_round(home: Home, number: int, clients: int, rng: random.Random) -> dict[str, Any]:
    tally = Tally()
    process = home.spawn()
    if rng.random() < 0.1:
        # Killed while starting: opening the store, migrating, loading the mind.
        time.sleep(rng.uniform(0.0, 0.6))
        process.kill()
        process.wait()
        return {"tally": tally, "during_start": True}
    home.wait_ready(process)
    threads = [
        threading.Thread(target=client, args=(home.socket, f"r{number}c{c}", tally), daemon=True)
        for c in range(clients)
    ]
    for thread in threads:
        thread.start()
    time.sleep(rng.uniform(0.01, 0.5))
    process.kill()
    process.wait()
    for thread in threads:
        thread.join(30)
    return {"tally": tally, "during_start": False}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=200)
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--keep", action="store_true", help="keep the state directory")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    home = Home(Path(tempfile.mkdtemp(prefix="soupd-crash-")))
    home.prepare()
    sent: set[str] = set()
    acked: list[str] = []
    statuses: Counter[str] = Counter()
    bad_checks: list[str] = []
    during_start = 0
    started = time.monotonic()
    try:
        for number in range(args.rounds):
            outcome = crash_round(home, number, args.clients, rng)
            tally: Tally = outcome["tally"]
            during_start += outcome["during_start"]
            sent |= tally.sent
            acked += tally.acked
            statuses += tally.statuses
            check = sound(home.database)
            if check != "ok":
                bad_checks.append(f"round {number}: {check}")
            if number % 20 == 19:
                print(f"round {number + 1}: {len(acked)} acked so far", file=sys.stderr)
        process = home.spawn()
        home.wait_ready(process)
        exported = exported_refs(home.socket)
        process.send_signal(signal.SIGTERM)
        code = process.wait(60)
        on_disk = stored_refs(home.database)
        final_check = sound(home.database)
        fts_check = fts_integrity(home.database)
    finally:
        if not args.keep:
            shutil.rmtree(home.root, ignore_errors=True)
    lost = sorted(ref for ref in set(acked) if exported[ref] == 0)
    duplicates = sum(1 for n in exported.values() if n > 1) + sum(
        1 for n in on_disk.values() if n > 1
    )
    phantom = sorted(set(exported) - sent)
    print(f"rounds               {args.rounds} ({during_start} killed while starting)")
    print(f"clients              {args.clients}")
    print(f"seed                 {args.seed}")
    print(f"offered              {len(sent)}")
    print(f"acked                {len(acked)}")
    print(f"acked twice          {len(acked) - len(set(acked))}")
    print(f"stored, not acked    {len(set(exported) - set(acked))}")
    print(f"lost                 {len(lost)}")
    print(f"duplicates           {duplicates}")
    print(f"never sent, stored   {len(phantom)}")
    print(f"export = disk        {exported == on_disk}")
    print(f"replies              {dict(sorted(statuses.items()))}")
    print(f"integrity_check      {'ok' if not bad_checks else bad_checks[:5]} ")
    print(f"  after last round   {final_check}")
    print(f"fts integrity-check  {fts_check}")
    print(f"final SIGTERM exit   {code}")
    print(f"elapsed              {time.monotonic() - started:.0f} s")
    failed = (
        lost
        or duplicates
        or phantom
        or bad_checks
        or final_check != "ok"
        or fts_check != "ok"
        or code != 0
        or exported != on_disk
        or len(acked) != len(set(acked))
    )
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
