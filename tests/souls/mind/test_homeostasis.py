from __future__ import annotations

import math

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

from souls.mind.homeostasis import (
    Drives,
    HomeostasisConfig,
    Signal,
    check,
    distance,
    measure,
    nudge,
)

CONFIG = HomeostasisConfig()

QUIET = "It has been quiet for a while: reach out or pick up an open task."
ROUTINE = "Things have felt routine: look for something you have not explored yet."
GLOOMY = "Recent experience leans heavily negative: slow down and double-check before acting."
ROSY = "Recent experience leans heavily positive: look for what might be going wrong unnoticed."


def drives(engaged: float, curious: float, balanced: float, lean: float = 0.0) -> Drives:
    return Drives(engaged=engaged, curious=curious, balanced=balanced, lean=lean)


def test_engaged_is_activity_against_a_full_day() -> None:
    assert measure(0, [], 0, 0, CONFIG).engaged == 0.0
    assert measure(5, [], 0, 0, CONFIG).engaged == 0.25
    assert measure(20, [], 0, 0, CONFIG).engaged == 1.0
    assert measure(500, [], 0, 0, CONFIG).engaged == 1.0
    with pytest.raises(ValueError, match="events_last_day"):
        measure(-1, [], 0, 0, CONFIG)


def test_curious_is_mean_surprise() -> None:
    assert measure(0, [], 0, 0, CONFIG).curious == 0.0
    assert measure(0, [0.2, 0.4, 0.9], 0, 0, CONFIG).curious == 0.5
    assert measure(0, [1.5, -1.0], 0, 0, CONFIG).curious == 0.5  # clamped to [0, 1]
    assert measure(0, [math.nan, 0.3], 0, 0, CONFIG).curious == 0.3  # NaN ignored


def test_balanced_and_lean() -> None:
    even = measure(0, [], 0, 0, CONFIG)
    assert (even.balanced, even.lean) == (1.0, 0.0)
    assert measure(0, [], 2.0, 2.0, CONFIG).balanced == 1.0
    gloomy = measure(0, [], 1.0, 3.0, CONFIG)
    assert (gloomy.balanced, gloomy.lean) == (0.5, -0.5)
    rosy = measure(0, [], 4.0, 0.0, CONFIG)
    assert (rosy.balanced, rosy.lean) == (0.0, 1.0)
    for bad in (-1.0, math.inf, math.nan):
        with pytest.raises(ValueError, match="finite"):
            measure(0, [], bad, 0, CONFIG)


def test_distance_is_zero_when_every_target_is_met() -> None:
    assert distance(drives(0.6, 0.6, 0.6), CONFIG) == 0.0
    assert distance(drives(1.0, 0.9, 0.7), CONFIG) == 0.0


def test_distance_is_one_when_every_targeted_drive_is_zero() -> None:
    assert distance(drives(0.0, 0.0, 0.0), CONFIG) == 1.0
    assert distance(drives(0.0, 1.0, 1.0), HomeostasisConfig(target=["engaged"])) == 1.0


def test_distance_is_the_rms_shortfall_over_the_level() -> None:
    # Shortfalls 0.3, 0, 0 → rms 0.3 / sqrt(3), over 0.6.
    assert distance(drives(0.3, 0.6, 1.0), CONFIG) == round(0.3 / math.sqrt(3) / 0.6, 4)
    assert distance(drives(0.3, 0.0, 1.0), HomeostasisConfig(target=["engaged"])) == 0.5
    assert distance(drives(0.0, 0.0, 0.0), HomeostasisConfig(target=[])) == 0.0


def test_no_nudge_at_or_below_the_threshold() -> None:
    assert nudge(drives(0.6, 0.6, 0.6), CONFIG) is None
    # One drive at 0 among three: rms = 0.6 / sqrt(3) → distance 0.5774 > 0.35.
    assert nudge(drives(0.0, 0.6, 0.6), CONFIG) == QUIET
    # Just the threshold: one target, shortfall 0.21 of 0.6 = 0.35 exactly → no nudge.
    assert nudge(drives(0.39, 1.0, 1.0), HomeostasisConfig(target=["engaged"])) is None
    assert nudge(drives(0.38, 1.0, 1.0), HomeostasisConfig(target=["engaged"])) == QUIET


