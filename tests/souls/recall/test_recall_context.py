"""Recall over memories indexed with their neighbouring turns, and its cues (speaker,
dates) and explanations, over a real store."""

from __future__ import annotations

import math
import sqlite3
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager, closing
from datetime import UTC, datetime
from pathlib import Path

import anyio
import msgspec
import pytest

from souls.recall.recall import RecallConfig, recall
from souls.results import RecallItem, RecallResult
from souls.store import neighbours
from souls.store.bm25 import TermStats
from souls.store.schema import MIGRATIONS
from souls.store.store import NewEvent, Store
from souls.text.tokenize import fts_document, fts_match, query_terms, tokens

CONFIG = RecallConfig()
# Scores compared with brute force: no cue may re-rank.
PLAIN = RecallConfig(speaker_boost=0.0, date_boost=0.0, period_boost=0.0)
MAY_8 = datetime(2023, 5, 8, 13, 56, tzinfo=UTC).timestamp()
JUNE_20 = datetime(2023, 6, 20, 9, 0, tzinfo=UTC).timestamp()

# Two sessions of a conversation between Ada and Bo, then a note without a session.
TURNS: list[tuple[str, str | None, str, float]] = [
    ("s1", "Bo", "Hey Ada, what have you been researching lately?", MAY_8),
    ("s1", "Ada", "Adoption agencies, mostly. I want a family of my own.", MAY_8),
    ("s1", "Bo", "That is wonderful news!", MAY_8),
    ("s1", "Ada", "Thanks! Also painting a sunrise over the lake.", MAY_8),
    ("s2", "Bo", "I ran a charity race for the shelter last Sunday.", JUNE_20),
    ("s2", "Ada", "Amazing, how far did you run?", JUNE_20),
    ("s2", "Bo", "Ten kilometres, my best so far.", JUNE_20),
    ("s2", "Ada", "Ada is proud of you, Bo.", JUNE_20),
]


def event(text: str, session: str | None, sender: str | None = None, ts: float = 0.0) -> NewEvent:
    return NewEvent(
        ref=None, kind="message", channel=None, sender=sender, group=None, mentioned=False,
        session=session, ts=ts, recorded=ts, salience=0.5, text=text, doc=fts_document(text),
    )  # fmt: skip


def conversation() -> list[NewEvent]:
    return [event(text, session, sender, ts) for session, sender, text, ts in TURNS]


@asynccontextmanager
async def opened(path: Path, turns: int = 2) -> AsyncIterator[Store]:
    with anyio.fail_after(20):
        store = await Store.open(path, context_turns=turns)
        try:
            yield store
        finally:
            await store.close()


def rows_of(
    sessions: Sequence[str | None], docs: Sequence[str], turns: int
) -> list[neighbours.Row]:
    """Brute force: each row's context from the list of all memories, in order."""
    rows = []
    for i, (session, doc) in enumerate(zip(sessions, docs, strict=True)):
        same = [j for j, s in enumerate(sessions) if s == session and session is not None]
        here = same.index(i) if i in same else 0
        before = [docs[j] for j in reversed(same[max(here - turns, 0) : here])] if same else []
        after = [docs[j] for j in same[here + 1 : here + 1 + turns]] if same else []
        rows.append(neighbours.Row(i + 1, doc, " ".join(before), " ".join(after)))
    return rows


def read_rows(path: Path) -> list[neighbours.Row]:
    with closing(sqlite3.connect(path)) as db:
        found = db.execute("SELECT rowid, doc, prior, later FROM memory_fts ORDER BY rowid")
        return [neighbours.Row(*row) for row in found.fetchall()]


async def test_each_memory_is_indexed_with_its_neighbours_in_its_session(tmp_path: Path) -> None:
    events = [*conversation(), event("A note to self about the lake", None)]
    async with opened(tmp_path / "soul.db") as store:
        # One at a time, as pushes arrive: each new turn rewrites the later columns
        # of the turns before it.
        for new in events:
            await store.append([new])
    sessions = [e.session for e in events]
    assert read_rows(tmp_path / "soul.db") == rows_of(sessions, [e.doc for e in events], 2)
    last = read_rows(tmp_path / "soul.db")[-1]
    assert (last.prior, last.later) == ("", "")  # no session, no neighbours


