"""Exact BM25 (checked against SQLite FTS5's own bm25()) and two-stage recall over a real store."""

from __future__ import annotations

import math
import random
import sqlite3
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager, closing
from pathlib import Path

import anyio
import pytest

from souls.recall.recall import RecallConfig, Recollection, recall
from souls.results import RecallItem
from souls.store.bm25 import TermStats
from souls.store.store import NewEvent, Store
from souls.text.tokenize import fts_document, fts_match, query_terms, tokens

CORPUS = [
    "The database migration failed at midnight with a lock timeout",
    "Ada deployed the new database schema; the migration ran twice",
    "Lunch with Ada at noon, then a long walk by the river",
    "Deploy deploy deploy: the pipeline is stuck again",
    "数据库迁移失败了\uff0c需要回滚",
    "明天中午和Ada吃午饭",
    "The river flooded the old mill and the mill road",
    "Remember to renew the TLS certificate before Friday",
    "Certificate renewal failed: the ACME challenge timed out",
    "A short note",
    "The cat sat on the mat and the cat slept on the mat all afternoon long",
    "Database backups run nightly; restore drills run monthly",
]

QUERIES = [
    "database",
    "database migration",
    "the",  # in most documents: idf below zero, floored like FTS5 does
    "deploy pipeline stuck",
    "river mill",
    "cat mat afternoon",
    "数据库 迁移",
    "Ada lunch noon",
    "certificate failed timed out",
]

DEFAULT = RecallConfig()
# Common terms prune candidates even on these small test indexes (no floor).
PRUNING = RecallConfig(common_term_share=0.05, common_term_floor=0)
# ... and relevance alone orders (no near-ties: equal relevance only).
EXACT_ORDER = RecallConfig(common_term_share=0.05, common_term_floor=0, near_tie=0.0)


def new_event(text: str, ref: str | None = None) -> NewEvent:
    return NewEvent(
        ref=ref, kind="message", channel=None, sender=None, group=None, mentioned=False,
        session=None, ts=0.0, recorded=0.0, salience=0.5, text=text, doc=fts_document(text),
    )  # fmt: skip


@asynccontextmanager
async def store_with(path: Path, texts: Sequence[str]) -> AsyncIterator[Store]:
    with anyio.fail_after(20):
        store = await Store.open(path)
        try:
            await store.append([new_event(t, f"r-{i}") for i, t in enumerate(texts)])
            yield store
        finally:
            await store.close()


def stats_of(texts: Sequence[str]) -> TermStats:
    stats = TermStats({}, documents=0, tokens=0)
    stats.add(tokens(t) for t in texts)
    return stats


def fts5_scores(texts: Sequence[str], terms: Sequence[str]) -> dict[int, float]:
    """rowid (1-based) → FTS5's own BM25 score (higher is better) for ``terms`` OR'ed."""
    with closing(sqlite3.connect(":memory:")) as db:
        db.execute("CREATE VIRTUAL TABLE t USING fts5 (doc, tokenize = 'ascii')")
        db.executemany(
            "INSERT INTO t (rowid, doc) VALUES (?, ?)",
            [(i + 1, fts_document(text)) for i, text in enumerate(texts)],
        )
        rows = db.execute("SELECT rowid, -bm25(t) FROM t WHERE t MATCH ?", (fts_match(terms),))
        return dict(rows.fetchall())


def exact_top_k(texts: Sequence[str], query: str, k: int) -> list[tuple[int, float]]:
    """Brute force: every document scored by BM25, best first; on ties (these memories
    are equally salient and said at the same time) the one stored later."""
    stats = stats_of(texts)
    terms = [t for t in query_terms(query) if stats.df(t)]
    scored = [(i + 1, stats.score(terms, tokens(text))) for i, text in enumerate(texts)]
    ranked = sorted((pair for pair in scored if pair[1] > 0), key=lambda p: (-p[1], -p[0]))
    return [(memory_id, round(score, 6)) for memory_id, score in ranked[:k]]


def most_relevant(texts: Sequence[str], query: str, k: int) -> list[int]:
    """Brute force: the ids of the ``k`` most relevant documents (relevance over the
    whole query, see souls.recall.recall), ties to the one stored later."""
    stats = stats_of(texts)
    asked = query_terms(query)
    scored = [
        (i + 1, stats.resonance(asked, tokens(text), positive=True)) for i, text in enumerate(texts)
    ]
    ranked = sorted((p for p in scored if round(p[1], 3) > 0), key=lambda p: (-p[1], -p[0]))
    return [memory_id for memory_id, _ in ranked[:k]]


def ids_and_scores(items: Sequence[RecallItem]) -> list[tuple[int, float]]:
    return [(item.id, item.score) for item in items]


