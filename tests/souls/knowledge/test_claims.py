# ruff: noqa: RUF001  (full-width punctuation is part of the Chinese texts under test)
from __future__ import annotations

import asyncio
import itertools
from datetime import UTC, datetime

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

import souls.knowledge.claims
from souls.knowledge.claim_patterns import RULES
from souls.knowledge.claims import (
    COVERAGE,
    SLOTS,
    Candidate,
    ClaimRow,
    ClaimUpdate,
    MergePlan,
    bigram_coverage,
    correct,
    extract_llm,
    extract_rules,
    gate,
    injectable,
    llm_prompt,
    merge,
    needs_verification,
    related_slots,
    retract,
)
from souls.llm.chat import LLMError

TS = datetime(2026, 11, 4, 15, 30, tzinfo=UTC).timestamp()  # a Wednesday
DAY = 86400.0


def day(iso: str) -> float:
    return datetime.fromisoformat(iso).replace(tzinfo=UTC).timestamp()


def found(text: str) -> list[tuple[str, str, str]]:
    """The slot claims of ``text`` (told events have their own tests, test_claim_events)."""
    return [
        (c.slot, c.value, c.quote)
        for c in extract_rules(text, sender=None, ts=TS)
        if c.slot != "event"
    ]


# Extraction: one case per pattern family, English and Chinese.

