"""The @due wake-ups' rows (souls/store/due.py, souls/store/postgres/due.py) on both
backends (the fixtures of tests/backends.py): TASKS.md's pending tasks recorded and
reconciled, ``fired`` of a turn's Changes marking one fired once, with its turn."""

from __future__ import annotations

import sqlite3
from collections.abc import Awaitable, Callable

import asyncpg
import pytest

from souls.results import DueTask
from souls.store.changes import Changes
from souls.store.interface import SoulStore
from souls.store.store import NewEvent
from souls.text.tokenize import fts_document

T0 = 1_780_000_000.0

Opener = Callable[[], Awaitable[SoulStore]]


def task(key: str, due: float, line: int, text: str | None = None) -> DueTask:
    return DueTask(key, due, text or f"task {key}", line)


def event(text: str, ref: str | None = None) -> NewEvent:
    return NewEvent(
        ref=ref, kind="wake", channel=None, sender="soupd", group=None, mentioned=False,
        session=None, ts=T0, recorded=T0, salience=0.5, text=text, doc=fts_document(text),
    )  # fmt: skip


async def test_pending_tasks_are_recorded_and_reconciled(store: SoulStore, opener: Opener) -> None:
    await store.record_due([task("b", T0 + 60, 2), task("a", T0 + 60, 1), task("c", T0, 3)])
    # The soonest first, then by key.
    assert [t.key for t in await store.pending_due()] == ["c", "a", "b"]
    # Re-read: a's line and text changed, c is no longer pending (checked, deleted).
    await store.record_due([task("a", T0 + 60, 5, "moved"), task("b", T0 + 60, 2)])
    assert await store.pending_due() == [
        DueTask("a", T0 + 60, "moved", 5), DueTask("b", T0 + 60, "task b", 2)
    ]  # fmt: skip
    assert await store.due_task("a") == DueTask("a", T0 + 60, "moved", 5)
    assert await store.due_task("c") is None
    # Kept across a reopen.
    again = await opener()
    assert [t.key for t in await again.pending_due()] == ["a", "b"]
    await store.record_due([])
    assert await store.pending_due() == []
    assert await store.fired_due(5) == []


async def test_a_task_fires_once_with_its_turn(store: SoulStore) -> None:
    await store.record_due([task("a", T0, 1), task("b", T0 + 1, 2), task("c", T0 + 2, 3)])
    await store.append([event("wake: a")], Changes(fired={"a": T0 + 10}), now=T0 + 10)
    await store.flush(Changes(fired={"b": T0 + 20}), now=T0 + 20)
    assert await store.due_task("a") is None
    assert [t.key for t in await store.pending_due()] == ["c"]
    # The latest first; firing again never moves its time.
    await store.flush(Changes(fired={"a": T0 + 30}), now=T0 + 30)
    assert await store.fired_due(5) == [
        DueTask("b", T0 + 1, "task b", 2, T0 + 20), DueTask("a", T0, "task a", 1, T0 + 10)
    ]  # fmt: skip
    assert await store.fired_due(1) == [DueTask("b", T0 + 1, "task b", 2, T0 + 20)]
    # A fired task stays fired when the file is read again, still pending there.
    await store.record_due([task("a", T0, 1), task("c", T0 + 2, 3)])
    assert [t.key for t in await store.pending_due()] == ["c"]
    assert [t.key for t in await store.fired_due(5)] == ["b", "a"]
    # A turn whose write fails marks nothing fired.
    await store.append([event("one", "r-1")])
    with pytest.raises((sqlite3.IntegrityError, asyncpg.UniqueViolationError)):
        await store.append([event("again", "r-1")], Changes(fired={"c": T0 + 40}), now=T0 + 40)
    assert await store.due_task("c") == task("c", T0 + 2, 3)
