# ruff: noqa: RUF001  (full-width punctuation is part of the Chinese texts under test)
"""A week of one person's chat with their assistant, played into a real soul.

Lin writes the way people do: fillers, typos, English and Chinese in one breath, plans
changed a turn later. The soul runs for real (its actor, its SQLite file); only the
clock is fake. Shared by the recall tests.
"""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager, closing
from pathlib import Path
from typing import Any

import anyio

from souls.actor.clock import FixedClock
from souls.actor.mailbox import Mailbox
from souls.actor.soul import Soul
from souls.config import SoulConfig
from souls.events import EventIn
from souls.messages import Context, Message, Observe, Recall, Stats, Why
from souls.recall.assembly import AssemblyLog
from souls.results import ContextResult, PushResult, RecallItem, RecallResult

T0 = 1_780_000_000.0  # 2026-05-28
DAY = 86_400.0

# (day, session, who, text): "lin" writes direct messages, "ada" is the assistant.
WEEK: list[tuple[int, str, str, str]] = [
    (0, "mon", "lin", "hey, so um my cat is called Tuanzi and she's been throwing up since sunday"),
    (0, "mon", "ada", "Oh no, poor Tuanzi. Has she been eating and drinking normally?"),
    (
        0,
        "mon",
        "lin",
        "drinking a LOT actually. the vet said maybe kidney stuff?? bloodwork friday",
    ),
    (0, "mon", "ada", "More thirst can be a kidney sign, good that the vet is checking."),
    (0, "mon", "lin", "我下周要搬家了，好烦，箱子还没打包完"),
    (0, "mon", "ada", "搬家真的很折腾。需要我帮你列一个打包清单吗？"),
    (0, "mon", "lin", "算了不用，我妈说她周末过来帮忙"),
    (0, "mon", "lin", "I live in Shanghai, near the river. for now anyway lol"),
    (0, "mon", "lin", "I really like oolong tea, the roasted kind"),
    (0, "mon", "lin", "I promise I'll call grandma this weekend, she keeps asking"),
    (0, "mon", "lin", "what was the name of that kidney diet food the vet mentioned?"),
    (0, "mon", "ada", "Hmm, I'm not sure which one, maybe check the clinic receipt."),
    (1, "tue", "lin", "ok so. big news. we moved to Hangzhou, the new flat is tiny but cute"),
    (1, "tue", "lin", "I work as a product designer at Lantern Labs"),
    (1, "tue", "lin", "my manager Priya wants the Q3 report by the 15th, ugh"),
    (1, "tue", "lin", "I enjoy pottery on wednesdays, it's so messy haha"),
    (1, "tue", "lin", "我喜欢在西湖边跑步"),
    (1, "tue", "lin", "I hate cilantro btw, never put it in a recipe for me"),
    (1, "tue", "lin", "I plan to run the Hangzhou half marathon in November"),
    (1, "tue", "lin", "actually no, not the half, I'll do the 10k. my knees lol"),
    (2, "wed", "lin", "Tuanzi's bloodwork came back fine-ish, the vet wants a recheck in 3 months"),
    (2, "wed", "ada", "That's a relief. Want me to note the recheck?"),
    (2, "wed", "lin", "yes pls. also I love jazz, went to a tiny bar show yesterday"),
    (2, "wed", "lin", "我最喜欢的茶还是乌龙，不过最近也喝白茶"),
    (2, "wed", "lin", "my partner Sam is a nurse, works nights, so I cook dinner at like 5pm"),
    (2, "wed", "lin", "I promise to send Priya the draft on monday"),
    (3, "thu", "lin", "I enjoy hiking in the hills near the lake on weekends"),
    (3, "thu", "lin", "my brother Jun works at a bank in Ningbo"),
    (3, "thu", "lin", "I'm planning to start a budget spreadsheet for the move"),
    (3, "thu", "lin", "我答应妈妈下个月回老家"),
    (3, "thu", "lin", "I dislike crowded trains, I take the bike when I can"),
    (3, "thu", "lin", "do you think I should get a second cat?"),
    (4, "fri", "lin", "I adore dumplings from the place downstairs, the pork and chive ones"),
    (4, "fri", "lin", "today was long. Priya moved the deadline AGAIN"),
    (4, "fri", "lin", "I like reading sci-fi before bed, currently on the three body problem"),
    (4, "fri", "lin", "我喜欢周末去菜市场买菜"),
    (5, "sat", "lin", "remind me what Tuanzi's vet said about food?"),
]


@asynccontextmanager
async def soul_running(
    root: Path, clock: FixedClock, config: SoulConfig | None = None
) -> AsyncIterator[Talk]:
    """One incarnation of a soul on ``root``, until the body is done."""
    soul = Soul(
        "lin",
        config or SoulConfig(),
        db_path=root / "soul.db",
        brain_dir=root / "brain",
        clock=clock,
    )
    mailbox: Mailbox[Message] = Mailbox("lin", 256)
    with anyio.fail_after(60):
        async with anyio.create_task_group() as tg:
            await tg.start(soul.run, mailbox)
            yield Talk(root, clock, mailbox)
            tg.cancel_scope.cancel()


class Talk:
    """A running soul and what a test asks it."""

    def __init__(self, root: Path, clock: FixedClock, mailbox: Mailbox[Message]) -> None:
        self.root = root
        self.clock = clock
        self._mailbox = mailbox

    async def ask(self, message: Message) -> Any:
        return await self._mailbox.ask(message, timeout=10)

    async def say(self, who: str, text: str, session: str, kind: str | None = None) -> None:
        kind = kind or ("assistant" if who == "ada" else "dm")
        event = EventIn(text=text, kind=kind, sender=who, session=session)
        pushed = await self.ask(Observe(event))
        assert isinstance(pushed, PushResult)
        assert pushed.status == "stored", pushed

    async def play(self, turns: Sequence[tuple[int, str, str, str]] = WEEK) -> None:
        """The turns, each day's a minute apart, starting ``T0`` + its day."""
        for n, (day, session, who, text) in enumerate(turns):
            self.clock.advance(max(T0 + day * DAY + 60.0 * n - self.clock.now(), 0.0))
            await self.say(who, text, session)

    async def context(self, query: str | None = None, session: str | None = None) -> ContextResult:
        result = await self.ask(Context(query=query, session=session))
        assert isinstance(result, ContextResult)
        return result

    async def settle(self) -> None:
        """Wait for a turn of its own: every turn before it has committed its changes
        (a reply comes before its turn's commit)."""
        await self.ask(Stats())

    async def why(self) -> AssemblyLog:
        log = await self.ask(Why())
        assert isinstance(log, AssemblyLog)
        return log

    async def recall(self, query: str, k: int | None = None) -> list[RecallItem]:
        result = await self.ask(Recall(query=query, k=k))
        assert isinstance(result, RecallResult)
        return result.items

    def rows(self, sql: str, params: Sequence[object] = ()) -> list[tuple[Any, ...]]:
        with closing(sqlite3.connect(self.root / "soul.db")) as db:
            return db.execute(sql, params).fetchall()


def recalled(context: ContextResult) -> list[str]:
    """The labels of the items a context injected (m12, c5, q2...), in order."""
    section = next((s for s in context.sections if s.name == "recalled"), None)
    return list(section.items) if section is not None else []
