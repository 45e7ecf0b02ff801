"""The LLM extractor of a real soul (souls/actor/extraction.py): a Soul task on a SQLite
file, its model a real HTTP server on loopback (tests/fake_model.py) answering with good,
garbage and hostile candidates, slowly or not at all."""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import msgspec
import pytest
from conftest import MAILBOX_HYGIENE
from fake_model import ERROR, FakeModel, Reply, answer, fake_model

from souls.actor.clock import FixedClock
from souls.actor.mailbox import Mailbox
from souls.actor.soul import Soul
from souls.collision.presentation_gate import GateConfig
from souls.config import SoulConfig
from souls.events import EventIn
from souls.knowledge.claim_llm import ExtractionConfig, unspoken_id
from souls.llm.chat import LLMConfig
from souls.messages import Claims, Context, Forget, Message, Observe, Stats
from souls.mind.reflection import ReflectConfig
from souls.results import PushResult, SoulStats

pytestmark = MAILBOX_HYGIENE
T0 = 1_780_000_000.0

GOOD = "Honestly, the ocean is what I love most these days. I never call my father."
SECRET = "My username is ana and my pin is 4417."


def good_answer() -> Reply:
    return answer(
        json.dumps(
            [
                {
                    "slot": "likes",
                    "value": "the ocean",
                    "quote": "the ocean is what I love most",
                    "confidence": "high",
                },
                {"slot": "job", "value": "astronaut", "quote": "I am an astronaut"},
                {"slot": "password", "value": "the ocean", "quote": "the ocean"},
                {"kind": "unspoken", "quote": "I never call my father"},
                {"kind": "unspoken", "quote": "I am afraid of dying"},
            ]
        )
    )


def config(url: str, **extraction: Any) -> SoulConfig:
    llm = LLMConfig(base_url=url, model="small", timeout=0.5, retries=0, backoff=0.01)
    return SoulConfig(
        llm=llm,
        reflect=ReflectConfig(reflector="extractive"),
        gate=GateConfig(judge="builtin"),
        extraction=ExtractionConfig(**extraction),
    )


@asynccontextmanager
async def soul(root: Path, cfg: SoulConfig) -> AsyncIterator[Mailbox[Message]]:
    mailbox: Mailbox[Message] = Mailbox("alpha", cfg.mailbox.capacity)
    actor = Soul(
        "alpha", cfg, db_path=root / "soul.db", brain_dir=root / "brain", clock=FixedClock(T0)
    )
    with anyio.fail_after(20):
        async with anyio.create_task_group() as tg:
            await tg.start(actor.run, mailbox)
            yield mailbox
            tg.cancel_scope.cancel()


async def push(mailbox: Mailbox[Message], text: str) -> PushResult:
    result = await mailbox.ask(Observe(EventIn(text=text, kind="dm", sender="ana")))
    assert isinstance(result, PushResult)
    assert result.status == "stored", result
    return result


async def settled(mailbox: Mailbox[Message], model: FakeModel, asked: int) -> dict[str, int]:
    """The extractor's figures once it has asked ``asked`` times and written it all."""
    while True:
        stats = await mailbox.ask(Stats())
        assert isinstance(stats, SoulStats)
        figures = stats.extraction
        if figures["answered"] + figures["failures"] >= asked and not figures["ready"]:
            return dict(figures)
        await anyio.sleep(0.02)


async def test_good_candidates_become_claims_and_the_rest_are_refused_and_counted(
    tmp_path: Path,
) -> None:
    huge = answer("[" + ", ".join(['{"slot": "likes", "value": "x", "quote": "y"}'] * 3000) + "]")
    replies = [good_answer(), answer("Sorry, as a model I cannot."), huge, ERROR]
    replies.append(answer(json.dumps([{"slot": "likes", "value": "4417", "quote": "pin is 4417"}])))
    async with fake_model(*replies) as model, soul(tmp_path, config(model.url)) as mailbox:
        for text in (GOOD, "Nothing much to report today.", "The sky was grey all day.",
                     "We had soup for lunch.", SECRET):  # fmt: skip
            await push(mailbox, text)
        figures = await settled(mailbox, model, 5)
        listing = await mailbox.ask(Claims(every=True))
        context = await mailbox.ask(Context(query="what does ana love"))
    prompt = model.requests[0].body["messages"][0]["content"]
    assert GOOD in prompt
    assert '"kind": "unspoken"' in prompt
    llm = [c for c in listing["claims"] if c.source == "llm"]
    assert [(c.subject, c.slot, c.value, c.state) for c in llm] == [
        ("ana", "likes", "the ocean", "active")
    ]
    assert llm[0].quote == "the ocean is what I love most"
    assert llm[0].event_id is not None
    assert not any(c.value in ("astronaut", "4417") for c in listing["claims"])
    # The one honest unspoken item, kept apart, marked, the text's own sentence.
    (item,) = listing["unspoken"]
    assert item["id"] == unspoken_id("I never call my father.")
    assert item["sentence"] == "I never call my father."
    assert item["unspoken"] is True
    # The claim reaches a context; the unspoken item never does as an entry.
    assert "the ocean" in context.text
    assert "unspoken" not in context.text
    assert figures["stored"] == 1
    assert figures["extracted"] == 1
    assert figures["unspoken"] == 1
    assert figures["failures"] == 1  # the 500
    assert {k: v for k, v in figures.items() if k.startswith("refused.")} == {
        "refused.credential": 1,
        "refused.garbage": 1,
        "refused.oversize": 1,
        "refused.quote": 2,  # a forged claim, a forged unspoken item
        "refused.slot": 1,
    }
    assert figures["refused"] == 6


