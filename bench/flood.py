"""Backpressure under a flood: memory stays bounded, clients are slowed instead.

Two phases against one real daemon whose soul has a small mailbox:

1. *stalled*: one client writes ``--stalled`` pushes and reads no reply. The daemon
   reads up to ``max_in_flight`` of them, then stops reading that connection; the
   figure is how many requests it took in while the client was stuck in ``send``.
2. *flood*: ``--clients`` connections pipeline ``--events`` pushes in all (far more
   than the mailbox holds) and read their acks as they come.

The daemon's RSS is read from ``/proc/<pid>/status`` before and after (VmRSS), and its
peak (VmHWM) at the end.

    python bench/flood.py [--events 200000] [--clients 4] [--capacity 64]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import socket
import threading
import time
from collections import Counter
from pathlib import Path

from _daemon import running_daemon

SOUL = "flood"


def memory(pid: int) -> dict[str, int]:
    """VmRSS and VmHWM of ``pid`` in MiB."""
    found = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            found[key] = int(value.split()[0]) // 1024
    return found


def frames(prefix: str, count: int) -> bytes:
    return b"".join(
        json.dumps(
            {
                "id": i,
                "method": "event.push",
                "params": {
                    "soul": SOUL,
                    "text": f"flood {prefix} item {i}: deploy {i % 97} finished on host-{i % 13}",
                    "ref": f"{prefix}-{i}",
                },
            }
        ).encode()
        + b"\n"
        for i in range(count)
    )


def call(path: Path, method: str, params: dict[str, object]) -> dict[str, object]:
    with socket.socket(socket.AF_UNIX) as sock:
        sock.connect(str(path))
        sock.sendall(json.dumps({"id": 0, "method": method, "params": params}).encode() + b"\n")
        return json.loads(sock.makefile("rb").readline())["result"]  # type: ignore[no-any-return]


def pipeline(path: Path, blob: bytes, count: int, statuses: Counter[str]) -> None:
    """Write ``blob`` from a thread and read ``count`` replies."""
    with socket.socket(socket.AF_UNIX) as sock:
        sock.connect(str(path))
        writer = threading.Thread(target=sock.sendall, args=(blob,), daemon=True)
        writer.start()
        stream = sock.makefile("rb")
        for _ in range(count):
            reply = json.loads(stream.readline())
            statuses[
                reply["result"]["status"] if "result" in reply else reply["error"]["code"]
            ] += 1
        writer.join()


def stalled(path: Path, count: int) -> dict[str, object]:
    """A client that writes and never reads: how far does the daemon let it get?"""
    before = call(path, "daemon.status", {})["requests"]
    sock = socket.socket(socket.AF_UNIX)
    sock.connect(str(path))
    sent = 0
    blob = frames("stalled", count)
    sock.setblocking(False)
    deadline = time.monotonic() + 5.0
    while sent < len(blob) and time.monotonic() < deadline:
        try:
            sent += sock.send(blob[sent : sent + 65536])
        except BlockingIOError:
            time.sleep(0.05)
    taken = call(path, "daemon.status", {})["requests"] - before - 1  # type: ignore[operator]
    with contextlib.suppress(OSError):
        sock.close()
    return {
        "stalled_frames_written": count,
        "stalled_bytes_accepted": sent,
        "stalled_bytes_total": len(blob),
        "stalled_requests_taken": taken,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--events", type=int, default=200_000)
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--capacity", type=int, default=64, help="the soul's mailbox capacity")
    parser.add_argument("--stalled", type=int, default=50_000)
    args = parser.parse_args()
    soul = f"[mailbox]\ncapacity = {args.capacity}\n"
    with running_daemon({SOUL: soul}) as daemon:
        pid = daemon.process.pid
        call(daemon.socket, "event.push", {"soul": SOUL, "text": "warm up", "ref": "warm"})
        start = memory(pid)
        figures: dict[str, object] = stalled(daemon.socket, args.stalled)
        figures["rss_after_stalled_mib"] = memory(pid)["VmRSS"]
        per_client = args.events // args.clients
        blobs = [frames(f"c{c}", per_client) for c in range(args.clients)]
        statuses: Counter[str] = Counter()
        threads = [
            threading.Thread(target=pipeline, args=(daemon.socket, blob, per_client, statuses))
            for blob in blobs
        ]
        started = time.perf_counter()
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        elapsed = time.perf_counter() - started
        end = memory(pid)
        stats = call(daemon.socket, "soul.stats", {"soul": SOUL})
    print(f"events                 {per_client * args.clients} from {args.clients} clients")
    print(f"mailbox capacity       {args.capacity}")
    for key, value in figures.items():
        print(f"{key:<22} {value}")
    print(f"acked per second       {per_client * args.clients / elapsed:.0f}")
    print(f"replies                {dict(statuses)}")
    print(f"events stored          {stats['events']}")
    print(f"rss before (MiB)       {start['VmRSS']}")
    print(f"rss after (MiB)        {end['VmRSS']}")
    print(f"rss peak (MiB)         {end['VmHWM']}")
    print(f"payload written (MiB)  {sum(len(b) for b in blobs) / 2**20:.1f}")


if __name__ == "__main__":
    main()
