"""Memories by id: list (a cursor and recall's filters), get, and what a correction is.

Every memory is the memory of one event (``memories.event_id``), so a memory's id names
that event too. Reads only here; the soul (souls/actor/soul.py) carries out an update
and a delete with its forget and write paths:

* ``delete`` forgets the memory's event exactly as ``forget`` by ref does (every derived
  table: index, edges, vectors, claims, questions, goals, summaries citing it, cards,
  logs quoting it; no byte of it left in the database file or its WAL).
* ``update`` is forget + push of the corrected text. The corrected event keeps what the
  old one said of itself (ref, kind, channel, sender, group, session, time): it is the
  same utterance, said right. Its new memory gets a new id (ids are never reused) and
  the reply names both. The old text is not kept as a superseded row: a correction
  usually means the old text was wrong (a typo'd date, a misheard name), and a kept row
  would stay in every derived table forget already reaches — claims read from it,
  goals said in it, summaries citing it — each needing a superseded state of its own.
  Forgetting it reaches all of them at once, and the corrected text is derived afresh
  (claims, entries, index) as any push is. Its ref is kept, so the old message pushed
  again (same ref) is a duplicate and cannot come back.
* The corrected text passes the gates first (hygiene, credentials, attention): one they
  refuse, or would drop as below attention, changes nothing.

Pages go newest first: ``cursor`` is the id of the last memory of the previous page,
and the next page holds the memories below it.
"""

from __future__ import annotations

import msgspec

from souls.actor.rights import ForgetResult
from souls.results import MemoryItem, MemoryPage
from souls.store.interface import SoulStore
from souls.store.store import Scope
from supervisor.errors import InvalidParams, NotFound

__all__ = ["MAX_PAGE", "MemoryUpdated", "event_of", "memory_item", "memory_page", "parse_cursor"]

# Most memories one page holds.
MAX_PAGE = 1000


class MemoryUpdated(msgspec.Struct, frozen=True):
    """What ``memory.update`` did: the corrected text's memory (``id``) and event, the
    memory it replaced, and what forgetting that one removed."""

    id: int
    event_id: int
    replaced: int
    forgot: ForgetResult


def parse_cursor(cursor: str | None) -> int | None:
    """The memory id a cursor stands for; InvalidParams for one never handed out."""
    if cursor is None:
        return None
    text = cursor.strip()
    if not text.isdigit() or len(text) > 18:
        raise InvalidParams(
            f"memory.list: cursor {cursor!r} is not one this daemon handed out; pass a "
            "page's next_cursor as it came"
        )
    return int(text)


async def memory_page(store: SoulStore, scope: Scope, cursor: int | None, limit: int) -> MemoryPage:
    """Up to ``limit`` memories in ``scope`` with an id below ``cursor``, newest first."""
    items = await store.memory_page(scope, cursor, limit + 1)
    following = str(items[limit - 1].id) if len(items) > limit else None
    return MemoryPage(items[:limit], following)


async def memory_item(store: SoulStore, memory_id: int) -> MemoryItem:
    """Memory ``memory_id``; NotFound when the soul has none of that id."""
    item = await store.memory_item(memory_id)
    if item is None:
        raise NotFound(
            f"no memory {memory_id} in this soul (forgotten, or never stored); list them "
            "with `soupd memories SOUL`"
        )
    return item


async def event_of(store: SoulStore, memory_id: int) -> int:
    """The event memory ``memory_id`` is the memory of (NotFound as memory_item)."""
    item = await memory_item(store, memory_id)
    if item.event_id is None:
        raise InvalidParams(f"memory {memory_id} has no event of its own to forget or correct")
    return item.event_id
