# ruff: noqa: RUF001  (full-width punctuation and the multiplication sign are the point)
"""A long reflect summarises in a worker process (souls.mind.reflect.REFLECT_OFFLOAD_CHARS):
the same bytes as on the loop, and the loop serves other souls meanwhile."""

from __future__ import annotations

import random
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import anyio.lowlevel
import pytest

import souls.mind.reflect
import supervisor.pace
from souls.mind.reflect import REFLECT_OFFLOAD_CHARS, ExtractiveReflector, Observation, _summarise
from supervisor.pace import in_worker

_SAID = [
    "ok so um, the standup is at {h}:30 tmrw? no wait, {h2}, {who} moved it",
    "yeah {day} works. actually hmm, no, lets do {day2}, the migration needs a day",
    "deploy {n} failed: database migration timeout on db-{n2}, rolling back",
    "那个, {day}的发布要不改到{day2}? 嗯……其实还是{day}吧, 测试还没跑完",
    "线上报警了！支付服务 {n} 次超时，{who} 在查",
    "wait did anyone book the room for {day}? i thot {who} did but apparently not",
    "sorry typo, i meant {n} GB not {n2}, the disk on db-{n2} is nearly ful",
    "对了 {who} 说预算只有 {n} 万, 不是 {n2} 万, 我之前听错了, 抱歉",
    "can we revisit the cache ttl? {n}s felt fine but {who} saw stale prices at {h}pm",
    "fine by me. tbh i changed my mind twice already today, take it w/ a grain of salt",
    "lol ok",
    "嗯嗯",
    "backup {n} done",
    "what's the on-call rotation for {day}",
    "他们明天来吗",
    "so   the\tthing   is,\n the vendor ( {who} ) wants the contract signed by {day} "
    "and legal hasn't even looked at it yet, and the renewal clause still says twelve "
    "months although we agreed on six, and nobody has told finance about the new "
    "price either, which means the budget for Q{h2} is wrong again",
]
_WHO = ["Mia", "Joe", "Priya", "李雷", "韩梅梅", "Tomás"]
_DAYS = ["monday", "thursday", "friday", "周三", "周五"]
_KINDS = ["message", "message", "message", "dm", "voice", "heartbeat"]

PREVIOUS = """\
### Incidents
1. deploy 31 failed: database migration timeout on db-4, rolling back (×3) [m2, m40]
* 线上报警了！支付服务 12 次超时 [m7]
## 问题
- 他们明天来吗 [m9]
- what's the on-call rotation for friday (x2) [m11, m30]
## Notable
- yeah monday works. actually hmm, no, lets do thursday [m12]
- 对了 李雷 说预算只有 40 万, 不是 30 万 [m20]
some line an LLM wrote without a list marker
- lol ok (×12) [m1, m44]
"""


def observations(count: int, seed: int, first: int = 100) -> list[Observation]:
    """Messy chat: English and Chinese, fillers, alarms, questions, near-duplicates
    that differ only in their numbers, a long rambling line, voice notes."""
    rng = random.Random(seed)
    found = []
    for i in range(count):
        text = rng.choice(_SAID).format(
            who=rng.choice(_WHO),
            day=rng.choice(_DAYS),
            day2=rng.choice(_DAYS),
            h=rng.randrange(1, 12),
            h2=rng.randrange(1, 5),
            n=rng.randrange(2, 400),
            n2=rng.randrange(2, 9),
        )
        found.append(
            Observation(
                id=first + i,
                text=text,
                salience=round(rng.random(), 3),
                surprise=round(rng.random(), 3),
                kind=rng.choice(_KINDS),
                sender=rng.choice([None, *_WHO]),
                ts=1_780_000_000.0 + rng.randrange(0, 86_400),
            )
        )
    return found


CASES = [
    # (alarm keywords, previous, observations, budget)
    (None, PREVIOUS, observations(40, seed=1), 4000),
    (None, "", observations(400, seed=2), 4000),
    (None, PREVIOUS, observations(60, seed=3), 600),
    (["超时", "rolling back"], PREVIOUS, observations(80, seed=4), 2000),
    (None, PREVIOUS * 6, observations(5, seed=5), 4000),  # a previous summary over budget
]


