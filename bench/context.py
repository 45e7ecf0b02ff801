"""Context latency as a soul's entries grow: 100, 2,000 and 10,000 active claims.

Each size gets its own real daemon (``soupd start``) and soul. The soul imports 2,000
notes (``event.import``), then the user states N entries one ``claim.add`` at a time;
then contexts are asked over the socket, end to end: with a query naming one topic
(about one entry in ten holds it: retrieval mode) and with no query at all (emergence:
the oldest, most pressing entries come up). Context assembly reads only the few entries
that can rank among the eight it keeps, so its cost should hardly grow with N.

    python bench/context.py [--sizes 100 2000 10000] [--contexts 200] [--json FILE]

Prints p50/p95 (milliseconds) for each kind of context, and the daemon's RSS.
"""

from __future__ import annotations

import argparse
import random
import time
from typing import Any

from _daemon import Client, machine, percentile, running_daemon, write_json

TOPICS = (
    "kayak lake garden tomato rent landlord band drums salary manager paint pottery yoga"
    " cat dog flat boxes trip train coffee tea"
).split()
NOTES = 2000
WARMUP = 10


def seed(client: Client, soul: str, entries: int, rng: random.Random) -> float:
    """Import the notes and state ``entries`` entries; seconds the entries took."""
    events = [
        {"text": f"note {i} about {rng.choice(TOPICS)} and {rng.choice(TOPICS)}", "ref": f"e{i}"}
        for i in range(NOTES)
    ]
    client.call("event.import", {"soul": soul, "events": events})
    started = time.perf_counter()
    for i in range(entries):
        value = f"likes {rng.choice(TOPICS)} number {i} with {rng.choice(TOPICS)}"
        client.call("claim.add", {"soul": soul, "value": value})
    return time.perf_counter() - started


def timed(client: Client, soul: str, queries: list[str | None]) -> dict[str, float]:
    """p50/p95 of the contexts for ``queries``, end to end, after a few to warm up."""
    frames = [client.frame("context", {"soul": soul, "query": q}) for q in queries]
    for frame in frames[:WARMUP]:
        client.send(frame)
    latencies = []
    for frame in frames[WARMUP:]:
        started = time.perf_counter()
        client.send(frame)
        latencies.append(time.perf_counter() - started)
    return {
        "p50_ms": round(percentile(latencies, 50) * 1000, 3),
        "p95_ms": round(percentile(latencies, 95) * 1000, 3),
    }


def measure(entries: int, contexts: int) -> dict[str, Any]:
    rng = random.Random(1)
    soul = f"c{entries}"
    with running_daemon({soul: ""}) as daemon, Client(daemon.socket) as client:
        stating_s = seed(client, soul, entries, rng)
        topical: list[str | None] = [
            f"what about the {rng.choice(TOPICS)}?" for _ in range(contexts + WARMUP)
        ]
        empty: list[str | None] = [None] * (contexts + WARMUP)
        return {
            "entries": entries,
            "claim_add_per_s": round(entries / stating_s) if stating_s else 0,
            "query": timed(client, soul, topical),
            "no_query": timed(client, soul, empty),
            "rss_mib": round(daemon.rss_kib() / 1024, 1),
        }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 2000, 10_000])
    parser.add_argument("--contexts", type=int, default=200)
    parser.add_argument("--json", metavar="FILE", help="also write the figures as JSON")
    args = parser.parse_args()
    rows = [measure(size, args.contexts) for size in args.sizes]
    print(
        f"{'entries':>8} {'query p50':>10} {'query p95':>10} {'none p50':>9} {'none p95':>9}"
        f" {'rss MiB':>8}"
    )
    for row in rows:
        query, empty = row["query"], row["no_query"]
        print(
            f"{row['entries']:>8} {query['p50_ms']:>10.3f} {query['p95_ms']:>10.3f}"
            f" {empty['p50_ms']:>9.3f} {empty['p95_ms']:>9.3f} {row['rss_mib']:>8}"
        )
    print("(milliseconds, end to end over the socket; query: one topic, none: no query)")
    write_json(args.json, {"machine": machine(), "contexts": rows})


if __name__ == "__main__":
    main()
