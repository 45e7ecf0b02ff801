"""The LLM judge of the presentation gate against a fake model on loopback: a usable
answer decides; anything else falls back to the built-in judge and says so."""

from __future__ import annotations

import json
from typing import Any

import msgspec
import pytest
from fake_model import ERROR, answer, client, fake_model

from souls.collision.judge import BuiltinJudge, LLMJudge, parse
from souls.collision.presentation_gate import ORDER, GateCard, GateConfig, judge
from souls.config import SoulConfig

DAY = 86400.0
CARDS = [
    GateCard(3, ("billing runs on Postgres 16",), ("when do we migrate billing?",), ("db",), 0.0),
    GateCard(9, ("deploys are safe on Fridays",), (), ("deploy",), 40 * DAY),
]
TOPIC = "the Friday deploy broke billing"


def verdicts(passed: str | None, **overrides: Any) -> str:
    items = [
        {
            "criterion": c,
            "passed": c == passed,
            "reason": f"card 9 line 1 vs the topic ({c})",
            "evidence": [9] if c == passed else [],
            "lines": [{"card": 9, "line": 1}] if c == passed else [],
        }
        for c in ORDER
    ]
    return json.dumps({"verdicts": items} | overrides)


async def test_a_usable_answer_decides_and_the_prompt_holds_the_cards() -> None:
    async with fake_model(answer("```json\n" + verdicts("changes_conclusion") + "\n```")) as model:
        chat = client(model.url)
        try:
            judgement = await LLMJudge(chat, BuiltinJudge(GateConfig()))(TOPIC, CARDS)
        finally:
            await chat.aclose()
    assert judgement.judge == "llm"
    assert judgement.result.passed
    assert judgement.result.criterion == "changes_conclusion"
    assert [v.criterion for v in judgement.result.verdicts] == list(ORDER)
    changed = judgement.result.verdicts[ORDER.index("changes_conclusion")]
    assert changed.reason.startswith("passes (llm): card 9 line 1")
    assert changed.evidence == (9,)
    assert [(c.card, c.kind, c.number, c.text) for c in changed.lines] == [
        (9, "line", 1, "deploys are safe on Fridays")
    ]
    prompt = model.requests[0].body["messages"][1]["content"]
    assert "Topic: the Friday deploy broke billing" in prompt
    assert "Card 3:\n  line 1: billing runs on Postgres 16" in prompt
    assert "open question 1: when do we migrate billing?" in prompt
    assert "connection points: deploy" in prompt


async def test_the_model_can_silence_a_draw_the_builtin_judge_would_show() -> None:
    # A statement, not the question again: a question never answers one.
    topic = "we migrate billing to the new cluster next month"
    builtin = judge(topic, CARDS, GateConfig())
    assert builtin.passed  # the topic answers card 3's open question, by terms
    async with fake_model(answer(verdicts(None))) as model:
        chat = client(model.url)
        try:
            judgement = await LLMJudge(chat, BuiltinJudge(GateConfig()))(topic, CARDS)
        finally:
            await chat.aclose()
    assert judgement.judge == "llm"
    assert not judgement.result.passed
    assert judgement.result.criterion is None


@pytest.mark.parametrize(
    "content",
    [
        "I think it is interesting.",  # no JSON
        json.dumps({"verdicts": [{"criterion": "answers_question", "passed": True}]}),
        verdicts(None)[:-30],  # truncated
        json.dumps({"verdicts": json.loads(verdicts(None))["verdicts"][:3]}),  # a criterion missing
        verdicts("counterexample").replace("[9]", "[42]"),  # a card that was not drawn
        verdicts("counterexample").replace('"evidence": [9]', '"evidence": []'),  # no card
        verdicts(None).replace("new_direction", "vibes"),  # an invented criterion
        verdicts("counterexample").replace('"line": 1', '"line": 7'),  # a line card 9 lacks
        verdicts("counterexample").replace('[{"card": 9, "line": 1}]', "[]"),  # no line named
    ],
)
async def test_an_unusable_answer_falls_back_to_the_builtin_judge(content: str) -> None:
    async with fake_model(answer(content)) as model:
        chat = client(model.url)
        try:
            judgement = await LLMJudge(chat, BuiltinJudge(GateConfig()))(TOPIC, CARDS)
        finally:
            await chat.aclose()
    assert judgement.judge == "builtin"
    assert judgement.result == judge(TOPIC, CARDS, GateConfig())


async def test_an_unreachable_model_falls_back() -> None:
    async with fake_model(ERROR) as model:
        chat = client(model.url, retries=1)
        try:
            judgement = await LLMJudge(chat, BuiltinJudge(GateConfig()))(TOPIC, CARDS)
        finally:
            await chat.aclose()
    assert judgement.judge == "builtin"
    assert len(model.requests) == 2


def test_parse_names_what_is_wrong() -> None:
    doubled = json.loads(verdicts(None))
    doubled["verdicts"].append(doubled["verdicts"][0])
    with pytest.raises(ValueError, match="answered twice"):
        parse(json.dumps(doubled), CARDS)
    with pytest.raises(ValueError, match=r"cites cards not drawn: \[42\]"):
        parse(verdicts("counterexample").replace("[9]", "[42]"), CARDS)
    with pytest.raises(ValueError, match="no reason"):
        parse(verdicts(None).replace("card 9 line 1 vs the topic (answers_question)", " "), CARDS)
    with pytest.raises(ValueError, match="without naming the lines"):
        parse(verdicts("counterexample").replace('[{"card": 9, "line": 1}]', "[]"), CARDS)
    asked = verdicts("answers_question").replace(
        '{"card": 9, "line": 1}', '{"card": 3, "question": 1}'
    )
    (cited,) = parse(asked, CARDS).verdicts[0].lines
    assert (cited.card, cited.kind, cited.number) == (3, "question", 1)


@pytest.mark.parametrize("key", ["reflect", "gate"])
def test_llm_without_an_llm_is_a_config_error(key: str) -> None:
    section = {"reflect": {"reflector": "llm"}, "gate": {"judge": "llm"}}[key]
    with pytest.raises(msgspec.ValidationError, match="needs an LLM: set \\[llm\\] base_url"):
        msgspec.convert({key: section}, SoulConfig)
