"""The responder: souls that answer their direct messages (``[answer] enabled``).

A soul that stores a direct message publishes a ``direct`` output; the responder picks it
up, asks the soul for its context, runs :func:`souls.llm.answer.answer` with the soul's chat
model and a toolbox that talks to the soul through its mailbox (so the soul stays the
one writer and keeps handling mail while the model thinks), stores the reply as an
``assistant`` event and publishes a ``reply`` output, which the channels carry back to
the conversation (by its session).

Bounded: the subscription buffers at most ``QUEUE`` messages (more are dropped, counted
and logged: an answer is a courtesy, the message itself is already stored); at most
``CONCURRENCY`` answers run at once, one at a time per soul, in the responder's own task
group. A failing model is logged; it never touches the soul.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import anyio
import anyio.abc
import structlog

from souls.config import SoulConfig
from souls.events import EventIn, event_time
from souls.llm.answer import Incoming, answer
from souls.llm.chat import ChatClient, LLMConfig, LLMError
from souls.messages import AddTask, Confidence, Context, Observe, PersonLink, Recall
from souls.results import PushResult
from supervisor.errors import SoupdError
from supervisor.outputs import Output, Outputs
from supervisor.registry import Registry

__all__ = ["Responder"]

QUEUE = 256
CONCURRENCY = 4
_ASK = 60.0  # seconds a soul may take for one request of the answer


class Responder:
    def __init__(self, registry: Registry, outputs: Outputs) -> None:
        self._registry = registry
        self._outputs = outputs
        self._log = structlog.get_logger("soupd.responder")
        self._limiter = anyio.CapacityLimiter(CONCURRENCY)
        self._locks: defaultdict[str, anyio.Lock] = defaultdict(anyio.Lock)
        self._clients: dict[str, tuple[LLMConfig, ChatClient]] = {}
        self.answered = 0
        self.failed = 0

    async def run(self, task_status: anyio.abc.TaskStatus[Any]) -> None:
        """Answer direct messages until cancelled (a child of the daemon's tree)."""
        try:
            with self._outputs.subscribe(
                kinds=frozenset({"direct", "overflow"}), capacity=QUEUE, internal=True
            ) as sub:
                task_status.started()
                async with anyio.create_task_group() as tg:
                    while True:
                        output = await sub.receive()
                        if output.kind == "overflow":
                            self._log.warning(
                                "responder.overflow", dropped=output.payload["dropped"]
                            )
                            continue
                        tg.start_soon(self._answer, output)
        finally:
            with anyio.CancelScope(shield=True):
                for _, client in self._clients.values():
                    await client.aclose()
                self._clients.clear()

    async def _answer(self, output: Output) -> None:
        soul, payload = output.soul, output.payload
        log = self._log.bind(soul=soul, event_id=payload.get("event_id"))
        async with self._limiter, self._locks[soul]:
            try:
                handle = self._registry.lookup(soul)
                config = handle.config
                chat = await self._client(soul, handle.config)
                message = Incoming(
                    text=str(payload["text"]),
                    sender=payload.get("sender"),
                    channel=payload.get("channel"),
                    session=payload.get("session"),
                )
                context = await handle.mailbox.ask(Context(message.text, message.session), _ASK)
                reply = await answer(
                    chat,
                    config.answer,
                    context.text,
                    message,
                    _Tools(self._registry, soul, message),
                )
                if not reply.text:
                    log.warning("responder.empty_answer", steps=reply.steps)
                    return
                stored = await handle.mailbox.ask(
                    Observe(
                        EventIn(
                            text=reply.text,
                            kind="assistant",
                            channel=message.channel,
                            session=message.session,
                            ref=f"reply:{payload.get('event_id')}",
                        )
                    ),
                    _ASK,
                )
            except (LLMError, SoupdError) as error:
                self.failed += 1
                log.warning("responder.failed", error=error.message)
                return
            self.answered += 1
            assert isinstance(stored, PushResult)
            self._outputs.publish(
                soul,
                "reply",
                {
                    "text": reply.text,
                    "session": message.session,
                    "channel": message.channel,
                    "in_reply_to": payload.get("event_id"),
                    "event_id": stored.event_id,
                },
            )
            log.info(
                "responder.answered",
                steps=reply.steps,
                tokens=reply.tokens,
                tools=reply.tools,
                escalated=reply.escalated,
                stopped=reply.stopped or None,
            )

    async def _client(self, soul: str, config: SoulConfig) -> ChatClient:
        """The soul's chat client, made anew when its ``[llm]`` changed (a reload)."""
        held = self._clients.get(soul)
        if held is not None and held[0] == config.llm:
            return held[1]
        if held is not None:
            await held[1].aclose()
        client = ChatClient(config.llm)
        self._clients[soul] = (config.llm, client)
        return client


class _Tools:
    """The answer's tools, each one request to the soul."""

    def __init__(self, registry: Registry, soul: str, message: Incoming) -> None:
        self._registry = registry
        self._soul = soul
        self._message = message

    async def _ask(self, request: Any) -> Any:
        return await self._registry.lookup(self._soul).mailbox.ask(request, _ASK)

    async def recall(self, query: str) -> str:
        result = await self._ask(Recall(query, 8))
        lines = [f"[{item.kind} {item.id}] {item.text}" for item in result.items]
        return "\n".join(lines) or "nothing found"

    async def remember_person(self, person: str, channel: str, id: str) -> str:
        linked = await self._ask(PersonLink(person, channel, id))
        return f"remembered: {channel}:{id} is {linked['person']}"

    async def sense_confidence(self, topic: str) -> tuple[str, str]:
        found = await self._ask(Confidence(topic))
        gaps = "; ".join(found.gaps) or "none"
        return found.state, f"{found.state} (score {found.score:.2f}); known gaps: {gaps}"

    async def remind(self, text: str, at: str) -> str:
        due = event_time(at, 0.0)
        added = await self._ask(AddTask(text, due))
        return f"reminder already set for {at}" if added.existing else f"reminder set for {at}"

    async def note(self, text: str) -> str:
        result = await self._ask(
            Observe(
                EventIn(
                    text=text,
                    kind="note",
                    channel=self._message.channel,
                    session=self._message.session,
                )
            )
        )
        return f"noted (event {result.event_id})"
