"""Cards: append-only numbers, notes never rewrite, the Markdown folder mirrors the
database, proteins, and closing an answered question (a card with none open left is
closed and draws at zeig_closed). What a reflect's card says: test_crystal.py."""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest

from souls.collision.cards import CardStore, render
from souls.collision.collider import pool_card
from souls.collision.lightning import LightningConfig, weight
from souls.store.store import Store

NOW = 1_800_000_000.0


@asynccontextmanager
async def cards(tmp_path: Path) -> AsyncIterator[CardStore]:
    store = await Store.open(tmp_path / "soul.db")
    try:
        yield CardStore(store, tmp_path / "cards")
    finally:
        await store.close()


async def test_numbers_are_append_only_and_never_reused(tmp_path: Path) -> None:
    async with cards(tmp_path) as store:
        first = await store.add(title="one", conclusions=["a"], now=NOW)
        second = await store.add(title="two", conclusions=["b"], now=NOW)
    with sqlite3.connect(tmp_path / "soul.db") as db:  # the newest card goes away...
        db.execute("DELETE FROM card_lines WHERE card = ?", (second.number,))
        db.execute("DELETE FROM cards WHERE number = ?", (second.number,))
    async with cards(tmp_path) as store:
        third = await store.add(title="three", conclusions=["c"], now=NOW)
    assert (first.number, second.number, third.number) == (1, 2, 3)  # ...2 stays spent


async def test_notes_append_and_the_folder_mirrors_the_database(tmp_path: Path) -> None:
    async with cards(tmp_path) as store:
        card = await store.add(
            title="deploys",
            conclusions=["migrations need a timeout budget", "roll back first"],
            questions=["who owns the billing db?"],
            tags=["deploy", "databas"],
            now=NOW,
        )
        before = (tmp_path / "cards" / "0001.md").read_text()
        noted = await store.note(card.number, "the budget is now 10 minutes", NOW + 60)
        after = (tmp_path / "cards" / "0001.md").read_text()
        assert await store.check() == []
        (tmp_path / "cards" / "0001.md").write_text("edited by hand")
        (tmp_path / "cards" / "0099.md").write_text("stray")
        problems = await store.check()
    assert noted.conclusions == card.conclusions  # nothing rewritten
    assert noted.notes == ["the budget is now 10 minutes"]
    assert after.startswith(before.rstrip("\n"))  # the file only grew
    assert "## Open questions\n1. who owns the billing db?" in before
    assert "#deploy #databas" in before
    assert problems == [
        "cards/0001.md differs from card 1 in the database",
        "cards/0099.md has no card in the database",
    ]


async def test_proteins_name_their_members(tmp_path: Path) -> None:
    async with cards(tmp_path) as store:
        a = await store.add(title="a", conclusions=["x"], now=NOW)
        b = await store.add(title="b", conclusions=["y"], now=NOW)
        protein = await store.add(
            title="ab",
            conclusions=["x and y go together"],
            members=[a.number, b.number],
            source="synthesis",
            now=NOW,
        )
        with pytest.raises(ValueError, match="no card numbered 42"):
            await store.add(title="bad", conclusions=["z"], members=[a.number, 42], now=NOW)
        every = await store.all()
    assert (protein.kind, protein.members) == ("protein", [1, 2])
    assert render(protein).startswith("# Protein 0003 — ab")
    assert [c.number for c in every] == [1, 2, 3]  # the failed protein took no number


async def test_closing_questions_is_noted_and_closes_the_card(tmp_path: Path) -> None:
    async with cards(tmp_path) as store:
        asker = await store.add(
            title="moving",
            conclusions=["the movers quoted 900 euros which is kinda insane"],
            questions=["are you getting a moving company or doing it yourself?", "when?"],
            now=NOW,
        )
        answer = await store.add(
            title="moved",
            conclusions=["the movers were great, the piano survived, but it cost 650"],
            now=NOW + 86400,
        )
        before = (tmp_path / "cards" / "0001.md").read_text()
        once = await store.close(asker.number, 1, answer.number, 1, NOW + 2 * 86400)
        assert pool_card(once).closed is False  # question 2 is still open
        twice = await store.close(asker.number, 2, answer.number, 1, NOW + 2 * 86400)
        with pytest.raises(ValueError, match="no open question 1"):
            await store.close(asker.number, 1, answer.number, 1, NOW)
        other = await store.add(title="x", conclusions=["y"], questions=["z?"], now=NOW)
        with pytest.raises(ValueError, match="no conclusion line 4"):
            await store.close(other.number, 1, answer.number, 4, NOW)
        after = (tmp_path / "cards" / "0001.md").read_text()
        assert await store.check() == []
    assert once.closed == [1]
    assert twice.closed == [1, 2]
    assert twice.questions == asker.questions  # nothing rewritten
    assert twice.open_questions == []
    assert after.startswith(before.rstrip("\n"))
    assert "closed question 1: answered by card 0002 line 1" in after
    config = LightningConfig()
    assert weight(pool_card(twice), NOW, config) == config.zeig_closed * weight(
        pool_card(asker), NOW, config
    )
