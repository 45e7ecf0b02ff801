"""Goal updates from conversation: merged per person and topic, state signals from later
turns finding their goal, across languages and linked accounts."""

from __future__ import annotations

from souls.knowledge.goal_merge import RECENT, follow
from souls.knowledge.goals import Goal, activated, relink

DAY = 86_400.0
MELANIE = {"mel": "Melanie", "melanie": "Melanie"}


def person(speaker: str) -> str:
    return MELANIE.get(speaker.casefold(), speaker)


class Talk:
    def __init__(self) -> None:
        self.goals: dict[int, Goal] = {}

    def say(self, text: str, who: str = "mel", day: float = 0.0) -> list[str]:
        changes = follow(
            list(self.goals.values()), text, speaker=who, now=day * DAY,
            next_id=max(self.goals, default=0) + 1, person=person,
        )  # fmt: skip
        for change in changes:
            self.goals[change.goal.id] = change.goal
        return [f"{c.outcome} g{c.goal.id} {c.goal.state}" for c in changes]


def test_a_goal_is_achieved_by_a_later_turn_that_names_it_by_its_verb() -> None:
    talk = Talk()
    assert talk.say("My goal this year is to run a half marathon") == ["created g1 active"]
    assert talk.say("Honestly I've been training every morning for the half marathon", day=9) == [
        "updated g1 active"
    ]
    assert talk.say("I finally ran it!", day=30) == ["updated g1 achieved"]
    (goal,) = talk.goals.values()
    assert [n.text for n in goal.progress][-1] == "I finally ran it!"
    assert (goal.priority, goal.triggers, goal.domain) == (2, (), "health")


def test_we_gave_up_on_the_house_abandons_the_chinese_plan() -> None:
    talk = Talk()
    talk.say("我们打算明年买房", who="lilei")
    talk.say("I'm saving for a car", who="lilei")
    assert talk.say("we gave up on the house, prices are insane", who="lilei", day=20) == [
        "updated g1 abandoned"
    ]
    assert talk.goals[2].state == "active"  # the car is another topic


def test_mel_and_melanie_hold_one_goal() -> None:
    talk = Talk()
    talk.say("My goal this year is to run a half marathon", who="mel")
    assert talk.say("my goal is to run a half marathon this year!", who="Melanie") == [
        "merged g1 active"
    ]
    assert [g.speaker for g in talk.goals.values()] == ["Melanie"]
    assert talk.say("I'm saving for a house", who="bob") == ["created g2 active"]


def test_a_signal_naming_nothing_goes_to_the_latest_goal_only_when_recent() -> None:
    talk = Talk()
    talk.say("My goal is to learn Spanish by next summer")
    assert talk.say("I did it!!", day=RECENT + 5) == []
    assert talk.say("I did it!!", day=RECENT - 5) == ["updated g1 achieved"]


def test_a_signal_about_something_else_changes_nothing() -> None:
    talk = Talk()
    talk.say("My goal this year is to run a half marathon")
    assert talk.say("I finally got a new phone") == []
    assert talk.say("we gave up on the house") == []
    assert talk.goals[1].state == "active"


def test_a_budget_question_activates_the_money_goal() -> None:
    talk = Talk()
    talk.say("我们打算明年买房", who="lilei")
    talk.say("My goal this year is to run a half marathon", who="lilei")
    (found,) = activated(list(talk.goals.values()), "How should I budget this month?")
    assert (found.goal.statement, found.domain_hit, found.sim) == ("明年买房", True, 0.0)


def test_relink_moves_and_merges_the_duplicates_of_one_person() -> None:
    # Before the link: mel's goals and Melanie's are two people's.
    goals: list[Goal] = []
    for who, text in [
        ("mel", "My goal this year is to run a half marathon"),
        ("mel", "I'm saving for a house"),
        ("Melanie", "my goal is to run a half marathon this year"),
    ]:
        (change,) = follow(goals, text, speaker=who, now=DAY, next_id=len(goals) + 1)
        goals.append(change.goal)
    assert len(goals) == 3
    changed, gone = relink(goals, person)
    assert gone == [3]
    assert {g.id: g.speaker for g in changed} == {1: "Melanie", 2: "Melanie"}
    merged = next(g for g in changed if g.id == 1)
    assert len(merged.progress) == 2
