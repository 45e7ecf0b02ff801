"""Hebbian association: memories recalled together wire together (Hebb, 1949).

Plain functions and a small in-memory index of the *strong* edges (weight at or above
the association threshold), which is all that recall walks. Edge weights live in
SQLite; this index is derived and rebuilt from it after a restart or a decay.

Memories fire together only when they were recalled *for the query* (Skynet: "recalled
together in a real retrieval context"): recall passes on only those holding at least
``fire_share`` of it, and walks associations only from those. Noise does not wire.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from itertools import combinations

import msgspec

__all__ = ["Associations", "HebbianConfig", "pairs"]


class HebbianConfig(msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    # Edges at least this strong are walked at recall.
    association_threshold: float = 3.0
    # How far the walk goes from the recalled memories.
    max_hops: int = 2
    # Most associates appended to one recall.
    max_associates: int = 5
    # Only recalled memories holding at least this share of the query (resonance R, as
    # the retrieval/emergence switch measures it) fire together and spread to their
    # associates: a memory returned for a word that is in every memory wires nothing.
    fire_share: float = 0.2
    # Nightly, every edge's weight is multiplied by this (10 % decay)...
    nightly_factor: float = 0.9
    # ... and edges below this are pruned.
    prune_below: float = 0.5
    # Retrieval-induced forgetting: salience taken off each competitor that ranked just
    # below the cut, and how many such competitors there are.
    rif_penalty: float = 0.01
    rif_competitors: int = 5

    def __post_init__(self) -> None:
        if self.association_threshold <= 0 or self.max_hops < 0 or self.max_associates < 0:
            raise ValueError("association_threshold must be > 0, max_hops and max_associates >= 0")
        if not 0 < self.nightly_factor <= 1 or self.prune_below < 0:
            raise ValueError("nightly_factor must be in (0, 1] and prune_below >= 0")
        if self.rif_penalty < 0 or self.rif_competitors < 0:
            raise ValueError("rif_penalty and rif_competitors must be >= 0")
        if not 0 <= self.fire_share <= 1:
            raise ValueError("fire_share must be between 0 and 1")


def pairs(memory_ids: Iterable[int]) -> list[tuple[int, int]]:
    """Every pair among ``memory_ids``, each as (smaller, larger)."""
    return list(combinations(sorted(set(memory_ids)), 2))


class Associations:
    """Strong edges as an adjacency map."""

    def __init__(self, edges: Iterable[tuple[int, int, float]] = ()) -> None:
        self._next: defaultdict[int, dict[int, float]] = defaultdict(dict)
        self._edges = 0
        for a, b, weight in edges:
            self.set(a, b, weight)

    def set(self, a: int, b: int, weight: float) -> None:
        if b not in self._next[a]:
            self._edges += 1
        self._next[a][b] = weight
        self._next[b][a] = weight

    def __len__(self) -> int:
        return self._edges

    def walk(self, seeds: Sequence[int], hops: int, limit: int) -> list[tuple[int, float]]:
        """Memories reachable from ``seeds`` over strong edges within ``hops``, not
        themselves seeds: (id, strength of the edge that reached it), nearest first,
        then strongest, then oldest. Deterministic."""
        seen = set(seeds)
        frontier = list(dict.fromkeys(seeds))
        found: list[tuple[int, float]] = []
        for _ in range(hops):
            reached: dict[int, float] = {}
            for node in frontier:
                for other, weight in self._next.get(node, {}).items():
                    if other not in seen and weight > reached.get(other, 0.0):
                        reached[other] = weight
            ranked = sorted(reached.items(), key=lambda item: (-item[1], item[0]))
            found.extend(ranked)
            seen.update(reached)
            frontier = [node for node, _ in ranked]
            if len(found) >= limit or not frontier:
                break
        return found[:limit]
