"""Rule extraction stays linear in its text (issue 19: one soul never stalls the others).

Every event, up to the hygiene gate's 8,000 characters, goes through ``extract_rules`` on
the loop all souls share. Hostile text is the trigger of a rule said over and over, one
sentence with no end: code that reads the sentence again per match costs its length
squared. Each fragment below is repeated to 1,000 and to 8,000 characters; the time of
the long text over the short one (best of several runs, taken in turns so a busy
machine slows both) stays far from the 64 of quadratic code and near the 8 of linear
code. The bound is generous, so a loaded machine cannot fail it; absolute figures are
``bench/extraction.py``'s, never asserted here.
"""

from __future__ import annotations

import time

import pytest

from souls.knowledge.claims import extract_rules

SHORT, LONG = 1_000, 8_000
BOUND = 16  # linear code measures about 8; the quadratic code this replaced, 30 to 60
RUNS = 5
ROUNDS = 5
# Below this a short text's time is mostly the timer's and the call's; it is the floor.
FLOOR = 0.0002

# The trigger of every rule family, English and Chinese, and what the rules ask of a
# match (quotes, conditions, relative clauses, renames, dates), each said again and again.
HOSTILE = [
    # names, pets, partner, children and siblings
    "my name is ",
    "call me ",
    "my cat is called Tuanzi and ",
    "we have a dog named Rex and ",
    "we renamed the ",
    "we renamed the cat Mochi and she is now called Mochi ",
    "my wife ",
    "my daughter ",
    "my brother Sam and ",
    "我叫",
    "我的猫叫团子",
    "我把猫改名叫",
    "我养了一只猫叫",
    "我老婆叫",
    "我女儿叫",
    # allergies, places, work
    "I'm allergic to ",
    "Bob is allergic to ",
    "I have a peanut allergy and ",
    "我对花生过敏",
    "I live in ",
    "I moved to Lisbon and ",
    "I grew up in ",
    "我住在",
    "我老家是",
    "I work as a ",
    "I'm a nurse at ",
    "I got a job at ",
    "我在腾讯工作",
    "我是一名",
    "我在一家医院当",
    "我现在做",
    "我是程序员",
    # tastes, birthday, language
    "I love ",
    "I like ",
    "I don't like ",
    "我喜欢",
    "我爱吃",
    "我不喜欢",
    "my birthday is ",
    "please reply in ",
    "请用中文回答",
    # promises and plans, cancellations
    "I promise ",
    "I promised you I'd ",
    "I'm planning to ",
    "I'm going to ",
    "I will ",
    "I'll call you tomorrow ",
    "我答应你",
    "说好了",
    "我打算",
    "我要",
    "我明天要去",
    "we cancelled the ",
    "the party is cancelled and ",
    "I'm not going to ",
    "我们取消了",
    "成都不去了",
    # told events and their time
    "I painted ",
    "I went to Paris and ",
    "I've been to ",
    "I'm taking ",
    "I used to ",
    "my sister and I went ",
    "我们上周去了",
    "我去过",
    "last year ",
    "two weeks ago ",
    "next Monday ",
    "五月八号",
    # what a match asks of its sentence
    "I think ",
    "apparently ",
    "if I ",
    "what I love ",
    '"I love ',
    "not Tom, but ",
    "I ",
    "我",
    "and ",
    "Dr. ",
]


def _best(text: str) -> float:
    start = time.perf_counter()
    extract_rules(text, sender="u", ts=1.7e9, kind="message")
    return time.perf_counter() - start


def _repeated(fragment: str, length: int) -> str:
    return (fragment * (length // len(fragment) + 1))[:length]


@pytest.mark.parametrize("fragment", HOSTILE)
def test_eight_times_the_text_costs_about_eight_times_the_time(fragment: str) -> None:
    short, long = _repeated(fragment, SHORT), _repeated(fragment, LONG)
    extract_rules(short, sender="u", ts=1.7e9)  # compile every pattern first
    a = b = float("inf")
    for _ in range(ROUNDS):  # quadratic code fails every round, a busy moment one
        for _ in range(RUNS):
            a, b = min(a, _best(short)), min(b, _best(long))
        if b / max(a, FLOOR) <= BOUND:
            break
    assert b / max(a, FLOOR) <= BOUND, f"{fragment!r}: {a * 1e3:.2f} ms, then {b * 1e3:.2f} ms"


def test_hostile_text_still_yields_what_it_says() -> None:
    """Linear is not blind: the repeated statement is still read, once."""
    found = extract_rules(_repeated("my cat is called Tuanzi and ", LONG), sender="ann", ts=1.7e9)
    assert {(c.slot, c.value) for c in found} >= {("pet_name", "Tuanzi"), ("pet_kind", "cat")}
    told = extract_rules(_repeated("I went to Paris and ", LONG), sender="ann", ts=1.7e9)
    assert [c.value for c in told if c.slot == "event"] == ["went to Paris"]
