"""The costly text work of a long event, done in a worker process.

Every soul shares one event loop. Gating and tokenising a text costs about a
millisecond per thousand characters, in single calls that a :class:`~supervisor.pace.Pacer`
cannot cut: a soul flooded with 8,000-character texts held the loop in 2-3 ms pieces,
and every other soul's push waited behind one such piece at each of its steps. A text
of at least :data:`~supervisor.pace.OFFLOAD_CHARS` is therefore gated and tokenised in a
worker process (:func:`supervisor.pace.in_worker`) while the loop serves the others;
shorter texts cost less than the hand-over and stay on the loop.

The worker gets the soul's :class:`HygieneConfig` (its own credential patterns
included) and the text, and gives back the rule that refused it or the text's words:
the same answer, byte for byte, as the loop would have found (tests/souls/intake).
"""

from __future__ import annotations

from functools import lru_cache

import msgspec

from souls.intake.hygiene_gate import HygieneConfig, HygieneGate
from souls.text.tokenize import tokens
from supervisor.errors import RejectedInput
from supervisor.pace import OFFLOAD_CHARS, in_worker

__all__ = ["OFFLOAD_CHARS", "checked_words"]

_Refusal = tuple[str, str]  # rule, message


async def checked_words(config: HygieneConfig, gate: HygieneGate, text: str) -> list[str]:
    """``text``'s words once it passed the hygiene gate (raises RejectedInput as
    ``gate.check`` does); in a worker process when the text is long."""
    if len(text) < OFFLOAD_CHARS:
        gate.check(text)
        return tokens(text)
    answer = await in_worker(_check_and_tokenise, msgspec.msgpack.encode(config), text)
    if isinstance(answer, tuple):
        rule, message = answer
        raise RejectedInput(rule, message)
    return answer


def _check_and_tokenise(config: bytes, text: str) -> list[str] | _Refusal:
    """In the worker: the refusal (rule, message) or the words."""
    try:
        _gate(config).check(text)
    except RejectedInput as refused:
        return refused.rule, str(refused)
    return tokens(text)


@lru_cache(maxsize=16)
def _gate(config: bytes) -> HygieneGate:
    """One gate per soul configuration, kept for the worker's life (compiling the
    patterns costs more than checking a text)."""
    return HygieneGate(msgspec.msgpack.decode(config, type=HygieneConfig))
