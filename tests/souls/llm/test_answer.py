"""The answering loop against a fake model on loopback that calls tools: tool results go
back to the model, the loop is bounded, a low-confidence message escalates, bad tool
calls are answered with errors rather than ending the loop."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import pytest
from fake_model import Reply, client, fake_model

from souls.llm.answer import TOOLS, AnswerConfig, Incoming, answer
from supervisor.errors import InvalidParams

MESSAGE = Incoming("did the deploy fail yesterday?", "ann", "telegram", "telegram:42")


def turn(content: str = "", calls: Sequence[tuple[str, Any]] = (), tokens: int = 10) -> Reply:
    tool_calls = [
        {
            "id": f"call-{i}",
            "type": "function",
            "function": {
                "name": name,
                "arguments": args if isinstance(args, str) else json.dumps(args),
            },
        }
        for i, (name, args) in enumerate(calls)
    ]
    message: dict[str, Any] = {"role": "assistant", "content": content or None}
    if tool_calls:
        message["tool_calls"] = tool_calls
    body = {"choices": [{"message": message}], "usage": {"total_tokens": tokens}}
    return Reply(body=json.dumps(body).encode())


@dataclass
class Tools:
    confidence: str = "confident"
    calls: list[tuple[str, tuple[str, ...]]] = field(default_factory=list)

    async def recall(self, query: str) -> str:
        self.calls.append(("recall", (query,)))
        return "[observation 7] deploy failed: migration timeout"

    async def remember_person(self, person: str, channel: str, id: str) -> str:
        self.calls.append(("remember_person", (person, channel, id)))
        return f"remembered: {channel}:{id} is {person}"

    async def sense_confidence(self, topic: str) -> tuple[str, str]:
        self.calls.append(("sense_confidence", (topic,)))
        return self.confidence, f"{self.confidence} about {topic}"

    async def remind(self, text: str, at: str) -> str:
        self.calls.append(("remind", (text, at)))
        raise InvalidParams(f"{at!r} is not a time")

    async def note(self, text: str) -> str:
        self.calls.append(("note", (text,)))
        return "noted"


async def test_tools_are_called_and_their_results_reach_the_model() -> None:
    replies = [
        turn(calls=[("recall", {"query": "deploy yesterday"})]),
        turn(
            calls=[
                ("remind", {"text": "check the deploy", "at": "soon"}),
                ("note", {"text": "ann asked"}),
            ]
        ),
        turn("Yes: the migration timed out."),
    ]
    tools = Tools()
    async with fake_model(*replies) as model:
        chat = client(model.url)
        try:
            result = await answer(
                chat, AnswerConfig(enabled=True), "## MEMORY\n- x", MESSAGE, tools
            )
        finally:
            await chat.aclose()
    assert result.text == "Yes: the migration timed out."
    assert (result.steps, result.tokens, result.stopped) == (3, 30, "")
    assert result.tools == ["recall", "remind", "note"]
    first = model.requests[0].body
    assert [t["function"]["name"] for t in first["tools"]] == [t["function"]["name"] for t in TOOLS]
    assert "## MEMORY\n- x" in first["messages"][0]["content"]
    assert first["messages"][1] == {
        "role": "user",
        "content": "ann: did the deploy fail yesterday?",
    }
    second = model.requests[1].body["messages"]
    assert second[-1] == {
        "role": "tool",
        "tool_call_id": "call-0",
        "content": "[observation 7] deploy failed: migration timeout",
    }
    third = model.requests[2].body["messages"]
    assert third[-2]["content"] == "error: 'soon' is not a time"  # the model may try again
    assert third[-1]["content"] == "noted"
    assert ("remind", ("check the deploy", "soon")) in tools.calls


async def test_the_loop_is_bounded_by_steps_and_tokens() -> None:
    looping = turn("still thinking", calls=[("recall", {"query": "more"})], tokens=100)
    async with fake_model(looping) as model:
        chat = client(model.url)
        try:
            by_steps = await answer(
                chat, AnswerConfig(enabled=True, max_steps=3), "", MESSAGE, Tools()
            )
            by_tokens = await answer(
                chat, AnswerConfig(enabled=True, max_tokens=250), "", MESSAGE, Tools()
            )
        finally:
            await chat.aclose()
    assert (by_steps.steps, by_steps.stopped, by_steps.text) == (3, "steps", "still thinking")
    assert (by_tokens.steps, by_tokens.stopped) == (3, "tokens")


async def test_low_confidence_escalates_the_first_call_only() -> None:
    replies = [turn(calls=[("sense_confidence", {"topic": "deploys"})]), turn("Not sure.")]
    async with fake_model(*replies) as model:
        chat = client(model.url, escalation_model="big")
        try:
            result = await answer(
                chat, AnswerConfig(enabled=True), "", MESSAGE, Tools(confidence="low_confidence")
            )
        finally:
            await chat.aclose()
    assert result.escalated
    assert [r.body["model"] for r in model.requests] == ["big", "small"]


@pytest.mark.parametrize(
    ("call", "error"),
    [
        (("forget_everything", {}), "error: there is no tool 'forget_everything'"),
        (("recall", "not json"), "error: the arguments of recall are not JSON"),
        (("recall", "[1]"), "error: the arguments of recall must be a JSON object"),
        (("recall", {"q": "x"}), "error: bad arguments for recall (KeyError('query'))"),
    ],
)
async def test_bad_tool_calls_are_answered_with_errors(call: tuple[str, Any], error: str) -> None:
    async with fake_model(turn(calls=[call]), turn("done")) as model:
        chat = client(model.url)
        try:
            result = await answer(chat, AnswerConfig(enabled=True), "", MESSAGE, Tools())
        finally:
            await chat.aclose()
    assert result.text == "done"
    assert model.requests[1].body["messages"][-1]["content"].startswith(error)
