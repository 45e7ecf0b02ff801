"""A chat model, when a soul has one: the client, the LLM reflector, the answering loop.

:mod:`~souls.llm.chat` is the OpenAI-compatible client (and the reflector that uses it,
DESIGN §3.4); :mod:`~souls.llm.answer` is the loop of a soul that answers its direct
messages with the model and its tools. Nothing here is needed to run: every mechanism
has a built-in fallback without a model.

May import :mod:`souls.recall`, :mod:`souls.mind`, :mod:`souls.intake`,
:mod:`souls.store`, :mod:`souls.text`, the vocabulary (events, messages, results) and
:mod:`supervisor.errors`; never knowledge, collision or the actor.
"""

# The modules other rooms may import; the rest are this room's own.
__all__ = ["answer", "chat"]
