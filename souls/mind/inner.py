"""The soul's inner state on disk: summaries, edges, markers, gaps, decay.

Reads for the cognitive loop, on the connection of the soul's :class:`Store` (writes go
through :class:`souls.store.changes.Changes`, except the nightly :meth:`InnerStore.decay`,
which is its own transaction). Nothing here decides anything; the numbers come in.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import aiosqlite

from souls.mind.reflect import Observation
from souls.results import DecayResult
from souls.store.fading import Fading
from souls.store.store import Store

__all__ = ["InnerStore", "Summary"]


@dataclass(frozen=True, slots=True)
class Summary:
    id: int
    text: str
    created: float


class InnerStore:
    def __init__(self, store: Store) -> None:
        self._store = store

    async def summary(self, layer: str) -> Summary | None:
        rows = await _fetch(
            self._store.db,
            "SELECT id, text, created FROM summaries WHERE layer = ? ORDER BY id DESC LIMIT 1",
            (layer,),
        )
        return Summary(*rows[0]) if rows else None

    async def state(self) -> dict[str, str]:
        rows = await _fetch(self._store.db, "SELECT key, value FROM soul_state")
        return {key: value for key, value in rows}

    async def observations(self, after_memory: int, limit: int) -> list[Observation]:
        """Observations after memory id ``after_memory`` (see :meth:`_observations`)."""
        return await self._observations("m.id > ?", after_memory, limit)

    async def observations_since(self, ts: float, limit: int) -> list[Observation]:
        """Observations of events that happened at or after ``ts``."""
        return await self._observations("e.ts >= ?", ts, limit)

    async def _observations(self, where: str, value: float, limit: int) -> list[Observation]:
        """Visible observations matching ``where``, oldest first; when there are more
        than ``limit`` (a flood), the most salient and surprising of them, then the
        newest: the ones a summary would keep anyway, at a bounded cost."""
        rows = await _fetch(
            self._store.db,
            f"""
            SELECT id, text, salience, surprise, kind, sender, ts FROM (
                SELECT m.id, m.text, m.salience, m.surprise, e.kind, e.sender, e.ts
                FROM memories AS m JOIN events AS e ON e.id = m.event_id
                WHERE {where} AND m.hidden_at IS NULL
                ORDER BY m.salience + m.surprise DESC, m.id DESC LIMIT ?
            ) ORDER BY id
            """,
            (value, limit),
        )
        return [Observation(*row) for row in rows]

    async def last_memory(self) -> int:
        rows = await _fetch(self._store.db, "SELECT coalesce(max(id), 0) FROM memories")
        return int(rows[0][0])

    async def strong_edges(self, threshold: float) -> list[tuple[int, int, float]]:
        rows = await _fetch(
            self._store.db, "SELECT a, b, weight FROM edges WHERE weight >= ?", (threshold,)
        )
        return [(a, b, w) for a, b, w in rows]

    async def edge_weights(self, pairs: list[tuple[int, int]]) -> dict[tuple[int, int], float]:
        found: dict[tuple[int, int], float] = {}
        for start in range(0, len(pairs), 400):
            chunk = pairs[start : start + 400]
            values = ",".join("(?, ?)" for _ in chunk)
            sql = (
                f"WITH p (a, b) AS (VALUES {values})"
                " SELECT e.a, e.b, e.weight FROM edges AS e JOIN p USING (a, b)"
            )
            flat = [n for pair in chunk for n in pair]
            for a, b, weight in await _fetch(self._store.db, sql, flat):
                found[(a, b)] = weight
        return found

    async def markers(self) -> list[tuple[str, str, float]]:
        rows = await _fetch(self._store.db, "SELECT topic, valence, weight FROM markers")
        return [(topic, valence, weight) for topic, valence, weight in rows]

    async def gaps(self, limit: int) -> list[tuple[str, str]]:
        """The newest ``limit`` gaps as (topic, detail), oldest first."""
        rows = await _fetch(
            self._store.db,
            "SELECT topic, detail FROM (SELECT id, topic, detail FROM gaps"
            " ORDER BY id DESC LIMIT ?) ORDER BY id",
            (limit,),
        )
        return [(topic, detail) for topic, detail in rows]

    async def activity(self, since: float, recent: int) -> tuple[int, list[float]]:
        """Events recorded since ``since``, and the surprise of the last ``recent``."""
        rows = await _fetch(
            self._store.db, "SELECT count(*) FROM events WHERE recorded >= ?", (since,)
        )
        surprise = await _fetch(
            self._store.db, "SELECT surprise FROM memories ORDER BY id DESC LIMIT ?", (recent,)
        )
        return int(rows[0][0]), [float(s) for (s,) in surprise]

    async def table_counts(self) -> dict[str, int]:
        rows = await _fetch(
            self._store.db,
            """
            SELECT (SELECT count(*) FROM edges), (SELECT count(*) FROM markers),
                   (SELECT count(*) FROM gaps),
                   (SELECT count(*) FROM summaries WHERE layer = 'consolidated'),
                   (SELECT count(*) FROM summaries WHERE layer = 'weekly')
            """,
        )
        edges, markers, gaps, reflects, weeklies = rows[0]
        return {
            "edges": edges,
            "markers": markers,
            "gaps": gaps,
            "reflects": reflects,
            "weeklies": weeklies,
        }

    async def decay(
        self,
        now: float,
        *,
        permanent_at: float,
        medium_at: float,
        medium_days: float,
        low_days: float,
        purge_days: float,
        edge_factor: float,
        edge_floor: float,
        marker_factor: float,
        marker_floor: float,
        dry_run: bool = False,
    ) -> DecayResult:
        """The nightly forgetting pass (:mod:`souls.store.fading`), in one (shielded)
        transaction of the store.

        Memories below ``permanent_at`` salience not recalled (nor created) for their
        tier's number of days are hidden: out of the index, out of recall. Hidden ones
        are purged ``purge_days`` later, with their edges. Edges fade by ``edge_factor``
        and those under ``edge_floor`` go; somatic markers likewise. Events are never
        touched.

        A ``dry_run`` does all of it in the same transaction, rolled back: its counts
        are the real pass's, and nothing stored changes.
        """
        fading = Fading(
            permanent_at=permanent_at,
            medium_at=medium_at,
            medium_days=medium_days,
            low_days=low_days,
            purge_days=purge_days,
            edge_factor=edge_factor,
            edge_floor=edge_floor,
            marker_factor=marker_factor,
            marker_floor=marker_floor,
        )
        return await self._store.decay(now, fading, dry_run=dry_run)


async def _fetch(db: aiosqlite.Connection, sql: str, params: Any = ()) -> list[Any]:
    return list(await db.execute_fetchall(sql, params))