EXTRACTED = [
    ("My name is Anna Smith.", [("name", "Anna Smith", "My name is Anna Smith")]),
    ("Hi! I'm called Bob, by the way.", [("name", "Bob", "I'm called Bob")]),
    ("Call me Ishmael.", [("name", "Ishmael", "Call me Ishmael")]),
    ("你好，我叫李明，很高兴认识你。", [("name", "李明", "我叫李明")]),
    ("我的名字是王小红。", [("name", "王小红", "我的名字是王小红")]),
    (
        "My cat is called Tuanzi.",
        [
            ("pet_kind", "cat", "My cat is called Tuanzi"),
            ("pet_name", "Tuanzi", "My cat is called Tuanzi"),
        ],
    ),
    (
        "My dog's name is Rex!",
        [("pet_kind", "dog", "My dog's name is Rex"), ("pet_name", "Rex", "My dog's name is Rex")],
    ),
    (
        "We renamed the cat Mochi.",
        [
            ("pet_kind", "cat", "We renamed the cat Mochi"),
            ("pet_name", "Mochi", "We renamed the cat Mochi"),
        ],
    ),
    ("我的猫叫团子。", [("pet_kind", "猫", "我的猫叫团子"), ("pet_name", "团子", "我的猫叫团子")]),
    (
        "我们把猫改名叫麻薯了。",
        [("pet_kind", "猫", "我们把猫改名叫麻薯"), ("pet_name", "麻薯", "我们把猫改名叫麻薯")],
    ),
    ("My husband's name is Tom.", [("partner_name", "Tom", "My husband's name is Tom")]),
    ("我老婆叫小美。", [("partner_name", "小美", "我老婆叫小美")]),
    ("I live in New York City.", [("location", "New York City", "I live in New York City")]),
    ("I moved to Chengdu last year.", [("location", "Chengdu", "I moved to Chengdu")]),
    ("我住在杭州。", [("location", "杭州", "我住在杭州")]),
    ("我搬到了成都，一切都好。", [("location", "成都", "我搬到了成都")]),
    ("I grew up in St. Louis.", [("hometown", "St. Louis", "I grew up in St. Louis")]),
    ("我老家是四川。", [("hometown", "四川", "我老家是四川")]),
    (
        "I work as a software engineer at Google.",
        [
            ("job", "software engineer", "I work as a software engineer at Google"),
            ("employer", "Google", "I work as a software engineer at Google"),
        ],
    ),
    (
        "I'm a nurse at St Mary's.",
        [
            ("job", "nurse", "I'm a nurse at St Mary's"),
            ("employer", "St Mary's", "I'm a nurse at St Mary's"),
        ],
    ),
    ("I work at Stripe.", [("employer", "Stripe", "I work at Stripe")]),
    ("我是一名护士。", [("job", "护士", "我是一名护士")]),
    # an occupation said plainly, without 一名 or 职业
    ("我在一家医院当护士，经常上夜班。", [("job", "护士", "我在一家医院当护士")]),
    ("我是程序员。", [("job", "程序员", "我是程序员")]),
    ("我现在做销售。", [("job", "销售", "我现在做销售")]),
    ("我在阿里巴巴集团工作。", [("employer", "阿里巴巴集团", "我在阿里巴巴集团工作")]),
    # a move: where the speaker lives now is the place moved to
    (
        "We left Paris and moved to Lyon.",
        [("location", "Lyon", "We left Paris and moved to Lyon")],
    ),
    ("我们搬家了，现在住在杭州。", [("location", "杭州", "我们搬家了，现在住在杭州")]),
    # a job change: the workplace joined is the employer, the one left is not
    (
        "I left Siemens and joined Bosch last month.",
        [("employer", "Bosch", "I left Siemens and joined Bosch")],
    ),
    (
        "I quit Deloitte to join Accenture.",
        [("employer", "Accenture", "I quit Deloitte to join Accenture")],
    ),
    ("I've joined Initech as a tester.", [("employer", "Initech", "I've joined Initech")]),
    ("我从阿里巴巴跳槽到了腾讯。", [("employer", "腾讯", "我从阿里巴巴跳槽到了腾讯")]),
    ("我离开了华为，加入了小米。", [("employer", "小米", "我离开了华为，加入了小米")]),
    ("I love jazz.", [("likes", "jazz", "I love jazz")]),
    ("I like the rain but not the cold.", [("likes", "rain", "I like the rain")]),
    ("I don't like jazz anymore.", [("dislikes", "jazz", "I don't like jazz")]),
    ("我很喜欢喝乌龙茶。", [("likes", "喝乌龙茶", "我很喜欢喝乌龙茶")]),
    ("我不喜欢香菜。", [("dislikes", "香菜", "我不喜欢香菜")]),
    ("我讨厌下雨天。", [("dislikes", "下雨天", "我讨厌下雨天")]),
    # preferences said the other way round: a fan of, a favourite
    ("I'm a big fan of jazz.", [("likes", "jazz", "I'm a big fan of jazz")]),
    (
        "Painting landscapes is my favorite!",
        [("likes", "Painting landscapes", "Painting landscapes is my favorite")],
    ),
    ("My favorite band is Radiohead.", [("likes", "Radiohead", "My favorite band is Radiohead")]),
    ("We love camping.", [("likes", "camping", "We love camping")]),
    ("我最喜欢的歌手是周杰伦。", [("likes", "周杰伦", "我最喜欢的歌手是周杰伦")]),
    ("我是周杰伦的铁杆粉丝", [("likes", "周杰伦", "我是周杰伦的铁杆粉丝")]),
    (
        "And yup, I do- Oscar, my guinea pig.",
        [
            ("pet_name", "Oscar", "Oscar, my guinea pig"),
            ("pet_kind", "guinea pig", "Oscar, my guinea pig"),
        ],
    ),
    (
        "I promise to call you tomorrow.",
        [("commitment", "call you", "I promise to call you tomorrow")],
    ),
    (
        "I'll send you the slides by Friday.",
        [("commitment", "send you the slides", "I'll send you the slides by Friday")],
    ),
    ("我答应你明天陪你去医院。", [("commitment", "陪你去医院", "我答应你明天陪你去医院")]),
    ("说好了陪你看店铺。", [("commitment", "陪你看店铺", "说好了陪你看店铺")]),
    (
        "I'm going to the dentist on 2026-12-03.",
        [("plan", "going to the dentist", "I'm going to the dentist on 2026-12-03")],
    ),
    (
        "Next Monday I'll visit my grandma.",
        [("plan", "visit my grandma", "Next Monday I'll visit my grandma")],
    ),
    ("我明天要去北京。", [("plan", "去北京", "我明天要去北京")]),
    ("下周一我要交报告。", [("plan", "交报告", "下周一我要交报告")]),
    ("我打算学日语。", [("plan", "学日语", "我打算学日语")]),
    ("My birthday is December 3.", [("birthday", "December 3", "My birthday is December 3")]),
    ("我的生日是3月17日。", [("birthday", "3月17日", "我的生日是3月17日")]),
    ("Please reply in French.", [("language", "French", "Please reply in French")]),
    ("我的母语是粤语。", [("language", "粤语", "我的母语是粤语")]),
]


@pytest.mark.parametrize(("text", "expected"), EXTRACTED, ids=[t for t, _ in EXTRACTED])
def test_extract_rules(text: str, expected: list[tuple[str, str, str]]) -> None:
    assert found(text) == expected


@pytest.mark.parametrize(("text", "expected"), EXTRACTED, ids=[t for t, _ in EXTRACTED])
def test_rule_candidates_are_high_rule_claims_that_pass_every_gate(
    text: str, expected: list[tuple[str, str, str]]
) -> None:
    for candidate in extract_rules(text, sender="ana", ts=TS):
        assert candidate.source == "rule"
        assert candidate.confidence == "high"
        assert candidate.subject == "ana"
        assert gate(candidate, text).passed, candidate


