from __future__ import annotations

import random
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

import souls.knowledge.goals
from souls.knowledge.goals import (
    MAX_NOTES,
    Goal,
    GoalNote,
    GoalState,
    activated,
    activation,
    apply,
)
from souls.messages import GoalAction, GoalUpdate

NOW = 1_800_000_000.0


def goal(
    id: int = 1,
    statement: str = "Build a college fund for Lily",
    *,
    speaker: str = "user",
    domain: str = "money",
    priority: int = 3,
    triggers: tuple[str, ...] = ("school fees",),
    state: GoalState = "active",
) -> Goal:
    return Goal(
        id=id,
        speaker=speaker,
        statement=statement,
        domain=domain,
        priority=priority,
        triggers=triggers,
        state=state,
        created=NOW - 86400,
        updated=NOW - 86400,
    )


def update(action: GoalAction, statement: str = "", **fields: object) -> GoalUpdate:
    return GoalUpdate(action=action, statement=statement, speaker="user", **fields)  # type: ignore[arg-type]


def test_public_surface() -> None:
    assert sorted(souls.knowledge.goals.__all__) == [
        "Activation",
        "Goal",
        "GoalChange",
        "GoalNote",
        "GoalState",
        "LOW_PRIORITY",
        "MAX_NOTES",
        "MAX_STATEMENT",
        "MAX_TRIGGERS",
        "Person",
        "activated",
        "activation",
        "apply",
        "channel",
        "goal_candidates",
        "relink",
        "topic_key",
    ]


def exactly(message: str) -> str:
    return f"^{re.escape(message)}$"


# --- the state machine -------------------------------------------------------------------


def test_new_creates_an_active_goal() -> None:
    change = apply(
        [],
        update("new", "  Save for a house deposit ", domain=" Money", triggers=(" rent goes up",)),
        now=NOW,
        next_id=7,
    )
    assert change.outcome == "created"
    assert change.previous is None
    assert change.goal == Goal(
        id=7,
        speaker="user",
        statement="Save for a house deposit",
        domain="money",
        priority=3,
        triggers=("rent goes up",),
        state="active",
        created=NOW,
        updated=NOW,
    )


def test_new_keeps_a_note_as_first_progress() -> None:
    change = apply(
        [],
        update("new", "Run a marathon", triggers=("tired legs",), note="signed up"),
        now=NOW,
        next_id=1,
    )
    assert change.goal.progress == (GoalNote(NOW, "signed up"),)


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"statement": "Run a marathon"}, "needs 1-2 bridge triggers"),
        ({"statement": "", "triggers": ("x y",)}, "statement must not be empty"),
        ({"statement": "!!! ???", "triggers": ("run",)}, "at least one word"),
        ({"statement": "a" * 501, "triggers": ("run",)}, "501 characters; keep it to 500"),
        ({"statement": "Run", "triggers": ("a", "b", "c")}, "1-2 bridge triggers, not 3"),
        ({"statement": "Run", "triggers": ("  ",)}, "trigger '' is not usable"),
        ({"statement": "Run", "triggers": ("x",), "priority": 0}, "priority 0 is out of range"),
        ({"statement": "Run", "triggers": ("x",), "priority": 6}, "priority 6 is out of range"),
        ({"statement": "Run", "triggers": ("x",), "goal_id": 4}, "a new goal takes no goal_id"),
    ],
)
def test_new_validates(fields: dict[str, object], message: str) -> None:
    statement = str(fields.pop("statement"))
    with pytest.raises(ValueError, match=message):
        apply([], update("new", statement, **fields), now=NOW, next_id=1)


def test_duplicate_triggers_count_once() -> None:
    change = apply(
        [], update("new", "Run", triggers=("Tired legs", "tired legs ")), now=NOW, next_id=1
    )
    assert change.goal.triggers == ("Tired legs",)


def test_an_update_needs_a_speaker() -> None:
    with pytest.raises(ValueError, match="needs a speaker"):
        apply([], GoalUpdate(action="new", statement="Run", speaker=" "), now=NOW, next_id=1)


def test_new_on_the_same_topic_merges() -> None:
    old = goal(3, "Save for a house", priority=4, triggers=("rent goes up",))
    new = update(
        "new",
        "Save for a house deposit by 2027",
        priority=2,
        triggers=("bank statement", "moving out"),
    )
    change = apply([old], new, now=NOW, next_id=9)
    assert change.outcome == "merged"
    assert change.previous == old
    assert change.goal.id == 3
    assert change.goal.statement == "Save for a house"  # the old wording stays ...
    assert change.goal.progress == (GoalNote(NOW, "restated: Save for a house deposit by 2027"),)
    assert change.goal.priority == 4  # the higher one
    assert change.goal.triggers == ("rent goes up", "bank statement")  # at most two
    assert change.goal.updated == NOW
    assert change.goal.created == old.created


