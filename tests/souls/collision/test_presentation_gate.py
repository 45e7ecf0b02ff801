from __future__ import annotations

import itertools
from typing import get_args

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from souls.collision.presentation_gate import (
    ORDER,
    Criterion,
    GateCard,
    GateConfig,
    GateResult,
    Verdict,
    judge,
)

DAY = 86400.0
CONFIG = GateConfig()


def card(
    number: int,
    conclusions: tuple[str, ...] = (),
    questions: tuple[str, ...] = (),
    tags: tuple[str, ...] = (),
    *,
    days: float = 0.0,
) -> GateCard:
    return GateCard(number, conclusions, questions, tags, 1_800_000_000.0 + days * DAY)


def verdict(result: GateResult, criterion: Criterion) -> Verdict:
    (found,) = [v for v in result.verdicts if v.criterion == criterion]
    return found


def passes(topic: str, cards: list[GateCard], criterion: Criterion, **config: float) -> bool:
    return verdict(judge(topic, cards, GateConfig(**config)), criterion).passed  # type: ignore[arg-type]


# answers_question


def test_topic_answers_an_open_question() -> None:
    cards = [card(7, ("Logs rotate daily",), ("Why is the cache warm-up so slow after deploys?",))]
    result = judge("the cache warm-up after deploys is slow because of preloading", cards, CONFIG)
    found = verdict(result, "answers_question")
    assert found.passed
    assert found.evidence == (7,)
    assert "card 7" in found.reason
    assert "the topic" in found.reason


def test_another_cards_conclusion_answers_an_open_question() -> None:
    asker = card(3, ("Deploys run at noon",), ("Why is the cache warm-up slow after deploys?",))
    answer = card(9, ("Cache warm-up is slow after deploys because the preload runs late",))
    found = verdict(judge("lunch plans", [asker, answer], CONFIG), "answers_question")
    assert found.passed
    assert found.evidence == (3, 9)
    assert "card 3" in found.reason
    assert "card 9 line 1" in found.reason


def test_a_cards_own_conclusion_does_not_answer_its_question() -> None:
    alone = card(3, ("Cache warm-up is slow after deploys",), ("Why is cache warm-up slow?",))
    assert not passes("lunch plans", [alone], "answers_question")


def test_chinese_open_question_is_answered() -> None:
    asker = card(5, ("数据库迁移前要先备份",), ("为什么部署总是失败\uff1f",))
    answer = card(6, ("部署失败是因为配置错误",))
    assert passes("午餐", [asker, answer], "answers_question")
    assert passes("部署失败的原因", [asker], "answers_question")


def test_open_question_near_miss_is_silent() -> None:
    cards = [card(7, (), ("Why do cache warm-up, preload and rollback interact badly?",))]
    found = verdict(judge("the cache is large", cards, CONFIG), "answers_question")
    assert not found.passed
    assert "1 of" in found.reason


def test_short_question_needs_all_its_terms() -> None:
    cards = [card(7, (), ("Kafka retention?",))]
    assert not passes("kafka partitions", cards, "answers_question")
    assert passes("kafka retention is seven days", cards, "answers_question")


# counterexample


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("Friday deploys break the database migration", "Friday deploys never break migrations"),
        ("The build caches docker layers", "The build doesn't cache docker layers"),
        ("上线后缓存预热很慢", "上线后缓存预热并不慢"),
        ("数据库迁移需要备份", "数据库迁移没有备份也可以"),
    ],
)
def test_counterexample_tension(first: str, second: str) -> None:
    result = judge("lunch", [card(1, (first,)), card(2, (second,))], CONFIG)
    found = verdict(result, "counterexample")
    assert found.passed, found.reason
    assert found.evidence == (1, 2)
    assert "only card 2 is negated" in found.reason


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("Friday deploys never break migrations", "Friday deploys cannot break migrations"),
        ("Friday deploys break migrations", "Friday deploys break migrations"),
        ("Friday deploys are slow", "Nobody likes slow tests"),  # one shared term only
        ("上线后缓存预热非常慢", "上线后缓存预热很慢"),  # 非常 means "very"
    ],
)
def test_counterexample_near_miss(first: str, second: str) -> None:
    assert not passes("lunch", [card(1, (first,)), card(2, (second,))], "counterexample")


def test_counterexample_needs_two_cards() -> None:
    same = card(1, ("Friday deploys break migrations", "Friday deploys never break migrations"))
    assert not passes("lunch", [same], "counterexample")


