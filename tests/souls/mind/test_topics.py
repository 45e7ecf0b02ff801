# ruff: noqa: RUF001  (full-width punctuation is part of the Chinese texts under test)
"""Topic choice and labels (souls.mind.topics): which terms a feeling is about (content
words and names, never a stop word, filler, number or a Chinese bigram that is no word),
and the word shown for each."""

from __future__ import annotations

import pytest

import souls.mind.topics
from souls.mind.appraisal import appraise
from souls.mind.somatic import SomaticConfig
from souls.mind.topics import (
    has_cjk,
    is_filler,
    is_topic,
    label_takes_over,
    person_topic,
    topic_terms,
)
from souls.text.tokenize import tokens


def test_public_surface() -> None:
    assert sorted(souls.mind.topics.__all__) == [
        "has_cjk",
        "is_filler",
        "is_topic",
        "iter_topic_terms",
        "label_takes_over",
        "normalise",
        "person_topic",
        "topic_labels",
        "topic_terms",
    ]


def topics(text: str) -> tuple[str, ...]:
    appraisal = appraise(text, 0.5, SomaticConfig())
    assert appraisal is not None
    return appraisal.topics


def test_topic_terms_leave_out_single_cjk_characters() -> None:
    assert topic_terms("数据库 deploys") == ["数据", "deploy"]
    assert topic_terms("猫") == []


def labels(text: str) -> dict[str, str]:
    appraisal = appraise(text, 0.5, SomaticConfig(max_topics_per_event=9))
    assert appraisal is not None
    return dict(zip(appraisal.topics, appraisal.labels, strict=True))


def test_labels_are_the_words_as_written() -> None:
    assert labels("Thanks Caroline, the deployments went great") == {
        "carolin": "Caroline",  # a name: a capital mid-sentence
        "deploy": "deployments",
    }
    assert labels("The API and iOS builds failed") == {"api": "API", "io": "iOS", "build": "builds"}
    assert labels("I loved Caroline's talk") == {"carolin": "Caroline", "talk": "talk"}
    assert labels("O\u2019Brien's build failed") == {"obrien": "O'Brien", "build": "build"}


def test_a_capital_opening_a_sentence_is_lowered_until_the_word_shows_as_a_name() -> None:
    assert labels("Painting failed. Melanie, again") == {
        "paint": "painting",
        "melani": "melanie",
    }
    # The same word later with a capital mid-sentence takes over; another word does not.
    assert labels("Melanie, great talk! Thanks Melanie") == {"melani": "Melanie", "talk": "talk"}
    assert labels("deploys are great, the Deploy button too")["deploy"] == "deploys"
    # Quotes, brackets and emoji before a word do not hide where a sentence starts.
    assert labels('Great! \U0001f60a "Painting" with Mel')["paint"] == "painting"
    assert labels("great \U0001f60a Painting with Mel")["paint"] == "Painting"
    assert labels("Great.\n  (Painting) with Mel")["paint"] == "painting"


def test_cjk_topics_are_their_own_labels() -> None:
    assert labels("数据库崩溃了") == {"数据": "数据"}
    assert labels(
        "\uff24\uff45\uff50\uff4c\uff4f\uff59到prod失败"
    )  # NFKC: "Deploy" == {"deploy": "deploy", "prod": "prod"}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Wow, thanks!", ()),
        ("Haha yeah, that's awesome", ()),
        ("Awww, thats so sweet, thanks", ("sweet",)),
        ("I'm so proud, great", ("proud",)),
        ("Omg lol hey, the deploy failed", ("deploy",)),
        ("ok cool, okay, great job, hmmm yesss", ()),
        ("hahaha lolol I've got it, I dont know, great", ()),
        ("I'll be there, you're great", ()),  # "ill" is a contraction here...
        ("I feel ill, terrible", ("ill",)),  # ...and a word here
        ("We'd better go, great", ()),  # "better" is as generic as "good"
    ],
)
def test_interjections_and_contraction_remnants_are_never_topics(
    text: str, expected: tuple[str, ...]
) -> None:
    assert topics(text) == expected


