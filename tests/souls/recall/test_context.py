"""Context assembly: fixed section order, hard budgets, truncation marker, stable hash."""

from __future__ import annotations

import hashlib

from hypothesis import given, settings
from hypothesis import strategies as st

from souls.recall.context import (
    BEFORE_RECALL,
    BUILTIN_IDENTITY,
    STABLE,
    ContextConfig,
    assemble,
    room,
)
from souls.results import RecallItem

CUT = "[…cut to fit the budget]"
DEFAULT = ContextConfig()


def item(memory_id: int, text: str, score: float = 1.0) -> RecallItem:
    return RecallItem(id=memory_id, kind="observation", text=text, score=score, via="bm25", refs=[])


def test_sections_come_in_fixed_order() -> None:
    result = assemble(
        DEFAULT,
        identity="I am Ada's helper.",
        summary="Ada ships on Fridays.",
        recalled=[item(3, "deploy failed"), item(1, "lunch at noon")],
    )
    assert [s.name for s in result.sections] == ["identity", "summary", "recalled"]
    assert result.text == (
        "## IDENTITY\nI am Ada's helper.\n\n"
        "## MEMORY\nAda ships on Fridays.\n\n"
        "## RECALLED MEMORIES\n- [m3] deploy failed\n- [m1] lunch at noon\n\n"
    )
    assert result.text == "".join(s.text for s in result.sections)
    assert all(s.chars == len(s.text) for s in result.sections)
    assert not any(s.truncated for s in result.sections)


def test_empty_parts_are_left_out() -> None:
    result = assemble(DEFAULT, identity="I am Ada's helper.", summary="", recalled=[item(5, "x")])
    assert [s.name for s in result.sections] == ["identity", "recalled"]
    empty = assemble(DEFAULT, identity="I am Ada's helper.", summary="", recalled=[])
    assert [s.name for s in empty.sections] == ["identity"]
    nothing = assemble(ContextConfig(identity_chars=0), identity="", summary="", recalled=[])
    assert (nothing.text, nothing.sections) == ("", [])
    assert nothing.hash == hashlib.sha256(b"").hexdigest()[:16]


def test_without_a_soul_md_the_identity_is_the_builtin_one_byte_for_byte() -> None:
    a = assemble(DEFAULT, identity="", summary="", recalled=[item(5, "x")])
    b = assemble(DEFAULT, identity="  \n", summary="Ada ships on Fridays.", recalled=[])
    for result in (a, b):
        assert result.sections[0].text == f"## IDENTITY\n{BUILTIN_IDENTITY}\n\n"
    assert a.prefix_hash == assemble(DEFAULT, identity="", summary="", recalled=[]).prefix_hash
    # Short, and in linghun's spirit: what the memory is and how to use it.
    assert len(BUILTIN_IDENTITY) <= 1000
    for rule in ("I don't know", "rather than guess", "more recent one holds", "superseded"):
        assert rule in BUILTIN_IDENTITY
    written = assemble(DEFAULT, identity="I am Ada's helper.", summary="", recalled=[])
    assert BUILTIN_IDENTITY not in written.text


def test_goals_have_their_own_channel_apart_from_the_recalled_slots() -> None:
    goals = [
        RecallItem(3, "goal", "Melanie: run a half marathon (this year)", 0.2, "goal", []),
        RecallItem(1, "goal", "save for a house", 0.0, "goal", []),
    ]
    config = ContextConfig(recalled_chars=80)
    recalled = [item(i, f"memory number {i}") for i in range(1, 4)]
    result = assemble(config, identity="x", summary="", recalled=recalled, goals=goals)
    assert [s.name for s in result.sections] == ["identity", "goals", "recalled"]
    channel, shown = result.sections[1], result.sections[2]
    assert channel.text == (
        "## GOALS AND VALUES\n- [g3] Melanie: run a half marathon (this year)\n"
        "- [g1] save for a house\n\n"
    )
    assert channel.items == ["g3", "g1"]
    assert channel.memory_ids == []
    assert shown.items == ["m1", "m2"]  # the goals took no recalled slot
    small = assemble(
        ContextConfig(goals_chars=80), identity="x", summary="", recalled=[], goals=goals
    )
    assert small.sections[1].items == ["g3"]
    assert small.sections[1].truncated


