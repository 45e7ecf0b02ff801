"""Vectors: packed for the soul's SQLite file, and the nearest ones to a query.

A vector is stored as a BLOB of little-endian float32, unit length: 4 bytes a dimension
(a 384-dimension vector is 1.5 KiB; as JSON text it would be about 3.5 times that, and
parsed on every load), and the cosine of two is their dot product. sqlite-vec would
search inside SQLite; it is not a dependency, so the soul keeps its vectors in memory
once loaded (:class:`VectorIndex`) and searches them exactly.
"""

from __future__ import annotations

import math
import operator
import sys
from array import array
from collections.abc import Iterable, Sequence

__all__ = ["VectorIndex", "pack", "unit", "unpack"]

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


class VectorIndex:
    """The unit vectors of one soul's memories, by memory id, of one model. Exact
    search: every vector is compared (a recall's cost grows with the soul)."""

    def __init__(self, model: str, dimensions: int | None = None) -> None:
        self.model = model
        self.dimensions = dimensions
        self._vectors: dict[int, array[float]] = {}

    def __len__(self) -> int:
        return len(self._vectors)

    def __contains__(self, memory_id: object) -> bool:
        return memory_id in self._vectors

    def put(self, memory_id: int, vector: array[float]) -> None:
        self._vectors[memory_id] = vector

    def ids(self) -> Iterable[int]:
        return self._vectors.keys()

    def drop(self, memory_ids: Iterable[int]) -> None:
        for memory_id in memory_ids:
            self._vectors.pop(memory_id, None)

    def nearest(self, query: array[float], n: int) -> dict[int, float]:
        """The ``n`` memories most similar to ``query`` (a unit vector) with their
        cosine, most similar first; ties to the later memory."""
        if len(query) != self.dimensions:
            return {}
        scored = [(_dot(query, v), m) for m, v in self._vectors.items() if len(v) == len(query)]
        scored.sort(reverse=True)
        return {m: cosine for cosine, m in scored[:n]}
