"""Every benchmark in one run, one table: the figures of DESIGN §4 and where they came from.

    python bench/run.py [--quick] [--json FILE] [--only ingest import recall prefix souls crash]

Sections (each a real ``soupd start`` in a throw-away directory; the other scripts in
``bench/`` are reused, not copied):

* ingest — acked events/s over the socket from one pipelining client, cognition on and
  off (``ingest.py``), ack p50/p99;
* import — bulk import through ``event.import`` (gates, tokenizing, FTS; cognition on
  and off), beside the floor: the very rows soupd wrote, read back from its database
  and inserted with a bare ``sqlite3`` ``executemany`` into a fresh database of the
  same schema, one transaction per 2,000 events as soupd commits them; best of three
  rounds on both sides;
* recall — p50/p95 inside the daemon at 10k and 100k memories, beside bm25s
  (``recall.py``);
* prefix — the share of consecutive contexts whose stable prefix is byte-identical,
  a conversation played turn by turn (``prefix.py``: the first LoCoMo dev conversation
  when ``../shared/data`` is there, else a synthetic one);
* souls — start-up, RSS per idle soul and wake latency with 1,000 souls (``scale.py``);
* crash — ``kill -9`` rounds during ingest (``crash.py``, when it is there).

``--quick`` runs smaller sizes (a minute or two instead of ten). ``--json FILE`` also
writes every figure, and the machine, as JSON for tracking.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import ingest
import prefix
import recall
import scale
from _daemon import Client, machine, running_daemon, write_json

from souls.store.schema import MIGRATIONS
from supervisor.paths import soul_database

BENCH = Path(__file__).resolve().parent
IMPORT_BATCH = 2000  # events per event.import request, and soupd's [mailbox] import_batch
IMPORT_ROUNDS = 3  # imports per mode, each into a fresh soul; the best one counts


@dataclass(frozen=True)
class Sizes:
    ingest_events: int
    recall_sizes: tuple[int, ...]
    queries: int
    import_events: int
    souls: int
    wake_sample: int
    crash_rounds: int
    prefix_turns: int


FULL = Sizes(100_000, (10_000, 100_000), 2000, 100_000, 1000, 300, 40, 600)
QUICK = Sizes(20_000, (10_000,), 300, 20_000, 200, 100, 5, 200)
# The benchmark data beside the repository (read by benchmarks only), when it is there.
LOCOMO_DEV = BENCH.parent.parent / "shared" / "data" / "locomo" / "locomo10-dev.json"


# -- ingest ---------------------------------------------------------------------------


def ingest_figures(sizes: Sizes) -> dict[str, Any]:
    window = 512
    payload = ingest.frames(sizes.ingest_events, "bench")
    warm = [f.replace(b'"ref": "e', b'"ref": "w') for f in ingest.frames(2000, "bench")]
    figures: dict[str, Any] = {}
    for mode in ("on", "off"):
        soul = f"cognition = {'true' if mode == 'on' else 'false'}\n"
        daemon_toml = f"[socket]\nmax_in_flight = {window}\n"
        with running_daemon({"bench": soul}, daemon_toml) as daemon:
            asyncio.run(ingest.run(str(daemon.socket), warm, window))
            result = asyncio.run(ingest.run(str(daemon.socket), payload, window))
        if result.get("status_stored") != len(payload):
            raise RuntimeError(f"ingest, cognition {mode}: not every push was stored: {result}")
        figures[f"cognition_{mode}"] = result
    return figures


# -- bulk import and its floor ------------------------------------------------------------


def import_figures(sizes: Sizes) -> dict[str, Any]:
    """Best of ``IMPORT_ROUNDS`` on both sides: a fresh soul per round (woken, its
    database open and migrated, before the clock starts, as the floor's is), the
    floor three times over the first round's rows."""
    texts = recall.corpus(sizes.import_events, seed=13)
    modes = {"on": "cognition = true\n", "off": "cognition = false\n"}
    souls = {f"{mode}-{n}": toml for mode, toml in modes.items() for n in range(IMPORT_ROUNDS)}
    runs: dict[str, list[float]] = {mode: [] for mode in modes}
    figures: dict[str, Any] = {}
    with running_daemon(souls) as daemon, Client(daemon.socket) as client:
        # Rounds alternate between the modes, so a noisy neighbour hits both alike.
        for n in range(IMPORT_ROUNDS):
            for mode in modes:
                runs[mode].append(_import_once(client, f"{mode}-{n}", texts))
        for mode in modes:
            # The floor's best of three: a floor is what SQLite can do at best.
            database = soul_database(daemon.state(f"{mode}-0"))
            floors = [bare_sqlite_floor(database, IMPORT_BATCH) for _ in range(3)]
            rows, floor_s = min(floors, key=lambda floor: floor[1])
            soupd_s = min(runs[mode])
            figures[f"cognition_{mode}"] = {
                "events": len(texts),
                "rows": rows,
                "soupd_s": round(soupd_s, 3),
                "soupd_per_s": round(len(texts) / soupd_s),
                "soupd_per_s_rounds": [round(len(texts) / s) for s in runs[mode]],
                "floor_s": round(floor_s, 3),
                "floor_per_s": round(len(texts) / floor_s),
                "ratio": round(soupd_s / floor_s, 2),
            }
    return figures


def _import_once(client: Client, soul: str, texts: list[str]) -> float:
    """Seconds to import ``texts`` into ``soul`` in requests of IMPORT_BATCH events."""
    client.call("soul.stats", {"soul": soul})  # wakes the soul: not part of the import
    # Requests are encoded before the clock starts: the client's JSON is not soupd's
    # work (the floor, too, starts from rows in hand).
    frames = [
        client.frame(
            "event.import",
            {
                "soul": soul,
                "events": [
                    {"text": t, "ref": f"i{start + n}"}
                    for n, t in enumerate(texts[start : start + IMPORT_BATCH])
                ],
            },
        )
        for start in range(0, len(texts), IMPORT_BATCH)
    ]
    os.sync()  # the previous round's writes reach the disk now, not during this one
    started = time.perf_counter()
    stored = sum(client.send(frame)["stored"] for frame in frames)
    elapsed = time.perf_counter() - started
    if stored != len(texts):
        raise RuntimeError(f"import into {soul}: {stored} of {len(texts)} events stored")
    return elapsed


def bare_sqlite_floor(source: Path, batch: int) -> tuple[int, float]:
    """Insert the rows of ``source`` into a fresh database of the same schema with bare
    sqlite3 ``executemany``; returns (rows, seconds for the inserts and commits).

    Every table soupd wrote is copied (FTS5 tables through their own insert, so the
    index is built as soupd builds it; their shadow tables and fts5vocab views are
    not), ``batch`` rows of each table per transaction, tables in schema order: event
    by event the same work as soupd's import transactions, minus soupd itself.
    """
    tables = _rows_by_table(source)
    folder = Path(tempfile.mkdtemp(prefix="soupd-floor-"))
    try:
        db = sqlite3.connect(folder / "floor.db", isolation_level=None)
        db.execute("PRAGMA journal_mode = WAL")
        db.execute("PRAGMA synchronous = NORMAL")
        db.execute("PRAGMA foreign_keys = ON")
        for _, sql in MIGRATIONS:
            db.executescript(sql)
        for name, _, _ in tables:
            db.execute(f"DELETE FROM {name}")  # rows the migrations seeded, if any
        chunks = max((len(rows) + batch - 1) // batch for _, _, rows in tables) if tables else 0
        os.sync()  # as before each of soupd's rounds
        started = time.perf_counter()
        for chunk in range(chunks):
            db.execute("BEGIN IMMEDIATE")
            for _, insert, rows in tables:
                part = rows[chunk * batch : (chunk + 1) * batch]
                if part:
                    db.executemany(insert, part)
            db.execute("COMMIT")
        elapsed = time.perf_counter() - started
        db.close()
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return sum(len(rows) for _, _, rows in tables), elapsed


def _rows_by_table(source: Path) -> list[tuple[str, str, list[tuple[Any, ...]]]]:
    """(table, its INSERT statement, its rows) for every table with rows to copy."""
    found: list[tuple[str, str, list[tuple[Any, ...]]]] = []
    with contextlib.closing(sqlite3.connect(f"file:{source}?mode=ro", uri=True)) as db:
        schema = db.execute(
            "SELECT name, sql FROM sqlite_master WHERE type = 'table' ORDER BY rowid"
        ).fetchall()
        virtual = [name for name, sql in schema if sql.upper().startswith("CREATE VIRTUAL")]
        for name, sql in schema:
            shadow = any(name.startswith(f"{v}_") for v in virtual)
            if shadow or name == "migrations" or name.startswith("sqlite_") or "fts5vocab" in sql:
                continue
            is_fts = name in virtual
            cursor = db.execute(f"SELECT {'rowid, ' if is_fts else ''}* FROM {name}")
            rows = cursor.fetchall()
            if not rows:
                continue
            columns = [d[0] for d in cursor.description]
            marks = ",".join("?" * len(columns))
            found.append((name, f"INSERT INTO {name} ({','.join(columns)}) VALUES ({marks})", rows))
    return found


# -- recall, souls, crash -------------------------------------------------------------------


def recall_figures(sizes: Sizes) -> dict[str, Any]:
    figures: dict[str, Any] = {}
    with running_daemon({f"r{size}": "" for size in sizes.recall_sizes}) as daemon:
        for size in sizes.recall_sizes:
            texts = recall.corpus(size)
            qs = recall.queries(texts, sizes.queries)
            ours = asyncio.run(recall.measure_soupd(str(daemon.socket), f"r{size}", texts, qs, 10))
            theirs = recall.measure_bm25s(texts, qs, 10)
            figures[str(size)] = {"soupd": ours, "bm25s": theirs}
    return figures


def prefix_figures(sizes: Sizes) -> dict[str, Any]:
    data = str(LOCOMO_DEV) if LOCOMO_DEV.exists() else None
    return prefix.measure(data, sizes.prefix_turns)


def souls_figures(sizes: Sizes) -> dict[str, Any]:
    return scale.measure(sizes.souls, sizes.wake_sample, hibernate_after=1.0)


def crash_figures(sizes: Sizes) -> dict[str, Any]:
    script = BENCH / "crash.py"
    if not script.exists():
        return {"skipped": "bench/crash.py is not there"}
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, str(script), "--rounds", str(sizes.crash_rounds)],
        capture_output=True,
        text=True,
        check=False,
    )
    elapsed = round(time.monotonic() - started)
    figures: dict[str, Any] = {"exit": done.returncode, "seconds": elapsed}
    for line in done.stdout.splitlines():
        key, _, value = line.partition("  ")
        if key and value.strip() and not key.startswith(" "):
            figures[key.strip()] = value.strip()
    return figures