def test_merging_a_paused_goal_takes_it_up_again() -> None:
    old = goal(3, "Learn to play the piano", domain="", state="paused")
    change = apply(
        [old], update("new", "learn to play the PIANO", triggers=("music",)), now=NOW, next_id=9
    )
    assert (change.outcome, change.goal.state, change.goal.progress) == ("merged", "active", ())


@pytest.mark.parametrize(
    ("existing", "speaker", "statement", "domain"),
    [
        # Jaccard {save, money, hous} / {save, money, car} = 0.5 < 0.6, no containment.
        (goal(3, "Save money for a house"), "user", "Save money for a car", "money"),
        (goal(3, "Save money for a house"), "alice", "Save money for a house", "money"),
        (goal(3, "Save money for a house"), "user", "Save money for a house", "family"),
        (goal(3, "Save money for a house", state="achieved"), "user", "Save money for a house", ""),
        (
            goal(3, "Save money for a house", state="abandoned"),
            "user",
            "Save money for a house",
            "",
        ),
    ],
)
def test_new_off_topic_or_after_closure_creates(
    existing: Goal, speaker: str, statement: str, domain: str
) -> None:
    new = GoalUpdate(
        action="new", statement=statement, speaker=speaker, domain=domain, triggers=("x",)
    )
    change = apply([existing], new, now=NOW, next_id=9)
    assert (change.outcome, change.goal.id) == ("created", 9)


def test_new_merges_into_the_most_similar_goal() -> None:
    goals = [goal(1, "Save for a house in Lyon"), goal(2, "Save for a house")]
    change = apply(goals, update("new", "save for a house", triggers=("x",)), now=NOW, next_id=9)
    assert change.goal.id == 2


def test_next_id_must_be_free() -> None:
    with pytest.raises(ValueError, match="next_id 1 is already"):
        apply([goal(1)], update("new", "Fly a plane", triggers=("x",)), now=NOW, next_id=1)


# Every (state, action) pair: the state it leads to, or None when forbidden.
TRANSITIONS: dict[tuple[GoalState, GoalAction], GoalState | None] = {
    ("active", "progress"): "active",
    ("active", "change"): "active",
    ("active", "achieve"): "achieved",
    ("active", "abandon"): "abandoned",
    ("active", "pause"): "paused",
    ("active", "resume"): None,
    ("paused", "progress"): "paused",
    ("paused", "change"): "paused",
    ("paused", "achieve"): "achieved",
    ("paused", "abandon"): "abandoned",
    ("paused", "pause"): None,
    ("paused", "resume"): "active",
    **{
        (closed, action): None
        for closed in ("achieved", "abandoned")
        for action in ("progress", "change", "achieve", "abandon", "pause", "resume")
    },
}


@pytest.mark.parametrize(("state", "action"), sorted(TRANSITIONS))
def test_state_machine(state: GoalState, action: GoalAction) -> None:
    before = goal(5, state=state)
    request = update(action, note="halfway there", priority=5, goal_id=5)
    expected = TRANSITIONS[state, action]
    if expected is None:
        with pytest.raises(ValueError, match=f"goal g5 .* is {state}: cannot {action} it"):
            apply([before], request, now=NOW, next_id=9)
        return
    change = apply([before], request, now=NOW, next_id=9)
    assert change.outcome == "updated"
    assert change.previous == before
    assert change.goal.state == expected
    assert change.goal.updated == NOW
    assert change.goal.progress == (GoalNote(NOW, "halfway there"),)
    assert change.goal.priority == (5 if action == "change" else 3)


def test_closed_goal_error_says_what_to_do() -> None:
    message = (
        "goal g5 ('Build a college fund for Lily') is achieved: cannot progress it; "
        "a closed goal stays closed, state it again with action 'new'"
    )
    with pytest.raises(ValueError, match=exactly(message)):
        apply(
            [goal(5, state="achieved")], update("progress", note="x", goal_id=5), now=NOW, next_id=9
        )


def test_open_goal_error_lists_the_allowed_actions() -> None:
    with pytest.raises(
        ValueError, match=r"from active it can progress, change, achieve, abandon, pause$"
    ):
        apply([goal(5)], update("resume", goal_id=5), now=NOW, next_id=9)


def test_progress_needs_a_note() -> None:
    with pytest.raises(ValueError, match="note must not be empty"):
        apply([goal(5)], update("progress", goal_id=5), now=NOW, next_id=9)


