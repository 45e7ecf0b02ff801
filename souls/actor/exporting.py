"""A soul's export (DESIGN §3.12) on either backend: pages of JSON-ready records, one per
row of each table of :data:`souls.store.export.EXPORT_TABLES` in turn, read through the
store interface (``SoulStore.export_rows``). An export's ``event`` records import back
as events; a soul exported from one backend reads the same as from the other."""

from __future__ import annotations

from typing import Any

from souls.store.export import EXPORT_TABLES
from souls.store.interface import SoulStore

__all__ = ["PAGE", "export_page"]

# Records a page holds at most.
PAGE = 1000


async def export_page(
    store: SoulStore, cursor: str | None, page: int = PAGE
) -> tuple[list[dict[str, Any]], str | None]:
    """Up to ``page`` records from ``cursor`` on, and the cursor of the next page (None
    after the last). The cursor is ``<table index>:<rows of it done>``; ValueError for
    one this module did not make."""
    table, done = _parse_cursor(cursor)
    records: list[dict[str, Any]] = []
    while table < len(EXPORT_TABLES) and len(records) < page:
        kind, _, columns, _ = EXPORT_TABLES[table]
        room = page - len(records)
        rows = await store.export_rows(table, done, room)
        names = [c.strip() for c in columns.split(",")]
        for values in rows:
            record = dict(zip(names, values, strict=True))
            if kind == "event":
                record["group"] = record.pop("grp")
                record["mentioned"] = bool(record["mentioned"])
            elif kind == "claim":
                # "type" names the record; the claim's own (fact, rule...) is its kind.
                record["kind"] = record.pop("type")
            records.append({"type": kind, **record})
        done += len(rows)
        if len(rows) < room:
            table, done = table + 1, 0
    finished = table >= len(EXPORT_TABLES)
    return records, None if finished else f"{table}:{done}"


def _parse_cursor(cursor: str | None) -> tuple[int, int]:
    if not cursor:
        return 0, 0
    kind, _, after = cursor.partition(":")
    if not (kind.isdigit() and after.isdigit()):
        raise ValueError(f"cursor {cursor!r} is not one this daemon handed out")
    return int(kind), int(after)
