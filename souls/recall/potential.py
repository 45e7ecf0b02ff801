"""Potential: the two ranking modes of recall and context (DESIGN §3.5, from Chaos).

When the query points somewhere (the best normalised BM25 score R reaches the
threshold) items are ranked by R: **retrieval** mode. Otherwise (small talk, or an
empty query when a context is assembled unprompted) they are ranked by the potential::

    Φ = [a·R + (1 - R)·(g·U + e·S)] · faith        faith = 0.5 + 0.5·fidelity_ai

**emergence** mode, where U is unresolved pressure (an open commitment, an unanswered
question, a due task: saturates with how long it has been open) and S is rarity (how
long since the item last surfaced). So "I'm tired today" brings up the promise that was
never kept rather than nothing. faith discounts only the AI side: what the user said
does not fade because the AI misremembered something else.

Invariants a caller may rely on:

- Pure and deterministic: same items and config, same ranking, whatever the order of
  the items. Ties go by score, then kind (commitment, question, task, goal, claim,
  memory: obligations first), then id ascending.
- Retrieval mode returns only items with R > 0; emergence mode returns every item.
- R, U, S and faith are in [0, 1]; Φ ≥ 0 and Φ ≤ max(a, g + e), so ≤ 1 by default.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Literal, get_args

import msgspec

__all__ = [
    "OPEN_KINDS",
    "Kind",
    "Mode",
    "PotentialConfig",
    "RankedItem",
    "Ranking",
    "Scored",
    "faith",
    "kind_order",
    "normalise",
    "phi",
    "rank",
    "rarity",
    "unresolved",
]

Kind = Literal["commitment", "question", "task", "goal", "claim", "memory"]
Mode = Literal["retrieval", "emergence"]

# The kinds that carry unresolved pressure: what ``open_share`` bounds.
OPEN_KINDS = frozenset({"commitment", "question", "task"})
# Tie order: the declaration order of Kind.
_KIND_ORDER = {kind: i for i, kind in enumerate(get_args(Kind))}
# How the reason names an open item of each kind.
_OPEN_LABEL = {
    "commitment": "open commitment",
    "question": "unanswered question",
    "task": "due task",
}


class PotentialConfig(msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    # Weight of resonance R (normalised BM25) in Φ.
    a: float = 1.0
    # Weight of unresolved pressure U in Φ (applies to the 1 - R left over).
    g: float = 0.6
    # Weight of rarity S in Φ (applies to the 1 - R left over).
    e: float = 0.4
    # Best R at or above this: retrieval mode (rank by R); below: emergence (rank by Φ).
    threshold: float = 0.2
    # Days for unresolved pressure to reach 1 - 1/e (63 %) of its ceiling.
    tau_unresolved: float = 7.0
    # Days unsurfaced for rarity to reach 63 % of its ceiling.
    tau_rarity: float = 30.0
    # In emergence mode, the most of a context's recalled slots that open items
    # (commitments, questions, due tasks) take while other items wait for one: unresolved
    # pressure outweighs rarity, so without a share the same obligations would fill
    # every context and no memory would ever come back. Slots the others leave empty
    # still go to open items. 1 turns the share off.
    open_share: float = 0.5

    def __post_init__(self) -> None:
        if min(self.a, self.g, self.e) < 0:
            raise ValueError("a, g and e must be >= 0")
        if not 0 < self.open_share <= 1:
            raise ValueError("open_share must be in (0, 1]")
        if not 0 < self.threshold <= 1:
            raise ValueError("threshold must be in (0, 1]")
        if self.tau_unresolved <= 0 or self.tau_rarity <= 0:
            raise ValueError("tau_unresolved and tau_rarity must be > 0 (days)")


class Scored(msgspec.Struct, frozen=True, kw_only=True):
    """One candidate. ``(kind, id)`` names it; ids of different kinds may be equal."""

    id: int
    kind: Kind
    text: str
    # Raw BM25, higher is better (FTS5's bm25() is lower-is-better: pass its negation);
    # 0 when the item did not match the query or there was no query.
    bm25: float = 0.0
    # An open commitment, an unanswered question or a due task.
    open: bool = False
    age_days: float = 0.0  # how long it has been open (negative counts as 0)
    unsurfaced_days: float = 0.0  # since it last surfaced or was recalled
    fidelity_ai: float = 1.0  # 0..1 for AI-sourced items; 1 for what the user said

    def __post_init__(self) -> None:
        if not all(map(math.isfinite, (self.bm25, self.age_days, self.unsurfaced_days))):
            raise ValueError(f"{self.kind} {self.id}: bm25 and day counts must be finite")
        if not 0 <= self.fidelity_ai <= 1:
            raise ValueError(f"{self.kind} {self.id}: fidelity_ai must be in [0, 1]")


class RankedItem(msgspec.Struct, frozen=True, kw_only=True):
    id: int
    kind: Kind
    score: float  # R in retrieval mode, Φ in emergence mode
    r: float
    u: float
    s: float
    faith: float
    reason: str  # short and human: "bm25 R=0.83", "open commitment 21 days, U=0.95"


class Ranking(msgspec.Struct, frozen=True, kw_only=True):
    mode: Mode
    best_r: float
    items: list[RankedItem]


def kind_order(kind: str) -> int:
    """Where ``kind`` goes among items of equal score (obligations first)."""
    return _KIND_ORDER[kind]


def normalise(scores: Sequence[float], ceiling: float | None = None) -> list[float]:
    """R for each raw BM25 score: the score over ``ceiling``, clamped to [0, 1].

    Without a ceiling, the best score is the ceiling (R = score / max): the best item
    has R = 1 whenever anything matched, so the mode switch then only tells "something
    matched" from "nothing did". A ceiling that belongs to the query makes R absolute:
    the sum of the query terms' idf (the BM25 of an average-length document holding
    each term once) lets a weak, partial match fall under the threshold and leave
    small talk to emergence. Scores <= 0 (no match) give 0.
    """
    if ceiling is not None and not ceiling > 0:
        raise ValueError("ceiling must be > 0")
    top = max(scores, default=0.0) if ceiling is None else ceiling
    if top <= 0:
        return [0.0] * len(scores)
    return [min(max(score, 0.0) / top, 1.0) for score in scores]


def unresolved(age_days: float, open: bool, tau: float = 7.0) -> float:
    """U: 1 - exp(-age/τ) for an open item, 0 for a closed one; in [0, 1)."""
    return -math.expm1(-max(age_days, 0.0) / tau) if open else 0.0


def rarity(unsurfaced_days: float, tau: float = 30.0) -> float:
    """S: 1 - exp(-days/τ); in [0, 1)."""
    return -math.expm1(-max(unsurfaced_days, 0.0) / tau)


def faith(fidelity_ai: float) -> float:
    """0.5 + 0.5·fidelity_ai: an AI-sourced item never loses more than half its weight."""
    return 0.5 + 0.5 * fidelity_ai


def phi(r: float, u: float, s: float, faith: float, config: PotentialConfig) -> float:
    """Φ = [a·R + (1 - R)·(g·U + e·S)] · faith."""
    return (config.a * r + (1 - r) * (config.g * u + config.e * s)) * faith


def rank(
    items: Sequence[Scored], config: PotentialConfig, *, ceiling: float | None = None
) -> Ranking:
    """Rank ``items`` in the mode the best R calls for (see the module docstring).

    ``ceiling``: the BM25 score that counts as R = 1 (see :func:`normalise`). Raises
    ``ValueError`` when two items have the same kind and id.
    """
    names = {(item.kind, item.id) for item in items}
    if len(names) != len(items):
        raise ValueError("two candidates share a kind and an id; pass each item once")
    rs = normalise([item.bm25 for item in items], ceiling)
    best_r = max(rs, default=0.0)
    mode: Mode = "retrieval" if best_r >= config.threshold else "emergence"
    ranked = []
    for item, r in zip(items, rs, strict=True):
        if mode == "retrieval" and r <= 0:
            continue
        u = unresolved(item.age_days, item.open, config.tau_unresolved)
        s = rarity(item.unsurfaced_days, config.tau_rarity)
        f = faith(item.fidelity_ai)
        if mode == "retrieval":
            score, reason = r, f"bm25 R={r:.2f}"
        else:
            score, reason = phi(r, u, s, f, config), _reason(item, r, u, s, f, config)
        ranked.append(
            RankedItem(
                id=item.id, kind=item.kind, score=score, r=r, u=u, s=s, faith=f, reason=reason
            )
        )
    ranked.sort(key=lambda i: (-i.score, _KIND_ORDER[i.kind], i.id))
    return Ranking(mode=mode, best_r=best_r, items=ranked)


def _reason(item: Scored, r: float, u: float, s: float, f: float, config: PotentialConfig) -> str:
    """The parts of Φ that count, largest first (at most two), then faith when below 1."""
    parts = [
        (config.a * r, f"bm25 R={r:.2f}"),
        ((1 - r) * config.g * u, f"{_open_label(item)} {_days(item.age_days)}, U={u:.2f}"),
        ((1 - r) * config.e * s, f"unsurfaced {_days(item.unsurfaced_days)}, S={s:.2f}"),
    ]
    # sorted() is stable: equal contributions keep the R, U, S order.
    shown = [text for weight, text in sorted(parts, key=lambda p: -p[0]) if weight > 0][:2]
    if f < 1:
        shown.append(f"faith {f:.2f}")
    return "; ".join(shown) or "nothing pending"


def _open_label(item: Scored) -> str:
    return _OPEN_LABEL.get(item.kind, f"open {item.kind}")


def _days(days: float) -> str:
    whole = round(max(days, 0.0))
    return "1 day" if whole == 1 else f"{whole} days"