@pytest.mark.parametrize("sizes", [[9], [1, 8], [3, 3, 3], [2, 1, 1, 5]])
async def test_batches_of_any_size_index_the_same_rows(tmp_path: Path, sizes: list[int]) -> None:
    events = [*conversation(), event("Bo again, a late addition", "s1")]
    async with opened(tmp_path / "soul.db") as store:
        start = 0
        for size in sizes:
            await store.append(events[start : start + size])
            start += size
    expected = rows_of([e.session for e in events], [e.doc for e in events], 2)
    assert read_rows(tmp_path / "soul.db") == expected


async def test_statistics_kept_by_the_store_equal_a_fresh_read(tmp_path: Path) -> None:
    async with opened(tmp_path / "soul.db") as store:
        stats = await store.term_stats()
        for new in conversation():
            await store.append([new])
        assert await store.term_stats() is stats
        store.drop_caches()
        fresh = await store.term_stats()
    assert (stats.documents, stats.tokens) == (fresh.documents, fresh.tokens)
    for _, _, text, _ in TURNS:
        for term in tokens(text):
            assert stats.df(term) == fresh.df(term), term


async def test_fts5_scores_with_context_equal_exact_bm25(tmp_path: Path) -> None:
    async with opened(tmp_path / "soul.db") as store:
        await store.append(conversation())
        stats = await store.term_stats()
        for query in ["research adoption", "race shelter run", "painting lake sunrise"]:
            terms = query_terms(query)
            found = await store.candidates(fts_match(terms), 50, CONFIG.context_weight)
            assert found
            for c in found:
                context = f"{c.prior} {c.later}".split()
                ours = stats.score(terms, c.doc.split(), context, CONFIG.context_weight)
                assert math.isclose(ours, c.score, rel_tol=1e-6, abs_tol=1e-12), (query, c)


async def test_recall_is_exact_bm25_over_text_and_context(tmp_path: Path) -> None:
    # Over the memories that hold a query term themselves: the others' neighbours may
    # hold it, but that alone brings nothing (no query here names a speaker).
    events = conversation()
    rows = rows_of([e.session for e in events], [e.doc for e in events], 2)
    stats = TermStats({}, documents=0, tokens=0)
    stats.add(row.tokens() for row in rows)
    async with opened(tmp_path / "soul.db") as store:
        await store.append(events)
        for query in ["researching", "family adoption", "how far did you run", "lake"]:
            terms = [t for t in query_terms(query) if stats.df(t)]
            expected = sorted(
                (
                    (
                        r.memory_id,
                        stats.score(
                            terms,
                            r.doc.split(),
                            f"{r.prior} {r.later}".split(),
                            PLAIN.context_weight,
                        ),
                    )
                    for r in rows
                    if not set(terms).isdisjoint(r.doc.split())
                ),
                key=lambda pair: (-pair[1], pair[0]),
            )
            expected = [(m, round(s, 6)) for m, s in expected if s > 0][:5]
            found = await recall(store, await store.term_stats(), PLAIN, query, 5)
            assert [(i.id, i.score) for i in found.items] == expected, query


async def test_a_reply_is_found_by_the_question_it_answers(tmp_path: Path) -> None:
    async with opened(tmp_path / "soul.db") as store:
        await store.append(conversation())
        found = await recall(
            store, await store.term_stats(), CONFIG, "What has Ada been researching?", 3
        )
    texts = [item.text for item in found.items]
    # The question says "researching"; Ada's answer right after it comes next: said by
    # the person the query names, it matches the query, and its neighbour lifts it.
    assert texts[:2] == [TURNS[0][2], TURNS[1][2]]


async def test_neighbours_alone_bring_nothing(tmp_path: Path) -> None:
    async with opened(tmp_path / "soul.db") as store:
        await store.append(conversation())
        found = await recall(store, await store.term_stats(), CONFIG, "researching", 3)
    # Nobody is named and only the question holds the word: the rows around it (the
    # answer, the cheer after it) hold it only as context, so they do not come.
    assert [item.text for item in found.items] == [TURNS[0][2]]


async def test_without_context_a_reply_is_not_found_by_its_question(tmp_path: Path) -> None:
    async with opened(tmp_path / "soul.db", turns=0) as store:
        await store.append(conversation())
        found = await recall(store, await store.term_stats(), CONFIG, "researching", 3)
    assert [item.text for item in found.items] == [TURNS[0][2]]