@pytest.mark.parametrize("query", QUERIES)
def test_score_equals_fts5_bm25(query: str) -> None:
    terms = query_terms(query)
    stats = stats_of(CORPUS)
    expected = fts5_scores(CORPUS, terms)
    assert expected, "the query must match something for the comparison to mean anything"
    for rowid, fts5 in expected.items():
        ours = stats.score(terms, tokens(CORPUS[rowid - 1]))
        assert math.isclose(ours, fts5, rel_tol=1e-6, abs_tol=1e-12), (rowid, ours, fts5)
    # Documents FTS5 does not match score nothing.
    for index, text in enumerate(CORPUS):
        if index + 1 not in expected:
            assert stats.score(terms, tokens(text)) == 0.0


async def test_store_statistics_reproduce_the_scores_fts5_ranks_by(tmp_path: Path) -> None:
    async with store_with(tmp_path / "soul.db", CORPUS) as store:
        stats = await store.term_stats()
        for query in QUERIES:
            terms = query_terms(query)
            found = await store.candidates(fts_match(terms), 100)
            assert found
            for candidate in found:
                ours = stats.score(terms, candidate.doc.split())
                assert math.isclose(ours, candidate.score, rel_tol=1e-6, abs_tol=1e-12), query


async def test_added_documents_keep_statistics_equal_to_a_fresh_read(tmp_path: Path) -> None:
    async with store_with(tmp_path / "soul.db", CORPUS[:5]) as store:
        stats = await store.term_stats()
        await store.append([new_event(t) for t in CORPUS[5:]])  # the store keeps them
        store.drop_caches()
        fresh = await store.term_stats()
    assert fresh is not stats
    assert (stats.documents, stats.tokens) == (fresh.documents, fresh.tokens)
    for text in CORPUS:
        for term in tokens(text):
            assert stats.df(term) == fresh.df(term), term


def test_idf_is_floored_for_terms_in_most_documents() -> None:
    stats = TermStats({"common": 9, "rare": 1}, documents=10, tokens=100)
    assert stats.idf("common") == 1e-6
    assert stats.idf("rare") == pytest.approx(math.log((10 - 1 + 0.5) / 1.5))
    assert stats.idf("absent") == pytest.approx(math.log(10.5 / 0.5))


def test_score_of_nothing_is_zero() -> None:
    assert TermStats({}, documents=0, tokens=0).score(["a"], ["a"]) == 0.0
    assert TermStats({"a": 1}, documents=1, tokens=1).score(["a"], []) == 0.0
    assert TermStats({"a": 1}, documents=1, tokens=1).score(["b"], ["a"]) == 0.0


def test_discriminating_picks_the_rare_terms_in_query_order() -> None:
    stats = TermStats({"common": 50, "rare": 2, "rarer": 1, "edge": 5}, documents=100, tokens=1)
    # At most 5 % of 100 documents: "edge" (exactly 5) counts as rare.
    assert stats.discriminating(["rarer", "common", "edge", "rare"], 0.05, 0) == [
        "rarer",
        "edge",
        "rare",
    ]
    assert stats.discriminating(["common"], 0.5, 0) == ["common"]


def test_discriminating_floor_keeps_every_term_of_a_small_index() -> None:
    stats = TermStats({"common": 50, "rare": 2}, documents=100, tokens=1)
    # 5 % of 100 is 5 documents, but the floor says up to 60 documents is still rare.
    assert stats.discriminating(["common", "rare"], 0.05, 60) == ["common", "rare"]
    assert stats.discriminating(["common", "rare"], 0.05, 49) == ["rare"]


def test_discriminating_falls_back_to_the_rarest_term() -> None:
    stats = TermStats({"a": 60, "b": 30, "c": 40}, documents=100, tokens=1)
    assert stats.discriminating(["a", "c", "b"], 0.05, 0) == ["b"]
    assert stats.discriminating(["a"], 0.05, 0) == ["a"]


async def test_recall_is_exact_bm25_top_k_on_a_small_index(tmp_path: Path) -> None:
    queries = [
        "database",
        "database migration",  # two terms, both in several of the 12 memories
        "the database migration failed",
        "Ada river",
        "certificate failed timed out",
        "数据库 迁移",
    ]
    wrong: dict[tuple[str, int], list[tuple[int, float]]] = {}
    async with store_with(tmp_path / "soul.db", CORPUS) as store:
        stats = await store.term_stats()
        for query in queries:
            for k in (1, 3, 5, 12):
                items = ids_and_scores((await recall(store, stats, DEFAULT, query, k)).items)
                if items != exact_top_k(CORPUS, query, k):
                    wrong[query, k] = items
    assert wrong == {}


async def test_small_index_multi_term_query_finds_memories_with_either_term(
    tmp_path: Path,
) -> None:
    texts = [
        "apple pie recipe",
        "apple cider",
        "banana bread",
        "banana split with banana",
        "cherry tart",
        "banana apple smoothie",
        "grape",
        "melon",
    ]
    async with store_with(tmp_path / "soul.db", texts) as store:
        items = (await recall(store, await store.term_stats(), DEFAULT, "apple banana", 10)).items
    # A soul with eight memories asked about apples and bananas recalls all five of them.
    assert {item.text for item in items} == {t for t in texts if "apple" in t or "banana" in t}
    assert ids_and_scores(items) == exact_top_k(texts, "apple banana", 10)


