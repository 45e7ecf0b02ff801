"""The shared PostgreSQL store beside SQLite (#21): acked events/s over the socket, bulk
import, recall inside the daemon, and takeover after kill -9.

Each figure comes from a real daemon (``soupd start``): one on SQLite files, one with
``[store] backend = "postgres"`` on a throw-away PostgreSQL server (started as the tests
do, tests/pgserver.py, or ``--dsn``). Pushes: one pipelining client, ``--window`` in
flight (bench/ingest.py's workload). Import: ``event.import`` in batches of 2,000.
Recall: the synthetic Zipf corpus and queries of bench/recall.py, timed by the soul's
own recall timer (``soul.stats``), on PostgreSQL once the imported tables are analysed
(as autovacuum does within a minute or so of their growth). Takeover: two daemons on
the database, the soul's owner killed with SIGKILL, the time until the other daemon
serves the soul.

    python bench/shared_store.py [--events 20000] [--sizes 10000] [--takeovers 10]
        [--dsn postgresql://...]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import socket
import statistics
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

import asyncpg
import ingest
import recall as recall_bench
from _daemon import machine, running_daemon, soupd_executable
from _pg import on_throwaway_server

HERE = Path(__file__).resolve().parent


def _store_toml(dsn_env: str | None, advertise: str = "http://127.0.0.1:1") -> str:
    if dsn_env is None:
        return ""
    return (
        f'[store]\nbackend = "postgres"\ndsn_env = "{dsn_env}"\nadvertise = "{advertise}"\n'
        "pool_max = 20\n"
    )


def pushes(dsn_env: str | None, events: int, window: int) -> dict[str, float]:
    daemon_toml = f"[http]\nenabled = false\n[socket]\nmax_in_flight = {window}\n"
    with running_daemon({"bench": ""}, daemon_toml + _store_toml(dsn_env)) as daemon:
        warm = [f.replace(b'"ref": "e', b'"ref": "w') for f in ingest.frames(1000, "bench")]
        asyncio.run(ingest.run(str(daemon.socket), warm, window))
        return asyncio.run(ingest.run(str(daemon.socket), ingest.frames(events, "bench"), window))


def imports_and_recall(dsn_env: str | None, size: int, queries: int) -> dict[str, float]:
    texts = recall_bench.corpus(size)
    qs = recall_bench.queries(texts, queries)
    daemon_toml = "[http]\nenabled = false\n" + _store_toml(dsn_env)

    async def analysed() -> None:
        # The statistics autovacuum gathers within a minute or so of a table's growth (a
        # freshly imported soul's plans are made before it has: its candidates' rows
        # are then read by a scan of the soul's whole index): recall measured as it runs
        # from then on, not in its first minute.
        db = await asyncpg.connect(os.environ[dsn_env or ""])
        try:
            await db.execute("ANALYZE")
        finally:
            await db.close()

    with running_daemon({f"r{size}": ""}, daemon_toml) as daemon:
        measured = recall_bench.measure_soupd(
            str(daemon.socket), f"r{size}", texts, qs, 10, imported=analysed if dsn_env else None
        )
        return asyncio.run(measured)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


def _start(root: Path, dsn_env: str, token: Path) -> tuple[subprocess.Popen[bytes], Path]:
    port = _free_port()
    config = root / "config" / "soupd"
    (config / "souls").mkdir(parents=True, exist_ok=True)
    (config / "soupd.toml").write_text(
        f'[log]\nlevel = "warning"\n[http]\nport = {port}\ntoken_file = "{token}"\n'
        + _store_toml(dsn_env, f"http://127.0.0.1:{port}")
    )
    (config / "souls" / "alpha.toml").write_text("[lifecycle]\nhibernate_after = 0\n")
    env = dict(os.environ)
    env.update(
        XDG_CONFIG_HOME=str(root / "config"),
        XDG_STATE_HOME=str(root / "state"),
        XDG_RUNTIME_DIR=str(root / "run"),
    )
    sock = root / "run" / "soupd" / "soupd.sock"
    log = open(root / "daemon.log", "ab")  # noqa: SIM115 - the process keeps it
    process = subprocess.Popen([soupd_executable(), "start"], env=env, stdout=log, stderr=log)
    deadline = time.monotonic() + 60
    while not _stats(sock):
        if process.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError(f"daemon in {root} did not start; see {root / 'daemon.log'}")
        time.sleep(0.02)
    return process, sock


def _stats(sock: Path) -> dict[str, Any] | None:
    """alpha's stats through the daemon at ``sock`` (served there or forwarded), or None."""
    try:
        with socket.socket(socket.AF_UNIX) as conn:
            conn.settimeout(10)
            conn.connect(str(sock))
            conn.sendall(b'{"id": 1, "method": "soul.stats", "params": {"soul": "alpha"}}\n')
            reply = b""
            while not reply.endswith(b"\n"):
                chunk = conn.recv(65536)
                if not chunk:
                    return None
                reply += chunk
    except OSError:
        return None
    answer: dict[str, Any] = json.loads(reply)
    result: dict[str, Any] | None = answer.get("result")
    return result


