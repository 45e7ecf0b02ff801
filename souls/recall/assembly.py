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

:func:`souls.recall.potential.rank` then picks the mode: retrieval (rank by R) when the best R
reaches the threshold, emergence (rank by Φ: unresolved pressure and rarity, weighted by
faith) otherwise — so an empty query brings up the promise never kept. Pure: same
input, same output.

A soul may hold thousands of active entries, and a context keeps about eight items:
:mod:`souls.recall.shortlist` names the few of them that can be among the items
:func:`choose` keeps, so that only those become contenders.
"""

from __future__ import annotations

import functools
from collections.abc import Collection, Sequence
from dataclasses import dataclass

import msgspec

from souls.recall.context import label
from souls.recall.potential import (
    Kind,
    PotentialConfig,
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
    "age_days",
    "choose",
    "claim_candidate",
    "lexical",
    "memory_candidates",
    "open_candidate",
    "share",
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
    return share(query_words, _terms(text))


def terms(text: str) -> tuple[str, ...]:
    """The terms of ``text`` (each once) that :func:`lexical` matches a query's against."""
    return tuple(query_terms(text))


def share(query_words: frozenset[str], held: Collection[str]) -> float:
    """The share of ``query_words`` in ``held`` (distinct terms)."""
    if not query_words:
        return 0.0
    return len(query_words.intersection(held)) / len(query_words)


# Every context scores the unanswered questions and overdue tasks against its query:
# their terms are tokenized once, not once per context. Bounded; texts rarely change.
@functools.lru_cache(maxsize=4096)
def _terms(text: str) -> frozenset[str]:
    return frozenset(query_terms(text))


def age_days(since: float, now: float) -> float:
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
    age = age_days(opened, now)
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
        unsurfaced_days=age_days(since, now),
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