def test_progress_keeps_the_latest_notes() -> None:
    current = goal(5)
    for day in range(MAX_NOTES + 3):
        current = apply(
            [current], update("progress", note=f"day {day}", goal_id=5), now=NOW + day, next_id=9
        ).goal
    assert len(current.progress) == MAX_NOTES
    assert current.progress[0] == GoalNote(NOW + 3, "day 3")
    assert current.progress[-1] == GoalNote(NOW + MAX_NOTES + 2, f"day {MAX_NOTES + 2}")


def test_change_rewrites_only_what_it_gives() -> None:
    before = goal(5, priority=4)
    change = apply(
        [before],
        update("change", "Build a college fund for Lily and Tom", triggers=("tuition",), goal_id=5),
        now=NOW,
        next_id=9,
    )
    assert change.goal.statement == "Build a college fund for Lily and Tom"
    assert change.goal.triggers == ("tuition",)
    assert (change.goal.domain, change.goal.priority) == ("money", 4)


def test_change_with_nothing_to_change() -> None:
    with pytest.raises(ValueError, match="change of goal g5 gives nothing to change"):
        apply([goal(5)], update("change", goal_id=5), now=NOW, next_id=9)


def test_update_finds_its_goal_by_topic() -> None:
    goals = [goal(1, "Run a marathon", domain="health"), goal(2)]
    change = apply(goals, update("achieve", "run a marathon in spring"), now=NOW, next_id=9)
    assert (change.goal.id, change.goal.state) == (1, "achieved")


def test_update_by_topic_skips_closed_goals() -> None:
    goals = [goal(1, "Run a marathon", state="achieved"), goal(4, "Run a marathon")]
    change = apply(goals, update("pause", "Run a marathon"), now=NOW, next_id=9)
    assert (change.goal.id, change.goal.state) == (4, "paused")


def test_update_by_topic_matching_only_a_closed_goal_names_it() -> None:
    goals = [goal(1, "Run a marathon", state="abandoned")]
    with pytest.raises(ValueError, match=r"goal g1 .* is abandoned: cannot pause it"):
        apply(goals, update("pause", "Run a marathon"), now=NOW, next_id=9)


def test_ambiguous_update_lists_the_candidates() -> None:
    goals = [goal(8, "Run a marathon"), goal(2, "Run a marathon", domain="health"), goal(5)]
    message = (
        "'Run a marathon' matches several open goals of 'user' (g2, g8); say which with goal_id"
    )
    with pytest.raises(ValueError, match=exactly(message)):
        apply(goals, update("pause", "Run a marathon"), now=NOW, next_id=9)


