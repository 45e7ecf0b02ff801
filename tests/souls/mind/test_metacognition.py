from __future__ import annotations

import math

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

from souls.mind.metacognition import (
    GAPS_INSTRUCTION,
    Confidence,
    MetacognitionConfig,
    gap_for,
    gap_matches,
    known_gaps_section,
    sense_confidence,
)

CONFIG = MetacognitionConfig()


def sense(
    relevant: int = 0,
    positive: float = 0.0,
    negative: float = 0.0,
    gaps: tuple[str, ...] = (),
    config: MetacognitionConfig = CONFIG,
) -> Confidence:
    return sense_confidence("deploy", relevant, positive, negative, gaps, config)


def test_signals_and_score() -> None:
    assert sense() == Confidence(
        topic="deploy", state="low_confidence", score=0.275, coverage=0.0, somatic=0.5, gaps=[]
    )
    full = sense(5, positive=3.0, negative=1.0)
    assert (full.coverage, full.somatic, full.score, full.state) == (1.0, 0.75, 0.9375, "confident")
    assert sense(50).coverage == 1.0
    assert sense(2).coverage == 0.4
    assert sense(negative=2.0).somatic == 0.0


def test_gaps_lower_the_score_until_saturation() -> None:
    assert sense(5).score == 0.875
    assert sense(5, gaps=("a",)).score == 0.825
    assert sense(5, gaps=("a", "b", "c")).score == 0.725
    assert sense(5, gaps=("a", "b", "c", "d", "e")).score == 0.725
    # The same gap twice counts once.
    assert sense(5, gaps=("a", "a")).gaps == ["a"]


@pytest.mark.parametrize(
    ("relevant", "positive", "negative", "gaps", "score", "state"),
    [
        # 0.6 * 1 + 0.25 * 0 + 0.15 * (1 - 2/3): exactly confident_at.
        (5, 0.0, 1.0, ("a", "b"), 0.65, "confident"),
        # ... and just below it.
        (5, 0.0, 1.0, ("a", "b", "c"), 0.6, "uncertain"),
        # 0.6 * 0 + 0.25 * 1 + 0.15 * 1: exactly uncertain_at.
        (0, 1.0, 0.0, (), 0.4, "uncertain"),
        # ... and just below it.
        (0, 1.0, 0.0, ("a",), 0.35, "low_confidence"),
    ],
)
def test_states_at_the_boundaries(
    relevant: int,
    positive: float,
    negative: float,
    gaps: tuple[str, ...],
    score: float,
    state: str,
) -> None:
    confidence = sense(relevant, positive, negative, gaps)
    assert (confidence.score, confidence.state) == (score, state)


def test_inputs_are_validated() -> None:
    with pytest.raises(ValueError, match="relevant_memories"):
        sense(-1)
    for bad in (-1.0, math.nan, math.inf):
        with pytest.raises(ValueError, match="finite"):
            sense(positive=bad)


def test_confidence_goes_on_the_wire() -> None:
    confidence = sense(2, 1.0, 1.0, ("deploy: no memories",))
    wire = msgspec.json.encode(confidence)
    assert msgspec.json.decode(wire, type=Confidence) == confidence


@pytest.mark.parametrize(
    ("topic", "gap_topic"),
    [
        ("deploy", "deploys"),
        ("deploy", "deployed"),
        ("deploys", "deployment"),  # Snowball: deployment → deploy
        ("Deploying to prod", "the deployer"),
        ("database migration", "migrate the schema"),
        ("数据库", "数据库迁移"),
        ("数据库", "数据"),
        ("猫", "黑猫"),  # a one-character word matches by its character
        ("猫", "猫"),
    ],
)
def test_gap_matches(topic: str, gap_topic: str) -> None:
    assert gap_matches(topic, gap_topic)
    assert gap_matches(gap_topic, topic)


@pytest.mark.parametrize(
    ("topic", "gap_topic"),
    [
        # What the stemmer does not join: a prefix, irregular forms, noun vs verb stems.
        ("deploy", "redeploy"),
        ("run", "ran"),
        ("analysis", "analyze"),
        ("mouse", "mice"),
        # Stopwords alone never match content.
        ("how to deploy", "how to migrate"),
        # CJK by bigram: a shared character is not enough.
        ("数据库", "数学"),
        ("deploy", ""),
    ],
)
def test_gap_does_not_match(topic: str, gap_topic: str) -> None:
    assert not gap_matches(topic, gap_topic)
    assert not gap_matches(gap_topic, topic)