def test_the_memory_map_is_injected_only_when_asked_within_its_budget() -> None:
    drawn = "SITUATIONS\n- marathon training: m4 m2\nGOALS\n- g3 active p2 run a half marathon"
    off = assemble(DEFAULT, identity="x", summary="", recalled=[], memory_map=drawn)
    assert "MEMORY MAP" not in off.text
    on = assemble(ContextConfig(map=True), identity="x", summary="", recalled=[], memory_map=drawn)
    assert on.sections[1].text == f"## MEMORY MAP\n{drawn}\n\n"
    tight = ContextConfig(map=True, map_chars=60)
    cut = assemble(tight, identity="x", summary="", recalled=[], memory_map=drawn)
    assert cut.sections[1].chars <= 60
    assert cut.sections[1].truncated
    assert room("memory_map", 60) == 60 - len("## MEMORY MAP\n") - 2


def test_recalled_section_lists_memory_ids() -> None:
    result = assemble(
        DEFAULT,
        identity="",
        summary="",
        recalled=[item(12, "first\nline   two"), item(4, "second"), item(40, "third")],
    )
    (section,) = result.sections[1:]
    assert section.memory_ids == [12, 4, 40]
    # Whitespace inside a memory is collapsed so each memory is one line.
    assert "- [m12] first line two\n- [m4] second\n- [m40] third\n" in section.text


def test_recalled_items_that_do_not_fit_are_left_out_and_counted_as_truncated() -> None:
    config = ContextConfig(recalled_chars=70)
    items = [item(i, f"memory number {i}") for i in range(1, 6)]
    (section,) = assemble(config, identity="", summary="", recalled=items).sections[1:]
    assert section.truncated
    assert section.chars <= 70
    assert section.memory_ids == [1, 2]
    assert "[m3]" not in section.text


def test_an_over_budget_section_is_cut_at_a_line_and_says_so() -> None:
    lines = [f"line {i:02d} of the identity" for i in range(40)]
    config = ContextConfig(identity_chars=200)
    (section,) = assemble(config, identity="\n".join(lines), summary="", recalled=[]).sections
    assert section.truncated
    assert section.chars <= 200
    assert section.text.endswith(f"\n{CUT}\n\n")
    body = section.text.removeprefix("## IDENTITY\n").removesuffix(f"\n{CUT}\n\n")
    assert body.split("\n") == lines[: len(body.split("\n"))]  # whole lines only


def test_the_total_budget_makes_later_sections_give_way() -> None:
    config = ContextConfig(
        identity_chars=100, summary_chars=100, recalled_chars=100, total_chars=150
    )
    result = assemble(config, identity="i" * 80, summary="s" * 80, recalled=[item(1, "r" * 20)])
    assert len(result.text) <= 150
    identity, summary = result.sections  # nothing left for the recalled memories
    assert (identity.name, identity.truncated) == ("identity", False)
    assert (summary.name, summary.truncated) == ("summary", True)
    assert summary.text.endswith(f"{CUT}\n\n")


def test_same_input_same_bytes_same_hash() -> None:
    args = {
        "identity": "I am Ada's helper.",
        "summary": "Ada ships on Fridays.",
        "recalled": [item(3, "deploy failed", 2.5)],
    }
    first = assemble(DEFAULT, **args)  # type: ignore[arg-type]
    second = assemble(DEFAULT, **args)  # type: ignore[arg-type]
    assert first == second
    assert first.hash == hashlib.sha256(first.text.encode()).hexdigest()[:16]
    other = assemble(DEFAULT, identity="I am Ada's helper.", summary="Ada ships.", recalled=[])
    assert other.hash != first.hash


def test_scores_do_not_change_the_bytes() -> None:
    # The prefix cache only cares about the text; a re-scored memory is the same line.
    one = assemble(DEFAULT, identity="x", summary="", recalled=[item(1, "m", 1.0)])
    two = assemble(DEFAULT, identity="x", summary="", recalled=[item(1, "m", 9.0)])
    assert one.hash == two.hash


texts = st.text(alphabet=st.sampled_from("ab \n\t\u03b1\u03b2数据…-"), min_size=0, max_size=600)
recalled_items = st.lists(
    st.builds(item, st.integers(1, 10_000), st.text(min_size=1, max_size=200)), max_size=30
)
budgets = st.integers(min_value=0, max_value=1500)


