# ruff: noqa: RUF001  (full-width punctuation is how a Chinese user writes)
"""Rankings a program can trust (#18.4), played on souls the way people use them: a
personal assistant with facts among everyday filler, an ops bot drowning in routine
events, facts that change, a Chinese-speaking user. A real soul actor on a real SQLite
file, events through its mailbox as a channel would push them; recall through the same
mailbox.

What must hold: every item's relevance is in [0, 1] and the items come best first (up
to near-ties, which go to the more salient and then the more recent memory); nothing of
relevance 0 comes back; other forms of a word match it (failures/failed,
allergies/allergic); a fact that changed comes back newest first, its successor above
it."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from conftest import MAILBOX_HYGIENE

from souls.actor.clock import FixedClock
from souls.actor.mailbox import Mailbox
from souls.actor.soul import Soul
from souls.config import SoulConfig
from souls.events import EventIn
from souls.messages import Message, Observe, Recall
from souls.results import PushResult, RecallItem, RecallResult

pytestmark = MAILBOX_HYGIENE

T0 = 1_780_000_000.0  # 2026-05-28
DAY = 86_400.0

# Everyday chat around the facts: what a personal assistant mostly hears.
FILLER = [
    "good morning! what's the weather like today",
    "remind me to buy milk on the way home",
    "ugh, the train was late again",
    "can you summarise this article for me",
    "lol that meme was great",
    "what time is the dentist on thursday",
    "I finished the book you recommended, it was ok",
    "set a timer for 20 minutes",
    "the neighbours are loud tonight",
    "thanks, that helped a lot",
    "I need a gift idea for my colleague",
    "how do you say thank you in japanese",
    "my laptop is so slow today",
    "play something relaxing please",
    "is it going to rain this weekend",
    "I watched a documentary about octopuses",
    "my back hurts from sitting all day",
    "what's a good recipe with leftover rice",
    "ok talk later",
    "I'm so tired this week",
]


class Running:
    def __init__(self, root: Path, clock: FixedClock) -> None:
        self.soul = Soul(
            "alpha", SoulConfig(), db_path=root / "soul.db", brain_dir=root / "brain", clock=clock
        )
        self.mailbox: Mailbox[Message] = Mailbox("alpha", 64)
        self.clock = clock

    async def ask(self, message: Message) -> Any:
        return await self.mailbox.ask(message, timeout=10)

    async def say(self, text: str, at: float, **fields: Any) -> PushResult:
        event = EventIn(text=text, ts=at, **{"kind": "dm", "sender": "maya", **fields})
        result = await self.ask(Observe(event))
        assert isinstance(result, PushResult)
        assert result.status == "stored", result
        return result

    async def recall(self, query: str, k: int = 5, explain: bool = False) -> list[RecallItem]:
        result = await self.ask(Recall(query, k, explain))
        assert isinstance(result, RecallResult)
        memories = [item for item in result.items if item.via != "goal"]
        check_trustworthy(memories)
        return memories


def check_trustworthy(items: list[RecallItem]) -> None:
    """Relevance in (0, 1], best first up to near-ties: an item is at most [recall]
    near_tie (15 %) more relevant than the one just before it (a near-tie the more
    salient or recent memory won; relevance is shown to 3 decimals)."""
    assert all(0 < item.relevance <= 1 for item in items), items
    for n in range(1, len(items)):
        later = items[n].relevance
        assert later * (1 - 0.15) <= items[n - 1].relevance + 1e-3, items


@asynccontextmanager
async def running(tmp_path: Path) -> AsyncIterator[Running]:
    soul = Running(tmp_path, FixedClock(T0 + 120 * DAY))
    with anyio.fail_after(60):
        async with anyio.create_task_group() as tg:
            await tg.start(soul.soul.run, soul.mailbox)
            yield soul
            tg.cancel_scope.cancel()


async def chatter(soul: Running, start: float, days: int, per_day: int = 6) -> None:
    """Filler over ``days`` days from ``start``, ``per_day`` turns a day."""
    n = 0
    for day in range(days):
        for turn in range(per_day):
            text = FILLER[n % len(FILLER)]
            await soul.say(text, start + day * DAY + turn * 600, session=f"d{day}")
            n += 1


async def test_the_one_deploy_failure_comes_before_three_hundred_routine_deploys(
    tmp_path: Path,
) -> None:
    async with running(tmp_path) as soul:
        for n in range(1, 301):
            await soul.say(f"deploy {n} ok", T0 + n * 600, kind="webhook", sender="ci")
            if n == 150:
                failure = await soul.say(
                    "deploy failed: database migration timeout",
                    T0 + n * 600 + 60,
                    kind="webhook",
                    sender="ci",
                )
        found = await soul.recall("any deploy failures?", k=10, explain=True)
        deploys = await soul.recall("deploys", k=10)
    # "failures" and "failed" are one word to a reader; "deploy" is in every memory, so
    # the routine ones hold next to nothing of the query and are not returned at all.
    assert [item.text for item in found] == ["deploy failed: database migration timeout"]
    assert found[0].relevance >= 0.3
    why = found[0].explain
    assert why is not None
    assert why.related > 0
    assert any("another form of a query word" in reason for reason in why.reasons)
    assert failure.salience > 0.5
    # Asked about deploys, every deploy is as relevant as the next: the most salient
    # comes first, then the most recent.
    assert deploys[0].text == "deploy failed: database migration timeout"
    assert [item.text for item in deploys[1:4]] == [
        "deploy 300 ok",
        "deploy 299 ok",
        "deploy 298 ok",
    ]


async def test_a_personal_assistant_finds_facts_among_filler_in_other_word_forms(
    tmp_path: Path,
) -> None:
    facts = {
        "does she have any allergies?": "I'm allergic to peanuts, even a trace is bad",
        "did the backup fail last night?": "backup failure at 3am, disk full again",
        "is she a painter?": "I've been painting watercolours every sunday",
        "what's her nephew called?": "my nephew Leo turns six next week",
        "is she married?": "our marriage anniversary is in October",
    }
    async with running(tmp_path) as soul:
        await chatter(soul, T0, 20)
        for n, text in enumerate(facts.values()):
            await soul.say(text, T0 + (3 + 4 * n) * DAY + 300, session=f"d{3 + 4 * n}")
        top = {query: await soul.recall(query) for query in facts}
    for query, fact in facts.items():
        assert top[query], query
        assert top[query][0].text == fact, (query, [i.text for i in top[query]])


async def test_a_new_phone_number_comes_before_the_old_one(tmp_path: Path) -> None:
    async with running(tmp_path) as soul:
        await chatter(soul, T0, 10)
        await soul.say("my phone number is 0612 345 678", T0 + 2 * DAY)
        await soul.say("I got a new phone number: 0698 765 432", T0 + 9 * DAY)
        found = await soul.recall("what's my phone number?")
    assert [item.text for item in found[:2]] == [
        "I got a new phone number: 0698 765 432",
        "my phone number is 0612 345 678",
    ]


async def test_a_move_ranks_above_the_home_it_replaced(tmp_path: Path) -> None:
    # The soul's claims know that the location changed; the move does not even hold
    # the word the question uses ("live"), yet it answers it and comes first.
    async with running(tmp_path) as soul:
        await chatter(soul, T0, 8)
        await soul.say("I live in Paris, near the canal", T0 + DAY)
        await soul.say("We moved to Lyon in June!", T0 + 40 * DAY)
        found = await soul.recall("where do I live?", explain=True)
    assert [item.text for item in found[:2]] == [
        "We moved to Lyon in June!",
        "I live in Paris, near the canal",
    ]
    new, old = found[0], found[1]
    assert new.via == "successor"
    assert new.relevance >= old.relevance
    assert new.explain is not None
    assert new.explain.succeeds == old.id
    assert old.explain is not None
    assert old.explain.superseded_by == new.id
    assert any("location: Paris → Lyon" in reason for reason in new.explain.reasons)


async def test_a_job_change_ranks_above_the_job_it_ended(tmp_path: Path) -> None:
    # "I quit Deloitte to join Accenture" is an employer claim that supersedes Deloitte:
    # asked in the old statement's words, the change comes right above it.
    async with running(tmp_path) as soul:
        await chatter(soul, T0, 8)
        await soul.say("I work for Deloitte as an analyst", T0 + DAY)
        await soul.say("I quit Deloitte to join Accenture, first day was great", T0 + 50 * DAY)
        found = await soul.recall("who do I work for?", explain=True)
    assert [item.text for item in found[:2]] == [
        "I quit Deloitte to join Accenture, first day was great",
        "I work for Deloitte as an analyst",
    ]
    assert found[0].explain is not None
    assert any("employer: Deloitte → Accenture" in r for r in found[0].explain.reasons)


async def test_a_question_naming_a_slot_finds_the_fact_in_force_without_its_words(
    tmp_path: Path,
) -> None:
    # Neither statement holds a word of the question; the claims know what answers it,
    # and only the employer in force comes (the old one is older news).
    async with running(tmp_path) as soul:
        await chatter(soul, T0, 8)
        await soul.say("I'm a nurse at St Mary's", T0 + DAY)
        await soul.say("我从阿里巴巴跳槽到了腾讯", T0 + 20 * DAY, sender="小林")
        await soul.say("I left St Mary's and joined Guy's Hospital in May", T0 + 60 * DAY)
        found = await soul.recall("who is my employer?", explain=True)
        chinese = await soul.recall("她在哪家公司？")
    assert [item.text for item in found] == [
        "I left St Mary's and joined Guy's Hospital in May",
        "我从阿里巴巴跳槽到了腾讯",
    ]
    assert {item.via for item in found} == {"claim"}
    assert found[0].explain is not None
    assert any("fact in force" in r for r in found[0].explain.reasons)
    assert "我从阿里巴巴跳槽到了腾讯" in [item.text for item in chinese]


async def test_what_the_words_found_keeps_its_place_above_a_slots_fact(tmp_path: Path) -> None:
    async with running(tmp_path) as soul:
        await chatter(soul, T0, 4)
        await soul.say("the company picnic is on friday", T0 + DAY)
        await soul.say("I work at Stripe", T0 + 2 * DAY)
        found = await soul.recall("company picnic")
    assert [item.text for item in found] == ["the company picnic is on friday", "I work at Stripe"]
    assert found[0].via == "bm25"
    assert found[1].via == "claim"
    assert found[1].relevance <= found[0].relevance


async def test_a_slots_fact_outranks_matches_of_the_questions_everyday_words(
    tmp_path: Path,
) -> None:
    # Filler that holds the question's everyday words ("now", "live", 现在, 住在) fills
    # every place; the move states the city in force without them and still comes first.
    english = [
        "I live for the weekends now honestly",
        "now I'm stuck in traffic again",
        "the band played live last night, so loud",
        "right now I just want coffee",
        "can you live with a 9am meeting now?",
    ]
    chinese = [
        "我现在在地铁上",
        "现在好困啊",
        "住在隔壁的阿姨送了饺子",
        "我现在去超市",
        "现在几点了？",
    ]
    async with running(tmp_path) as soul:
        at = T0
        for n in range(6):
            for text in english:
                at += 3600
                await soul.say(f"{text} ({n})", at)
            for text in chinese:
                at += 3600
                await soul.say(f"{text}（{n}）", at, sender="小林")
        await soul.say("We moved to Leipzig last spring, the flat is tiny", at + DAY)
        await soul.say("我们上个月搬到了杭州，新家离西湖很近", at + 2 * DAY, sender="小林")
        found = await soul.recall("which city does she live in now?")
        chinese_found = await soul.recall("她现在住在哪个城市？")
    assert "We moved to Leipzig last spring, the flat is tiny" in [i.text for i in found[:3]]
    assert "我们上个月搬到了杭州，新家离西湖很近" in [i.text for i in chinese_found[:3]]
    stated = next(i for i in found if i.text.startswith("We moved to Leipzig"))
    assert stated.via in {"claim", "bm25"}
    assert 0 < stated.relevance <= 1


async def test_a_chinese_user_is_answered_in_the_same_terms(tmp_path: Path) -> None:
    filler = ["今天好累", "晚上吃什么好呢", "帮我定个闹钟", "下雨了，没带伞", "周末想去看电影"]
    async with running(tmp_path) as soul:
        for n in range(60):
            await soul.say(filler[n % len(filler)], T0 + n * 3600, sender="小林")
        await soul.say("我对花生过敏，一点都不能吃", T0 + 2 * DAY, sender="小林")
        await soul.say("我住在北京", T0 + 3 * DAY, sender="小林")
        await soul.say("我们搬到上海了", T0 + 30 * DAY, sender="小林")
        allergies = await soul.recall("她对什么过敏？")
        home = await soul.recall("我住在哪里？")
    assert allergies[0].text == "我对花生过敏，一点都不能吃"
    assert [item.text for item in home[:2]] == ["我们搬到上海了", "我住在北京"]


async def test_relevance_means_the_same_in_a_small_and_a_large_soul(tmp_path: Path) -> None:
    fact = "The staging database runs Postgres 16 on the new cluster"
    relevance = []
    for size, root in ((10, tmp_path / "small"), (400, tmp_path / "large")):
        async with running(root) as soul:
            for n in range(size):
                await soul.say(FILLER[n % len(FILLER)] + f" ({n})", T0 + n * 600)
            await soul.say(fact, T0 + size * 600)
            whole = await soul.recall("staging database postgres")
            half = await soul.recall("staging database postgres xylophone quintet zebra")
        assert whole[0].text == half[0].text == fact
        # Every word of the query held: most of the scale. Half the query's words said
        # by nobody: at most half of it.
        assert whole[0].relevance >= 0.6
        assert half[0].relevance <= 0.5
        relevance.append(whole[0].relevance)
    assert abs(relevance[0] - relevance[1]) < 0.15


@pytest.mark.parametrize("query", ["xylophone", "any news?", "quantum zebra"])
async def test_what_holds_nothing_of_the_query_is_not_returned(tmp_path: Path, query: str) -> None:
    async with running(tmp_path) as soul:
        await chatter(soul, T0, 3)
        assert await soul.recall(query) == []
