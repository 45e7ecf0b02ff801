"""The few active entries that can make a context, found without scoring them all.

A soul may hold thousands of active entries (facts, rules, open commitments and
plans), and a context keeps about eight items. :class:`EntryIndex` holds the entries
by query term and by age (a claim's: since it last surfaced, see
:mod:`souls.recall.surfacing`); :func:`shortlist` names the ones that can be among the
items :func:`souls.recall.assembly.choose` keeps, whichever mode it takes, so that only
those become contenders. It is exact, not a heuristic: see its docstring for why.
"""

from __future__ import annotations

import bisect
import collections
import heapq
import itertools
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from souls.recall.assembly import (
    Contender,
    Query,
    age_days,
    claim_candidate,
    open_candidate,
    rarity_clock,
)
from souls.recall.potential import (
    PotentialConfig,
    faith,
    kind_order,
    phi,
    rarity,
    unresolved,
)

__all__ = ["Entry", "EntryIndex", "entry_candidate", "shortlist"]


@dataclass(frozen=True, slots=True)
class Entry:
    """An active entry (a fact, a rule, an open commitment or plan) as a context may
    bring it up."""

    id: int
    kind: Literal["claim", "commitment"]
    text: str  # what the context shows
    terms: tuple[str, ...]  # what R measures the query against (see terms())
    since: float  # when it was recorded (a commitment: opened); its age counts from here
    user: bool  # the user said it: it weighs fully whatever the AI-side fidelity


def entry_candidate(
    entry: Entry,
    query: Query,
    now: float,
    fidelity_ai: float,
    surfaced: float | None = None,
) -> Contender:
    """``entry`` as a contender for ``query``; ``surfaced``: when it last surfaced in a
    context (:meth:`EntryIndex.surfaced_at`)."""
    fidelity = 1.0 if entry.user else fidelity_ai
    r = query.share(entry.terms)
    if entry.kind == "commitment":
        return open_candidate(
            "commitment",
            entry.id,
            entry.text,
            r,
            opened=entry.since,
            now=now,
            fidelity_ai=fidelity,
            surfaced=surfaced,
        )
    return claim_candidate(
        entry.id, entry.text, r, since=entry.since, now=now, fidelity_ai=fidelity, surfaced=surfaced
    )