@settings(max_examples=300, deadline=None, database=None)
@given(
    identity=texts,
    summary=texts,
    recalled=recalled_items,
    identity_chars=budgets,
    summary_chars=budgets,
    recalled_chars=budgets,
    total_chars=st.integers(min_value=0, max_value=3000),
)
def test_budgets_are_never_exceeded(
    identity: str,
    summary: str,
    recalled: list[RecallItem],
    identity_chars: int,
    summary_chars: int,
    recalled_chars: int,
    total_chars: int,
) -> None:
    config = ContextConfig(
        identity_chars=identity_chars,
        summary_chars=summary_chars,
        recalled_chars=recalled_chars,
        total_chars=total_chars,
    )
    result = assemble(config, identity=identity, summary=summary, recalled=recalled)
    limits = {"identity": identity_chars, "summary": summary_chars, "recalled": recalled_chars}
    names = [s.name for s in result.sections]
    assert names == sorted(names, key=["identity", "summary", "recalled"].index)
    assert len(set(names)) == len(names)
    for section in result.sections:
        assert section.chars == len(section.text)
        assert section.chars <= limits[section.name]
        if section.truncated and section.name != "recalled":
            assert section.text.endswith(f"{CUT}\n\n")
    assert len(result.text) <= total_chars
    assert result.text == "".join(s.text for s in result.sections)
    recalled_sections = [s for s in result.sections if s.name == "recalled"]
    if recalled_sections:
        (section,) = recalled_sections
        assert section.memory_ids == [i.id for i in recalled[: len(section.memory_ids)]]
        for memory_id in section.memory_ids:
            assert f"[m{memory_id}]" in section.text
    assert assemble(config, identity=identity, summary=summary, recalled=recalled) == result


KINDS = ["observation", "summary", "fact", "rule", "commitment", "goal", "question", "task"]
SECTIONS = [
    "identity",
    "summary",
    "weekly",
    "goals",
    "memory_map",
    "gut_feelings",
    "known_gaps",
    "due_tasks",
    "internal_signal",
    "recalled",
    "spark",
]


def test_the_named_orders_match_the_sections() -> None:
    assert tuple(SECTIONS[: SECTIONS.index("recalled")]) == BEFORE_RECALL
    assert BEFORE_RECALL[: len(STABLE)] == STABLE


mixed_items = st.lists(
    st.builds(
        lambda i, kind, text: RecallItem(i, kind, text, 1.0, "bm25", []),
        st.integers(1, 10_000),
        st.sampled_from(KINDS),
        st.text(min_size=1, max_size=120),
    ),
    max_size=20,
)


@settings(max_examples=2000, deadline=None, database=None)
@given(
    parts=st.fixed_dictionaries(
        {name: texts for name in SECTIONS if name not in ("recalled", "goals")}
    ),
    recalled=mixed_items,
    goals=mixed_items,
    paused=st.sampled_from(["", "(recalled items paused: the session budget is spent)"]),
    limits=st.fixed_dictionaries({name: budgets for name in SECTIONS}),
    total_chars=st.integers(min_value=0, max_value=6000),
)
def test_every_budget_holds_in_thousands_of_random_assemblies(
    parts: dict[str, str],
    recalled: list[RecallItem],
    goals: list[RecallItem],
    paused: str,
    limits: dict[str, int],
    total_chars: int,
) -> None:
    keys = {
        "identity": "identity_chars",
        "summary": "summary_chars",
        "weekly": "weekly_chars",
        "goals": "goals_chars",
        "memory_map": "map_chars",
        "gut_feelings": "gut_chars",
        "known_gaps": "gaps_chars",
        "due_tasks": "tasks_chars",
        "internal_signal": "signal_chars",
        "recalled": "recalled_chars",
        "spark": "spark_chars",
    }
    config = ContextConfig(
        total_chars=total_chars, map=True, **{keys[name]: limit for name, limit in limits.items()}
    )
    result = assemble(config, recalled=recalled, goals=goals, paused=paused, **parts)
    names = [s.name for s in result.sections]
    assert names == sorted(names, key=SECTIONS.index)  # the fixed order
    for section in result.sections:
        assert section.chars == len(section.text) <= limits[section.name]
    assert len(result.text) <= total_chars
    for section in result.sections:
        if section.name == "recalled" and not paused:
            for label_ in section.items:
                assert f"[{label_}]" in section.text
        if section.name == "recalled" and paused:
            assert section.items == []
            assert "[m" not in section.text or "[m" in paused