def test_nudge_addresses_the_largest_shortfall() -> None:
    assert nudge(drives(0.5, 0.0, 0.4), CONFIG) == ROUTINE
    assert nudge(drives(0.5, 0.4, 0.0, lean=-1.0), CONFIG) == GLOOMY
    assert nudge(drives(0.5, 0.4, 0.0, lean=1.0), CONFIG) == ROSY
    assert nudge(drives(0.0, 0.5, 0.4), CONFIG) == QUIET


def test_nudge_ties_go_to_the_earlier_target() -> None:
    assert nudge(drives(0.0, 0.0, 0.0), CONFIG) == QUIET
    reordered = HomeostasisConfig(target=["balanced", "curious", "engaged"])
    assert nudge(drives(0.0, 0.0, 0.0, lean=-1.0), reordered) == GLOOMY
    assert nudge(drives(0.0, 0.0, 0.0), HomeostasisConfig(target=["curious", "engaged"])) == ROUTINE


def test_untargeted_drives_are_ignored() -> None:
    config = HomeostasisConfig(target=["curious"])
    assert nudge(drives(0.0, 0.6, 0.0), config) is None
    assert nudge(drives(1.0, 0.0, 1.0), config) == ROUTINE


def test_check_measures_and_nudges() -> None:
    quiet = check(0, [0.9], 1.0, 1.0, CONFIG)
    assert quiet == Signal(distance=0.5774, drives=drives(0.0, 0.9, 1.0, lean=0.0), sentence=QUIET)
    gloomy = check(20, [0.8], 0.0, 5.0, CONFIG)
    assert gloomy.sentence == GLOOMY
    assert check(20, [0.8, 0.6], 1.0, 1.0, CONFIG).sentence is None


def test_signal_goes_on_the_wire() -> None:
    signal = check(3, [0.1], 0.0, 2.0, CONFIG)
    assert msgspec.json.decode(msgspec.json.encode(signal), type=Signal) == signal


@pytest.mark.parametrize(
    "kwargs",
    [
        {"target": ["engaged", "happy"]},
        {"target": ["engaged", "engaged"]},
        {"level": 0.0},
        {"level": 1.1},
        {"nudge_threshold": -0.1},
        {"active_events_per_day": 0},
        {"check_every_minutes": 0},
    ],
)
def test_config_validation(kwargs: dict[str, object]) -> None:
    with pytest.raises(ValueError):  # noqa: PT011
        HomeostasisConfig(**kwargs)  # type: ignore[arg-type]


def test_config_decodes_and_rejects_unknown_drives_and_keys() -> None:
    config = msgspec.convert({"target": ["curious"], "level": 0.5}, HomeostasisConfig)
    assert config.target == ["curious"]
    with pytest.raises(msgspec.ValidationError):
        msgspec.convert({"target": ["bored"]}, HomeostasisConfig)
    with pytest.raises(msgspec.ValidationError):
        msgspec.convert({"levle": 0.5}, HomeostasisConfig)


unit = st.floats(0, 1)


@given(
    st.integers(0, 10_000),
    st.lists(st.floats(-2, 2), max_size=20),
    st.floats(0, 1e6),
    st.floats(0, 1e6),
    st.lists(st.sampled_from(["engaged", "curious", "balanced"]), unique=True),
    st.floats(0.01, 1),
)
def test_drives_and_distance_stay_in_the_unit_interval(
    events: int,
    surprise: list[float],
    positive: float,
    negative: float,
    target: list[str],
    level: float,
) -> None:
    config = HomeostasisConfig(target=target, level=level)  # type: ignore[arg-type]
    signal = check(events, surprise, positive, negative, config)
    d = signal.drives
    assert all(0 <= v <= 1 for v in (d.engaged, d.curious, d.balanced))
    assert -1 <= d.lean <= 1
    assert 0 <= signal.distance <= 1
    assert (signal.sentence is None) == (signal.distance <= config.nudge_threshold)


@given(unit, unit, unit, st.floats(-1, 1))
def test_distance_of_any_drives_is_in_the_unit_interval(
    engaged: float, curious: float, balanced: float, lean: float
) -> None:
    assert 0 <= distance(drives(engaged, curious, balanced, lean), CONFIG) <= 1