NOTHING = [
    # 当 and 做 that name no occupation, and occupations that are not the speaker's
    "我当时做了很多事。",
    "我做饭很好吃。",
    "我当然知道。",
    "我是医生的女儿。",
    "我是学生会主席。",
    # generic objects and pronouns
    "I like that idea.",
    "I like it.",
    "I like the idea.",
    "I love you.",
    "I like your style.",
    "I like to think so.",
    "我喜欢你。",
    "我喜欢这个。",
    # questions never state anything about the speaker
    "Do you like jazz?",
    "Do I like jazz?",
    "do you live in Paris",
    "我喜欢爵士吗？",
    "你叫什么名字？",
    "我的猫叫什么来着",
    # third persons, reported speech, conditionals
    "My friend lives in Paris.",
    "His name is Bob.",
    "My sister's cat is called Luna.",
    "Tom's dog is named Rex.",
    'Tom said "I live in Paris".',
    "If I move to Paris I'll learn French.",
    "我朋友住在上海。",
    "他叫张伟。",
    "你说好了要来的。",
    # not a name, a place, a job or a plan
    "call me tomorrow",
    "My cat is Persian.",
    "I live in a small town.",
    "我住在北京的时候很开心。",
    "我在北京工作。",
    "我叫外卖了。",
    "I'm a big fan.",
    "Everyone we love was there.",  # a relative clause
    "That is my favorite!",
    "I'm a fan of yours",
    "Thanks, Max, my dog loves you",  # Max is the listener
    "I'm going to bed.",
    "I'll be there tomorrow.",
    "I'll think about it.",
    "I was going to call you.",
    # joining what is no workplace, or leaving without joining
    "I joined a gym.",
    "I joined Weight Watchers in May.",
    "I quit smoking to join the Army.",
    "I left the band and joined a choir.",
    "I left Siemens.",
    "我加入了一个乐队。",
    "I left the party and moved to the kitchen.",
    "我搬家了。",
]


@pytest.mark.parametrize("text", NOTHING)
def test_no_claim(text: str) -> None:
    assert found(text) == []


@pytest.mark.parametrize(
    ("text", "confidence"),
    [
        ("I think I'll go hiking tomorrow.", "medium"),
        ("Maybe I live in Berlin now.", "medium"),
        ("我可能明天去爬山。", "medium"),
        ("Apparently I live in Berlin.", "low"),
        ("听说我的猫叫团子。", "low"),
        ("I live in Berlin.", "high"),
    ],
)
def test_confidence_follows_hedges_and_hearsay(text: str, confidence: str) -> None:
    (first, *_) = extract_rules(text, sender=None, ts=TS)
    assert first.confidence == confidence


@pytest.mark.parametrize(
    ("text", "due"),
    [
        ("I promise to call you tomorrow.", "2026-11-05"),
        ("I will finish the report today.", "2026-11-04"),
        ("I'll send you the slides by Friday.", "2026-11-06"),  # this week's Friday
        ("I'll call you on Wednesday.", "2026-11-11"),  # a bare weekday is never today
        ("I'm going to visit Mum this Monday.", "2026-11-02"),
        ("Next Monday I'll visit my grandma.", "2026-11-09"),
        ("I'm going to the dentist on 2026-12-03.", "2026-12-03"),
        ("I'll finish the draft in 3 days.", "2026-11-07"),
        ("I will pay you back on March 2.", "2027-03-02"),  # already past this year
        ("I will pay you back on 20 December.", "2026-12-20"),
        ("I'll see you the day after tomorrow.", "2026-11-06"),
        ("我明天要去北京。", "2026-11-05"),
        ("我后天去上海出差。", "2026-11-06"),
        ("大后天我要搬家。", "2026-11-07"),
        ("下周一我要交报告。", "2026-11-09"),
        ("周五我会给你打电话。", "2026-11-06"),
        ("我12月3日要去体检。", "2026-12-03"),
    ],
)
def test_relative_dates_resolve_against_ts_in_utc(text: str, due: str) -> None:
    (candidate,) = extract_rules(text, sender=None, ts=TS)
    assert candidate.slot in ("plan", "commitment")
    assert candidate.due == day(due)
    assert candidate.quote in text


def test_a_plan_addressed_to_the_listener_is_a_commitment() -> None:
    (call,) = extract_rules("周五我会给你打电话。", sender=None, ts=TS)
    (report,) = extract_rules("I will finish the report tomorrow.", sender=None, ts=TS)
    assert (call.slot, call.value) == ("commitment", "给你打电话")
    assert (report.slot, report.value) == ("plan", "finish the report")


def test_a_plan_needs_a_date_but_a_stated_intent_does_not() -> None:
    assert found("I'll finish the report.") == []
    assert found("I'm planning to learn Japanese.") == [
        ("plan", "learn Japanese", "I'm planning to learn Japanese")
    ]
    (undated,) = extract_rules("I'll call you.", sender=None, ts=TS)
    assert (undated.slot, undated.due) == ("commitment", None)