def test_tension_overlap_is_configurable() -> None:
    cards = [card(1, ("deploys break migrations",)), card(2, ("deploys never break migrations",))]
    assert passes("lunch", cards, "counterexample", tension_overlap=3)
    assert not passes("lunch", cards, "counterexample", tension_overlap=4)


# changes_conclusion


@pytest.mark.parametrize(
    ("conclusion", "topic"),
    [
        ("Friday deploys break the database migration", "Friday deploys no longer break migration"),
        ("Deploy takes 12 minutes on average", "deploy takes 3 minutes now"),
        ("数据库迁移前要先备份", "数据库迁移不需要备份"),
    ],
)
def test_topic_changes_a_conclusion(conclusion: str, topic: str) -> None:
    found = verdict(judge(topic, [card(4, (conclusion,))], CONFIG), "changes_conclusion")
    assert found.passed, found.reason
    assert found.evidence == (4,)
    assert "card 4 line 1" in found.reason


@pytest.mark.parametrize(
    ("conclusion", "topic"),
    [
        ("Friday deploys break the database migration", "Friday is pizza day, not deploy day"),
        ("Friday deploys break the database migration", "Friday deploys break the migration"),
        ("Deploy takes 3 minutes", "on 2026-11-03 the deploy took 3 minutes"),  # a date
        ("数据库迁移前要先备份", "数据库迁移前要先备份好"),
    ],
)
def test_change_near_miss(conclusion: str, topic: str) -> None:
    assert not passes(topic, [card(4, (conclusion,))], "changes_conclusion")


# new_direction


def test_distant_cards_linked_by_a_tag_open_a_new_direction() -> None:
    old = card(2, ("Slow tests hide flaky fixtures",), (), ("Deploys",), days=0)
    new = card(8, ("Canary releases catch config drift",), (), ("deploy",), days=45)
    assert not passes("lunch", [new, old], "new_direction")  # a link today's topic misses
    found = verdict(judge("lunch before the deploy", [new, old], CONFIG), "new_direction")
    assert found.passed, found.reason
    assert found.evidence == (2, 8)
    assert "cards 2 and 8" in found.reason
    assert "deploy" in found.reason


def test_untagged_distant_cards_link_by_one_conclusion_term() -> None:
    old = card(2, ("Slow tests hide flaky fixtures",), days=0)
    new = card(8, ("Canary releases catch flaky config",), days=45)
    assert passes("flaky again", [old, new], "new_direction")
    assert not passes("lunch", [old, new], "new_direction")


def test_chinese_new_direction() -> None:
    old = card(2, ("测试太慢会掩盖问题",), (), ("部署",), days=0)
    new = card(8, ("灰度发布能发现配置漂移",), (), ("部署",), days=60)
    assert passes("午餐以后部署", [old, new], "new_direction")
    assert not passes("午餐", [old, new], "new_direction")


@pytest.mark.parametrize(
    ("conclusion", "tag", "days"),
    [
        ("Canary releases catch drift", "deploy", 29),
        ("Canary releases catch drift", "database", 90),
        ("Slow flaky tests hide drift", "deploy", 90),
    ],
    ids=["too-close", "no-shared-tag", "same-conclusions"],
)
def test_new_direction_near_miss(conclusion: str, tag: str, days: float) -> None:
    old = card(2, ("Slow tests hide flaky fixtures",), (), ("deploy",))
    assert not passes(
        "lunch before the deploy",
        [old, card(8, (conclusion,), (), (tag,), days=days)],
        "new_direction",
    )


# negation words, order, silence, determinism


def test_negation_words_are_never_shared_terms() -> None:
    question = card(1, (), ("Why does it never fail without retries?",))
    assert not passes("it never fails without a reason", [question], "answers_question")
    old = card(2, ("The cache never warms without a preload",), (), ("cache",))
    new = card(8, ("The queue never drains without a worker",), (), ("cache",), days=60)
    found = verdict(judge("lunch, then the cache", [old, new], CONFIG), "new_direction")
    assert found.passed, found.reason
    zh_old = card(3, ("部署绝不会失败",), (), ("上线",))
    zh_new = card(9, ("缓存绝不会过期",), (), ("上线",), days=60)
    assert passes("午餐以后上线", [zh_old, zh_new], "new_direction")
    tension = verdict(judge("lunch", [old, new], CONFIG), "counterexample")
    assert "share 0 terms (none;" in tension.reason


