"""The few active entries that can make a context, found without scoring them all.

A soul may hold thousands of active entries (facts, rules, open commitments and
plans), and a context keeps about eight items. :class:`EntryIndex` holds the entries
by query term and by age; :func:`shortlist` names the ones that can be among the items
:func:`souls.recall.assembly.choose` keeps, whichever mode it takes, so that only those
become contenders. It is exact, not a heuristic: see its docstring for why.
"""

from __future__ import annotations

import bisect
import collections
import heapq
import itertools
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from souls.recall.assembly import Contender, age_days, claim_candidate, open_candidate, share
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
    entry: Entry, words: frozenset[str], now: float, fidelity_ai: float
) -> Contender:
    """``entry`` as a contender for a query of ``words``."""
    fidelity = 1.0 if entry.user else fidelity_ai
    r = share(words, entry.terms)
    if entry.kind == "commitment":
        return open_candidate(
            "commitment", entry.id, entry.text, r, opened=entry.since, now=now, fidelity_ai=fidelity
        )
    return claim_candidate(
        entry.id, entry.text, r, since=entry.since, now=now, fidelity_ai=fidelity
    )


class EntryIndex:
    """Active entries by id, by query term, and by age within each group of one kind
    and one faith (what the user said; what the soul extracted). Owned by one soul."""

    def __init__(self, entries: Sequence[Entry] = ()) -> None:
        self._entries = {e.id: e for e in entries}
        # term -> ids of the entries holding it (lists: a set weighs several times more,
        # and an entry's terms are distinct, so no id is listed twice).
        self._postings: dict[str, list[int]] = collections.defaultdict(list)
        # (kind, user) -> (since, id), oldest first.
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
        """Two indexes are equal when they hold the same entries the same way (a test
        that an index kept up to date is the one built afresh)."""
        if not isinstance(other, EntryIndex):
            return NotImplemented
        return self._layout() == other._layout()

    __hash__ = None  # type: ignore[assignment]

    def _layout(self) -> tuple[object, ...]:
        """What the index holds, whatever order it came in (empty groups left out)."""
        postings = {term: sorted(ids) for term, ids in self._postings.items()}
        return self._entries, postings, {group: ages for group, ages in self._ages.items() if ages}

    @property
    def by_id(self) -> Mapping[int, Entry]:
        return self._entries

    def entries(self) -> list[Entry]:
        """Every entry, in id order."""
        return [self._entries[i] for i in sorted(self._entries)]

    def add(self, entry: Entry) -> None:
        """Add ``entry``, or put it in place of the entry with its id."""
        self.discard(entry.id)
        self._entries[entry.id] = entry
        for term in entry.terms:
            self._postings[term].append(entry.id)
        bisect.insort(self._ages[entry.kind, entry.user], (entry.since, entry.id))

    def discard(self, entry_id: int) -> None:
        entry = self._entries.pop(entry_id, None)
        if entry is None:
            return
        for term in entry.terms:
            held = self._postings[term]
            held.remove(entry_id)
            if not held:
                del self._postings[term]
        ages = self._ages[entry.kind, entry.user]
        del ages[bisect.bisect_left(ages, (entry.since, entry_id))]

    def matches(self, words: frozenset[str]) -> collections.Counter[int]:
        """How many of ``words`` each entry holding any of them holds."""
        postings = self._postings
        return collections.Counter(
            itertools.chain.from_iterable(postings[w] for w in words if w in postings)
        )

    def oldest_first(self) -> Iterator[Iterator[Entry]]:
        """Each group's entries, oldest first (then by id)."""
        for ages in self._ages.values():
            yield (self._entries[entry_id] for _, entry_id in ages)


# A walk down a group by age stops once Φ falls below the limit-th best by more than
# this share. Φ never grows as an entry gets younger, but libm's expm1 is only faithful
# to an ulp or so: two ages a hair apart may come out a hair the wrong way round.
_ROUNDING = 1e-9


