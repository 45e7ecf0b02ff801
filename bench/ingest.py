"""Acked events per second over the socket, and ack latency p50/p99.

One pipelining client keeps up to ``--window`` pushes in flight on one connection to
a real daemon (all gates on, each ack sent after its transaction committed).

    python bench/ingest.py [--events 100000] [--window 512]
        [--embedding hashed|minilm]

``--embedding``: the same soul with and without ``[embedding] provider = "openai"``,
alternating, against a loopback OpenAI-compatible server in a process of its own: ``hashed``
vectors (the daemon's own cost of embedding behind the ack: backlog, batches, vector
writes in its turns) or all-MiniLM-L6-v2 (the model's CPU shares the machine too).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import time

from _daemon import percentile, running_daemon

TEXTS = [
    "deploy {i} finished on prod-{r} in {s} seconds",
    "user {r} asked about the invoice for order {i}",
    "build {i} failed: test_{r} timed out after {s}s",
    "the cat knocked over plant number {r} again",
    "数据库迁移 {i} 在 {s} 秒内完成",
]


def frames(count: int, soul: str) -> list[bytes]:
    out = []
    for i in range(count):
        text = TEXTS[i % len(TEXTS)].format(i=i, r=i % 97, s=i % 60)
        request = {
            "id": i,
            "method": "event.push",
            "params": {"soul": soul, "text": text, "kind": "dm" if i % 3 else "message",
                       "ref": f"e{i}", "sender": f"user{i % 7}"},
        }  # fmt: skip
        out.append(json.dumps(request).encode() + b"\n")
    return out


async def run(socket_path: str, payload: list[bytes], window: int) -> dict[str, float]:
    reader, writer = await asyncio.open_unix_connection(socket_path, limit=1 << 22)
    sent_at: list[float] = [0.0] * len(payload)
    latencies: list[float] = []
    slots = asyncio.Semaphore(window)
    statuses: dict[str, int] = {}

    async def read() -> None:
        for _ in range(len(payload)):
            line = await reader.readline()
            now = time.perf_counter()
            reply = json.loads(line)
            slots.release()
            latencies.append(now - sent_at[reply["id"]])
            status = reply["result"]["status"] if "result" in reply else reply["error"]["code"]
            statuses[status] = statuses.get(status, 0) + 1

    reading = asyncio.create_task(read())
    started = time.perf_counter()
    for i, frame in enumerate(payload):
        await slots.acquire()
        sent_at[i] = time.perf_counter()
        writer.write(frame)
        if i % 64 == 63:
            await writer.drain()
    await writer.drain()
    await reading
    elapsed = time.perf_counter() - started
    writer.close()
    return {
        "events": len(payload),
        "seconds": round(elapsed, 3),
        "acked_per_s": round(len(payload) / elapsed),
        "ack_p50_ms": round(percentile(latencies, 50) * 1000, 3),
        "ack_p99_ms": round(percentile(latencies, 99) * 1000, 3),
        **{f"status_{k}": v for k, v in statuses.items()},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--events", type=int, default=100_000)
    parser.add_argument("--window", type=int, default=512)
    parser.add_argument("--synchronous", default="normal", choices=["normal", "full"])
    parser.add_argument("--rounds", type=int, default=1, help="alternating rounds (median)")
    parser.add_argument(
        "--cognition",
        default="on",
        choices=["on", "off", "both"],
        help="run with the soul's cognitive loop on, off (a plain store), or both",
    )
    parser.add_argument(
        "--embedding",
        choices=["hashed", "minilm"],
        help="compare provider none with provider openai (hashed vectors or MiniLM)",
    )
    args = parser.parse_args()
    if args.embedding:
        embedding(args)
        return
    payload = frames(args.events, "bench")
    modes = ["on", "off"] if args.cognition == "both" else [args.cognition]
    runs: dict[str, list[dict[str, float]]] = {mode: [] for mode in modes}
    # Modes alternate round by round so that a noisy neighbour hits both alike; each
    # figure is the median over the rounds.
    for _ in range(args.rounds):
        for mode in modes:
            soul = f"cognition = {'true' if mode == 'on' else 'false'}\n"
            soul += f'[store]\nsynchronous = "{args.synchronous}"\n'
            daemon_toml = f"[socket]\nmax_in_flight = {args.window}\n"
            with running_daemon({"bench": soul}, daemon_toml) as daemon:
                warm = [f.replace(b'"ref": "e', b'"ref": "w') for f in frames(2000, "bench")]
                asyncio.run(run(str(daemon.socket), warm, args.window))
                runs[mode].append(asyncio.run(run(str(daemon.socket), payload, args.window)))
    results = {
        mode: {key: statistics.median(r[key] for r in rounds) for key in rounds[0]}
        for mode, rounds in runs.items()
    }
    keys = list(next(iter(results.values())))
    print(f"{'':<14}" + "".join(f"{'cognition ' + m:>16}" for m in modes))
    for key in keys:
        print(f"{key:<14}" + "".join(f"{results[m].get(key, ''):>16}" for m in modes))
    if len(modes) == 2:
        cost = 1 - results["on"]["acked_per_s"] / results["off"]["acked_per_s"]
        print(f"cognition costs {cost:.1%} of the plain store's acked events/s")
    print(
        f"synchronous = {args.synchronous}, window = {args.window}, "
        f"median of {args.rounds} round(s)"
    )


def embedding(args: argparse.Namespace) -> None:
    """Acked events/s of one soul with provider none and with provider openai."""
    import _minilm

    payload = frames(args.events, "bench")
    runs: dict[str, list[dict[str, float]]] = {"none": [], "openai": []}
    lagging: list[dict[str, object]] = []
    with _minilm.serving_apart(cheap=args.embedding == "hashed") as url:
        table = f'[embedding]\nprovider = "openai"\nmodel = "m"\nbase_url = "{url}"\n'
        for _ in range(args.rounds):
            for mode in runs:
                soul = f'[store]\nsynchronous = "{args.synchronous}"\n'
                soul += table if mode == "openai" else ""
                daemon_toml = f"[socket]\nmax_in_flight = {args.window}\n"
                with running_daemon({"bench": soul}, daemon_toml) as daemon:
                    warm = [f.replace(b'"ref": "e', b'"ref": "w') for f in frames(2000, "bench")]
                    asyncio.run(run(str(daemon.socket), warm, args.window))
                    runs[mode].append(asyncio.run(run(str(daemon.socket), payload, args.window)))
                    if mode == "openai":
                        from _daemon import Client

                        with Client(daemon.socket) as client:
                            lagging.append(
                                client.call("soul.stats", {"soul": "bench"})["embedding"]
                            )
    results = {
        mode: {key: statistics.median(r[key] for r in rounds) for key in rounds[0]}
        for mode, rounds in runs.items()
    }
    print(f"{'':<14}{'provider none':>16}{'provider openai':>18}")
    for key in results["none"]:
        print(f"{key:<14}{results['none'].get(key, ''):>16}{results['openai'].get(key, ''):>18}")
    cost = 1 - results["openai"]["acked_per_s"] / results["none"]["acked_per_s"]
    print(f"the provider costs {cost:.1%} of acked events/s ({args.embedding} vectors)")
    last = lagging[-1]
    print(
        f"at the last ack: {last['vectors']} vectors, backlog {last['backlog']},"
        f" deferred {last['deferred']}, {last['embedded']} embedded"
    )
    print(f"median of {args.rounds} alternating round(s), {args.events} events each")


if __name__ == "__main__":
    main()
