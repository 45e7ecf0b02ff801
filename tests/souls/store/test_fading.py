"""The nightly decay pass (souls/store/fading.py) on both backends (the fixtures of
tests/backends.py): what hides, what is purged, what fades, and a dry run
that changes nothing."""

from __future__ import annotations

from collections import Counter
from collections.abc import Awaitable, Callable

from souls.results import DecayResult
from souls.store.changes import Changes
from souls.store.fading import DAY, Fading
from souls.store.interface import SoulStore
from souls.store.store import NewEvent, StoreCounts
from souls.text.tokenize import fts_document, fts_match, query_terms

T0 = 1_780_000_000.0

Raw = Callable[..., Awaitable[list[tuple[object, ...]]]]

FADING = Fading(
    permanent_at=0.8, medium_at=0.5, medium_days=30, low_days=7, purge_days=10,
    edge_factor=0.5, edge_floor=0.1, marker_factor=0.9, marker_floor=0.05,
)  # fmt: skip

TEXTS = ["kept forever", "a medium note", "a passing giraffe", "a recalled zebra"]


def new_event(text: str, salience: float) -> NewEvent:
    return NewEvent(
        ref=None, kind="message", channel="test", sender="ada", group=None, mentioned=False,
        session=None, ts=T0, recorded=T0, salience=salience, text=text,
        doc=fts_document(text),
    )  # fmt: skip


async def found(store: SoulStore, word: str) -> list[int]:
    return [hit.memory_id for hit in await store.search(fts_match(query_terms(word)), 10)]


async def test_decay_hides_purges_and_fades(store: SoulStore, raw: Raw) -> None:
    saliences = [0.9, 0.6, 0.3, 0.3]  # permanent, medium, low, low
    await store.append([new_event(t, s) for t, s in zip(TEXTS, saliences, strict=True)])
    await store.flush(
        Changes(
            recalled={4},
            edges=Counter({(1, 2): 1.0, (2, 3): 1.0, (3, 4): 0.1}),
            markers={("cat", "positive"): 1.0, ("dog", "negative"): 0.055},
        ),
        now=T0 + 6 * DAY,
    )
    edges = "SELECT a, b, weight FROM edges ORDER BY a, b"
    markers = "SELECT topic, valence, weight FROM markers ORDER BY topic"
    before = (await raw(edges), await raw(markers), await store.counts())

    # Eight days on: the low one never recalled hides (the recalled one is two days
    # from its last recall); edge 3-4 and the dog marker fall below their floors.
    now = T0 + 8 * DAY
    counted = await store.decay(now, FADING, dry_run=True)
    assert counted == DecayResult(hidden=1, purged=0, edges_pruned=1, markers_pruned=1,
                                  dry_run=True)  # fmt: skip
    assert (await raw(edges), await raw(markers), await store.counts()) == before
    assert await found(store, "giraffe") == [3]

    assert await store.decay(now, FADING) == DecayResult(1, 0, 1, 1)
    assert await store.counts() == StoreCounts(events=4, memories=4, hidden=1)
    assert await found(store, "giraffe") == []
    assert await raw("SELECT id FROM memories WHERE hidden_at = ?", now) == [(3,)]
    assert (await store.term_stats()).documents == 3
    assert await raw(edges) == [(1, 2, 0.5), (2, 3, 0.5)]
    assert await raw(markers) == [("cat", "positive", 0.9)]

    # Eleven days later: the hidden one is purged, with its edges (not counted as
    # pruned); the recalled one's turn to hide has come.
    later = T0 + 19 * DAY
    assert await store.decay(later, FADING) == DecayResult(1, 1, 0, 0)
    assert await store.counts() == StoreCounts(events=4, memories=3, hidden=1)
    assert await raw("SELECT id, hidden_at FROM memories WHERE hidden_at IS NOT NULL") == [
        (4, later)
    ]
    assert await found(store, "zebra") == []
    assert await found(store, "forever") == [1]
    assert await raw(edges) == [(1, 2, 0.25)]
    assert await raw(markers) == [("cat", "positive", 1.0 * 0.9 * 0.9)]
    assert await raw("SELECT count(*) FROM events") == [(4,)]  # events are never touched
