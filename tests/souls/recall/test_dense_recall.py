"""Hybrid recall (#18.3): with ``[embedding]`` on, the similarity of a memory's vector to
the query's joins its relevance as one more explained part and brings what the query's
words cannot find; without vectors (provider none, or a provider that fails) recall is
exactly the lexical one. A real soul actor on a real SQLite file, its embedder the fake
OpenAI-compatible server on loopback (:mod:`fake_embedder`)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import msgspec
from conftest import MAILBOX_HYGIENE
from fake_embedder import Behaviour, fake_embedder

from souls.actor.clock import FixedClock
from souls.actor.mailbox import Mailbox
from souls.actor.soul import Soul
from souls.config import SoulConfig
from souls.events import EventIn
from souls.messages import Message, Observe, Recall, Stats
from souls.results import PushResult, RecallItem, RecallResult, SoulStats

pytestmark = MAILBOX_HYGIENE

T0 = 1_780_000_000.0
FILLER = [
    "good morning! what's the weather like today",
    "remind me to buy milk on the way home",
    "ugh, the train was late again",
    "can you summarise this article for me",
    "set a timer for 20 minutes",
    "the neighbours are loud tonight",
    "I need a gift idea for my colleague",
    "my laptop is so slow today",
    "is it going to rain this weekend",
    "what's a good recipe with leftover rice",
]
PUPPY = "We finally got a puppy last week, a little beagle called Biscuit!"
MOVE = "Big news: Lena relocated to Leipzig in March for the new job."


class Running:
    def __init__(self, root: Path, config: SoulConfig) -> None:
        clock = FixedClock(T0 + 86_400)
        self.soul = Soul(
            "alpha", config, db_path=root / "soul.db", brain_dir=root / "b", clock=clock
        )
        self.mailbox: Mailbox[Message] = Mailbox("alpha", 64)

    async def ask(self, message: Message) -> Any:
        return await self.mailbox.ask(message, timeout=10)

    async def say(self, text: str, at: float) -> None:
        result = await self.ask(Observe(EventIn(text=text, ts=at, kind="dm", sender="maya")))
        assert isinstance(result, PushResult)
        assert result.status == "stored", result

    async def recall(self, query: str, k: int = 5, explain: bool = False) -> list[RecallItem]:
        result = await self.ask(Recall(query, k, explain))
        assert isinstance(result, RecallResult)
        return [item for item in result.items if item.via != "goal"]

    async def embedding(self) -> dict[str, object]:
        stats = await self.ask(Stats())
        assert isinstance(stats, SoulStats)
        return stats.embedding

    async def until(self, key: str, n: int) -> None:
        """Wait (10 s at most) for the embedding figure ``key`` to reach ``n``."""
        for _ in range(500):
            if int(str((await self.embedding()).get(key, 0))) >= n:
                return
            await anyio.sleep(0.02)
        raise AssertionError(f"embedding {key} never reached {n}: {await self.embedding()}")


@asynccontextmanager
async def running(root: Path, embedding: dict[str, object] | None = None) -> AsyncIterator[Running]:
    table = {"embedding": embedding} if embedding else {}
    soul = Running(root, msgspec.convert(table, SoulConfig))
    with anyio.fail_after(60):
        async with anyio.create_task_group() as tg:
            await tg.start(soul.soul.run, soul.mailbox)
            yield soul
            tg.cancel_scope.cancel()


def _openai(url: str, **more: object) -> dict[str, object]:
    return {"provider": "openai", "base_url": url, "model": "fake", "timeout": 5, **more}


async def _told(soul: Running) -> None:
    for n, text in enumerate([*FILLER[:5], PUPPY, *FILLER[5:], MOVE]):
        await soul.say(text, T0 + n * 600)


QUERIES = [
    "what kind of dog do they have?",
    "which city does Lena live in now?",
    "the train was late",
    "remind me about milk",
    "weather this weekend",
]


async def test_a_paraphrase_is_found_only_with_embeddings(tmp_path: Path) -> None:
    async with running(tmp_path / "plain") as plain:
        await _told(plain)
        lexical = await plain.recall("what kind of dog do they have?")
    with fake_embedder() as (url, _):
        async with running(tmp_path / "dense", _openai(url)) as soul:
            await _told(soul)
            await soul.until("embedded", 12)
            found = await soul.recall("what kind of dog do they have?", explain=True)
            moved = await soul.recall("which city does Lena live in now?", explain=True)
    # Not one word of the query is in the memory: lexically it is not there at all.
    assert PUPPY not in [item.text for item in lexical]
    first = found[0]
    assert (first.text, first.via) == (PUPPY, "dense")
    assert 0 < first.relevance <= 1
    assert first.explain is not None
    assert first.explain.dense is not None
    assert first.explain.dense > 0.3
    assert first.explain.lexical == 0
    assert "semantic" in first.explain.reasons[0]
    assert any("embedding alone" in reason for reason in first.explain.reasons)
    # Lexical and semantic together: "Lena" is in the memory, "city"/"live" are near
    # "relocated"; it ranks first, above any lexical-only match, and says both parts.
    top = moved[0]
    assert top.text == MOVE
    assert top.via == "bm25"
    assert top.explain is not None
    assert top.explain.lexical > 0
    assert top.explain.dense is not None
    assert top.relevance > top.explain.lexical


async def test_without_vectors_recall_is_exactly_the_lexical_one(tmp_path: Path) -> None:
    async with running(tmp_path / "plain") as plain:
        await _told(plain)
        expected = [await plain.recall(q, explain=True) for q in QUERIES]
    # A provider that fails from the start: nothing is embedded, pushes are stored, and
    # every recall is byte for byte what the soul without embeddings answers.
    with fake_embedder(Behaviour(status=500)) as (url, _):
        async with running(tmp_path / "failing", _openai(url, retry_after=60)) as soul:
            await _told(soul)
            await soul.until("failures", 1)
            got = [await soul.recall(q, explain=True) for q in QUERIES]
            figures = await soul.embedding()
    assert msgspec.json.encode(got) == msgspec.json.encode(expected)
    assert figures["state"] == "failing"
    assert figures["vectors"] == 0


async def test_a_provider_failing_at_query_time_leaves_recall_lexical(tmp_path: Path) -> None:
    with fake_embedder() as (url, behaviour):
        async with running(tmp_path, _openai(url, retry_after=60)) as soul:
            await _told(soul)
            await soul.until("embedded", 12)
            behaviour.garbage = True
            asked = len(behaviour.requests)
            found = await soul.recall("the train was late", explain=True)
            again = await soul.recall("the train was late")
            figures = await soul.embedding()
    assert found[0].text == "ugh, the train was late again"
    assert found[0].explain is not None
    assert found[0].explain.dense is None  # lexical only: the query had no vector
    assert [i.text for i in again] == [i.text for i in found]
    assert figures["state"] == "failing"
    assert figures["queries_lexical"] == 2  # the second did not wait for the provider
    assert len(behaviour.requests) == asked + 1  # one query: no second try within 60 s
