"""Lightning: the weighted random draw of old cards for collision memory (DESIGN §3.8).

A draw takes ``n - 1`` cards at random in proportion to their weight, then one wildcard
uniformly from what is left, so that a forgotten card can still surface. Weights are
computed here, by code, from verdicts and time; never by a model.

Invariants a caller may rely on:

- Pure: no I/O, no clock (``now`` is passed in). The only randomness is a
  ``random.Random`` seeded with ``Draw.seed`` (system entropy when no seed is given), so
  the same pool, ``now``, config and seed give the same ``Draw`` whatever the pool order.
- A draw depends on the pool only through its candidates' weights (``Draw.weights``)
  and the protein memberships: :func:`redraw` with a draw's weights and seed gives it
  again after verdicts, closures and weeks have changed the weights since.
- A protein is never drawn together with one of its member cards (direct membership).
- Every draw holds at least two cards; it holds fewer than ``n`` only when the protein
  rule leaves nothing compatible to draw. ``Draw.wildcard`` is always ``Draw.cards[-1]``.

Errors (``supervisor.errors.SoupdError`` below)::

    SoupdError
    ├── NotEnoughCards           not_enough_cards
    └── ExclusionError
        ├── AmbiguousExclusion   ambiguous_exclusion
        └── UnknownExclusion     unknown_exclusion
"""

from __future__ import annotations

import bisect
import itertools
import math
import random
import secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import msgspec

from supervisor.errors import SoupdError

__all__ = [
    "AmbiguousExclusion",
    "Draw",
    "ExclusionError",
    "LightningConfig",
    "NotEnoughCards",
    "PoolCard",
    "UnknownExclusion",
    "draw",
    "redraw",
    "resolve_exclusions",
    "weight",
]

_WEEK = 7 * 24 * 3600.0
# Most candidates an ambiguity error lists.
_MAX_CANDIDATES = 5


