"""Recall latency at 10k and 100k memories, beside a plain BM25 library (bm25s).

A deterministic synthetic corpus (Zipf-distributed vocabulary, 8-24 words a text: a
hard case, full of very common words) or, with ``--locomo PATH``, real conversation
turns resampled to size, is imported through the socket into a real daemon, one soul
per size. With ``--sessions N`` the events carry sessions of N turns said by two
alternating senders, as a channel's would (each memory is then indexed with its
neighbouring turns). Queries are 2-5 words taken from corpus texts. soupd's latency is
measured inside the daemon (the soul's own recall timer, reported by ``soul.stats``)
and end to end over the socket; bm25s (``pip install bm25s``) is timed on the same
texts and queries, one query at a time, with the same k.

    python bench/recall.py [--sizes 10000 100000] [--queries 2000] [--k 10] [--sessions 20]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import time
from collections.abc import Awaitable, Callable

from _daemon import percentile, running_daemon

SYLLABLES = (
    "ka lo mi ne ru sa to vi de fa gu ho ji ke li mo nu pa qi re si tu wa xe yo ze"
).split()


def vocabulary(size: int, rng: random.Random) -> list[str]:
    words: set[str] = set()
    while len(words) < size:
        words.add("".join(rng.choice(SYLLABLES) for _ in range(rng.randint(1, 4))))
    return sorted(words)


def corpus(count: int, seed: int = 7) -> list[str]:
    rng = random.Random(seed)
    words = vocabulary(20_000, rng)
    weights = [1 / (rank + 1) for rank in range(len(words))]
    cumulative = []
    total = 0.0
    for w in weights:
        total += w
        cumulative.append(total)
    return [
        " ".join(rng.choices(words, cum_weights=cumulative, k=rng.randint(8, 24)))
        for _ in range(count)
    ]


def locomo_corpus(path: str, count: int, seed: int = 7) -> tuple[list[str], list[str]]:
    """Real conversation turns (LoCoMo), resampled with their words shuffled up to
    ``count`` texts, and the benchmark's real questions as queries."""
    with open(path) as handle:
        samples = json.load(handle)
    turns: list[str] = []
    questions: list[str] = []
    for sample in samples:
        for key, session in sample["conversation"].items():
            if key.startswith("session_") and isinstance(session, list):
                turns += [turn["text"] for turn in session]
        questions += [qa["question"] for qa in sample["qa"]]
    rng = random.Random(seed)
    texts = list(turns)
    while len(texts) < count:
        words = rng.choice(turns).split()
        rng.shuffle(words)
        texts.append(" ".join(words))
    return texts[:count], questions


def queries(texts: list[str], count: int, seed: int = 11) -> list[str]:
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        words = rng.choice(texts).split()
        size = min(len(words), rng.randint(2, 5))
        start = rng.randint(0, len(words) - size)
        out.append(" ".join(words[start : start + size]))
    return out


async def call(reader, writer, method, params, request_id=1):  # type: ignore[no-untyped-def]
    writer.write(
        json.dumps({"id": request_id, "method": method, "params": params}).encode() + b"\n"
    )
    await writer.drain()
    reply = json.loads(await reader.readline())
    if "error" in reply:
        raise RuntimeError(reply["error"])
    return reply["result"]


SENDERS = ("alice", "bob")


def event(index: int, text: str, sessions: int) -> dict[str, str]:
    """The ``index``-th event; with ``sessions`` > 0, in a session of that many turns by
    two alternating senders."""
    if not sessions:
        return {"text": text, "ref": f"t{index}"}
    return {
        "text": text,
        "ref": f"t{index}",
        "session": f"s{index // sessions}",
        "sender": SENDERS[index % 2],
    }


