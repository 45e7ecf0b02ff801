"""Search on PostgreSQL against SQLite, on the LoCoMo dev turns: top-10 overlap (#21).

Each conversation of the benchmark file is loaded, turn by turn in batches as a channel
would push them (``ref`` = dia_id, ``sender`` = speaker, ``session`` = the session key,
``ts`` = its date-time; souls/store/neighbours indexes each turn with two turns each
side), into a fresh SQLite store (a real file) and a PostgreSQL store (a real server:
``--dsn``, or a throw-away one started as the tests do, tests/pgserver.py). Every
question (categories 1-4) is searched in both through the same interface call, with
soupd's tokenizer (``fts_match(query_terms(question))``), for the top 10:

* ``search``: own text only, as the store's plain search;
* ``candidates`` with the context weight 0.4, as recall fetches its candidates.

overlap = |top-10 SQLite ∩ top-10 PostgreSQL| / |top-10 SQLite|, averaged over the
questions with any match; also the share of identical rankings (same ids, same order)
and the largest score difference. The target (#21) is overlap ≥ 99 %.

    python bench/pg_overlap.py [--data ../shared/data/locomo/locomo10-dev.json]
        [--dsn postgresql://...] [--batch 20]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

from _pg import on_throwaway_server
from locomo import Conversation, load

from souls.store.interface import SoulStore
from souls.store.postgres.pool import RANKING_SETTINGS, create_pool
from souls.store.postgres.store import PgStore
from souls.store.store import NewEvent, Store
from souls.text.tokenize import fts_document, fts_match, query_terms

K = 10
WEIGHT = 0.4  # souls.recall.recall's default context_weight
TURNS = 2  # its default context_turns


def events(conversation: Conversation) -> list[NewEvent]:
    found = []
    for turn in conversation.turns:
        ts = datetime.fromisoformat(turn.when).timestamp()
        event = NewEvent(
            ref=turn.dia_id, kind="message", channel="locomo", sender=turn.speaker, group=None,
            mentioned=False, session=turn.session, ts=ts, recorded=ts, salience=0.5,
            text=turn.text, doc=fts_document(turn.text),
        )  # fmt: skip
        found.append(event)
    return found


async def load_into(store: SoulStore, batch: list[NewEvent], size: int) -> float:
    start = time.perf_counter()
    for offset in range(0, len(batch), size):
        await store.append(batch[offset : offset + size])
    return time.perf_counter() - start


async def compare(args: argparse.Namespace, dsn: str) -> int:
    conversations = load(args.data)
    # The daemon's pools (supervisor.shared): its sessions, and the searches' (generic plans).
    pool = await create_pool(dsn, min_size=1, max_size=2)
    ranking = await create_pool(dsn, min_size=1, max_size=1, settings=RANKING_SETTINGS)
    modes = ("search", "candidates")
    overlap: dict[str, list[float]] = {m: [] for m in modes}
    same: dict[str, int] = dict.fromkeys(modes, 0)
    asked: dict[str, int] = dict.fromkeys(modes, 0)
    worst = 0.0
    timings: dict[str, list[float]] = {"sqlite": [], "postgres": []}
    loads = {"sqlite": 0.0, "postgres": 0.0}
    turns = 0
    with tempfile.TemporaryDirectory() as folder:
        for number, conversation in enumerate(conversations):
            batch = events(conversation)
            turns += len(batch)
            sqlite = await Store.open(Path(folder) / f"{number}.db", context_turns=TURNS)
            pg = await PgStore.open(
                pool, f"overlap-{number}-{time.time_ns()}", context_turns=TURNS, ranking=ranking
            )
            loads["sqlite"] += await load_into(sqlite, batch, args.batch)
            loads["postgres"] += await load_into(pg, batch, args.batch)
            for question in conversation.questions:
                match = fts_match(query_terms(question.text))
                if not match:
                    continue
                for mode in modes:
                    results = []
                    for name, store in (("sqlite", sqlite), ("postgres", pg)):
                        start = time.perf_counter()
                        if mode == "search":
                            found = [(h.memory_id, h.score) for h in await store.search(match, K)]
                        else:
                            found = [
                                (c.memory_id, c.score)
                                for c in await store.candidates(match, K, WEIGHT)
                            ]
                        timings[name].append(time.perf_counter() - start)
                        results.append(found)
                    a, b = results
                    if not a:
                        continue
                    asked[mode] += 1
                    ids_a, ids_b = [m for m, _ in a], [m for m, _ in b]
                    overlap[mode].append(len(set(ids_a) & set(ids_b)) / len(ids_a))
                    same[mode] += ids_a == ids_b
                    scores_b = dict(b)
                    worst = max([worst, *(abs(s - scores_b[m]) for m, s in a if m in scores_b)])
            await sqlite.close()
            await pg.close()
    await pool.close()
    await ranking.close()
    print(f"LoCoMo dev: {len(conversations)} conversations, {turns} turns")
    ok = True
    for mode in modes:
        share = statistics.fmean(overlap[mode]) if overlap[mode] else 0.0
        ok = ok and share >= 0.99
        print(
            f"{mode:>10} top-{K}: overlap {100 * share:.2f} % over {asked[mode]} questions,"
            f" identical rankings {100 * same[mode] / max(asked[mode], 1):.2f} %"
        )
    print(f"largest score difference: {worst:.3g}")
    for name in ("sqlite", "postgres"):
        latency = sorted(timings[name])
        p50 = latency[len(latency) // 2] * 1000
        p95 = latency[int(len(latency) * 0.95)] * 1000
        print(
            f"{name:>10}: load {turns / loads[name]:.0f} turns/s (batches of {args.batch}),"
            f" query p50 {p50:.2f} ms p95 {p95:.2f} ms"
        )
    print("target overlap >= 99 %:", "met" if ok else "NOT met")
    return 0 if ok else 1


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    here = Path(__file__).resolve().parent
    parser.add_argument(
        "--data", default=str(here.parent.parent / "shared/data/locomo/locomo10-dev.json")
    )
    parser.add_argument("--dsn", help="a PostgreSQL database (default: a throw-away server)")
    parser.add_argument("--batch", type=int, default=20, help="turns per append")
    args = parser.parse_args()
    if args.dsn:
        sys.exit(asyncio.run(compare(args, args.dsn)))
    sys.exit(on_throwaway_server(lambda dsn: asyncio.run(compare(args, dsn))))


if __name__ == "__main__":
    main()