def test_subject_is_the_sender_or_user() -> None:
    assert {c.subject for c in extract_rules("I love jazz.", sender="ana", ts=TS)} == {"ana"}
    assert {c.subject for c in extract_rules("I love jazz.", sender=None, ts=TS)} == {"user"}


@pytest.mark.parametrize(
    "reply",
    [
        "Sure thing! I'll remind you to book the dentist on Friday, don't worry.",
        "ok noted - I promise to remind you to book the dentist",
        "好的，我答应你周五提醒你去看牙医。",
    ],
)
def test_the_assistants_promise_is_the_assistants(reply: str) -> None:
    """A reply of the soul (an ``assistant`` event, stored without a sender) makes the
    promise; filing it as the user's would put words in the user's mouth."""
    (promise,) = [c for c in extract_rules(reply, sender=None, ts=TS, kind="assistant")]
    assert (promise.subject, promise.slot) == ("assistant", "commitment")
    said = extract_rules("I'll remind myself to book the dentist tomorrow", sender=None, ts=TS)
    assert {c.subject for c in said} == {"user"}
    # A reply pushed with the agent's own name as its sender is that agent's.
    assert {c.subject for c in extract_rules(reply, sender="ada", ts=TS, kind="assistant")} == {
        "ada"
    }


def test_quotes_are_verbatim_and_repeats_yield_one_claim() -> None:
    text = "I love jazz. Really, I love jazz!\nMy name is Anna."
    claims = extract_rules(text, sender=None, ts=TS)
    assert [(c.slot, c.value) for c in claims] == [("likes", "jazz"), ("name", "Anna")]
    assert all(c.quote in text for c in claims)


PHRASES = [e[0] for e in EXTRACTED] + NOTHING + ["，", ", ", " and ", "? ", "\n", "Friday"]


@given(st.lists(st.sampled_from(PHRASES) | st.text(max_size=12), max_size=6))
def test_rule_candidates_are_verbatim_and_supported_in_any_text(parts: list[str]) -> None:
    text = "".join(parts)
    for cand in extract_rules(text, sender=None, ts=TS):
        assert cand.quote in text
        assert cand.value.strip() == cand.value
        assert cand.slot in SLOTS
        assert gate(cand, text).gate in (None, "credential")


def test_every_slot_a_rule_can_fill_is_whitelisted() -> None:
    # "about" names the person a claim is about when it is not the speaker.
    assert {n for rule in RULES for n in rule.pattern.groupindex} - {"about"} <= SLOTS.keys()


# Gates, one by one.


def candidate(
    slot: str = "pet_name", value: str = "Tuanzi", quote: str = "my cat is Tuanzi", **kw: object
) -> Candidate:
    return Candidate(
        subject="user", slot=slot, value=value, quote=quote, source="llm", confidence="high", **kw
    )  # type: ignore[arg-type]


SOURCE = "Hello! By the way, my cat is Tuanzi and I live in Hangzhou."


def test_gate_passes_an_honest_candidate() -> None:
    assert gate(candidate(), SOURCE) == souls.knowledge.claims.GateResult(True, None, "passed")


@pytest.mark.parametrize(
    ("cand", "failed"),
    [
        (candidate(slot="favourite_colour"), "slot"),
        (candidate(slot="Pet_Name"), "slot"),
        (candidate(quote="my cat is called Tuanzi"), "quote"),  # paraphrase
        (candidate(quote="My cat is Tuanzi"), "quote"),  # case changed
        (candidate(quote="my cat  is Tuanzi"), "quote"),  # extra space
        (candidate(quote="my cat is Tuanzi and I live in Chengdu"), "quote"),
        (candidate(quote=""), "quote"),
        (candidate(value="T", quote="T"), "quote"),
        (candidate(value="Mochi"), "support"),
        (candidate(value="Tuanzi Hangzhou"), "support"),
        (candidate(value="", quote="my cat"), "support"),
    ],
)
def test_gate_names_the_gate_that_failed(cand: Candidate, failed: str) -> None:
    result = gate(cand, SOURCE)
    assert (result.passed, result.gate) == (False, failed)
    assert cand.value not in result.reason or not cand.value


def test_quote_gate_normalises_nfc_only() -> None:
    source = "I live in Zu\u0308rich now."  # decomposed ü
    assert gate(candidate("location", "Zürich", "I live in Zürich"), source).passed
    assert not gate(candidate("location", "Zürich", "i live in Zürich"), source).passed


def test_support_gate_casefolds_and_ignores_spacing_in_the_value() -> None:
    assert gate(candidate(value="TUANZI"), SOURCE).passed
    assert gate(candidate("location", "Hang zhou", "I live in Hangzhou"), SOURCE).passed


def test_a_one_character_value_must_occur_in_the_quote() -> None:
    source = "我养了一只猫，叫团子"
    assert gate(candidate("pet_kind", "猫", "我养了一只猫"), source).passed
    assert gate(candidate("pet_kind", "狗", "我养了一只猫"), source).gate == "support"


