"""Knowing from conversation: what the rules learn from played LoCoMo conversations (#17).

Each conversation is played to its own soul of one real daemon, turn by turn, as a
channel would (``event.push``: ``sender`` the speaker, ``ts`` the session's date,
``session`` the session key, ``ref`` the turn's dia_id; the image caption appended as
``[shares ...]``). No LLM. Afterwards the soul's database is read (read-only) for what
came out of the turns: entries (the ``claims`` table: facts, rules, events, by slot and
state) and goals (with beliefs, the goals of domain ``belief``).

The benchmark's annotators wrote ``observation``s per session: a sentence and the
dia_id of the turn it comes from. Printed per conversation and overall:

* entries by type and by slot; goals and beliefs; superseded and deferred entries;
* coverage: the share of observations whose evidence turn produced at least one entry
  or goal (whatever its state now);
* precision proxy: the share of produced items whose source turn carries an observation
  (an item is a row; a goal counts for the turn it was first stated in, ``goals.event_id``);
* turns the attention gate dropped (nothing can come out of those).

Entries come from the rules alone (the soul has no ``[llm]``). The file is read by this
script only; nothing of it reaches the product.

    python bench/knowing.py --data ../shared/data/locomo/locomo10-dev.json
        [--conversations conv-26 ...] [--json FILE] [--examples N]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sqlite3
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from _daemon import machine, running_daemon, write_json
from locomo import Client, Conversation, event_of, evidence_ids, load, soul_name


@dataclass
class Observation:
    text: str
    dia_id: str


@dataclass
class Known:
    """What one played conversation produced, read from its soul's database."""

    name: str
    turns: int = 0
    dropped: int = 0
    observations: list[Observation] = field(default_factory=list)
    # (type, slot, state, dia_id of the source turn, value)
    entries: list[tuple[str, str, str, str | None, str]] = field(default_factory=list)
    # (domain, state, dia_id of the source turn or None, statement)
    goals: list[tuple[str, str, str | None, str]] = field(default_factory=list)
    texts: dict[str, str] = field(default_factory=dict)  # dia_id -> turn text


def observations(path: str) -> dict[str, list[Observation]]:
    """The annotated observations of each sample, evidence normalised to its turns."""
    with open(path) as handle:
        samples = json.load(handle)
    found: dict[str, list[Observation]] = {}
    for sample in samples:
        talk = sample["conversation"]
        known = {
            turn["dia_id"]
            for key, value in talk.items()
            if key.startswith("session_") and isinstance(value, list)
            for turn in value
        }
        rows: list[Observation] = []
        for session in sample.get("observation", {}).values():
            for items in session.values():
                for item in items:
                    text, evidence = item[0], item[1]
                    raw = evidence if isinstance(evidence, list) else [evidence]
                    for dia_id in evidence_ids(raw, known):
                        rows.append(Observation(text, dia_id))
        found[sample["sample_id"]] = rows
    return found


async def play(socket: str, conversation: Conversation, out: Known) -> None:
    soul = soul_name(conversation)
    reader, writer = await asyncio.open_unix_connection(socket, limit=1 << 24)
    client = Client(reader, writer)
    try:
        for turn in conversation.turns:
            pushed = await client.call("event.push", event_of(soul, turn))
            out.turns += 1
            out.dropped += pushed.get("outcome") == "dropped"
            out.texts[turn.dia_id] = turn.text
    finally:
        writer.close()


def read_database(path: str, out: Known) -> None:
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
        refs = dict(db.execute("SELECT id, ref FROM events"))
        for type_, slot, state, event_id, value in db.execute(
            "SELECT type, coalesce(slot, ''), state, event_id, value FROM claims"
            " WHERE event_id IS NOT NULL ORDER BY id"
        ):
            out.entries.append((type_, slot, state, refs.get(event_id), value))
        sql = "SELECT domain, state, event_id, statement FROM goals ORDER BY id"
        for domain, state, event_id, statement in db.execute(sql):
            out.goals.append((domain, state, refs.get(event_id), statement))


def figures(known: Known) -> dict[str, Any]:
    observed = {o.dia_id for o in known.observations}
    producing = {e[3] for e in known.entries if e[3]} | {g[2] for g in known.goals if g[2]}
    covered = sum(o.dia_id in producing for o in known.observations)
    sourced = [e[3] for e in known.entries] + [g[2] for g in known.goals if g[2]]
    on_observed = sum(s in observed for s in sourced)
    return {
        "turns": known.turns,
        "dropped": known.dropped,
        "observations": len(known.observations),
        "observation_turns": len(observed),
        "entries": len(known.entries),
        "by_type": dict(Counter(e[0] for e in known.entries)),
        "by_slot": dict(Counter(e[1] for e in known.entries).most_common()),
        "by_state": dict(Counter(e[2] for e in known.entries)),
        "superseded": sum(e[2] == "superseded" for e in known.entries),
        "deferred": sum(e[2] == "deferred" for e in known.entries),
        "goals": sum(g[0] != "belief" for g in known.goals),
        "beliefs": sum(g[0] == "belief" for g in known.goals),
        "goals_unsourced": sum(g[2] is None for g in known.goals),
        "covered": covered,
        "coverage": round(covered / len(known.observations), 4) if known.observations else None,
        "items_sourced": len(sourced),
        "items_on_observed": on_observed,
        "precision_proxy": round(on_observed / len(sourced), 4) if sourced else None,
    }


