"""The vector index: the numpy matrix search gives the pure-Python brute force's answer
(same memories, same order, ties to the later memory, cosines within float32 rounding),
and stays right as vectors are added, replaced and dropped (a forgotten memory is never
found again, the row that filled its place is found under its own id)."""

from __future__ import annotations

import random
import statistics
from array import array

import pytest

from souls.embed.vectors import VectorIndex, unit

DIMENSIONS = 24


def _vector(rng: random.Random) -> array[float]:
    made = unit([rng.gauss(0, 1) for _ in range(DIMENSIONS)])
    assert made is not None
    return made


def _brute(vectors: dict[int, array[float]], query: array[float], n: int) -> list[int]:
    scored = sorted(
        ((sum(float(a) * float(b) for a, b in zip(query, v, strict=True)), m)
         for m, v in vectors.items()),
        reverse=True,
    )  # fmt: skip
    return [m for _, m in scored[:n]]


def test_numpy_is_the_search_where_it_is_installed() -> None:
    pytest.importorskip("numpy")
    assert VectorIndex("m", DIMENSIONS).search == "numpy"
    assert VectorIndex("m", DIMENSIONS, numpy=False).search == "python"


@pytest.mark.parametrize("seed", range(5))
def test_the_matrix_search_equals_brute_force_through_puts_and_drops(seed: int) -> None:
    pytest.importorskip("numpy")
    rng = random.Random(seed)
    fast = VectorIndex("m", DIMENSIONS)
    slow = VectorIndex("m", DIMENSIONS, numpy=False)
    truth: dict[int, array[float]] = {}
    for step in range(400):
        action = rng.random()
        if action < 0.6 or not truth:
            memory_id = rng.randrange(1, 300)  # sometimes an id already there: replaced
            vector = _vector(rng)
            truth[memory_id] = vector
            fast.put(memory_id, vector)
            slow.put(memory_id, vector)
        elif action < 0.85:
            gone = rng.sample(sorted(truth), min(len(truth), rng.randint(1, 4)))
            for memory_id in gone:
                del truth[memory_id]
            fast.drop(gone)
            slow.drop(gone)
        if step % 20 == 0 or action >= 0.85:
            query = _vector(rng)
            n = rng.choice([1, 5, 50, 1000])
            found = fast.nearest(query, n)
            assert list(found) == list(slow.nearest(query, n)) == _brute(truth, query, n)
            expected = slow.nearest(query, n)
            assert all(found[m] == pytest.approx(expected[m], abs=1e-5) for m in found)
            # The spread of the query's cosines over every vector, as recall weighs them.
            cosines = [sum(a * b for a, b in zip(query, v, strict=True)) for v in truth.values()]
            for near in (fast.near(query, n), slow.near(query, n)) if cosines else ():
                assert near.mean == pytest.approx(statistics.fmean(cosines), abs=1e-5)
                assert near.spread == pytest.approx(statistics.pstdev(cosines), abs=1e-5)
    assert len(fast) == len(slow) == len(truth)
    assert sorted(fast.ids()) == sorted(truth)


def test_ties_go_to_the_later_memory_and_a_dropped_one_is_never_found() -> None:
    pytest.importorskip("numpy")
    same = unit([1.0] + [0.0] * (DIMENSIONS - 1))
    other = unit([0.0, 1.0] + [0.0] * (DIMENSIONS - 2))
    assert same is not None
    assert other is not None
    for index in (VectorIndex("m", DIMENSIONS), VectorIndex("m", DIMENSIONS, numpy=False)):
        for memory_id in (3, 9, 5, 7):
            index.put(memory_id, same)
        index.put(8, other)
        assert list(index.nearest(same, 2)) == [9, 7]  # four ties: the two latest
        index.drop([9, 3])
        assert 9 not in index
        assert 8 in index
        assert list(index.nearest(same, 10)) == [7, 5, 8]
        assert list(index.nearest(other, 1)) == [8]  # moved into a freed row, same id
        index.put(4, array("f", [1.0] * 3))  # another length: not this model's
        assert 4 not in index


def test_the_matrix_grows_past_its_first_rows() -> None:
    pytest.importorskip("numpy")
    rng = random.Random(1)
    index = VectorIndex("m", DIMENSIONS)
    vectors = {m: _vector(rng) for m in range(1, 1001)}
    for memory_id, vector in vectors.items():
        index.put(memory_id, vector)
    for memory_id in (1, 500, 1000):
        assert next(iter(index.nearest(vectors[memory_id], 1))) == memory_id
    assert index.cells == 1000 * DIMENSIONS
