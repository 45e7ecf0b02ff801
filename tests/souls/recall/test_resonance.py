# ruff: noqa: RUF001  (full-width punctuation is part of the Chinese texts under test)
"""Resonance R is the share of the *whole* query the best item holds (DESIGN §3.5): words
no memory holds count too, and a word in nearly every memory counts next to nothing.
So a query the soul knows little of is small talk, answered in emergence mode (the
promise never kept), and only a query the memories really hold is retrieval."""

from __future__ import annotations

from pathlib import Path

from conftest import MAILBOX_HYGIENE
from recall_chat import T0, recalled, soul_running

from souls.actor.clock import FixedClock
from souls.recall.assembly import Query, lexical
from souls.store.bm25 import TermStats
from souls.text.tokenize import query_terms, tokens

pytestmark = MAILBOX_HYGIENE


async def modes(tmp_path: Path, queries: list[str]) -> dict[str, tuple[str, list[str], str]]:
    """Each query's context after a week of chat: (mode, labels injected, its text)."""
    clock = FixedClock(T0)
    found = {}
    async with soul_running(tmp_path, clock) as talk:
        await talk.play()
        clock.advance(3600)
        for query in queries:
            context = await talk.context(query, session="sun")
            found[query] = ((await talk.why()).mode, recalled(context), context.text)
            clock.advance(60)
    return found


async def test_a_query_of_words_nobody_said_is_emergence(tmp_path: Path) -> None:
    # One memory says "today"; the other three words are in none.
    query = "xylophone quantum zebra today"
    (mode, shown, text) = (await modes(tmp_path, [query]))[query]
    assert mode == "emergence"
    # What emerges is what is pending: the promise to call grandma, the open question.
    assert "call grandma this weekend" in text
    assert shown[0].startswith(("c", "q"))


async def test_one_common_character_does_not_make_small_talk_a_retrieval(
    tmp_path: Path,
) -> None:
    # 好 is in several of Lin's lines (好烦, 不过...); 累 in none of them.
    found = await modes(tmp_path, ["今天好累", "好累啊"])
    for query, (mode, shown, text) in found.items():
        assert mode == "emergence", query
        # Tired: what comes up first is what is owed (seed 002's 今天好累).
        assert shown[0].startswith(("c", "q")), query
        assert "call grandma this weekend" in text, query


async def test_a_query_the_memories_hold_is_retrieval(tmp_path: Path) -> None:
    found = await modes(tmp_path, ["Tuanzi vet kidney", "how did Tuanzi's bloodwork go?"])
    for query, (mode, shown, _) in found.items():
        assert mode == "retrieval", query
        assert shown, query


def test_the_ideal_score_counts_the_words_no_memory_holds() -> None:
    docs = [
        "tuanzi drank a lot today",
        "the vet checked her kidney",
        "we moved flats, the boxes are everywhere",
        "oolong tea again, the roasted kind",
        "pottery class was messy",
        "priya moved the deadline",
    ]
    stats = TermStats({}, documents=0, tokens=0)
    stats.add(tokens(doc) for doc in docs)
    known = query_terms("today")
    whole = query_terms("xylophone quantum zebra today")
    best = stats.score(known, tokens(docs[0]))
    assert best / stats.ideal(known) > 0.5  # measured against the known word alone
    assert best / stats.ideal(whole) < 0.2  # against the whole query
    assert stats.weight("xylophon") > stats.weight("today") > stats.weight("the") > 0
    # A word in every memory is no evidence: a query of only such words holds nothing
    # anyone could match (R = 0 whatever the memory).
    notes = TermStats({}, documents=0, tokens=0)
    notes.add(tokens(f"Tuanzi {doc}") for doc in docs)
    assert notes.weight("tuanzi") == 0.0
    assert notes.ideal(["tuanzi"]) == 0.0
    assert notes.resonance(["tuanzi"], tokens(f"Tuanzi {docs[0]}")) == 0.0


def test_an_entry_holds_the_query_by_idf_not_by_count() -> None:
    # 好 is in most memories (no evidence), 累 and 好累 in none (the most there is).
    idf = {"好": 0.0, "累": 3.0, "好累": 3.0}.__getitem__
    query = Query.of("好累", idf)
    assert lexical(query, "我很好，谢谢") == 0.0
    assert lexical(query, "搬家好累") == 1.0
    assert Query.of("好累").share(["好"]) == 1 / 3  # without idf, terms count alike
    assert not Query.of("   ")
