"""The tide's protein proposals: clusters of cards that keep colliding or whose memories
keep firing together (strong Hebbian edges); cards already in a protein are not proposed."""

from __future__ import annotations

from pathlib import Path

from souls.collision.cards import CardStore
from souls.collision.tide import ProteinProposal, tide
from souls.store.changes import Changes
from souls.store.store import NewEvent, Store
from souls.text.tokenize import fts_document

NOW = 1_800_000_000.0


def event(text: str) -> NewEvent:
    return NewEvent(
        None, "message", None, None, None, False, None, NOW, NOW, 0.5, text, fts_document(text)
    )


async def test_strong_hebbian_edges_link_cards_into_a_proposal(tmp_path: Path) -> None:
    store = await Store.open(tmp_path / "soul.db")
    try:
        await store.append([event(f"memory {n}") for n in range(1, 7)])  # memories 1..6
        cards = CardStore(store, tmp_path / "cards")
        for n, memories in enumerate([[1], [2], [3], [4], [5, 6]], 1):
            await cards.add(title=f"c{n}", conclusions=[f"c{n}"], memories=memories, now=NOW)
        edges = Changes()
        edges.edges[(1, 2)] = 4.0  # cards 1 and 2: strong
        edges.edges[(2, 3)] = 3.0  # cards 2 and 3: just strong enough, one cluster 1-2-3
        edges.edges[(3, 4)] = 2.9  # cards 3 and 4: too weak
        edges.edges[(5, 6)] = 9.0  # inside card 5: no pair
        await store.flush(edges, NOW)
        report = await tide(store, NOW, hebbian_threshold=3.0)
        assert report.protein_proposals == [ProteinProposal([1, 2, 3], 0, 4.0)]
        assert "- 0001 + 0002 + 0003 (Hebbian edge 4)" in report.markdown

        await cards.add(title="p", conclusions=["p"], members=[1, 2], now=NOW)
        joined = await tide(store, NOW, hebbian_threshold=3.0)
        assert joined.protein_proposals == [ProteinProposal([2, 3], 0, 3.0)]
    finally:
        await store.close()
