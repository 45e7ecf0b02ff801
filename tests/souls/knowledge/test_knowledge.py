"""Knowledge on a real soul database: claims and questions are written with their events
(one transaction), a batch that renames the cat settles inside itself, questions are
settled by the next assistant reply, and the view survives a reload."""

from __future__ import annotations

import copy
import dataclasses
import sqlite3
from collections import Counter
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import msgspec
import pytest

from souls.intake.hygiene_gate import HygieneConfig, HygieneGate
from souls.knowledge.knowledge import Knowledge, KnowledgeConfig, Plan
from souls.knowledge.questions import PendingQuestion
from souls.store.changes import (
    AssemblyRow,
    Changes,
    ClaimClosing,
    GoalRow,
    NewClaim,
    NewQuestion,
    Settlement,
    SummaryVersion,
)
from souls.store.store import NewEvent, Store
from souls.text.tokenize import fts_document

NOW = 1_800_000_000.0
DAY = 86_400.0


def event(
    text: str, *, sender: str | None = "ann", kind: str = "message", ts: float = NOW
) -> NewEvent:
    return NewEvent(
        None, kind, None, sender, None, False, None, ts, NOW, 0.5, text, fts_document(text)
    )


@asynccontextmanager
async def knowing(tmp_path: Path) -> AsyncIterator[tuple[Store, Knowledge]]:
    store = await Store.open(tmp_path / "soul.db")
    try:
        knowledge = Knowledge(store, KnowledgeConfig(), HygieneGate(HygieneConfig()))
        await knowledge.load()
        yield store, knowledge
    finally:
        await store.close()


async def ingest(store: Store, knowledge: Knowledge, events: list[NewEvent]) -> list[int]:
    plan = await knowledge.perceive(events)
    ids = await store.append(events, plan.joined(), NOW)
    knowledge.committed(plan, ids)
    return ids


async def test_a_rename_inside_one_batch_settles_inside_it(tmp_path: Path) -> None:
    async with knowing(tmp_path) as (store, knowledge):
        ids = await ingest(
            store,
            knowledge,
            [
                event("My cat is Tuanzi.", ts=NOW - 30 * DAY),
                event("lunch was fine"),
                event("We renamed the cat Mochi.", ts=NOW),
            ],
        )
        claims = {
            c.value: c for c in await knowledge.entries.claims(every=True) if c.slot == "pet_name"
        }
        assert claims["Tuanzi"].state == "superseded"
        assert claims["Tuanzi"].valid_to == NOW
        assert claims["Tuanzi"].event_id == ids[0]
        assert claims["Mochi"].state == "active"
        assert claims["Mochi"].event_id == ids[2]
        assert claims["Mochi"].quote in "We renamed the cat Mochi."

        # An older statement imported late never supersedes the newer value.
        await ingest(store, knowledge, [event("My cat is Tuanzi.", ts=NOW - 10 * DAY)])
        live = [c.value for c in await knowledge.entries.claims() if c.slot == "pet_name"]
        assert live == ["Mochi"]
        assert knowledge.entries.view.fresh
        in_force = sorted(knowledge.entries.view.claims.values(), key=lambda c: c.id)
        assert in_force == await knowledge.entries.claims()


async def test_questions_are_settled_by_the_next_reply_and_survive_a_reload(
    tmp_path: Path,
) -> None:
    async with knowing(tmp_path) as (store, knowledge):
        await ingest(
            store,
            knowledge,
            [
                event("when do we migrate the billing database?", kind="dm"),
                event("who owns the backups?", kind="dm"),
            ],
        )
        assert [q.text for q in knowledge.pending] == [
            "when do we migrate the billing database?",
            "who owns the backups?",
        ]
        await ingest(
            store,
            knowledge,
            [event("The billing database migrates on Friday.", kind="assistant", sender=None)],
        )
        assert knowledge.pending == []
        unanswered = await knowledge.entries.questions(state="unanswered")
        answered = await knowledge.entries.questions(state="answered")
        assert [q.text for q in unanswered] == ["who owns the backups?"]
        assert [q.text for q in answered] == ["when do we migrate the billing database?"]
        await ingest(store, knowledge, [event("is the cat fed?", kind="dm")])
    async with knowing(tmp_path) as (_, reloaded):
        assert [q.text for q in reloaded.pending] == ["is the cat fed?"]


async def test_claims_roll_back_with_their_events(tmp_path: Path) -> None:
    async with knowing(tmp_path) as (store, knowledge):
        first = msgspec.structs.replace(event("lunch"), ref="r1")
        await ingest(store, knowledge, [first])
        clash = msgspec.structs.replace(event("My name is Ann."), ref="r1")  # a taken ref
        plan = await knowledge.perceive([clash])
        assert plan.claims
        with pytest.raises(sqlite3.IntegrityError):
            await store.append([clash], plan.joined(), NOW)
        assert await knowledge.entries.claims(every=True) == []  # gone with the event
        # The view in memory never took the claim: stale since the plan was made, it is
        # read again before use.
        assert not knowledge.entries.view.fresh
        assert (await knowledge.entries.current()).claims == {}
        await ingest(store, knowledge, [event("My name is Ann.")])
        assert knowledge.entries.view.fresh
        assert list(knowledge.entries.view.claims.values()) == await knowledge.entries.claims()


def test_joined_changes_nothing_of_the_turns_changes() -> None:
    """The plan's rows are added to copies: neither the join nor what is done to the
    joined Changes after it reaches the turn's own."""
    turn = Changes(
        counters=Counter({"dropped.attention": 1}), edges=Counter({(1, 2): 0.5}),
        recalled={3}, penalties={3: 0.1}, markers={("cat", "positive"): 0.4},
        marker_labels={"cat": "Cat"}, gaps=[("cats", "which cat?")],
        summaries=[SummaryVersion("consolidated", "# so far", 3, "llm", "manual")],
        state={"mood": "calm"}, fired={"t1": NOW},
        assemblies=[AssemblyRow("ab", "s1", "cat?", "retrieval", 9, 3, False, "[]", "[]")],
        surfaced={"m1": NOW},
        claims=[NewClaim(
            7, "fact", "ann", None, "likes tea", "", None, "user", "high", "active", NOW,
            None, NOW, None, None, None,
        )],
        closings=[ClaimClosing(6, "superseded", NOW, NOW)],
        questions=[NewQuestion(4, 2, "ann", "s1", "who?", NOW)],
        settlements=[Settlement(3, "answered", 2)],
        goals=[GoalRow(1, "ann", "swim", "health", 3, "[]", "active", "[]", NOW, NOW, None)],
    )  # fmt: skip
    kept = copy.deepcopy(turn)
    assert all(getattr(kept, f.name) for f in dataclasses.fields(kept))  # every field
    plan = Plan(
        questions=[(1, PendingQuestion(5, "ann", "s1", "why?"), NOW)], settled=[(4, "answered", 0)]
    )
    joined = plan.joined(turn)
    assert turn == kept
    assert joined == dataclasses.replace(
        kept,
        questions=[*kept.questions, NewQuestion(5, -2, "ann", "s1", "why?", NOW)],
        settlements=[*kept.settlements, Settlement(4, "answered", -1)],
    )
    for f in dataclasses.fields(joined):
        getattr(joined, f.name).clear()
    assert turn == kept