@pytest.mark.parametrize(
    ("request_", "message"),
    [
        (update("pause", "Fly a plane"), "no goal of 'user' matches 'Fly a plane'"),
        (update("pause"), "pause needs the goal's id"),
        (update("pause", goal_id=42), "no goal g42"),
        (
            GoalUpdate(action="pause", statement="", speaker="bob", goal_id=5),
            "goal g5 is held by 'user', not 'bob'",
        ),
    ],
)
def test_update_target_errors(request_: GoalUpdate, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        apply([goal(5)], request_, now=NOW, next_id=9)


def test_apply_does_not_touch_its_input() -> None:
    goals = [goal(5)]
    apply(goals, update("achieve", goal_id=5), now=NOW, next_id=9)
    assert goals == [goal(5)]


# --- activation ----------------------------------------------------------------------------

FUND = goal(1, "Build a college fund for Lily", domain="money", triggers=("school fees",))


def test_bridge_trigger_activates_without_a_shared_word() -> None:
    found = activation(FUND, "The school fees went up again this term")
    assert found.sim == 0.0
    assert (found.bridge_hit, found.trigger, found.domain_hit) == (True, "school fees", False)
    assert found.score == pytest.approx(0.4 * (0.35 + 0.15))  # 0.20
    assert activated([FUND], "The school fees went up again this term") == [found]


def test_domain_activates_without_a_shared_word() -> None:
    found = activation(FUND, "We argued about money at dinner")
    assert (found.sim, found.domain_hit, found.bridge_hit) == (0.0, True, False)
    assert found.score == pytest.approx(0.4 * (0.25 + 0.15))  # 0.16
    assert [a.goal.id for a in activated([FUND], "We argued about money at dinner")] == [1]


def test_unrelated_situation_stays_below_the_threshold() -> None:
    found = activation(FUND, "The cat knocked over a plant")
    assert found.score == pytest.approx(0.4 * 0.15)  # 0.06
    assert activated([FUND], "The cat knocked over a plant") == []


def test_word_overlap_is_cosine_over_content_terms() -> None:
    # {build, colleg, fund, lili} against {colleg, fund}: 2 / sqrt(4 * 2).
    found = activation(FUND, "the college fund")
    assert found.sim == pytest.approx(2 / 8**0.5)
    assert found.domain_hit  # "college fund" is a money word of the lexicon
    expected = 0.6 * found.sim + 0.4 * (0.25 + 0.4 * found.sim + 0.15)
    assert found.score == pytest.approx(expected)
    lily = activation(FUND, "Lily's birthday")  # {build, colleg, fund, lili} and {lili, birthday}
    assert (lily.sim, lily.domain_hit) == (pytest.approx(1 / 8**0.5), False)
    assert lily.score == pytest.approx(0.6 * lily.sim + 0.4 * (0.4 * lily.sim + 0.15))


def test_full_match_score() -> None:
    found = activation(FUND, "money: build a college fund for Lily, school fees")
    assert found.sim == pytest.approx(4 / (4 * 7) ** 0.5)  # 7 terms: + money, school, fee
    expected = 0.6 * found.sim + 0.4 * (0.25 + 0.35 + 0.4 * found.sim + 0.15)
    assert found.score == pytest.approx(expected)


def test_paused_goal_counts_half() -> None:
    paused = goal(1, "Build a college fund for Lily", state="paused")
    found = activation(paused, "The school fees went up")
    assert (found.state_w, found.score) == (0.5, pytest.approx(0.4 * 0.5 * 0.5))
    assert activated([paused], "The school fees went up") == []
    assert activated([paused], "The school fees went up", threshold=0.1) == [found]


@pytest.mark.parametrize("state", ["achieved", "abandoned"])
def test_closed_goals_never_activate(state: GoalState) -> None:
    closed = goal(1, "Build a college fund for Lily", state=state)
    found = activation(closed, "money: build a college fund for Lily, school fees")
    assert (found.domain_hit, found.bridge_hit, found.sim > 0) == (True, True, True)
    assert (found.state_w, found.score) == (0.0, 0.0)
    assert activated([closed], "build a college fund for Lily", threshold=0.0) == []


def test_three_word_trigger_needs_two_of_its_words() -> None:
    house = goal(1, "Save for a house", triggers=("rent goes up",))
    assert activation(house, "my rent went up").bridge_hit  # rent, up: 2 of 3
    assert not activation(house, "the rent is due").bridge_hit  # rent: 1 of 3


def test_cjk_trigger() -> None:
    house = goal(1, "存钱买房", domain="", triggers=("房租涨价",))
    assert activation(house, "这个月房租又涨价了").bridge_hit  # 6 of its 7 tokens
    assert not activation(house, "房价太高").bridge_hit  # 房, 价: 2 of 7


def test_activated_order_and_limit() -> None:
    goals = [
        goal(4, "Plan a trip to Kyoto", domain="travel", triggers=("cherry blossom",), priority=2),
        goal(3, "Visit grandma in Kyoto", domain="family", triggers=("trip",), priority=5),
        goal(2, "Learn Japanese", domain="travel", triggers=("kyoto",), priority=5),
        goal(1, "Eat less sugar", domain="health", triggers=("dessert",), priority=5),
        goal(9, "Walk the Kyoto trail", domain="travel", triggers=("hike",), priority=5),
    ]
    situation = "Booked a trip to Kyoto for travel in spring"
    ranked = activated(goals, situation, limit=4)
    # A one-word trigger ("trip") never bridges: a bridge needs two shared tokens.
    assert [a.goal.id for a in ranked] == [4, 9, 3, 2]
    assert not any(a.bridge_hit for a in ranked)
    shuffled = goals[:]
    random.Random(7).shuffle(shuffled)
    assert activated(shuffled, situation, limit=4) == ranked
    assert [a.goal.id for a in activated(goals, situation)] == [4, 9, 3]


def test_equal_scores_go_by_priority_then_id() -> None:
    goals = [
        goal(i, "Build a college fund for Lily", priority=p) for i, p in [(4, 2), (3, 5), (1, 2)]
    ]
    assert [a.goal.id for a in activated(goals, "school fees")] == [3, 1, 4]


def test_activated_rejects_negative_bounds() -> None:
    with pytest.raises(ValueError, match="threshold and limit must be >= 0"):
        activated([FUND], "x", limit=-1)


@given(st.text(max_size=80))
def test_activation_score_stays_in_bounds(situation: str) -> None:
    found = activation(FUND, situation)
    assert 0.0 <= found.sim <= 1.0
    # From nothing in common (0.4 * 0.15) to everything (0.6 + 0.4 * 1.15).
    assert 0.06 - 1e-9 <= found.score <= 1.06 + 1e-9
