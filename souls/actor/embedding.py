"""Embedding: a soul's memories made into vectors, beside its turns (DESIGN §3.12).

    ingest commits ─offer─▶ backlog ─worker─▶ embedder ─▶ ready ─Embedded─▶ apply
    start, and whenever the backlog empties: memories without a vector ─▶ backlog

With ``[embedding] provider`` set, every memory gets the vector of its text. The same
shape as the LLM extractor's (souls/actor/extraction.py), and the same invariants:

* Never on the ack path: :meth:`Embedding.offer` never waits; the embedder is called by
  :meth:`Embedding.run`, a worker of the soul's own (:func:`souls.actor.beside.beside`).
* Bounded: the backlog by count and by bytes of text (``[embedding] backlog``,
  ``backlog_bytes``), the vectors not yet written (``_READY`` batches; the worker waits),
  an answer by ``max_answer_bytes``. What finds the backlog full is not lost: it has no
  vector in the database, and is caught up once the backlog empties (as at start).
* The soul is the only writer: the worker mails it ``Embedded`` (housekeeping) and the
  soul, in a turn, writes the vectors (:meth:`Embedding.apply`), only of memories that
  still exist. ``forget`` deletes vectors with their memories, in its transaction.
* A provider that fails costs nothing but a count: one log line when it starts failing
  (and one when it is back), the batch is retried after ``retry_after`` seconds, and
  meanwhile recall is lexical. Nothing here ever fails a push or a recall.
"""

from __future__ import annotations

import time
from array import array
from collections import Counter, deque
from collections.abc import Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass

import anyio
import anyio.abc
import anyio.to_thread
import structlog

from souls.actor.beside import beside
from souls.actor.mailbox import Mailbox
from souls.actor.metrics import LatencyWindow
from souls.embed.client import Embedder, EmbedError, embedder
from souls.embed.config import EmbeddingConfig
from souls.embed.vectors import Near, VectorIndex, pack, unpack
from souls.messages import Embedded, Message
from souls.store.interface import SoulStore
from souls.store.store import NewEvent
from supervisor.errors import SoupdError

__all__ = ["Embedding"]

# Batches whose vectors wait for the soul at most; then the worker waits for it.
_READY = 8
# The most of a memory's text sent to the embedder (models read a few hundred tokens).
_MAX_TEXT = 8000
# How the worker gives way to the soul's requests (see Embedding._yield_to_requests).
_YIELD_STEP = 0.005
_YIELD_MOST = 1.0
# Once it was busy, the mailbox must stay empty this many steps: a pipelining client's
# pushes leave it empty only for moments between turns.
_QUIET = 4
# Numbers one search may compare on the event loop (vectors x dimensions), by search:
# ~1 ms with numpy (20k memories of 384 dimensions), ~20 ms in pure Python (1k of 384;
# the thread then only lets the loop in between, every switch interval); above, a thread.
_ON_LOOP_CELLS = {"numpy": 8_000_000, "python": 400_000}


def said(sender: str | None, text: str) -> str:
    """What is embedded of a memory: its text as its sender said it ("Maya: we moved to
    Leipzig"), so that a question naming the person ("where does Maya live?") is near
    what that person said; on LoCoMo dev, MiniLM alone finds twice the evidence turns
    (R@5 21.5 -> 40.8 %) this way."""
    return (f"{sender}: {text}" if sender else text)[:_MAX_TEXT]


@dataclass(frozen=True, slots=True)
class _Job:
    # The memory, or (offered by ingest, before its id is read) its event's observation.
    memory_id: int | None
    event_id: int | None
    text: str

    @property
    def size(self) -> int:
        return len(self.text.encode())


