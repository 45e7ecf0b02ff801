from __future__ import annotations

import math

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

from souls.somatic import (
    Appraisal,
    Marker,
    Markers,
    SomaticConfig,
    Valence,
    appraise,
    gut_feelings,
    is_filler,
    topic_terms,
    with_person,
)
from souls.tokenize import query_terms, tokens

CONFIG = SomaticConfig()


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
        topics=("deploy", "stage", "again"),
        weight=0.8,
        labels=("deploy", "staging", "again"),
    )
    # No stopwords, no lexicon terms (even inflections not listed: "failing" stems to "fail").
    assert topics("It was failing on the runner, broken") == ("runner",)


def test_topics_are_capped_and_in_first_seen_order() -> None:
    text = "zeta alpha mu alpha zeta beta gamma crashed"
    assert topics(text) == ("zeta", "alpha", "mu")
    small = SomaticConfig(max_topics_per_event=1)
    assert topics(text, small) == ("zeta",)


def test_chinese_topics_are_bigrams_that_do_not_straddle_the_valence_word() -> None:
    assert topics("数据库崩溃了") == ("数据", "据库")
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
        valence="negative", topics=("thank", "deploy"), weight=1.0, labels=("thanks", "deploy")
    )


def test_appraisal_is_deterministic() -> None:
    text = "部署 deploy 到 staging 失败, database timeout"
    assert feel(text) == feel(text)


def test_salience_must_be_a_finite_non_negative_number() -> None:
    for bad in (-0.1, math.nan, math.inf):
        with pytest.raises(ValueError, match="salience"):
            feel("error", bad)


def test_topic_terms_leave_out_single_cjk_characters() -> None:
    assert topic_terms("数据库 deploys") == ["数据", "据库", "deploy"]
    assert topic_terms("猫") == []


def labels(text: str) -> dict[str, str]:
    appraisal = appraise(text, 0.5, SomaticConfig(max_topics_per_event=9))
    assert appraisal is not None
    return dict(zip(appraisal.topics, appraisal.labels, strict=True))


def test_labels_are_the_words_as_written() -> None:
    assert labels("Thanks Caroline, the deployments went great") == {
        "carolin": "Caroline",  # a name: a capital mid-sentence
        "deploy": "deployments",
        "went": "went",
    }
    assert labels("The API and iOS builds failed") == {"api": "API", "io": "iOS", "build": "builds"}
    assert labels("I loved Caroline's talk") == {"carolin": "Caroline", "talk": "talk"}
    assert labels("O\u2019Brien's build failed") == {"obrien": "O'Brien", "build": "build"}


def test_a_capital_opening_a_sentence_is_lowered_until_the_word_shows_as_a_name() -> None:
    assert labels("Painting failed. Melanie, again") == {
        "paint": "painting",
        "melani": "melanie",
        "again": "again",
    }
    # The same word later with a capital mid-sentence takes over; another word does not.
    assert labels("Melanie, great talk! Thanks Melanie") == {"melani": "Melanie", "talk": "talk"}
    assert labels("deploys are great, the Deploy button too")["deploy"] == "deploys"
    # Quotes, brackets and emoji before a word do not hide where a sentence starts.
    assert labels('Great! \U0001f60a "Painting" with Mel')["paint"] == "painting"
    assert labels("great \U0001f60a Painting with Mel")["paint"] == "Painting"
    assert labels("Great.\n  (Painting) with Mel")["paint"] == "painting"


def test_cjk_topics_are_their_own_labels() -> None:
    assert labels("数据库崩溃了") == {"数据": "数据", "据库": "据库"}
    assert labels(
        "\uff24\uff45\uff50\uff4c\uff4f\uff59到prod失败"
    )  # NFKC: "Deploy" == {"deploy": "deploy", "prod": "prod"}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Wow, thanks!", ()),
        ("Haha yeah, that's awesome", ()),
        ("Awww, thats so sweet, thanks", ("sweet",)),
        ("I'm so happy, great", ("happi",)),
        ("Omg lol hey, the deploy failed", ("deploy",)),
        ("ok cool, okay, great job, hmmm yesss", ()),
        ("hahaha lolol I've got it, I dont know, great", ("got", "know")),
        ("I'll be there, you're great", ()),  # "ill" is a contraction here...
        ("I feel ill, terrible", ("feel", "ill")),  # ...and a word here
        ("We'd better go, great", ("better", "go")),
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


