"""A long turn's rule readings, made in a worker process (supervisor.pace.in_worker),
are the loop's own: claims, goals and the plan a soul writes from them."""

from __future__ import annotations

from pathlib import Path

from souls.intake.hygiene_gate import HygieneConfig, HygieneGate
from souls.knowledge.claims import extract_rules
from souls.knowledge.goal_merge import follow
from souls.knowledge.goal_talk import read_goals
from souls.knowledge.knowledge import Knowledge, KnowledgeConfig, _rules
from souls.store.store import NewEvent, Store
from souls.text.tokenize import fts_document
from supervisor.pace import OFFLOAD_CHARS, in_worker

FILLER = "ok so um yeah, the standup moved again lol, 那个会改到周五了. "
SAID = (
    " My cat is called Tuanzi. I live in Lyon now. My goal this year is to run a half"
    " marathon. 我打算明年买房."
)


def long_turn() -> str:
    filler = (FILLER * (OFFLOAD_CHARS // len(FILLER) + 1))[:OFFLOAD_CHARS]
    return filler + SAID


async def test_worker_readings_equal_the_loops() -> None:
    text = long_turn()
    assert len(text) >= OFFLOAD_CHARS
    rules = extract_rules(text, sender="ana", ts=1.0, kind="message")
    assert rules  # the turn says something
    assert await in_worker(_rules, text, "ana", 1.0, "message") == rules
    signals = read_goals(text)
    assert signals
    assert await in_worker(read_goals, text) == signals
    assert follow([], text, speaker="ana", now=1.0, next_id=1, signals=signals) == follow(
        [], text, speaker="ana", now=1.0, next_id=1
    )


async def test_a_long_turn_plans_what_a_short_one_would(tmp_path: Path) -> None:
    def event(text: str) -> NewEvent:
        return NewEvent(
            ref=None, kind="message", channel="chat", sender="ana", group=None,
            mentioned=False, session=None, ts=1.0, recorded=1.0, salience=0.5, text=text,
            doc=fts_document(text),
        )  # fmt: skip

    plans = []
    for name, text in (("long", long_turn()), ("short", FILLER + SAID)):
        store = await Store.open(tmp_path / f"{name}.db")
        try:
            knowledge = Knowledge(store, KnowledgeConfig(), HygieneGate(HygieneConfig()))
            await knowledge.load()
            plan = await knowledge.perceive([event(text)])
            plans.append(
                (
                    sorted((c.row.slot, c.row.value) for c in plan.claims),
                    sorted((g.goal.statement, g.outcome) for g in plan.goals),
                )
            )
        finally:
            await store.close()
    long_plan, short_plan = plans
    assert long_plan == short_plan
    assert long_plan[0]  # claims
    assert long_plan[1]  # goals
