"""Goals from conversation on a real soul database: written with their events, read back
after a reload, held by the person a linked account belongs to; off with goals = false."""

from __future__ import annotations

from pathlib import Path

from souls.intake.hygiene_gate import HygieneConfig, HygieneGate
from souls.knowledge.knowledge import Knowledge, KnowledgeConfig
from souls.knowledge.persons import Persons
from souls.messages import GoalUpdate
from souls.store.store import NewEvent, Store
from souls.text.tokenize import fts_document

NOW = 1_800_000_000.0


def event(text: str, sender: str = "mel", kind: str = "message", ts: float = NOW) -> NewEvent:
    return NewEvent(
        None, kind, "telegram", sender, None, False, None, ts, NOW, 0.5, text, fts_document(text)
    )


async def ingest(store: Store, knowledge: Knowledge, events: list[NewEvent]) -> None:
    plan = await knowledge.perceive(events)
    ids = await store.append(events, plan.joined(), NOW)
    knowledge.committed(plan, ids)


async def test_goals_are_written_with_their_events_and_survive_a_reload(tmp_path: Path) -> None:
    store = await Store.open(tmp_path / "soul.db")
    try:
        knowledge = Knowledge(store, KnowledgeConfig(), HygieneGate(HygieneConfig()))
        await knowledge.load()
        await ingest(
            store,
            knowledge,
            [
                event("My goal this year is to run a half marathon"),
                event("That's great! Want a plan?", sender="", kind="assistant"),
                event("My goal is to be helpful", sender="", kind="assistant"),
                event("I finally ran it!", ts=NOW + 86_400),
            ],
        )
        (goal,) = knowledge.goals.values()
        assert (goal.speaker, goal.state) == ("mel", "achieved")
        again = Knowledge(store, KnowledgeConfig(), HygieneGate(HygieneConfig()))
        await again.load()
        assert again.goals == knowledge.goals

        # A link: mel is Melanie; her goals follow, and her words merge into them.
        await Persons(store).link("Melanie", "telegram", "mel", NOW)
        moved = await knowledge.follow_links()
        assert moved == {"goals_moved": 1, "goals_merged": 0}
        assert knowledge.goals[goal.id].speaker == "Melanie"
        await ingest(store, knowledge, [event("I'm saving for a house", sender="mel")])
        await ingest(store, knowledge, [event("I'm saving for a house deposit", sender="Melanie")])
        assert sorted((g.speaker, g.statement) for g in knowledge.goals.values()) == [
            ("Melanie", "run a half marathon (this year)"),
            ("Melanie", "saving for a house"),
        ]

        off = Knowledge(store, KnowledgeConfig(goals=False), HygieneGate(HygieneConfig()))
        await off.load()
        await ingest(store, off, [event("My goal is to learn Spanish by next summer")])
        assert len(off.goals) == 2
    finally:
        await store.close()


async def test_a_goal_read_from_talk_names_its_source_event(tmp_path: Path) -> None:
    store = await Store.open(tmp_path / "soul.db")
    try:
        knowledge = Knowledge(store, KnowledgeConfig(), HygieneGate(HygieneConfig()))
        await knowledge.load()
        await ingest(store, knowledge, [event("hi there"), event("how are you")])
        await ingest(
            store,
            knowledge,
            [
                event("nice weather"),
                event("My goal this year is to run a half marathon"),
                event("我们打算明年买房"),
            ],
        )
        ids = {
            text: i for i, text in await store.db.execute_fetchall("SELECT id, text FROM events")
        }
        by_statement = {g.statement: g.event_id for g in knowledge.goals.values()}
        assert by_statement == {
            "run a half marathon (this year)": ids["My goal this year is to run a half marathon"],
            "明年买房": ids["我们打算明年买房"],
        }
        # A restatement and a later state signal keep the goal's source: its first word.
        await ingest(
            store,
            knowledge,
            [event("My goal is to run a half marathon this year!"), event("I finally ran it!")],
        )
        run = next(g for g in knowledge.goals.values() if "marathon" in g.statement)
        assert (run.state, run.event_id) == (
            "achieved",
            ids["My goal this year is to run a half marathon"],
        )
        rows = await store.db.execute_fetchall("SELECT statement, event_id FROM goals")
        assert dict(rows) == {g.statement: g.event_id for g in knowledge.goals.values()}
        again = Knowledge(store, KnowledgeConfig(), HygieneGate(HygieneConfig()))
        await again.load()
        assert again.goals == knowledge.goals
        # A goal stated through goal.update has no source event.
        stated = await knowledge.update_goal(
            GoalUpdate(action="new", statement="learn Spanish", speaker="mel", priority=1), NOW
        )
        assert stated.goal.event_id is None
    finally:
        await store.close()