def test_with_person_adds_the_person_and_their_name_as_label() -> None:
    felt = feel("the deploy failed")
    assert felt is not None
    ann = with_person(felt, "Ann Lee")
    assert (ann.topics, ann.labels) == (("deploy", "ann lee"), ("deploy", "Ann Lee"))
    assert with_person(felt, None) is felt
    bare = Appraisal(valence="negative", topics=(), weight=1.0)
    assert with_person(bare, "Ann").labels == ("Ann",)
    with pytest.raises(ValueError, match="labels"):
        Appraisal(valence="negative", topics=("a", "b"), weight=1.0, labels=("a",))


@pytest.mark.parametrize(
    "kwargs",
    [
        {"negative_words": ["error", " "]},
        {"negative_words": ["meh"], "positive_words": ["MEH"]},
        {"max_topics_per_event": 0},
        {"nightly_decay": 0.0},
        {"nightly_decay": 1.5},
        {"prune_below": -1.0},
        {"inject_limit": -1},
    ],
)
def test_config_validation(kwargs: dict[str, object]) -> None:
    with pytest.raises(ValueError):  # noqa: PT011
        SomaticConfig(**kwargs)  # type: ignore[arg-type]


def test_config_decodes_from_toml_shaped_data_and_rejects_unknown_keys() -> None:
    config = msgspec.convert({"positive_words": ["yay"], "inject_limit": 2}, SomaticConfig)
    assert appraise("yay, the build", 0.5, config) == Appraisal(
        valence="positive", topics=("build",), weight=0.5, labels=("build",)
    )
    with pytest.raises(msgspec.ValidationError):
        msgspec.convert({"inject_limt": 2}, SomaticConfig)


def appraisal(feeling: Valence, *about: str, weight: float = 1.0) -> Appraisal:
    return Appraisal(valence=feeling, topics=about, weight=weight)


def test_add_accumulates_per_topic_and_valence() -> None:
    markers = Markers()
    assert markers.add(appraisal("negative", "deploy", "prod", weight=0.5)) == [
        Marker("deploy", "negative", 0.5),
        Marker("prod", "negative", 0.5),
    ]
    assert markers.add(appraisal("negative", "deploy", weight=0.75)) == [
        Marker("deploy", "negative", 1.25)
    ]
    markers.add(appraisal("positive", "deploy", weight=0.25))
    assert markers.rows() == [
        ("deploy", "negative", 1.25),
        ("deploy", "positive", 0.25),
        ("prod", "negative", 0.5),
    ]
    assert markers.totals() == (0.25, 1.75)


def test_a_topic_repeated_in_one_appraisal_counts_once() -> None:
    markers = Markers()
    markers.add(appraisal("negative", "deploy", "deploy"))
    assert markers.rows() == [("deploy", "negative", 1.0)]


def test_a_topic_has_one_label_taken_from_the_first_event_that_fed_it() -> None:
    markers = Markers()
    first = Appraisal(valence="positive", topics=("melani",), weight=1.0, labels=("melanie",))
    assert markers.add(first) == [Marker("melani", "positive", 1.0, "melanie")]
    # The same word with a capital takes over (a name first met opening a sentence)...
    named = Appraisal(valence="negative", topics=("melani",), weight=1.0, labels=("Melanie",))
    assert markers.add(named) == [Marker("melani", "negative", 1.0, "Melanie")]
    # ...and holds: neither another spelling nor a lowercase one replaces it.
    for other in ("melanies", "melanie", "MELANIE"):
        markers.add(Appraisal(valence="positive", topics=("melani",), weight=1.0, labels=(other,)))
    assert [m.label for m in markers.items()] == ["Melanie", "Melanie"]
    assert markers.label("melani") == "Melanie"
    # An appraisal without labels leaves the label alone.
    assert markers.add(appraisal("positive", "melani", "new")) == [
        Marker("melani", "positive", 5.0, "Melanie"),
        Marker("new", "positive", 1.0, None),
    ]