SECTIONS: dict[str, Callable[[Sizes], dict[str, Any]]] = {
    "ingest": ingest_figures,
    "import": import_figures,
    "recall": recall_figures,
    "prefix": prefix_figures,
    "souls": souls_figures,
    "crash": crash_figures,
}


# -- the table ----------------------------------------------------------------------------


def table(figures: dict[str, Any]) -> list[tuple[str, str]]:
    rows: list[tuple[str, str]] = []
    if "ingest" in figures:
        for mode in ("on", "off"):
            r = figures["ingest"][f"cognition_{mode}"]
            rows.append(
                (
                    f"acked events/s, one client, 512 in flight, cognition {mode}",
                    f"{r['acked_per_s']:,} (ack p50 {r['ack_p50_ms']:.1f} ms, "
                    f"p99 {r['ack_p99_ms']:.1f} ms)",
                )
            )
    if "import" in figures:
        for mode, what in (("on", "cognition on"), ("off", "plain store")):
            r = figures["import"][f"cognition_{mode}"]
            rows.append(
                (
                    f"bulk import, {r['events']:,} events, {what} (gates, tokenizing, FTS)",
                    f"{r['soupd_per_s']:,} events/s: {r['ratio']:.2f}x the floor "
                    f"({r['floor_per_s']:,} events/s; rounds "
                    f"{', '.join(f'{v:,}' for v in r['soupd_per_s_rounds'])})",
                )
            )
        rows.append(
            ("  floor: the same rows, bare sqlite3 executemany, same schema; best of 3", "")
        )
    for size, r in figures.get("recall", {}).items():
        ours, theirs = r["soupd"], r["bm25s"]
        bm25s = f" (bm25s {theirs['p50_ms']:.2f} / {theirs['p95_ms']:.2f})" if theirs else ""
        rows.append(
            (
                f"recall p50 / p95 inside the daemon, {int(size):,} memories",
                f"{ours['inside_p50_ms']:.2f} / {ours['inside_p95_ms']:.2f} ms{bm25s}",
            )
        )
    if "prefix" in figures:
        r = figures["prefix"]
        rows.append(
            (
                f"consecutive contexts with a byte-identical stable prefix ({r['source']}, "
                f"{r['contexts']} turns)",
                f"{r['stable_identical']:.1%} ({r['reflects']} reflects; "
                f"{r['stable_mean_chars']:,} chars); whole block before the recalled items "
                f"{r['before_recall_identical']:.1%}",
            )
        )
    if "souls" in figures:
        r = figures["souls"]
        rows += [
            (
                f"start-up with {r['souls']:,} souls (until the socket answers)",
                f"{r['startup_s']:.2f} s ({r['startup_fresh_s']:.2f} s on a fresh state)",
            ),
            (
                f"RSS with {r['souls']:,} idle (hibernating) souls",
                f"{r['rss_mib']:.1f} MiB (one soul: {r['rss_one_soul_mib']:.1f} MiB)",
            ),
            ("RSS per idle soul", f"{r['rss_per_idle_soul_kib']:.1f} KiB"),
            (
                "first reply from a hibernated soul (recall), p50 / p95",
                f"{r['wake_p50_ms']:.1f} / {r['wake_p95_ms']:.1f} ms "
                f"(awake: {r['awake_p50_ms']:.1f} / {r['awake_p95_ms']:.1f} ms)",
            ),
        ]
    if "crash" in figures:
        r = figures["crash"]
        if "skipped" in r:
            rows.append(("kill -9 during ingest", f"skipped: {r['skipped']}"))
        else:
            rows.append(
                (
                    f"kill -9 during ingest, {r.get('rounds', '?')} rounds",
                    f"{r.get('acked', '?')} acked, {r.get('lost', '?')} lost, "
                    f"{r.get('duplicates', '?')} duplicated (exit {r['exit']})",
                )
            )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="smaller sizes")
    parser.add_argument("--json", metavar="FILE", help="also write every figure as JSON")
    parser.add_argument("--only", nargs="+", choices=list(SECTIONS), help="run these only")
    args = parser.parse_args()
    sizes = QUICK if args.quick else FULL
    figures: dict[str, Any] = {"machine": machine(), "quick": args.quick}
    for name, section in SECTIONS.items():
        if args.only and name not in args.only:
            continue
        print(f"running {name}...", file=sys.stderr, flush=True)
        started = time.monotonic()
        figures[name] = section(sizes)
        print(f"  {name}: {time.monotonic() - started:.0f} s", file=sys.stderr, flush=True)
    rows = table(figures)
    width = max(len(label) for label, _ in rows)
    for label, value in rows:
        print(f"{label:<{width}}  {value}")
    m = figures["machine"]
    print(f"({m['nproc']} cores, {m['cpu']}, Python {m['python']}, SQLite {m['sqlite']})")
    write_json(args.json, figures)


if __name__ == "__main__":
    main()
