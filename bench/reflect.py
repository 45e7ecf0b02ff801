"""Extractive reflect over 1,000 observations: how long one reflect takes.

Realistic observations (chat lines, deploy noise, failures, questions; mixed
salience and surprise), merged into a previous summary, at the default budget.

    python bench/reflect.py [--observations 1000] [--rounds 50]
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

from souls.mind.reflect import ExtractiveReflector, Observation

TEMPLATES = [
    "deploy {i} finished on prod-{r} in {s} seconds",
    "user {r} asked about the invoice for order {i}",
    "build {i} failed: test_{r} timed out after {s}s",
    "can we move the standup to {s} past nine?",
    "the cat knocked over plant number {r} again",
    "数据库迁移 {i} 在 {s} 秒内完成",
    "Ada said the release notes for v{r}.{s} are ready for review",
    "error: connection refused by replica {r}",
]


def observations(count: int, seed: int = 3) -> list[Observation]:
    rng = random.Random(seed)
    out = []
    for i in range(count):
        text = rng.choice(TEMPLATES).format(i=i, r=rng.randint(0, 96), s=rng.randint(0, 59))
        out.append(
            Observation(
                i + 1,
                text,
                rng.choice([0.35, 0.5, 0.8, 0.9]),
                rng.random(),
                "message",
                f"user{rng.randint(0, 6)}",
                1.8e9 + i,
            )
        )
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--observations", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=50)
    parser.add_argument("--budget", type=int, default=4000)
    args = parser.parse_args()
    reflector = ExtractiveReflector()
    batch = observations(args.observations)
    previous = reflector.summarise("", observations(200, seed=9), args.budget)
    times = []
    for _ in range(args.rounds):
        started = time.perf_counter()
        summary = reflector.summarise(previous, batch, args.budget)
        times.append(time.perf_counter() - started)
    print(f"observations   {args.observations}")
    print(f"summary chars  {len(summary)} (budget {args.budget})")
    print(f"reflect p50    {statistics.median(times) * 1000:.2f} ms")
    print(f"reflect max    {max(times) * 1000:.2f} ms")


if __name__ == "__main__":
    main()
