from __future__ import annotations

import math
import random
from collections import Counter
from itertools import combinations

import msgspec
import pytest

from souls.collision.lightning import (
    AmbiguousExclusion,
    ExclusionError,
    LightningConfig,
    NotEnoughCards,
    PoolCard,
    UnknownExclusion,
    draw,
    resolve_exclusions,
    weight,
)
from supervisor.errors import SoupdError

WEEK = 604800.0
NOW = 1_800_000_000.0
CONFIG = LightningConfig()


def card(
    number: int,
    path: str | None = None,
    *,
    approvals: int = 0,
    closed: bool = False,
    weeks: float = 0.0,
    members: frozenset[int] = frozenset(),
) -> PoolCard:
    return PoolCard(
        number=number,
        path=path if path is not None else f"ops/2026-11/{number:04d}",
        strong_approvals=approvals,
        closed=closed,
        last_touched=NOW - weeks * WEEK,
        members=members,
    )


def plain_pool(count: int = 12) -> list[PoolCard]:
    return [card(i, approvals=i % 3, closed=i % 2 == 0, weeks=i / 2) for i in range(1, count + 1)]


@pytest.mark.parametrize(
    ("kwargs", "expected"),
    [
        ({}, 1.0),
        ({"approvals": 1}, 2.0),
        ({"approvals": 3}, 8.0),
        ({"closed": True}, 0.5),
        ({"weeks": 1}, 0.7),
        ({"weeks": 2.5}, 0.7**2.5),
        ({"weeks": -3}, 1.0),  # touched "in the future": never above a fresh card
        ({"approvals": 2, "closed": True, "weeks": 2}, 4 * 0.5 * 0.49),
        ({"weeks": 20}, 0.1),  # 0.7**20 ~ 0.0008: the floor holds
        ({"closed": True, "weeks": 6}, 0.1),  # 0.5 * 0.7**6 ~ 0.059
    ],
)
def test_weight_formula(kwargs: dict[str, float], expected: float) -> None:
    assert weight(card(1, **kwargs), NOW, CONFIG) == pytest.approx(expected)  # type: ignore[arg-type]


def test_weight_follows_the_config() -> None:
    config = LightningConfig(hebb=3.0, zeig_closed=0.25, decay=0.5, floor=0.01)
    assert weight(card(1, approvals=2, closed=True, weeks=1), NOW, config) == pytest.approx(1.125)
    assert weight(card(1, weeks=10), NOW, config) == pytest.approx(0.01)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"n": 1},
        {"decay": 0.0},
        {"decay": 1.5},
        {"floor": 0.0},
        {"hebb": 0.5},
        {"zeig_closed": 0.0},
        {"zeig_closed": 1.1},
        {"n": 4, "min_rows": 3},
    ],
)
def test_config_rejects_nonsense(kwargs: dict[str, float]) -> None:
    with pytest.raises(ValueError, match="must"):
        LightningConfig(**kwargs)  # type: ignore[arg-type]
    with pytest.raises(msgspec.ValidationError):
        msgspec.convert(kwargs, LightningConfig)


def test_draw_is_deterministic_under_a_seed_and_ignores_pool_order() -> None:
    pool = plain_pool()
    first = draw(pool, NOW, CONFIG, seed=42)
    shuffled = pool[:]
    random.Random(7).shuffle(shuffled)
    assert draw(shuffled, NOW, CONFIG, seed=42) == first
    assert len(first.cards) == 3
    assert first.wildcard == first.cards[-1]
    assert len(set(first.cards)) == 3
    assert first.weights == {c.number: weight(c, NOW, CONFIG) for c in pool}
    assert len({tuple(draw(pool, NOW, CONFIG, seed=s).cards) for s in range(30)}) > 1


def test_seed_is_recorded_when_none_is_given_and_reproduces_the_draw() -> None:
    pool = plain_pool()
    drawn = draw(pool, NOW, CONFIG)
    assert isinstance(drawn.seed, int)
    assert draw(pool, NOW, CONFIG, seed=drawn.seed) == drawn
    assert len({draw(pool, NOW, CONFIG).seed for _ in range(5)}) == 5


def test_n_overrides_the_config() -> None:
    drawn = draw(plain_pool(), NOW, CONFIG, seed=1, n=5)
    assert len(set(drawn.cards)) == 5
    with pytest.raises(ValueError, match="at least 2"):
        draw(plain_pool(), NOW, CONFIG, seed=1, n=1)


def test_weighted_pick_and_wildcard_follow_their_distributions() -> None:
    # n = 2: one weighted pick, then the wildcard uniform over the nine others.
    pool = [
        card(1, approvals=3),  # 8
        card(2, approvals=2),  # 4
        card(3, approvals=1),  # 2
        card(4),  # 1
        card(5, closed=True),  # 0.5
        card(6, weeks=1),  # 0.7
        card(7, approvals=1, closed=True),  # 1
        card(8, weeks=30),  # floor 0.1
        card(9, approvals=2, weeks=2),  # 1.96
        card(10, closed=True, weeks=1),  # 0.35
    ]
    config = LightningConfig(n=2)
    runs = 20_000
    picks: Counter[int] = Counter()
    wildcards: Counter[int] = Counter()
    for seed in range(runs):
        drawn = draw(pool, NOW, config, seed=seed)
        assert drawn.cards[0] != drawn.wildcard
        picks[drawn.cards[0]] += 1
        wildcards[drawn.wildcard] += 1
    weights = {c.number: weight(c, NOW, config) for c in pool}
    total = sum(weights.values())
    pick_p = {k: w / total for k, w in weights.items()}
    wild_p = {k: (1 - p) / (len(pool) - 1) for k, p in pick_p.items()}
    for observed, expected in ((picks, pick_p), (wildcards, wild_p)):
        chi2 = 0.0
        for number, p in expected.items():
            mean, sigma = runs * p, math.sqrt(runs * p * (1 - p))
            assert abs(observed[number] - mean) <= 3 * sigma, (number, observed[number], mean)
            chi2 += (observed[number] - mean) ** 2 / mean
        assert chi2 < 27.88  # 99.9th percentile of chi-square with 9 degrees of freedom


