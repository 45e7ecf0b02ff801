"""The knowledge room on both backends (the fixtures of tests/backends.py: a real SQLite
file, a real PostgreSQL server), through the store interface alone: what ingest reads
from events (claims, questions, goals) written with them and read back by a soul
opened again; questions settled by a reply; goals updated and merged after a person
link; stated entries, corrections and the fidelity they lower; the memory map and its
drill-down; a logged assembly and a session's spend; a batch whose append fails, and
its retry."""

from __future__ import annotations

import copy
import sqlite3
from collections import Counter
from collections.abc import Awaitable, Callable

import asyncpg
import pytest

from souls.intake.hygiene_gate import HygieneConfig, HygieneGate
from souls.knowledge.knowledge import Knowledge, KnowledgeConfig
from souls.knowledge.navigate import memory_map, read
from souls.messages import ClaimAdd, GoalUpdate
from souls.store.changes import AssemblyRow, Changes
from souls.store.interface import SoulStore
from souls.store.store import NewEvent
from souls.text.tokenize import fts_document

NOW = 1_800_000_000.0
DAY = 86_400.0

Opener = Callable[[], Awaitable[SoulStore]]


def event(
    text: str,
    *,
    sender: str | None = "ann",
    kind: str = "message",
    ts: float = NOW,
    ref: str | None = None,
) -> NewEvent:
    return NewEvent(
        ref, kind, "web", sender, None, False, "s1", ts, NOW, 0.5, text, fts_document(text)
    )


async def knowing(store: SoulStore) -> Knowledge:
    knowledge = Knowledge(store, KnowledgeConfig(), HygieneGate(HygieneConfig()))
    await knowledge.load()
    return knowledge


async def ingest(store: SoulStore, knowledge: Knowledge, events: list[NewEvent]) -> list[int]:
    plan = await knowledge.perceive(events)
    ids = await store.append(events, plan.joined(), NOW)
    knowledge.committed(plan, ids)
    return ids


async def test_what_ingest_reads_is_written_with_the_events(
    store: SoulStore, opener: Opener
) -> None:
    knowledge = await knowing(store)
    ids = await ingest(
        store,
        knowledge,
        [
            event("My cat is Tuanzi.", ts=NOW - 30 * DAY),
            event("when do we migrate the billing database?", kind="dm"),
            event("My goal this year is to run a half marathon"),
            event("The billing database migrates on Friday.", kind="assistant", sender=None),
            event("We renamed the cat Mochi."),
        ],
    )
    reloaded = await knowing(await opener())
    for held in (knowledge, reloaded):
        claims = [c for c in await held.entries.claims(every=True) if c.slot == "pet_name"]
        assert [(c.slot, c.value, c.state, c.event_id) for c in claims] == [
            ("pet_name", "Tuanzi", "superseded", ids[0]),
            ("pet_name", "Mochi", "active", ids[4]),
        ]
        (answered,) = await held.entries.questions(state="answered")
        assert (answered.event_id, answered.answer, answered.resolved) == (ids[1], ids[3], NOW)
        assert held.pending == []
        (goal,) = held.goals.values()
        assert (goal.speaker, goal.event_id) == ("ann", ids[2])
        assert "half marathon" in goal.statement
    # The next ids follow the stored ones on both.
    more = await ingest(store, reloaded, [event("who owns the backups?", kind="dm")])
    (pending,) = reloaded.pending
    assert pending.id == 2
    assert (await reloaded.entries.questions(ids=[2]))[0].event_id == more[0]


async def test_a_failed_append_leaves_nothing_and_the_retry_takes_the_same_ids(
    store: SoulStore, opener: Opener
) -> None:
    """A batch whose append fails (a taken ref) stores none of its question, goal and
    claim, leaves the pending questions and goals in memory and the turn's own Changes
    as they were; the batch again, without the clash, takes the same ids."""
    knowledge = await knowing(store)
    await ingest(store, knowledge, [event("lunch was fine", ref="taken")])
    said = [
        event("who owns the backups?", kind="dm"),
        event("My goal this year is to run a half marathon"),
        event("My cat is Tuanzi."),
    ]
    turn = Changes(counters=Counter({"dropped.attention": 1}), state={"mood": "calm"})
    kept = copy.deepcopy(turn)
    plan = await knowledge.perceive([*said, event("lunch again", ref="taken")])
    assert (len(plan.questions), len(plan.goals)) == (1, 1)
    assert plan.claims
    # The ids the failed plan handed out, each with its event's offset.
    planned = sorted((c.row.id, c.offset) for c in plan.claims)
    with pytest.raises((sqlite3.IntegrityError, asyncpg.UniqueViolationError)):
        await store.append([*said, event("lunch again", ref="taken")], plan.joined(turn), NOW)
    assert turn == kept
    for reader in (store, await opener()):
        rows = reader.knowledge
        assert await rows.questions(ids=[1]) == []
        assert await rows.pending(10) == []
        assert await rows.goals() == []
        assert await rows.claims(every=True) == []
        assert (await reader.soul_state()).get("mood") is None
    assert (knowledge.pending, knowledge.goals, knowledge._next_question) == ([], {}, 1)

    plan = await knowledge.perceive(said)
    ids = await store.append(said, plan.joined(turn), NOW)
    knowledge.committed(plan, ids)
    assert turn == kept
    assert knowledge._next_question == 2
    reloaded = await knowing(await opener())
    for held in (knowledge, reloaded):
        (asked,) = held.pending
        assert asked.id == 1
        assert (await held.entries.questions(ids=[1]))[0].event_id == ids[0]
        (goal,) = held.goals.values()
        assert (goal.id, goal.event_id) == (1, ids[1])
        claims = await held.entries.claims(every=True)
        assert [(c.id, c.event_id) for c in claims] == [(i, ids[at]) for i, at in planned]
        assert planned[0][0] == 1
        assert ("pet_name", "Tuanzi", ids[2]) in [(c.slot, c.value, c.event_id) for c in claims]
    assert (await store.soul_state())["mood"] == "calm"