async def measure_soupd(
    socket_path: str,
    soul: str,
    texts: list[str],
    qs: list[str],
    k: int,
    sessions: int = 0,
    imported: Callable[[], Awaitable[None]] | None = None,
) -> dict[str, float]:
    """``imported``: awaited between the import and the queries (not timed)."""
    reader, writer = await asyncio.open_unix_connection(socket_path, limit=1 << 24)
    started = time.perf_counter()
    for start in range(0, len(texts), 2000):
        events = [event(start + i, t, sessions) for i, t in enumerate(texts[start : start + 2000])]
        await call(reader, writer, "event.import", {"soul": soul, "events": events})
    import_s = time.perf_counter() - started
    if imported is not None:
        await imported()
    round_trips = []
    for q in qs:
        t0 = time.perf_counter()
        await call(reader, writer, "recall", {"soul": soul, "query": q, "k": k})
        round_trips.append(time.perf_counter() - t0)
    stats = await call(reader, writer, "soul.stats", {"soul": soul})
    writer.close()
    return {
        "import_per_s": round(len(texts) / import_s),
        "inside_p50_ms": stats["recall_p50_ms"],
        "inside_p95_ms": stats["recall_p95_ms"],
        "socket_p50_ms": round(percentile(round_trips, 50) * 1000, 3),
        "socket_p95_ms": round(percentile(round_trips, 95) * 1000, 3),
    }


def measure_bm25s(texts: list[str], qs: list[str], k: int) -> dict[str, float] | None:
    try:
        import bm25s
        import Stemmer
    except ImportError:
        return None
    stemmer = Stemmer.Stemmer("english")
    retriever = bm25s.BM25()
    retriever.index(
        bm25s.tokenize(texts, stopwords="en", stemmer=stemmer, show_progress=False),
        show_progress=False,
    )
    latencies = []
    for q in qs:
        t0 = time.perf_counter()
        tokens = bm25s.tokenize([q], stopwords="en", stemmer=stemmer, show_progress=False)
        retriever.retrieve(tokens, k=k, show_progress=False)
        latencies.append(time.perf_counter() - t0)
    return {
        "p50_ms": round(percentile(latencies, 50) * 1000, 3),
        "p95_ms": round(percentile(latencies, 95) * 1000, 3),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--queries", type=int, default=2000)
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument(
        "--locomo",
        metavar="PATH",
        help="use LoCoMo turns (e.g. ../shared/data/locomo/locomo10-dev.json) instead of "
        "the synthetic Zipf corpus, and its questions as queries",
    )
    parser.add_argument(
        "--sessions",
        type=int,
        default=0,
        metavar="N",
        help="events in sessions of N turns by two alternating senders (default: none)",
    )
    args = parser.parse_args()
    souls = {f"r{size}": "" for size in args.sizes}
    rows = []
    with running_daemon(souls) as daemon:
        for size in args.sizes:
            if args.locomo:
                texts, questions = locomo_corpus(args.locomo, size)
                qs = (questions * (args.queries // len(questions) + 1))[: args.queries]
            else:
                texts = corpus(size)
                qs = queries(texts, args.queries)
            ours = asyncio.run(
                measure_soupd(str(daemon.socket), f"r{size}", texts, qs, args.k, args.sessions)
            )
            theirs = measure_bm25s(texts, qs, args.k)
            rows.append((size, ours, theirs))
    print(
        f"{'memories':>9} {'soupd p50':>10} {'soupd p95':>10} {'socket p50':>11} {'socket p95':>11}"
        f" {'bm25s p50':>10} {'bm25s p95':>10} {'import/s':>9}"
    )
    for size, ours, theirs in rows:
        b50 = f"{theirs['p50_ms']:.3f}" if theirs else "n/a"
        b95 = f"{theirs['p95_ms']:.3f}" if theirs else "n/a"
        print(
            f"{size:>9} {ours['inside_p50_ms']:>10.3f} {ours['inside_p95_ms']:>10.3f}"
            f" {ours['socket_p50_ms']:>11.3f} {ours['socket_p95_ms']:>11.3f} {b50:>10} {b95:>10}"
            f" {ours['import_per_s']:>9}"
        )
    print("(milliseconds; soupd p50/p95 measured inside the daemon, socket = end to end)")


if __name__ == "__main__":
    main()