def test_labels_round_trip_and_go_with_the_last_marker_of_their_topic() -> None:
    rows = [("deploy", "negative", 2.0), ("deploy", "positive", 0.05), ("db", "negative", 0.05)]
    stored = {"deploy": "deploys", "db": "DB", "gone": "orphan"}
    markers = Markers.from_rows(rows, stored)
    assert [(m.topic, m.label) for m in markers.items()] == [
        ("deploy", "deploys"),
        ("db", "DB"),
        ("deploy", "deploys"),
    ]
    assert markers.label("gone") is None  # a label without a marker is dropped
    assert markers.decay(CONFIG) == 2
    assert (markers.label("deploy"), markers.label("db")) == ("deploys", None)
    assert Markers.from_rows(rows).label("deploy") is None  # rows stored before labels


def test_decay_multiplies_and_prunes() -> None:
    markers = Markers.from_rows(
        [("deploy", "negative", 2.0), ("prod", "positive", 0.055), ("db", "negative", 0.05)]
    )
    assert markers.decay(CONFIG) == 2  # 0.0495 and 0.045 fall below 0.05
    [(topic, feeling, weight)] = markers.rows()
    assert (topic, feeling) == ("deploy", "negative")
    assert weight == pytest.approx(1.8)
    assert markers.decay(CONFIG, nights=3) == 0
    assert markers.rows()[0][2] == pytest.approx(1.8 * 0.9**3)
    assert markers.decay(CONFIG, nights=0) == 0
    assert markers.decay(SomaticConfig(nightly_decay=0.01)) == 1
    assert len(markers) == 0
    with pytest.raises(ValueError, match="nights"):
        markers.decay(CONFIG, nights=-1)


def test_touching_is_strongest_first_with_a_deterministic_tie_break() -> None:
    markers = Markers.from_rows(
        [
            ("prod", "negative", 1.0),
            ("deploy", "positive", 1.0),
            ("deploy", "negative", 3.0),
            ("db", "negative", 1.0),
            ("cat", "positive", 9.0),
        ]
    )
    assert markers.touching(["deploy", "prod", "db", "nothing"]) == [
        Marker("deploy", "negative", 3.0),
        Marker("db", "negative", 1.0),
        Marker("deploy", "positive", 1.0),
        Marker("prod", "negative", 1.0),
    ]
    assert markers.touching([]) == []
    assert markers.items()[0] == Marker("cat", "positive", 9.0)
    assert len(markers.items()) == 5


def test_markers_touch_the_turns_recall_terms() -> None:
    markers = Markers()
    for text in ("the deployment failed on staging", "数据库崩溃了"):
        felt = feel(text)
        assert felt is not None
        markers.add(felt)
    assert [m.topic for m in markers.touching(query_terms("how do deploys work?"))] == ["deploy"]
    assert [m.topic for m in markers.touching(query_terms("数据库怎么备份"))] == ["据库", "数据"]


def test_rows_round_trip() -> None:
    rows = [("b", "positive", 0.5), ("a", "negative", 1.5), ("a", "positive", 0.25)]
    markers = Markers.from_rows(rows)
    assert markers.rows() == sorted(rows)
    assert Markers.from_rows(markers.rows()).rows() == markers.rows()


def test_from_rows_adds_duplicates_and_validates() -> None:
    assert Markers.from_rows([("a", "negative", 1.0), ("a", "negative", 0.5)]).rows() == [
        ("a", "negative", 1.5)
    ]
    with pytest.raises(ValueError, match="valence"):
        Markers.from_rows([("a", "neutral", 1.0)])
    with pytest.raises(ValueError, match="weight"):
        Markers.from_rows([("a", "negative", -1.0)])
    with pytest.raises(ValueError, match="weight"):
        Markers.from_rows([("a", "negative", math.nan)])


