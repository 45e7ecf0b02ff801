# ruff: noqa: RUF001  (full-width punctuation is part of the Chinese texts under test)
"""Hebbian association (seed 003): memories recalled together *for a query* wire
together. Results that hold nothing of the query — a word in every memory was all they
shared with it — are noise: they never fire together, so they never come back as
associates; memories that really matched still do."""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, closing
from pathlib import Path
from typing import Any

import anyio
import pytest
from conftest import MAILBOX_HYGIENE

from souls.actor.clock import FixedClock
from souls.actor.mailbox import Mailbox
from souls.actor.soul import Soul
from souls.config import SoulConfig
from souls.events import EventIn
from souls.messages import Message, Observe, Recall, Stats
from souls.mind.hebbian import HebbianConfig
from souls.results import PushResult, RecallItem, RecallResult

pytestmark = MAILBOX_HYGIENE

T0 = 1_780_000_000.0
DAY = 86_400.0

# A pet sitter's notes to the owner, one per visit: every one of them is about Tuanzi.
NOTES = [
    "Tuanzi ate half her food this morning, left the fish bits again",
    "tuanzi slept on the sofa all afternoon, snoring a bit lol",
    "gave Tuanzi her kidney pill at 8, hid it in the treat, she didnt notice",
    "Tuanzi knocked the water bowl over, refilled it, floor is fine",
    "brushed Tuanzi, so much fur, she hated it for 2 min then purred",
    "团子今天吃得不多，不过精神还好 (Tuanzi)",
    "Tuanzi threw up once around noon, hairball I think, no blood",
    "Tuanzi's kidney pill again at 8pm, took it with tuna this time",
    "played with Tuanzi and the feather toy, she's faster than she looks",
    "Tuanzi sat at the window watching birds for like an hour",
    "litter box cleaned, Tuanzi used it twice today, all normal",
    "Tuanzi ignored the new food brand, back to the old one tomorrow",
]


class Sitter:
    def __init__(self, root: Path, mailbox: Mailbox[Message]) -> None:
        self.root = root
        self.mailbox = mailbox

    async def ask(self, message: Message) -> Any:
        return await self.mailbox.ask(message, timeout=10)

    async def recall(self, query: str) -> list[RecallItem]:
        found = await self.ask(Recall(query=query))
        assert isinstance(found, RecallResult)
        await self.ask(Stats())  # a turn of its own: the recall's edges are committed
        return found.items

    def edges(self) -> list[tuple[int, int, float]]:
        with closing(sqlite3.connect(self.root / "soul.db")) as db:
            return db.execute("SELECT a, b, weight FROM edges ORDER BY a, b").fetchall()


@asynccontextmanager
async def sitting(root: Path) -> AsyncIterator[Sitter]:
    clock = FixedClock(T0)
    soul = Soul("sitter", SoulConfig(), db_path=root / "soul.db", brain_dir=root, clock=clock)
    mailbox: Mailbox[Message] = Mailbox("sitter", 64)
    with anyio.fail_after(30):
        async with anyio.create_task_group() as tg:
            await tg.start(soul.run, mailbox)
            sitter = Sitter(root, mailbox)
            for n, text in enumerate(NOTES):
                clock.advance(DAY / 4)
                event = EventIn(text=text, kind="dm", sender="sam", session=f"visit-{n}")
                pushed = await sitter.ask(Observe(event))
                assert isinstance(pushed, PushResult)
                assert pushed.status == "stored"
            yield sitter
            tg.cancel_scope.cancel()


async def test_results_that_hold_nothing_of_the_query_never_wire(tmp_path: Path) -> None:
    async with sitting(tmp_path) as sitter:
        # "tuanzi" is the only word of these the notes hold, and every note holds it.
        for query in ["how's Tuanzi doing?", "anything new with tuanzi", "Tuanzi ok?"] * 2:
            noise = await sitter.recall(query)
            assert noise  # something comes back...
        assert sitter.edges() == []  # ...but nothing fired together
        # A real question afterwards brings what matches it, and no associates of noise.
        found = await sitter.recall("when did Tuanzi get her kidney pill?")
    assert [item.via for item in found if item.via == "hebbian"] == []
    assert any("kidney pill" in item.text for item in found)


async def test_memories_that_matched_still_fire_together(tmp_path: Path) -> None:
    async with sitting(tmp_path) as sitter:
        for _ in range(3):
            found = await sitter.recall("kidney pill")
        pills = {item.id for item in found if "kidney pill" in item.text}
        assert len(pills) == 2
        edges = sitter.edges()
        # The two notes about the pill wired together (three recalls: weight 3); notes
        # that shared only "Tuanzi" with the query did not join them.
        assert [(a, b) for a, b, _ in edges] == [tuple(sorted(pills))]
        assert edges[0][2] == 3.0
        # Strong now: recalling one brings the other along.
        found = await sitter.recall("took it with tuna")
    assert [item.via for item in found][-1] == "hebbian"
    assert {item.id for item in found} == pills


def test_fire_share_is_a_share() -> None:
    assert HebbianConfig().fire_share == 0.2
    with pytest.raises(ValueError, match="fire_share"):
        HebbianConfig(fire_share=1.5)