def test_known_gaps_section() -> None:
    assert known_gaps_section([], CONFIG) == ""
    assert known_gaps_section(["  ", ""], CONFIG) == ""
    assert known_gaps_section(["deploy: no memories"], CONFIG) == (
        "You have recorded gaps in your knowledge. On these topics, admit uncertainty or"
        " search before guessing:\n"
        "- deploy: no memories"
    )


def test_known_gaps_section_shows_the_latest_last() -> None:
    gaps = [f"gap {i}" for i in range(8)]
    lines = known_gaps_section(gaps, CONFIG).splitlines()
    assert lines[0] == GAPS_INSTRUCTION
    assert lines[1:] == ["- gap 3", "- gap 4", "- gap 5", "- gap 6", "- gap 7"]
    assert known_gaps_section(gaps, MetacognitionConfig(inject_gaps=1)).splitlines()[1:] == [
        "- gap 7"
    ]
    assert known_gaps_section(gaps, MetacognitionConfig(inject_gaps=0)) == ""


def test_a_gap_is_one_line() -> None:
    text = known_gaps_section(["deploy:\n  no   memories"], CONFIG)
    assert text.splitlines()[1:] == ["- deploy: no memories"]


def test_gap_for_only_low_confidence() -> None:
    assert gap_for("deploy", sense()) == "deploy: no memories and no clear experience either way"
    assert gap_for("deploy", sense(5)) is None
    assert gap_for("deploy", sense(2)) is None  # uncertain
    low = sense(1, negative=3.0, gaps=("deploy: x",))
    assert low.state == "low_confidence"
    assert gap_for(" the  deploy ", low) == (
        "the deploy: few memories and mostly bad experience and 1 gap(s) recorded before"
    )


@pytest.mark.parametrize(
    "kwargs",
    [
        {"coverage_saturation": 0},
        {"gap_penalty_saturation": 0},
        {"w_coverage": 0.7},
        {"w_coverage": 1.2, "w_somatic": -0.2, "w_gaps": 0.0},
        {"confident_at": 0.3},
        {"uncertain_at": -0.1},
        {"confident_at": 1.1},
        {"inject_gaps": -1},
    ],
)
def test_config_validation(kwargs: dict[str, object]) -> None:
    with pytest.raises(ValueError):  # noqa: PT011
        MetacognitionConfig(**kwargs)  # type: ignore[arg-type]


def test_config_rejects_unknown_keys() -> None:
    with pytest.raises(msgspec.ValidationError):
        msgspec.convert({"confident": 0.5}, MetacognitionConfig)


weights = st.tuples(st.floats(0, 1), st.floats(0, 1)).filter(lambda w: w[0] + w[1] <= 1)


@given(
    st.integers(0, 1000),
    st.floats(0, 1e9),
    st.floats(0, 1e9),
    st.lists(st.text(max_size=5), max_size=10),
    weights,
    st.integers(1, 10),
    st.integers(1, 10),
)
def test_scores_stay_in_the_unit_interval(
    relevant: int,
    positive: float,
    negative: float,
    gaps: list[str],
    w: tuple[float, float],
    coverage_saturation: int,
    gap_penalty_saturation: int,
) -> None:
    config = MetacognitionConfig(
        w_coverage=w[0],
        w_somatic=w[1],
        w_gaps=max(0.0, 1 - w[0] - w[1]),
        coverage_saturation=coverage_saturation,
        gap_penalty_saturation=gap_penalty_saturation,
    )
    confidence = sense_confidence("topic", relevant, positive, negative, gaps, config)
    assert 0 <= confidence.score <= 1
    assert 0 <= confidence.coverage <= 1
    assert 0 <= confidence.somatic <= 1
    expected = (
        "confident"
        if confidence.score >= config.confident_at
        else "uncertain"
        if confidence.score >= config.uncertain_at
        else "low_confidence"
    )
    assert confidence.state == expected
    assert (gap_for("topic", confidence) is None) == (confidence.state != "low_confidence")
