"""Memories by id on the actor alone: a real Soul draining a Mailbox into a SQLite file,
asked MemoryList / MemoryGet / MemoryUpdate / MemoryDelete. Only the clock is fake."""

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
from souls.actor.memories import MemoryUpdated
from souls.actor.rights import ForgetResult
from souls.actor.soul import Soul
from souls.config import SoulConfig
from souls.events import EventIn
from souls.messages import (
    MemoryDelete,
    MemoryGet,
    MemoryList,
    MemoryUpdate,
    Message,
    Observe,
    Recall,
)
from souls.results import MemoryItem, MemoryPage, RecallResult
from supervisor.errors import InvalidParams, NotFound, RejectedInput

pytestmark = MAILBOX_HYGIENE

T0 = 1_780_000_000.0


class Lab:
    def __init__(self, root: Path) -> None:
        self.db_path = root / "alpha" / "soul.db"
        self.brain_dir = root / "alpha" / "brain"
        self.config = SoulConfig()
        self.clock = FixedClock(T0)
        self.mailbox: Mailbox[Message] = Mailbox("alpha", 64)

    @asynccontextmanager
    async def running(self) -> AsyncIterator[Mailbox[Message]]:
        soul = Soul(
            "alpha", self.config, db_path=self.db_path, brain_dir=self.brain_dir, clock=self.clock
        )
        with anyio.fail_after(10):
            async with anyio.create_task_group() as tg:
                await tg.start(soul.run, self.mailbox)
                yield self.mailbox
                tg.cancel_scope.cancel()

    def rows(self, sql: str) -> list[tuple[Any, ...]]:
        with closing(sqlite3.connect(self.db_path)) as db:
            return db.execute(sql).fetchall()


@pytest.fixture
def lab(tmp_path: Path) -> Lab:
    return Lab(tmp_path)


async def ask(mailbox: Mailbox[Message], message: Message) -> Any:
    return await mailbox.ask(message, timeout=5)


async def seed(mailbox: Mailbox[Message]) -> None:
    for n, (sender, session, kind, text) in enumerate(
        [
            ("mel", "s1", "message", "the harbour crane is fixed"),
            ("ada", "s1", "assistant", "glad the crane works again"),
            ("mel", "s2", "message", "we booked the train to Leipzig"),
            ("bob", "s2", "message", "the rent goes up in march"),
        ]
    ):
        event = EventIn(
            text=text, sender=sender, session=session, kind=kind, ref=f"r{n}", ts=T0 + 60 * n
        )
        await ask(mailbox, Observe(event))


async def test_pages_go_newest_first_and_filter_as_recall_does(lab: Lab) -> None:
    async with lab.running() as mailbox:
        await seed(mailbox)
        first = await ask(mailbox, MemoryList(limit=3))
        assert isinstance(first, MemoryPage)
        assert [i.ref for i in first.items] == ["r3", "r2", "r1"]
        assert first.next_cursor == str(first.items[-1].id)
        rest = await ask(mailbox, MemoryList(cursor=int(first.next_cursor), limit=3))
        assert ([i.ref for i in rest.items], rest.next_cursor) == (["r0"], None)
        by_mel = await ask(mailbox, MemoryList(sender="mel"))
        assert [i.text for i in by_mel.items] == [
            "we booked the train to Leipzig",
            "the harbour crane is fixed",
        ]
        assert [i.ref for i in (await ask(mailbox, MemoryList(kind="assistant"))).items] == ["r1"]
        window = MemoryList(session="s2", since=T0 + 120, until=T0 + 180)
        assert [i.ref for i in (await ask(mailbox, window)).items] == ["r2"]
        got = await ask(mailbox, MemoryGet(first.items[0].id))
        assert got == first.items[0]
        assert isinstance(got, MemoryItem)
        assert (got.sender, got.ts) == ("bob", T0 + 180)
        with pytest.raises(NotFound):
            await ask(mailbox, MemoryGet(999))


async def test_update_replaces_the_text_everywhere_and_keeps_the_utterance(lab: Lab) -> None:
    async with lab.running() as mailbox:
        await seed(mailbox)
        (old,) = (await ask(mailbox, MemoryList(limit=1, session="s2", sender="mel"))).items
        updated = await ask(mailbox, MemoryUpdate(old.id, "we booked the train to Dresden"))
        assert isinstance(updated, MemoryUpdated)
        assert (updated.replaced, updated.forgot.events) == (old.id, 1)
        new = await ask(mailbox, MemoryGet(updated.id))
        assert (new.ref, new.sender, new.session, new.ts) == (old.ref, old.sender, "s2", old.ts)
        recalled = await ask(mailbox, Recall("booked train"))
        assert isinstance(recalled, RecallResult)
        assert [i.text for i in recalled.items][:1] == ["we booked the train to Dresden"]
        with pytest.raises(NotFound):
            await ask(mailbox, MemoryGet(old.id))
        # A refused correction changes nothing.
        with pytest.raises(RejectedInput):
            await ask(mailbox, MemoryUpdate(updated.id, "key AKIA" + "ABCDEFGHIJ234567"))
        with pytest.raises(InvalidParams):
            await ask(mailbox, MemoryUpdate(updated.id, "we booked the train to Dresden"))
        with pytest.raises(NotFound):
            await ask(mailbox, MemoryUpdate(old.id, "anything"))
    assert lab.rows("SELECT count(*) FROM events") == [(4,)]
    texts = {t for (t,) in lab.rows("SELECT text FROM events")}
    assert "we booked the train to Leipzig" not in texts
    assert all("leipzig" not in doc for (doc,) in lab.rows("SELECT doc FROM memory_fts"))


async def test_delete_is_forget_of_its_event(lab: Lab) -> None:
    async with lab.running() as mailbox:
        await seed(mailbox)
        await ask(mailbox, Recall("crane harbour"))  # Hebbian edges between the two
        (crane,) = (await ask(mailbox, MemoryList(limit=1, sender="mel", session="s1"))).items
        assert lab.rows(f"SELECT count(*) FROM edges WHERE a = {crane.id} OR b = {crane.id}")[
            0
        ] >= (1,)
        forgot = await ask(mailbox, MemoryDelete(crane.id))
        assert isinstance(forgot, ForgetResult)
        assert (forgot.events, forgot.memories) == (1, 1)
        assert forgot.edges >= 1
        with pytest.raises(NotFound):
            await ask(mailbox, MemoryDelete(crane.id))
    assert lab.rows(f"SELECT count(*) FROM edges WHERE a = {crane.id} OR b = {crane.id}") == [(0,)]
    assert lab.rows(f"SELECT count(*) FROM memory_fts WHERE rowid = {crane.id}") == [(0,)]
    assert lab.rows("SELECT count(*) FROM events WHERE ref = 'r0'") == [(0,)]