async def test_a_slow_model_never_holds_a_push(tmp_path: Path) -> None:
    # The model holds its answer for 5 s and the client waits up to 30 s. A push that
    # waited for the model would return only after that answer; every one returns
    # while the first request is still unanswered, and the rest of the work waits.
    slow = Reply(delay=5.0, body=good_answer().body)
    async with fake_model(slow) as model:
        cfg = config(model.url)
        cfg = msgspec.structs.replace(cfg, llm=msgspec.structs.replace(cfg.llm, timeout=30.0))
        async with soul(tmp_path, cfg) as mailbox:
            await push(mailbox, GOOD)
            while not model.requests:  # noqa: ASYNC110 -- the model holds that answer for 5 s
                await anyio.sleep(0.01)
            started = time.monotonic()
            for n in range(20):
                await push(mailbox, f"Another line number {n} while the model thinks.")
            figures = (await mailbox.ask(Stats())).extraction
            unanswered = time.monotonic() - started < slow.delay
    assert unanswered, "the pushes took as long as the model's answer"
    assert len(model.requests) == 1, model.requests
    assert figures["answered"] == figures["failures"] == 0, figures
    assert figures["backlog"] >= 15, figures  # waiting, not in the way


async def test_a_model_past_its_timeout_is_a_failure_each_and_the_soul_goes_on(
    tmp_path: Path,
) -> None:
    slow = Reply(delay=5.0, body=good_answer().body)  # past the client's 0.5 s
    async with fake_model(slow) as model, soul(tmp_path, config(model.url)) as mailbox:
        await push(mailbox, GOOD)
        await push(mailbox, "And a second line for the model to read.")
        with anyio.fail_after(10):
            while (await mailbox.ask(Stats())).extraction["failures"] < 2:  # noqa: ASYNC110
                await anyio.sleep(0.05)
        await push(mailbox, "The soul still takes mail.")
        assert isinstance(await mailbox.ask(Stats()), SoulStats)


async def test_the_backlog_is_bounded_by_count_and_bytes(tmp_path: Path) -> None:
    slow = Reply(delay=5.0, body=answer("[]").body)
    cfg = config("http://127.0.0.1:9/v1", backlog=3, backlog_bytes=5_000)
    async with fake_model(slow) as model:
        # The first job stays in flight for the whole test (the long push's first worker
        # process may take longer to start than the usual 0.5 s model timeout).
        llm = msgspec.structs.replace(cfg.llm, base_url=model.url, timeout=30.0)
        cfg = msgspec.structs.replace(cfg, llm=llm)
        async with soul(tmp_path, cfg) as mailbox:
            await push(mailbox, "first line, the one the model is asked about")
            while not model.requests:  # noqa: ASYNC110
                await anyio.sleep(0.01)
            for n in range(6):
                await push(mailbox, f"line {n}")
            await push(mailbox, "x" * 7_000)  # would pass the byte bound
            figures = (await mailbox.ask(Stats())).extraction
    assert figures["backlog"] == 3, repr(figures)
    assert figures["skipped"] == 4
    assert figures["backlog_bytes"] == len("line 0") * 3


async def test_results_of_a_forgotten_event_are_never_written(tmp_path: Path) -> None:
    slow = Reply(delay=0.3, body=good_answer().body)
    async with fake_model(slow) as model, soul(tmp_path, config(model.url, llm="auto")) as mailbox:
        stored = await push(mailbox, GOOD)
        while not model.requests:  # noqa: ASYNC110
            await anyio.sleep(0.01)
        await mailbox.ask(Forget(ref=None, match=None, before=None, everything=True))
        figures = await settled(mailbox, model, 1)
        listing = await mailbox.ask(Claims(every=True))
    assert stored.event_id is not None
    assert figures["gone"] == 1, repr(figures)
    assert figures["stored"] == 0
    assert listing["unspoken"] == []
    assert not [c for c in listing["claims"] if c.source == "llm"]


@pytest.mark.parametrize("setting", ["off", "no-llm"])
async def test_without_a_model_or_switched_off_nothing_is_asked(
    tmp_path: Path, setting: str
) -> None:
    async with fake_model(good_answer()) as model:
        cfg = config(model.url, llm="off") if setting == "off" else SoulConfig()
        async with soul(tmp_path, cfg) as mailbox:
            await push(mailbox, GOOD)
            await anyio.sleep(0.2)
            stats = await mailbox.ask(Stats())
    assert model.requests == []
    assert stats.extraction == {}
