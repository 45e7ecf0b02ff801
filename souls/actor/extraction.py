"""Extraction: a soul's LLM claim extractor, working beside its turns (DESIGN §3.10).

    ingest commits ─offer─▶ backlog ─worker─▶ model ─read_answer─▶ ready ─Extracted─▶ apply

With ``[extraction] llm = "auto"`` and an ``[llm]`` base_url, every event a transaction
stored is also offered to the model (Chaos's main path; the rules, at ingest, stay the
floor). Invariants a caller may rely on:

* Never on the ack path: :meth:`Extraction.offer` never waits and costs a few appends;
  the model is called by :meth:`Extraction.run`, a task of the soul's own (started by
  :meth:`Extraction.running` around the soul's turns), so a slow, failing or hostile
  model never holds the soul's mail.
* Bounded: the backlog by count and by bytes of text (``[extraction] backlog``,
  ``backlog_bytes``; an event finding it full is *skipped*, counted), the results not yet
  written to ``_READY`` events (the worker waits), an answer to ``max_answer``
  characters (longer is refused unread), an answer to 64 items.
* The soul is the only writer: the worker writes nothing. It mails the soul one
  ``Extracted`` at a time (housekeeping: it never keeps a soul awake) and the soul, in
  a turn, calls :meth:`Extraction.apply`: per event one transaction of claims (through
  the merge algebra, like the rules') and unspoken items
  (:func:`souls.knowledge.extracted.store_reading`, through the store interface: on
  either backend).
* A crash, a stop or hibernation loses only what was not written yet: all of it is
  re-derivable from the stored events. An event forgotten before its results were
  written gets none of them.
* Unspoken items (``souls.knowledge.claim_llm``) go to their own table and never into
  the claims: nothing injects them into a context.
"""

from __future__ import annotations

from collections import Counter, deque
from collections.abc import Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass

import anyio
import anyio.abc
import msgspec
import structlog

from souls.actor.beside import beside
from souls.actor.clock import Clock
from souls.actor.mailbox import Mailbox
from souls.config import SoulConfig
from souls.knowledge.claim_llm import Reading, read_answer
from souls.knowledge.claims import llm_prompt
from souls.knowledge.entries import Entries
from souls.knowledge.extracted import store_reading
from souls.llm.chat import ChatClient, LLMError
from souls.messages import Extracted, Message
from souls.store.interface import SoulStore
from souls.store.store import NewEvent
from supervisor.errors import SoupdError
from supervisor.pace import Pacer

__all__ = ["Extraction", "unspoken"]

# Events whose results wait for the soul at most; then the worker waits for it.
_READY = 32
# Kinds never sent to the model: what the soul says to itself.
_SKIPPED_KINDS = frozenset({"wakeup"})


@dataclass(frozen=True, slots=True)
class _Job:
    event_id: int
    text: str
    speaker: str | None  # the linked person, else the sender
    kind: str | None
    ts: float


@dataclass(frozen=True, slots=True)
class _Done:
    job: _Job
    reading: Reading