class Embedding:
    """The embedder of one soul incarnation, built once its store is open."""

    def __init__(
        self,
        config: EmbeddingConfig,
        *,
        store: SoulStore,
        mailbox: Mailbox[Message],
        provider: Embedder | None = None,
    ) -> None:
        self._config = config
        self.enabled = config.enabled
        self._store = store
        self._mailbox = mailbox
        self._provider = provider
        self.model = f"{config.provider}:{config.model}"
        self.index = VectorIndex(self.model, config.dimensions)
        self._backlog: deque[_Job] = deque()
        self._bytes = 0
        self._ready: deque[tuple[list[_Job], list[array[float]]]] = deque()
        self._wake = anyio.Event()
        self._room = anyio.Event()
        self._nudged = False
        self._behind = False  # memories may lack a vector beyond those queued
        self._failing_since: float | None = None
        self._counts: Counter[str] = Counter()
        self._batch_seconds = 0.0
        self._query_seconds = 0.0  # waiting for the queries' vectors
        self._search_seconds = 0.0  # comparing them with the memories'
        self._query_latency = LatencyWindow(1000)
        self._log = structlog.get_logger("soupd.embedding")

    def _embedder(self) -> Embedder:
        if self._provider is None:
            made = embedder(self._config)
            assert made is not None  # enabled: a provider is configured
            self._provider = made
        return self._provider

    async def load(self) -> None:
        """Read the stored vectors of this model, and queue the memories without one
        (at start; in the soul's task, before its turns)."""
        if not self.enabled:
            return
        if self.index.search == "python":
            self._log.warning(
                "embedding.slow_search",
                search="python",
                hint="numpy is not installed: install soupd[semantic] for the matrix search",
            )
        for memory_id, blob in await self._store.vectors(self.model):
            vector = unpack(blob)
            if self.index.dimensions is None:
                self.index.dimensions = len(vector)
            if len(vector) == self.index.dimensions:
                self.index.put(memory_id, vector)
        await self._catch_up()

    async def _catch_up(self) -> None:
        """Queue visible memories without a vector of this model, as many as fit."""
        self._behind = False
        after = 0
        while True:
            rows = await self._store.unembedded(self.model, after, 512)
            for memory_id, text, sender in rows:
                if not self._queue(_Job(memory_id, None, said(sender, text))):
                    self._behind = True
                    return
            if len(rows) < 512:
                return
            after = rows[-1][0]

    def _queue(self, job: _Job) -> bool:
        config = self._config
        if len(self._backlog) >= config.backlog or self._bytes + job.size > config.backlog_bytes:
            return False
        self._backlog.append(job)
        self._bytes += job.size
        self._wake.set()
        return True

    def offer(self, ids: Sequence[int], events: Sequence[NewEvent]) -> None:
        """Queue the observations of the events a transaction just stored (``ids``
        theirs, in order); never waits. What finds the backlog full is caught up later."""
        if not self.enabled:
            return
        for event_id, event in zip(ids, events, strict=True):
            job = _Job(None, event_id, said(event.sender, event.text))
            if event.text.strip() and not self._queue(job):
                self._counts["deferred"] += 1
                self._behind = True

    def running(self) -> AbstractAsyncContextManager[None]:
        """Run the worker while the body runs (the soul's turns)."""
        return beside(self.run) if self.enabled else beside()

    async def run(
        self, *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED
    ) -> None:
        """The worker: embed the backlog batch by batch, hand the vectors to the soul.
        Returns only by cancellation, or when the mailbox closed."""
        provider = self._embedder()
        task_status.started()
        try:
            while True:
                while not self._backlog:
                    self._wake = anyio.Event()
                    await self._wake.wait()
                while len(self._ready) >= _READY:
                    self._room = anyio.Event()
                    await self._room.wait()
                await self._yield_to_requests()
                size = min(self._config.batch, len(self._backlog))
                jobs = [self._backlog.popleft() for _ in range(size)]
                self._bytes -= sum(job.size for job in jobs)
                vectors = await self._embed(provider, jobs)
                if vectors is None:
                    # Back at the front, as they were: retried after a pause.
                    self._backlog.extendleft(reversed(jobs))
                    self._bytes += sum(job.size for job in jobs)
                    await anyio.sleep(self._config.retry_after)
                    continue
                self._ready.append((jobs, vectors))
                if not self._nudged:
                    self._nudged = True
                    try:
                        await self._mailbox.tell(Embedded())
                    except SoupdError:
                        return  # the mailbox closed: the soul is going away
        finally:
            with anyio.CancelScope(shield=True):
                await provider.aclose()

    async def _yield_to_requests(self) -> None:
        """Let the soul's requests go first: while its mailbox holds some, and until it
        has stayed empty ``_QUIET`` steps, the next batch waits, ``_YIELD_STEP`` at a
        time, ``_YIELD_MOST`` at most (so that under constant
        load embedding still advances, a batch a second). A burst of pushes is acked at
        the rate it would be without a provider; its vectors follow once it has passed,
        what finds the backlog full meanwhile from the database."""
        waited = 0.0
        quiet = _QUIET  # the first look at an empty mailbox lets the batch go
        busy = False
        while waited < _YIELD_MOST:
            if self._mailbox.statistics().queued:
                busy, quiet = True, 0
            elif quiet >= _QUIET:
                break  # quiet for a while (or from the start): the soul is not busy
            else:
                quiet += 1
            await anyio.sleep(_YIELD_STEP)
            waited += _YIELD_STEP
        if busy:
            self._counts["yielded"] += 1

    async def _embed(self, provider: Embedder, jobs: list[_Job]) -> list[array[float]] | None:
        started = time.perf_counter()
        try:
            vectors = await provider.embed([j.text for j in jobs], seconds=self._config.timeout)
        except EmbedError as error:
            self._failed(error, "batch")
            return None
        self._counts["batches"] += 1
        self._batch_seconds += time.perf_counter() - started
        self._recovered()
        return vectors

    def _failed(self, error: EmbedError, what: str) -> None:
        self._counts["failures"] += 1
        if self._failing_since is None:
            self._failing_since = time.monotonic()
            self._log.warning(
                "embedding.failed", what=what, error=error.message, fallback="lexical recall"
            )

    def _recovered(self) -> None:
        if self._failing_since is not None:
            self._failing_since = None
            self._log.info("embedding.recovered")

    async def query(self, text: str) -> array[float] | None:
        """The vector of a recall's query, within ``query_timeout``; None (a lexical
        recall) when embedding is off, nothing is embedded yet, or the provider fails —
        while it fails, it is asked again only every ``retry_after`` seconds."""
        if not self.enabled or not len(self.index) or not text.strip():
            return None
        if self._failing_since is not None and (
            time.monotonic() - self._failing_since < self._config.retry_after
        ):
            self._counts["queries_lexical"] += 1
            return None
        started = time.perf_counter()
        try:
            vectors = await self._embedder().embed(
                [text[:_MAX_TEXT]], seconds=self._config.query_timeout
            )
        except EmbedError as error:
            self._failed(error, "query")
            self._counts["queries_lexical"] += 1
            return None
        finally:
            waited = time.perf_counter() - started
            self._query_seconds += waited
            self._query_latency.add(waited)
        self._recovered()
        self._counts["queries"] += 1
        if self.index.dimensions is None:
            self.index.dimensions = len(vectors[0])
        return vectors[0]

    async def nearest(self, vector: array[float], n: int) -> Near:
        """The ``n`` memories nearest to a query's ``vector`` (from :meth:`query`) with
        their cosine, and the spread of its cosines over the soul."""
        started = time.perf_counter()
        if self.index.cells > _ON_LOOP_CELLS[self.index.search]:
            # A big soul's search would hold the shared loop: a worker thread does it
            # (numpy lets go of the GIL for the product).
            found = await anyio.to_thread.run_sync(self.index.near, vector, n)
        else:
            found = self.index.near(vector, n)
        self._search_seconds += time.perf_counter() - started
        return found

    async def apply(self) -> None:
        """Write the vectors the worker made (called by the soul, in a turn), then queue
        what waited in the database if the backlog has room again."""
        self._nudged = False
        while self._ready:
            jobs, vectors = self._ready.popleft()
            self._room.set()
            await self._write(jobs, vectors)
        if self._behind and not self._backlog:
            await self._catch_up()

    async def _write(self, jobs: list[_Job], vectors: list[array[float]]) -> None:
        by_event = [job.event_id for job in jobs if job.memory_id is None and job.event_id]
        # Shielded: the vectors taken off ``_ready`` are written, or the turn fails.
        with anyio.CancelScope(shield=True):
            memory_of = await self._store.observation_memories(by_event) if by_event else {}
            wanted = [
                (memory_of.get(job.event_id or 0) if job.memory_id is None else job.memory_id, v)
                for job, v in zip(jobs, vectors, strict=True)
            ]
            named = [(m, v) for m, v in wanted if m is not None]
            # The soul is its store's only writer: what is alive now is alive at the write.
            alive = (
                await self._store.write_vectors(self.model, [(m, pack(v)) for m, v in named])
                if named
                else set()
            )
        kept = [(m, v) for m, v in named if m in alive]
        for memory_id, vector in kept:
            if self.index.dimensions is None:
                self.index.dimensions = len(vector)
            self.index.put(memory_id, vector)
        self._counts["embedded"] += len(kept)
        self._counts["gone"] += len(jobs) - len(kept)

    async def rebuild(self) -> int:
        """Drop every stored vector and make them again, in the background (``soupd
        rebuild``: the vectors are derived state, like the index). Returns how many
        were dropped."""
        if not self.enabled:
            return 0
        dropped = await self._store.drop_vectors()
        self.index = VectorIndex(self.model, self._config.dimensions)
        self._backlog.clear()
        self._bytes = 0
        self._counts["rebuilt"] += 1
        await self._catch_up()
        return dropped

    async def forgotten(self) -> None:
        """Drop from the index the vectors ``forget`` deleted (with their memories)."""
        if not self.enabled or not len(self.index):
            return
        alive = await self._store.vector_ids()
        self.index.drop([m for m in list(self.index.ids()) if m not in alive])

    def statistics(self) -> dict[str, object]:
        """What ``soupd stats`` shows under ``embedding`` (since the soul started):
        ``model``, ``state`` ("ok" or "failing": recall is lexical meanwhile),
        ``backlog`` / ``backlog_bytes`` waiting, ``ready`` (made, not yet written),
        ``vectors`` (in the index), ``embedded`` (written), ``batches``, ``failures``,
        ``search`` ("numpy", or "python" without numpy: slow past a few thousand
        memories), ``ms_per_batch``, ``deferred`` (found the backlog full: caught up later),
        ``gone`` (the memory was forgotten first), ``yielded`` (batches that waited
        for the soul's requests to go first), ``rebuilt`` (times ``rebuild`` made
        them all again), ``queries`` (recalls with a query
        vector) and ``queries_lexical`` (without, the provider failing), ``ms_per_query``
        (waiting for a query's vector; ``query_p50_ms`` its median over the last 1000)
        and ``ms_per_search`` (the nearest memories,
        apart from the rest of the recall). Empty with
        ``provider = "none"``."""
        if not self.enabled:
            return {}
        batches = self._counts["batches"]
        stats: dict[str, object] = {
            "model": self.model,
            "state": "ok" if self._failing_since is None else "failing",
            "backlog": len(self._backlog),
            "backlog_bytes": self._bytes,
            "ready": sum(len(jobs) for jobs, _ in self._ready),
            "vectors": len(self.index),
            "search": self.index.search,
            "ms_per_batch": round(1000 * self._batch_seconds / batches, 3) if batches else 0.0,
        }
        queries = self._counts["queries"]
        stats["ms_per_query"] = round(1000 * self._query_seconds / queries, 3) if queries else 0.0
        stats["ms_per_search"] = round(1000 * self._search_seconds / queries, 3) if queries else 0.0
        stats["query_p50_ms"] = self._query_latency.percentile_ms(50) or 0.0
        for key in (
            "embedded",
            "batches",
            "failures",
            "deferred",
            "gone",
            "rebuilt",
            "queries",
            "queries_lexical",
            "yielded",
        ):
            stats[key] = self._counts[key]
        return stats
