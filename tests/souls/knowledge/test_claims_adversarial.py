# ruff: noqa: RUF001  (full-width punctuation is part of the Chinese texts under test)
"""The three gates against a deterministic stream of adversarial LLM candidates.

Each realistic source text comes with its honest facts (slot, value, quote). A seeded
generator distorts them the ways a model goes wrong: invented slots, forged quotes,
distorted values, credentials. Every distortion must be rejected by the gate named for
it, and every honest candidate (and harmless variants of it) must pass. The forgeries are
checked to be real forgeries with plain ``in``, so a generator slip cannot hide a gate bug.
"""

from __future__ import annotations

import random
import unicodedata
from collections import Counter
from collections.abc import Callable
from datetime import UTC, datetime

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

from souls.knowledge.claims import SLOTS, Candidate, bigram_coverage, extract_llm, gate

TS = datetime(2026, 11, 4, 15, 30, tzinfo=UTC).timestamp()
SEED = 20261104
ADVERSARIAL = 720  # distorted candidates drawn, spread evenly over KINDS

Fact = tuple[str, str, str]  # slot, value, quote

# A source text, then its honest facts indented: slot | value | quote.
CORPUS = """
Hi there! My cat is called Tuanzi and she sleeps all day.
    pet_name | Tuanzi | My cat is called Tuanzi
    pet_kind | cat | My cat is called Tuanzi
We renamed the cat Mochi last week, she seems to like it.
    pet_name | Mochi | We renamed the cat Mochi
My name is Anna Kowalski, I run a small bakery.
    name | Anna Kowalski | My name is Anna Kowalski
I live in Hangzhou now, after years in Chengdu.
    location | Hangzhou | I live in Hangzhou
I grew up in Valparaíso but moved to Lisbon in 2019.
    hometown | Valparaíso | I grew up in Valparaíso
    location | Lisbon | moved to Lisbon in 2019
I work as a software engineer at Datadog, mostly on storage.
    job | software engineer | I work as a software engineer
    employer | Datadog | at Datadog
I'm a nurse at St Mary's Hospital and I work night shifts.
    job | nurse | I'm a nurse
    employer | St Mary's Hospital | I'm a nurse at St Mary's Hospital
I love jazz, especially Coltrane. I don't like techno though.
    likes | jazz | I love jazz
    likes | Coltrane | especially Coltrane
    dislikes | techno | I don't like techno
I promise to send you the contract by Friday.
    commitment | send you the contract | I promise to send you the contract by Friday
I'm going to the dentist on 2026-12-03 at nine.
    plan | go to the dentist | going to the dentist on 2026-12-03
My birthday is March 17, 1990, in case you wondered.
    birthday | March 17, 1990 | My birthday is March 17, 1990
Please reply in French from now on.
    language | French | Please reply in French
My husband's name is Tomasz and he cooks better than me.
    partner_name | Tomasz | My husband's name is Tomasz
Next Monday I'll visit my grandmother in Kraków.
    plan | visit my grandmother | Next Monday I'll visit my grandmother
My dog's name is Rex, he is a seven-year-old beagle.
    pet_name | Rex | My dog's name is Rex
    pet_kind | dog | My dog's name is Rex
I'm originally from Ouagadougou, which surprises people.
    hometown | Ouagadougou | I'm originally from Ouagadougou
我的猫叫团子，今年三岁了。
    pet_name | 团子 | 我的猫叫团子
    pet_kind | 猫 | 我的猫叫团子
我们把猫改名叫麻薯了，因为她太白了。
    pet_name | 麻薯 | 我们把猫改名叫麻薯
你好，我叫李明，在上海做设计。
    name | 李明 | 我叫李明
我住在杭州西湖边，每天骑车上班。
    location | 杭州 | 我住在杭州西湖边
去年我搬到了成都，一切都还不错。
    location | 成都 | 我搬到了成都
我是一名护士，在协和医院上夜班。
    job | 护士 | 我是一名护士
    employer | 协和医院 | 在协和医院上夜班
我很喜欢喝乌龙茶，不喜欢咖啡。
    likes | 乌龙茶 | 我很喜欢喝乌龙茶
    dislikes | 咖啡 | 不喜欢咖啡
我答应你明天陪你去医院。
    commitment | 陪你去医院 | 我答应你明天陪你去医院
下周一我要交季度报告。
    plan | 交季度报告 | 下周一我要交季度报告
我的生日是3月17日，别忘了。
    birthday | 3月17日 | 我的生日是3月17日
我老家是四川宜宾，口味偏辣。
    hometown | 四川宜宾 | 我老家是四川宜宾
我老公叫王建国，他是老师。
    partner_name | 王建国 | 我老公叫王建国
我的母语是粤语，但普通话也说得不错。
    language | 粤语 | 我的母语是粤语
说好了陪你看店铺，周六上午十点见。
    commitment | 陪你看店铺 | 说好了陪你看店铺
我在阿里巴巴集团工作了五年。
    employer | 阿里巴巴集团 | 我在阿里巴巴集团工作
For the record, I was born on 1990-05-17 in a snowstorm.
    birthday | 1990-05-17 | I was born on 1990-05-17
我是1988年6月2日出生的，属龙。
    birthday | 1988年6月2日 | 我是1988年6月2日出生的
"""

