"""Rebuilding the full-text index from the memories (souls.store.reindex, through
DataRights.rebuild), on real database files: a sound index comes back row for row, a
damaged one is mended, and recall finds the memories again."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

from souls.actor.rights import DataRights
from souls.mind.somatic import SomaticConfig
from souls.store.check import check
from souls.store.store import NewEvent, Store
from souls.text.tokenize import fts_document, fts_match, tokens

T0 = 1_780_000_000.0


def turn(text: str, session: str | None, ref: str) -> NewEvent:
    return NewEvent(
        ref=ref, kind="message", channel=None, sender="ada", group=None, mentioned=False,
        session=session, ts=T0, recorded=T0, salience=0.5, text=text, doc=fts_document(text),
    )  # fmt: skip


def index_rows(path: Path) -> list[tuple[object, ...]]:
    with closing(sqlite3.connect(path)) as db:
        return db.execute(
            "SELECT rowid, doc, prior, later FROM memory_fts ORDER BY rowid"
        ).fetchall()


async def filled(path: Path) -> Store:
    """A store with two interleaved sessions, sessionless events, and one event
    forgotten (its memory gone, its neighbours' context refreshed)."""
    store = await Store.open(path, context_turns=2)
    for batch in range(3):
        turns = [
            turn(f"kayak trip {batch}-{i} to the lake", "s1" if i % 3 else "s2", f"r{batch}-{i}")
            for i in range(40)
        ]
        await store.append([*turns, turn(f"lone note {batch}", None, f"n{batch}")])
    await DataRights(store, SomaticConfig()).forget([5], T0)
    return store


async def test_a_sound_index_comes_back_row_for_row(tmp_path: Path) -> None:
    path = tmp_path / "soul.db"
    store = await filled(path)
    try:
        before = index_rows(path)
        result = await DataRights(store, SomaticConfig()).rebuild(T0)
        after = index_rows(path)
    finally:
        await store.close()
    assert result.index_damaged is False
    assert (result.index_rows_missing, result.index_rows_extra) == (0, 0)
    assert result.index_rows == len(before) == 3 * 41 - 1
    assert after == before
    assert any(prior for _, _, prior, _ in after)  # the sessions' context is there
    assert check(path).ok


async def test_a_damaged_index_is_mended_and_recall_finds_the_memories(tmp_path: Path) -> None:
    path = tmp_path / "soul.db"
    store = await filled(path)
    await store.close()
    with closing(sqlite3.connect(path, isolation_level=None)) as db:
        db.execute("DELETE FROM memory_fts_data WHERE id = (SELECT max(id) FROM memory_fts_data)")
    assert not check(path).fts_ok

    store = await Store.open(path, context_turns=2)
    try:
        result = await DataRights(store, SomaticConfig()).rebuild(T0)
        found = await store.search(fts_match(tokens("kayak lake")), 500)
    finally:
        await store.close()
    assert result.index_damaged is True
    assert (result.index_rows_missing, result.index_rows_extra) == (0, 0)  # not countable
    assert result.index_rows == 3 * 41 - 1
    assert check(path).ok
    assert len(found) == 3 * 40 - 1  # every visible kayak turn, the hidden one aside
