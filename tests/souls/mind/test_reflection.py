"""The reflect clock (souls.mind.reflection): every surprise reflects at once, the storm
guard is by time only, a surprise it holds back is reflected later, not lost, and the
clock survives a restart."""

from __future__ import annotations

from souls.intake.surprise import SurpriseConfig
from souls.mind.reflection import ReflectClock, ReflectConfig

T0 = 1_800_000_000.0
EVERY = ReflectConfig()
GUARD = SurpriseConfig()  # 10 surprise reflects a minute


def test_surprises_at_a_human_pace_all_reflect_however_close_in_count() -> None:
    # A chat: a turn every 20 seconds, most of them news to a young summary.
    clock = ReflectClock()
    novelty = [1.0, 0.92, 0.73, 0.4, 0.88, 0.9, 0.81, 0.66, 0.3, 0.95, 0.77, 0.86, 0.7, 0.99]
    reasons = []
    for i, surprise in enumerate(novelty):
        reason = clock.observe(surprise, T0 + 20 * i, EVERY, GUARD)
        reasons.append(reason)
        if reason is not None:
            clock.reflected(reason, i + 1)
    assert reasons == ["surprise" if s > 0.65 else None for s in novelty]


def test_a_flood_reflects_a_few_times_and_the_held_surprise_is_not_lost() -> None:
    # A replayed log: 40 novel events within four seconds.
    clock = ReflectClock()
    reasons = []
    for i in range(40):
        reason = clock.observe(0.9, T0 + i * 0.1, EVERY, GUARD)
        reasons.append(reason)
        if reason is not None:
            clock.reflected(reason, i + 1)
    assert reasons[:10] == ["surprise"] * 10
    assert reasons.count("surprise") == 10  # the guard holds the rest of the minute...
    assert "periodic" in reasons  # ...where the periodic count still reflects
    # A routine event once the window has moved on reflects for what was held back.
    assert clock.observe(0.0, T0 + 61.0, EVERY, GUARD) == "surprise"
    clock.reflected("surprise", 41)
    assert clock.observe(0.0, T0 + 62.0, EVERY, GUARD) is None


def test_any_reflect_folds_a_held_surprise_in() -> None:
    guard = SurpriseConfig(storm_reflects=1, storm_window=60.0)
    clock = ReflectClock()
    assert clock.observe(1.0, T0, EVERY, guard) == "surprise"
    clock.reflected("surprise", 1)
    assert clock.observe(1.0, T0 + 1, EVERY, guard) is None  # held
    assert clock.held
    clock.reflected("manual", 2)  # `soupd reflect` folded it in
    assert clock.observe(0.0, T0 + 70, EVERY, guard) is None


def test_no_guard_when_storm_reflects_is_zero() -> None:
    off = SurpriseConfig(storm_reflects=0)
    clock = ReflectClock()
    assert [clock.observe(1.0, T0, EVERY, off) for _ in range(50)] == ["surprise"] * 50


def test_an_event_after_the_one_that_triggered_only_counts() -> None:
    clock = ReflectClock()
    assert clock.observe(1.0, T0, EVERY, GUARD) == "surprise"
    assert clock.observe(1.0, T0, EVERY, GUARD, triggered=True) is None
    assert clock.since == 2
    assert clock.surprises == [T0]  # the guard counts reflects, not surprising events


def test_the_clock_survives_a_restart_and_old_state_loads() -> None:
    clock = ReflectClock()
    for i in range(12):
        clock.observe(1.0, T0 + i, EVERY, GUARD)
    assert clock.held
    again = ReflectClock.from_state(clock.to_state())
    assert again == clock
    # A database written with the count-based cooldown still loads.
    old = ReflectClock.from_state(
        {"reflect.since": "3", "reflect.since_surprise": "2", "reflect.last_memory": "9"}
    )
    assert (old.since, old.last_memory, old.surprises, old.held) == (3, 9, [], False)
