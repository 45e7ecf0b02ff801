"""What goes into the recalled part of a context, ranked in one of two modes (DESIGN §3.5,
§3.11), and the log line that says why.

Candidates come from everywhere the soul keeps something to say: recalled memories,
active claims (facts, rules), open commitments and plans, unanswered questions, overdue
tasks, activated goals. Each gets a resonance R in [0, 1] with the query:

* a memory: its BM25 score over the query's *ideal* score (the score of a document that
  is exactly the query's terms), so R says how much of the query it holds, comparable
  across queries — which the mode switch needs; a memory a summary line cites has that
  line's coverage of the query;
* a claim, a question, a commitment or a task: the share of the query's terms in it;
* a goal: its activation score (DESIGN §3.10), which also fires on bridge triggers and
  domains that share no word with the query.

:func:`souls.potential.rank` then picks the mode: retrieval (rank by R) when the best R
reaches the threshold, emergence (rank by Φ: unresolved pressure and rarity, weighted by
faith) otherwise — so an empty query brings up the promise never kept. Pure: same
input, same output.

A soul may hold thousands of active entries, and a context keeps about eight items:
:class:`EntryIndex` holds them by query term and by age, and :func:`shortlist` names
the few that can be among the items :func:`choose` keeps, whichever mode it takes, so
that only those become contenders (see its docstring for why that is exact).
"""

from __future__ import annotations

import bisect
import collections
import functools
import heapq
import itertools
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

import msgspec

from souls.context import label
from souls.goals import Activation
from souls.potential import (
    Kind,
    PotentialConfig,
    Ranking,
    Scored,
    faith,
    kind_order,
    phi,
    rank,
    rarity,
    unresolved,
)
from souls.results import RecallItem
from souls.tokenize import query_terms

__all__ = [
    "AssemblyLog",
    "Contender",
    "Entry",
    "EntryIndex",
    "LoggedItem",
    "choose",
    "claim_candidate",
    "entry_candidate",
    "goal_candidates",
    "lexical",
    "memory_candidates",
    "open_candidate",
    "shortlist",
    "terms",
]

DAY = 86_400.0


@dataclass(frozen=True, slots=True)
class Contender:
    item: RecallItem  # what the context shows (kind and id give its label)
    scored: Scored  # what the ranking weighs


class LoggedItem(msgspec.Struct, frozen=True):
    id: str  # label: m12, c5, g3, q2, t7
    kind: str
    score: float
    reason: str


class AssemblyLog(msgspec.Struct, frozen=True):
    """One assembled context: what was injected and why (``soupd why``)."""

    hash: str
    created: float
    session: str | None
    query: str | None
    mode: str  # retrieval | emergence | none
    chars: int
    recalled: int  # characters of recalled items injected
    paused: bool
    items: list[LoggedItem]
    sections: list[dict[str, object]]


def lexical(query_words: frozenset[str], text: str) -> float:
    """The share of the query's terms found in ``text`` (0 without a query)."""
    return _share(query_words, _terms(text))


def terms(text: str) -> tuple[str, ...]:
    """The terms of ``text`` (each once) that :func:`lexical` matches a query's against."""
    return tuple(query_terms(text))


def _share(query_words: frozenset[str], held: Collection[str]) -> float:
    """The share of ``query_words`` in ``held`` (distinct terms)."""
    if not query_words:
        return 0.0
    return len(query_words.intersection(held)) / len(query_words)


# Every context scores the unanswered questions and overdue tasks against its query:
# their terms are tokenized once, not once per context. Bounded; texts rarely change.
@functools.lru_cache(maxsize=4096)
def _terms(text: str) -> frozenset[str]:
    return frozenset(query_terms(text))


def _days(since: float, now: float) -> float:
    """Days from ``since`` to ``now`` (0 for a time to come), as every candidate counts
    them: the shortlist must compute Φ to the bit as :func:`rank` will."""
    return max(now - since, 0.0) / DAY


