"""The cache of recalled rows is bounded by the bytes its rows take, not by their count."""

from __future__ import annotations

import sys

from souls.recall.recall import HitCache
from souls.store.store import Hit


def _hit(memory_id: int, text: str) -> Hit:
    return Hit(memory_id, "observation", text, 0.5, 1.0, None, memory_id)


def _cost(text: str) -> int:
    return sys.getsizeof(text) + HitCache._ENTRY


def test_short_rows_are_all_kept_where_long_ones_push_the_oldest_out() -> None:
    short = "deploy ok"
    cache = HitCache(budget=100 * _cost(short))
    for i in range(100):
        cache.put(_hit(i, short))
    assert len(cache) == 100
    assert all(cache.get(i) is not None for i in range(100))
    long = "x" * 20_000
    cache.put(_hit(1000, long))
    # The long row takes the room of many short ones: the least recently used went,
    # as few as make room.
    assert cache.get(1000) is not None
    assert cache.used <= 100 * _cost(short)
    gone = [i for i in range(100) if cache.get(i) is None]
    assert len(gone) == -(-_cost(long) // _cost(short)) > 40
    assert gone == list(range(len(gone)))


def test_a_row_put_again_is_counted_once_and_becomes_the_most_recent() -> None:
    text = "the cat is called Mochi"
    cache = HitCache(budget=3 * _cost(text))
    for i in range(3):
        cache.put(_hit(i, text))
    cache.put(_hit(0, text))  # again: no second charge, and now the most recent
    assert cache.used == 3 * _cost(text)
    cache.put(_hit(3, text))
    assert cache.get(1) is None  # the least recently used went, not 0
    assert [cache.get(i) is not None for i in (0, 2, 3)] == [True, True, True]
    assert cache.used == 3 * _cost(text)


def test_a_row_larger_than_the_whole_budget_is_kept_alone() -> None:
    cache = HitCache(budget=1000)
    cache.put(_hit(1, "small"))
    cache.put(_hit(2, "y" * 5000))
    assert cache.get(2) is not None
    assert cache.get(1) is None
    assert len(cache) == 1
