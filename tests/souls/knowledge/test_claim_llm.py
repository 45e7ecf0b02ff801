"""Reading a model's extraction answer: what passes the gates, what is unspoken, what
is refused and why (souls/knowledge/claim_llm.py)."""

from __future__ import annotations

import json
import time

from souls.knowledge.claim_llm import read_answer, sentence_of, unspoken_id
from souls.knowledge.claims import llm_items, llm_prompt

TS = 1_780_000_000.0
TEXT = "Honestly, the ocean is what I love most these days. I never call my father."


def read(items: object, text: str = TEXT, max_answer: int = 65_536):  # type: ignore[no-untyped-def]
    raw = items if isinstance(items, str) else json.dumps(items)
    return read_answer(raw, text, sender="ana", ts=TS, max_answer=max_answer)


def test_a_good_claim_passes_and_hostile_ones_are_refused_by_their_gate() -> None:
    reading = read(
        [
            {"slot": "likes", "value": "the ocean", "quote": "the ocean is what I love most"},
            {"slot": "job", "value": "astronaut", "quote": "I am an astronaut"},  # forged
            {"slot": "ssn", "value": "the ocean", "quote": "the ocean"},  # not whitelisted
            {"slot": "likes", "value": "mountains", "quote": "the ocean"},  # unsupported
            {"value": "no slot"},
            "not an object",
        ]
    )
    assert [(c.slot, c.value, c.source, c.subject) for c in reading.claims] == [
        ("likes", "the ocean", "llm", "ana")
    ]
    assert reading.claims[0].confidence == "low"  # no confidence stated
    assert dict(reading.refused) == {"quote": 1, "slot": 1, "support": 1, "malformed": 2}


def test_a_secret_is_refused_by_the_credential_gate() -> None:
    text = "My username is ana and my pin is 4417."
    reading = read([{"slot": "likes", "value": "4417", "quote": "pin is 4417"}], text)
    assert reading.claims == []
    assert dict(reading.refused) == {"credential": 1}


def test_unspoken_is_the_whole_sentence_under_its_hash_and_never_a_claim() -> None:
    reading = read(
        [
            {"kind": "unspoken", "quote": "never call my father"},
            {"kind": "unspoken", "quote": "I never call my father", "value": "he hurt me"},
            {"kind": "unspoken", "quote": "I miss my father so much"},  # not said
            {"kind": "unspoken", "slot": "likes"},
        ]
    )
    assert reading.claims == []
    (item,) = reading.unspoken  # the same sentence twice is one item
    assert item.sentence == "I never call my father."  # the text's words, not the model's
    assert item.id == unspoken_id("I never call my father.")
    assert item.id.startswith("unspoken.")
    assert len(item.id) == len("unspoken.") + 16
    assert item.subject == "ana"
    assert dict(reading.refused) == {"quote": 1, "malformed": 1}


def test_sentences_are_cut_at_latin_and_chinese_ends() -> None:
    assert sentence_of("第一句。我们不提他了！好吧", "不提他") == "我们不提他了！"  # noqa: RUF001
    assert sentence_of("One. Two three. Four", "three") == "Two three."
    assert sentence_of("One. Two", "Five") is None
    assert sentence_of("One. Two", "T") is None


def test_garbage_and_huge_answers_are_refused_whole() -> None:
    assert dict(read("I cannot help with that.").refused) == {"garbage": 1}
    assert dict(read("[]").refused) == {}
    assert dict(read("").refused) == {}
    huge = json.dumps([{"slot": "likes", "value": "the ocean", "quote": "the ocean"}] * 5000)
    reading = read(huge, max_answer=65_536)
    assert reading.claims == []
    assert dict(reading.refused) == {"oversize": 1}


def test_an_answer_is_read_in_linear_time() -> None:
    # Many fence openings and no close: a backtracking pattern would take seconds.
    hostile = "```" * 20_000 + "[" * 2000
    started = time.perf_counter()
    assert llm_items(hostile) == []
    assert time.perf_counter() - started < 0.5
    fenced = '```json\n[{"slot": "likes", "value": "x", "quote": "y"}]\n```'
    assert llm_items(fenced) == [{"slot": "likes", "value": "x", "quote": "y"}]


def test_the_prompt_asks_for_unspoken_items_without_their_content() -> None:
    prompt = llm_prompt(TEXT)
    assert '"kind": "unspoken"' in prompt
    assert "never write what was left unsaid" in prompt
    assert TEXT in prompt
