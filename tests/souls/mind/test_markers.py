"""Somatic markers in memory (souls.mind.markers): accumulation, labels, decay, touching,
totals, and the GUT FEELINGS text."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

import souls.mind.markers
from souls.mind.appraisal import Appraisal, appraise
from souls.mind.lexicon import Valence
from souls.mind.markers import Marker, Markers, gut_feelings
from souls.mind.somatic import SomaticConfig
from souls.text.tokenize import query_terms

CONFIG = SomaticConfig()


def test_public_surface() -> None:
    assert sorted(souls.mind.markers.__all__) == ["Marker", "Markers", "gut_feelings"]


def feel(text: str, salience: float = 0.8) -> Appraisal | None:
    return appraise(text, salience, CONFIG)


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
    assert [m.topic for m in markers.touching(query_terms("数据库怎么备份"))] == ["数据"]


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
    old = [
        Marker("wow", "positive", 9.0),
        Marker("im", "positive", 8.0),
        Marker("again", "negative", 7.0),  # stop words and numbers too
        Marker("still", "negative", 6.5),
        Marker("31", "negative", 6.0),
    ]
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
