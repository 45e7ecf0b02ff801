# ruff: noqa: RUF001  (full-width punctuation and the multiplication sign are the point)
"""A reflect's work in worker processes: the summary's citations and world model made
there are the loop's, and a reflect cancelled while a worker runs changes nothing."""

from __future__ import annotations

import copy
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest

import souls.actor.cognition
import souls.mind.reflect
from souls.actor.brain import Brain
from souls.actor.cognition import Mind, _digest
from souls.config import SoulConfig
from souls.mind.reflect import REFLECT_OFFLOAD_CHARS
from souls.store.changes import Changes
from souls.store.store import NewEvent, Store
from souls.text.tokenize import fts_document
from supervisor.pace import in_worker

SAID = [
    "ok so um, the standup is at 9:30 tmrw? no wait, {n}, Mia moved it",
    "deploy {n} failed: database migration timeout on db-4, rolling back",
    "那个, 周三的发布要不改到周五? 嗯……其实还是周三吧, 测试还没跑完 {n}",
    "线上报警了！支付服务 {n} 次超时，李雷 在查",
    "can we revisit the cache ttl? {n}s felt fine but Priya saw stale prices",
    "他们明天来吗 第{n}次问了",
    "lol ok",
]


def event(i: int) -> NewEvent:
    # A digit-free word of its own: digits alone would make the texts near-duplicates.
    text = SAID[i % len(SAID)].format(n=i) + " re " + "".join("abcdefghij"[int(d)] for d in str(i))
    return NewEvent(
        ref=f"r{i}", kind="message", channel="chat", sender="ana", group=None,
        mentioned=False, session=None, ts=1_780_000_000.0 + i, recorded=1_780_000_000.0 + i,
        salience=0.5, text=text, doc=fts_document(text), surprise=0.5,
    )  # fmt: skip


@asynccontextmanager
async def mind(root: Path, events: int) -> AsyncIterator[Mind]:
    store = await Store.open(root / "soul.db")
    try:
        brain = Brain(root / "brain")
        await brain.ensure()
        made = Mind("ada", SoulConfig(), store, brain, lambda *_: None)
        await store.append([event(i) for i in range(events)])
        await made.load()
        yield made
    finally:
        await store.close()


async def test_a_summarys_digest_from_a_worker_is_the_loops(tmp_path: Path) -> None:
    async with mind(tmp_path, 200) as ada:
        await ada.reflect("manual", Changes())
        text = ada.summary.text
    assert len(text) >= REFLECT_OFFLOAD_CHARS
    assert "[m" in text
    citations, world = _digest(text)
    assert citations.lines
    assert world.vocabulary
    far_citations, far_world = await in_worker(_digest, text)
    assert far_citations.lines == citations.lines
    assert far_world.vocabulary == world.vocabulary


async def test_a_reflect_digests_its_summary_as_the_loop_would(tmp_path: Path) -> None:
    async with mind(tmp_path, 200) as ada:
        await ada.reflect("manual", Changes())
        citations, world = _digest(ada.summary.text)
        assert ada.summary.citations is not None
        assert ada.summary.citations.lines == citations.lines
        assert ada.world.vocabulary == world.vocabulary


def stop_in_worker(
    monkeypatch: pytest.MonkeyPatch, module: object, scope: anyio.CancelScope
) -> list[str]:
    """Cancel ``scope`` as soon as ``module`` hands work to a worker process (the
    work is sent, and the cancellation reaches the reflect while it waits)."""
    sent: list[str] = []

    async def cancelling(func: Callable[..., Any], *args: Any) -> Any:
        sent.append(func.__name__)
        scope.cancel()
        return await in_worker(func, *args)

    monkeypatch.setattr(module, "in_worker", cancelling)
    return sent


@pytest.mark.parametrize("where", [souls.mind.reflect, souls.actor.cognition])
async def test_a_reflect_cancelled_in_a_worker_changes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: object
) -> None:
    async with mind(tmp_path, 200) as ada:
        await ada.reflect("manual", Changes())
        await ada._store.append([event(i) for i in range(200, 260)])
        before = (ada.summary.text, ada.summary.citations, ada.world, copy.deepcopy(ada.clock))
        changes = Changes()
        with anyio.CancelScope() as scope:
            sent = stop_in_worker(monkeypatch, where, scope)
            await ada.reflect("manual", changes)
        assert scope.cancelled_caught
        assert sent
        assert (ada.summary.text, ada.summary.citations, ada.world, ada.clock) == before
        assert not changes
        assert (tmp_path / "brain" / "MEMORY.md").read_text() == before[0]
        monkeypatch.undo()
        result = await ada.reflect("manual", changes)  # and the next reflect works
        assert result.observations == 60
        assert changes
