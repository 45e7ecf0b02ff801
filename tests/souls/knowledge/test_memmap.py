from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

import souls.knowledge.memmap
from souls.knowledge.goals import Goal
from souls.knowledge.memmap import (
    ArchiveLine,
    EvidenceDay,
    GoalLine,
    Situation,
    render,
    topics,
)

SITUATIONS = [
    Situation("deploy pipeline", (77, 40, 12)),
    Situation("billing  migration\nrollback", (130, 129)),
]
GOALS = [
    GoalLine(id=1, state="achieved", priority=5, statement="Ship v1"),
    GoalLine(
        id=3,
        state="active",
        priority=2,
        statement="Save for a house deposit",
        domain="money",
        triggers=("rent goes up", "bank statement"),
    ),
    GoalLine(id=2, state="paused", priority=5, statement="Learn piano"),
    GoalLine(id=4, state="active", priority=5, statement="Run a marathon", domain="health"),
]
ARCHIVE = [
    ArchiveLine(2, "summary", "Week of deploy fixes"),
    ArchiveLine(5, "fact", "pet_name=Mochi"),
    ArchiveLine(1, "rule", "Run migrations in a transaction"),
]
EVIDENCE = [EvidenceDay("2026-11-28", 14, 101, 114), EvidenceDay("2026-11-29", 1, 115, 115)]

FULL = """\
SITUATIONS
- deploy pipeline: m77 m40 m12
- billing migration rollback: m130 m129
GOALS
- g4 active p5 health: Run a marathon
- g3 active p2 money: Save for a house deposit (when: rent goes up; bank statement)
- g2 paused p5 Learn piano
- g1 achieved p5 Ship v1
ARCHIVE
- c5 pet_name=Mochi
- r1 Run migrations in a transaction
- s2 Week of deploy fixes
EVIDENCE
- 2026-11-29: 1 event (e115)
- 2026-11-28: 14 events (e101-e114)"""


def test_public_surface() -> None:
    assert sorted(souls.knowledge.memmap.__all__) == [
        "ArchiveKind",
        "ArchiveLine",
        "EvidenceDay",
        "GoalLine",
        "Situation",
        "render",
        "topics",
    ]


def test_full_map() -> None:
    # Goals: active, paused, closed, then priority; archive: facts, rules, summaries;
    # days newest first; whitespace inside a text collapsed.
    assert render(SITUATIONS, GOALS, ARCHIVE, EVIDENCE) == FULL
    assert render(SITUATIONS, GOALS, ARCHIVE, EVIDENCE, budget=len(FULL)) == FULL


def test_empty_axes_are_left_out() -> None:
    assert render([], [], [], []) == ""
    assert render([], [], [], EVIDENCE[:1]) == "EVIDENCE\n- 2026-11-28: 14 events (e101-e114)"


def test_goal_line_of_a_goal() -> None:
    goal = Goal(
        id=3,
        speaker="user",
        statement="Save for a house deposit",
        domain="money",
        priority=2,
        triggers=("rent goes up",),
        state="paused",
        created=0.0,
        updated=0.0,
    )
    assert GoalLine.of(goal) == GoalLine(
        id=3,
        state="paused",
        priority=2,
        statement="Save for a house deposit",
        domain="money",
        triggers=("rent goes up",),
    )


def test_lines_are_shortened_before_any_is_dropped() -> None:
    archive = [ArchiveLine(i, "fact", f"note_{i}=" + "x" * 200) for i in (1, 2, 3)]
    text = render([], [], archive, [], budget=400)
    assert text.splitlines() == [
        "ARCHIVE",
        "- c1 note_1=" + "x" * 92 + "…",  # 100 characters of text
        "- c2 note_2=" + "x" * 92 + "…",
        "- c3 note_3=" + "x" * 92 + "…",
    ]


def test_memory_ids_are_thinned_whole() -> None:
    many = Situation("billing", tuple(range(130, 100, -1)))
    assert render([many], [], [], [], budget=120) == (
        "SITUATIONS\n- billing: m130 m129 m128 m127 m126 m125 m124 m123 m122 m121 +20"
    )


def test_lines_are_dropped_from_the_end_and_counted() -> None:
    archive = [ArchiveLine(i, "fact", f"k{i}=v") for i in range(1, 51)]
    text = render([], [], archive, [], budget=100)
    assert text == (
        "ARCHIVE\n- c1 k1=v\n- c2 k2=v\n- c3 k3=v\n- c4 k4=v\n- c5 k5=v\n- c6 k6=v\n"
        "- c7 k7=v\n- c8 k8=v\n(+42 more)"
    )
    assert len(text) == 98  # one more line (10) would not fit


def test_a_small_axis_keeps_its_lines_beside_a_large_one() -> None:
    archive = [ArchiveLine(i, "fact", f"slot_{i}=some longer value here") for i in range(1, 200)]
    text = render([], [], archive, EVIDENCE, budget=600)
    # EVIDENCE needs 73 characters and gets them; ARCHIVE takes the rest, its lines
    # cut to 24 characters of text, since it has to drop lines anyway.
    expected = [
        "ARCHIVE",
        *(f"- c{i} slot_{i}=some longer valu…" for i in range(1, 10)),
        *(f"- c{i} slot_{i}=some longer val…" for i in range(10, 17)),
        "(+183 more)",
        "EVIDENCE",
        "- 2026-11-29: 1 event (e115)",
        "- 2026-11-28: 14 events (e101-e114)",
    ]
    assert text == "\n".join(expected)
    assert len(text) == 580  # another archive line (31) would not fit in 600