async def test_recall_is_exact_for_discriminating_queries_on_a_larger_index(
    tmp_path: Path,
) -> None:
    rng = random.Random(20261129)
    filler = [f"w{i}" for i in range(400)]
    texts = [" ".join(rng.choices(filler, k=rng.randint(3, 30))) for _ in range(300)]
    queries = ["w7 w123", "w42", "w1 w2 w3 w4", "w399 w0 w250"]
    async with store_with(tmp_path / "soul.db", texts) as store:
        stats = await store.term_stats()
        for query in queries:
            terms = query_terms(query)
            # Each term is in at most 5 % of the memories, so all of them fetch candidates.
            assert stats.discriminating(terms, PRUNING.common_term_share, 0) == terms
            items = (await recall(store, stats, EXACT_ORDER, query, 10)).items
            assert [item.id for item in items] == most_relevant(texts, query, 10), query
            # Each item's score is its exact BM25.
            exact = dict(exact_top_k(texts, query, len(texts)))
            assert all(item.score == exact[item.id] for item in items), query


async def test_common_terms_rerank_the_candidates_of_rare_ones(tmp_path: Path) -> None:
    # "status" is in a quarter of the memories, so only the rare "outage" fetches
    # candidates; the common term still counts in their scores.
    texts = [f"weekly report number {i}" for i in range(30)]
    texts += [f"status report {i}" for i in range(10)]
    texts += ["outage in the north region", "outage status status", "outage status"]
    async with store_with(tmp_path / "soul.db", texts) as store:
        stats = await store.term_stats()
        assert stats.discriminating(query_terms("status outage"), 0.05, 0) == ["outag"]
        items = (await recall(store, stats, PRUNING, "status outage", 3)).items
    # Scored by both terms (exact_top_k), not by the probe term alone.
    assert ids_and_scores(items) == exact_top_k(texts, "status outage", 3)
    assert [item.text for item in items][2] == "outage in the north region"


async def test_recall_is_deterministic(tmp_path: Path) -> None:
    async with store_with(tmp_path / "soul.db", CORPUS) as store:
        stats = await store.term_stats()
        first = await recall(store, stats, DEFAULT, "the database migration", 5)
        second = await recall(store, stats, DEFAULT, "the database migration", 5)
    assert first == second
    assert first.items


async def test_ties_go_to_the_memory_stored_last(tmp_path: Path) -> None:
    # Equally salient, all said at the same time: the one stored last comes first.
    texts = ["unrelated words here", "zebra crossing", "other stuff", "zebra crossing"]
    texts += ["zebra crossing"] * 3
    async with store_with(tmp_path / "soul.db", texts) as store:
        stats = await store.term_stats()
        all_of_them = (await recall(store, stats, DEFAULT, "zebra", 10)).items
        two = (await recall(store, stats, DEFAULT, "zebra", 2)).items
    assert [item.id for item in all_of_them] == [7, 6, 5, 4, 2]
    assert len({item.score for item in all_of_them}) == 1
    assert len({item.relevance for item in all_of_them}) == 1
    assert [item.id for item in two] == [7, 6]


async def test_items_carry_text_kind_refs_and_provenance(tmp_path: Path) -> None:
    async with store_with(tmp_path / "soul.db", CORPUS) as store:
        items = (await recall(store, await store.term_stats(), DEFAULT, "river flooded", 1)).items
    assert items == [
        RecallItem(
            id=7,
            kind="observation",
            text=CORPUS[6],
            score=items[0].score,
            via="bm25",
            refs=["r-6"],
            relevance=items[0].relevance,
        )
    ]
    assert items[0].score > 0
    assert 0 < items[0].relevance <= 1


@pytest.mark.parametrize("query", ["", "   ", "?!", "the of and", "giraffe", "長頸鹿"])
async def test_queries_that_match_nothing_recall_nothing(tmp_path: Path, query: str) -> None:
    texts = ["Deploying a database migration", "Lunch at noon", "数据库迁移失败"]
    async with store_with(tmp_path / "soul.db", texts) as store:
        found = await recall(store, await store.term_stats(), DEFAULT, query, 5)
    assert found == Recollection(items=[], competitors=[])


async def test_recall_on_an_empty_store_is_empty(tmp_path: Path) -> None:
    async with store_with(tmp_path / "soul.db", []) as store:
        found = await recall(store, await store.term_stats(), DEFAULT, "anything", 5)
    assert found == Recollection(items=[], competitors=[])


@pytest.mark.parametrize(
    "kwargs",
    [
        {"k": 0},
        {"k": 300},
        {"k": 5, "max_k": 4},
        {"common_term_share": 0.0},
        {"common_term_share": 1.5},
        {"candidates_per_result": 0},
    ],
)
def test_recall_config_is_validated(kwargs: dict[str, float]) -> None:
    with pytest.raises(ValueError, match="must be"):
        RecallConfig(**kwargs)  # type: ignore[arg-type]