class EntryIndex:
    """Active entries by id, by query term, and by age within each group of one kind
    and one faith (what the user said; what the soul extracted). Owned by one soul.

    A claim's age, in its group's order, is its rarity clock (since it last surfaced in
    a context, or was recorded): its Φ with no query only grows with it. A commitment's
    is when it was opened, what its unresolved pressure grows with. When entries last
    surfaced is kept by id, whether they are in the index or not (an entry rewritten
    or put back keeps it)."""

    def __init__(self, entries: Sequence[Entry] = ()) -> None:
        self._entries = {e.id: e for e in entries}
        self._surfaced: dict[int, float] = {}
        # term -> ids of the entries holding it (lists: a set weighs several times more,
        # and an entry's terms are distinct, so no id is listed twice).
        self._postings: dict[str, list[int]] = collections.defaultdict(list)
        # (kind, user) -> (age key, id), oldest first (see _key).
        self._ages: dict[tuple[str, bool], list[tuple[float, int]]] = collections.defaultdict(list)
        for entry in self._entries.values():
            for term in entry.terms:
                self._postings[term].append(entry.id)
            self._ages[entry.kind, entry.user].append((entry.since, entry.id))
        for ages in self._ages.values():
            ages.sort()

    def __len__(self) -> int:
        return len(self._entries)

    def __eq__(self, other: object) -> bool:
        """Two indexes are equal when they hold the same entries the same way, when
        they last surfaced aside (a test that an index kept up to date is the one built
        afresh)."""
        if not isinstance(other, EntryIndex):
            return NotImplemented
        return self._layout() == other._layout()

    __hash__ = None  # type: ignore[assignment]

    def _layout(self) -> tuple[object, ...]:
        """What the index holds, whatever order it came in and whatever surfaced."""
        postings = {term: sorted(ids) for term, ids in self._postings.items() if ids}
        ages: dict[tuple[str, bool], list[tuple[float, int]]] = collections.defaultdict(list)
        for group, held in self._ages.items():
            ages[group] += sorted((self._entries[i].since, i) for _, i in held)
        return self._entries, postings, {group: held for group, held in ages.items() if held}

    def _key(self, entry: Entry) -> float:
        if entry.kind == "claim":
            return rarity_clock(entry.since, self._surfaced.get(entry.id))
        return entry.since

    @property
    def by_id(self) -> Mapping[int, Entry]:
        return self._entries

    def entries(self) -> list[Entry]:
        """Every entry, in id order."""
        return [self._entries[i] for i in sorted(self._entries)]

    def surfaced_at(self, entry_id: int) -> float | None:
        """When the entry ``entry_id`` last surfaced in a context, if it did."""
        return self._surfaced.get(entry_id)

    def clock(self, entry: Entry) -> float:
        """When ``entry``'s rarity counts from (:func:`~souls.recall.assembly.rarity_clock`)."""
        return rarity_clock(entry.since, self._surfaced.get(entry.id))

    def surface(self, times: Mapping[int, float]) -> None:
        """Entries (by id) surfaced at these times; earlier times than those known
        change nothing."""
        for entry_id, at in times.items():
            known = self._surfaced.get(entry_id)
            if known is not None and known >= at:
                continue
            entry = self._entries.get(entry_id)
            if entry is not None and entry.kind == "claim":
                self._remove_age(entry)
            self._surfaced[entry_id] = at
            if entry is not None and entry.kind == "claim":
                bisect.insort(self._ages[entry.kind, entry.user], (self._key(entry), entry.id))

    def add(self, entry: Entry) -> None:
        """Add ``entry``, or put it in place of the entry with its id."""
        self.discard(entry.id)
        self._entries[entry.id] = entry
        for term in entry.terms:
            self._postings[term].append(entry.id)
        bisect.insort(self._ages[entry.kind, entry.user], (self._key(entry), entry.id))

    def discard(self, entry_id: int) -> None:
        entry = self._entries.pop(entry_id, None)
        if entry is None:
            return
        for term in entry.terms:
            held = self._postings[term]
            held.remove(entry_id)
            if not held:
                del self._postings[term]
        self._remove_age(entry)

    def _remove_age(self, entry: Entry) -> None:
        ages = self._ages[entry.kind, entry.user]
        del ages[bisect.bisect_left(ages, (self._key(entry), entry.id))]

    def matches(self, words: frozenset[str]) -> collections.Counter[int]:
        """How many of ``words`` each entry holding any of them holds."""
        postings = self._postings
        return collections.Counter(
            itertools.chain.from_iterable(postings[w] for w in words if w in postings)
        )

    def oldest_first(self) -> Iterator[tuple[str, Iterator[Entry]]]:
        """Each group's kind and entries, oldest first by the group's age (then by id)."""
        for (kind, _), ages in self._ages.items():
            yield kind, (self._entries[entry_id] for _, entry_id in ages)


# A walk down a group by age stops once Φ falls below the limit-th best by more than
# this share. Φ never grows as an entry gets younger, but libm's expm1 is only faithful
# to an ulp or so: two ages a hair apart may come out a hair the wrong way round.
_ROUNDING = 1e-9