@pytest.mark.parametrize(
    ("value", "source"),
    [
        ("sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8t", "call me sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8t"),
        ("ghp_" + "a1B2" * 9, "my name is ghp_" + "a1B2" * 9),
        ("hunter2-Blue-77", "my wifi password is hunter2-Blue-77, don't tell"),
        ("Tuanzi2019", "The password: Tuanzi2019"),
        ("483920", "我的银行卡密码是483920"),
        ("9f8e7d6c5b4a39281706f5e4d3c2b1a0", "I like 9f8e7d6c5b4a39281706f5e4d3c2b1a0"),
    ],
)
def test_credential_values_are_rejected(value: str, source: str) -> None:
    result = gate(candidate("name", value, source), source)
    assert (result.passed, result.gate) == (False, "credential")
    assert value not in result.reason


def test_a_password_mentioned_elsewhere_is_no_credential() -> None:
    source = "I forgot my password again. Anyway, my name is Anna."
    assert gate(candidate("name", "Anna", "my name is Anna"), source).passed
    assert gate(candidate("name", "Anna", source), source).passed


def test_a_slot_that_could_be_a_secret_is_not_shown_in_the_reason() -> None:
    result = gate(candidate(slot="sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8t"), SOURCE)
    assert result.gate == "slot"
    assert "sk-proj" not in result.reason


def test_bigram_coverage() -> None:
    assert COVERAGE == 0.8
    assert bigram_coverage("Tuanzi", "my cat is tuanzi") == 1.0
    assert bigram_coverage("团子", "我的猫叫团子") == 1.0
    assert bigram_coverage("麻薯", "我的猫叫团子") == 0.0
    assert bigram_coverage("abcd", "xabx cd") == 2 / 3  # ab, cd of ab bc cd
    assert bigram_coverage("  ", "  ") == 0.0
    assert bigram_coverage("a", "cat") == 1.0


# Merge algebra. A tiny in-memory ledger applies plans the way the integrator stores rows.


class Ledger:
    def __init__(self) -> None:
        self.rows: dict[int, ClaimRow] = {}
        self.ids = itertools.count(1)

    def add(self, cand: Candidate, event_id: int, at: float, now: float | None = None) -> MergePlan:
        now = at if now is None else now
        related = related_slots(cand.slot)
        rows = [r for r in self.rows.values() if r.subject == cand.subject and r.slot in related]
        plan = merge(rows, cand, event_id=event_id, valid_from=at, now=now)
        for update in plan.updates:
            self.apply(update)
        if plan.insert_state is not None:
            row_id = next(self.ids)
            self.rows[row_id] = ClaimRow(
                id=row_id,
                subject=cand.subject,
                slot=cand.slot,
                value=cand.value,
                quote=cand.quote,
                event_id=event_id,
                source=cand.source,
                confidence=cand.confidence,
                state=plan.insert_state,
                valid_from=at,
                valid_to=plan.insert_valid_to,
                recorded_from=now,
                recorded_to=plan.insert_recorded_to,
                due=cand.due,
            )
        return plan

    def apply(self, update: ClaimUpdate) -> None:
        self.rows[update.id] = msgspec.structs.replace(
            self.rows[update.id],
            state=update.state,
            valid_to=update.valid_to,
            recorded_to=update.recorded_to,
        )

    def ingest(self, text: str, event_id: int, at: float) -> list[MergePlan]:
        return [self.add(c, event_id, at) for c in extract_rules(text, sender=None, ts=at)]

    def states(self, slot: str) -> dict[str, str]:
        return {r.value: r.state for r in self.rows.values() if r.slot == slot}

    def row(self, value: str) -> ClaimRow:
        (row,) = [r for r in self.rows.values() if r.value == value]
        return row


def claim(
    value: str, slot: str = "pet_name", source: str = "rule", confidence: str = "high"
) -> Candidate:
    return Candidate(
        subject="user", slot=slot, value=value, quote=value, source=source, confidence=confidence
    )  # type: ignore[arg-type]


def test_chaos_rename_supersedes_the_old_name() -> None:
    ledger = Ledger()
    ledger.ingest("My cat is Tuanzi.", event_id=1, at=TS)
    ledger.ingest("We renamed the cat Mochi.", event_id=2, at=TS + DAY)
    assert ledger.states("pet_name") == {"Tuanzi": "superseded", "Mochi": "active"}
    old = ledger.row("Tuanzi")
    assert (old.valid_from, old.valid_to, old.recorded_to) == (TS, TS + DAY, TS + DAY)
    assert ledger.row("Mochi").valid_to is None
    assert ledger.states("pet_kind") == {"cat": "active"}
    assert {r.value: injectable(r) for r in ledger.rows.values() if r.slot != "event"} == {
        "cat": True,
        "Tuanzi": False,
        "Mochi": True,
    }


