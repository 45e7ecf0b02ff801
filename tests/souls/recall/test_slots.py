# ruff: noqa: RUF001  (full-width punctuation is part of the Chinese texts under test)
from __future__ import annotations

import pytest

from souls.recall.slots import asked_slots
from souls.store.bm25 import TermStats
from souls.text.tokenize import query_terms

STATS = TermStats({"work": 40, "picnic": 2}, documents=100, tokens=1000)


@pytest.mark.parametrize(
    ("query", "slots"),
    [
        ("who is my employer?", ("employer",)),
        ("which company does she work for?", ("employer",)),
        ("what's her phone number", ("phone",)),
        ("which city did she relocate to?", ("location",)),
        ("她在哪家公司？", ("employer",)),
        ("她的宠物叫什么名字？", ("pet_name",)),
    ],
)
def test_a_word_naming_a_slot_asks_for_it(query: str, slots: tuple[str, ...]) -> None:
    asked = asked_slots(query_terms(query), STATS)
    assert asked is not None
    assert asked.slots == slots
    assert 0 < asked.share <= 1


@pytest.mark.parametrize("query", ["where do I work?", "any news?", "我住在哪里？", ""])
def test_everyday_words_name_no_slot(query: str) -> None:
    assert asked_slots(query_terms(query), STATS) is None


def test_the_share_is_the_naming_words_part_of_the_querys_evidence() -> None:
    alone = asked_slots(query_terms("employer"), STATS)
    mixed = asked_slots(query_terms("employer picnic"), STATS)
    assert alone is not None
    assert mixed is not None
    assert alone.share == 1.0
    assert 0.3 < mixed.share < 0.7
