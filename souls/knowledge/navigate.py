"""Navigation: the memory map and reading one item by its id (linghun's map and drill-down).

``map`` gives the four axes of :mod:`souls.knowledge.memmap` within a character budget: recent
situations (topics of the latest observations, with their memory ids), goals, the
archive (facts, rules, summary versions) and the days of the event journal. Every id it
prints reads back with :func:`read`: ``m`` memory, ``e`` event, ``s`` summary version,
``c``/``r`` claim or rule (with the entries of its slot, superseded ones included),
``g`` goal, ``q`` question. Reads only, through the store interface (``SoulStore``,
its ``knowledge`` rows), on either backend.
"""

from __future__ import annotations

import re

from souls.knowledge.knowledge import Knowledge
from souls.knowledge.memmap import ArchiveLine, EvidenceDay, GoalLine, render, topics
from souls.store.interface import SoulStore

__all__ = ["memory_map", "read"]

_RECENT = 200  # observations the situations are drawn from
_DAYS = 14  # journal days shown at most
_LABEL = re.compile(r"([mescrgq])(\d{1,18})")
# What the drill-down shows of a memory (of memory.get's item), in this order.
_MEMORY_KEYS = (
    "id", "kind", "text", "salience", "created", "recalls", "last_recalled", "hidden_at",
    "event_id", "ref",
)  # fmt: skip


async def memory_map(store: SoulStore, knowledge: Knowledge, budget: int) -> str:
    rows = store.knowledge
    situations = topics(await rows.recent(_RECENT))
    goals = [GoalLine.of(goal) for goal in knowledge.goals.values()]
    archive: list[ArchiveLine] = []
    for claim in await knowledge.entries.claims():
        if claim.state != "active":
            continue
        text = f"{claim.slot}={claim.value}" if claim.slot else claim.value
        archive.append(ArchiveLine(claim.id, "rule" if claim.type == "rule" else "fact", text))
    for summary_id, layer, text in await rows.latest_summaries():
        first = next((line for line in text.splitlines() if line.strip("# ").strip()), "")
        archive.append(ArchiveLine(summary_id, "summary", f"{layer}: {first.strip('# ')}"))
    days = await rows.days(_DAYS)
    evidence = [EvidenceDay(day, count, first, last) for day, count, first, last in days]
    return render(situations, goals, archive, evidence, budget=budget)


async def read(store: SoulStore, knowledge: Knowledge, label: str) -> dict[str, object]:
    """The item ``label`` names, in full; raises ValueError saying what ids look like."""
    match = _LABEL.fullmatch(label.strip())
    if match is None:
        raise ValueError(
            f"{label!r} is not an id; ids look like m12 (memory), e5 (event), s2 (summary), "
            "c7 or r3 (claim or rule), g1 (goal), q4 (question), as `soupd map` prints them"
        )
    letter, number = match.group(1), int(match.group(2))
    found: dict[str, object] | None = None
    if letter == "m":
        item = await store.memory_item(number)
        found = None if item is None else {key: getattr(item, key) for key in _MEMORY_KEYS}
    elif letter == "e":
        found = await store.knowledge.event(number)
    elif letter == "s":
        found = await store.knowledge.summary_version(number)
    elif letter in "cr":
        claims = await knowledge.entries.claims(ids=[number])
        if claims:
            claim = claims[0]
            history = await knowledge.entries.history(claim)
            found = {"claim": claim, "history": [c for c in history if c.id != claim.id]}
    elif letter == "g":
        goal = knowledge.goals.get(number)
        found = None if goal is None else {"goal": goal}
    elif letter == "q":
        questions = await knowledge.entries.questions(ids=[number])
        found = {"question": questions[0]} if questions else None
    if found is None:
        raise LookupError(f"no {label} in this soul; `soupd map` lists what there is")
    return {"id": label.strip(), **found}