def test_chinese_rename() -> None:
    ledger = Ledger()
    ledger.ingest("我的猫叫团子。", event_id=1, at=TS)
    ledger.ingest("我们把猫改名叫麻薯了。", event_id=2, at=TS + DAY)
    assert ledger.states("pet_name") == {"团子": "superseded", "麻薯": "active"}


def test_the_same_sentence_twice_is_one_row() -> None:
    ledger = Ledger()
    first = ledger.ingest("My cat is Tuanzi.", event_id=1, at=TS)
    again = ledger.ingest("My cat is Tuanzi.", event_id=1, at=TS)  # the same event, another path
    later = ledger.ingest("my cat is called TUANZI", event_id=7, at=TS + DAY)  # restated
    assert [p.insert_state for p in first] == ["active", "active"]
    assert [(p.duplicate, p.insert_state) for p in again] == [(1, None), (2, None)]
    assert all(p.duplicate is not None and not p.updates for p in later)
    assert len(ledger.rows) == 2
    assert ledger.row("Tuanzi").confidence == "high"  # never corroborated upwards


def test_an_exact_tie_defers_both_until_a_later_claim_settles_it() -> None:
    ledger = Ledger()
    ledger.add(claim("Tuanzi", slot="name"), event_id=1, at=TS)
    plan = ledger.add(claim("Mochi", slot="name"), event_id=1, at=TS)  # same event, same rank
    assert plan.insert_state == "deferred"
    assert plan.updates == (ClaimUpdate(1, "deferred", None, None),)
    assert ledger.states("name") == {"Tuanzi": "deferred", "Mochi": "deferred"}
    assert not any(injectable(r) for r in ledger.rows.values())

    weaker = ledger.add(claim("Tuanzi", slot="name", source="llm"), event_id=2, at=TS + DAY)
    assert weaker.duplicate == 1  # too weak to settle it
    assert not weaker.updates

    settled = ledger.add(claim("Mochi", slot="name"), event_id=3, at=TS + DAY)
    assert settled.duplicate == 2
    assert ledger.states("name") == {"Tuanzi": "superseded", "Mochi": "active"}
    assert len(ledger.rows) == 2


def test_a_newer_different_value_settles_a_tie() -> None:
    ledger = Ledger()
    ledger.add(claim("Tuanzi"), event_id=1, at=TS)
    ledger.add(claim("Mochi"), event_id=1, at=TS)
    ledger.add(claim("Doudou"), event_id=2, at=TS + DAY)
    assert ledger.states("pet_name") == {
        "Tuanzi": "superseded",
        "Mochi": "superseded",
        "Doudou": "active",
    }
    assert ledger.row("Mochi").valid_to == TS + DAY


def test_an_older_event_imported_late_arrives_superseded() -> None:
    ledger = Ledger()
    ledger.add(claim("Chengdu", "location"), event_id=9, at=TS)
    plan = ledger.add(claim("Hangzhou", "location"), event_id=3, at=TS - 30 * DAY, now=TS + DAY)
    assert plan == MergePlan(
        insert_state="superseded", insert_valid_to=TS, insert_recorded_to=TS + DAY
    )
    assert ledger.states("location") == {"Chengdu": "active", "Hangzhou": "superseded"}
    again = ledger.add(claim("Hangzhou", "location"), event_id=4, at=TS - 20 * DAY)
    assert again.duplicate == 2  # lost once, recorded once


def test_rank_beats_time_source_first_then_confidence() -> None:
    ledger = Ledger()
    ledger.add(claim("Tuanzi", source="user"), event_id=1, at=TS)
    lost = ledger.add(claim("Mochi", source="rule"), event_id=2, at=TS + DAY)
    assert (lost.insert_state, lost.insert_valid_to) == ("superseded", TS + DAY)  # empty span
    ledger.add(claim("Anna", "name", confidence="medium"), event_id=3, at=TS)
    ledger.add(claim("Ann", "name", confidence="low"), event_id=4, at=TS + DAY)
    assert ledger.states("name") == {"Anna": "active", "Ann": "superseded"}


def test_multi_valued_slots_accumulate_and_a_negation_supersedes_its_counterpart() -> None:
    ledger = Ledger()
    ledger.ingest("I love jazz. I like hiking.", event_id=1, at=TS)
    ledger.ingest("I don't like jazz anymore.", event_id=2, at=TS + DAY)
    assert ledger.states("likes") == {"jazz": "superseded", "hiking": "active"}
    assert ledger.states("dislikes") == {"jazz": "active"}
    assert ledger.row("hiking").valid_to is None
    ledger.ingest("Honestly I love jazz again", event_id=3, at=TS + 2 * DAY)
    assert sorted(r.state for r in ledger.rows.values() if r.value == "jazz") == [
        "active",
        "superseded",
        "superseded",
    ]


