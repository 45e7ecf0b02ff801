"""The entries in force, kept in memory for context assembly (souls.knowledge.entries.InForce),
are the claims table's after every path that writes claims: extraction at ingest
(inserts, supersessions, ties deferred and settled), an import, stated entries,
updates, corrections and retractions, a person link, a forget, a rebuild, a restart.

A stale view would inject a forgotten or retracted claim; so after each step the view
is compared with a fresh read of the table, and the context is checked for what must
no longer be in it. A soul run with the shortlist and one run with every entry as a
contender assemble the very same contexts."""

from __future__ import annotations

import shutil
import sqlite3
from collections.abc import AsyncIterator, Awaitable, Callable
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
from souls.knowledge.entries import CLAIM_COLUMNS, Claim, InForce
from souls.knowledge.knowledge import Knowledge
from souls.messages import (
    ClaimAdd,
    ClaimChange,
    Context,
    Forget,
    Import,
    Message,
    Observe,
    PersonLink,
    Rebuild,
)
from souls.recall.assembly import Contender
from souls.results import ContextResult, PushResult

pytestmark = MAILBOX_HYGIENE

T0 = 1_780_000_000.0
DAY = 86_400.0


class Running:
    """One soul incarnation on ``root``'s database, with its mailbox."""

    def __init__(self, root: Path, clock: FixedClock) -> None:
        self.db_path = root / "soul.db"
        self.soul = Soul(
            "alpha", SoulConfig(), db_path=self.db_path, brain_dir=root / "brain", clock=clock
        )
        self.mailbox: Mailbox[Message] = Mailbox("alpha", 64)

    async def ask(self, message: Message) -> Any:
        return await self.mailbox.ask(message, timeout=5)

    async def observe(self, text: str, **fields: Any) -> None:
        result = await self.ask(Observe(EventIn(text=text, kind="dm", **fields)))
        assert isinstance(result, PushResult)
        assert result.status == "stored", result

    async def context(self, query: str | None) -> str:
        result = await self.ask(Context(query=query))
        assert isinstance(result, ContextResult)
        return result.text

    def copy_to(self, root: Path) -> None:
        """This incarnation's database (a consistent copy, taken while it runs) and brain
        folder, under ``root``."""
        root.mkdir()
        shutil.copytree(self.db_path.parent / "brain", root / "brain")
        with (
            closing(sqlite3.connect(self.db_path)) as source,
            closing(sqlite3.connect(root / self.db_path.name)) as copy,
        ):
            source.backup(copy)

    def assert_view_is_the_table(self) -> None:
        """The view in memory is fresh and holds what the table holds in force."""
        view = self.soul._require_knowledge().entries.view
        with closing(sqlite3.connect(self.db_path)) as db:
            rows = db.execute(
                f"SELECT {CLAIM_COLUMNS} FROM claims"
                " WHERE state IN ('active', 'deferred') ORDER BY id"
            ).fetchall()
        table = [Claim(*row) for row in rows]
        reloaded = InForce()
        reloaded.reset(table)
        assert view.fresh
        assert sorted(view.claims.values(), key=lambda c: c.id) == table
        assert view.index == reloaded.index


@asynccontextmanager
async def running(root: Path, clock: FixedClock) -> AsyncIterator[Running]:
    incarnation = Running(root, clock)
    with anyio.fail_after(20):
        async with anyio.create_task_group() as tg:
            await tg.start(incarnation.soul.run, incarnation.mailbox)
            yield incarnation
            tg.cancel_scope.cancel()