def overall(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    total: dict[str, Any] = {}
    for key in ("turns", "dropped", "observations", "observation_turns", "entries"):
        total[key] = sum(r[key] for r in rows)
    for key in ("superseded", "deferred", "goals", "beliefs", "goals_unsourced"):
        total[key] = sum(r[key] for r in rows)
    for key in ("by_type", "by_slot", "by_state"):
        merged: Counter[str] = Counter()
        for r in rows:
            merged.update(r[key])
        total[key] = dict(merged.most_common())
    covered = sum(r["covered"] for r in rows)
    sourced = sum(r["items_sourced"] for r in rows)
    on_observed = sum(r["items_on_observed"] for r in rows)
    total.update(
        covered=covered,
        coverage=round(covered / total["observations"], 4) if total["observations"] else None,
        items_sourced=sourced,
        items_on_observed=on_observed,
        precision_proxy=round(on_observed / sourced, 4) if sourced else None,
    )
    return total


def examples(known: Sequence[Known], n: int, seed: int = 17) -> dict[str, list[str]]:
    """Some produced entries off observation turns, and some observations missed, to read."""
    rng = random.Random(seed)
    off, missed = [], []
    for k in known:
        observed = {o.dia_id for o in k.observations}
        producing = {e[3] for e in k.entries}
        for type_, slot, state, dia_id, value in k.entries:
            if dia_id not in observed:
                off.append(f"{k.name} {dia_id} {type_}/{slot}/{state}: {value!r}"
                           f" <- {k.texts.get(dia_id or '', '')[:140]!r}")  # fmt: skip
        for o in k.observations:
            if o.dia_id not in producing:
                missed.append(f"{k.name} {o.dia_id}: {k.texts.get(o.dia_id, '')[:160]!r}"
                              f" => {o.text[:100]!r}")  # fmt: skip
    return {
        "off_observation": rng.sample(off, min(n, len(off))),
        "missed": rng.sample(missed, min(n, len(missed))),
    }


def measure(path: str, conversations: Sequence[Conversation]) -> tuple[dict[str, Any], list[Known]]:
    annotated = observations(path)
    souls = {soul_name(c): "" for c in conversations}
    known = [Known(c.name, observations=annotated.get(c.name, [])) for c in conversations]
    with running_daemon(souls) as daemon:

        async def all_of_them() -> None:
            await asyncio.gather(
                *(play(str(daemon.socket), c, k) for c, k in zip(conversations, known, strict=True))
            )

        asyncio.run(all_of_them())
        for conversation, k in zip(conversations, known, strict=True):
            read_database(str(daemon.state(soul_name(conversation)) / "soul.db"), k)
    rows = {k.name: figures(k) for k in known}
    return {"conversations": rows, "overall": overall(list(rows.values()))}, known


def _share(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}%"


def render(result: dict[str, Any]) -> str:
    keys = ["turns", "dropped", "observations", "entries", "goals", "beliefs"]
    keys += ["superseded", "deferred"]
    head = f"{'':<10}" + "".join(f"{k:>12}" for k in keys) + f"{'coverage':>10}{'precision':>11}"
    out = [head]
    for name, row in [*result["conversations"].items(), ("overall", result["overall"])]:
        out.append(
            f"{name:<10}" + "".join(f"{row[k]!s:>12}" for k in keys)
            + f"{_share(row['coverage']):>10}{_share(row['precision_proxy']):>11}"
        )  # fmt: skip
    total = result["overall"]
    out.append("")
    out.append(f"entries by type: {total['by_type']}")
    out.append(f"entries by slot: {total['by_slot']}")
    out.append(f"entries by state: {total['by_state']}")
    if total["goals_unsourced"]:
        out.append(f"goals without a source event (not in precision): {total['goals_unsourced']}")
    return "\n".join(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data", required=True, metavar="PATH", help="a locomo10 JSON file")
    parser.add_argument("--conversations", nargs="+", metavar="ID", help="only these")
    parser.add_argument("--json", metavar="FILE", help="also write the figures as JSON")
    parser.add_argument(
        "--examples", type=int, default=0, metavar="N", help="print N items off observation"
        " turns and N observations missed, to read"
    )  # fmt: skip
    args = parser.parse_args()
    conversations = [
        c for c in load(args.data) if not args.conversations or c.name in args.conversations
    ]
    if not conversations:
        parser.error("none of those conversations is in the file")
    result, known = measure(args.data, conversations)
    print(render(result))
    if args.examples:
        shown = examples(known, args.examples)
        for title, lines in (("produced off observation turns", shown["off_observation"]),
                             ("observations missed", shown["missed"])):  # fmt: skip
            print(f"\n{title}:")
            for line in lines:
                print(f"  {line}")
    write_json(args.json, {"machine": machine(), **result})


if __name__ == "__main__":
    main()
