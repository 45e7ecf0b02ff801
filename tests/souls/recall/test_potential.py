from __future__ import annotations

import math
import random

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

import souls.recall.potential
from souls.recall.potential import (
    PotentialConfig,
    RankedItem,
    Ranking,
    Scored,
    faith,
    normalise,
    phi,
    rank,
    rarity,
    unresolved,
)

CONFIG = PotentialConfig()


def test_public_surface() -> None:
    assert sorted(souls.recall.potential.__all__) == [
        "Kind",
        "Mode",
        "OPEN_KINDS",
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


def test_normalise_divides_by_the_best_score() -> None:
    assert normalise([4.0, 2.0, 0.0, -3.0]) == [1.0, 0.5, 0.0, 0.0]
    assert normalise([0.0, 0.0]) == [0.0, 0.0]
    assert normalise([]) == []


def test_normalise_against_a_ceiling_is_absolute_and_clamped() -> None:
    assert normalise([1.0, 5.0, 15.0, -1.0], ceiling=10.0) == [0.1, 0.5, 1.0, 0.0]
    with pytest.raises(ValueError, match="ceiling must be > 0"):
        normalise([1.0], ceiling=0.0)


def test_unresolved_saturates_with_age_and_needs_an_open_item() -> None:
    assert unresolved(7.0, True) == pytest.approx(1 - math.exp(-1))
    assert unresolved(70.0, True) == pytest.approx(1.0, abs=1e-4)
    assert unresolved(3.0, True, tau=3.0) == pytest.approx(1 - math.exp(-1))
    assert unresolved(0.0, True) == 0.0
    assert unresolved(-2.0, True) == 0.0  # clock skew counts as just opened
    assert unresolved(700.0, False) == 0.0


def test_rarity_grows_with_time_unsurfaced() -> None:
    assert rarity(30.0) == pytest.approx(1 - math.exp(-1))
    assert rarity(0.0) == 0.0
    assert rarity(10.0, tau=10.0) == pytest.approx(0.6321205588)


def test_faith_discounts_the_ai_side_by_at_most_half() -> None:
    assert (faith(0.0), faith(0.5), faith(1.0)) == (0.5, 0.75, 1.0)


def test_phi() -> None:
    assert phi(0.5, 1.0, 0.0, 1.0, CONFIG) == pytest.approx(0.5 + 0.5 * 0.6)
    assert phi(0.0, 1.0, 1.0, 0.5, CONFIG) == pytest.approx(0.5)
    assert phi(1.0, 1.0, 1.0, 1.0, CONFIG) == 1.0  # R = 1 leaves no room for pressure


def test_retrieval_mode_ranks_matches_by_r() -> None:
    ranking = rank(
        [
            Scored(id=1, kind="memory", text="deploy failed", bm25=2.0),
            Scored(id=2, kind="memory", text="deploy fixed", bm25=8.0),
            Scored(id=3, kind="commitment", text="call mum", open=True, age_days=30.0),
        ],
        CONFIG,
    )
    assert ranking == Ranking(
        mode="retrieval",
        best_r=1.0,
        items=[
            RankedItem(
                id=2, kind="memory", score=1.0, r=1.0, u=0.0, s=0.0, faith=1.0, reason="bm25 R=1.00"
            ),
            RankedItem(
                id=1,
                kind="memory",
                score=0.25,
                r=0.25,
                u=0.0,
                s=0.0,
                faith=1.0,
                reason="bm25 R=0.25",
            ),
        ],
    )


def test_empty_query_surfaces_the_old_unkept_promise_first() -> None:
    items = [
        Scored(id=5, kind="task", text="water the plants"),
        Scored(id=3, kind="question", text="which school?", open=True, age_days=2.0),
        Scored(id=4, kind="claim", text="user.tea=oolong", unsurfaced_days=40.0, fidelity_ai=0.5),
        Scored(id=2, kind="memory", text="hiked the ridge", unsurfaced_days=40.0),
        Scored(id=1, kind="commitment", text="I'll stay up with you", open=True, age_days=21.0),
    ]
    ranking = rank(items, CONFIG)
    assert (ranking.mode, ranking.best_r) == ("emergence", 0.0)
    got = [(i.kind, i.id, round(i.score, 4), i.reason) for i in ranking.items]
    assert got == [
        ("commitment", 1, 0.5701, "open commitment 21 days, U=0.95"),
        ("memory", 2, 0.2946, "unsurfaced 40 days, S=0.74"),
        ("claim", 4, 0.2209, "unsurfaced 40 days, S=0.74; faith 0.75"),
        ("question", 3, 0.1491, "unanswered question 2 days, U=0.25"),
        ("task", 5, 0.0, "nothing pending"),
    ]


def test_a_weak_match_against_a_ceiling_leaves_the_query_to_emergence() -> None:
    items = [
        Scored(id=1, kind="memory", text="tired after the run", bm25=1.0),
        Scored(
            id=2,
            kind="commitment",
            text="stay with you tonight",
            bm25=0.5,
            open=True,
            age_days=21.0,
        ),
    ]
    ranking = rank(items, CONFIG, ceiling=10.0)
    assert (ranking.mode, ranking.best_r) == ("emergence", 0.1)
    first, second = ranking.items
    assert (first.kind, first.score) == (
        "commitment",
        pytest.approx(0.05 + 0.95 * 0.6 * (1 - math.exp(-3))),
    )
    assert first.reason == "open commitment 21 days, U=0.95; bm25 R=0.05"
    assert (second.kind, second.score, second.reason) == (
        "memory",
        pytest.approx(0.1),
        "bm25 R=0.10",
    )
    # The same scores without a ceiling: the best match is R = 1, retrieval mode.
    assert rank(items, CONFIG).mode == "retrieval"


def test_best_r_at_the_threshold_is_retrieval() -> None:
    ranking = rank([Scored(id=1, kind="memory", text="x", bm25=2.0)], CONFIG, ceiling=10.0)
    assert (ranking.mode, ranking.best_r) == ("retrieval", 0.2)


def test_ties_go_by_kind_then_id() -> None:
    items = [
        Scored(id=i, kind=kind, text="", unsurfaced_days=10.0)
        for i, kind in [
            (1, "memory"),
            (9, "commitment"),
            (4, "question"),
            (2, "memory"),
            (3, "task"),
        ]
    ]
    order = [(i.kind, i.id) for i in rank(items, CONFIG).items]
    assert order == [("commitment", 9), ("question", 4), ("task", 3), ("memory", 1), ("memory", 2)]


def test_no_items() -> None:
    assert rank([], CONFIG) == Ranking(mode="emergence", best_r=0.0, items=[])


def test_duplicate_items_are_refused() -> None:
    same = Scored(id=1, kind="memory", text="a")
    other_kind = Scored(id=1, kind="claim", text="a")
    assert len(rank([same, other_kind], CONFIG).items) == 2
    with pytest.raises(ValueError, match="share a kind and an id"):
        rank([same, same], CONFIG)


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"fidelity_ai": 1.5}, "memory 1: fidelity_ai must be in"),
        ({"bm25": math.nan}, "memory 1: bm25 and day counts must be finite"),
        ({"age_days": math.inf}, "must be finite"),
    ],
)
def test_scored_validates(fields: dict[str, float], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        Scored(id=1, kind="memory", text="a", **fields)


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"threshold": 0.0}, "threshold must be in"),
        ({"g": -0.1}, "a, g and e must be >= 0"),
        ({"tau_rarity": 0.0}, "tau_unresolved and tau_rarity must be > 0"),
    ],
)
def test_config_validates(fields: dict[str, float], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        PotentialConfig(**fields)


def test_config_refuses_unknown_fields() -> None:
    with pytest.raises(msgspec.ValidationError, match="unknown field `gamma`"):
        msgspec.convert({"gamma": 1.0}, PotentialConfig)


days = st.floats(min_value=-5, max_value=400, allow_nan=False)
items_strategy = st.lists(
    st.builds(
        Scored,
        id=st.integers(0, 30),
        kind=st.sampled_from(["memory", "claim", "goal", "question", "commitment", "task"]),
        text=st.just(""),
        bm25=st.one_of(st.just(0.0), st.floats(min_value=-2, max_value=20, allow_nan=False)),
        open=st.booleans(),
        age_days=days,
        unsurfaced_days=days,
        fidelity_ai=st.floats(min_value=0, max_value=1),
    ),
    unique_by=lambda item: (item.kind, item.id),
    max_size=25,
)


@given(items_strategy, st.randoms(use_true_random=False), st.sampled_from([None, 5.0, 50.0]))
def test_same_input_same_ranking_whatever_the_order(
    items: list[Scored], shuffler: random.Random, ceiling: float | None
) -> None:
    ranking = rank(items, CONFIG, ceiling=ceiling)
    shuffled = items[:]
    shuffler.shuffle(shuffled)
    assert rank(shuffled, CONFIG, ceiling=ceiling) == ranking
    for item in ranking.items:
        assert 0.0 <= item.score <= 1.0
        assert 0.0 <= item.r <= ranking.best_r
    if ranking.mode == "retrieval":
        assert ranking.best_r >= CONFIG.threshold
        assert all(item.r > 0 and item.score == item.r for item in ranking.items)
    else:
        assert ranking.best_r < CONFIG.threshold
        assert len(ranking.items) == len(items)
    scores = [item.score for item in ranking.items]
    assert scores == sorted(scores, reverse=True)