def test_verdicts_in_fixed_order_and_first_passing_criterion() -> None:
    old = card(1, ("Friday deploys break migrations",), (), ("deploy",))
    new = card(2, ("Friday deploys never break migrations",), (), ("deploy",), days=90)
    other = card(3, ("Canary releases catch drift",), (), ("deploy",), days=200)
    result = judge("lunch before the deploy", [old, new, other], CONFIG)
    assert get_args(Criterion) == ORDER
    assert [v.criterion for v in result.verdicts] == list(ORDER)
    assert ORDER == ("answers_question", "counterexample", "changes_conclusion", "new_direction")
    assert [v.passed for v in result.verdicts] == [False, True, False, True]
    assert result.passed
    assert result.criterion == "counterexample"


def test_unrelated_draw_is_silent() -> None:
    cards = [
        card(11, ("Friday deploys break migrations",), ("Who owns the pager?",), ("deploy",)),
        card(12, ("Sourdough needs a warm kitchen",), ("Which flour?",), ("bread",), days=3),
        card(13, ("Tennis elbow heals with rest",), (), ("health",), days=5),
    ]
    result = judge("planning the quarterly budget spreadsheet", cards, CONFIG)
    assert not result.passed
    assert result.criterion is None
    assert [v.criterion for v in result.verdicts] == list(ORDER)
    for v in result.verdicts:
        assert not v.passed
        assert v.evidence
        assert any(str(n) in v.reason for n in v.evidence), v.reason
        assert set(v.evidence) <= {11, 12, 13}


def test_empty_draw_is_silent() -> None:
    result = judge("anything", [], CONFIG)
    assert (result.passed, result.criterion, len(result.verdicts)) == (False, None, 4)


def test_same_input_same_result_whatever_the_card_order() -> None:
    cards = [
        card(1, ("Friday deploys break migrations",), ("Why is warm-up slow?",), ("deploy",)),
        card(2, ("Friday deploys never break migrations",), (), ("deploy",), days=90),
        card(3, ("Warm-up is slow because preload runs late",), (), ("cache",), days=200),
    ]
    first = judge("deploy takes 3 minutes", cards, CONFIG)
    assert judge("deploy takes 3 minutes", cards, CONFIG) == first
    for order in itertools.permutations(cards):
        assert judge("deploy takes 3 minutes", list(order), CONFIG) == first


@pytest.mark.parametrize(
    "bad",
    [
        {"answer_overlap": 0.0},
        {"change_overlap": 1.5},
        {"tension_overlap": 0},
        {"distant_days": -1.0},
        {"min_shared_tags": 0},
    ],
)
def test_config_is_validated(bad: dict[str, float]) -> None:
    with pytest.raises(ValueError, match="must be"):
        GateConfig(**bad)  # type: ignore[arg-type]
    with pytest.raises(msgspec.ValidationError):
        msgspec.convert(bad, GateConfig)


def test_config_rejects_unknown_fields() -> None:
    with pytest.raises(msgspec.ValidationError):
        msgspec.convert({"answer_overlap": 0.5, "typo": 1}, GateConfig)


_TEXT = st.text(st.sampled_from(list("abcdeno'tx 不没非常部署缓存?\uff1f0123\n")), max_size=40)
_CARD = st.builds(
    GateCard,
    number=st.integers(0, 50),
    conclusions=st.lists(_TEXT, max_size=3).map(tuple),
    questions=st.lists(_TEXT | st.text(max_size=20), max_size=2).map(tuple),
    tags=st.lists(_TEXT, max_size=2).map(tuple),
    created=st.floats(0, 1e10, allow_nan=False),
)


@settings(max_examples=150, deadline=None, database=None)
@given(topic=_TEXT | st.text(max_size=60), cards=st.lists(_CARD, max_size=4))
def test_judge_never_raises_and_returns_four_verdicts(topic: str, cards: list[GateCard]) -> None:
    result = judge(topic, cards, CONFIG)
    assert [v.criterion for v in result.verdicts] == list(ORDER)
    assert result.passed == any(v.passed for v in result.verdicts)
    assert result.criterion == next((v.criterion for v in result.verdicts if v.passed), None)
    numbers = {c.number for c in cards}
    for v in result.verdicts:
        assert v.reason
        assert "\n" not in v.reason
        assert set(v.evidence) <= numbers


