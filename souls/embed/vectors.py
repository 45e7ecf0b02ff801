"""Vectors: packed for the soul's SQLite file, and the nearest ones to a query.

A vector is stored as a BLOB of little-endian float32, unit length: 4 bytes a dimension
(a 384-dimension vector is 1.5 KiB; as JSON text it would be about 3.5 times that, and
parsed on every load), and the cosine of two is their dot product.

The soul keeps its vectors in memory once loaded (:class:`VectorIndex`) and searches
them exactly: with numpy (``soupd[semantic]``), as one float32 matrix kept up to date in
place (a new vector is a row appended, a forgotten one is replaced by the last row), a
search being one matrix-vector product and a partial sort (0.4 ms at 10k x 384 here);
without numpy, one Python dot product per memory (183 ms at 10k x 384). sqlite-vec
would search inside SQLite, but as a loadable extension it needs a Python whose sqlite3
allows extensions, and its exact search does the same product; the matrix is simpler
and as fast. numpy is imported only by a soul with an ``[embedding]`` provider: provider
``none`` never needs it.
"""

from __future__ import annotations

import importlib
import math
import operator
import sys
from array import array
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["Near", "VectorIndex", "pack", "unit", "unpack"]

_SWAP = sys.byteorder != "little"


def unit(values: Sequence[float]) -> array[float] | None:
    """``values`` scaled to unit length as float32; None when it has no direction (all
    zeros) or holds a NaN or an infinity."""
    norm = math.sqrt(math.fsum(v * v for v in values))
    if not norm or not math.isfinite(norm):
        return None
    return array("f", (v / norm for v in values))


def pack(vector: array[float]) -> bytes:
    if _SWAP:
        vector = array("f", vector)
        vector.byteswap()
    return vector.tobytes()


def unpack(blob: bytes) -> array[float]:
    vector = array("f")
    vector.frombytes(blob)
    if _SWAP:
        vector.byteswap()
    return vector


def _dot(a: array[float], b: array[float]) -> float:
    return float(sum(map(operator.mul, a, b)))


def _numpy() -> Any:
    """numpy, or None where it is not installed (the pure-Python search then)."""
    try:
        return importlib.import_module("numpy")
    except ImportError:
        return None


@dataclass(frozen=True, slots=True)
class Near:
    """The memories nearest to a query with their cosine (best first), and how the
    query's cosines with *every* memory of the soul spread: their mean and standard
    deviation. A cosine means something only against that spread — models differ in
    scale (MiniLM's related texts score 0.3-0.6, others' 0.8-0.9), and a model that does
    not know a language scores its texts all alike — so recall weighs each by its
    standing (:meth:`standing`, a z-score), not by its raw value."""

    cosines: dict[int, float]
    mean: float = 0.0
    spread: float = 0.0

    def standing(self, cosine: float) -> float:
        """How many standard deviations ``cosine`` lies above the mean (0 without a
        spread: a soul of one memory, or of identical ones)."""
        return (cosine - self.mean) / self.spread if self.spread > 1e-9 else 0.0


class VectorIndex:
    """The unit vectors of one soul's memories, by memory id, of one model. Exact
    search: every vector is compared, as a numpy matrix product when numpy is there
    (``search`` says which: "numpy" or "python"; ``numpy=False`` forces Python)."""

    def __init__(self, model: str, dimensions: int | None = None, *, numpy: bool = True) -> None:
        self.model = model
        self.dimensions = dimensions
        self._np: Any = _numpy() if numpy else None
        self.search = "python" if self._np is None else "numpy"
        # Python: the vectors by id. numpy: row i of _matrix is the vector of _ids[i].
        self._vectors: dict[int, array[float]] = {}
        self._row: dict[int, int] = {}
        self._ids: list[int] = []
        self._matrix: Any = None
        self._id_rows: Any = None  # _ids as a numpy array, row by row

    def __len__(self) -> int:
        return len(self._row) if self._np is not None else len(self._vectors)

    def __contains__(self, memory_id: object) -> bool:
        return memory_id in (self._row if self._np is not None else self._vectors)

    @property
    def cells(self) -> int:
        """Numbers compared by one search (vectors x dimensions)."""
        return len(self) * (self.dimensions or 0)

    def put(self, memory_id: int, vector: array[float]) -> None:
        """Add or replace ``memory_id``'s vector (one of another length is ignored)."""
        if self.dimensions is None:
            self.dimensions = len(vector)
        if len(vector) != self.dimensions:
            return
        np = self._np
        if np is None:
            self._vectors[memory_id] = vector
            return
        row = self._row.get(memory_id)
        if row is None:
            row = len(self._ids)
            if self._matrix is None or row == len(self._matrix):
                grown = np.zeros((max(64, 2 * row), self.dimensions), dtype=np.float32)
                grown_ids = np.zeros(len(grown), dtype=np.int64)
                if self._matrix is not None:
                    grown[:row] = self._matrix[:row]
                    grown_ids[:row] = self._id_rows[:row]
                self._matrix, self._id_rows = grown, grown_ids
            self._row[memory_id] = row
            self._ids.append(memory_id)
            self._id_rows[row] = memory_id
        self._matrix[row] = np.frombuffer(vector, dtype=np.float32)

    def ids(self) -> Iterable[int]:
        return list(self._ids) if self._np is not None else list(self._vectors)

    def drop(self, memory_ids: Iterable[int]) -> None:
        if self._np is None:
            for memory_id in memory_ids:
                self._vectors.pop(memory_id, None)
            return
        for memory_id in memory_ids:
            row = self._row.pop(memory_id, None)
            if row is None:
                continue
            last = len(self._ids) - 1
            moved = self._ids.pop()
            if row != last:  # the last row fills the hole
                self._matrix[row] = self._matrix[last]
                self._ids[row] = moved
                self._id_rows[row] = moved
                self._row[moved] = row

    def nearest(self, query: array[float], n: int) -> dict[int, float]:
        """The ``n`` memories most similar to ``query`` (a unit vector) with their
        cosine, most similar first; ties to the later memory. The same answer with
        numpy or without (cosines within float32 rounding)."""
        return self.near(query, n).cosines

    def near(self, query: array[float], n: int) -> Near:
        """:meth:`nearest`, with the spread of the query's cosines over every vector."""
        if len(query) != self.dimensions or n < 1:
            return Near({})
        np = self._np
        if np is None:
            scored = [(_dot(query, v), m) for m, v in self._vectors.items()]
            if not scored:
                return Near({})
            mean = math.fsum(c for c, _ in scored) / len(scored)
            spread = math.sqrt(math.fsum((c - mean) ** 2 for c, _ in scored) / len(scored))
            scored.sort(reverse=True)
            return Near({m: cosine for cosine, m in scored[:n]}, mean, spread)
        count = len(self._ids)
        if not count:
            return Near({})
        ids = self._id_rows[:count]
        # einsum's own loop, not BLAS: OpenBLAS's threads made one product 36 ms instead
        # of 0.6 ms on a busy 2-core machine (they spin waiting for cores).
        scores = np.einsum("ij,j->i", self._matrix[:count], np.frombuffer(query, np.float32))
        mean, spread = float(scores.mean()), float(scores.std())
        if n < count:
            # Every row scoring at least the n-th best: exact, ties included.
            cut = np.partition(scores, count - n)[count - n]
            chosen = np.flatnonzero(scores >= cut)
            ids, scores = ids[chosen], scores[chosen]
        order = np.lexsort((-ids, -scores))[:n]  # best first; ties: the later memory
        found = dict(zip(ids[order].tolist(), scores[order].astype(float).tolist(), strict=True))
        return Near(found, mean, spread)
