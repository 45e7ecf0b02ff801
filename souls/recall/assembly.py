"""What goes into the recalled part of a context, ranked in one of two modes (DESIGN §3.5,
§3.11), and the log line that says why.

Candidates come from everywhere the soul keeps something to say: recalled memories,
active claims (facts, rules), open commitments and plans, unanswered questions, overdue
tasks, activated goals. Each gets a resonance R in [0, 1] with the query:

* a memory: what it holds of the *whole* query — its BM25 over the query's ideal score
  (a document that is exactly the query's terms), words no memory holds counting as
  the rarest and words in every memory for nothing (:meth:`~souls.store.bm25.TermStats.resonance`),
  so R is comparable across queries, which the mode switch needs;
* a claim, a question, a commitment or a task: the share of the query's terms in it,
  each weighed by its idf in the soul's memories (:class:`Query`), as BM25 weighs
  them — a word the soul has never seen weighs most, one in every memory next to
  nothing, so "好累" is not answered by whatever holds 好;
* a goal: its activation score (DESIGN §3.10), which also fires on bridge triggers and
  domains that share no word with the query.

:func:`souls.recall.potential.rank` then picks the mode: retrieval (rank by R) when the best R
reaches the threshold, emergence (rank by Φ: unresolved pressure and rarity, weighted by
faith) otherwise — so an empty query brings up the promise never kept. Rarity counts
from when an item last surfaced in a context (:mod:`souls.recall.surfacing`), or came to
be: what a context just showed gives way in the next. Pure: same input, same output.

A soul may hold thousands of active entries, and a context keeps about eight items:
:mod:`souls.recall.shortlist` names the few of them that can be among the items
:func:`choose` keeps, so that only those become contenders.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass

import msgspec

from souls.recall.context import label
from souls.recall.potential import (
    OPEN_KINDS,
    Kind,
    PotentialConfig,
    RankedItem,
    Ranking,
    Scored,
    rank,
)
from souls.results import RecallItem
from souls.text.tokenize import query_terms

__all__ = [
    "AssemblyLog",
    "Contender",
    "LoggedItem",
    "Query",
    "age_days",
    "choose",
    "claim_candidate",
    "lexical",
    "memory_candidates",
    "open_candidate",
    "rarity_clock",
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


class Query:
    """A context's query as R measures what an entry, a question or a task holds of
    it: its terms (each once, stopwords out), each with a weight — its idf in the
    soul's memories, so that R is the share of the *whole* query an item holds, words
    no memory holds included (they weigh most)."""

    __slots__ = ("total", "weights", "words")

    def __init__(self, weights: Sequence[tuple[str, float]] = ()) -> None:
        self.weights = tuple(weights)
        self.words = frozenset(term for term, _ in self.weights)
        self.total = sum(weight for _, weight in self.weights)

    @classmethod
    def of(cls, text: str | None, idf: Callable[[str], float] | None = None) -> Query:
        """The query ``text``; ``idf``: each term's weight (every term weighs 1 without)."""
        found = query_terms(text) if text and text.strip() else []
        return cls([(term, idf(term) if idf is not None else 1.0) for term in found])

    def __bool__(self) -> bool:
        return bool(self.weights)

    def __repr__(self) -> str:
        return f"Query({list(self.weights)!r})"

    def share(self, held: Collection[str]) -> float:
        """R of an item holding the distinct terms ``held``: the weight of the query's
        terms among them over the weight of all (0 without a query). Summed in query
        order, so every caller gets the same float."""
        total = self.total
        if not total > 0:
            return 0.0
        return sum(weight for term, weight in self.weights if term in held) / total


def lexical(query: Query, text: str) -> float:
    """R of ``text`` for ``query`` (:meth:`Query.share` of its terms)."""
    return query.share(_terms(text)) if query else 0.0


def terms(text: str) -> tuple[str, ...]:
    """The terms of ``text`` (each once) that :func:`lexical` matches a query's against."""
    return tuple(query_terms(text))