def test_totals_do_not_depend_on_order() -> None:
    rows = [(f"t{i}", "positive", 0.1 * i) for i in range(50)] + [("x", "negative", 1e-3)]
    forward, backward = Markers.from_rows(rows), Markers.from_rows(reversed(rows))
    assert forward.totals() == backward.totals()
    assert Markers().totals() == (0.0, 0.0)


def test_gut_feelings_text() -> None:
    markers = [
        Marker("数据库", "positive", 1.1),
        Marker("deploy", "negative", 3.21),
        Marker("faint", "negative", 0.49),
    ]
    assert gut_feelings(markers, CONFIG) == (
        "Felt from past experience, not rules; let these weigh on your judgement:\n"
        "- deploy: uneasy (negative, 3.2)\n"
        "- 数据库: good (positive, 1.1)"
    )


def test_gut_feelings_threshold_and_limit() -> None:
    assert gut_feelings([], CONFIG) == ""
    assert gut_feelings([Marker("faint", "negative", 0.49)], CONFIG) == ""
    assert gut_feelings([Marker("edge", "negative", 0.5)], CONFIG).endswith(
        "- edge: uneasy (negative, 0.5)"
    )
    many = [Marker(f"t{i}", "positive", float(i)) for i in range(1, 10)]
    lines = gut_feelings(many, CONFIG).splitlines()[1:]
    assert lines == [f"- t{i}: good (positive, {i}.0)" for i in range(9, 4, -1)]
    assert gut_feelings(many, SomaticConfig(inject_limit=0)) == ""


def test_gut_feelings_show_labels_and_fall_back_to_the_topic() -> None:
    markers = Markers()
    for text in ("Thanks Caroline, the deployments went great", "Caroline, the deploy failed"):
        felt = feel(text, 1.0)
        assert felt is not None
        markers.add(felt)
    shown = gut_feelings(markers.touching(query_terms("how is caroline's deploy?")), CONFIG)
    assert shown.splitlines()[1:] == [
        "- Caroline: uneasy (negative, 1.0)",
        "- Caroline: good (positive, 1.0)",
        "- deployments: uneasy (negative, 1.0)",
        "- deployments: good (positive, 1.0)",
    ]
    old = [Marker("carolin", "positive", 2.0), Marker("x", "negative", 1.0, "line\nbreak")]
    assert gut_feelings(old, CONFIG).splitlines()[1:] == [
        "- carolin: good (positive, 2.0)",
        "- line break: uneasy (negative, 1.0)",
    ]


def test_filler_markers_stored_before_they_were_kept_out_are_not_shown() -> None:
    old = [Marker("wow", "positive", 9.0), Marker("im", "positive", 8.0)]
    assert gut_feelings([*old, Marker("melani", "positive", 1.0, "Melanie")], CONFIG) == (
        "Felt from past experience, not rules; let these weigh on your judgement:\n"
        "- Melanie: good (positive, 1.0)"
    )
    assert gut_feelings(old, CONFIG) == ""


@given(
    st.lists(
        st.tuples(
            st.sampled_from(["a", "b", "c", "d"]),
            st.sampled_from(["positive", "negative"]),
            st.floats(0, 10),
        )
    ),
    st.integers(0, 30),
)
def test_decay_never_leaves_a_marker_below_the_pruning_line(
    rows: list[tuple[str, str, float]], nights: int
) -> None:
    markers = Markers.from_rows(rows)
    before = len(markers)
    pruned = markers.decay(CONFIG, nights=nights)
    assert pruned + len(markers) == before
    assert all(w >= CONFIG.prune_below for _, _, w in markers.rows())
    positive, negative = markers.totals()
    assert positive >= 0
    assert negative >= 0


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
