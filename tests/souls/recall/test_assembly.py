"""Context assembly's entry shortlist: the few active entries that can be among the
items a context keeps. It must be exact — ``choose`` over the shortlist picks what it
picks over every entry, in either mode, whatever else competes, whatever surfaced
when and however the query's terms weigh — and small."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from souls.recall.assembly import Contender, Query, choose, memory_candidates, open_candidate
from souls.recall.potential import PotentialConfig
from souls.recall.shortlist import Entry, EntryIndex, entry_candidate, shortlist
from souls.results import RecallItem

NOW = 1_800_000_000.0
DAY = 86_400.0
VOCABULARY = ("kayak", "lake", "tea", "rent", "cat", "jazz", "ann", "plan")
CONFIGS = (
    PotentialConfig(),
    PotentialConfig(threshold=1.0),  # emergence unless something holds every term
    PotentialConfig(threshold=0.05),
    PotentialConfig(e=0.0),  # an entry nobody asked about has no potential at all
    PotentialConfig(a=0.0, g=0.0),
    PotentialConfig(tau_unresolved=0.5, tau_rarity=2.0),
    PotentialConfig(open_share=1.0),  # open items may take every slot
    PotentialConfig(open_share=0.2),
)
# Days before NOW an entry was recorded or opened: ties, the same day, a hair apart,
# long saturated ages (S rounds to exactly 1), and times to come (S = 0).
AGES = (0.0, 0.0, 1e-9, 0.5, 1.0, 1.0 + 1e-12, 7.0, 30.0, 400.0, 1500.0, 4000.0, -3.0)


def entries(draw: st.DrawFn, count: int) -> list[Entry]:
    found = []
    ids = st.lists(st.integers(1, 500), min_size=count, max_size=count, unique=True)
    for entry_id in draw(ids):
        age = draw(st.sampled_from(AGES) | st.floats(-5.0, 5000.0))
        found.append(
            Entry(
                id=entry_id,
                kind=draw(st.sampled_from(("claim", "commitment"))),
                text=f"entry {entry_id}",
                terms=tuple(sorted(draw(st.sets(st.sampled_from(VOCABULARY), max_size=3)))),
                since=NOW - age * DAY,
                user=draw(st.booleans()),
            )
        )
    return found


def surface(draw: st.DrawFn, index: EntryIndex, held: list[Entry]) -> None:
    """Some entries surfaced in contexts: before or after they were recorded, some more
    than once (the later time holds), and some ids not in the index at all."""
    ids = [e.id for e in held] + [501, 502]
    for _ in range(draw(st.integers(0, 25))):
        days = draw(st.sampled_from(AGES) | st.floats(-5.0, 5000.0))
        index.surface({draw(st.sampled_from(ids)): NOW - days * DAY})


def query_of(draw: st.DrawFn, words: frozenset[str]) -> Query:
    """``words`` weighed as idf would: rare, common, in every memory (floored)."""
    weight = st.sampled_from((1.0, 1e-6, 0.3, 2.5, 7.1))
    return Query([(w, draw(weight)) for w in sorted(words)])


def candidates_of(
    index: EntryIndex, listed: list[Entry], query: Query, fidelity_ai: float
) -> list[Contender]:
    return [entry_candidate(e, query, NOW, fidelity_ai, index.surfaced_at(e.id)) for e in listed]


def others(draw: st.DrawFn) -> list[Contender]:
    """Memories, questions and tasks: what competes with the entries."""
    memories = [
        RecallItem(i, "observation", f"memory {i}", draw(st.floats(0.0, 9.0)), "bm25", [])
        for i in range(draw(st.integers(0, 4)))
    ]
    found = memory_candidates(memories, {m.id: draw(st.floats(0.0, 1.0)) for m in memories})
    for i in range(draw(st.integers(0, 3))):
        kind = draw(st.sampled_from(("question", "task")))
        r = draw(st.sampled_from((0.0, 0.1, 0.25, 1.0)))
        opened = NOW - draw(st.sampled_from(AGES)) * DAY
        found.append(open_candidate(kind, i, f"{kind} {i}", r, opened=opened, now=NOW))
    return found


def picks(contenders: list[Contender], config: PotentialConfig, limit: int) -> object:
    ranking, shown, logged = choose(contenders, config, limit)
    return ranking.mode, ranking.best_r, shown, logged, bool(contenders)


@settings(max_examples=400, deadline=None)
@given(st.data())
def test_the_shortlist_picks_what_every_entry_would(data: st.DataObject) -> None:
    held = entries(data.draw, data.draw(st.integers(0, 40)))
    competing = others(data.draw)
    words = frozenset(data.draw(st.sets(st.sampled_from((*VOCABULARY, "zebra")), max_size=7)))
    query = query_of(data.draw, words)
    config = data.draw(st.sampled_from(CONFIGS))
    limit = data.draw(st.integers(1, 10))
    fidelity_ai = data.draw(st.sampled_from((0.0, 0.37, 1.0)))
    index = EntryIndex(held)
    surface(data.draw, index, held)

    listed = shortlist(index, query, NOW, config, limit, fidelity_ai)

    assert [e.id for e in listed] == sorted({e.id for e in listed})
    if held:
        assert listed
    every = candidates_of(index, index.entries(), query, fidelity_ai)
    few = candidates_of(index, listed, query, fidelity_ai)
    assert picks(competing + few, config, limit) == picks(competing + every, config, limit)


def test_a_large_soul_shortlists_a_handful() -> None:
    rng = random.Random(7)
    held = [
        Entry(
            id=i,
            kind="commitment" if i % 50 == 0 else "claim",
            text=f"entry {i}",
            terms=tuple(rng.sample(VOCABULARY, 2)),
            since=NOW - rng.uniform(0, 900) * DAY,
            user=i % 3 == 0,
        )
        for i in range(1, 5001)
    ]
    index = EntryIndex(held)
    config = PotentialConfig()
    for words in (frozenset({"kayak"}), frozenset(), frozenset({"zebra", "yak"})):
        query = Query([(w, 1.0) for w in sorted(words)])
        listed = shortlist(index, query, NOW, config, 8, 0.6)
        # Retrieval: the best 8 by R; emergence: at most 8 per group walked.
        assert 1 <= len(listed) <= 4 * 8, words
        every = candidates_of(index, held, query, 0.6)
        few = candidates_of(index, listed, query, 0.6)
        assert picks(few, config, 8) == picks(every, config, 8)


def test_ties_go_by_id_when_age_no_longer_tells_entries_apart() -> None:
    # Ten years old: S is exactly 1 for all of them, so Φ ties and the lowest ids win.
    held = [
        Entry(i, "claim", f"entry {i}", (), NOW - (3650 + (-i % 97)) * DAY, True)
        for i in range(1, 300)
    ]
    listed = shortlist(EntryIndex(held), Query(), NOW, PotentialConfig(), 5, 1.0)
    every = [entry_candidate(e, Query(), NOW, 1.0) for e in held]
    few = [entry_candidate(e, Query(), NOW, 1.0) for e in listed]
    _, shown, _ = choose(few, PotentialConfig(), 5)
    assert [item.id for item in shown] == [1, 2, 3, 4, 5]
    assert picks(few, PotentialConfig(), 5) == picks(every, PotentialConfig(), 5)


def test_entries_with_no_potential_still_make_a_contender() -> None:
    # Recorded just now, no query: Φ = 0, nothing is shown, yet the context ranked
    # something (its mode is emergence, not "none").
    held = [Entry(i, "claim", f"entry {i}", (), NOW, True) for i in (4, 2, 9)]
    listed = shortlist(EntryIndex(held), Query(), NOW, PotentialConfig(), 8, 1.0)
    assert [e.id for e in listed] == [2]
    assert shortlist(EntryIndex(), Query([("tea", 1.0)]), NOW, PotentialConfig(), 8, 1.0) == []


@settings(max_examples=100, deadline=None)
@given(st.data())
def test_an_index_kept_by_adds_and_discards_equals_one_built_afresh(data: st.DataObject) -> None:
    pool = entries(data.draw, 30)
    index = EntryIndex()
    kept: dict[int, Entry] = {}
    for _ in range(data.draw(st.integers(0, 80))):
        entry = data.draw(st.sampled_from(pool))
        if data.draw(st.booleans()):
            moved = Entry(entry.id, entry.kind, entry.text, entry.terms, entry.since - 1, True)
            entry = data.draw(st.sampled_from((entry, moved)))
            index.add(entry)
            kept[entry.id] = entry
        else:
            index.discard(entry.id)
            kept.pop(entry.id, None)
    assert index == EntryIndex(list(kept.values()))
    assert index.entries() == sorted(kept.values(), key=lambda e: e.id)


def test_open_items_take_at_most_their_share_while_others_wait() -> None:
    """Twelve open promises and questions, old and pressing, against four memories that
    only rarity brings back: emergence keeps half of eight slots for the memories."""
    opened = [
        open_candidate(kind, i, f"{kind} {i}", 0.0, opened=NOW - (20 + i) * DAY, now=NOW)
        for i, kind in enumerate(["commitment", "question", "task"] * 4)
    ]
    memories = memory_candidates(
        [RecallItem(i, "observation", f"memory {i}", 0.0, "rarity", []) for i in range(4)],
        {},
        created={i: NOW - (40 + i) * DAY for i in range(4)},
        now=NOW,
    )
    ranking, shown, _ = choose(opened + memories, PotentialConfig(), 8)
    assert ranking.mode == "emergence"
    kinds = [item.kind for item in shown]
    assert kinds.count("observation") == 4
    assert len(shown) == 8
    # Without the share, pressure wins every slot.
    _, unshared, _ = choose(opened + memories, PotentialConfig(open_share=1.0), 8)
    assert all(item.kind != "observation" for item in unshared)
    # Slots the others cannot fill still go to open items; the order stays the ranking's.
    _, few, logged = choose(opened + memories[:1], PotentialConfig(), 8)
    assert [item.kind for item in few].count("observation") == 1
    assert len(few) == 8
    scores = [item.score for item in logged]
    assert scores == sorted(scores, reverse=True)
