"""Where a recall's time goes at 10k memories, inside one process: the lexical path.

A real daemon imports the memories (bench/recall.py's Zipf corpus, or LoCoMo turns with
``--locomo PATH``, in sessions of 20 turns by two senders) and stops; the soul's
database is then opened here and the same queries are recalled through
:func:`souls.recall.recall.recall` as the soul calls it (Hebbian spare, hit cache). On a
shared machine wall clock moves with the neighbours; what does not is the split:
``main-thread cpu`` is the recall's Python (the event loop's thread), the rest of a
recall is SQLite on aiosqlite's thread and the hand-over. ``--profile N`` prints the N
functions with the most own time (cProfile: call counts are exact, times inflated).

    python bench/recall_profile.py [--locomo PATH] [--size 10000] [--queries 1000]
        [--profile 25]
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import pstats
import tempfile
import time
from pathlib import Path

from _daemon import percentile, running_daemon
from recall import call, corpus, event, locomo_corpus, queries

from souls.mind.hebbian import Associations, HebbianConfig
from souls.recall.recall import HitCache, RecallConfig, recall
from souls.store.store import Store


async def fill(socket_path: str, texts: list[str]) -> None:
    reader, writer = await asyncio.open_unix_connection(socket_path, limit=1 << 24)
    for start in range(0, len(texts), 2000):
        events = [event(start + i, t, 20) for i, t in enumerate(texts[start : start + 2000])]
        await call(reader, writer, "event.import", {"soul": "bench", "events": events})
    writer.close()


async def measure(db: Path, qs: list[str], k: int, profile: int) -> None:
    store = await Store.open(db)
    config, hebbian, cache, edges = RecallConfig(), HebbianConfig(), HitCache(), Associations()

    async def one(query: str) -> None:
        stats = await store.term_stats()
        await recall(
            store, stats, config, query, k, associations=edges, hebbian=hebbian, cache=cache,
            now=time.time(),
        )  # fmt: skip

    try:
        for q in qs[:50]:
            await one(q)
        wall, cpu = [], []
        for q in qs:
            started, used = time.perf_counter(), time.thread_time()
            await one(q)
            cpu.append(time.thread_time() - used)
            wall.append(time.perf_counter() - started)
        print(
            f"{len(qs)} recalls, k = {k}: wall p50 {percentile(wall, 50) * 1e3:.3f} ms"
            f" p95 {percentile(wall, 95) * 1e3:.3f}; main-thread cpu p50"
            f" {percentile(cpu, 50) * 1e3:.3f} ms (the rest: SQLite and the hand-over)"
        )
        if profile:
            profiler = cProfile.Profile()
            profiler.enable()
            for q in qs:
                await one(q)
            profiler.disable()
            pstats.Stats(profiler).sort_stats("tottime").print_stats(profile)
    finally:
        await store.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--locomo", metavar="PATH", help="LoCoMo turns and questions")
    parser.add_argument("--size", type=int, default=10_000)
    parser.add_argument("--queries", type=int, default=1000)
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--profile", type=int, default=0, metavar="N")
    args = parser.parse_args()
    if args.locomo:
        texts, questions = locomo_corpus(args.locomo, args.size)
        qs = (questions * (args.queries // len(questions) + 1))[: args.queries]
    else:
        texts = corpus(args.size)
        qs = queries(texts, args.queries)
    with tempfile.TemporaryDirectory(prefix="soupd-profile-") as tmp:
        root = Path(tmp)
        with running_daemon({"bench": ""}, root=root) as daemon:
            asyncio.run(fill(str(daemon.socket), texts))
            db = daemon.state("bench") / "soul.db"
        asyncio.run(measure(db, qs, args.k, args.profile))


if __name__ == "__main__":
    main()
