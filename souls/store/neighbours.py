"""Neighbouring turns: each memory is indexed with the turns around it as context.

A reply rarely repeats the question it answers ("What did you research?" / "Adoption
agencies"), so a memory's row in the full-text index carries, besides its own tokens
(``doc``), the tokens of the ``turns`` visible memories before it (``prior``) and after
it (``later``) in the same session; recall weighs those columns lower (see
:mod:`souls.store.bm25`). An event without a session belongs to no conversation: its memory
has no neighbours and is no one's neighbour.

Invariants a caller may rely on:

- A row's ``prior`` and ``later`` are the space-joined documents of its nearest visible
  neighbours in its session, by event order, nearest first, at most ``turns`` each side.
- ``later`` is the only column ever rewritten when memories arrive: appending to a
  session rewrites the ``later`` of its last ``turns`` rows.
- After memories are deleted (forget), :func:`refresh` rewrites the rows within
  ``MAX_TURNS`` of them, so no row keeps a forgotten memory's tokens as context (a
  window is never wider than ``MAX_TURNS``, whatever it was when a row was written).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import aiosqlite

__all__ = ["MAX_TURNS", "Row", "lay_out", "places", "refresh", "tails"]

# The widest window a soul may index (each side).
MAX_TURNS = 5

_LAST = """
    SELECT f.rowid, f.doc, f.prior, f.later
    FROM (SELECT m.id FROM events AS e JOIN memories AS m ON m.event_id = e.id
          WHERE e.session IS ? AND m.hidden_at IS NULL
          ORDER BY e.id DESC LIMIT ?) AS t
    JOIN memory_fts AS f ON f.rowid = t.id
    ORDER BY f.rowid
"""
_SIDE = """
    SELECT m.id, f.doc FROM events AS e
    JOIN memories AS m ON m.event_id = e.id
    JOIN memory_fts AS f ON f.rowid = m.id
    WHERE e.session IS ? AND e.id {op} ? AND m.hidden_at IS NULL
    ORDER BY e.id {order} LIMIT ?
"""


@dataclass(frozen=True, slots=True)
class Row:
    """A memory's row in the full-text index."""

    memory_id: int
    doc: str
    prior: str = ""
    later: str = ""

    def tokens(self) -> list[str]:
        """Every token of the row, as the index statistics count them."""
        return f"{self.doc} {self.prior} {self.later}".split()


async def tails(
    db: aiosqlite.Connection, sessions: Iterable[str | None], turns: int
) -> dict[str | None, list[Row]]:
    """The last ``turns`` visible rows of each session, oldest first."""
    found: dict[str | None, list[Row]] = {}
    for session in dict.fromkeys(sessions):
        if session is not None and turns:
            found[session] = [
                Row(*row) for row in await db.execute_fetchall(_LAST, (session, turns))
            ]
    return found


def lay_out(
    new: Sequence[tuple[int, str | None, str]],
    last: dict[str | None, list[Row]],
    turns: int,
) -> tuple[list[Row], list[tuple[Row, Row]]]:
    """Rows for the new memories (id, session, doc), in order, and the existing rows
    whose ``later`` changes, as (old, new) pairs. ``last``: :func:`tails` of their
    sessions."""
    streams: dict[str, list[tuple[int, str]]] = defaultdict(list)
    rows: dict[int, Row] = {}
    for memory_id, session, doc in new:
        if session is None or not turns:
            rows[memory_id] = Row(memory_id, doc)
        else:
            streams[session].append((memory_id, doc))
    rewritten: list[tuple[Row, Row]] = []
    for session, stream in streams.items():
        before = last.get(session, [])
        docs = [row.doc for row in before] + [doc for _, doc in stream]
        for offset, old in enumerate(before):
            later = _join(docs[offset + 1 : offset + 1 + turns])
            if later != old.later:
                rewritten.append((old, Row(old.memory_id, old.doc, old.prior, later)))
        for index, (memory_id, doc) in enumerate(stream, start=len(before)):
            prior = _join(reversed(docs[max(index - turns, 0) : index]))
            later = _join(docs[index + 1 : index + 1 + turns])
            rows[memory_id] = Row(memory_id, doc, prior, later)
    return [rows[memory_id] for memory_id, _, _ in new], rewritten


async def places(
    db: aiosqlite.Connection, memory_ids: Sequence[int]
) -> list[tuple[str | None, int]]:
    """Where the memories sit: (session, event id). Read before deleting them."""
    found: list[tuple[str | None, int]] = []
    for start in range(0, len(memory_ids), 500):
        chunk = memory_ids[start : start + 500]
        marks = ",".join("?" * len(chunk))
        sql = (
            "SELECT e.session, e.id FROM memories AS m JOIN events AS e ON e.id = m.event_id"
            f" WHERE m.id IN ({marks})"
        )
        found += [
            (session, event_id) for session, event_id in await db.execute_fetchall(sql, chunk)
        ]
    return found


async def refresh(
    db: aiosqlite.Connection, where: Sequence[tuple[str | None, int]], turns: int
) -> list[tuple[Row, Row]]:
    """Rewrite, with windows of ``turns``, the context of the visible rows within
    ``MAX_TURNS`` of each place (see :func:`places`) once the memories there are gone;
    the rewritten rows as (old, new)."""
    around: dict[int, tuple[str | None, int]] = {}
    for session, event_id in where:
        if session is None:
            continue
        for op, order in (("<", "DESC"), (">", "ASC")):
            sql = _SIDE.format(op=op, order=order)
            for memory_id, _ in await db.execute_fetchall(sql, (session, event_id, MAX_TURNS)):
                around.setdefault(memory_id, (session, event_id))
    rewritten: list[tuple[Row, Row]] = []
    for memory_id in sorted(around):
        old = await _row(db, memory_id)
        session, event_id = await _place(db, memory_id)
        prior = await _side(db, session, event_id, "<", "DESC", turns)
        later = await _side(db, session, event_id, ">", "ASC", turns)
        new = Row(memory_id, old.doc, prior, later)
        if new != old:
            await db.execute(
                "UPDATE memory_fts SET prior = ?, later = ? WHERE rowid = ?",
                (prior, later, memory_id),
            )
            rewritten.append((old, new))
    return rewritten


async def _row(db: aiosqlite.Connection, memory_id: int) -> Row:
    sql = "SELECT rowid, doc, prior, later FROM memory_fts WHERE rowid = ?"
    ((rowid, doc, prior, later),) = await db.execute_fetchall(sql, (memory_id,))
    return Row(rowid, doc, prior, later)


async def _place(db: aiosqlite.Connection, memory_id: int) -> tuple[str | None, int]:
    sql = (
        "SELECT e.session, e.id FROM memories AS m JOIN events AS e ON e.id = m.event_id"
        " WHERE m.id = ?"
    )
    ((session, event_id),) = await db.execute_fetchall(sql, (memory_id,))
    return session, event_id


async def _side(
    db: aiosqlite.Connection, session: str | None, event_id: int, op: str, order: str, turns: int
) -> str:
    sql = _SIDE.format(op=op, order=order)
    return _join(doc for _, doc in await db.execute_fetchall(sql, (session, event_id, turns)))


def _join(docs: Iterable[str]) -> str:
    return " ".join(doc for doc in docs if doc)
