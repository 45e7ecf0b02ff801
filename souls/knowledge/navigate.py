"""Navigation: the memory map and reading one item by its id (linghun's map and drill-down).

``map`` gives the four axes of :mod:`souls.knowledge.memmap` within a character budget: recent
situations (topics of the latest observations, with their memory ids), goals, the
archive (facts, rules, summary versions) and the days of the event journal. Every id it
prints reads back with :func:`read`: ``m`` memory, ``e`` event, ``s`` summary version,
``c``/``r`` claim or rule (with the entries of its slot, superseded ones included),
``g`` goal, ``q`` question. Reads only.
"""

from __future__ import annotations

import re

from souls.knowledge.knowledge import Knowledge
from souls.knowledge.memmap import ArchiveLine, EvidenceDay, GoalLine, render, topics
from souls.store.store import Store

__all__ = ["memory_map", "read"]

_RECENT = 200  # observations the situations are drawn from
_DAYS = 14  # journal days shown at most
_LABEL = re.compile(r"([mescrgq])(\d{1,18})")


async def memory_map(store: Store, knowledge: Knowledge, budget: int) -> str:
    db = store.db
    recent = await db.execute_fetchall(
        "SELECT id, text FROM memories WHERE kind = 'observation' AND hidden_at IS NULL"
        " ORDER BY id DESC LIMIT ?",
        (_RECENT,),
    )
    situations = topics([(memory_id, text) for memory_id, text in recent])
    goals = [GoalLine.of(goal) for goal in knowledge.goals.values()]
    archive: list[ArchiveLine] = []
    for claim in await knowledge.entries.claims():
        if claim.state != "active":
            continue
        text = f"{claim.slot}={claim.value}" if claim.slot else claim.value
        archive.append(ArchiveLine(claim.id, "rule" if claim.type == "rule" else "fact", text))
    for summary_id, layer, text in await db.execute_fetchall(
        "SELECT id, layer, text FROM summaries WHERE id IN"
        " (SELECT max(id) FROM summaries GROUP BY layer) ORDER BY id"
    ):
        first = next((line for line in text.splitlines() if line.strip("# ").strip()), "")
        archive.append(ArchiveLine(summary_id, "summary", f"{layer}: {first.strip('# ')}"))
    days = await db.execute_fetchall(
        "SELECT date(ts, 'unixepoch') AS day, count(*), min(id), max(id) FROM events"
        " GROUP BY day ORDER BY day DESC LIMIT ?",
        (_DAYS,),
    )
    evidence = [EvidenceDay(day, count, first, last) for day, count, first, last in days]
    return render(situations, goals, archive, evidence, budget=budget)


async def read(store: Store, knowledge: Knowledge, label: str) -> dict[str, object]:
    """The item ``label`` names, in full; raises ValueError saying what ids look like."""
    match = _LABEL.fullmatch(label.strip())
    if match is None:
        raise ValueError(
            f"{label!r} is not an id; ids look like m12 (memory), e5 (event), s2 (summary), "
            "c7 or r3 (claim or rule), g1 (goal), q4 (question), as `soupd map` prints them"
        )
    letter, number = match.group(1), int(match.group(2))
    db = store.db
    found: dict[str, object] | None = None
    if letter == "m":
        rows = await db.execute_fetchall(
            "SELECT m.id, m.kind, m.text, m.salience, m.created, m.recalls, m.last_recalled,"
            " m.hidden_at, m.event_id, e.ref FROM memories AS m"
            " LEFT JOIN events AS e ON e.id = m.event_id WHERE m.id = ?",
            (number,),
        )
        keys: tuple[str, ...] = ("id", "kind", "text", "salience", "created", "recalls")
        keys += ("last_recalled", "hidden_at", "event_id", "ref")
        found = next((dict(zip(keys, row, strict=True)) for row in rows), None)
    elif letter == "e":
        rows = await db.execute_fetchall(
            "SELECT id, ref, kind, channel, sender, grp, mentioned, session, ts, recorded,"
            " salience, text FROM events WHERE id = ?",
            (number,),
        )
        keys = ("id", "ref", "kind", "channel", "sender", "group", "mentioned", "session")
        keys += ("ts", "recorded", "salience", "text")
        found = next((dict(zip(keys, row, strict=True)) for row in rows), None)
    elif letter == "s":
        rows = await db.execute_fetchall(
            "SELECT id, layer, text, created, observations, reflector, reason FROM summaries"
            " WHERE id = ?",
            (number,),
        )
        keys = ("id", "layer", "text", "created", "observations", "reflector", "reason")
        found = next((dict(zip(keys, row, strict=True)) for row in rows), None)
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
