"""Memories read by id and page (souls/store/pages.py, souls/store/postgres/pages.py) on
both backends (the fixtures of tests/backends.py): ``memory.list``'s pages newest first
below a cursor and within a recall's scope, hidden memories included; one memory with
its event; what an event said of itself; the first memory of an event."""

from __future__ import annotations

from souls.results import MemoryItem
from souls.store.interface import SoulStore
from souls.store.pages import StoredEvent
from souls.store.scope import Scope
from souls.store.store import NewEvent
from souls.text.tokenize import fts_document

T0 = 1_780_000_000.0


def event(i: int, sender: str, session: str, *, kind: str = "message") -> NewEvent:
    text = f"note {i} from {sender}"
    return NewEvent(
        ref=f"r{i}", kind=kind, channel="chat", sender=sender, group="team", mentioned=i % 2 == 0,
        session=session, ts=T0 + i * 60, recorded=T0 + 1000, salience=0.5, text=text,
        doc=fts_document(text),
    )  # fmt: skip


async def stored(store: SoulStore) -> list[int]:
    events = [
        event(0, "ann", "s1"), event(1, "bob", "s1"), event(2, "ann", "s2"),
        event(3, "bob", "s2", kind="dm"), event(4, "ann", "s2"),
    ]  # fmt: skip
    return await store.append(events, now=T0 + 1000)


async def test_pages_go_newest_first_below_the_cursor(store: SoulStore) -> None:
    ids = await stored(store)
    first = await store.memory_page(None, None, 2)
    assert [m.id for m in first] == [ids[4], ids[3]]
    below = await store.memory_page(None, first[-1].id, 10)
    assert [m.id for m in below] == [ids[2], ids[1], ids[0]]
    assert await store.memory_page(None, ids[0], 10) == []
    # Hidden memories are listed too, saying so.
    await store.hide([ids[1]], now=T0 + 2000)
    listed = {m.id: m for m in await store.memory_page(None, None, 10)}
    assert listed[ids[1]].hidden_at == T0 + 2000
    assert listed[ids[0]].hidden_at is None


async def test_a_page_within_a_scope(store: SoulStore) -> None:
    ids = await stored(store)
    by_ann = await store.memory_page(Scope(sender="ann"), None, 10)
    assert [m.id for m in by_ann] == [ids[4], ids[2], ids[0]]
    in_s2 = await store.memory_page(Scope(session="s2", sender="ann"), ids[4], 10)
    assert [m.id for m in in_s2] == [ids[2]]
    assert [m.id for m in await store.memory_page(Scope(kind="dm"), None, 10)] == [ids[3]]
    window = Scope(since=T0 + 60, until=T0 + 180)
    assert [m.id for m in await store.memory_page(window, None, 10)] == [ids[2], ids[1]]
    assert await store.memory_page(Scope(sender="carol"), None, 10) == []


async def test_one_memory_and_its_event(store: SoulStore) -> None:
    ids = await stored(store)
    item = await store.memory_item(ids[3])
    assert item is not None
    assert item.event_id is not None
    assert item == MemoryItem(
        id=ids[3], kind="observation", text="note 3 from bob", salience=0.5,
        created=T0 + 1000, recalls=0, last_recalled=None, hidden_at=None,
        event_id=item.event_id, ref="r3", sender="bob", session="s2", channel="chat",
        ts=T0 + 180,
    )  # fmt: skip
    assert await store.memory_item(10_000) is None
    assert await store.stored_event(item.event_id) == StoredEvent(
        "dm", "chat", "bob", "team", False, "s2", T0 + 180
    )
    first = await store.memory_item(ids[0])
    assert first is not None
    assert first.event_id is not None
    said = await store.stored_event(first.event_id)
    assert said is not None
    assert said.mentioned is True
    assert await store.stored_event(10_000) is None
    assert await store.first_memory(item.event_id) == ids[3]
    assert await store.first_memory(10_000) is None
    # Forgotten: gone from every read.
    assert await store.forget([item.event_id]) == 1
    assert await store.memory_item(ids[3]) is None
    assert await store.stored_event(item.event_id) is None
    assert await store.first_memory(item.event_id) is None
    assert ids[3] not in [m.id for m in await store.memory_page(None, None, 10)]