def test_plans_accumulate() -> None:
    ledger = Ledger()
    ledger.ingest("我明天要去北京。", event_id=1, at=TS)
    ledger.ingest("下周一我要交报告。", event_id=2, at=TS)
    assert ledger.states("plan") == {"去北京": "active", "交报告": "active"}
    assert ledger.row("交报告").due == day("2026-11-09")


def test_rows_of_other_subjects_are_ignored() -> None:
    other = ClaimRow(
        id=5,
        subject="bob",
        slot="pet_name",
        value="Rex",
        quote="Rex",
        event_id=1,
        source="user",
        confidence="high",
        state="active",
        valid_from=TS + DAY,
        valid_to=None,
        recorded_from=TS,
        recorded_to=None,
    )
    assert merge([other], claim("Tuanzi"), event_id=2, valid_from=TS, now=TS) == MergePlan(
        insert_state="active"
    )


def test_merge_refuses_an_unknown_slot() -> None:
    with pytest.raises(ValueError, match="gate candidates first"):
        merge([], claim("x", slot="shoe_size"), event_id=1, valid_from=TS, now=TS)


def test_retract_closes_a_claim() -> None:
    ledger = Ledger()
    ledger.add(claim("go to the dentist", "plan"), event_id=1, at=TS)
    row = ledger.row("go to the dentist")
    update = retract(row, TS + DAY)
    assert update == ClaimUpdate(row.id, "retracted", TS + DAY, TS + DAY)
    ledger.apply(update)
    assert not injectable(ledger.row("go to the dentist"))
    assert retract(ledger.row("go to the dentist"), TS + 9 * DAY) == update  # idempotent
    superseded = msgspec.structs.replace(row, state="superseded", valid_to=TS + 1.0)
    assert retract(superseded, TS + DAY).valid_to == TS + 1.0


def test_a_retracted_claim_is_not_revived_by_the_same_event() -> None:
    ledger = Ledger()
    ledger.add(claim("Tuanzi"), event_id=1, at=TS)
    ledger.apply(retract(ledger.row("Tuanzi"), TS + DAY))
    assert ledger.add(claim("Tuanzi"), event_id=1, at=TS).duplicate == 1
    assert ledger.add(claim("Tuanzi"), event_id=2, at=TS + 2 * DAY).insert_state == "active"


def test_correct_replaces_an_llm_claim_and_flags_ai_fidelity() -> None:
    ledger = Ledger()
    ledger.add(claim("Mochi", source="llm"), event_id=1, at=TS)
    fix = correct(list(ledger.rows.values()), "pet_name", "Tuanzi", TS + DAY)
    assert fix.candidate == Candidate(
        subject="user",
        slot="pet_name",
        value="Tuanzi",
        quote="Tuanzi",
        source="user",
        confidence="high",
    )
    assert (fix.corrected, fix.ai_corrected) == ((1,), True)
    ledger.add(fix.candidate, event_id=2, at=TS + DAY)
    assert ledger.states("pet_name") == {"Mochi": "superseded", "Tuanzi": "active"}
    assert gate(fix.candidate, fix.candidate.value).passed


def test_correcting_a_rule_claim_or_confirming_does_not_flag_ai_fidelity() -> None:
    ledger = Ledger()
    ledger.add(claim("Mochi"), event_id=1, at=TS)
    rows = list(ledger.rows.values())
    assert correct(rows, "pet_name", "Tuanzi", TS).ai_corrected is False
    assert correct(rows, "pet_name", "mochi", TS).corrected == ()
    assert correct(rows, "likes", "jazz", TS, subject="ana").candidate.subject == "ana"
    assert correct([], "likes", "jazz", TS).candidate.subject == "user"
    with pytest.raises(ValueError, match="not in SLOTS"):
        correct(rows, "shoe_size", "42", TS)


def test_needs_verification_marks_low_confidence() -> None:
    ledger = Ledger()
    ledger.add(claim("Anna", "name", confidence="low"), event_id=1, at=TS)
    ledger.add(claim("jazz", "likes", confidence="medium"), event_id=1, at=TS)
    assert needs_verification(ledger.row("Anna"))
    assert not needs_verification(ledger.row("jazz"))


RANKS = st.lists(
    st.tuples(
        st.sampled_from(["llm", "rule", "user"]),
        st.sampled_from(["low", "medium", "high"]),
        st.integers(0, 50),
    ),
    min_size=1,
    max_size=6,
    unique=True,
)