# Every context scores the unanswered questions and overdue tasks against its query:
# their terms are tokenized once, not once per context. Bounded; texts rarely change.
@functools.lru_cache(maxsize=4096)
def _terms(text: str) -> frozenset[str]:
    return frozenset(query_terms(text))


def age_days(since: float, now: float) -> float:
    """Days from ``since`` to ``now`` (0 for a time to come), as every candidate counts
    them: the shortlist must compute Φ to the bit as :func:`rank` will."""
    return max(now - since, 0.0) / DAY


def rarity_clock(since: float, surfaced: float | None) -> float:
    """When an item's rarity counts from: when it came to be (``since``), or when it
    last surfaced in a context if that is later."""
    return since if surfaced is None or surfaced < since else surfaced


def memory_candidates(
    items: Sequence[RecallItem],
    resonance: Mapping[int, float],
    *,
    created: Mapping[int, float] | None = None,
    now: float = 0.0,
) -> list[Contender]:
    """Recalled memories with R (``resonance``: what each holds of the whole query, see
    :mod:`souls.recall.recall`); associates, which have no R of their own, get 0 and
    follow the others (see :func:`choose`). ``created``: when each was stored, what its
    rarity counts from (unknown: 0 days, no rarity)."""
    found = []
    for item in items:
        r = resonance.get(item.id, 0.0) if item.via != "hebbian" else 0.0
        since = created.get(item.id) if created is not None else None
        scored = Scored(
            id=item.id,
            kind="memory",
            text=item.text,
            bm25=min(max(r, 0.0), 1.0),
            unsurfaced_days=age_days(since, now) if since is not None else 0.0,
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
    surfaced: float | None = None,
) -> Contender:
    """A commitment, question or task: open since ``opened``; ``surfaced``: when it
    last surfaced in a context (rarity counts from then, pressure from ``opened``)."""
    item = RecallItem(item_id, kind, text, round(r, 6), kind, list(refs))
    scored = Scored(
        id=item_id,
        kind=kind,
        text=text,
        bm25=r,
        open=True,
        age_days=age_days(opened, now),
        unsurfaced_days=age_days(rarity_clock(opened, surfaced), now),
        fidelity_ai=fidelity_ai,
    )
    return Contender(item, scored)


def claim_candidate(
    item_id: int,
    text: str,
    r: float,
    *,
    since: float,
    now: float,
    fidelity_ai: float = 1.0,
    surfaced: float | None = None,
) -> Contender:
    """A fact or rule recorded at ``since``; ``surfaced``: when it last surfaced."""
    item = RecallItem(item_id, "fact", text, round(r, 6), "claim", [])
    scored = Scored(
        id=item_id,
        kind="claim",
        text=text,
        bm25=r,
        unsurfaced_days=age_days(rarity_clock(since, surfaced), now),
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
    for ranked in _kept(ranking, limit, config.open_share):
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


def _kept(ranking: Ranking, limit: int, open_share: float) -> list[RankedItem]:
    """The ``limit`` best of ``ranking``, in its order. In emergence mode only items
    with Φ > 0, open items (OPEN_KINDS) taking at most ``open_share`` of the slots
    while other items are left, then any slot still free."""
    if ranking.mode == "retrieval":
        return ranking.items[:limit]
    live = [ranked for ranked in ranking.items if ranked.score > 0]
    cap = limit if open_share >= 1 else max(1, math.ceil(limit * open_share))
    kept: list[int] = []
    waiting: list[int] = []
    opened = 0
    for position, ranked in enumerate(live):
        if len(kept) == limit:
            break
        if ranked.kind in OPEN_KINDS:
            if opened == cap:
                waiting.append(position)
                continue
            opened += 1
        kept.append(position)
    kept += waiting[: limit - len(kept)]
    return [live[position] for position in sorted(kept)]


_NOT_MEMORY = frozenset({"fact", "rule", "event", "commitment", "goal", "question", "task"})
