"""How often consecutive contexts keep a byte-identical stable prefix (DESIGN §4).

A conversation is played to a soul turn by turn (``event.push``, as a channel would);
before each turn the agent asks for its context with that turn as the query — what an
agent does before it answers. Each context is compared with the one before:

* the stable prefix (identity, consolidated summary, weekly summary: ``prefix_hash``),
  which only a reflect may change — what a prompt cache keeps warm;
* the whole block before the recalled items (the stable prefix and the gut feelings,
  known gaps, due tasks and internal signal), for caches that key on longer prefixes.

Prints the share of consecutive pairs that are byte-identical for each, the reflects
seen, and the mean length of each prefix.

    python bench/prefix.py [--data ../shared/data/locomo/locomo10-dev.json] [--turns 600]
                           [--json FILE]

Without ``--data``, a synthetic conversation of two speakers is played instead.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
from itertools import pairwise
from typing import Any

from _daemon import running_daemon, write_json
from locomo import Client, Turn, event_of, load

from souls.recall.context import BEFORE_RECALL, STABLE

_IDENTITY = "You are Ada, a patient assistant who keeps track of the user's life.\n"


def synthetic(turns: int, seed: int = 3) -> list[Turn]:
    """A two-speaker conversation about a few recurring topics, a day per 20 turns."""
    rng = random.Random(seed)
    topics = [
        ("the kayak trip", ["lake", "paddle", "weather", "weekend"]),
        ("the new job", ["manager", "interview", "salary", "team"]),
        ("the garden", ["tomatoes", "rain", "soil", "seeds"]),
        ("the band", ["gig", "drums", "rehearsal", "setlist"]),
        ("the flat", ["landlord", "rent", "deposit", "boxes"]),
    ]
    out = []
    for i in range(turns):
        topic, words = topics[(i // 7 + rng.randrange(2)) % len(topics)]
        speaker = "Mel" if i % 2 else "Caro"
        text = f"About {topic}: the {rng.choice(words)} and the {rng.choice(words)} {i}."
        day = 1 + i // 20
        out.append(
            Turn(f"D{day}:{i}", speaker, text, f"session_{day}", f"2026-03-{day:02d}T10:00:00")
        )
    return out


async def play(socket: str, soul: str, turns: list[Turn]) -> dict[str, Any]:
    reader, writer = await asyncio.open_unix_connection(socket, limit=1 << 24)
    client = Client(reader, writer)
    stable: list[str] = []
    longer: list[str] = []
    stable_chars: list[int] = []
    longer_chars: list[int] = []
    reflects = 0
    try:
        for turn in turns:
            context = await client.call(
                "context", {"soul": soul, "query": turn.text, "session": turn.session}
            )
            sections = {s["name"]: s["text"] for s in context["sections"]}
            before = "".join(sections.get(name, "") for name in BEFORE_RECALL)
            stable.append(context["prefix_hash"])
            longer.append(before)
            stable_chars.append(sum(len(sections.get(n, "")) for n in STABLE))
            longer_chars.append(len(before))
            pushed = await client.call("event.push", event_of(soul, turn))
            reflects += bool(pushed.get("reflected"))
    finally:
        writer.close()
    pairs = len(turns) - 1
    return {
        "contexts": len(turns),
        "reflects": reflects,
        "stable_identical": round(sum(a == b for a, b in pairwise(stable)) / pairs, 4),
        "before_recall_identical": round(sum(a == b for a, b in pairwise(longer)) / pairs, 4),
        "stable_mean_chars": round(statistics.fmean(stable_chars)),
        "before_recall_mean_chars": round(statistics.fmean(longer_chars)),
    }


def measure(data: str | None, turns: int) -> dict[str, Any]:
    """Play ``turns`` turns (of the first conversation in ``data``, or synthetic)."""
    if data:
        conversation = load(data)[0]
        played, source = conversation.turns[:turns], conversation.name
    else:
        played, source = synthetic(turns), "synthetic"
    with running_daemon({"ada": ""}) as daemon:
        (daemon.state("ada") / "SOUL.md").write_text(_IDENTITY)
        figures = asyncio.run(play(str(daemon.socket), "ada", played))
    return {"source": source, **figures}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data", metavar="PATH", help="a locomo10 JSON file (default: synthetic)")
    parser.add_argument("--turns", type=int, default=600)
    parser.add_argument("--json", metavar="FILE", help="also write the figures as JSON")
    args = parser.parse_args()
    figures = measure(args.data, args.turns)
    for key, value in figures.items():
        print(f"{key:<26}{value}")
    write_json(args.json, figures)


if __name__ == "__main__":
    main()