def shortlist(
    index: EntryIndex,
    words: frozenset[str],
    now: float,
    config: PotentialConfig,
    limit: int,
    fidelity_ai: float,
) -> list[Entry]:
    """The entries of ``index`` that can be among the best ``limit`` items
    :func:`choose` keeps for a query of ``words``, whatever the other contenders, in id
    order (at least one when ``index`` has any).

    Exact: :func:`choose` over the other contenders plus these entries keeps the same
    items, in the same order with the same scores, in the same mode with the same best
    R, as over the others plus every entry. Both modes order items totally (score,
    kind, id), so the best ``limit`` of all are among the others and the entries' own
    best ``limit`` in that order:

    * retrieval ranks only items with R > 0, by R: the entries holding a query term,
      found by term, of which the best ``limit`` are kept — the best R among them, so
      the mode comes out the same. When that R reaches the threshold the mode is
      retrieval whatever the others hold, and emergence is not looked at;
    * emergence ranks by Φ and shows nothing with Φ ≤ 0. Within a group of entries of
      one R, one kind and one faith, Φ only grows with age (U and S both do): each
      group is walked from its oldest entry until Φ falls below the ``limit``-th best
      found so far, as every later one is lower still.
    """
    k = max(limit, 1)
    by_id = index.by_id
    counts = index.matches(words)
    # The entries holding a query term, by (terms held, kind, faith).
    groups: dict[tuple[int, str, bool], list[Entry]] = collections.defaultdict(list)
    for entry_id, count in counts.items():
        entry = by_id[entry_id]
        groups[count, entry.kind, entry.user].append(entry)
    picked: list[int] = []
    for count, kind in sorted({(c, kind) for c, kind, _ in groups}, key=_retrieval_order):
        tied = [e.id for user in (True, False) for e in groups.get((count, kind, user), ())]
        picked += heapq.nsmallest(k - len(picked), tied)
        if len(picked) == k:
            break
    terms_in_query = len(words)
    if terms_in_query and max(counts.values(), default=0) / terms_in_query >= config.threshold:
        return [by_id[i] for i in sorted(picked)]

    found: list[tuple[float, int, int]] = []  # (-Φ, kind order, id): choose's order
    best: list[float] = []  # the k highest Φ so far (a min-heap)

    def walk(oldest_first: Iterable[Entry], r: float) -> None:
        for entry in oldest_first:
            value = _phi(entry, r, now, config, fidelity_ai)
            if value <= 0 or (len(best) == k and value * (1 + _ROUNDING) < best[0]):
                return
            found.append((-value, kind_order(entry.kind), entry.id))
            if len(best) < k:
                heapq.heappush(best, value)
            elif value > best[0]:
                heapq.heapreplace(best, value)

    for (count, _, _), group in groups.items():
        walk(sorted(group, key=_since), count / terms_in_query)
    for aged in index.oldest_first():
        walk((entry for entry in aged if entry.id not in counts), 0.0)
    chosen = set(picked) | {entry_id for _, _, entry_id in heapq.nsmallest(k, found)}
    if not chosen and len(index):
        # Never shown (nothing has R > 0 or Φ > 0), but with it the context still
        # counts as having had contenders, as it would with every entry.
        chosen.add(index.entries()[0].id)
    return [by_id[i] for i in sorted(chosen)]


def _retrieval_order(tier: tuple[int, str]) -> tuple[int, int]:
    count, kind = tier
    return -count, kind_order(kind)


def _since(entry: Entry) -> float:
    return entry.since


def _phi(entry: Entry, r: float, now: float, config: PotentialConfig, fidelity_ai: float) -> float:
    """Φ of ``entry`` with resonance ``r``, to the bit as :func:`rank` computes it from
    :func:`entry_candidate`'s contender."""
    days = age_days(entry.since, now)
    is_open = entry.kind == "commitment"
    u = unresolved(days if is_open else 0.0, is_open, config.tau_unresolved)
    s = rarity(days, config.tau_rarity)
    return phi(r, u, s, faith(1.0 if entry.user else fidelity_ai), config)