def size(previous: str, batch: list[Observation]) -> int:
    return len(previous) + sum(len(o.text) for o in batch)


@pytest.mark.parametrize(("keywords", "previous", "batch", "budget"), CASES)
async def test_the_workers_summary_is_the_loops(
    keywords: list[str] | None, previous: str, batch: list[Observation], budget: int
) -> None:
    assert size(previous, batch) >= REFLECT_OFFLOAD_CHARS
    reflector = ExtractiveReflector(keywords)
    inline = reflector.summarise(previous, batch, budget)
    assert inline.startswith("## ")
    assert len(inline) <= budget
    frozen = None if keywords is None else tuple(keywords)
    assert await in_worker(_summarise, frozen, previous, batch, budget) == inline
    assert await reflector.reflect(previous, batch, budget) == inline


def test_the_alarm_keywords_reach_the_worker() -> None:
    batch = observations(30, seed=6)
    own = _summarise(("thursday",), PREVIOUS, batch, 4000)
    assert own == ExtractiveReflector(["thursday"]).summarise(PREVIOUS, batch, 4000)
    assert own != _summarise(None, PREVIOUS, batch, 4000)  # they decide the sections


def spy(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Record the functions the reflector sends to a worker (and send them)."""
    sent: list[str] = []

    async def recording(func: Callable[..., Any], *args: Any) -> Any:
        sent.append(func.__name__)
        return await in_worker(func, *args)

    monkeypatch.setattr(souls.mind.reflect, "in_worker", recording)
    return sent


async def test_a_long_reflect_goes_to_a_worker_and_a_short_one_stays(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    sent = spy(monkeypatch)
    reflector = ExtractiveReflector()
    short = observations(3, seed=7)[:1]
    assert size("", short) < REFLECT_OFFLOAD_CHARS
    assert await reflector.reflect("", short, 4000) == reflector.summarise("", short, 4000)
    assert sent == []
    await reflector.reflect(PREVIOUS, observations(40, seed=1), 4000)
    assert sent == ["_summarise"]


async def ticks_during(work: Callable[[], Awaitable[object]]) -> int:
    """How often another task ran while ``work`` did."""
    ticks = 0
    done = anyio.Event()

    async def other() -> None:
        nonlocal ticks
        while not done.is_set():
            await anyio.lowlevel.checkpoint()
            ticks += 1

    async with anyio.create_task_group() as tg:
        tg.start_soon(other)
        await anyio.lowlevel.checkpoint()  # it runs once before the work starts
        ticks = 0
        await work()
        during = ticks
        done.set()
    return during


async def test_the_loop_serves_others_while_a_worker_summarises(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(supervisor.pace, "SLICE", 3600.0)  # the inline reflect never yields
    reflector = ExtractiveReflector()
    batch = observations(400, seed=2)

    async def work() -> None:
        await reflector.reflect("", batch, 4000)

    assert await ticks_during(work) > 0
    monkeypatch.setattr(souls.mind.reflect, "REFLECT_OFFLOAD_CHARS", 10**12)
    assert await ticks_during(work) == 0  # on the loop, in one piece


async def test_a_cancelled_reflect_in_a_worker_raises_cancelled() -> None:
    reflector = ExtractiveReflector()
    batch = observations(400, seed=2)
    with anyio.CancelScope() as scope:
        async with anyio.create_task_group() as tg:

            async def cancel_soon() -> None:
                await anyio.sleep(0.001)
                scope.cancel()

            tg.start_soon(cancel_soon)
            await reflector.reflect("", batch, 4000)
            pytest.fail("the reflect finished although it was cancelled")  # pragma: no cover
    assert scope.cancelled_caught
    # The worker it killed is replaced: the next reflect works.
    assert await reflector.reflect("", batch, 4000) == reflector.summarise("", batch, 4000)
