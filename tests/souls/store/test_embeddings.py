"""The semantic layer's vectors (souls/store/embeddings.py,
souls/store/postgres/embeddings.py) on both backends (the fixtures of
tests/backends.py): written under their memories (an event's observation found by the
event), one per memory, read back by model for the visible memories only, the memories
still without one listed for the catch-up, and gone with their memory (forget) or all
at once (rebuild)."""

from __future__ import annotations

from array import array

from souls.embed.vectors import pack, unpack
from souls.store.interface import SoulStore
from souls.store.store import NewEvent
from souls.text.tokenize import fts_document

T0 = 1_780_000_000.0


def event(i: int) -> NewEvent:
    text = f"note {i}"
    return NewEvent(
        ref=f"r{i}", kind="message", channel="chat", sender="ann" if i % 2 else None,
        group=None, mentioned=False, session=None, ts=T0 + i, recorded=T0 + i, salience=0.5,
        text=text, doc=fts_document(text),
    )  # fmt: skip


def vector(*values: float) -> bytes:
    return pack(array("f", values))


async def test_vectors_are_written_read_and_caught_up(store: SoulStore) -> None:
    event_ids = await store.append([event(i) for i in range(4)], now=T0 + 10)
    memory_of = await store.observation_memories([*event_ids, 999])
    assert sorted(memory_of) == sorted(event_ids)
    m = [memory_of[e] for e in event_ids]
    assert await store.unembedded("mini", 0, 10) == [
        (m[0], "note 0", None), (m[1], "note 1", "ann"), (m[2], "note 2", None),
        (m[3], "note 3", "ann"),
    ]  # fmt: skip
    # A memory that is not stored (999) is not written.
    written = await store.write_vectors(
        "mini", [(m[0], vector(1, 0)), (m[1], vector(0, 1)), (999, vector(1, 1))]
    )
    assert written == {m[0], m[1]}
    assert [(i, list(unpack(b))) for i, b in await store.vectors("mini")] == [
        (m[0], [1.0, 0.0]), (m[1], [0.0, 1.0])
    ]  # fmt: skip
    assert await store.vectors("other") == []
    assert [row[0] for row in await store.unembedded("mini", 0, 10)] == [m[2], m[3]]
    assert [row[0] for row in await store.unembedded("mini", m[2], 10)] == [m[3]]
    assert [row[0] for row in await store.unembedded("mini", 0, 1)] == [m[2]]
    # Another model's vector replaces the memory's; the same memory twice: the last.
    await store.write_vectors("other", [(m[0], vector(0.5, 0.5)), (m[0], vector(0.6, 0.8))])
    assert [(i, list(unpack(b))) for i, b in await store.vectors("other")] == [
        (m[0], [0.6000000238418579, 0.800000011920929])
    ]  # fmt: skip
    assert [row[0] for row in await store.vectors("mini")] == [m[1]]
    assert m[0] in [row[0] for row in await store.unembedded("mini", 0, 10)]
    assert await store.vector_ids() == {m[0], m[1]}


async def test_vectors_go_with_their_memories(store: SoulStore) -> None:
    event_ids = await store.append([event(i) for i in range(3)], now=T0 + 10)
    memory_of = await store.observation_memories(event_ids)
    m = [memory_of[e] for e in event_ids]
    await store.write_vectors("mini", [(i, vector(1, 0)) for i in m])
    # Hidden: not read back, not to be caught up either, still stored.
    assert await store.hide([m[1]], now=T0 + 20) == 1
    assert [row[0] for row in await store.vectors("mini")] == [m[0], m[2]]
    assert await store.unembedded("mini", 0, 10) == []
    assert await store.vector_ids() == set(m)
    # Forgotten: the vector goes in the same transaction.
    assert await store.forget([event_ids[0]]) == 1
    assert await store.vector_ids() == {m[1], m[2]}
    assert await store.write_vectors("mini", [(m[0], vector(0, 1))]) == set()
    assert await store.vector_ids() == {m[1], m[2]}
    # Rebuild drops them all.
    assert await store.drop_vectors() == 2
    assert await store.vector_ids() == set()
    assert [row[0] for row in await store.unembedded("mini", 0, 10)] == [m[2]]
