"""The collider on a real deck (a conversation's cards in a real SQLite file): a ledger
row alone reproduces its draw, whatever verdicts, closures and weeks changed since; a
silent draw leaves nothing but its row; a presented one names the lines it rests on."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from conversation_cards import crystallised

from souls.collision.cards import CardStore
from souls.collision.collider import Collider
from souls.collision.crystal import Draft
from souls.collision.judge import BuiltinJudge
from souls.collision.lightning import LightningConfig
from souls.collision.presentation_gate import GateConfig
from souls.store.store import Store

WEEK = 7 * 86400.0
LIGHTNING = LightningConfig(min_rows=8)  # the conversation makes ten cards; one is excluded
JUDGE = BuiltinJudge(GateConfig())


@asynccontextmanager
async def deck(
    tmp_path: Path, drafts: list[tuple[float, Draft]]
) -> AsyncIterator[tuple[Collider, CardStore, float]]:
    """The conversation's cards, made when it was said; and the time after it."""
    store = await Store.open(tmp_path / "soul.db")
    cards = CardStore(store, tmp_path / "cards")
    try:
        when = 0.0
        for when, draft in drafts:
            await cards.add(
                title="",
                conclusions=draft.conclusions,
                questions=draft.questions,
                tags=draft.tags,
                source="reflect",
                now=when,
            )
        assert len(await cards.all()) >= LIGHTNING.min_rows
        yield Collider("lena", store, cards), cards, when + 86400
    finally:
        await store.close()


async def test_a_ledger_row_alone_reproduces_its_draw(
    tmp_path: Path,
) -> None:
    async with deck(tmp_path, crystallised()) as (collider, cards, now):
        topic = "hey Tomas, long time no see"
        first = [
            await collider.collide(topic, now, LIGHTNING, JUDGE, seed=seed, exclude=["0001"])
            for seed in range(40)
        ]
        # What changes weights after the draws: a question closed, a note, three weeks.
        (asker,) = [c for c in await cards.all() if c.questions][:1]
        await cards.close(asker.number, 1, asker.number, 1, now)
        await cards.note(2, "the van is booked for Saturday", now)
        later = now + 3 * WEEK
        again = [await collider.collide("", later, LIGHTNING, JUDGE, as_of=d.draw) for d in first]
        by_seed = [
            await collider.collide(topic, later, LIGHTNING, JUDGE, seed=d.seed, exclude=["0001"])
            for d in first
        ]
        ledger = {d.draw: d for d in await collider.ledger(1000)}
        with pytest.raises(ValueError, match="give no seed"):
            await collider.collide("", later, LIGHTNING, JUDGE, as_of=first[0].draw, seed=1)
        with pytest.raises(ValueError, match="no draw 999"):
            await collider.collide("", later, LIGHTNING, JUDGE, as_of=999)
        silence = await collider.silence_rate()
    assert [d.cards for d in again] == [d.cards for d in first]
    assert [d.weights for d in again] == [d.weights for d in first]
    assert all(1 not in d.cards for d in again)  # its exclusion came back with it
    assert [(d.topic, d.replay_of) for d in again] == [(topic, d.draw) for d in first]
    assert [d.verdicts for d in again] == [d.verdicts for d in first]
    # The seed alone does not do it once the weights moved: why the row keeps them.
    assert any(b.cards != d.cards for b, d in zip(by_seed, first, strict=True))
    row = ledger[first[0].draw]
    assert row.reproduce == f"soupd lightning lena --as-of {first[0].draw}"
    assert (row.n, row.exclude) == (3, ["0001"])
    # Reproductions are no new collisions: the rate is the first draws' and the seeded ones'.
    shown = sum(d.presented for d in first + by_seed)
    assert silence == round(1 - shown / (len(first) + len(by_seed)), 4)


async def test_a_presented_collision_names_the_lines_it_rests_on(
    tmp_path: Path,
) -> None:
    async with deck(tmp_path, crystallised()) as (collider, _, now):
        draws = [
            await collider.collide(
                "I'm flying to Berlin for the planning week", now, LIGHTNING, JUDGE, seed=s
            )
            for s in range(60)
        ]
    shown = [d for d in draws if d.presented]
    assert shown, "the gate must not be mute"
    assert len(shown) < len(draws)  # nor a rubber stamp
    for collision in shown:
        (passed,) = [v for v in collision.verdicts if v.criterion == collision.criterion]
        assert passed.lines
        assert {line.card for line in passed.lines} <= set(collision.cards)
        for line in passed.lines:
            assert line.text in collision.spark
    for collision in draws:
        if not collision.presented:
            assert collision.spark == ""


async def test_an_increment_is_shown_once(tmp_path: Path) -> None:
    async with deck(tmp_path, crystallised()) as (collider, _, now):
        topic = "I'm flying to Berlin for the planning week"
        draws = [await collider.collide(topic, now, LIGHTNING, JUDGE, seed=s) for s in range(60)]
        first = next(d for d in draws if d.presented)
        again = await collider.collide(topic, now, LIGHTNING, JUDGE, seed=first.seed)
        replayed = await collider.collide("", now, LIGHTNING, JUDGE, as_of=first.draw)
    assert again.cards == first.cards
    (repeat,) = [v for v in again.verdicts if v.criterion == first.criterion]
    assert not repeat.passed
    assert repeat.reason.startswith(f"fails (already presented in draw {first.draw}): ")
    assert again.spark == "" or again.criterion != first.criterion
    assert replayed.verdicts == first.verdicts  # as of its draw, it was new