def test_a_protein_is_never_drawn_with_its_members() -> None:
    pool = [
        *plain_pool(10),
        card(100, "syn/0100", approvals=4, members=frozenset({1, 2, 3})),
        card(101, "syn/0101", approvals=4, members=frozenset({3, 4, 100})),
    ]
    config = LightningConfig(n=4)
    by_number = {c.number: c for c in pool}
    seen: set[int] = set()
    for seed in range(1500):
        drawn = draw(pool, NOW, config, seed=seed)
        assert len(drawn.cards) == 4
        seen.update(drawn.cards)
        for a, b in combinations(drawn.cards, 2):
            assert a not in by_number[b].members
            assert b not in by_number[a].members
    assert {1, 3, 100, 101} <= seen


def test_draw_is_shorter_when_the_protein_rule_leaves_nothing_to_draw() -> None:
    # Compatible sets: {1, 2} or {10, 11, 12}; never five cards.
    both = frozenset({1, 2})
    pool = [card(1), card(2), *(card(p, f"syn/{p}", members=both) for p in (10, 11, 12))]
    config = LightningConfig(n=5, min_rows=5)
    lengths = Counter(len(draw(pool, NOW, config, seed=s).cards) for s in range(300))
    assert set(lengths) == {2, 3}


def test_a_protein_holding_every_other_card_is_never_drawn_alone() -> None:
    pool = [*plain_pool(10), card(99, "syn/0099", approvals=5, members=frozenset(range(1, 11)))]
    for seed in range(200):
        drawn = draw(pool, NOW, CONFIG, seed=seed)
        assert len(drawn.cards) == 3
        assert 99 not in drawn.cards


def test_no_two_compatible_cards_is_not_enough() -> None:
    pool = [card(1), card(2, members=frozenset({1}))]
    with pytest.raises(NotEnoughCards, match="drawn together") as caught:
        draw(pool, NOW, LightningConfig(n=2, min_rows=2), seed=0)
    assert caught.value.code == "not_enough_cards"


def test_min_rows_is_enforced_after_exclusions() -> None:
    pool = [*plain_pool(10), card(11, "misc/0011")]
    draw(pool, NOW, CONFIG, seed=0)
    with pytest.raises(NotEnoughCards, match=r"only 9 cards.*min_rows = 10") as caught:
        draw(pool, NOW, CONFIG, seed=0, exclude=["misc", "0003"])
    assert isinstance(caught.value, SoupdError)
    drawn = draw(pool, NOW, LightningConfig(min_rows=9), seed=0, exclude=["misc", "0003"])
    assert not {3, 11} & set(drawn.cards)
    assert set(drawn.weights) == set(range(1, 11)) - {3}


EXCLUSION_POOL = [
    card(1, "ops/0001"),
    card(2, "ops/0001/notes"),
    card(3, "ops/2026-11/0003"),
    card(4, "ops/2026-11/0004"),
    card(5, "ops/2026-12/0005"),
    card(6, "devops/0006"),
    card(7, "research/alpha"),
    card(8, "research/alphabet"),
]


@pytest.mark.parametrize(
    ("patterns", "expected"),
    [
        (["ops/0001"], {1}),  # exact beats the prefix that would also take ops/0001/notes
        (["ops"], {1, 2, 3, 4, 5}),  # prefix beats the substring that would take devops
        (["ops/"], {1, 2, 3, 4, 5}),
        (["ops/2026-11"], {3, 4}),
        (["research/alpha"], {7}),  # exact, although alphabet contains it
        (["devops"], {6}),
        (["0004"], {4}),  # unique substring
        (["abet"], {8}),
        (["0006", "ops/2026-12"], {5, 6}),
        ([], set()),
    ],
)
def test_exclusion_precedence(patterns: list[str], expected: set[int]) -> None:
    assert resolve_exclusions(EXCLUSION_POOL, patterns) == expected


def test_prefix_stops_at_a_folder_boundary() -> None:
    # "ops/2026-1" is no folder; as a substring it is in three paths.
    with pytest.raises(AmbiguousExclusion, match="3 cards"):
        resolve_exclusions(EXCLUSION_POOL, ["ops/2026-1"])


def test_an_ambiguous_substring_lists_candidates_and_says_what_to_do() -> None:
    with pytest.raises(AmbiguousExclusion) as caught:
        resolve_exclusions(EXCLUSION_POOL, ["000"])
    message = caught.value.message
    assert caught.value.code == "ambiguous_exclusion"
    assert isinstance(caught.value, ExclusionError)
    assert "6 cards" in message
    assert "#1 ops/0001" in message
    assert "#5 ops/2026-12/0005" in message
    assert "#6" not in message  # at most five candidates
    assert "and 1 more" in message
    assert "longer pattern" in message


@pytest.mark.parametrize("pattern", ["zzz", "", "  ", "/"])
def test_an_unknown_pattern_is_an_error(pattern: str) -> None:
    with pytest.raises(UnknownExclusion) as caught:
        resolve_exclusions(EXCLUSION_POOL, ["ops", pattern])
    assert caught.value.code == "unknown_exclusion"
    assert isinstance(caught.value, SoupdError)