# on real conversation (tests/conversations.py): what chat says that is no increment


def test_shared_fillers_answer_no_question() -> None:
    # Both lines are chat; "I'm" and "sure" are all they share.
    asker = card(3, ("Thursdays at 7, at Marco's place",), ("I'm not sure, could you remind me?",))
    other = card(5, ("I'm sure Marco won't mind if you come late",))
    found = verdict(judge("hey!! how was your week?", [asker, other], CONFIG), "answers_question")
    assert not found.passed, found.reason


def test_a_question_answers_no_question() -> None:
    asker = card(2, ("we meet Thursdays",), ("when is the cooking club this week?",))
    other = card(4, ("could you remind me when the cooking club is this week?",))
    assert not passes("lunch", [asker, other], "answers_question")
    assert not passes("when is the cooking club this week?", [asker], "answers_question")


def test_a_statement_answers_the_question_it_shares_a_subject_with() -> None:
    asker = card(1, ("the Berlin startup offer came through",), ("should you move to Berlin?",))
    result = judge("I turned down the Berlin job, I won't move away now", [asker], CONFIG)
    found = verdict(result, "answers_question")
    assert found.passed, found.reason
    assert [(c.card, c.kind, c.number) for c in found.lines] == [(1, "question", 1)]


@pytest.mark.parametrize(
    ("first", "second"),
    [
        # "fail" is a verb, not a negation
        (
            "the nightly backup failed on the staging database",
            "the nightly backup works on the staging database",
        ),
        # the negation is about something else, in another clause
        (
            "it's not cheap, but the movers are worth it for the piano",
            "the movers carried the piano upstairs",
        ),
        # an idiom
        (
            "I can't wait for paella night at Marco's on Sunday",
            "paella night is at Marco's on Sunday",
        ),
        ("我不知道包饺子要醒面", "包饺子要醒面一个小时"),
    ],
)
def test_no_tension_without_a_negation_of_the_subject(first: str, second: str) -> None:
    found = verdict(
        judge("lunch", [card(1, (first,)), card(2, (second,))], CONFIG), "counterexample"
    )
    assert not found.passed, found.reason


def test_a_change_of_mind_is_tension() -> None:
    before = card(4, ("the landlord said no pets allowed in the flat",))
    after = card(9, ("the landlord changed his mind, small dogs are fine in the flat now",))
    found = verdict(judge("lunch", [before, after], CONFIG), "counterexample")
    assert found.passed, found.reason
    assert [(c.card, c.number) for c in found.lines] == [(4, 1), (9, 1)]


def test_new_numbers_change_a_conclusion_and_a_question_changes_none() -> None:
    quoted = card(2, ("the movers quoted 900 euros which is kinda insane",))
    found = verdict(
        judge("the movers dropped their price to 600 euros", [quoted], CONFIG), "changes_conclusion"
    )
    assert found.passed, found.reason
    assert found.lines[0].text == "the movers quoted 900 euros which is kinda insane"
    assert not passes(
        "did the movers drop their price to 600 euros?", [quoted], "changes_conclusion"
    )


def test_the_topic_opens_a_direction_at_a_cards_connection_point() -> None:
    berlin = card(6, ("the Berlin team wants me there for a whole week in June",), (), ("Berlin",))
    found = verdict(judge("I'm flying to Berlin on Monday!", [berlin], CONFIG), "new_direction")
    assert found.passed, found.reason
    assert "'Berlin'" in found.reason
    assert [(c.card, c.number) for c in found.lines] == [(6, 1)]
    # the same words again are no new direction, and a tag the topic does not name none
    assert not passes("the Berlin team wants me there in June", [berlin], "new_direction")
    assert not passes("I'm flying to Porto on Monday!", [berlin], "new_direction")


def test_the_names_of_the_people_talking_are_no_subject() -> None:
    cards = [
        card(1, ("Lena moved into the Harbour Street flat",), (), ("Lena",)),
        card(2, ("Lena adopted a beagle called Pepper",), (), ("Lena",), days=40),
    ]
    people = frozenset({"lena"})
    assert judge("Lena, hi!", cards, CONFIG, people).passed is False
    assert verdict(judge("Lena, hi!", cards, CONFIG), "new_direction").passed  # "Lena" links
    assert not verdict(judge("Lena, hi!", cards, CONFIG, people), "new_direction").passed
