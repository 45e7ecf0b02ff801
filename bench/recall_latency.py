"""Recall latency inside the daemon at 10k memories: the lexical path (provider none)
beside the hybrid one (provider openai, all-MiniLM-L6-v2 served on loopback by
:mod:`_minilm`), the query's own embedding time reported apart.

Two souls of one daemon get the same memories (LoCoMo turns resampled to ``--size``,
words shuffled past the real ones, in sessions of 20 turns by two senders); once every
memory of the hybrid soul has its vector, each soul answers the same real questions.
Figures come from the souls' own timers (``soul.stats``): ``recall_p50_ms`` is a
recall's time without the wait for its query's vector, which ``embedding.query_p50_ms``
gives apart; ``ms_per_search`` is the nearest-vector search alone.

    MINILM_CACHE=/tmp/minilm.pkl python bench/recall_latency.py \\
        --locomo ../shared/data/locomo/locomo10-dev.json | --synthetic
        [--size 10000] [--queries 1000]

(``MINILM_CACHE`` keeps the memories' vectors between runs; queries always go to the
model.)
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time

import _minilm
from _daemon import machine, percentile, running_daemon
from recall import call, corpus, event, locomo_corpus, queries


async def fill(socket_path: str, soul: str, texts: list[str]) -> float:
    reader, writer = await asyncio.open_unix_connection(socket_path, limit=1 << 24)
    started = time.perf_counter()
    for start in range(0, len(texts), 2000):
        events = [event(start + i, t, 20) for i, t in enumerate(texts[start : start + 2000])]
        await call(reader, writer, "event.import", {"soul": soul, "events": events})
    writer.close()
    return time.perf_counter() - started


async def embedded(socket_path: str, soul: str, count: int, limit: float = 3600) -> float:
    reader, writer = await asyncio.open_unix_connection(socket_path, limit=1 << 24)
    started = time.perf_counter()
    try:
        while time.perf_counter() - started < limit:
            stats = await call(reader, writer, "soul.stats", {"soul": soul})
            if stats["embedding"].get("vectors", 0) >= count:
                return time.perf_counter() - started
            await asyncio.sleep(0.5)
    finally:
        writer.close()
    raise RuntimeError(f"{soul}: not embedded within {limit} s")


TRIPS: dict[str, list[float]] = {}  # socket round trips per soul, warm-up excluded


async def ask(socket_path: str, soul: str, qs: list[str], k: int) -> dict[str, object]:
    reader, writer = await asyncio.open_unix_connection(socket_path, limit=1 << 24)
    trips = TRIPS.setdefault(soul, [])
    for n, q in enumerate(qs):
        t0 = time.perf_counter()
        await call(reader, writer, "recall", {"soul": soul, "query": q, "k": k}, n)
        trips.append(time.perf_counter() - t0)
    stats = await call(reader, writer, "soul.stats", {"soul": soul})
    writer.close()
    figures: dict[str, object] = {
        "recall_p50_ms": stats["recall_p50_ms"],
        "recall_p95_ms": stats["recall_p95_ms"],
        "socket_p50_ms": round(percentile(trips, 50) * 1000, 3) if trips else None,
    }
    emb = stats["embedding"]
    if emb:
        figures |= {
            "query_embedding_p50_ms": emb["query_p50_ms"],
            "search_ms": emb["ms_per_search"],
            "search": emb["search"],
            "vectors": emb["vectors"],
            "queries_lexical": emb["queries_lexical"],
        }
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--locomo", metavar="PATH", help="LoCoMo turns and questions")
    parser.add_argument(
        "--synthetic",
        action="store_true",
        help="bench/recall.py's Zipf corpus and 2-5 word queries instead (what its lexical"
        " figures are measured on)",
    )
    parser.add_argument("--size", type=int, default=10_000)
    parser.add_argument("--queries", type=int, default=1000)
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if args.synthetic:
        texts = corpus(args.size)
        qs = queries(texts, args.queries)
    elif args.locomo:
        texts, questions = locomo_corpus(args.locomo, args.size)
        qs = (questions * (args.queries // len(questions) + 1))[: args.queries]
    else:
        parser.error("give --locomo PATH or --synthetic")
    with _minilm.serving() as (url, _served):
        hybrid = (
            '[embedding]\nprovider = "openai"\n'
            f'model = "{_minilm.MODEL}"\nbase_url = "{url}"\nquery_timeout = 10\n'
        )
        souls = {"lexical": "", "hybrid": hybrid}
        with running_daemon(souls) as daemon:
            sock = str(daemon.socket)
            asyncio.run(fill(sock, "lexical", texts))
            asyncio.run(fill(sock, "hybrid", texts))
            waited = asyncio.run(embedded(sock, "hybrid", args.size))
            _minilm.save()
            _minilm.caching(False)  # from here every query goes to the model
            warm = qs[:50]
            for soul in souls:
                asyncio.run(ask(sock, soul, warm, args.k))
            TRIPS.clear()
            # Alternate halves so that a noisy neighbour hits both alike.
            half = len(qs) // 2
            for part in (qs[:half], qs[half:]):
                for soul in souls:
                    asyncio.run(ask(sock, soul, part, args.k))
            figures = {soul: asyncio.run(ask(sock, soul, [], args.k)) for soul in souls}
    figures["embedded_in_s"] = round(waited, 1)  # type: ignore[assignment]
    figures["machine"] = machine()
    if args.json:
        print(json.dumps(figures, indent=2))
        return
    lexical, hybrid_figures = figures["lexical"], figures["hybrid"]
    print(f"{args.size} memories, {len(qs)} queries (+{len(warm)} warm-up), k = {args.k}")
    print(
        f"lexical  recall p50 {lexical['recall_p50_ms']:.3f} ms  p95 {lexical['recall_p95_ms']:.3f}"
    )
    print(
        f"hybrid   recall p50 {hybrid_figures['recall_p50_ms']:.3f} ms  "
        f"p95 {hybrid_figures['recall_p95_ms']:.3f} (without the query's embedding), "
        f"of which search {hybrid_figures['search_ms']:.3f} ms ({hybrid_figures['search']})"
    )
    print(
        f"query embedding p50 {hybrid_figures['query_embedding_p50_ms']:.3f} ms "
        f"(MiniLM over loopback HTTP); lexical fallbacks {hybrid_figures['queries_lexical']}"
    )
    print(
        f"socket p50: lexical {lexical['socket_p50_ms']} ms, "
        f"hybrid {hybrid_figures['socket_p50_ms']} ms"
    )


if __name__ == "__main__":
    main()
