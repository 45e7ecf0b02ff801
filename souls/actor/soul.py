"""The soul actor: one task per soul, the sole owner of its database.

The actor only serialises access; what a soul *does* lives in plain functions and
small classes: its :class:`~souls.actor.cognition.Mind`, its write path
(:class:`~souls.actor.ingest.Ingest`), its answers to recall and context
(:class:`~souls.actor.recollection.Recollection`), its cards (:class:`~souls.actor.deck.Deck`) and
the requests on its knowledge and persons (:class:`~souls.actor.knowing.Knowing`). Invariants:

* Mail is handled in turns: up to ``mailbox.batch`` messages at once. Consecutive
  ``Observe`` messages are gated together and committed in one transaction (group
  commit); each is acknowledged only after that transaction committed. Any other
  message first flushes the observations before it, so mail keeps its order.
* A crash fails the replies of the message(s) that caused it (nothing of them was
  committed), hands the rest of the turn back to the mailbox, and propagates to the
  supervisor, which restarts the soul from its database; the mailbox, and the mail
  in it, outlive the crash.
* Derived state a turn changes (markers, edges, reflect counters, summaries...) is
  gathered in one :class:`~souls.store.changes.Changes` and committed with the turn's
  events, or on its own at the end of the turn.
* A reflect runs after the events that triggered it were committed and acknowledged:
  a failing reflect can never cost an acknowledged event.
* On cancellation (the supervisor stopping the soul) the turn in flight and the mail
  already queued are finished within the soul's shutdown budget before the store
  closes: a shutdown never drops an event that was queued.
* Idle for ``[lifecycle] hibernate_after`` seconds, the soul *hibernates*: it closes
  its store and :meth:`Soul.run` returns, leaving its mail queued in the mailbox for
  the next incarnation. Housekeeping mail (scheduled jobs, task syncs, pings) does not
  count as activity: a soul woken only for housekeeping hibernates right after it.
"""

from __future__ import annotations

import errno
import math
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import TypeVar

import anyio
import anyio.abc
import msgspec
import structlog

from souls.actor.agenda import Agenda
from souls.actor.brain import Brain
from souls.actor.clock import Clock
from souls.actor.cognition import Emit, Mind
from souls.actor.deck import Deck
from souls.actor.embedding import Embedding
from souls.actor.extraction import Extraction
from souls.actor.ingest import Ingest, Offer, tally
from souls.actor.knowing import KNOWING, Knowing
from souls.actor.mailbox import Envelope, Mailbox
from souls.actor.memories import MemoryUpdated, event_of, memory_item, memory_page
from souls.actor.metrics import LatencyWindow
from souls.actor.recollection import Recollection, scope_of
from souls.actor.rights import DataRights, ForgetResult
from souls.collision.cards import CardStore
from souls.config import SoulConfig
from souls.events import EventIn
from souls.intake.field_screen import screen
from souls.intake.intake import Dropped, Intake
from souls.knowledge.knowledge import Knowledge
from souls.knowledge.persons import Persons
from souls.messages import (
    AddTask,
    Backup,
    CardAdd,
    CardNote,
    Cards,
    Confidence,
    Context,
    Crash,
    Decay,
    Embedded,
    Export,
    Extracted,
    Forget,
    Homeostasis,
    Import,
    Judge,
    LastRuns,
    Ledger,
    Lightning,
    MemoryDelete,
    MemoryGet,
    MemoryList,
    MemoryUpdate,
    Message,
    Observe,
    Ping,
    Rebuild,
    Recall,
    Reflect,
    Stats,
    StatusPage,
    SyncTasks,
    Tide,
    Wakeup,
    Weekly,
)
from souls.results import (
    DecayResult,
    ImportResult,
    PushResult,
    ReflectResult,
    SoulStats,
    TasksResult,
)
from souls.store.changes import Changes
from souls.store.interface import SoulStore
from souls.store.store import NewEvent, Scope, Store
from supervisor.errors import (
    DiskFull,
    InjectedFault,
    InvalidParams,
    LeaseLost,
    SoulUnavailable,
    SoupdError,
)
from supervisor.pace import Pacer
from supervisor.tree import shielded_cleanup

