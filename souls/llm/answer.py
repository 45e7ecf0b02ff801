"""A soul that answers (Skynet's soul loop): a direct message, the context, the model with
its tools, a reply.

:func:`answer` is the loop, over an injected chat client and toolbox: the model sees the
soul's context block and the message, may call tools (``recall``, ``remember_person``,
``sense_confidence``, ``remind``, ``note``), sees their results, and answers. Bounded:
at most ``max_steps`` model calls and ``max_tokens`` tokens (as the API reports them)
per answer; when a bound is hit the loop stops with what the model last said. When the
soul feels unsure of the message's topic (``low_confidence``), the first call goes to
the escalation model, if one is configured; that call only (escalation is an argument of
the call, so it never reaches the soul's reflects or judge, nor the next answer).

A tool that fails answers the model with the error's message (the model may try
something else); it never ends the loop. Cancellation and LLM errors propagate.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

import msgspec

from souls.llm.chat import ChatClient, ToolCall
from supervisor.errors import SoupdError

__all__ = ["TOOLS", "Answer", "AnswerConfig", "Incoming", "Toolbox", "answer"]


class AnswerConfig(msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    # Answer direct messages with the soul's [llm] (needs base_url): the context, the
    # model with tools, a reply on the channel the message came from, stored as an
    # "assistant" event.
    enabled: bool = False
    # Event kinds answered (a message that mentions the soul is answered too).
    kinds: list[str] = msgspec.field(default_factory=lambda: ["dm", "voice"])
    # Most model calls for one answer (each round of tool calls is one).
    max_steps: int = 6
    # Most tokens one answer may spend, all its calls together.
    max_tokens: int = 8000

    def __post_init__(self) -> None:
        if self.max_steps < 1 or self.max_tokens < 1:
            raise ValueError("max_steps and max_tokens must be at least 1")


@dataclass(frozen=True, slots=True)
class Incoming:
    """The message to answer."""

    text: str
    sender: str | None
    channel: str | None
    session: str | None


@dataclass(slots=True)
class Answer:
    text: str
    steps: int = 0
    tokens: int = 0
    tools: list[str] = field(default_factory=list)  # the tools called, in order
    escalated: bool = False
    stopped: str = ""  # "steps" or "tokens" when a bound ended the loop


class Toolbox(Protocol):
    async def recall(self, query: str) -> str: ...
    async def remember_person(self, person: str, channel: str, id: str) -> str: ...
    async def sense_confidence(self, topic: str) -> tuple[str, str]: ...  # (state, text)
    async def remind(self, text: str, at: str) -> str: ...
    async def note(self, text: str) -> str: ...


def _tool(name: str, description: str, **params: str) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": description,
            "parameters": {
                "type": "object",
                "properties": {
                    key: {"type": "string", "description": d} for key, d in params.items()
                },
                "required": list(params),
                "additionalProperties": False,
            },
        },
    }


TOOLS: list[dict[str, Any]] = [
    _tool(
        "recall",
        "Search your long-term memory; returns the memories, facts and goals that match.",
        query="what to look for, in a few words",
    ),
    _tool(
        "remember_person",
        "Remember that an account on a channel belongs to a person you know, so that what "
        "they say anywhere is theirs.",
        person="the person's name",
        channel="the channel, e.g. telegram or slack",
        id="their id or handle on that channel",
    ),
    _tool(
        "sense_confidence",
        "How well you know a topic (confident, uncertain or low_confidence) and your known "
        "gaps; ask before answering something you may not know.",
        topic="the topic",
    ),
    _tool(
        "remind",
        "Set yourself a reminder: you will be woken at that time with the text.",
        text="what to do or say then",
        at="when, ISO 8601 (e.g. 2026-12-01T09:00:00Z)",
    ),
    _tool(
        "note",
        "Write a note to your memory (something worth keeping from this conversation).",
        text="the note",
    ),
]

_SYSTEM = """\
You are an agent with a living memory. Below is what you remember and feel right now \
(your context). Answer the message you are given, briefly and truthfully. Use your \
tools when they help: recall before claiming to remember something, sense_confidence \
before answering what you may not know, remind for anything promised for later, note \
for what is worth keeping. Say so when you do not know.

{context}"""


async def answer(
    chat: ChatClient, config: AnswerConfig, context: str, message: Incoming, tools: Toolbox
) -> Answer:
    """Answer ``message`` (see the module docstring); raises LLMError."""
    result = Answer(text="")
    state, _ = await tools.sense_confidence(message.text)
    escalate = result.escalated = state == "low_confidence"
    who = f"{message.sender}: " if message.sender else ""
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": _SYSTEM.format(context=context.strip())},
        {"role": "user", "content": who + message.text},
    ]
    handlers = _handlers(tools)
    while True:
        turn = await chat.chat(messages, TOOLS, escalate=escalate)
        escalate = False
        result.steps += 1
        result.tokens += turn.tokens
        result.text = turn.content.strip() or result.text
        if not turn.tool_calls:
            return result
        if result.steps >= config.max_steps or result.tokens >= config.max_tokens:
            result.stopped = "steps" if result.steps >= config.max_steps else "tokens"
            return result
        messages.append(
            {
                "role": "assistant",
                "content": turn.content or None,
                "tool_calls": [
                    {
                        "id": call.id,
                        "type": "function",
                        "function": {"name": call.name, "arguments": call.arguments},
                    }
                    for call in turn.tool_calls
                ],
            }
        )
        for call in turn.tool_calls:
            result.tools.append(call.name)
            messages.append(
                {"role": "tool", "tool_call_id": call.id, "content": await _run(call, handlers)}
            )


Handler = Callable[[dict[str, Any]], Awaitable[str]]


def _handlers(tools: Toolbox) -> dict[str, Handler]:
    async def confidence(args: dict[str, Any]) -> str:
        return (await tools.sense_confidence(args["topic"]))[1]

    return {
        "recall": lambda args: tools.recall(args["query"]),
        "remember_person": lambda args: tools.remember_person(
            args["person"], args["channel"], args["id"]
        ),
        "sense_confidence": confidence,
        "remind": lambda args: tools.remind(args["text"], args["at"]),
        "note": lambda args: tools.note(args["text"]),
    }


async def _run(call: ToolCall, handlers: dict[str, Handler]) -> str:
    handler = handlers.get(call.name)
    if handler is None:
        return f"error: there is no tool {call.name!r}; tools: {', '.join(handlers)}"
    try:
        args = json.loads(call.arguments or "{}")
    except ValueError as exc:
        return f"error: the arguments of {call.name} are not JSON ({exc})"
    if not isinstance(args, dict):
        return f"error: the arguments of {call.name} must be a JSON object"
    try:
        return await handler(args)
    except (ValueError, TypeError, KeyError) as exc:
        return f"error: bad arguments for {call.name} ({exc!r})"
    except SoupdError as error:
        return f"error: {error.message}"
