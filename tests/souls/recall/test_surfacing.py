"""When items last surfaced in a context: the map rarity counts from, and the table it
is read from (migration 0013 starts it from the assembly log)."""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing
from pathlib import Path

import anyio

from souls.recall.assembly import claim_candidate, open_candidate
from souls.recall.surfacing import Surfacings
from souls.store.schema import MIGRATIONS
from souls.store.store import Store

NOW = 1_800_000_000.0
DAY = 86_400.0


def test_a_later_surfacing_wins_and_an_earlier_one_changes_nothing() -> None:
    seen = Surfacings([("c5", NOW - DAY), ("m12", NOW - 3 * DAY)])
    # Shown in this order: the last surfaces at NOW, each before it a step earlier.
    assert seen.mark(["q2", "c5"], NOW) == {"q2": NOW - 0.001, "c5": NOW}
    assert seen.mark(["c5", "m12"], NOW - 4 * DAY) == {}  # older than what is known
    assert (seen.at("c5"), seen.at("m12"), seen.at("g1")) == (NOW, NOW - 3 * DAY, None)
    assert seen.with_letter("c") == {5: NOW}
    assert len(seen) == 3


def test_the_weakest_item_of_a_context_gives_way_first() -> None:
    # Context 1 showed c1..c3; context 2 the new c4 and, to fill its last place, c1.
    seen = Surfacings()
    seen.mark(["c1", "c2", "c3"], NOW)
    seen.mark(["c4", "c1"], NOW + 60)
    # Of the two that surfaced with context 2, c4 (shown first) has waited longest:
    # c1, the filler, does not come back every time.
    clocks = {item: seen.at(item) for item in ("c1", "c2", "c3", "c4")}
    assert sorted(clocks, key=lambda item: clocks[item]) == ["c2", "c3", "c4", "c1"]


def test_rarity_counts_from_the_later_of_coming_to_be_and_surfacing() -> None:
    seen = Surfacings([("c1", NOW - DAY), ("q2", NOW - 40 * DAY)])
    fact = claim_candidate(1, "lin likes: oolong tea", 0.0, since=NOW - 30 * DAY, now=NOW)
    question = open_candidate("question", 2, "a second cat?", 0.0, opened=NOW - 9 * DAY, now=NOW)
    (fact_now, question_now) = seen.rarity_from([fact, question], NOW)
    assert fact_now.scored.unsurfaced_days == 1.0  # injected yesterday
    # Surfaced before it was opened (an id used again): its age is what counts.
    assert question_now.scored.unsurfaced_days == 9.0
    assert question_now.scored.age_days == 9.0


async def test_the_migration_starts_from_what_contexts_injected(tmp_path: Path) -> None:
    path = tmp_path / "soul.db"
    with closing(sqlite3.connect(path, isolation_level=None)) as db:
        db.execute("CREATE TABLE migrations (name TEXT PRIMARY KEY, applied_at REAL NOT NULL)")
        for name, sql in MIGRATIONS:
            if name == "0013_surfaced":
                break
            db.executescript(sql)
            db.execute("INSERT INTO migrations VALUES (?, 0)", (name,))
        for created, labels in ((NOW - DAY, ["c1", "q2"]), (NOW, ["c1", "m7"]), (NOW, [])):
            items = [{"id": label, "kind": "fact", "score": 0.1, "reason": "x"} for label in labels]
            db.execute(
                "INSERT INTO assemblies (hash, created, session, query, mode, chars, recalled,"
                " paused, items, sections) VALUES ('h', ?, NULL, NULL, 'emergence', 0, 0, 0, ?,"
                " '[]')",
                (created, json.dumps(items)),
            )
    with anyio.fail_after(20):
        store = await Store.open(path)
        try:
            seen = await Surfacings.read(store)
        finally:
            await store.close()
    assert (seen.at("c1"), seen.at("q2"), seen.at("m7")) == (NOW, NOW - DAY, NOW)