async def test_goals_updated_and_merged_after_a_link(store: SoulStore, opener: Opener) -> None:
    knowledge = await knowing(store)
    first = await knowledge.update_goal(
        GoalUpdate(
            action="new",
            statement="learn the cello",
            speaker="4711",
            domain="music",
            triggers=("a concert",),
        ),
        NOW,
    )
    await knowledge.update_goal(
        GoalUpdate(
            action="new",
            statement="learn the cello",
            speaker="maria",
            domain="music",
            triggers=("a concert",),
        ),
        NOW + 1,
    )
    assert first.goal.id == 1
    assert len(knowledge.goals) == 2
    await store.link_person("maria", "web", "4711", NOW + 2)
    assert await knowledge.follow_links() == {"goals_moved": 1, "goals_merged": 1}
    reloaded = await knowing(await opener())
    assert reloaded.goals == knowledge.goals
    (goal,) = reloaded.goals.values()
    assert goal.speaker == "maria"


async def test_stated_entries_and_corrections(store: SoulStore, opener: Opener) -> None:
    knowledge = await knowing(store)
    entries = knowledge.entries
    await ingest(store, knowledge, [event("My cat is Tuanzi.")])
    (named,) = [c for c in await entries.claims() if c.slot == "pet_name"]
    first = await store.knowledge.next_id("claims")
    await store.link_person("Maria", "web", "4711", NOW)
    stated = await entries.state(ClaimAdd(value="tea", subject="web:4711"), NOW + 1)
    assert (stated["claim"].id, stated["claim"].subject) == (first, "Maria")  # type: ignore[attr-defined]
    located = await entries.state(ClaimAdd(value="Oslo", slot="location", subject="MARIA"), NOW + 2)
    assert (located["outcome"], located["claim"].subject) == ("active", "Maria")  # type: ignore[attr-defined]
    changed = await entries.change("correct", named.id, "Mochi", NOW + 3)
    assert changed["closed"] == [named.id]
    assert changed["fidelity_ai"] == 0.9
    reloaded = await knowing(await opener())
    assert reloaded.entries.fidelity_ai == 0.9
    history = await reloaded.entries.history((await reloaded.entries.claims(ids=[first + 2]))[0])
    assert [(c.value, c.state) for c in history] == [("Tuanzi", "superseded"), ("Mochi", "active")]
    assert [c.value for c in await reloaded.entries.claims() if c.id >= first] == [
        "tea", "Oslo", "Mochi"
    ]  # fmt: skip


async def test_the_memory_map_its_drill_down_and_the_assembly_log(store: SoulStore) -> None:
    knowledge = await knowing(store)
    ids = await ingest(
        store, knowledge, [event("My cat is Tuanzi."), event("who owns the backups?", kind="dm")]
    )
    await store.flush(
        Changes(
            assemblies=[AssemblyRow("c0ffee", "s1", "cat?", "retrieval", 90, 30, True, "[]", "[]")]
        ),
        NOW + 5,
    )
    drawn = await memory_map(store, knowledge, 2000)
    assert "pet_name=Tuanzi" in drawn
    assert "2027-01-15" in drawn
    assert (await read(store, knowledge, f"e{ids[0]}"))["text"] == "My cat is Tuanzi."
    memory = await read(store, knowledge, "m1")
    assert (memory["kind"], memory["event_id"], memory["ref"]) == ("observation", ids[0], None)
    assert (await read(store, knowledge, "c1"))["history"] == []  # pet_kind: one entry
    assert (await read(store, knowledge, "q1"))["question"].text == "who owns the backups?"  # type: ignore[attr-defined]
    logged = await knowledge.assembly("C0F")
    assert logged is not None
    assert (logged.created, logged.paused) == (NOW + 5, True)
    assert await knowledge.session_spent("s1", NOW) == 30
    assert await knowledge.session_spent(None, NOW) == 0
