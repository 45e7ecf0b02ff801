# ruff: noqa: RUF001  (full-width punctuation is part of the Chinese texts under test)
"""Entries from conversation on a real soul database (#17 point 2): every example of the
issue, played through Knowledge.perceive and read back from the claims table."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from pathlib import Path

import pytest

from souls.intake.hygiene_gate import HygieneConfig, HygieneGate
from souls.knowledge.claims import looks_like_secret
from souls.knowledge.entries import Claim
from souls.knowledge.knowledge import Knowledge, KnowledgeConfig
from souls.messages import ClaimAdd
from souls.store.store import NewEvent, Store
from souls.text.tokenize import fts_document
from supervisor.errors import RejectedInput

SAID = datetime(2023, 5, 8, 13, 56, tzinfo=UTC).timestamp()  # a Monday
DAY = 86_400.0


def event(
    text: str, *, sender: str | None = "ann", kind: str = "message", ts: float = SAID
) -> NewEvent:
    return NewEvent(
        None, kind, None, sender, None, False, None, ts, ts, 0.5, text, fts_document(text)
    )


@asynccontextmanager
async def knowing(tmp_path: Path) -> AsyncIterator[tuple[Store, Knowledge]]:
    store = await Store.open(tmp_path / "soul.db")
    try:
        knowledge = Knowledge(store, KnowledgeConfig(), HygieneGate(HygieneConfig()))
        await knowledge.load()
        yield store, knowledge
    finally:
        await store.close()


async def say(store: Store, knowledge: Knowledge, *events: NewEvent) -> None:
    """Each event a batch of its own, as turns arrive."""
    for one in events:
        plan = await knowledge.perceive([one])
        ids = await store.append([one], plan.joined(), one.ts)
        knowledge.committed(plan, ids)


async def rows(knowledge: Knowledge, slot: str) -> dict[str, Claim]:
    return {c.value: c for c in await knowledge.entries.claims(every=True) if c.slot == slot}


def day(iso: str) -> float:
    return datetime.fromisoformat(iso).replace(tzinfo=UTC).timestamp()


async def test_told_events_are_event_entries_with_their_time_resolved(tmp_path: Path) -> None:
    async with knowing(tmp_path) as (store, knowledge):
        await say(
            store,
            knowledge,
            event("Oh wow. I painted a sunrise last year, it's in my room."),
            event("我们上周去了成都，吃了很多火锅。"),
            event("Yesterday my husband and I went camping by the lake."),
        )
        events = await rows(knowledge, "event")
        assert set(events) >= {"painted a sunrise", "去了成都", "went camping by the lake"}
        painted = events["painted a sunrise"]
        assert (painted.type, painted.state, painted.subject) == ("event", "active", "ann")
        assert painted.valid_from == day("2022-01-01")  # last year, said in 2023
        assert painted.text == "ann | painted | a sunrise |  | last year (2022)"
        assert events["去了成都"].valid_from == day("2023-05-01")  # the week before
        assert "week of 2023-05-01" in events["去了成都"].text
        assert events["went camping by the lake"].valid_from == day("2023-05-07")
        # Questions, negations and the listener's things tell nothing.
        await say(
            store,
            knowledge,
            event("Did you paint that last year?"),
            event("I didn't go to the party."),
            event("I saw your post about the trip."),
        )
        assert set(await rows(knowledge, "event")) == set(events)


async def test_a_rename_supersedes_and_another_pet_does_not(tmp_path: Path) -> None:
    async with knowing(tmp_path) as (store, knowledge):
        await say(
            store,
            knowledge,
            event("My cat is called Tuanzi."),
            event("My dog is called Biscuit.", ts=SAID + DAY),
        )
        names = await rows(knowledge, "pet_name")
        assert {v: c.state for v, c in names.items()} == {"Tuanzi": "active", "Biscuit": "active"}
        await say(
            store,
            knowledge,
            event("We renamed the cat, she is called Mochi now.", ts=SAID + 2 * DAY),
        )
        names = await rows(knowledge, "pet_name")
        assert {v: c.state for v, c in names.items()} == {
            "Tuanzi": "superseded",
            "Biscuit": "active",
            "Mochi": "active",
        }
        assert names["Tuanzi"].valid_to == SAID + 2 * DAY


async def test_two_pets_in_one_sentence_are_two_injected_claims(tmp_path: Path) -> None:
    async with knowing(tmp_path) as (store, knowledge):
        await say(store, knowledge, event("I have a cat called Tuanzi and a dog called Biscuit."))
        live = [c for c in await knowledge.entries.claims() if c.slot in ("pet_name", "pet_kind")]
        assert sorted((c.slot, c.value, c.state) for c in live) == [
            ("pet_kind", "cat", "active"),
            ("pet_kind", "dog", "active"),
            ("pet_name", "Biscuit", "active"),
            ("pet_name", "Tuanzi", "active"),
        ]
        index = (await knowledge.entries.current()).index
        assert {c.id for c in live} <= {e.id for e in index.entries()}


async def test_the_missed_facts(tmp_path: Path) -> None:
    async with knowing(tmp_path) as (store, knowledge):
        await say(
            store,
            knowledge,
            event("My daughter's name is Emma."),
            event("我的生日是五月八号。"),
            event("我养了一只狗叫旺财。"),
            event("I work at Acme Corp."),
            event("I got a new job at Google!", ts=SAID + DAY),
            event("Bob is allergic to peanuts."),
            event("And I'm allergic to cats."),
        )
        live = {(c.subject, c.slot, c.value): c for c in await knowledge.entries.claims()}
        assert ("ann", "child_name", "Emma") in live
        assert ("ann", "birthday", "五月八号") in live
        assert ("ann", "pet_name", "旺财") in live
        assert ("ann", "pet_kind", "狗") in live
        assert ("ann", "allergy", "cats") in live
        assert ("Bob", "allergy", "peanuts") in live  # about Bob, said by ann
        employers = await rows(knowledge, "employer")
        assert {v: c.state for v, c in employers.items()} == {
            "Acme Corp": "superseded",
            "Google": "active",
        }


async def test_a_second_daughter_is_no_rename_but_a_correction_is(tmp_path: Path) -> None:
    async with knowing(tmp_path) as (store, knowledge):
        await say(
            store,
            knowledge,
            event("My daughter Emma loves to draw."),
            event("My son Jack is six.", ts=SAID + DAY),
            event("My daughter Lily started school.", ts=SAID + 2 * DAY),
        )
        kids = await rows(knowledge, "child_name")
        assert {v: c.state for v, c in kids.items()} == {
            "Emma": "active",
            "Jack": "active",
            "Lily": "active",
        }
        await say(
            store,
            knowledge,
            event("Sorry, my daughter is called Lilly, not Lily.", ts=SAID + 3 * DAY),
        )
        kids = await rows(knowledge, "child_name")
        assert kids["Lilly"].state == "active"
        assert kids["Jack"].state == "active"
        assert kids["Lily"].state == "superseded"
        assert kids["Emma"].state == "superseded"


async def test_a_cancellation_closes_the_plan_it_names(tmp_path: Path) -> None:
    async with knowing(tmp_path) as (store, knowledge):
        await say(
            store,
            knowledge,
            event("We're planning to go to Paris next month."),
            event("I'm going to the dentist tomorrow."),
            event("我们打算去成都玩。"),
        )
        assert set(await rows(knowledge, "plan")) >= {"go to Paris next month", "去成都玩"}
        await say(
            store,
            knowledge,
            event("Sadly we cancelled the trip to Paris.", ts=SAID + DAY),
            event("成都我们不去了。", ts=SAID + DAY),
        )
        plans = await rows(knowledge, "plan")
        assert plans["go to Paris next month"].state == "superseded"
        assert plans["go to Paris next month"].valid_to == SAID + DAY
        assert plans["去成都玩"].state == "superseded"
        assert plans["going to the dentist"].state == "active"  # another plan stays open
        assert "cancelled the trip to Paris" in await rows(knowledge, "event")


@pytest.mark.parametrize(
    ("text", "kind", "sender", "subject", "value"),
    [
        ("我答应你，下周一定把书还你。", "message", "ann", "ann", "下周一定把书还你"),
        ("周末一起去爬山，说好了！", "message", "ann", "ann", "周末一起去爬山"),
        ("I promise I'll call you tomorrow.", "message", "ann", "ann", "call you"),
        (
            "I promise to send you the recipe.",
            "assistant",
            None,
            "assistant",
            "send you the recipe",
        ),
        ("我答应你明天提醒你吃药。", "assistant", None, "assistant", "提醒你吃药"),
    ],
)
async def test_commitments_belong_to_whoever_made_them(
    tmp_path: Path, text: str, kind: str, sender: str | None, subject: str, value: str
) -> None:
    async with knowing(tmp_path) as (store, knowledge):
        await say(store, knowledge, event(text, kind=kind, sender=sender))
        found = [(c.subject, c.value) for c in await knowledge.entries.claims()]
        assert (subject, value) in [(s, v) for s, v in found if v == value]


async def test_repetition_across_turns_corroborates(tmp_path: Path) -> None:
    async with knowing(tmp_path) as (store, knowledge):
        await say(store, knowledge, event("Maybe I live in Berlin now."))
        (first,) = (await rows(knowledge, "location")).values()
        assert first.confidence == "medium"
        await say(store, knowledge, event("I live in Berlin, near the river.", ts=SAID + DAY))
        history = [c for c in await knowledge.entries.claims(every=True) if c.slot == "location"]
        assert [(c.confidence, c.state) for c in history] == [
            ("medium", "superseded"),
            ("high", "active"),
        ]
        assert history[1].valid_from == SAID  # true since it was first said
        # At high there is nothing to raise: one more saying adds no row.
        await say(store, knowledge, event("I live in Berlin.", ts=SAID + 2 * DAY))
        assert (
            len([c for c in await knowledge.entries.claims(every=True) if c.slot == "location"])
            == 2
        )


async def test_stated_entries_normalise_legacy_types_pass_the_gate_and_follow_links(
    tmp_path: Path,
) -> None:
    async with knowing(tmp_path) as (store, knowledge):
        entries = knowledge.entries
        decided = await entries.state(ClaimAdd(value="Reply in short lines", kind="decision"), SAID)
        told = await entries.state(ClaimAdd(value="Ran a marathon", kind="experience"), SAID)
        who = await entries.state(ClaimAdd(value="A night owl", kind="identity"), SAID)
        assert [r["claim"].type for r in (decided, told, who)] == ["rule", "event", "fact"]  # type: ignore[attr-defined]
        with pytest.raises(ValueError, match="type must be one of"):
            await entries.state(ClaimAdd(value="x y", kind="mood"), SAID)
        with pytest.raises(ValueError, match="credential"):
            await entries.state(ClaimAdd(value="x7Kp9Qm2Zr8Vt4Lw6Nb3Yh5J", slot="name"), SAID)
        async with store.transaction() as db:
            await db.execute("INSERT INTO persons (name, created) VALUES ('Melanie', 0)")
            await db.execute(
                "INSERT INTO identities (channel, external, person, created)"
                " VALUES ('telegram', 'mel', 1, 0)"
            )
        stated = await entries.state(ClaimAdd(value="Oolong", slot="likes", subject="mel"), SAID)
        assert stated["claim"].subject == "Melanie"  # type: ignore[attr-defined]
        again = await entries.state(ClaimAdd(value="oolong", slot="likes", subject="MELANIE"), SAID)
        assert again["outcome"] == "duplicate"


async def test_a_job_change_to_a_bare_company_name_supersedes_the_employer(
    tmp_path: Path,
) -> None:
    async with knowing(tmp_path) as (store, knowledge):
        await say(
            store,
            knowledge,
            event("我在华为公司上班。"),
            event("我换工作了，现在在腾讯上班", ts=SAID + DAY),
        )
        employers = await rows(knowledge, "employer")
        assert {v: c.state for v, c in employers.items()} == {
            "华为公司": "superseded",
            "腾讯": "active",
        }
        await say(store, knowledge, event("我跳槽到字节了！", ts=SAID + 2 * DAY))
        assert {v: c.state for v, c in (await rows(knowledge, "employer")).items()} == {
            "华为公司": "superseded",
            "腾讯": "superseded",
            "字节": "active",
        }
    # A place, something counted or somewhere generic is no workplace, even after a change.
    async with knowing(tmp_path / "places") as (store, knowledge):
        await say(
            store,
            knowledge,
            event("我换工作了，现在在北京上班"),
            event("我换工作了，现在在家上班"),
            event("我换工作了，现在在一家小公司上班"),
            event("我换工作了，现在在朝阳区上班"),
        )
        assert await rows(knowledge, "employer") == {}


@pytest.mark.parametrize(
    ("before", "move", "now"),
    [
        ("I live in Paris.", "We moved from Paris to Lyon in June.", "Lyon"),
        ("I live in Paris.", "we finally moved back to Boston", "Boston"),
        ("我住在北京。", "我们从北京搬到上海了", "上海"),
        ("我住在北京。", "我们去年从北京搬到了杭州。", "杭州"),
    ],
)
async def test_a_move_from_one_place_to_another_supersedes_the_location(
    tmp_path: Path, before: str, move: str, now: str
) -> None:
    async with knowing(tmp_path) as (store, knowledge):
        await say(store, knowledge, event(before), event(move, ts=SAID + DAY))
        locations = await rows(knowledge, "location")
        old = next(v for v in locations if v != now)
        assert {v: c.state for v, c in locations.items()} == {old: "superseded", now: "active"}
        # The move is also told as what happened.
        (told,) = await rows(knowledge, "event")
        assert now in told
        assert "from" in told or "从" in told or "back" in told


@pytest.mark.parametrize(
    ("first", "second", "new"),
    [
        ("My phone number is +1 (555) 123-4567.", "my new number is 555-987-6543", "555-987-6543"),
        ("我的手机号是13812345678", "我换号了，新号码是139 1234 5678", "139 1234 5678"),
        ("You can reach me at 020 7946 0958", "My cell is now 07700 900123.", "07700 900123"),
    ],
)
async def test_a_phone_number_is_one_slot_a_new_number_supersedes(
    tmp_path: Path, first: str, second: str, new: str
) -> None:
    async with knowing(tmp_path) as (store, knowledge):
        await say(store, knowledge, event(first), event(second, ts=SAID + DAY))
        phones = await rows(knowledge, "phone")
        assert len(phones) == 2
        assert {v: c.state for v, c in phones.items() if v == new} == {new: "active"}
        assert [c.state for v, c in phones.items() if v != new] == ["superseded"]
    # The intake's credential rules let a phone number through (it is no secret), and the
    # claim's credential gate passes it.
    for text in (first, second):
        HygieneGate(HygieneConfig()).check(text)  # raises RejectedInput on a credential
    assert not any(looks_like_secret(phone, claim.quote) for phone, claim in phones.items())
    # A secret said beside a number still is one.
    with pytest.raises(RejectedInput):
        HygieneGate(HygieneConfig()).check("my password is 13812345678")


async def test_what_is_no_phone_number_gives_no_phone(tmp_path: Path) -> None:
    async with knowing(tmp_path) as (store, knowledge):
        await say(
            store,
            knowledge,
            event("my number is 7 on the team"),
            event("My number is 12.05.2024"),
            event("his number is 555-123-4567"),
            event("my pin is 4829"),
            event("My card number is 4111 1111 1111 1111"),
            event("what's my number?"),
            event("if my number is 555-123-4567 they will call"),
        )
        assert await rows(knowledge, "phone") == {}
