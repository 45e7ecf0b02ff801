# ruff: noqa: RUF001  (full-width punctuation is part of the Chinese examples)
"""Goals, plans and values read from one turn: what is said is taken, and questions,
hypotheticals, other people's words, passing intentions and filler give nothing."""

from __future__ import annotations

import pytest

from souls.knowledge.goal_talk import read_goals


def said(text: str) -> list[tuple[str, str, str, str]]:
    return [(s.action, s.kind, s.statement, s.domain) for s in read_goals(text)]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "My goal this year is to run a half marathon",
            [("new", "goal", "run a half marathon (this year)", "health")],
        ),
        (
            "I believe in respecting people's privacy, I refuse to spread rumors",
            [
                ("new", "value", "believe in respecting people's privacy", "belief"),
                ("new", "value", "refuse to spread rumors", "belief"),
            ],
        ),
        ("我们打算明年买房", [("new", "plan", "明年买房", "money")]),
        ("lol ok. I'm saving for a house", [("new", "goal", "saving for a house", "money")]),
        ("I'd love to write a novel one day", [("new", "goal", "write a novel one day", "art")]),
        ("I want to visit Japan someday", [("new", "goal", "visit Japan someday", "travel")]),
        ("我的目标是今年减肥十斤", [("new", "goal", "今年减肥十斤", "health")]),
        ("我坚持每天锻炼", [("new", "value", "坚持每天锻炼", "health")]),
        ("我的原则是不借钱给朋友", [("new", "value", "不借钱给朋友", "belief")]),
        (
            "I don't believe in lying to kids",
            [("new", "value", "don't believe in lying to kids", "belief")],
        ),
        ("I finally ran it!", [("achieve", "goal", "ran it", "")]),
        ("we gave up on the house", [("abandon", "goal", "house", "home")]),
        ("我们放弃买房了", [("abandon", "goal", "买房", "money")]),
        ("I put the novel on hold for now", [("pause", "goal", "novel", "art")]),
        (
            "Honestly I've been training every morning for the half marathon",
            [("progress", "goal", "training every morning for the half marathon", "health")],
        ),
    ],
)
def test_what_is_said_is_taken(text: str, expected: list[tuple[str, str, str, str]]) -> None:
    assert said(text) == expected
    for signal in read_goals(text):
        assert signal.quote in text  # verbatim


@pytest.mark.parametrize(
    "text",
    [
        # questions
        "How should I budget this month?",
        "What's your goal this year?",
        "Do you think I should save for a car",
        "你打算明年买房吗？",
        "Should I sign up for the Lisbon race or is that crazy?",
        # hypotheticals and wishes
        "If I won the lottery I want to buy a boat someday",
        "If I won the lottery I'd want to buy a boat someday lol",
        "如果中了彩票我要买一个岛",
        "maybe I'll learn the piano next year, who knows",
        # someone else's words, someone else's goals
        "She said her goal is to become a doctor",
        "My sister wants to move to Paris next year",
        '"My goal is to be rich," he joked.',
        "my coworker told me I should run a full marathon next, no way lol",
        "他打算明年结婚",
        "我老婆说她想明年换工作",
        # passing intentions, plans for today or tomorrow, promises to the listener
        "I want to get pizza tonight",
        "I'm going to the gym tomorrow",
        "我打算明天去超市",
        "I plan to call you tomorrow",
        "lol my plan is to sleep all weekend",
        "I used to want to be an astronaut",
        # filler
        "I want to say thanks for yesterday",
        "I wanted to say I'm sorry",
        "heyyy ok so new year new me lol",
        "omg omg",
    ],
)
def test_questions_hypotheticals_quotes_and_filler_give_nothing(text: str) -> None:
    assert said(text) == []


def test_a_long_turn_reads_sentence_by_sentence() -> None:
    text = (
        "ugh long day. My goal is to learn Spanish by next summer! "
        "what about you? anyway I refuse to work weekends."
    )
    assert said(text) == [
        ("new", "goal", "learn Spanish by next summer", "education"),
        ("new", "value", "refuse to work weekends", "belief"),
    ]
