"""Crystallising reflects into cards on a real conversation: each card holds what its
reflect concluded and nothing an earlier card said; a line is one conclusion; open
questions ask about something; tags are topics as people wrote them."""

from __future__ import annotations

import re
from collections import Counter

import pytest
from conversation_cards import crystallised
from conversations import turns

from souls.collision.crystal import CardConfig, Counts, Draft, crystallise, summary_lines
from souls.collision.lines import key
from souls.mind.reflect import ExtractiveReflector, Observation

BUDGET = 4000  # [reflect] budget's default


@pytest.fixture
def drafts() -> list[Draft]:
    return [draft for _, draft in crystallised()]


def test_no_line_is_on_two_cards_and_cards_stay_small(drafts: list[Draft]) -> None:
    assert len(drafts) >= 6
    lines = Counter(key(line) for d in drafts for line in d.conclusions + d.questions)
    assert [line for line, n in lines.items() if n > 1] == []
    sizes = [len(d.conclusions) + len(d.questions) + len(d.tags) for d in drafts]
    assert max(sizes) <= 12
    # A card is not a snapshot: the later reflects' summaries hold far more lines.
    assert sum(sizes) / len(sizes) < len(summary_lines(play_summary()))


def play_summary() -> str:
    reflector = ExtractiveReflector()
    observations = [
        Observation(i, text, 0.5, 0.6, "message", speaker, 0.0)
        for i, (_, _, speaker, text) in enumerate(turns(), 1)
    ]
    return reflector.summarise("", observations, BUDGET)


def test_lines_are_conclusions_not_small_talk(drafts: list[Draft]) -> None:
    conclusions = [line for d in drafts for line in d.conclusions]
    for chatter in ("omg that would be amazing, thank you!!", "aww that's so sweet", "lol"):
        assert all(key(chatter) != key(line) for line in conclusions), chatter
    # One conclusion per line: a turn of several sentences gives its sentences.
    assert all(not line.startswith(("[", "-")) for line in conclusions)
    # What people said that matters is there.
    text = " ".join(conclusions)
    for fact in ("Harbour Street", "Berlin job", "600 euros", "beagle called Pepper"):
        assert fact in text, fact


def test_open_questions_ask_about_something(drafts: list[Draft]) -> None:
    questions = [q for d in drafts for q in d.questions]
    assert "I'm not sure, could you remind me when it is?" not in questions
    assert "what do you cook?" not in questions  # a single content term: asks about little
    assert all(len(re.findall(r"\w+", q)) >= 3 for q in questions)


def test_tags_are_topics_as_written(drafts: list[Draft]) -> None:
    tags = [t for d in drafts for t in d.tags]
    assert tags
    for draft in drafts:
        text = " ".join(draft.conclusions + draft.questions).lower()
        for tag in draft.tags:
            assert tag.lower() in text, (tag, text)  # a word of the card, not a stem
    fillers = {"im", "lol", "haha", "ok", "sure", "great", "really", "thank", "thanks"}
    assert not fillers & {t.lower() for t in tags}
    assert not {"lena", "tomas"} & {t.lower() for t in tags}  # the people talking


def test_what_the_previous_summary_held_is_not_this_reflects() -> None:
    previous = "## Notable\n- the movers quoted 900 euros for the move [m7]\n"
    summary = previous + "- the landlord said no pets allowed in the flat [m13]\n"
    draft = crystallise(summary, previous, set(), Counts(20, {}), CardConfig())
    assert draft.conclusions == ["the landlord said no pets allowed in the flat"]
    assert draft.memories == [13]


def test_a_summary_that_concluded_nothing_new_makes_no_card() -> None:
    summary = "## Notable\n- haha ok\n- thanks!! [m3]\n"
    assert crystallise(summary, "", set(), Counts(20, {}), CardConfig()) == Draft([], [], [], [])