@given(RANKS, st.randoms(use_true_random=False))
def test_without_ties_the_highest_rank_is_active_whatever_the_order(
    ranks: list[tuple[str, str, int]], rnd: object
) -> None:
    claims = [
        (claim(f"value{i}", source=s, confidence=c), float(t)) for i, (s, c, t) in enumerate(ranks)
    ]
    order = list(claims)
    rnd.shuffle(order)  # type: ignore[attr-defined]
    ledger = Ledger()
    for event_id, (cand, at) in enumerate(order, start=1):
        ledger.add(cand, event_id, at)
    order_ = {"llm": 0, "rule": 1, "user": 2, "low": 0, "medium": 1, "high": 2}
    best = max(claims, key=lambda ca: (order_[ca[0].source], order_[ca[0].confidence], ca[1]))
    assert [r.value for r in ledger.rows.values() if r.state == "active"] == [best[0].value]
    assert len(ledger.rows) == len(claims)


# LLM extraction: the model is a fake at the edge.


def fake(answer: str, prompts: list[str] | None = None) -> object:
    async def call(prompt: str) -> str:
        if prompts is not None:
            prompts.append(prompt)
        return answer

    return call


async def llm(answer: str, text: str = SOURCE) -> list[Candidate]:
    return await extract_llm(text, sender="ana", ts=TS, call=fake(answer))  # type: ignore[arg-type]


async def test_extract_llm_reads_fenced_json_and_marks_the_source() -> None:
    prompts: list[str] = []
    item = (
        '{"slot": "pet_name", "value": "Tuanzi", "quote": "my cat is Tuanzi", "confidence": "high"}'
    )
    answer = f"Sure!\n```json\n[{item}]\n```"
    got = await extract_llm(SOURCE, sender="ana", ts=TS, call=fake(answer, prompts))  # type: ignore[arg-type]
    assert got == [
        Candidate(
            subject="ana",
            slot="pet_name",
            value="Tuanzi",
            quote="my cat is Tuanzi",
            source="llm",
            confidence="high",
        )
    ]
    (prompt,) = prompts
    assert SOURCE in prompt
    assert all(f"- {slot}: {spec.description}" in prompt for slot, spec in SLOTS.items())
    assert prompt == llm_prompt(SOURCE)


@pytest.mark.parametrize(
    "answer",
    [
        "",
        "no facts here",
        "[",
        "```json\n{oops}\n```",
        "null",
        "42",
        '"text"',
        "[1, 2]",
        '[{"slot": 1}]',
        "{}",
    ],
)
async def test_extract_llm_turns_garbage_into_nothing(answer: str) -> None:
    assert await llm(answer) == []


async def test_extract_llm_is_lenient_about_the_shape() -> None:
    item = '{"slot": "location", "value": " Hangzhou ", "quote": "I live in Hangzhou"}'
    assert [c.value for c in await llm(f"Here: [{item}] done")] == ["Hangzhou"]
    assert [c.value for c in await llm(f'{{"claims": [{item}]}}')] == ["Hangzhou"]
    assert [c.value for c in await llm(item)] == ["Hangzhou"]
    got = await llm(f"[{item}, {item}, 7, null]")
    assert [c.confidence for c in got] == ["low", "low"]  # missing; repeats are kept


async def test_extract_llm_reads_due_times_from_the_quote() -> None:
    text = "I'll send you the slides by Friday."
    answer = msgspec.json.encode(
        [
            {
                "slot": "commitment",
                "value": "send you the slides",
                "quote": "send you the slides by Friday",
            }
        ]
    ).decode()
    (c,) = await llm(answer, text)
    assert c.due == day("2026-11-06")


async def test_extract_llm_degrades_to_nothing_when_the_model_is_down() -> None:
    async def down(prompt: str) -> str:
        raise LLMError("http://127.0.0.1:1/v1 refused the connection")

    assert await extract_llm(SOURCE, sender=None, ts=TS, call=down) == []


async def test_extract_llm_never_swallows_cancellation_or_bugs() -> None:
    async def cancelled(prompt: str) -> str:
        raise asyncio.CancelledError

    async def broken(prompt: str) -> str:
        raise KeyError("bug")

    with pytest.raises(asyncio.CancelledError):
        await extract_llm(SOURCE, sender=None, ts=TS, call=cancelled)
    with pytest.raises(KeyError):
        await extract_llm(SOURCE, sender=None, ts=TS, call=broken)


def test_public_surface() -> None:
    public = {n for n in dir(souls.knowledge.claims) if not n.startswith("_")}
    imported = {"Any", "Awaitable", "Callable", "Literal", "Mapping", "Sequence", "annotations"}
    modules = {"msgspec", "re", "types", "unicodedata"}
    helpers = {
        "HygieneConfig",
        "HygieneGate",
        "RejectedInput",
        "SoupdError",
        "closes",
        "find_claims",
        "find_due",
        "key_of",
        "same_key",
    }
    assert public - imported - modules - helpers == set(souls.knowledge.claims.__all__)
