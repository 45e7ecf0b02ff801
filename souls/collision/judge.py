"""Who judges a collision: the built-in gate, or a chat model when the soul has one.

The presentation gate (DESIGN §3.8) asks one question of a draw: does it bring one of
the four increments? :func:`souls.collision.presentation_gate.judge` answers it
deterministically from terms.
When the soul has an LLM (``[gate] judge = "auto"`` with ``[llm] base_url`` set, or
``judge = "llm"``), :class:`LLMJudge` asks the model instead and checks its answer:

* each of the four criteria answered exactly once, with a reason;
* evidence only among the drawn cards, and a passed criterion must name some, and the
  card lines that meet it (a conclusion ``line`` or an open ``question``, by the
  numbers the prompt shows);
* nothing else in the answer matters (extra keys are ignored).

An answer that fails a check, an unreachable model, or an empty answer means the
built-in judge decides, and the ledger records which judge spoke (``judge`` column).
The model only decides whether a draw is shown: weights are computed by code from the
user's verdicts, never by a model. Cancellation is never caught.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Literal, Protocol

import msgspec
import structlog

from souls.collision.presentation_gate import (
    ORDER,
    Cited,
    GateCard,
    GateConfig,
    GateResult,
    Verdict,
    judge,
)
from souls.llm.chat import ChatClient, LLMError

__all__ = ["BuiltinJudge", "Judge", "JudgeName", "Judgement", "LLMJudge"]

JudgeName = Literal["builtin", "llm"]


class Judgement(msgspec.Struct, frozen=True):
    result: GateResult
    judge: JudgeName


class Judge(Protocol):
    async def __call__(
        self, topic: str, cards: Sequence[GateCard], participants: frozenset[str] = frozenset()
    ) -> Judgement:
        """The verdicts on ``cards`` thrown at ``topic``; ``participants``: the terms of
        the names of the people talking, no subject of anything."""
        ...


class BuiltinJudge:
    """The deterministic gate of :mod:`souls.collision.presentation_gate`."""

    def __init__(self, config: GateConfig) -> None:
        self._config = config

    async def __call__(
        self, topic: str, cards: Sequence[GateCard], participants: frozenset[str] = frozenset()
    ) -> Judgement:
        return Judgement(judge(topic, cards, self._config, participants), "builtin")


class _Ref(msgspec.Struct):
    card: int
    line: int | None = None  # a conclusion, numbered as in the prompt
    question: int | None = None  # or an open question


class _Answer(msgspec.Struct):
    criterion: str
    passed: bool
    reason: str
    evidence: list[int] = msgspec.field(default_factory=list)
    lines: list[_Ref] = msgspec.field(default_factory=list)


class _Answers(msgspec.Struct):
    verdicts: list[_Answer]


_SYSTEM = """\
You are the presentation gate of an agent's memory. Old conclusion cards were drawn at \
random and thrown at today's topic. Show the collision only if it brings a real \
increment; otherwise it must stay silent. Judge each criterion:
- answers_question: the topic or another drawn card answers an open question of a card;
- counterexample: two cards' conclusions are in tension (one contradicts the other);
- changes_conclusion: the topic changes a card's conclusion (new facts, other numbers);
- new_direction: distant cards linked by a connection point open a new line of inquiry.
Be strict: silence is the normal outcome. Shared small talk, a question answering a \
question, or a negation about something else is not an increment. Answer with JSON \
only: {"verdicts": [{"criterion": "...", "passed": true|false, "reason": "one sentence \
naming the cards and lines", "evidence": [card numbers], "lines": [{"card": N, "line": \
N} or {"card": N, "question": N}: the lines that meet it]}]} with all four criteria."""

_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL)
_MAX_LINE = 300


class LLMJudge:
    """Asks a chat model; falls back to ``fallback`` on any failure (logged)."""

    def __init__(self, client: ChatClient, fallback: BuiltinJudge) -> None:
        self._client = client
        self._fallback = fallback
        self._log = structlog.get_logger("soupd.gate")

    async def __call__(
        self, topic: str, cards: Sequence[GateCard], participants: frozenset[str] = frozenset()
    ) -> Judgement:
        ordered = sorted(cards, key=lambda c: c.number)
        try:
            answer = await self._client.complete(_prompt(topic, ordered))
            result = parse(answer, ordered)
        except LLMError as exc:
            problem = exc.message
        except ValueError as exc:
            problem = f"unusable answer: {exc}"
        else:
            return Judgement(result, "llm")
        self._log.warning("gate.llm_failed", error=problem, fallback="builtin")
        return await self._fallback(topic, cards, participants)


def _prompt(topic: str, cards: Sequence[GateCard]) -> list[dict[str, str]]:
    lines = [f"Topic: {_short(topic)}", ""]
    for card in cards:
        lines.append(f"Card {card.number}:")
        lines += [f"  line {i}: {_short(text)}" for i, text in enumerate(card.conclusions, 1)]
        asked = card.asked or tuple(range(1, len(card.questions) + 1))
        lines += [
            f"  open question {n}: {_short(text)}"
            for n, text in zip(asked, card.questions, strict=False)
        ]
        if card.tags:
            lines.append(f"  connection points: {', '.join(card.tags)}")
    return [
        {"role": "system", "content": _SYSTEM},
        {"role": "user", "content": "\n".join(lines)},
    ]


def _short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= _MAX_LINE else text[: _MAX_LINE - 1] + "…"


def parse(answer: str, cards: Sequence[GateCard]) -> GateResult:
    """The model's answer on the drawn ``cards`` as a GateResult; raises ValueError
    saying what is wrong."""
    fenced = _FENCE.search(answer)
    body = fenced.group(1) if fenced else answer
    start, end = body.find("{"), body.rfind("}")
    if start < 0 or end < start:
        raise ValueError("no JSON object in the answer")
    try:
        answers = msgspec.json.decode(body[start : end + 1].encode(), type=_Answers)
    except msgspec.DecodeError as exc:
        raise ValueError(f"wrong shape ({exc})") from None
    by_criterion: dict[str, _Answer] = {}
    for item in answers.verdicts:
        if item.criterion not in ORDER:
            raise ValueError(f"unknown criterion {item.criterion!r}")
        if item.criterion in by_criterion:
            raise ValueError(f"criterion {item.criterion!r} answered twice")
        by_criterion[item.criterion] = item
    missing = [c for c in ORDER if c not in by_criterion]
    if missing:
        raise ValueError(f"criteria not answered: {', '.join(missing)}")
    drawn = {card.number: card for card in cards}
    verdicts: list[Verdict] = []
    for criterion in ORDER:
        item = by_criterion[criterion]
        reason = " ".join(item.reason.split())
        strangers = sorted(set(item.evidence) - set(drawn))
        if strangers:
            raise ValueError(f"{criterion} cites cards not drawn: {json.dumps(strangers)}")
        if not reason:
            raise ValueError(f"{criterion} has no reason")
        if item.passed and not item.evidence:
            raise ValueError(f"{criterion} passed without naming a card")
        cited = tuple(_cited(ref, drawn, criterion) for ref in item.lines) if item.passed else ()
        if item.passed and not cited:
            raise ValueError(f"{criterion} passed without naming the lines that meet it")
        prefix = "passes (llm): " if item.passed else "fails (llm): "
        verdicts.append(
            Verdict(criterion, item.passed, prefix + _short(reason), tuple(item.evidence), cited)
        )
    chosen = next((v.criterion for v in verdicts if v.passed), None)
    return GateResult(chosen is not None, chosen, verdicts)


def _cited(ref: _Ref, drawn: dict[int, GateCard], criterion: str) -> Cited:
    """The card line ``ref`` names; ValueError when the drawn cards have no such line."""
    card = drawn.get(ref.card)
    if card is None:
        raise ValueError(f"{criterion} cites a line of card {ref.card}, which was not drawn")
    if ref.question is not None and ref.line is None:
        asked = card.asked or tuple(range(1, len(card.questions) + 1))
        if ref.question in asked:
            text = card.questions[asked.index(ref.question)]
            return Cited(card.number, "question", ref.question, text)
    elif ref.line is not None and ref.question is None and 1 <= ref.line <= len(card.conclusions):
        return Cited(card.number, "line", ref.line, card.conclusions[ref.line - 1])
    raise ValueError(f"{criterion} cites a line card {ref.card} does not have")
