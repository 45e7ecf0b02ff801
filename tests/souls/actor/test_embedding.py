"""The embedder beside a soul's turns (souls/actor/embedding.py), driven by hand: its
backlog is bounded by count and bytes, what finds it full is caught up from the
database once it empties, and a vector is written only for a memory still there."""

from __future__ import annotations

from array import array
from collections.abc import Sequence
from pathlib import Path

import anyio
import msgspec
from conftest import MAILBOX_HYGIENE

from souls.actor.embedding import Embedding
from souls.actor.mailbox import Mailbox
from souls.embed.config import EmbeddingConfig
from souls.embed.vectors import unit
from souls.messages import Embedded, Message, Ping
from souls.store.store import NewEvent, Store

pytestmark = MAILBOX_HYGIENE

CONFIG = msgspec.convert(
    {"provider": "openai", "base_url": "http://127.0.0.1:9/v1", "model": "m", "backlog": 2},
    EmbeddingConfig,
)


class _Counting:
    """An embedder that sees what it is asked: a vector of each text's length."""

    name = "counting"

    def __init__(self) -> None:
        self.asked: list[list[str]] = []

    async def embed(self, texts: Sequence[str], *, seconds: float) -> list[array[float]]:
        self.asked.append(list(texts))
        out = []
        for text in texts:
            vector = unit([float(len(text)), 1.0, 0.0])
            assert vector is not None
            out.append(vector)
        return out

    async def aclose(self) -> None:
        pass


def _event(text: str) -> NewEvent:
    return NewEvent(None, "dm", None, "ana", None, False, None, 1.0, 1.0, 0.5, text, text)


async def test_a_full_backlog_defers_to_the_database_and_is_caught_up(tmp_path: Path) -> None:
    store = await Store.open(tmp_path / "soul.db")
    mailbox: Mailbox[Message] = Mailbox("alpha", 16)
    provider = _Counting()
    embedding = Embedding(CONFIG, store=store, mailbox=mailbox, provider=provider)
    try:
        events = [_event(f"memory number {n}") for n in range(5)]
        ids = await store.append(events)
        embedding.offer(ids, events)
        figures = embedding.statistics()
        assert (figures["backlog"], figures["deferred"]) == (2, 3)
        await store.db.execute("DELETE FROM memory_fts WHERE rowid = 2")
        await store.db.execute("DELETE FROM memories WHERE id = 2")  # forgotten meanwhile
        with anyio.fail_after(10):
            async with embedding.running():
                while embedding.statistics()["vectors"] != 4:
                    (envelope,) = await mailbox.receive_batch(1)
                    assert isinstance(envelope.message, Embedded)
                    await embedding.apply()
        rows = await store.db.execute_fetchall(
            "SELECT memory_id, model, length(vector) FROM memory_vectors ORDER BY memory_id"
        )
        figures = embedding.statistics()
        # rebuild: every vector dropped, then made again behind the soul's turns.
        assert await embedding.rebuild() == 4
        assert embedding.statistics()["vectors"] == 0
        with anyio.fail_after(10):
            async with embedding.running():
                while embedding.statistics()["vectors"] != 4:
                    await mailbox.receive_batch(1)
                    await embedding.apply()
        again = await store.db.execute_fetchall("SELECT memory_id FROM memory_vectors")
    finally:
        await store.close()
    assert [tuple(r) for r in rows] == [(m, "openai:m", 12) for m in (1, 3, 4, 5)]
    assert figures["gone"] == 1
    assert sorted(m for (m,) in again) == [1, 3, 4, 5]
    assert figures["backlog"] == 0
    # Each memory asked about once (the forgotten one too: it left after it was queued),
    # as its sender said it, whether offered by ingest or caught up from the database,
    # and no batch larger than the backlog.
    first = [t for batch in provider.asked[:3] for t in batch]
    assert sorted(first) == sorted(f"ana: {e.text}" for e in events)
    assert max(len(batch) for batch in provider.asked) <= 2


async def test_the_embedder_lets_the_souls_requests_go_first(tmp_path: Path) -> None:
    # While the soul's mailbox holds a request, no batch goes to the provider (up to a
    # second); once the soul has taken it, embedding goes on.
    store = await Store.open(tmp_path / "soul.db")
    mailbox: Mailbox[Message] = Mailbox("alpha", 16)
    provider = _Counting()
    embedding = Embedding(CONFIG, store=store, mailbox=mailbox, provider=provider)
    try:
        events = [_event("the one memory")]
        embedding.offer(await store.append(events), events)
        await mailbox.tell(Ping())
        with anyio.fail_after(10):
            async with embedding.running():
                await anyio.sleep(0.3)
                assert provider.asked == []  # the request waits in the mailbox
                (envelope,) = await mailbox.receive_batch(1)
                assert isinstance(envelope.message, Ping)
                (envelope,) = await mailbox.receive_batch(1)
                assert isinstance(envelope.message, Embedded)
                await embedding.apply()
        assert provider.asked == [["ana: the one memory"]]
        assert embedding.statistics()["yielded"] == 1
    finally:
        await store.close()
