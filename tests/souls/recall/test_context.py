"""Context assembly: fixed section order, hard budgets, truncation marker, stable hash."""

from __future__ import annotations

import hashlib

from hypothesis import given, settings
from hypothesis import strategies as st

from souls.recall.context import BEFORE_RECALL, STABLE, ContextConfig, assemble
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
    result = assemble(DEFAULT, identity="  \n", summary="", recalled=[item(5, "x")])
    assert [s.name for s in result.sections] == ["recalled"]
    empty = assemble(DEFAULT, identity="", summary="", recalled=[])
    assert (empty.text, empty.sections) == ("", [])
    assert empty.hash == hashlib.sha256(b"").hexdigest()[:16]


def test_recalled_section_lists_memory_ids() -> None:
    result = assemble(
        DEFAULT,
        identity="",
        summary="",
        recalled=[item(12, "first\nline   two"), item(4, "second"), item(40, "third")],
    )
    (section,) = result.sections
    assert section.memory_ids == [12, 4, 40]
    # Whitespace inside a memory is collapsed so each memory is one line.
    assert "- [m12] first line two\n- [m4] second\n- [m40] third\n" in section.text


def test_recalled_items_that_do_not_fit_are_left_out_and_counted_as_truncated() -> None:
    config = ContextConfig(recalled_chars=70)
    items = [item(i, f"memory number {i}") for i in range(1, 6)]
    (section,) = assemble(config, identity="", summary="", recalled=items).sections
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
    parts=st.fixed_dictionaries({name: texts for name in SECTIONS if name != "recalled"}),
    recalled=mixed_items,
    paused=st.sampled_from(["", "(recalled items paused: the session budget is spent)"]),
    limits=st.fixed_dictionaries({name: budgets for name in SECTIONS}),
    total_chars=st.integers(min_value=0, max_value=6000),
)
def test_every_budget_holds_in_thousands_of_random_assemblies(
    parts: dict[str, str],
    recalled: list[RecallItem],
    paused: str,
    limits: dict[str, int],
    total_chars: int,
) -> None:
    keys = {
        "identity": "identity_chars",
        "summary": "summary_chars",
        "weekly": "weekly_chars",
        "gut_feelings": "gut_chars",
        "known_gaps": "gaps_chars",
        "due_tasks": "tasks_chars",
        "internal_signal": "signal_chars",
        "recalled": "recalled_chars",
        "spark": "spark_chars",
    }
    config = ContextConfig(
        total_chars=total_chars, **{keys[name]: limit for name, limit in limits.items()}
    )
    result = assemble(config, recalled=recalled, paused=paused, **parts)
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
