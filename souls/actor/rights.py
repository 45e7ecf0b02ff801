"""The user's rights over a soul's data: forget, export, backup, rebuild (DESIGN §3.12).

* ``forget`` deletes events and everything derived from them — their memories (and
  index rows, Hebbian edges, sources), every summary version that cites them — in one
  transaction, and recomputes the somatic markers from the events that remain
  (:mod:`souls.actor.forgetting`: through the store interface, on either backend).
* ``export`` pages through events and derived state as JSON-ready records; an export's
  ``event`` records import back as events (:mod:`souls.actor.exporting`: through the
  store interface, on either backend).
* ``backup`` takes a consistent online copy with SQLite's backup API.
* ``rebuild`` recomputes the markers (weights and labels) from the events and the
  full-text index from the memories, and reports what differed.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import aiosqlite
import anyio
import msgspec

from souls.actor.exporting import export_page
from souls.actor.forgetting import ForgetResult, forget, markers_of
from souls.mind.somatic import SomaticConfig
from souls.store.export import EXPORT_TABLES
from souls.store.files import create_private
from souls.store.interface import SoulStore
from souls.store.reindex import index_damaged, reindex
from souls.store.store import Store
from supervisor.errors import Unsupported

__all__ = ["EXPORT_TABLES", "DataRights", "ForgetResult", "RebuildResult"]


class RebuildResult(msgspec.Struct, frozen=True):
    markers_before: int
    markers_after: int
    markers_changed: int  # markers whose weight or label differed (or that came or went)
    # How the index stood before: visible memories it lacked, rows for none of them,
    # and whether FTS5's own integrity check failed (then the two counts are 0: an
    # index that cannot be read cannot be counted).
    index_rows_missing: int
    index_rows_extra: int
    index_rows: int  # rows of the rebuilt index
    index_damaged: bool = False
    card_files: int = 0  # card files written again (missing, or not what the card says)


class DataRights:
    def __init__(
        self, store: SoulStore, somatic: SomaticConfig, folder: Path | None = None
    ) -> None:
        self._store = store
        self._somatic = somatic
        self._folder = folder  # the soul's brain folder (its tide reports), if any

    async def matching_events(
        self,
        *,
        ref: str | None = None,
        match: str | None = None,
        before: float | None = None,
        everything: bool = False,
    ) -> list[int]:
        """Event ids a forget request names (exactly one criterion is given):
        ``SoulStore.forgettable``."""
        return await self._store.forgettable(
            ref=ref, match=match, before=before, everything=everything
        )

    async def forget(
        self,
        event_ids: Sequence[int],
        now: float,
        *,
        match: str | None = None,
        dry_run: bool = False,
    ) -> tuple[ForgetResult, list[int]]:
        """Forget the events (:func:`souls.actor.forgetting.forget`); also returns the
        numbers of the cards that were redacted (their Markdown files need rewriting).
        Leaves no byte of them in the database file or its WAL: logs that quote them
        (or ``match``) are rewritten (:mod:`souls.actor.scrub`), freed pages zeroed, the
        index's segments merged, the WAL truncated.

        A ``dry_run`` does all of it in a transaction it rolls back, so its counts are
        the real forget's, and removes no file: nothing changes (no card to rewrite)."""
        return await forget(
            self._store, self._somatic, self._folder, event_ids, now, match=match, dry_run=dry_run
        )

    async def export_page(self, cursor: str | None) -> tuple[list[dict[str, Any]], str | None]:
        """Up to a page of records from ``cursor`` on, and the cursor of the next page
        (None after the last): :func:`souls.actor.exporting.export_page`."""
        return await export_page(self._store, cursor)

    async def backup(self, target: Path) -> int:
        """A consistent copy of the live database at ``target``; its size in bytes."""
        store = self._sqlite("backup")
        temporary = target.with_name(f".{target.name}.partial")
        # The copy holds everything the soul was told: this user's alone from the start.
        await anyio.to_thread.run_sync(create_private, temporary)
        async with aiosqlite.connect(temporary) as copy:
            await store.db.backup(copy)
        await anyio.Path(temporary).rename(target)
        return (await anyio.Path(target).stat()).st_size

    async def rebuild(self, now: float) -> RebuildResult:
        """Recompute markers from the events and the full-text index from the visible
        memories (:mod:`souls.store.reindex`); report what differed before."""
        store = self._sqlite("rebuild")
        db = store.db
        rows = await db.execute_fetchall("SELECT topic, valence, weight, label FROM markers")
        before = {(topic, valence): (weight, label) for topic, valence, weight, label in rows}
        with anyio.CancelScope(shield=True):
            async with store.transaction() as write:
                after = await self._recompute_markers(write, now)
                damaged = await index_damaged(write)
                missing, extra = (0, 0) if damaged else await _index_drift(write)
                indexed = await reindex(write, store.context_turns)
        store.drop_caches()
        changed = sum(
            1
            for key in before.keys() | after.keys()
            if key not in before
            or key not in after
            or abs(before[key][0] - after[key][0]) > 1e-9
            or before[key][1] != after[key][1]
        )
        return RebuildResult(len(before), len(after), changed, missing, extra, indexed, damaged)

    def _sqlite(self, what: str) -> Store:
        """The soul's SQLite store, for what only SQLite has; Unsupported elsewhere."""
        if not isinstance(self._store, Store):
            raise Unsupported(
                f"{what} is not available for a soul on the shared PostgreSQL store yet "
                "(issue #21): use PostgreSQL's own backups (pg_dump), and export for one soul"
            )
        return self._store

    async def _recompute_markers(
        self, db: aiosqlite.Connection, now: float
    ) -> dict[tuple[str, str], tuple[float, str | None]]:
        """Markers are the appraisals of the stored events, added up (decay aside), as
        the mind perceives them (the person's too); labels come from the events in the
        order they were stored, as they did live. Returns (weight, label) by key."""
        events = await db.execute_fetchall("SELECT text, salience, person FROM events ORDER BY id")
        rows = markers_of([(t, s, p) for t, s, p in events], self._somatic)
        await db.execute("DELETE FROM markers")
        await db.executemany(
            "INSERT INTO markers (topic, valence, weight, label, updated) VALUES (?, ?, ?, ?, ?)",
            [(*row, now) for row in rows],
        )
        return {(topic, valence): (weight, label) for topic, valence, weight, label in rows}


async def _index_drift(db: aiosqlite.Connection) -> tuple[int, int]:
    """Visible memories without an index row, and index rows without a visible memory."""
    ((missing, extra),) = await db.execute_fetchall(
        "SELECT (SELECT count(*) FROM memories WHERE hidden_at IS NULL"
        "        AND id NOT IN (SELECT rowid FROM memory_fts)),"
        "       (SELECT count(*) FROM memory_fts WHERE rowid NOT IN"
        "        (SELECT id FROM memories WHERE hidden_at IS NULL))"
    )
    return int(missing), int(extra)