def test_tight_budgets_leave_out_the_last_axes() -> None:
    assert render(SITUATIONS, GOALS, ARCHIVE, EVIDENCE, budget=60) == (
        "SITUATIONS\n(+2 more)\nGOALS\n(+4 more)"
    )
    assert render(SITUATIONS, GOALS, ARCHIVE, EVIDENCE, budget=20) == "SITUATIONS\n(+2 more)"
    assert render(SITUATIONS, GOALS, ARCHIVE, EVIDENCE, budget=19) == ""
    assert render(SITUATIONS, GOALS, ARCHIVE, EVIDENCE, budget=0) == ""


def test_negative_budget() -> None:
    with pytest.raises(ValueError, match="budget must be >= 0"):
        render([], [], [], [], budget=-1)


# --- any input --------------------------------------------------------------------------

HEADERS = ("SITUATIONS", "GOALS", "ARCHIVE", "EVIDENCE")
# No digits, so every "<letter><digits>" in a map is an id (or a priority, p<n>).
words = st.text(st.sampled_from("abcemgrsxyz _=;:\n\t数据库迁移…"), max_size=140)
ids = st.integers(0, 10**7)
situations = st.lists(
    st.builds(Situation, words, st.lists(ids, max_size=40).map(tuple)), max_size=12
)
goal_lines = st.lists(
    st.builds(
        GoalLine,
        id=ids,
        state=st.sampled_from(["active", "paused", "achieved", "abandoned"]),
        priority=st.integers(1, 5),
        statement=words,
        domain=st.sampled_from(["", "money", "health"]),
        triggers=st.lists(words, max_size=2).map(tuple),
    ),
    max_size=12,
)
archive_lines = st.lists(
    st.builds(ArchiveLine, ids, st.sampled_from(["fact", "rule", "summary"]), words), max_size=30
)
days = st.lists(
    st.builds(EvidenceDay, st.dates().map(str), st.integers(1, 10**5), ids, ids), max_size=12
)
ID = re.compile(r"(?<![A-Za-z0-9])([mgcrse])(\d+)(?![0-9])")


@given(situations, goal_lines, archive_lines, days, st.integers(0, 3000))
def test_any_map_fits_its_budget_with_whole_ids(
    situations: list[Situation],
    goals: list[GoalLine],
    archive: list[ArchiveLine],
    evidence: list[EvidenceDay],
    budget: int,
) -> None:
    text = render(situations, goals, archive, evidence, budget=budget)
    assert len(text) <= budget
    prefix = {"fact": "c", "rule": "r", "summary": "s"}
    known = {("m", i) for s in situations for i in s.memory_ids}
    known |= {("g", g.id) for g in goals}
    known |= {(prefix[a.kind], a.id) for a in archive}
    known |= {("e", i) for d in evidence for i in (d.first_id, d.last_id)}
    for letter, number in ID.findall(text):
        assert (letter, int(number)) in known
    # Each axis shown accounts for every entry: lines shown plus "(+n more)".
    entries = dict(zip(HEADERS, (situations, goals, archive, evidence), strict=True))
    axis, counted = "", {}
    for line in text.splitlines():
        if line in HEADERS:
            axis = line
            counted[axis] = 0
        elif line.startswith("(+"):
            counted[axis] += int(line[2 : -len(" more)")])
        else:
            assert line == "-" or line.startswith("- ")
            counted[axis] += 1
    assert all(counted[axis] == len(entries[axis]) for axis in counted)
    assert list(counted) == [h for h in HEADERS if h in counted]


# --- topics ----------------------------------------------------------------------------


def test_topics_group_memories_by_shared_terms() -> None:
    texts = [
        (12, "The deploy pipeline failed on prod"),
        (40, "Fixed the deploy pipeline timeout"),
        (77, "Deploy pipeline green again; prod happy"),
        (80, "Mochi the cat ate breakfast"),
    ]
    assert topics(texts, 4) == [
        Situation("deploy pipeline", (77, 40, 12)),
        Situation("prod", (77, 12)),
        Situation("mochi cat ate", (80,)),
        Situation("green happy", (77,)),  # "again" is no content word
    ]
    assert topics(texts, 1) == [Situation("deploy pipeline", (77, 40, 12))]
    assert topics(texts, 0) == []


def test_topic_labels_use_the_most_frequent_spelling() -> None:
    texts = [(1, "deploying again"), (2, "Deploys, deploying"), (3, "deployed")]
    # "again" is no topic: a function word, as fillers, light verbs and numbers are.
    assert topics(texts, 2) == [Situation("deploying", (3, 2, 1))]


def test_cjk_topics_join_their_bigrams() -> None:
    texts = [(81, "数据库迁移失败"), (82, "数据库迁移成功")]
    assert topics(texts, 3) == [
        Situation("数据迁移", (82, 81)),  # real words only: no 据库, 库迁, 移成
        Situation("成功", (82,)),
        Situation("失败", (81,)),
    ]


def test_stopwords_numbers_and_single_characters_make_no_topic() -> None:
    assert topics([(1, "it is what it is, 2026 x"), (2, "")], 5) == []


def test_topics_rejects_a_negative_limit() -> None:
    with pytest.raises(ValueError, match="limit must be >= 0"):
        topics([], -1)