def test_is_filler() -> None:
    for word in ("wow", "Wowww", "cool", "cooool", "haha", "hahaha", "hehe", "lolol", "im", "ive"):
        assert is_filler(tokens(word)[0]), word
    for word in ("realli", "yeahhh", "ok", "okay", "dont", "youre", "gonna", "hmmm", "awww"):
        assert is_filler(tokens(word)[0]), word
    for word in ("deploy", "ill", "id", "well", "let", "oop", "hue", "hoe", "col", "mel"):
        assert is_filler(word) is (word == "col"), word  # "col": "cool", drawn in


def test_topic_terms_leave_out_fillers() -> None:
    assert topic_terms("wow, I'm learning the piano lol") == ["learn", "piano"]


@pytest.mark.parametrize(
    ("name", "topic"),
    [
        ("Melanie", "melani"),  # the stem, as a query naming her has it
        ("Ann", "ann"),
        ("Ann Lee", "ann"),  # the first name only
        ("  O\u2019Brien  ", "obrien"),
        ("The Rock", "rock"),  # the first content word
        ("Will", "will"),  # a stopword only: still a term
        ("王小明", "王小"),  # CJK: the first bigram
        ("明", "明"),  # no topic term: the first token
        ("Ok", "ok"),  # a filler: the first token
        ("\U0001f60a", "\U0001f60a"),  # no token: the name casefolded
    ],
)
def test_a_person_s_topic_is_the_stem_of_their_first_name(name: str, topic: str) -> None:
    assert person_topic(name) == topic


def test_a_label_takes_over_a_lowercased_one_of_the_same_word_or_first_name() -> None:
    assert label_takes_over("deploys", None)
    assert label_takes_over("Melanie", "melanie")
    assert label_takes_over("Ann Lee", "ann")
    assert label_takes_over("ann lee", "ann")
    assert not label_takes_over("Ann Lee", "Ann")  # a name shown already holds
    assert not label_takes_over("Lee Ann", "ann")
    assert not label_takes_over("melanies", "melanie")
    assert not label_takes_over("melanie", "melanie")


# A week of a theatre group's chat, English and Chinese, as people type it.
REHEARSALS = [
    "ugh rehearsal ran late AGAIN, still not great tbh",
    "the new lighting desk is so much better, thanks Sam!!",
    "hmm the 2nd act is still a mess, Mia forgot her lines twice lol",
    "wait no it was Jonas who forgot them, sorry Mia",
    "we sold 31 tickets already, amazing",
    "the sound check failed again, the mixer keeps crackling",
    "今天排练又失败了，导演很失望",
    "昨天的彩排太好了，灯光特别棒",
    "天排练得不错嘛，谢谢大家",
    "第3幕的道具又坏了，真糟糕",
]
# Function words, fillers and generic words as a reader would list them (not the
# product's list): none of them is ever what a feeling is about.
NOT_TOPICS = set(
    "again still new much so really very just also even ever always never more most lot "
    "lots thing things time times day way kind sort sure great good nice thanks thank "
    "yeah ok okay hmm ugh lol tbh wait sorry already twice 2nd one two better best".split()
)


def test_a_week_of_chat_feels_about_content_words_and_real_chinese_words_only() -> None:
    found: list[tuple[str, str]] = []
    for text in REHEARSALS:
        appraisal = appraise(text, 0.5, SomaticConfig())
        if appraisal is not None:
            found += zip(appraisal.topics, appraisal.labels, strict=True)
    labels = {label.casefold() for _, label in found}
    assert labels.isdisjoint(NOT_TOPICS), labels & NOT_TOPICS
    assert not any(label[:1].isdigit() for label in labels)  # no "31", no "3"
    assert {
        "rehearsal",
        "lighting",
        "desk",
        "mixer",
        "排练",
        "导演",
        "彩排",
        "灯光",
        "道具",
    } <= labels
    chinese = {label for label in labels if has_cjk(label)}
    assert chinese.isdisjoint({"天排", "今天", "昨天", "练得", "幕的"})  # no straddling bigram
    assert all(is_topic(topic) for topic, _ in found)


def test_is_topic() -> None:
    for term in ("deploy", "carolin", "排练", "数据", "\uc548\ub155"):  # Hangul: no dictionary
        assert is_topic(term), term
    for term in ("again", "still", "new", "much", "31", "2pm", "18th", "天排", "今天", "排", "wow"):
        assert not is_topic(tokens(term)[0] if term.isascii() else term), term
