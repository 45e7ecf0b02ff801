"""Cards: append-only numbers, notes never rewrite, the Markdown folder mirrors the
database, proteins, and crystallising a reflect's summary."""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest

from souls.collision.cards import CardStore, cited, crystallise, render
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


def test_crystallise_reads_a_summary() -> None:
    summary = (
        "## Failures and alarms\n- deploy failed: database migration timeout [m7]\n"
        "## Open questions\n- when do we migrate the billing database? [m9]\n"
        "## Notable\n- deploy ok (\u00d7400) [m1, m400]\n"
    )
    conclusions, questions, tags = crystallise(summary)
    assert conclusions == ["deploy failed: database migration timeout", "deploy ok"]
    assert questions == ["when do we migrate the billing database?"]
    assert tags[:2] == ["databas", "deploy"]
    assert cited(summary) == [1, 7, 9, 400]
