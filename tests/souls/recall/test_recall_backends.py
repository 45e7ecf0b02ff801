"""Recall (souls/recall/recall.py) straight on the store, on both backends (the
fixtures of tests/backends.py): the same memories and claims give the same items, a
fact that changed comes back newest first with its successor brought above it, and a
question naming a slot finds the fact in force without its words."""

from __future__ import annotations

from souls.recall.recall import RecallConfig, recall
from souls.store.changes import Changes, ClaimClosing, NewClaim
from souls.store.interface import SoulStore
from souls.store.store import NewEvent
from souls.text.tokenize import fts_document

T0 = 1_780_000_000.0
DAY = 86_400.0

FILLER = [
    "good morning! what's the weather like today",
    "remind me to buy milk on the way home",
    "the train was late again",
    "I watched a documentary about octopuses",
    "what's a good recipe with leftover rice",
]


def event(text: str, ts: float) -> NewEvent:
    return NewEvent(
        ref=None, kind="message", channel="test", sender="ada", group=None, mentioned=False,
        session=None, ts=ts, recorded=ts, salience=0.5, text=text, doc=fts_document(text),
    )  # fmt: skip


def fact(claim_id: int, slot: str, value: str, quote: str, at: float) -> NewClaim:
    return NewClaim(
        claim_id, "fact", "ada", slot, value, quote, -1, "rule", "high", "active", at, None,
        at, None,
    )  # fmt: skip


async def seed(store: SoulStore) -> None:
    for i, text in enumerate(FILLER):
        await store.append([event(text, T0 + i)])
    home, move = "I live in Paris, near the canal", "We moved to Lyon in June!"
    work = "I work at Siemens as an engineer"
    paris = fact(1, "location", "Paris", "Paris", T0 + DAY)
    await store.append([event(home, T0 + DAY)], Changes(claims=[paris]))
    siemens = fact(2, "employer", "Siemens", "Siemens", T0 + 2 * DAY)
    await store.append([event(work, T0 + 2 * DAY)], Changes(claims=[siemens]))
    await store.append(
        [event(move, T0 + 40 * DAY)],
        Changes(
            claims=[fact(3, "location", "Lyon", "Lyon", T0 + 40 * DAY)],
            closings=[ClaimClosing(1, "superseded", T0 + 40 * DAY, T0 + 40 * DAY)],
        ),
    )


async def test_a_move_comes_above_the_home_it_replaced(store: SoulStore) -> None:
    await seed(store)
    found = await recall(
        store, await store.term_stats(), RecallConfig(), "where do I live?", 5,
        now=T0 + 41 * DAY, explain=True,
    )  # fmt: skip
    texts = [item.text for item in found.items]
    assert texts[:2] == ["We moved to Lyon in June!", "I live in Paris, near the canal"]
    new, old = found.items[0], found.items[1]
    assert new.via == "successor"
    assert new.explain is not None
    assert new.explain.succeeds == old.id
    assert any("location: Paris → Lyon" in reason for reason in new.explain.reasons)


async def test_a_slot_named_finds_the_fact_in_force(store: SoulStore) -> None:
    await seed(store)
    found = await recall(
        store,
        await store.term_stats(),
        RecallConfig(),
        "who is my employer?",
        5,
        now=T0 + 41 * DAY,
    )
    assert [item.text for item in found.items][:1] == ["I work at Siemens as an engineer"]
