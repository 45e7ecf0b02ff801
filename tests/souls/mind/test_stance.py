# ruff: noqa: RUF001  (full-width punctuation is part of the Chinese texts under test)
"""Stances and values (souls.mind.stance) on conversation: a refusal or a value the
speaker states is no feeling; a refusal met, or someone else's, still is."""

from __future__ import annotations

import pytest

from souls.mind.appraisal import appraise
from souls.mind.markers import Markers
from souls.mind.somatic import SomaticConfig

CONFIG = SomaticConfig()

# Two people in a group chat about a colleague's gossip, changing their minds midway.
CHAT = [
    "ugh did u hear what Priya said about Tom?? idk if its true",
    "I believe in respecting people's privacy, I refuse to spread rumors",
    "fair. tho honestly i kinda wanted to know lol",
    "no. we flatly refuse to gossip about coworkers, that's the team rule",
    "ok ok you're right, sorry",
    "HR refused my complaint about it anyway, so annoying",
    "我相信尊重别人的隐私，我拒绝传播谣言",
    "他们拒绝了我的报销申请，客服态度太差了",
]


def feel(text: str) -> tuple[str, tuple[str, ...]] | None:
    appraisal = appraise(text, 0.5, CONFIG)
    return None if appraisal is None else (appraisal.valence, appraisal.topics)


@pytest.mark.parametrize(
    "text",
    [
        CHAT[1],
        CHAT[3],
        CHAT[6],
        "i'd politely refuse, I just don't do that",
        "We really believe in learning from every failure",
        "我坚决拒绝这种做法",
    ],
)
def test_a_stated_stance_or_value_is_no_feeling(text: str) -> None:
    assert feel(text) is None


@pytest.mark.parametrize(
    ("text", "topics"),
    [
        (CHAT[5], ("hr",)),  # HR refused: a refusal met ("complaint" is a lexicon word)
        ("I was refused entry at the club lol", ("entri", "club")),  # suffered
        ("they refused my refund again, useless", ("refund",)),
        (CHAT[7], ("报销", "申请", "态度")),
        ("I refuse to believe the deploy failed again", ("deploy",)),  # "failed" counts
    ],
)
def test_a_refusal_met_is_negative(text: str, topics: tuple[str, ...]) -> None:
    assert feel(text) == ("negative", topics)


def test_the_conversation_leaves_no_negative_feeling_about_privacy_or_people() -> None:
    markers = Markers()
    for text in CHAT:
        appraisal = appraise(text, 0.5, CONFIG)
        if appraisal is not None:
            markers.add(appraisal)
    negative = {m.topic for m in markers.items() if m.valence == "negative"}
    assert negative.isdisjoint({"believ", "peopl", "respect", "privaci", "rumor", "gossip"})
    assert negative.isdisjoint({"尊重", "隐私", "传播", "谣言"})
    assert negative == {"hr", "报销", "申请", "态度"}  # what was met stays felt


def test_stance_words_are_configurable() -> None:
    lenient = SomaticConfig(stance_words=[], value_words=[])
    assert appraise(CHAT[1], 0.5, lenient) is not None  # every refusal counts again
    with pytest.raises(ValueError, match="stance_words"):
        SomaticConfig(stance_words=["refuse", " "])
