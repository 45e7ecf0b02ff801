"""A soul's export (souls/actor/exporting.py) through the store interface: the same soul
stored on a real SQLite file and on a real PostgreSQL server (beside another soul of
the database) exports the same records, every table's, page after page, and a page of
any size gives the same export."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import asyncpg
import pytest

from souls.actor.exporting import export_page
from souls.results import DueTask
from souls.store.changes import (
    Changes,
    GoalRow,
    NewClaim,
    NewQuestion,
    Settlement,
    SummaryVersion,
)
from souls.store.export import EXPORT_TABLES
from souls.store.interface import SoulStore
from souls.store.postgres.store import PgStore
from souls.store.store import NewEvent, Store
from souls.text.tokenize import fts_document

T0 = 1_780_000_000.0


def event(text: str, ts: float, sender: str) -> NewEvent:
    return NewEvent(
        f"ref-{ts}", "dm", "web", sender, None, sender == "bob", "s1", ts, ts, 0.5, text,
        fts_document(text),
    )  # fmt: skip


def claim(event_id: int) -> NewClaim:
    return NewClaim(
        1, "fact", "ana", "likes", "lunch", "lunch was lovely", event_id, "rule", "high",
        "active", T0, None, T0, None,
    )  # fmt: skip


def goal(event_id: int) -> GoalRow:
    return GoalRow(
        1, "ana", "find the key", "home", 3, '["a key"]', "active", "[]", T0, T0, event_id
    )


async def seed(store: SoulStore, name: str) -> None:
    """A row of every table an export reads (``name`` in the texts: souls apart)."""
    ids = await store.append(
        [
            event(f"{name}: where is the shed key?", T0, "ana"),
            event(f"{name}: under the Blue pot, sadly", T0 + 1, "bob"),
            event(f"{name}: lunch was lovely", T0 + 2, "ana"),
        ],
        now=T0 + 2,
    )
    m = await store.observation_memories(ids)
    await store.flush(
        Changes(
            edges=Counter({(m[ids[0]], m[ids[1]]): 0.5, (m[ids[1]], m[ids[2]]): 0.25}),
            surfaced={f"m{m[ids[0]]}": T0 + 3, "c1": T0 + 3, "Zeta": T0 + 3, "alpha": T0 + 3},
            markers={("lunch", "positive"): 1.0, ("Shed", "negative"): 0.5, ("é", "negative"): 2},
            marker_labels={"lunch": "lunch"},
            gaps=[("keys", f"{name} knows nothing")],
            summaries=[SummaryVersion("consolidated", f"{name} (m1)", 2, "llm", "manual")],
            state={"mood": "calm"},
            claims=[claim(ids[2])],
            questions=[NewQuestion(1, ids[0], "ana", "s1", "where is the shed key?", T0)],
            settlements=[Settlement(1, "answered", ids[1])],
            goals=[goal(ids[0])],
        ),
        T0 + 3,
    )
    await store.record_due(
        [DueTask("b-key", T0 + 9, "water the garden", 3), DueTask("A-key", T0 + 8, "call", 2)]
    )
    await store.link_person("Bob", "web", "bob", T0 + 4)
    await store.link_person("Ana", "web", "ana", T0 + 5)


async def everything(store: SoulStore, page: int) -> list[dict[str, Any]]:
    records: list[dict[str, Any]] = []
    cursor: str | None = None
    while True:
        found, cursor = await export_page(store, cursor, page)
        assert len(found) <= page
        records += found
        if cursor is None:
            return records


@pytest.fixture
async def both(tmp_path: Path, pg_dsn: str) -> Any:
    sqlite = await Store.open(tmp_path / "soul.db", context_turns=2)
    pool = await asyncpg.create_pool(pg_dsn, min_size=1, max_size=2)
    try:
        other = await PgStore.open(pool, "other", context_turns=2)
        await seed(other, "other")  # first: the soul's own ids are not the database's
        postgres = await PgStore.open(pool, "alpha", context_turns=2)
        yield sqlite, postgres
    finally:
        await sqlite.close()
        await pool.close()


async def test_a_soul_exports_the_same_from_either_backend(
    both: tuple[SoulStore, SoulStore],
) -> None:
    sqlite, postgres = both
    for store in both:
        await seed(store, "alpha")
    exported = await everything(sqlite, 1000)
    assert {r["type"] for r in exported} == {kind for kind, *_ in EXPORT_TABLES}
    assert not any("other" in repr(r) for r in exported)
    assert await everything(postgres, 1000) == exported
    for page in (1, 4):
        assert await everything(sqlite, page) == exported
        assert await everything(postgres, page) == exported
    # Text keys in code point order on both (SQLite's BINARY).
    assert [r["item"] for r in exported if r["type"] == "surfaced"] == [
        "Zeta", "alpha", "c1", "m1"
    ]  # fmt: skip
    assert [r["key"] for r in exported if r["type"] == "task"] == ["A-key", "b-key"]
    event = next(r for r in exported if r["type"] == "event")
    assert (event["group"], event["mentioned"]) == (None, False)
    assert next(r for r in exported if r["type"] == "claim")["kind"] == "fact"


async def test_a_cursor_this_daemon_did_not_make_is_refused(
    both: tuple[SoulStore, SoulStore],
) -> None:
    for store in both:
        with pytest.raises(ValueError, match="not one this daemon handed out"):
            await export_page(store, "x:1")