async def test_context_never_crosses_sessions(tmp_path: Path) -> None:
    async with opened(tmp_path / "soul.db") as store:
        await store.append(conversation())
        found = await recall(store, await store.term_stats(), CONFIG, "painting sunrise", 8)
    assert {item.text for item in found.items} <= {t for s, _, t, _ in TURNS if s == "s1"}


async def test_a_memory_said_by_the_person_the_query_names_ranks_higher(tmp_path: Path) -> None:
    async with opened(tmp_path / "soul.db") as store:
        await store.append(conversation())
        stats = await store.term_stats()
        query = "What did Bo say about how far he ran?"
        plain = await recall(store, stats, PLAIN, query, 8, explain=True)
        cued = await recall(store, stats, CONFIG, query, 8, explain=True)
    # Ada names Bo when she speaks to him; the boost goes to what Bo said (his race, or
    # his answer to "how far did you run?", which holds "far").
    assert plain.items[0].text == "Ada is proud of you, Bo."
    assert cued.items[0].text in {
        "I ran a charity race for the shelter last Sunday.",
        "Ten kilometres, my best so far.",
    }
    top = cued.items[0].explain
    assert top is not None
    assert top.speaker == 1 + CONFIG.speaker_boost
    assert any("said by Bo" in reason for reason in top.reasons)
    assert cued.items[0].score == pytest.approx(top.bm25 * top.speaker * top.time, rel=1e-5)


async def test_a_linked_person_is_named_whatever_account_they_wrote_from(
    tmp_path: Path,
) -> None:
    events = [
        msgspec.structs.replace(event("The garden needs water", "t", "tg:77"), person="Ada"),
        event("Ada, the garden needs water", "t", "Bo"),
    ]
    async with opened(tmp_path / "soul.db") as store:
        await store.append(events)
        stats = await store.term_stats()
        plain = await recall(store, stats, PLAIN, "What did Ada say about the garden?", 2)
        found = await recall(store, stats, CONFIG, "What did Ada say about the garden?", 2)
    assert plain.items[0].text == "Ada, the garden needs water"
    assert found.items[0].text == "The garden needs water"


async def test_a_memory_from_the_day_the_query_names_ranks_higher(tmp_path: Path) -> None:
    events = [
        event("Planted tomatoes in the garden", "a", "Ada", MAY_8),
        event("Planted tomatoes in the garden again", "b", "Ada", JUNE_20),
    ]
    async with opened(tmp_path / "soul.db") as store:
        await store.append(events)
        stats = await store.term_stats()
        undated = await recall(store, stats, CONFIG, "planted tomatoes", 2)
        may = await recall(store, stats, CONFIG, "planted tomatoes on 8 May, 2023", 2, explain=True)
        june = await recall(store, stats, CONFIG, "planted tomatoes in June 2023", 2, explain=True)
    # Undated, the two hold the same words, one barely more densely: a near-tie, which
    # the later one wins. A date in the query decides.
    assert undated.items[0].text == "Planted tomatoes in the garden again"
    assert may.items[0].text == "Planted tomatoes in the garden"
    assert may.items[0].explain is not None
    assert may.items[0].explain.time == 1 + CONFIG.date_boost
    assert june.items[0].text == "Planted tomatoes in the garden again"
    assert june.items[0].explain is not None
    assert june.items[0].explain.time == 1 + CONFIG.period_boost
    assert any("June 2023" in reason for reason in june.items[0].explain.reasons)


async def test_relative_dates_count_from_now(tmp_path: Path) -> None:
    events = [
        event("Fixed the boiler", "a", None, MAY_8),
        event("Fixed the boiler once more", "b", None, JUNE_20),
    ]
    async with opened(tmp_path / "soul.db") as store:
        await store.append(events)
        stats = await store.term_stats()
        day_after = MAY_8 + 86_400
        found = await recall(store, stats, CONFIG, "fixed the boiler yesterday", 2, now=day_after)
    assert found.items[0].text == "Fixed the boiler"


