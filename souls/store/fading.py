"""The nightly decay pass on SQLite (DESIGN §3.6): what fades, as the store does it.

Memories below ``permanent_at`` salience not recalled (nor created) for their tier's
number of days are hidden (:mod:`souls.store.hiding`). Hidden ones are purged
``purge_days`` later, with their edges and sources. Edges fade by ``edge_factor`` and
those under ``edge_floor`` go; somatic markers likewise. Events are never touched.

:func:`fade` works inside the caller's transaction (:meth:`souls.store.store.Store.decay`
holds it, and rolls a dry run back); :meth:`souls.store.postgres.store.PgStore.decay`
is the same pass on PostgreSQL. The numbers come from the soul's config
(:meth:`souls.store.interface.SoulStore.decay`); nothing here decides them.
"""

from __future__ import annotations

from dataclasses import dataclass

import aiosqlite

from souls.results import DecayResult
from souls.store.hiding import hide

__all__ = ["DAY", "Fading", "fade"]

DAY = 86_400.0


@dataclass(frozen=True, slots=True)
class Fading:
    """What a decay pass lets go, and how fast (see the module's docstring)."""

    permanent_at: float  # salience from which a memory never fades
    medium_at: float  # salience from which it fades after medium_days, else low_days
    medium_days: float
    low_days: float
    purge_days: float  # a hidden memory is deleted this long after it was hidden
    edge_factor: float
    edge_floor: float
    marker_factor: float
    marker_floor: float


async def fade(db: aiosqlite.Connection, now: float, fading: Fading) -> DecayResult:
    """The pass at ``now``, in the caller's transaction; its counts."""
    due = await db.execute_fetchall(
        """
        SELECT id FROM memories
        WHERE hidden_at IS NULL AND salience < :permanent
          AND coalesce(last_recalled, created) < :now - 86400.0 * CASE
              WHEN salience >= :medium THEN :medium_days ELSE :low_days END
        """,
        {
            "now": now,
            "permanent": fading.permanent_at,
            "medium": fading.medium_at,
            "medium_days": fading.medium_days,
            "low_days": fading.low_days,
        },
    )
    hidden = await hide(db, [i for (i,) in due], now)
    purged = list(
        await db.execute_fetchall(
            "SELECT id FROM memories WHERE hidden_at IS NOT NULL AND hidden_at <= ?",
            (now - fading.purge_days * DAY,),
        )
    )
    ids = [(i,) for (i,) in purged]
    await db.executemany("DELETE FROM memory_sources WHERE memory_id = ?", ids)
    await db.executemany("DELETE FROM edges WHERE a = ? OR b = ?", [i * 2 for i in ids])
    await db.executemany("DELETE FROM memories WHERE id = ?", ids)
    await db.execute("UPDATE edges SET weight = weight * ?", (fading.edge_factor,))
    pruned = list(
        await db.execute_fetchall(
            "DELETE FROM edges WHERE weight < ? RETURNING a", (fading.edge_floor,)
        )
    )
    await db.execute("UPDATE markers SET weight = weight * ?", (fading.marker_factor,))
    faded = list(
        await db.execute_fetchall(
            "DELETE FROM markers WHERE weight < ? RETURNING topic", (fading.marker_floor,)
        )
    )
    return DecayResult(
        hidden=len(hidden), purged=len(purged), edges_pruned=len(pruned),
        markers_pruned=len(faded),
    )  # fmt: skip
