"""The outputs hub: publishing never waits, filters work, and a slow subscriber loses
only its own outputs, counted and reported to it."""

from __future__ import annotations

import re
from pathlib import Path

import anyio
import pytest

from supervisor.outputs import OUTPUT_KINDS, Outputs


async def test_filters_by_soul_and_kind() -> None:
    hub = Outputs()
    with (
        hub.subscribe(frozenset({"ada"}), frozenset({"wakeup"})) as ada_wakeups,
        hub.subscribe() as everything,
    ):
        hub.publish("ada", "reflect", {"n": 1})
        hub.publish("bob", "wakeup", {"n": 2})
        hub.publish("ada", "wakeup", {"n": 3})
        with anyio.fail_after(5):
            first = await ada_wakeups.receive()
            seen = [(await everything.receive()).payload["n"] for _ in range(3)]
    assert (first.soul, first.kind, first.payload) == ("ada", "wakeup", {"n": 3})
    assert seen == [1, 2, 3]
    assert hub.subscribers == 0
    assert hub.published == 3


async def test_a_slow_subscriber_is_told_what_it_missed() -> None:
    hub = Outputs()
    with hub.subscribe(capacity=2) as slow, hub.subscribe(capacity=100) as fast:
        for n in range(5):
            hub.publish("ada", "spark", {"n": n})  # returns at once, whoever listens
        with anyio.fail_after(5):
            overflow = await slow.receive()
            kept = [(await slow.receive()).payload["n"] for _ in range(2)]
            everything = [(await fast.receive()).payload["n"] for _ in range(5)]
        hub.publish("ada", "spark", {"n": 5})
        with anyio.fail_after(5):
            after = await slow.receive()
    assert (overflow.kind, overflow.payload) == ("overflow", {"dropped": 3, "total": 3})
    assert kept == [0, 1]
    assert everything == [0, 1, 2, 3, 4]
    assert after.payload == {"n": 5}  # reported once, then the stream goes on
    assert slow.dropped == 3


def test_only_the_listed_kinds_are_published() -> None:
    hub = Outputs()
    with pytest.raises(ValueError, match="unknown output kind 'reflects'"):
        hub.publish("ada", "reflects", {})
    assert hub.published == 0


def test_every_kind_the_code_publishes_is_listed() -> None:
    """The one list: each kind a soul emits or the daemon publishes is in OUTPUT_KINDS,
    and each listed kind is published somewhere (``overflow`` by the hub itself)."""
    call = re.compile(r'(?:\._emit|\.publish)\(\s*(?:[\w.]+,\s*)?"(\w+)"')
    root = Path(__file__).resolve().parents[2]
    published = {
        kind
        for package in ("souls", "supervisor", "channels")
        for source in (root / package).rglob("*.py")
        for kind in call.findall(source.read_text(encoding="utf-8"))
    }
    assert published | {"overflow"} == set(OUTPUT_KINDS)