def takeovers(dsn_env: str, rounds: int) -> dict[str, float]:
    """Seconds from the owner's SIGKILL until the other daemon serves the soul itself."""
    root = Path(tempfile.mkdtemp(prefix="soupd-takeover-"))
    token = root / "http.token"
    homes = [root / "a", root / "b"]
    procs: list[subprocess.Popen[bytes]] = []
    socks: list[Path] = []
    for home in homes:
        proc, sock = _start(home, dsn_env, token)
        procs.append(proc)
        socks.append(sock)
    taken: list[float] = []
    try:
        owner = 0  # the first to start took alpha (hibernate_after = 0)
        for _ in range(rounds):
            procs[owner].send_signal(signal.SIGKILL)
            procs[owner].wait()
            killed = time.monotonic()
            while _stats(socks[1 - owner]) is None:
                time.sleep(0.005)
            taken.append(time.monotonic() - killed)
            procs[owner], socks[owner] = _start(homes[owner], dsn_env, token)
            owner = 1 - owner
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
                proc.wait(30)
    return {
        "rounds": rounds,
        "takeover_p50_ms": round(statistics.median(taken) * 1000, 1),
        "takeover_max_ms": round(max(taken) * 1000, 1),
    }


def measure(args: argparse.Namespace, dsn: str) -> None:
    os.environ["SOUPD_BENCH_DSN"] = dsn
    rows: dict[str, dict[str, dict[str, float]]] = {"sqlite": {}, "postgres": {}}
    for backend, env in (("sqlite", None), ("postgres", "SOUPD_BENCH_DSN")):
        rows[backend]["push"] = pushes(env, args.events, args.window)
        for size in args.sizes:
            rows[backend][f"{size}"] = imports_and_recall(env, size, args.queries)
    print(f"{'':<34}{'sqlite':>12}{'postgres':>12}{'pg/sqlite':>11}")
    lines = [("acked events/s (socket)", "push", "acked_per_s"),
             ("ack p50 ms", "push", "ack_p50_ms"),
             ("ack p99 ms", "push", "ack_p99_ms")]  # fmt: skip
    for size in args.sizes:
        lines += [(f"import events/s ({size})", f"{size}", "import_per_s"),
                  (f"recall p50 ms in daemon ({size})", f"{size}", "inside_p50_ms"),
                  (f"recall p95 ms in daemon ({size})", f"{size}", "inside_p95_ms")]  # fmt: skip
    for title, group, key in lines:
        lite, pg = rows["sqlite"][group][key], rows["postgres"][group][key]
        print(f"{title:<34}{lite:>12}{pg:>12}{pg / lite:>10.2f}x")
    if args.takeovers:
        found = takeovers("SOUPD_BENCH_DSN", args.takeovers)
        print(f"takeover after kill -9 of the owner, {found['rounds']} rounds: "
              f"p50 {found['takeover_p50_ms']} ms, max {found['takeover_max_ms']} ms")  # fmt: skip
    print(machine(), "load average", os.getloadavg())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--events", type=int, default=20_000, help="pushes per backend")
    parser.add_argument("--window", type=int, default=512)
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000])
    parser.add_argument("--queries", type=int, default=2000)
    parser.add_argument("--takeovers", type=int, default=10, help="kill -9 rounds (0: none)")
    parser.add_argument("--dsn", help="a PostgreSQL database (default: a throw-away server)")
    args = parser.parse_args()
    if args.dsn:
        measure(args, args.dsn)
        return
    on_throwaway_server(lambda dsn: measure(args, dsn))


if __name__ == "__main__":
    main()