class LightningConfig(msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    # Cards per draw: n - 1 weighted picks, then one wildcard.
    n: int = 3
    # Weight multiplier per strong approval (Hebb).
    hebb: float = 2.0
    # Multiplier for a closed card: open questions keep a card warm (Zeigarnik).
    zeig_closed: float = 0.5
    # Multiplier per week untouched (fractional weeks count).
    decay: float = 0.7
    # A weight never falls below this, so every card keeps a chance.
    floor: float = 0.1
    # No draw from a pool (after exclusions) with fewer cards than this.
    min_rows: int = 10
    # Draw by itself when a "session_start" event arrives (its text is the topic).
    on_session_start: bool = False

    def __post_init__(self) -> None:
        if self.n < 2:
            raise ValueError("n must be at least 2 (one weighted card and the wildcard)")
        if not 0 < self.decay <= 1:
            raise ValueError("decay must be in (0, 1]")
        if self.floor <= 0:
            raise ValueError("floor must be > 0")
        if self.hebb < 1:
            raise ValueError("hebb must be >= 1")
        if not 0 < self.zeig_closed <= 1:
            raise ValueError("zeig_closed must be in (0, 1]")
        if self.min_rows < self.n:
            raise ValueError("min_rows must be >= n")


@dataclass(frozen=True, slots=True)
class PoolCard:
    number: int  # append-only, never reused
    path: str  # e.g. "ops/2026-11/0042"; what exclusion patterns match
    strong_approvals: int
    closed: bool  # no open questions left
    last_touched: float  # unix seconds
    members: frozenset[int] = frozenset()  # a protein's member cards; empty for a plain card


@dataclass(frozen=True, slots=True)
class Draw:
    seed: int  # pass it back to ``draw`` to reproduce this draw
    cards: list[int]  # weighted picks in draw order, the wildcard last
    wildcard: int
    weights: dict[int, float]  # every candidate's weight (after exclusions), by card number


class NotEnoughCards(SoupdError):
    code = "not_enough_cards"


class ExclusionError(SoupdError):
    """An exclusion pattern does not name the cards to leave out."""


class AmbiguousExclusion(ExclusionError):
    code = "ambiguous_exclusion"


class UnknownExclusion(ExclusionError):
    code = "unknown_exclusion"


def weight(card: PoolCard, now: float, config: LightningConfig) -> float:
    """``max(floor, hebb**approvals * (zeig_closed if closed) * decay**weeks)``.

    Weeks are fractional; a ``last_touched`` in the future counts as zero weeks, a negative
    approval count as zero approvals.
    """
    weeks = max(0.0, (now - card.last_touched) / _WEEK)
    raw = math.pow(config.hebb, max(0, card.strong_approvals)) * math.pow(config.decay, weeks)
    if card.closed:
        raw *= config.zeig_closed
    return max(config.floor, raw)


def resolve_exclusions(pool: Sequence[PoolCard], patterns: Sequence[str]) -> set[int]:
    """The numbers of the cards the patterns exclude; each pattern is resolved on its own.

    A pattern (trailing ``/`` ignored) names, in order of precedence: the cards whose path
    equals it; else the cards under it as a folder (prefix at a ``/`` boundary, so ``ops/1``
    does not take ``ops/10``); else the one card whose path contains it. A substring in
    several paths raises :class:`AmbiguousExclusion`, one in none
    :class:`UnknownExclusion`: an exclusion never silently takes more or less than meant.
    """
    cards = sorted(pool, key=lambda card: card.number)
    excluded: set[int] = set()
    for pattern in patterns:
        key = pattern.strip().rstrip("/")
        if not key:
            raise UnknownExclusion(f"empty exclusion pattern {pattern!r}; name a folder or card")
        hits = [c for c in cards if c.path == key]
        hits = hits or [c for c in cards if c.path.startswith(key + "/")]
        if not hits:
            hits = [c for c in cards if key in c.path]
            if len(hits) > 1:
                shown = ", ".join(f"#{c.number} {c.path}" for c in hits[:_MAX_CANDIDATES])
                more = len(hits) - _MAX_CANDIDATES
                raise AmbiguousExclusion(
                    f"exclusion {pattern!r} matches {len(hits)} cards ({shown}"
                    f"{f', and {more} more' if more > 0 else ''}); "
                    "use a longer pattern, a folder prefix or an exact path"
                )
        if not hits:
            raise UnknownExclusion(
                f"exclusion {pattern!r} matches no card path; "
                "use an exact path, a folder prefix or a unique part of a path"
            )
        excluded.update(c.number for c in hits)
    return excluded


def draw(
    pool: Sequence[PoolCard],
    now: float,
    config: LightningConfig,
    *,
    seed: int | None = None,
    exclude: Sequence[str] = (),
    n: int | None = None,
) -> Draw:
    """Draw ``n`` (default ``config.n``) cards: ``n - 1`` weighted, then one uniform wildcard.

    After each pick, the cards in conflict with it (its members, proteins it belongs to)
    leave the candidates. A weighted pick is only made among cards that leave at least one
    candidate for the wildcard; when none does, weighted picking stops early and the draw
    is shorter than ``n``. :class:`NotEnoughCards` is raised when fewer than
    ``config.min_rows`` cards remain after exclusions, or when no two of them may be drawn
    together; card numbers must be unique (``ValueError`` otherwise).
    """
    size = config.n if n is None else n
    if size < 2:
        raise ValueError("n must be at least 2 (one weighted card and the wildcard)")
    cards = sorted(pool, key=lambda card: card.number)
    if len({c.number for c in cards}) != len(cards):
        raise ValueError("card numbers in the pool must be unique")
    excluded = resolve_exclusions(cards, exclude)
    candidates = [c for c in cards if c.number not in excluded]
    if len(candidates) < config.min_rows:
        raise NotEnoughCards(
            f"only {len(candidates)} cards in the pool after excluding {len(excluded)}; "
            f"a draw needs at least min_rows = {config.min_rows}: add cards or exclude fewer"
        )
    weights = {c.number: weight(c, now, config) for c in candidates}
    if seed is None:
        seed = secrets.randbits(63)
    return _sample(candidates, weights, seed, size)


def redraw(pool: Sequence[PoolCard], weights: Mapping[int, float], seed: int, n: int) -> Draw:
    """The draw ``seed`` made from exactly the candidates and weights of ``weights`` (as
    a ledger row records them): the same cards whatever happened to the pool since.
    ``pool`` only says which cards are proteins of which; a recorded card missing from
    it raises ValueError."""
    if n < 2:
        raise ValueError("n must be at least 2 (one weighted card and the wildcard)")
    cards = {c.number: c for c in pool}
    missing = sorted(set(weights) - set(cards))
    if missing:
        raise ValueError(f"card {missing[0]} of the recorded draw is no longer in the pool")
    candidates = sorted((cards[number] for number in weights), key=lambda c: c.number)
    return _sample(candidates, dict(weights), seed, n)


def _sample(candidates: list[PoolCard], weights: dict[int, float], seed: int, size: int) -> Draw:
    """``size - 1`` weighted picks, then the wildcard, from ``candidates`` (by number)."""
    rng = random.Random(seed)
    partners = _partners(candidates)
    picked: list[int] = []
    while len(picked) < size - 1:
        # Only cards that leave a wildcard behind: in a pool without a protein that holds
        # every other candidate, that is all of them, so the weights are not distorted.
        numbers = {c.number for c in candidates}
        eligible = [c for c in candidates if len(partners[c.number] & numbers) < len(numbers) - 1]
        if not eligible:
            break
        chosen = _weighted_choice(rng, eligible, weights)
        picked.append(chosen.number)
        candidates = [
            c for c in candidates if c is not chosen and c.number not in partners[chosen.number]
        ]
    if not picked:
        raise NotEnoughCards(
            "no two cards in the pool may be drawn together (each pair is a protein and "
            "one of its members); add cards or exclude fewer"
        )
    wildcard = candidates[rng.randrange(len(candidates))].number
    return Draw(seed=seed, cards=[*picked, wildcard], wildcard=wildcard, weights=weights)


def _partners(cards: list[PoolCard]) -> dict[int, set[int]]:
    """For each card, the cards it may not be drawn with: its members, proteins holding it."""
    partners: dict[int, set[int]] = {c.number: set() for c in cards}
    for protein in cards:
        for member in protein.members & partners.keys():
            if member != protein.number:
                partners[protein.number].add(member)
                partners[member].add(protein.number)
    return partners


def _weighted_choice(
    rng: random.Random, cards: list[PoolCard], weights: dict[int, float]
) -> PoolCard:
    cumulative = list(itertools.accumulate(weights[c.number] for c in cards))
    # min() guards the float edge where random() * total rounds up to the total.
    index = bisect.bisect_right(cumulative, rng.random() * cumulative[-1])
    return cards[min(index, len(cards) - 1)]