def memory_candidates(items: Sequence[RecallItem], ceiling: float) -> list[Contender]:
    """Recalled memories with R (associates, which have no score of their own, get R 0
    and follow the others; see :func:`choose`)."""
    found = []
    for item in items:
        if item.via in ("summary", "weekly"):
            r = item.score  # the citing line's coverage of the query
        elif item.via == "bm25" and ceiling > 0:
            r = item.score / ceiling
        else:
            r = 0.0
        scored = Scored(id=item.id, kind="memory", text=item.text, bm25=min(max(r, 0.0), 1.0))
        found.append(Contender(item, scored))
    return found


def goal_candidates(activations: Sequence[Activation], now: float) -> list[Contender]:
    found = []
    for a in activations:
        goal = a.goal
        why = "bridge trigger" if a.bridge_hit else "domain" if a.domain_hit else "statement"
        text = f"(goal, {goal.state}, priority {goal.priority}) {goal.statement}"
        item = RecallItem(goal.id, "goal", text, round(a.score, 6), f"goal:{why}", [])
        scored = Scored(
            id=goal.id,
            kind="goal",
            text=goal.statement,
            bm25=min(a.score, 1.0),
            unsurfaced_days=_days(goal.updated, now),
        )
        found.append(Contender(item, scored))
    return found


def open_candidate(
    kind: Kind,
    item_id: int,
    text: str,
    r: float,
    *,
    opened: float,
    now: float,
    fidelity_ai: float = 1.0,
    refs: Sequence[str] = (),
) -> Contender:
    """A commitment, question or task: open since ``opened``."""
    item = RecallItem(item_id, kind, text, round(r, 6), kind, list(refs))
    age = _days(opened, now)
    scored = Scored(
        id=item_id,
        kind=kind,
        text=text,
        bm25=r,
        open=True,
        age_days=age,
        unsurfaced_days=age,
        fidelity_ai=fidelity_ai,
    )
    return Contender(item, scored)


def claim_candidate(
    item_id: int, text: str, r: float, *, since: float, now: float, fidelity_ai: float = 1.0
) -> Contender:
    item = RecallItem(item_id, "fact", text, round(r, 6), "claim", [])
    scored = Scored(
        id=item_id,
        kind="claim",
        text=text,
        bm25=r,
        unsurfaced_days=_days(since, now),
        fidelity_ai=fidelity_ai,
    )
    return Contender(item, scored)


def choose(
    candidates: Sequence[Contender], config: PotentialConfig, limit: int
) -> tuple[Ranking, list[RecallItem], list[LoggedItem]]:
    """Rank ``candidates`` and keep the best ``limit`` (plus the Hebbian associates of
    the memories kept, after them): the ranking, the items to show, their log lines."""
    ranked_ones = [c for c in candidates if c.item.via != "hebbian"]
    # R is already absolute (see the module docstring): a ceiling of 1 keeps it as it is.
    ranking = rank([c.scored for c in ranked_ones], config, ceiling=1.0)
    by_name = {(c.scored.kind, c.scored.id): c for c in ranked_ones}
    shown: list[RecallItem] = []
    logged: list[LoggedItem] = []
    for ranked in ranking.items[:limit]:
        if ranking.mode == "emergence" and ranked.score <= 0:
            break
        item = by_name[(ranked.kind, ranked.id)].item
        shown.append(msgspec.structs.replace(item, score=round(ranked.score, 6)))
        logged.append(
            LoggedItem(label(item.kind, item.id), item.kind, round(ranked.score, 6), ranked.reason)
        )
    kept = {item.id for item in shown if item.kind not in _NOT_MEMORY}
    if kept:
        for c in candidates:
            if c.item.via == "hebbian":
                shown.append(c.item)
                logged.append(
                    LoggedItem(label(c.item.kind, c.item.id), c.item.kind, c.item.score, "hebbian")
                )
    return ranking, shown, logged


_NOT_MEMORY = frozenset({"fact", "rule", "event", "commitment", "goal", "question", "task"})


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
    r = _share(words, entry.terms)
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
    days = _days(entry.since, now)
    is_open = entry.kind == "commitment"
    u = unresolved(days if is_open else 0.0, is_open, config.tau_unresolved)
    s = rarity(days, config.tau_rarity)
    return phi(r, u, s, faith(1.0 if entry.user else fidelity_ai), config)