__all__ = ["Soul", "StoreOpener"]

# Opens the soul's store when it starts (on the shared PostgreSQL store: under its lease).
StoreOpener = Callable[[], Awaitable[SoulStore]]

# Mail that does not keep a soul awake: what the scheduler and health checks send.
_HOUSEKEEPING = (Decay, Weekly, Homeostasis, Wakeup, LastRuns, SyncTasks, Ping, Extracted, Embedded)
# Requests whose texts the field screen does not read here: events pass the whole
# gate one by one in intake (an import refuses only its bad lines), and a forget's
# ref or pattern is never stored and must reach a secret stored before a rule knew it.
_SCREENED_ELSEWHERE = (Observe, Import, Forget)
_T = TypeVar("_T")


class Soul:
    def __init__(
        self,
        name: str,
        config: SoulConfig,
        *,
        db_path: Path,
        brain_dir: Path,
        clock: Clock,
        emit: Emit | None = None,
        open_store: StoreOpener | None = None,
    ) -> None:
        """``open_store``: how the store is opened when the soul starts (default: the
        SQLite file at ``db_path``)."""
        self.name = name
        self.config = config
        self._db_path = db_path
        self._open_store = open_store or self._open_file
        self._brain = Brain(brain_dir)
        self._clock = clock
        self._intake = Intake(config.hygiene, config.attention)
        self._recall_latency = LatencyWindow()
        self._rejected: Counter[str] = Counter()
        self._log = structlog.get_logger("soupd.soul")
        self._emit: Emit = emit or _ignore
        self._mailbox: Mailbox[Message] | None = None
        # Messages per turn, smoothed: a flood shows as big turns with small ones between.
        self._load = 0.0
        self._store: SoulStore | None = None
        self._mind: Mind | None = None
        self._agenda: Agenda | None = None
        self._cards: CardStore | None = None
        self._knowledge: Knowledge | None = None
        self._ingest: Ingest | None = None
        self._recollection: Recollection | None = None
        self._deck: Deck | None = None
        self._knowing: Knowing | None = None
        self._extraction: Extraction | None = None
        self._embedding: Embedding | None = None
        # Derived-state changes of the turn in progress, committed once per turn.
        self._changes = Changes()
        # What the turn is handling right now: what a crash is blamed on.
        self._current: Sequence[Envelope[Message]] = ()
        # When a full disk was last logged (once a minute at most while it stays full).
        self._disk_full_logged = -math.inf

    async def run(
        self,
        mailbox: Mailbox[Message],
        *,
        task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED,
        active_at: float | None = None,
    ) -> None:
        """Open the store, then handle mail until the mailbox is closed and empty, or
        until the soul hibernates (returns after ``[lifecycle] hibernate_after`` seconds
        without mail that keeps it awake). ``active_at``: when, on the
        ``anyio.current_time()`` clock, it last had such mail (default: now)."""
        structlog.contextvars.bind_contextvars(soul=self.name)
        self._mailbox = mailbox
        store = await self._open_store()
        self._store = store
        mind = self._mind = Mind(self.name, self.config, store, self._brain, self._emit)
        self._agenda = Agenda(store, self._brain, self._intake.gate)
        cards = self._cards = CardStore(store, self._brain.root / "cards")
        persons = Persons(store)
        knowledge = self._knowledge = Knowledge(store, self.config.knowledge, self._intake.gate)
        extraction = self._extraction = Extraction(
            self.config, self._clock, store=store, entries=knowledge.entries, mailbox=mailbox
        )
        embedding = self._embedding = Embedding(self.config.embedding, store=store, mailbox=mailbox)
        self._ingest = Ingest(
            self.config,
            self._clock,
            intake=self._intake,
            rejected=self._rejected,
            store=store,
            mind=mind,
            knowledge=knowledge,
            persons=persons,
            mailbox=mailbox,
            committed=self._committed,
            emit=self._emit,
            offer=_offers(extraction, embedding),
        )
        self._recollection = Recollection(
            self.name,
            self.config,
            self._clock,
            mind=mind,
            knowledge=knowledge,
            brain=self._brain,
            latency=self._recall_latency,
            embedding=embedding,
        )
        self._deck = Deck(
            self.name,
            self.config,
            self._clock,
            store=store,
            cards=cards,
            mind=mind,
            root=self._brain.root,
            emit=self._emit,
        )
        self._knowing = Knowing(
            self.name, self._clock, store=store, knowledge=knowledge, persons=persons
        )
        batch: list[Envelope[Message]] = []
        try:
            await self._brain.ensure()
            await mind.load()
            await knowledge.load()
            await persons.load()
            await embedding.load()
            task_status.started()
            active = anyio.current_time() if active_at is None else active_at
            async with extraction.running(), embedding.running():
                while True:
                    try:
                        batch = await self._next_batch(mailbox, active)
                    except anyio.EndOfStream:
                        return
                    if not batch:
                        self._log.info("soul.hibernating")
                        return
                    if not all(isinstance(e.message, _HOUSEKEEPING) for e in batch):
                        active = anyio.current_time()
                    try:
                        await self._turn(batch)
                    except DiskFull as full:
                        await self._disk_full(full, mailbox, batch)
                    except LeaseLost as lost:
                        # Another daemon owns the soul now (the shared store): this one
                        # stops serving it, as if hibernating; what it was handling
                        # stored nothing and is failed, the rest waits for the owner.
                        self._uncommitted(lost, mailbox, batch)
                        self._log.warning("soul.lease_lost", epoch=lost.epoch)
                        return
                    batch = []
        except anyio.get_cancelled_exc_class():
            with shielded_cleanup():
                await self._drain(mailbox, batch)
            raise
        except BaseException:
            # The message(s) being handled caused the crash: fail them (nothing of them
            # was committed). The rest of the turn goes back to the mailbox for the
            # restarted soul, so a crash costs only the mail that caused it.
            crashed = SoulUnavailable(
                f"soul {self.name!r} crashed while handling this request and is restarting; "
                "nothing of it was stored, send it again"
            )
            for envelope in self._current:
                if envelope.reply is not None:
                    envelope.reply.fail(crashed)
                envelope.done = True
            mailbox.redeliver(e for e in batch if not e.done)
            raise
        finally:
            self._store = self._mind = self._agenda = self._cards = self._knowledge = None
            self._ingest = self._recollection = self._deck = self._knowing = None
            self._extraction = self._embedding = None
            with anyio.CancelScope(shield=True):
                await mind.aclose()
                await store.close()

    async def _open_file(self) -> SoulStore:
        return await Store.open(
            self._db_path,
            synchronous=self.config.store.synchronous,
            context_turns=self.config.recall.context_turns,
        )

    async def _next_batch(
        self, mailbox: Mailbox[Message], active: float
    ) -> list[Envelope[Message]]:
        """The next turn's mail; empty once the soul has been idle ``hibernate_after``
        seconds since ``active`` (never when that is 0)."""
        limit, idle = self.config.mailbox.batch, self.config.lifecycle.hibernate_after
        if not idle:
            return await mailbox.receive_batch(limit)
        batch = mailbox.receive_ready(limit)
        if batch:
            return batch
        # Giving up the wait loses no mail: a memory stream hands an envelope only to a
        # receiver with no cancellation pending, and one handed over is returned.
        with anyio.move_on_after(max(active + idle - anyio.current_time(), 0.0)):
            return await mailbox.receive_batch(limit)
        return []

    async def _drain(self, mailbox: Mailbox[Message], in_flight: list[Envelope[Message]]) -> None:
        """Finish the interrupted turn and the queued mail (already inside a shield)."""
        pending = [e for e in in_flight if not e.done]
        while True:
            pending.extend(mailbox.receive_ready(self.config.mailbox.batch))
            if not pending:
                return
            await self._turn(pending)
            self._log.info("soul.drained", messages=len(pending))
            pending = []

    async def _turn(self, batch: Sequence[Envelope[Message]]) -> None:
        started = time.perf_counter()
        self._load = 0.8 * self._load + 0.2 * len(batch)
        observed: list[Envelope[Message]] = []
        for envelope in batch:
            if envelope.reply is not None and envelope.reply.settled:
                # Settled before its turn: its requester is gone (a socket client that
                # hung up), so nobody waits for this work.
                envelope.done = True
                continue
            if isinstance(envelope.message, Observe):
                observed.append(envelope)
                continue
            if observed:
                await self._observe(observed)
                observed = []
            self._current = (envelope,)
            await self._handle(envelope)
        if observed:
            await self._observe(observed)
        self._current = ()
        await self._commit_changes()
        self._log.debug(
            "soul.turn",
            messages=len(batch),
            ms=round((time.perf_counter() - started) * 1000, 3),
        )

    async def _observe(self, envelopes: Sequence[Envelope[Message]]) -> None:
        self._current = envelopes
        events = [e.message.event for e in envelopes if isinstance(e.message, Observe)]
        ingest = self._require_ingest()
        outcomes, reason = await ingest.ingest(events, self._changes, load=self._load)
        triggers: list[tuple[Envelope[Message], PushResult]] = []
        for envelope, outcome in zip(envelopes, outcomes, strict=True):
            envelope.done = True
            if isinstance(outcome, PushResult) and outcome.reflected:
                # Answered once the reflect is done: "reflected" means MEMORY.md is new.
                triggers.append((envelope, outcome))
            elif envelope.reply is None:
                continue
            elif isinstance(outcome, SoupdError):
                envelope.reply.fail(outcome)
            else:
                envelope.reply.resolve(outcome)
        await self._require_deck().session_draws(events, outcomes, self._changes)
        ingest.direct(events, outcomes)
        if reason is not None:

            def answer(reflected: bool) -> None:
                for envelope, outcome in triggers:
                    if envelope.reply is not None and not envelope.reply.settled:
                        result = msgspec.structs.replace(outcome, reflected=reflected)
                        envelope.reply.resolve(result)

            reflected = False
            try:
                # Answered as soon as MEMORY.md is new, before its card is made.
                reflected = await self._reflect_safely(reason, lambda: answer(True))
            finally:
                # Answered even if the reflect blew up: the event itself is committed.
                answer(reflected)

    async def _disk_full(
        self, full: DiskFull, mailbox: Mailbox[Message], batch: Sequence[Envelope[Message]]
    ) -> None:
        """A write of the turn found the disk full; nothing of it was committed. The mail
        that wrote is failed with ``full``, the rest of the turn goes back to the mailbox,
        and what the soul holds in memory, which may have run ahead of its database, is
        reloaded from it. No restart: reads go on, and writes succeed again as soon as
        there is room."""
        self._uncommitted(full, mailbox, batch)
        if (now := anyio.current_time()) - self._disk_full_logged >= 60:
            self._disk_full_logged = now
            self._log.warning("soul.disk_full", path=full.path, fix="free space on that disk")
        mind = self._require_mind()
        mind.forget_caches()
        await mind.load()
        await self._require_knowledge().load()

    def _uncommitted(
        self, error: SoupdError, mailbox: Mailbox[Message], batch: Sequence[Envelope[Message]]
    ) -> None:
        """A write of the turn failed with ``error``, nothing of it committed: the mail
        being handled is failed with it, the rest of the turn goes back to the mailbox,
        the turn's pending changes are dropped."""
        for envelope in self._current:
            if envelope.reply is not None and not envelope.reply.settled:
                envelope.reply.fail(error)
            envelope.done = True
        self._current = ()
        mailbox.redeliver(e for e in batch if not e.done)
        self._changes = Changes()

    async def _committed(self, changes: Changes) -> None:
        """``changes`` were written: let the mind catch up, start a fresh set."""
        self._changes = Changes()
        await self._require_mind().after_write(changes)

    async def _commit_changes(self) -> None:
        if self._changes:
            changes = self._changes
            await self._require_store().flush(changes, self._clock.now())
            await self._committed(changes)

    async def _reflect(
        self, reason: str, reflected: Callable[[], None] | None = None
    ) -> ReflectResult:
        """Reflect and commit its result, then crystallise the new summary into a card
        (raises SoulUnavailable when it cannot). ``reflected`` is called once the new
        summary is committed, before the card is made: the pushes that triggered the
        reflect are answered then, as the card is derived from what they already have."""
        try:
            mind = self._require_mind()
            result = await mind.reflect(reason, self._changes)
            await self._commit_changes()
            if reflected is not None:
                reflected()
            if result.changed:
                await self._require_deck().crystallise(mind.summary.text)
        except (DiskFull, LeaseLost):
            raise  # the turn's own paths: the soul stays up and says so, or rests
        except (OSError, SoupdError) as error:
            if isinstance(error, OSError) and error.errno in (errno.ENOSPC, errno.EDQUOT):
                # MEMORY.md or a card's file: the same full disk as a database write.
                raise DiskFull(error.filename or self._brain.root) from None
            self._log.error("soul.reflect_failed", reason=reason, error=str(error))
            raise SoulUnavailable(
                f"soul {self.name!r} could not reflect ({error}); see the daemon log"
            ) from None
        return result

    async def _reflect_safely(
        self, reason: str, reflected: Callable[[], None] | None = None
    ) -> bool:
        """Reflect after stored events; a failure is logged (by ``_reflect``), never
        raised: the events that triggered it are committed whatever happens here."""
        try:
            await self._reflect(reason, reflected)
        except SoulUnavailable:
            return False
        except DiskFull as full:
            # The events are committed; the reflect that followed them was not. What the
            # mind already holds of it is read back from the database.
            self._log.warning("soul.reflect_disk_full", path=full.path)
            self._changes = Changes()
            mind = self._require_mind()
            mind.forget_caches()
            await mind.load()
            return False
        return True

    async def _handle(self, envelope: Envelope[Message]) -> None:
        message, reply = envelope.message, envelope.reply
        if isinstance(message, Crash):
            raise InjectedFault(f"injected fault in soul {self.name!r}: {message.reason}")
        try:
            if not isinstance(message, _SCREENED_ELSEWHERE):
                screen(self._intake.gate, message)
            match message:
                case Import(events=events):
                    # Shielded: an import commits chunk by chunk, so an interrupted one
                    # could not be resumed without storing its first chunks twice.
                    # Its size is bounded by the frame cap.
                    with anyio.CancelScope(shield=True):
                        result: object = await self._import(events)
                case Recall(query=query, k=k, explain=explain) as asked:
                    recollection = self._require_recollection()
                    result = await recollection.recall(
                        query, k, explain, self._changes, scope=scope_of(asked)
                    )
                case Context(query=query, session=session):
                    recollection = self._require_recollection()
                    result = await recollection.context(query, session, self._changes)
                case Stats():
                    result = await self._stats()
                case Reflect():
                    result = await self._reflect("manual")
                case Weekly(period=period) if await self._ran_lately("weekly", period):
                    result = None
                case Weekly():
                    self._ran("weekly")
                    result = await self._require_mind().weekly_summary(
                        self._clock.now(), self._changes
                    )
                    await self._commit_changes()
                    # The weekly tide comes with the weekly summary.
                    await self._require_deck().tide()
                case Tide(close=close):
                    result = await self._require_deck().tide(close)
                case StatusPage(stamp=stamp):
                    result = {"html": await self._require_deck().status_page(stamp)}
                case Decay(period=period, dry_run=False) if await self._ran_lately("decay", period):
                    result = None
                case Decay(now=now, dry_run=dry_run):
                    when = self._clock.now() if now is None else now
                    result = await self._decay(when, dry_run=dry_run)
                case Homeostasis(period=period) if await self._ran_lately("homeostasis", period):
                    result = None
                case Homeostasis():
                    self._ran("homeostasis")
                    result = await self._require_mind().homeostasis(
                        self._clock.now(), self._changes
                    )
                case Confidence(topic=topic):
                    result = await self._require_mind().confidence(topic, self._changes)
                case SyncTasks():
                    result = await self._require_agenda().sync()
                case AddTask(text=text, due=due):
                    result = await self._add_task(text, due)
                case Wakeup(key=key):
                    result = await self._wakeup(key)
                case LastRuns():
                    result = await self._require_mind().last_runs()
                case Ping():
                    result = "pong"
                case Extracted():
                    await self._running(self._extraction).apply()
                    result = None
                case Embedded():
                    await self._running(self._embedding).apply()
                    result = None
                case Forget() as asked:
                    result = await self._forget(asked)
                case MemoryList() as listing:
                    scope = Scope(
                        listing.sender, listing.session, listing.kind, listing.since, listing.until
                    )
                    store = self._require_store()
                    result = await memory_page(store, scope, listing.cursor, listing.limit)
                case MemoryGet(id=memory_id):
                    result = await memory_item(self._require_store(), memory_id)
                case MemoryDelete(id=memory_id):
                    event_id = await event_of(self._require_store(), memory_id)
                    result = await self._forget_events([event_id])
                case MemoryUpdate(id=memory_id, text=text):
                    result = await self._correct(memory_id, text)
                case Export(cursor=cursor):
                    result = await self._export(cursor)
                case Backup(path=path):
                    target = Path(path)
                    size = await self._rights().backup(target)
                    result = {"path": str(target), "bytes": size}
                case CardAdd() as add:
                    result = await self._require_deck().add(add)
                case CardNote(number=number, text=text):
                    result = await self._require_deck().note(number, text)
                case Cards(strict=strict):
                    result = await self._require_deck().listing(strict)
                case Lightning() as lightning:
                    result = await self._require_deck().lightning(lightning, self._changes)
                case Judge(draw=draw, card=card, verdict=verdict, line=line):
                    result = await self._require_deck().verdict(draw, card, verdict, line)
                case Ledger(limit=limit):
                    result = await self._require_deck().ledger(limit)
                case Rebuild():
                    await self._commit_changes()
                    rebuilt = await self._rights().rebuild(self._clock.now())
                    await self._running(self._embedding).rebuild()
                    files = await self._require_cards().restore()
                    result = msgspec.structs.replace(rebuilt, card_files=files)
                    await self._require_mind().load()
                case _ if isinstance(message, KNOWING):
                    result = await self._require_knowing().handle(message)
                case _:
                    raise InvalidParams(f"soul cannot handle {type(message).__name__}")
        except (DiskFull, LeaseLost):
            # Failed, and the turn's rest redelivered, by the run loop's own path.
            raise
        except SoupdError as error:
            envelope.done = True
            if reply is not None:
                reply.fail(error)
            return
        envelope.done = True
        if reply is not None:
            reply.resolve(result)

    async def _import(self, events: Sequence[EventIn]) -> ImportResult:
        result = ImportResult()
        size = self.config.mailbox.import_batch
        ingest = self._require_ingest()
        for start in range(0, len(events), size):
            chunk = events[start : start + size]
            # Each chunk is its own transaction: it commits the changes it is given and
            # the next one takes the fresh set started then.
            outcomes, reason = await ingest.ingest(chunk, self._changes, load=self._load)
            if reason is not None:
                await self._reflect_safely(reason)
            tally(result, start, outcomes)
        self._log.info(
            "soul.imported",
            stored=result.stored,
            dropped=result.dropped,
            duplicate=result.duplicate,
            rejected=result.rejected,
        )
        return result

    async def _ran_lately(self, job: str, period: float | None) -> bool:
        """Whether the scheduled ``job`` (of ``period`` seconds; None: not scheduled,
        asked for) ran within half its period: here, or on another daemon of the shared
        store, whose run is in the soul's state all the same."""
        if period is None:
            return False
        ran = self._changes.state.get(f"ran.{job}")
        last = float(ran) if ran is not None else (await self._require_mind().last_runs()).get(job)
        if last is None or self._clock.now() - last >= period / 2:
            return False
        self._log.info("soul.job_ran_already", job=job, ran=last)
        return True

    def _ran(self, job: str) -> None:
        """Remember when a scheduled job last ran, so a daemon that was down for its
        time can run it at start (see ``LastRuns``)."""
        self._changes.state[f"ran.{job}"] = repr(self._clock.now())

    async def _add_task(self, text: str, due: float) -> TasksResult:
        try:
            return await self._require_agenda().add(text, due)
        except ValueError as exc:
            raise InvalidParams(f"cannot add that task: {exc}") from None

    async def _wakeup(self, key: str) -> PushResult | None:
        """A due task fires: its wake-up event is stored (once: the task is marked fired
        in the same transaction) and published."""
        task = await self._require_agenda().task(key)
        if task is None:
            return None
        self._changes.fired[key] = self._clock.now()
        event = EventIn(
            text=f"wake-up: {task.text}",
            kind="wakeup",
            channel="schedule",
            ref=f"due:{key}",
            ts=task.due,
        )
        ingest = self._require_ingest()
        (outcome,), reason = await ingest.ingest([event], self._changes, load=self._load)
        self._emit("wakeup", {"key": key, "text": task.text, "due": task.due})
        if reason is not None:
            await self._reflect_safely(reason)
        if isinstance(outcome, SoupdError):
            self._log.warning("soul.wakeup_rejected", key=key, code=outcome.code)
            return None
        return outcome

    async def _decay(self, now: float, *, dry_run: bool = False) -> DecayResult:
        # Pending changes first (as a forget's dry run does), so a dry run counts what
        # the real pass would find. The run's record goes in the pass's own transaction:
        # a crash leaves both or neither, so the next start runs a pass that did not
        # happen, and never one that did (a dry run is no run: the nightly one comes).
        await self._commit_changes()
        ran = None if dry_run else {"ran.decay": repr(self._clock.now())}
        return await self._require_mind().decay(now, dry_run=dry_run, state=ran)

    async def _stats(self) -> SoulStats:
        store = self._require_store()
        counts = await store.counts()
        return SoulStats(
            soul=self.name,
            events=counts.events,
            memories=counts.memories,
            hidden=counts.hidden,
            counters=await store.counters(),
            rejected=dict(self._rejected),
            queued=0,
            mailbox_capacity=self.config.mailbox.capacity,
            recall_p50_ms=self._recall_latency.percentile_ms(50),
            recall_p95_ms=self._recall_latency.percentile_ms(95),
            recalls=self._recall_latency.count,
            last_surprise=self._require_mind().last_surprise,
            extraction=self._running(self._extraction).statistics(),
            embedding=self._running(self._embedding).statistics(),
            **await self._require_mind().table_counts(),
        )

    def _rights(self) -> DataRights:
        return DataRights(self._require_store(), self.config.somatic, self._brain.root)

    async def _forget(self, asked: Forget) -> ForgetResult:
        if asked.dry_run:  # the counts of the real forget, from a transaction rolled back
            await self._commit_changes()
        if asked.memory is not None:
            ids: Sequence[int] = [await event_of(self._require_store(), asked.memory)]
        else:
            ids = await self._rights().matching_events(
                ref=asked.ref, match=asked.match, before=asked.before, everything=asked.everything
            )
        if asked.dry_run:
            counted, _ = await self._rights().forget(
                ids, self._clock.now(), match=asked.match, dry_run=True
            )
            return counted
        return await self._forget_events(ids, asked.match)

    async def _forget_events(self, ids: Sequence[int], match: str | None = None) -> ForgetResult:
        """Forget the events ``ids`` and everything derived from them (rights.forget),
        then bring what the soul holds in memory back in step with its database."""
        await self._commit_changes()
        self._require_knowledge().entries.invalidate()  # claims go with their events
        result, redacted = await self._rights().forget(ids, self._clock.now(), match=match)
        await self._require_cards().rewrite(redacted)
        # Summaries, markers and the index changed under the mind: rebuild it.
        mind = self._require_mind()
        mind.forget_caches()
        await mind.load()
        await self._require_knowledge().load()
        await self._running(self._embedding).forgotten()
        self._log.info("soul.forgot", **msgspec.structs.asdict(result))
        return result

    async def _correct(self, memory_id: int, text: str) -> MemoryUpdated:
        """Memory ``memory_id`` said right: its event forgotten and the corrected one
        stored in its place (see souls/actor/memories.py for why, and what it keeps).
        Nothing changes when the gates refuse the corrected text or would drop it."""
        store = self._require_store()
        old = await memory_item(store, memory_id)
        if old.event_id is None:
            raise InvalidParams(f"memory {memory_id} has no event of its own to correct")
        if text == old.text:
            raise InvalidParams(f"memory {memory_id} already says that; nothing to correct")
        said = await store.stored_event(old.event_id)
        if said is None:  # the soul is its store's only writer: not while it corrects
            raise SoulUnavailable(f"memory {memory_id}'s event is gone; nothing corrected")
        event = EventIn(
            text=text,
            kind=said.kind,
            channel=said.channel,
            sender=said.sender,
            group=said.group,
            mentioned=said.mentioned,
            ref=old.ref,
            ts=said.ts,
            session=said.session,
        )
        mind = self._require_mind()
        world = mind.world if self.config.cognition else None
        verdict = await self._intake.admit(event, self._clock.now(), world, Pacer())
        if isinstance(verdict, Dropped):
            raise InvalidParams(
                f"the corrected text is below the attention threshold (salience "
                f"{verdict.salience:.2f}) and would not be stored; memory {memory_id} is "
                "left as it was"
            )
        forgot = await self._forget_events([old.event_id])
        ingest = self._require_ingest()
        (outcome,), reason = await ingest.ingest([event], self._changes, load=self._load)
        if isinstance(outcome, SoupdError):
            raise outcome
        if outcome.event_id is None:
            raise SoulUnavailable(f"the corrected text of memory {memory_id} was not stored")
        if reason is not None:
            await self._reflect_safely(reason)
        new_id = await store.first_memory(outcome.event_id)
        if new_id is None:
            raise SoulUnavailable(f"the corrected text of memory {memory_id} was not stored")
        self._log.info("soul.memory_corrected", replaced=memory_id, memory=new_id)
        return MemoryUpdated(new_id, outcome.event_id, memory_id, forgot)

    async def _export(self, cursor: str | None) -> dict[str, object]:
        try:
            records, following = await self._rights().export_page(cursor)
        except ValueError as exc:
            raise InvalidParams(f"invalid params for export: {exc}") from None
        return {"records": records, "cursor": following}

    def _running(self, part: _T | None) -> _T:
        """``part`` of the soul while it runs (its store, mind...): SoulUnavailable
        when it does not (before :meth:`run` opened the store, or after it closed it)."""
        if part is None:
            raise SoulUnavailable(f"soul {self.name!r} is not running; retry shortly")
        return part

    def _require_store(self) -> SoulStore:
        return self._running(self._store)

    def _require_mind(self) -> Mind:
        return self._running(self._mind)

    def _require_agenda(self) -> Agenda:
        return self._running(self._agenda)

    def _require_cards(self) -> CardStore:
        return self._running(self._cards)

    def _require_knowledge(self) -> Knowledge:
        return self._running(self._knowledge)

    def _require_knowing(self) -> Knowing:
        return self._running(self._knowing)

    def _require_ingest(self) -> Ingest:
        return self._running(self._ingest)

    def _require_recollection(self) -> Recollection:
        return self._running(self._recollection)

    def _require_deck(self) -> Deck:
        return self._running(self._deck)


def _offers(extraction: Extraction, embedding: Embedding) -> Offer:
    """What ingest offers each transaction's stored events to: both background workers."""

    def offer(ids: Sequence[int], events: Sequence[NewEvent]) -> None:
        extraction.offer(ids, events)
        embedding.offer(ids, events)

    return offer


def _ignore(kind: str, payload: dict[str, object]) -> None:
    """The default output sink: a soul run without a daemon publishes nowhere."""