# Texts that hold a secret (a stored event may, when hygiene has no pattern for it),
# then the secret and a quote holding it.
SECRET_CORPUS = """
My wifi password is hunter2-Blue-77, don't share it.
    hunter2-Blue-77 | My wifi password is hunter2-Blue-77
我的银行卡密码是839201，记住了。
    839201 | 我的银行卡密码是839201
call me sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1w if the deploy breaks
    sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1w | call me sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1w
My name on the badge reads AKIAIOSFODNN7EXAMPLE, funny right?
    AKIAIOSFODNN7EXAMPLE | My name on the badge reads AKIAIOSFODNN7EXAMPLE
I love ghp_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8 as a band name
    ghp_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8 | I love ghp_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8
the api key for prod: Zq81xT0pLm55vRw2Nc9a, keep it safe
    Zq81xT0pLm55vRw2Nc9a | the api key for prod: Zq81xT0pLm55vRw2Nc9a
我的令牌是 4f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c 别外传
    4f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c | 我的令牌是 4f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c
"""


def parse(corpus: str) -> list[tuple[str, list[tuple[str, ...]]]]:
    entries: list[tuple[str, list[tuple[str, ...]]]] = []
    for line in corpus.strip().splitlines():
        if line.startswith(" "):
            entries[-1][1].append(tuple(field.strip() for field in line.split("|")))
        else:
            entries.append((line, []))
    return entries


SOURCES: list[tuple[str, list[Fact]]] = [
    (text, [(slot, value, quote) for slot, value, quote in facts]) for text, facts in parse(CORPUS)
]
SECRETS = [(text, secret, quote) for text, ((secret, quote),) in parse(SECRET_CORPUS)]

INVENTED_SLOTS = [
    "favourite_color", "ssn", "user.pet.name", "Pet_Name", "pet name", "home_address", "phone_no",
    "email", "salary", "religion", "password", "", "name ", "likes\n", "名字", "PLAN",
]  # fmt: skip
FILLERS = {True: ["真的", "其实", "一直"], False: ["really ", "actually ", "always "]}
FOREIGN_WORDS = ["Wolfgangsson", "Bartholomew", "Přemysl", "鸿鹄", "饕餮", "Quetzalcoatl"]
PUNCT_SWAP = {"，": ",", ",": "，", "。": ".", "'": "’", "’": "'", "!": "！"}


def has_han(text: str) -> bool:
    return any("\u4e00" <= ch <= "\u9fff" for ch in text)


def llm_candidate(slot: str, value: str, quote: str, confidence: str = "high") -> Candidate:
    return Candidate(
        subject="user", slot=slot, value=value, quote=quote, source="llm", confidence=confidence
    )  # type: ignore[arg-type]


Case = tuple[str, Candidate, str, str | None]  # kind, candidate, source text, expected gate