class Extraction:
    """The extractor of one soul incarnation, built once its store is open."""

    def __init__(
        self,
        config: SoulConfig,
        clock: Clock,
        *,
        store: SoulStore,
        entries: Entries,
        mailbox: Mailbox[Message],
    ) -> None:
        self._config = config.extraction
        self._llm = config.llm
        self.enabled = (
            self._config.llm == "auto"
            and config.llm.base_url is not None
            and config.cognition
            and config.knowledge.claims
        )
        self._clock = clock
        self._store = store
        self._entries = entries
        self._mailbox = mailbox
        self._backlog: deque[_Job] = deque()
        self._bytes = 0
        self._ready: deque[_Done] = deque()
        self._wake = anyio.Event()
        self._room = anyio.Event()
        self._nudged = False
        self._counts: Counter[str] = Counter()
        self._refused: Counter[str] = Counter()
        self._log = structlog.get_logger("soupd.extraction")

    def offer(self, ids: Sequence[int], events: Sequence[NewEvent]) -> None:
        """Queue the events a transaction just stored (``ids`` theirs, in order) for the
        model; never waits. What finds the backlog full is skipped."""
        if not self.enabled:
            return
        config = self._config
        for event_id, event in zip(ids, events, strict=True):
            if event.kind in _SKIPPED_KINDS or len(event.text.strip()) < 2:
                continue
            size = len(event.text.encode())
            if len(self._backlog) >= config.backlog or self._bytes + size > config.backlog_bytes:
                self._counts["skipped"] += 1
                continue
            speaker = event.person or event.sender
            self._backlog.append(_Job(event_id, event.text, speaker, event.kind, event.ts))
            self._bytes += size
        if self._backlog:
            self._wake.set()

    def running(self) -> AbstractAsyncContextManager[None]:
        """Run the worker while the body runs (the soul's turns); the body's exception
        leaves as itself, not in a group (:func:`souls.actor.beside.beside`)."""
        return beside(self.run) if self.enabled else beside()

    async def run(
        self, *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED
    ) -> None:
        """The worker: ask the model about each queued event, hand what passed to the
        soul. Returns only by cancellation, or when the mailbox closed."""
        chat = ChatClient(self._llm)
        task_status.started()
        try:
            while True:
                while not self._backlog:
                    self._wake = anyio.Event()
                    await self._wake.wait()
                while len(self._ready) >= _READY:
                    self._room = anyio.Event()
                    await self._room.wait()
                job = self._backlog.popleft()
                self._bytes -= len(job.text.encode())
                reading = await self._ask(chat, job)
                if reading is None:
                    continue
                self._ready.append(_Done(job, reading))
                if not self._nudged:
                    self._nudged = True
                    try:
                        await self._mailbox.tell(Extracted())
                    except SoupdError:
                        return  # the mailbox closed: the soul is going away
        finally:
            with anyio.CancelScope(shield=True):
                await chat.aclose()

    async def _ask(self, chat: ChatClient, job: _Job) -> Reading | None:
        self._counts["asked"] += 1
        prompt = [{"role": "user", "content": llm_prompt(job.text)}]
        with structlog.contextvars.bound_contextvars(event_id=job.event_id):
            try:
                raw = await chat.complete(prompt)
            except LLMError as error:
                self._counts["failures"] += 1
                self._log.warning("extraction.failed", error=error.message)
                return None
            reading = read_answer(
                raw,
                job.text,
                sender=job.speaker,
                ts=job.ts,
                kind=job.kind,
                max_answer=self._config.max_answer,
            )
            self._counts["answered"] += 1
            self._refused.update(reading.refused)
            if reading.refused:
                self._log.info("extraction.refused", **reading.refused)
        return reading

    async def apply(self) -> None:
        """Write what the model found and the gates let through (called by the soul, in
        a turn: the soul's own transactions)."""
        self._nudged = False
        pace = Pacer()
        while self._ready:
            done = self._ready.popleft()
            self._room.set()
            await pace()
            await self._write(done)

    async def _write(self, done: _Done) -> None:
        job, reading = done.job, done.reading
        if not reading.claims and not reading.unspoken:
            return
        stored = await store_reading(
            self._store, self._entries, job.event_id, job.ts, reading, self._clock.now()
        )
        if stored is None:
            self._counts["gone"] += 1  # forgotten meanwhile: nothing of it is kept
            return
        self._counts["stored"] += len(stored.claims)
        self._counts["duplicate"] += stored.duplicates
        self._counts["unspoken"] += stored.unspoken

    def statistics(self) -> dict[str, int]:
        """What ``soupd stats`` shows under ``extraction`` (since the soul started):
        ``backlog`` and ``backlog_bytes`` waiting, ``asked`` (model calls), ``answered``
        and ``failures`` (no answer), ``ready`` (read, not yet written), ``skipped``
        (backlog full), ``extracted`` (claims that passed the gates), ``stored`` /
        ``duplicate`` (what merge made of them), ``unspoken`` (new unspoken items),
        ``gone`` (the event was forgotten first), ``refused`` in all and
        ``refused.<cause>``. Empty when the soul extracts by rules alone."""
        if not self.enabled:
            return {}
        extracted = self._counts["stored"] + self._counts["duplicate"]
        extracted += sum(len(d.reading.claims) for d in self._ready)
        stats = {
            "backlog": len(self._backlog),
            "backlog_bytes": self._bytes,
            "ready": len(self._ready),
            "extracted": extracted,
            "refused": sum(self._refused.values()),
        }
        for key in (
            "asked",
            "answered",
            "failures",
            "skipped",
            "stored",
            "duplicate",
            "unspoken",
            "gone",
        ):
            stats[key] = self._counts[key]
        stats.update((f"refused.{cause}", n) for cause, n in sorted(self._refused.items()))
        return stats


async def unspoken(store: SoulStore) -> list[dict[str, object]]:
    """The unspoken items, oldest first: never facts, listed apart from the claims."""
    return [
        {**msgspec.structs.asdict(item), "unspoken": True}
        for item in await store.knowledge.unspoken()
    ]