async def test_every_write_path_keeps_the_view_equal_to_the_table(tmp_path: Path) -> None:
    clock = FixedClock(T0)
    async with running(tmp_path, clock) as soul:
        soul.assert_view_is_the_table()

        # Ingest: extracted claims, then a rename that supersedes one.
        await soul.observe("My cat is called Tuanzi.", sender="bo", ref="a")
        soul.assert_view_is_the_table()
        clock.advance(DAY)
        await soul.observe("We renamed the cat Mochi.", sender="bo", ref="b")
        soul.assert_view_is_the_table()
        assert "bo pet name: Mochi" in await soul.context("the pet name")
        assert "pet name: Tuanzi" not in await soul.context("the pet name")

        # A tie is deferred (never injected), then settled by the value said again.
        at = T0 - 30 * DAY
        await soul.observe("I live in Lisbon.", sender="bo", ts=at, ref="c")
        await soul.observe("I live in Porto.", sender="bo", ts=at, ref="d")
        states = {
            c.value: c.state for c in soul.soul._require_knowledge().entries.view.claims.values()
        }
        assert states["Lisbon"] == states["Porto"] == "deferred"
        soul.assert_view_is_the_table()
        assert "location: Porto" not in await soul.context("where does bo live")
        await soul.observe("I live in Porto.", sender="bo", ts=at + DAY, ref="e")
        soul.assert_view_is_the_table()
        assert "bo location: Porto" in await soul.context("where does bo live")

        # An import, on behalf of an account linked later.
        events = [
            EventIn(text=t, kind="dm", channel="slack", sender="U1", ref=f"i{n}")
            for n, t in enumerate(["I love jazz.", "I promise to call Tom.", "I work at Stripe."])
        ]
        assert (await soul.ask(Import(events))).stored == 3
        soul.assert_view_is_the_table()

        # Stated entries: a slot claim, a free rule, a repeat, a low-confidence fact.
        await soul.ask(ClaimAdd(value="Tokyo", slot="location"))
        rule = (await soul.ask(ClaimAdd(value="always answer in French", kind="rule")))["claim"]
        await soul.ask(ClaimAdd(value="Tokyo", slot="location"))
        shaky = (await soul.ask(ClaimAdd(value="the boat is blue", confidence="low")))["claim"]
        soul.assert_view_is_the_table()
        assert "(needs verification)" in await soul.context("what colour is the boat")

        # Update, correct, retract.
        await soul.ask(ClaimChange("update", rule.id, "always answer in Spanish"))
        soul.assert_view_is_the_table()
        (stripe,) = [
            c for c in soul.soul._require_knowledge().entries.view.claims.values()
            if c.value == "Stripe"
        ]  # fmt: skip
        await soul.ask(ClaimChange("correct", stripe.id, "Square"))
        soul.assert_view_is_the_table()
        await soul.ask(ClaimChange("retract", shaky.id))
        soul.assert_view_is_the_table()
        assert "the boat is blue" not in await soul.context("what colour is the boat")
        assert "in French" not in await soul.context("which language to answer in")
        assert "in Spanish" in await soul.context("which language to answer in")

        # A person link renames the subject of the account's claims.
        await soul.ask(PersonLink(person="Ann", channel="slack", external="U1"))
        soul.assert_view_is_the_table()
        assert "Ann likes: jazz" in await soul.context("jazz")

        # A forget deletes the claims of the events it forgets.
        await soul.ask(Forget(match="Mochi"))
        soul.assert_view_is_the_table()
        assert "pet name: Mochi" not in await soul.context("the pet name")
        await soul.ask(Forget(match="jazz"))
        soul.assert_view_is_the_table()
        assert "likes: jazz" not in await soul.context("jazz")

        await soul.ask(Rebuild())
        soul.assert_view_is_the_table()
        # A context with no query rotates what it brings back (emergence: what one
        # context showed waits in the next), so a restarted soul is held to the context
        # this one gives from the same state, taken here: a copy of its files.
        snapshot = tmp_path / "snapshot"
        soul.copy_to(snapshot)
        warm = await soul.context("")
        assert "- [m1] My cat is called Tuanzi." in warm  # brought back: never shown

    async with running(tmp_path, clock) as soul:
        soul.assert_view_is_the_table()
    async with running(snapshot, clock) as cold:
        cold.assert_view_is_the_table()
        assert await cold.context("") == warm


async def test_a_write_that_fails_leaves_the_view_to_be_read_again(tmp_path: Path) -> None:
    async with running(tmp_path, FixedClock(T0)) as soul:
        knowledge = soul.soul._require_knowledge()
        await soul.ask(ClaimAdd(value="Tokyo", slot="location"))
        store = knowledge.entries._store
        committing = store.transaction

        @asynccontextmanager
        async def lost(*args: Any) -> AsyncIterator[Any]:
            async with committing(*args) as db:
                yield db
            raise OSError("the reply was lost")  # committed, but the writer never hears

        store.transaction = lost  # type: ignore[method-assign]
        with pytest.raises(OSError, match="reply was lost"):
            await knowledge.entries.state(ClaimAdd(value="Kyoto", slot="location"), T0 + 1)
        store.transaction = committing  # type: ignore[method-assign]
        assert not knowledge.entries.view.fresh
        # A write that does succeed afterwards cannot vouch for the one before it.
        await knowledge.entries.state(ClaimAdd(value="always be brief", kind="rule"), T0 + 2)
        assert not knowledge.entries.view.fresh

        context = await soul.context("where does the user live")
        assert "user location: Kyoto" in context
        assert "location: Tokyo" not in context
        soul.assert_view_is_the_table()


QUERIES = (
    None,
    "",
    "jazz",
    "where does bo live",
    "what about the kayak and the lake and the tea and the rent today",
    "promise",
    "zebra",
)


async def test_the_shortlist_assembles_the_contexts_every_entry_would(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = FixedClock(T0)
    seeded = tmp_path / "seeded"
    words = ["kayak", "lake", "garden", "tea", "rent", "jazz", "pottery", "yoga", "boxes"]
    async with running(seeded, clock) as soul:
        events = [
            EventIn(
                text=text,
                kind="dm",
                sender=f"p{n % 7}",
                ts=T0 - (n * 37 % 1500) * DAY / 3,
                ref=f"e{n}",
            )
            for n, text in enumerate(
                f"I love {words[n % 9]}." if n % 3 else f"I promise to fix the {words[n % 9]}."
                for n in range(240)
            )
        ]
        await soul.ask(Import(events))
        for n in range(120):
            clock.advance(DAY / 5)
            confidence = "low" if n % 11 == 0 else "high"
            await soul.ask(
                ClaimAdd(
                    value=f"{words[n % 9]} note {n} about {words[n * 5 % 9]}", confidence=confidence
                )
            )
    texts: dict[str, list[str]] = {}
    for name, ranked in (("shortlist", True), ("every entry", False)):
        copy = tmp_path / name
        shutil.copytree(seeded, copy)
        with monkeypatch.context() as patched:
            if not ranked:
                patched.setattr(Knowledge, "candidates", _every_entry(Knowledge.candidates))
            async with running(copy, clock) as soul:
                texts[name] = [await soul.context(query) for query in QUERIES]
    assert texts["shortlist"] == texts["every entry"]
    assert any("[c" in text for text in texts["shortlist"])


def _every_entry(candidates: Callable[..., Awaitable[list[Contender]]]) -> Any:
    """``Knowledge.candidates`` making every active entry a contender (no ranking)."""

    async def every_entry(
        knowledge: Knowledge, query: str, now: float, overdue: Any, ranking: Any = None
    ) -> list[Contender]:
        return await candidates(knowledge, query, now, overdue, None)

    return every_entry
