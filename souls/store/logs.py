"""The logs a forget scrubs, on SQLite (souls/actor/scrub.py decides what quotes a
forgotten text): the ledger's draws, the assembled contexts' queries, the knowledge
gaps, the soul's small ``soul_state`` values and the goals, read as :class:`Logs`, and
rewritten as a :class:`Scrub` says. :mod:`souls.store.postgres.logs` keeps the same
rows on PostgreSQL; ``SoulStore.logs`` and ``SoulStore.scrub`` are what both offer.

:func:`write` runs in the caller's transaction (a full forget's, rolled back by a dry
run); :meth:`souls.store.store.Store.scrub` in one of its own."""

from __future__ import annotations

import aiosqlite
import msgspec

__all__ = ["FORGOTTEN", "Logs", "Scrub", "read", "write"]

# What a scrubbed topic, reason or query reads.
FORGOTTEN = "(forgotten)"


class Logs(msgspec.Struct, frozen=True, kw_only=True):
    """What a scrub reads, each by id (``state`` by key)."""

    draws: list[tuple[int, str, str, str]]  # id, topic, cards (JSON), verdicts (JSON)
    queries: list[tuple[int, str]]  # an assembly with a query: id, query
    gaps: list[tuple[int, str, str]]  # id, topic, detail
    state: dict[str, str]
    goals: list[tuple[int, str, str]]  # id, statement, progress (JSON)


class Scrub(msgspec.Struct, frozen=True, kw_only=True):
    """The log rows rewritten: draws' topics and verdicts replaced, assemblies' queries
    read :data:`FORGOTTEN`, gaps and ``soul_state`` values deleted, goals deleted or
    their progress notes replaced (JSON)."""

    draws: list[tuple[int, str, str]] = msgspec.field(default_factory=list)
    queries: list[int] = msgspec.field(default_factory=list)
    gaps: list[int] = msgspec.field(default_factory=list)
    state: list[str] = msgspec.field(default_factory=list)
    goals_gone: list[int] = msgspec.field(default_factory=list)
    notes: list[tuple[int, str]] = msgspec.field(default_factory=list)

    @property
    def logs(self) -> int:
        """How many log rows (draws, assemblies, gaps, values) it rewrites."""
        return len(self.draws) + len(self.queries) + len(self.gaps) + len(self.state)

    @property
    def goals(self) -> int:
        """How many goals it deletes or cuts."""
        return len(self.goals_gone) + len(self.notes)


async def read(db: aiosqlite.Connection) -> Logs:
    """The logs as ``db`` sees them (inside the caller's transaction, its writes too)."""
    draws = await db.execute_fetchall("SELECT id, topic, cards, verdicts FROM draws ORDER BY id")
    queries = await db.execute_fetchall(
        "SELECT id, query FROM assemblies WHERE query IS NOT NULL ORDER BY id"
    )
    gaps = await db.execute_fetchall("SELECT id, topic, detail FROM gaps ORDER BY id")
    state = await db.execute_fetchall("SELECT key, value FROM soul_state ORDER BY key")
    goals = await db.execute_fetchall("SELECT id, statement, progress FROM goals ORDER BY id")
    return Logs(
        draws=[(i, t, c, v) for i, t, c, v in draws],
        queries=[(i, q) for i, q in queries],
        gaps=[(i, t, d) for i, t, d in gaps],
        state={k: v for k, v in state},
        goals=[(i, s, p) for i, s, p in goals],
    )


async def write(db: aiosqlite.Connection, scrub: Scrub) -> None:
    """Rewrite the rows ``scrub`` names, in the caller's transaction."""
    await db.executemany(
        "UPDATE draws SET topic = ?, verdicts = ? WHERE id = ?",
        [(topic, verdicts, draw) for draw, topic, verdicts in scrub.draws],
    )
    await db.executemany(
        "UPDATE assemblies SET query = ? WHERE id = ?", [(FORGOTTEN, i) for i in scrub.queries]
    )
    await db.executemany("DELETE FROM gaps WHERE id = ?", [(i,) for i in scrub.gaps])
    await db.executemany("DELETE FROM soul_state WHERE key = ?", [(k,) for k in scrub.state])
    await db.executemany("DELETE FROM goals WHERE id = ?", [(i,) for i in scrub.goals_gone])
    await db.executemany(
        "UPDATE goals SET progress = ? WHERE id = ?",
        [(progress, goal) for goal, progress in scrub.notes],
    )