async def test_explanations_add_up_and_name_the_context(tmp_path: Path) -> None:
    async with opened(tmp_path / "soul.db") as store:
        await store.append(conversation())
        stats = await store.term_stats()
        bare = await recall(store, stats, CONFIG, "researching adoption", 3)
        found = await recall(store, stats, CONFIG, "researching adoption", 3, explain=True)
    assert [i.id for i in bare.items] == [i.id for i in found.items]
    assert all(item.explain is None for item in bare.items)
    for item in found.items:
        why = item.explain
        assert why is not None
        assert why.bm25 == pytest.approx(sum(t.score for t in why.terms), abs=1e-5)
        assert item.score == pytest.approx(why.bm25 * why.speaker * why.time, abs=1e-5)
        assert 0 <= why.context <= why.bm25 + 1e-9
        assert item.relevance == pytest.approx(
            min(why.lexical * why.speaker * why.time, 1.0), abs=1e-3
        )
        assert why.reasons[0].startswith(f"relevance {item.relevance:.3f}: lexical ")
        assert why.reasons[1].startswith("bm25 ")
    answer = next(i for i in found.items if i.text == TURNS[1][2])
    assert answer.explain is not None
    research = next(t for t in answer.explain.terms if t.term == "research")
    assert (research.text, research.context) == (0, 1)  # only in the question before it
    assert answer.explain.context > 0


def test_an_unexplained_item_keeps_the_wire_format() -> None:
    item = RecallItem(id=1, kind="observation", text="x", score=1.0, via="bm25", refs=[])
    wire = msgspec.json.decode(msgspec.json.encode(RecallResult([item])))
    assert wire == {
        "items": [
            {"id": 1, "kind": "observation", "text": "x", "score": 1.0, "via": "bm25", "refs": []}
        ]
    }


async def test_forgetting_a_memory_removes_its_words_from_its_neighbours(tmp_path: Path) -> None:
    from souls.actor.rights import DataRights
    from souls.mind.somatic import SomaticConfig

    async with opened(tmp_path / "soul.db") as store:
        await store.append(conversation())
        rights = DataRights(store, SomaticConfig())
        await rights.forget([2], now=0.0)  # "Adoption agencies, mostly..."
        store.drop_caches()
        found = await recall(store, await store.term_stats(), CONFIG, "adoption agencies", 5)
    assert found.items == []
    events = [e for i, e in enumerate(conversation()) if i != 1]
    expected = rows_of([e.session for e in events], [e.doc for e in events], 2)
    ids = [1, *range(3, 9)]
    assert read_rows(tmp_path / "soul.db") == [
        neighbours.Row(memory_id, row.doc, row.prior, row.later)
        for memory_id, row in zip(ids, expected, strict=True)
    ]


async def test_the_migration_indexes_existing_memories_with_their_neighbours(
    tmp_path: Path,
) -> None:
    path = tmp_path / "soul.db"
    events = conversation()
    with closing(sqlite3.connect(path, isolation_level=None)) as db:
        db.execute("CREATE TABLE migrations (name TEXT PRIMARY KEY, applied_at REAL NOT NULL)")
        for name, sql in MIGRATIONS:
            if name.endswith("_context"):
                break
            db.executescript(sql)
            db.execute("INSERT INTO migrations VALUES (?, 0)", (name,))
        for i, e in enumerate(events, start=1):
            db.execute(
                "INSERT INTO events (id, kind, session, ts, recorded, salience, text)"
                " VALUES (?, 'message', ?, 0, 0, 0.5, ?)",
                (i, e.session, e.text),
            )
            db.execute(
                "INSERT INTO memories (id, kind, event_id, text, salience, created)"
                " VALUES (?, 'observation', ?, ?, 0.5, 0)",
                (i, i, e.text),
            )
            db.execute("INSERT INTO memory_fts (rowid, doc) VALUES (?, ?)", (i, e.doc))
    async with opened(path) as store:
        stats = await store.term_stats()
        assert stats.documents == len(events)
    assert read_rows(path) == rows_of([e.session for e in events], [e.doc for e in events], 2)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"context_turns": -1},
        {"context_turns": neighbours.MAX_TURNS + 1},
        {"context_weight": 1.5},
        {"speaker_boost": -0.1},
        {"date_boost": -1.0},
    ],
)
def test_context_and_cue_settings_are_validated(kwargs: dict[str, float]) -> None:
    with pytest.raises(ValueError, match="must be"):
        RecallConfig(**kwargs)  # type: ignore[arg-type]
