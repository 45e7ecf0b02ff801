"""Goal reading stays linear in its text (issue 19: one soul never stalls the others).

Every stored event, up to the hygiene gate's 8,000 characters, goes through
``read_goals`` on the loop all souls share. Hostile text is the trigger of a goal or state
rule said over and over, one sentence with no end: code that reads the sentence again
per match costs its length squared. Each fragment of ``bench/goal_talk.py`` is repeated
to 1,000 and to 8,000 characters; the time of the long text over the short one (best of
several runs, taken in turns so a busy machine slows both) stays far from the 64 of
quadratic code and near the 8 of linear code. Absolute figures are the bench's, never
asserted here.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest

from souls.knowledge.goal_talk import read_goals

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "bench"))
from goal_talk import FRAGMENTS

SHORT, LONG = 1_000, 8_000
BOUND = 16  # linear code measures about 8; the quadratic code this replaced, 25 to 100
RUNS = 5
ROUNDS = 5
FLOOR = 0.0002  # below this a short text's time is mostly the timer's and the call's

# Beyond the triggers: runs with no punctuation, blanks and marks a clause end or a tail
# trim would read again per match.
HOSTILE = [*FRAGMENTS, " ", "x", "~", "- ", " - ", "haha ", " too", "I want to  ", "我想我"]


def _best(text: str) -> float:
    start = time.perf_counter()
    read_goals(text)
    return time.perf_counter() - start


def _repeated(fragment: str, length: int) -> str:
    return (fragment * (length // len(fragment) + 1))[:length]


@pytest.mark.parametrize("fragment", HOSTILE)
def test_eight_times_the_text_costs_about_eight_times_the_time(fragment: str) -> None:
    short, long = (
        "I want to " + _repeated(fragment, SHORT),
        "I want to " + _repeated(fragment, LONG),
    )
    read_goals(short)  # compile every pattern first
    a = b = float("inf")
    for _ in range(ROUNDS):  # quadratic code fails every round, a busy moment one
        for _ in range(RUNS):
            a, b = min(a, _best(short)), min(b, _best(long))
        if b / max(a, FLOOR) <= BOUND:
            break
    assert b / max(a, FLOOR) <= BOUND, f"{fragment!r}: {a * 1e3:.2f} ms, then {b * 1e3:.2f} ms"


def test_hostile_text_still_yields_what_it_says() -> None:
    """Linear is not blind: a repeated statement is still read."""
    said = read_goals(_repeated("I'm saving for a house. ", LONG))
    assert {(s.action, s.kind, s.statement) for s in said} == {
        ("new", "goal", "saving for a house")
    }
    long = read_goals("I want to " + " " * LONG + "visit Japan someday")
    assert [s.statement for s in long] == ["visit Japan someday"]
