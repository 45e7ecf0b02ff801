"""Appraisal (souls.mind.appraisal): the valence a text carries, its topics and weight, and
the person an event is attributed to."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

import souls.mind.appraisal
from souls.mind.appraisal import Appraisal, appraise, with_person
from souls.mind.markers import Markers
from souls.mind.somatic import SomaticConfig
from souls.text.tokenize import query_terms, tokens

CONFIG = SomaticConfig()


def test_public_surface() -> None:
    assert sorted(souls.mind.appraisal.__all__) == ["Appraisal", "appraise", "with_person"]


def feel(text: str, salience: float = 0.8) -> Appraisal | None:
    return appraise(text, salience, CONFIG)


def valence(text: str) -> str | None:
    appraisal = feel(text)
    return None if appraisal is None else appraisal.valence


def topics(text: str, config: SomaticConfig = CONFIG) -> tuple[str, ...]:
    appraisal = appraise(text, 0.5, config)
    assert appraisal is not None
    return appraisal.topics


@pytest.mark.parametrize(
    "text",
    [
        "The deploy failed again",
        "Users complained about the login page",
        "The API refused the request",
        "found two bugs in the parser",
        "staging outage this morning",
        "the export doesn't work",
        "the export doesn\u2019t work",
        "the export doesnt work",
        "ERROR: disk full",
        "数据库崩溃了",
        "部署失败",
        "这个方案不行",
    ],
)
def test_negative_valence(text: str) -> None:
    appraisal = feel(text)
    assert appraisal is not None
    assert appraisal.valence == "negative"
    assert appraisal.weight == 0.8


@pytest.mark.parametrize(
    "text",
    [
        "Thanks, the report is great",
        "thank you for the summary",
        "the migration succeeded",
        "fixed the flaky test",
        "the new cache works",
        "谢谢你的报告",
        "数据库迁移成功",
        "这个设计很好",
        "棒",
    ],
)
def test_positive_valence(text: str) -> None:
    appraisal = feel(text)
    assert appraisal is not None
    assert appraisal.valence == "positive"


@pytest.mark.parametrize(
    "text",
    [
        "",
        "let's meet at noon to plan the deploy",
        "明天开会讨论部署",
        "terror in the terrorist movie",  # "error" only as a whole word
        "the bugfix branch",  # nor "bug"
        "麻烦你看一下",
    ],
)
def test_no_valence(text: str) -> None:
    assert feel(text) is None


@pytest.mark.parametrize(
    ("text", "feeling", "about"),
    [
        ("So glad the painting worked out", "positive", ("paint",)),
        ("I'm happy with the new logo", "positive", ("logo",)),
        ("Mel was pleased with the trip", "positive", ("mel", "trip")),
        ("sad news about the move", "negative", ("news", "move")),
        ("I'm not happy with the logo", "negative", ("logo",)),
        ("unhappy with the trip, upset about the price", "negative", ("trip", "price")),
    ],
)
def test_feeling_words_are_a_valence_not_a_topic(
    text: str, feeling: str, about: tuple[str, ...]
) -> None:
    appraisal = feel(text)
    assert appraisal is not None
    assert (appraisal.valence, appraisal.topics) == (feeling, about)


def test_the_valence_with_more_hits_wins_and_a_tie_is_none() -> None:
    assert valence("great, but error after error") == "negative"
    assert valence("one error, thanks, great work") == "positive"
    assert feel("the fix works but the deploy failed") is None
    assert feel("谢谢\uff0c但是又失败了") is None


def test_the_longest_entry_wins_where_entries_overlap() -> None:
    assert valence("the export is not working") == "negative"
    assert valence("the export is working now") == "positive"
    assert valence("结果不太好") == "negative"
    assert valence("结果太好了") == "positive"


def test_topics_are_content_terms_without_the_valence_words() -> None:
    appraisal = feel("The deploy to staging failed: deployment errors again")
    assert appraisal == Appraisal(
        valence="negative",
        topics=("deploy", "stage"),
        weight=0.8,
        labels=("deploy", "staging"),
    )
    # No stopwords, no lexicon terms (even inflections not listed: "failing" stems to "fail").
    assert topics("It was failing on the runner, broken") == ("runner",)


def test_topics_are_capped_and_in_first_seen_order() -> None:
    text = "zeta alpha mu alpha zeta beta gamma crashed"
    assert topics(text) == ("zeta", "alpha", "mu")
    small = SomaticConfig(max_topics_per_event=1)
    assert topics(text, small) == ("zeta",)


def test_chinese_topics_are_words_that_do_not_straddle_the_valence_word() -> None:
    assert topics("数据库崩溃了") == ("数据",)  # 据库 is no word, 库崩 straddles 崩溃
    assert topics("deploy到prod失败") == ("deploy", "prod")


def test_a_feeling_without_topic() -> None:
    assert feel("thanks!") == Appraisal(valence="positive", topics=(), weight=0.8)
    markers = Markers()
    assert markers.add(Appraisal(valence="positive", topics=(), weight=1.0)) == []
    assert len(markers) == 0


def test_empty_lexicons_feel_nothing() -> None:
    assert (
        appraise("error thanks", 1.0, SomaticConfig(negative_words=[], positive_words=[])) is None
    )
    only_bad = SomaticConfig(positive_words=[])
    assert appraise("thanks, the deploy failed", 1.0, only_bad) == Appraisal(
        valence="negative", topics=("deploy",), weight=1.0, labels=("deploy",)
    )


def test_appraisal_is_deterministic() -> None:
    text = "部署 deploy 到 staging 失败, database timeout"
    assert feel(text) == feel(text)


def test_salience_must_be_a_finite_non_negative_number() -> None:
    for bad in (-0.1, math.nan, math.inf):
        with pytest.raises(ValueError, match="salience"):
            feel("error", bad)


def test_with_person_adds_the_person_keyed_like_any_topic_and_their_name_as_label() -> None:
    felt = feel("the deploy failed")
    assert felt is not None
    ann = with_person(felt, "Ann Lee")
    assert (ann.topics, ann.labels) == (("deploy", "ann"), ("deploy", "Ann Lee"))
    melanie = with_person(felt, "Melanie")
    assert (melanie.topics, melanie.labels) == (("deploy", "melani"), ("deploy", "Melanie"))
    assert with_person(felt, None) is felt
    bare = Appraisal(valence="negative", topics=(), weight=1.0)
    assert with_person(bare, "Ann").labels == ("Ann",)
    with pytest.raises(ValueError, match="labels"):
        Appraisal(valence="negative", topics=("a", "b"), weight=1.0, labels=("a",))


def test_a_person_the_text_names_is_one_topic_labelled_with_their_name() -> None:
    felt = feel("Melanie, the deploy failed")
    assert felt is not None
    assert (felt.topics, felt.labels) == (("melani", "deploy"), ("melanie", "deploy"))
    named = with_person(felt, "Melanie")
    assert (named.topics, named.labels) == (("melani", "deploy"), ("Melanie", "deploy"))
    unlabelled = Appraisal(valence="negative", topics=("melani",), weight=1.0)
    assert with_person(unlabelled, "Melanie") is unlabelled


def test_the_person_s_marker_touches_a_turn_that_names_them() -> None:
    markers = Markers()
    for person in ("Melanie", "Ann Lee", "王小明"):
        felt = feel("the vet failed us")
        assert felt is not None
        markers.add(with_person(felt, person))
    for query, label in (
        ("how is Melanie?", "Melanie"),
        ("how's Ann doing?", "Ann Lee"),
        ("and Ann Lee?", "Ann Lee"),
        ("王小明怎么样", "王小明"),
    ):
        assert [m.label for m in markers.touching(query_terms(query))] == [label], query


PIECES = [
    *"ab' \n!?xyz数据库崩溃了",
    "Caroline ",
    "API",
    ". ",
    "I'll ",
    "wow ",
    "failed ",
    "doesn't work ",
    "thanks ",
    "not working ",
    "错误",
]


@given(st.lists(st.sampled_from(PIECES), max_size=20).map("".join))
def test_appraise_with_the_soul_s_tokens_agrees_with_appraise_alone(text: str) -> None:
    config = SomaticConfig()
    assert appraise(text, 0.5, config, tokens(text)) == appraise(text, 0.5, config)


@given(st.lists(st.sampled_from(PIECES), max_size=20).map("".join))
def test_a_label_reads_back_as_its_topic(text: str) -> None:
    appraisal = appraise(text, 0.5, SomaticConfig())
    if appraisal is not None:
        for topic, label in zip(appraisal.topics, appraisal.labels, strict=True):
            assert label == topic or tokens(label) == [topic]