class Generator:
    """Seeded distortions of honest facts. Each method returns None when it does not apply."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)

    def other_fact(self, text: str, slot: str | None = None) -> Fact:
        facts = [f for t, fs in SOURCES if t != text for f in fs if slot in (None, f[0])]
        return self.rng.choice(facts)

    def forged(self, text: str, quote: str) -> str | None:
        """``quote`` itself when it really is absent from ``text``, else None."""
        return quote if quote and quote not in text else None

    # slot
    def invented_slot(self, text: str, fact: Fact) -> Case | None:
        slot = self.rng.choice(INVENTED_SLOTS)
        return "invented_slot", llm_candidate(slot, fact[1], fact[2]), text, "slot"

    # quote
    def foreign_quote(self, text: str, fact: Fact) -> Case | None:
        slot, value, quote = self.other_fact(text)
        forged = self.forged(text, quote)
        return forged and ("foreign_quote", llm_candidate(slot, value, forged), text, "quote")

    def paraphrase(self, text: str, fact: Fact) -> Case | None:
        slot, value, quote = fact
        words = quote.split(" ")
        filler = self.rng.choice(FILLERS[has_han(quote)])
        if has_han(quote):
            at = self.rng.randrange(1, len(quote))
            forged = self.forged(text, quote[:at] + filler + quote[at:])
        else:
            at = self.rng.randrange(1, len(words)) if len(words) > 1 else 1
            forged = self.forged(text, " ".join(words[:at]) + " " + filler + " ".join(words[at:]))
        return forged and ("paraphrase", llm_candidate(slot, value, forged.strip()), text, "quote")

    def case_change(self, text: str, fact: Fact) -> Case | None:
        slot, value, quote = fact
        change = self.rng.choice([str.upper, str.lower, str.swapcase, str.title])
        forged = self.forged(text, change(quote))
        return forged and ("case_change", llm_candidate(slot, value, forged), text, "quote")

    def extra_space(self, text: str, fact: Fact) -> Case | None:
        slot, value, quote = fact
        if " " in quote:
            at = self.rng.choice([i for i, ch in enumerate(quote) if ch == " "])
            spaced = quote[:at] + self.rng.choice(["  ", "\u00a0", " \t"]) + quote[at + 1 :]
        else:
            at = self.rng.randrange(1, len(quote))
            spaced = quote[:at] + " " + quote[at:]
        forged = self.forged(text, spaced)
        return forged and ("extra_space", llm_candidate(slot, value, forged), text, "quote")

    def stitched(self, text: str, fact: Fact) -> Case | None:
        # Two distant fragments of the source, joined as if they were one stretch.
        if len(text) < 16:
            return None
        a = self.rng.randrange(0, len(text) // 3)
        b = self.rng.randrange(2 * len(text) // 3, len(text) - 2)
        joint = "" if has_han(text) else " "
        forged = self.forged(text, text[a : a + 6].strip() + joint + text[b:].strip())
        slot, value, _ = fact
        return forged and ("stitched", llm_candidate(slot, value, forged), text, "quote")

    def punctuation(self, text: str, fact: Fact) -> Case | None:
        slot, value, _ = fact
        start = text.find(fact[2])
        stretch = text[start : start + len(fact[2]) + 2]  # the quote and what follows it
        swapped = "".join(PUNCT_SWAP.get(ch, ch) for ch in stretch)
        forged = self.forged(text, swapped)
        return forged and ("punctuation", llm_candidate(slot, value, forged), text, "quote")

    def lookalike(self, text: str, fact: Fact) -> Case | None:
        slot, value, quote = fact
        table = str.maketrans({"a": "а", "e": "е", "o": "о", "的": "旳", "我": "莪"})  # Cyrillic
        forged = self.forged(text, quote.translate(table))
        return forged and ("lookalike", llm_candidate(slot, value, forged), text, "quote")

    def too_short(self, text: str, fact: Fact) -> Case | None:
        slot, value, _ = fact
        quote = self.rng.choice(["", value[:1], " ", text[:1]])
        return "too_short", llm_candidate(slot, value, quote), text, "quote"

    # support
    def wrong_value(self, text: str, fact: Fact) -> Case | None:
        slot, _, quote = fact
        value = self.other_fact(text, slot if self.rng.random() < 0.5 else None)[1]
        if value.casefold() in text.casefold():
            return None
        return "wrong_value", llm_candidate(slot, value, quote), text, "support"

    def changed_numbers(self, text: str, fact: Fact) -> Case | None:
        slot, value, quote = fact
        if sum(ch.isdigit() for ch in value) < 2:
            return None
        shift = self.rng.randrange(1, 10)
        changed = "".join(str((int(ch) + shift) % 10) if ch.isdigit() else ch for ch in value)
        return "changed_numbers", llm_candidate(slot, changed, quote), text, "support"

    def swapped_words(self, text: str, fact: Fact) -> Case | None:
        slot, value, quote = fact
        if has_han(value):
            swapped = value[::-1]  # 团子 → 子团: every bigram changes
        else:
            words = value.split()
            longest = max(range(len(words)), key=lambda i: len(words[i]))
            words[longest] = self.rng.choice([w for w in FOREIGN_WORDS if not has_han(w)])
            swapped = " ".join(words)
        if swapped == value or len(swapped) < 2:
            return None
        return "swapped_words", llm_candidate(slot, swapped, quote), text, "support"

    def embellished(self, text: str, fact: Fact) -> Case | None:
        slot, value, quote = fact
        # Two invented words: a long value absorbs one short addition within the 20% margin.
        words = [w for w in FOREIGN_WORDS if has_han(w) == has_han(value)]
        extra = self.rng.sample(words, 2)
        joined = value + "".join(extra) if has_han(value) else " ".join([value, *extra])
        return "embellished", llm_candidate(slot, joined, quote), text, "support"

    def other_sentence(self, text: str, fact: Fact) -> Case | None:
        # A value that is in the source, but not in the quote given for it.
        values = [f[1] for t, fs in SOURCES if t == text for f in fs if f != fact]
        other = [v for v in values if v.casefold() not in fact[2].casefold()]
        if not other:
            return None
        value = self.rng.choice(other)
        return "other_sentence", llm_candidate(fact[0], value, fact[2]), text, "support"

    # credential
    def credential(self, text: str, fact: Fact) -> Case | None:
        source, secret, quote = self.rng.choice(SECRETS)
        slot = self.rng.choice(["name", "pet_name", "likes", "employer", "plan"])
        quote = self.rng.choice([quote, source])
        return "credential", llm_candidate(slot, secret, quote), source, "credential"


KINDS: dict[str, Callable[[Generator, str, Fact], Case | None]] = {
    name: getattr(Generator, name)
    for name in """invented_slot foreign_quote paraphrase case_change extra_space stitched
    punctuation lookalike too_short wrong_value changed_numbers swapped_words embellished
    other_sentence credential""".split()
}


def adversarial_cases(seed: int = SEED, count: int = ADVERSARIAL) -> list[Case]:
    gen = Generator(seed)
    cases: list[Case] = []
    kinds = list(KINDS.items())
    while len(cases) < count:
        name, make = kinds[len(cases) % len(kinds)]
        for _ in range(200):  # a kind that does not apply to this fact tries another
            text, facts = gen.rng.choice(SOURCES)
            case = make(gen, text, gen.rng.choice(facts))
            if case is not None:
                cases.append(case)
                break
        else:
            raise AssertionError(f"{name} found nothing to distort")
    return cases


def honest_cases() -> list[Case]:
    """Every honest fact, plus variants that must still pass."""
    cases: list[Case] = []
    for text, facts in SOURCES:
        for slot, value, quote in facts:
            cases.append(("honest", llm_candidate(slot, value, quote), text, None))
            cases.append(("whole_text", llm_candidate(slot, value, text), text, None))
            cases.append(("value_case", llm_candidate(slot, value.swapcase(), quote), text, None))
            spaced = " ".join(value) if has_han(value) else value.replace(" ", "  ")
            cases.append(("value_spacing", llm_candidate(slot, f" {spaced} ", quote), text, None))
            nfd = unicodedata.normalize("NFD", quote)
            cases.append(("nfd_quote", llm_candidate(slot, value, nfd), text, None))
            cases.append(("medium", llm_candidate(slot, value, quote, "medium"), text, None))
    return cases


CASES = adversarial_cases()
HONEST = honest_cases()


def test_the_generator_is_deterministic_and_covers_every_kind() -> None:
    assert adversarial_cases() == CASES
    assert len({(cand, text) for _, cand, text, _ in CASES}) >= 500  # distinct ones
    counts = Counter(kind for kind, *_ in CASES)
    assert set(counts) == set(KINDS)
    assert min(counts.values()) >= ADVERSARIAL // len(KINDS)
    assert Counter(expected for *_, expected in CASES).keys() == {
        "slot", "quote", "support", "credential"
    }  # fmt: skip


def test_honest_facts_are_verbatim() -> None:
    for text, facts in SOURCES:
        for slot, value, quote in facts:
            assert quote in text, quote
            assert slot in SLOTS
            assert value


@pytest.mark.parametrize("kind", list(KINDS))
def test_every_distortion_is_rejected_by_its_gate(kind: str) -> None:
    wrong = [
        (cand, gate(cand, text))
        for k, cand, text, expected in CASES
        if k == kind and (gate(cand, text).passed or gate(cand, text).gate != expected)
    ]
    assert wrong == []


@pytest.mark.parametrize("kind", sorted({k for k, *_ in HONEST}))
def test_honest_candidates_and_harmless_variants_pass(kind: str) -> None:
    wrong = [(cand, gate(cand, text)) for k, cand, text, _ in HONEST if k == kind]
    assert [(cand, result) for cand, result in wrong if not result.passed] == []


def test_a_reason_never_repeats_a_rejected_secret() -> None:
    for _, cand, text, expected in CASES:
        if expected == "credential":
            assert cand.value not in gate(cand, text).reason


def test_word_order_is_beyond_the_support_gate() -> None:
    # Bigram coverage is a bag of bigrams: swapping two words of a long value keeps most
    # of them, so it passes. The gate guards against invented values, not reordering.
    quote = "My name is Anna Kowalski"
    assert gate(llm_candidate("name", "Kowalski Anna", quote), quote).passed


# The same stream through extract_llm: a fake model (the outer edge) answers with the
# candidates as JSON; only the honest ones may survive the gates.


def answer(items: list[Candidate], rng: random.Random) -> str:
    fields = [
        {"slot": c.slot, "value": c.value, "quote": c.quote, "confidence": c.confidence}
        for c in items
    ]
    body = msgspec.json.encode(fields).decode()
    return rng.choice([body, f"```json\n{body}\n```", f"Here is what I found:\n{body}\nDone."])


async def test_only_honest_candidates_survive_extract_llm_and_the_gates() -> None:
    rng = random.Random(SEED)
    by_text: dict[str, list[Case]] = {}
    for case in CASES + HONEST:
        by_text.setdefault(case[2], []).append(case)
    survived: Counter[tuple[str, str, str, str]] = Counter()
    honest: Counter[tuple[str, str, str, str]] = Counter()
    for text, cases in by_text.items():
        rng.shuffle(cases)
        for start in range(0, len(cases), 40):
            batch = [c for _, c, _, _ in cases[start : start + 40]]
            reply = answer(batch, rng)

            async def model(prompt: str, reply: str = reply, text: str = text) -> str:
                assert text in prompt
                return reply

            got = await extract_llm(text, sender=None, ts=TS, call=model)
            assert len(got) == len([c for c in batch if c.value.strip()])
            assert {c.source for c in got} <= {"llm"}
            survived.update((text, c.slot, c.value, c.quote) for c in got if gate(c, text).passed)
            honest.update(
                (text, c.slot, c.value.strip(), c.quote)
                for _, c, _, expected in cases[start : start + 40]
                if expected is None
            )
    assert survived == honest
    assert sum(honest.values()) == len(HONEST)


# Properties of the support measure.

TEXT = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=40)


@given(TEXT, TEXT)
def test_coverage_is_a_share(value: str, quote: str) -> None:
    assert 0.0 <= bigram_coverage(value, quote) <= 1.0


@given(TEXT, TEXT, TEXT)
def test_a_value_inside_the_quote_is_fully_covered(before: str, value: str, after: str) -> None:
    if "".join(value.split()):
        assert bigram_coverage(value, before + value + after) == 1.0


@given(TEXT, TEXT, TEXT)
def test_a_longer_quote_never_covers_less(value: str, quote: str, more: str) -> None:
    assert bigram_coverage(value, quote + more) >= bigram_coverage(value, quote)


@given(TEXT, TEXT, TEXT)
def test_gate_never_raises_and_a_pass_means_a_verbatim_quote(
    value: str, quote: str, text: str
) -> None:
    result = gate(llm_candidate("name", value, quote), text)
    if result.passed:
        assert unicodedata.normalize("NFC", quote) in unicodedata.normalize("NFC", text)
        assert bigram_coverage(value, quote) >= 0.8
