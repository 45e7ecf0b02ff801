from __future__ import annotations

import msgspec
import pytest

from souls.intake.attention_gate import AttentionConfig, AttentionGate

GATE = AttentionGate(AttentionConfig())


def score(
    kind: str = "message",
    text: str = "hello there",
    group: str | None = None,
    mentioned: bool | None = None,
    gate: AttentionGate = GATE,
) -> float:
    return gate.score(kind=kind, text=text, group=group, mentioned=mentioned)


@pytest.mark.parametrize(
    ("event", "expected"),
    [
        ({}, 0.5),
        ({"kind": "dm"}, 0.9),
        ({"mentioned": True}, 0.9),
        ({"kind": "soul"}, 0.7),
        ({"kind": "heartbeat"}, 0.2),
        ({"kind": "cron"}, 0.2),
        ({"text": "the build failed"}, 0.8),
        ({"group": "ops"}, 0.35),
        ({"group": "ops", "mentioned": False}, 0.35),
    ],
)
def test_each_rule(event: dict[str, object], expected: float) -> None:
    assert score(**event) == expected  # type: ignore[arg-type]


def test_combinations() -> None:
    assert score(kind="heartbeat", text="disk error on sda") == 0.5
    assert score(group="ops", mentioned=True) == 0.9  # a mention cancels the group penalty
    assert score(kind="heartbeat", group="ops") == 0.05
    assert not GATE.admits(score(kind="heartbeat", group="ops"))
    assert not GATE.admits(score(kind="cron"))
    assert GATE.admits(score(group="ops"))
    assert GATE.admits(0.25)


def test_each_rule_applies_once() -> None:
    assert score(kind="dm", mentioned=True, text="error error failed crash") == 1.0
    assert score(text="error failed crash 失败 超时") == 0.8


def test_clamped_to_the_unit_interval() -> None:
    assert score(kind="dm", text="fatal outage") == 1.0
    low = AttentionGate(AttentionConfig(base=0.1, routine=-0.5))
    assert score(kind="cron", gate=low) == 0.0


def test_scores_are_rounded() -> None:
    gate = AttentionGate(AttentionConfig(base=0.123456))
    assert score(gate=gate) == 0.1235


@pytest.mark.parametrize(
    "text",
    [
        "Error: disk full",
        "ERRORS everywhere",
        "tests are failing",
        "a failure in the pipeline",
        "Unhandled exception in worker",
        "the request timed   out",
        "TIMEOUT after 30s",
        "kernel panic",
        "Traceback (most recent call last):",
        "prod is down",
        "db_error in logs",
        "error发生了",
        "部署失败了",
        "数据库迁移超时",
        "服务宕机",
        "接口报错",
    ],
)
def test_alarm_keywords(text: str) -> None:
    assert GATE.explain(kind="message", text=text, group=None, mentioned=None) == [("alarm", 0.3)]


@pytest.mark.parametrize(
    "text",
    ["a reign of terror", "errorless run", "TimeoutError handling docs", "sit down", "fai led"],
)
def test_alarm_keywords_match_whole_words(text: str) -> None:
    assert score(text=text) == 0.5


@pytest.mark.parametrize(
    "keywords",
    [["error", "errors", "timed out", "went down"], ["c++", "a b", "ab", "x", "Spaced  Out"]],
)
def test_alarm_regex_keeps_whole_word_matching_for_any_keyword(keywords: list[str]) -> None:
    # The regex is grouped by first character and a cheap substring test runs first;
    # neither may change which texts match.
    gate = AttentionGate(AttentionConfig(alarm_keywords=keywords))
    for keyword in keywords:
        word = keyword.strip()
        assert score(text=f"so {word.upper()}: now", gate=gate) == 0.8
        assert score(text=f"{word}\n", gate=gate) == 0.8
        assert score(text=f"z{word}", gate=gate) == 0.5
        assert score(text=f"{word}\u00e9", gate=gate) == 0.5


def test_explain_lists_the_rules_that_fired() -> None:
    fired = GATE.explain(kind="heartbeat", text="crash", group="ops", mentioned=None)
    assert fired == [("routine", -0.3), ("alarm", 0.3), ("group_unmentioned", -0.15)]
    assert GATE.explain(kind="message", text="hi", group=None, mentioned=None) == []
    assert GATE.explain(kind="message", text="hi", group="", mentioned=None) == []


def test_custom_config() -> None:
    config = msgspec.convert(
        {
            "direct_kinds": ["dm", "email"],
            "routine_kinds": ["poll"],
            "alarm_keywords": ["Red Alert", "警报"],
            "alarm": 0.1,
            "drop_below": 0.6,
        },
        AttentionConfig,
    )
    gate = AttentionGate(config)
    assert score(kind="email", gate=gate) == 0.9
    assert score(kind="cron", gate=gate) == 0.5
    assert score(kind="poll", gate=gate) == 0.2
    assert score(text="RED   ALERT on deck 5", gate=gate) == 0.6
    assert score(text="火灾警报", gate=gate) == 0.6
    assert score(text="a fatal error", gate=gate) == 0.5
    assert gate.admits(0.6)
    assert not gate.admits(0.59)


def test_no_alarm_keywords() -> None:
    gate = AttentionGate(AttentionConfig(alarm_keywords=[]))
    assert score(text="fatal error", gate=gate) == 0.5


@pytest.mark.parametrize(
    "fields", [{"drop_below": 1.5}, {"alarm_keywords": ["error", " "]}, {"surprise": 1}]
)
def test_bad_config_is_a_validation_error(fields: dict[str, object]) -> None:
    with pytest.raises(msgspec.ValidationError):
        msgspec.convert(fields, AttentionConfig)