def shortlist(
    index: EntryIndex,
    query: Query,
    now: float,
    config: PotentialConfig,
    limit: int,
    fidelity_ai: float,
) -> list[Entry]:
    """The entries of ``index`` that can be among the best ``limit`` items
    :func:`choose` keeps for ``query``, whatever the other contenders, in id order (at
    least one when ``index`` has any).

    Exact: :func:`choose` over the other contenders plus these entries keeps the same
    items, in the same order with the same scores, in the same mode with the same best
    R, as over the others plus every entry (each made by :func:`entry_candidate` with
    when it last surfaced). Both modes order items totally (score, kind, id), so the
    best ``limit`` of all are among the others and the entries' own best ``limit`` in
    that order:

    * retrieval ranks only items with R > 0, by R: the entries holding a query term,
      found by term, of which the best ``limit`` are kept — the best R among them, so
      the mode comes out the same. When that R reaches the threshold the mode is
      retrieval whatever the others hold, and emergence is not looked at;
    * emergence ranks by Φ and shows nothing with Φ ≤ 0, and bounds the share of open
      items, so the best ``limit`` of each kind (claims, commitments) are named. The
      entries holding a query term are each scored. Of the others (R = 0), a group of
      claims of one faith is walked by rarity clock, oldest first, where Φ only falls:
      until Φ falls below the ``limit``-th best of its kind found so far. A group of
      commitments is walked by when each was opened: Φ counted as if it had never
      surfaced only falls along it and is the most its Φ can be, so the walk stops once
      that bound falls below.
    """
    k = max(limit, 1)
    by_id = index.by_id
    rs = {entry_id: query.share(by_id[entry_id].terms) for entry_id in index.matches(query.words)}
    picked = heapq.nsmallest(k, rs, key=lambda i: (-rs[i], kind_order(by_id[i].kind), i))
    if max(rs.values(), default=0.0) >= config.threshold:
        return [by_id[i] for i in sorted(picked)]

    # Per kind (claims, open commitments: choose bounds the share of open items, so
    # the best k of each can be kept): (-Φ, kind order, id), choose's order, and the k
    # highest Φ so far (a min-heap).
    found: dict[str, list[tuple[float, int, int]]] = collections.defaultdict(list)
    bests: dict[str, list[float]] = collections.defaultdict(list)

    def keep(entry: Entry, value: float) -> None:
        found[entry.kind].append((-value, kind_order(entry.kind), entry.id))
        best = bests[entry.kind]
        if len(best) < k:
            heapq.heappush(best, value)
        elif value > best[0]:
            heapq.heapreplace(best, value)

    for entry_id, r in rs.items():
        entry = by_id[entry_id]
        value = _phi(entry, r, index.clock(entry), now, config, fidelity_ai)
        if value > 0:
            keep(entry, value)
    for kind, oldest_first in index.oldest_first():
        for entry in oldest_first:
            if entry.id in rs:
                continue
            value = _phi(entry, 0.0, index.clock(entry), now, config, fidelity_ai)
            most = (
                value
                if kind == "claim"
                else _phi(entry, 0.0, entry.since, now, config, fidelity_ai)
            )
            best = bests[kind]
            if most <= 0 or (len(best) == k and most * (1 + _ROUNDING) < best[0]):
                break
            if value > 0:
                keep(entry, value)
    chosen = set(picked)
    for ranked in found.values():
        chosen.update(entry_id for _, _, entry_id in heapq.nsmallest(k, ranked))
    if not chosen and len(index):
        # Never shown (nothing has R > 0 or Φ > 0), but with it the context still
        # counts as having had contenders, as it would with every entry.
        chosen.add(min(by_id))
    return [by_id[i] for i in sorted(chosen)]


def _phi(
    entry: Entry,
    r: float,
    clock: float,
    now: float,
    config: PotentialConfig,
    fidelity_ai: float,
) -> float:
    """Φ of ``entry`` with resonance ``r`` and rarity counted from ``clock``, to the bit
    as :func:`rank` computes it from :func:`entry_candidate`'s contender."""
    is_open = entry.kind == "commitment"
    u = unresolved(age_days(entry.since, now) if is_open else 0.0, is_open, config.tau_unresolved)
    s = rarity(age_days(clock, now), config.tau_rarity)
    return phi(r, u, s, faith(1.0 if entry.user else fidelity_ai), config)
