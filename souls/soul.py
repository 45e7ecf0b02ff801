"""The soul actor: one task per soul, the sole owner of its database.

The actor only serialises access; what a soul *does* lives in plain functions and
small classes (intake, its :class:`~souls.mind.Mind`, recall, context). Invariants:

* Mail is handled in turns: up to ``mailbox.batch`` messages at once. Consecutive
  ``Observe`` messages are gated together and committed in one transaction (group
  commit); each is acknowledged only after that transaction committed. Any other
  message first flushes the observations before it, so mail keeps its order.
* A crash fails the replies of the message(s) that caused it (nothing of them was
  committed), hands the rest of the turn back to the mailbox, and propagates to the
  supervisor, which restarts the soul from its database; the mailbox, and the mail
  in it, outlive the crash.
* Derived state a turn changes (markers, edges, reflect counters, summaries...) is
  gathered in one :class:`~souls.changes.Changes` and committed with the turn's
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

import datetime as dt
import logging
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import anyio
import anyio.abc
import msgspec
import structlog

from souls.agenda import Agenda
from souls.assembly import choose, goal_candidates, memory_candidates
from souls.brain import Brain
from souls.cards import Card, CardStore, cited, crystallise
from souls.changes import AssemblyRow, Changes
from souls.clock import Clock
from souls.collision import Collider, Collision, pool_card
from souls.config import SoulConfig
from souls.context import assemble
from souls.events import EventIn
from souls.goals import activated
from souls.hygiene import HygieneGate
from souls.intake import Dropped, Intake
from souls.knowledge import Knowledge, Plan
from souls.lightning import weight
from souls.mailbox import Envelope, Mailbox
from souls.messages import (
    AddTask,
    Backup,
    CardAdd,
    CardNote,
    Cards,
    ClaimAdd,
    ClaimChange,
    Claims,
    Confidence,
    Context,
    Crash,
    Decay,
    Export,
    Forget,
    Goals,
    GoalSet,
    Homeostasis,
    Import,
    Judge,
    LastRuns,
    Ledger,
    Lightning,
    MemoryMap,
    Message,
    Observe,
    PersonLink,
    Ping,
    Read,
    Rebuild,
    Recall,
    Reflect,
    Stats,
    StatusPage,
    SyncTasks,
    Tide,
    Wakeup,
    Weekly,
    Why,
)
from souls.messages import Persons as PersonsMessage
from souls.metrics import LatencyWindow
from souls.mind import Emit, Mind
from souls.navigate import memory_map, read
from souls.persons import Persons
from souls.results import (
    MAX_REASONS,
    ContextResult,
    DecayResult,
    ImportResult,
    PushResult,
    RecallItem,
    RecallResult,
    ReflectResult,
    Rejection,
    SoulStats,
    TasksResult,
)
from souls.rights import DataRights, ForgetResult
from souls.statuspage import render_status_page
from souls.store import NewEvent, Store
from souls.tasks import Task, parse_tasks
from souls.tide import TideReport, tide
from supervisor.errors import InjectedFault, InvalidParams, SoulUnavailable, SoupdError
from supervisor.tree import shielded_cleanup

__all__ = ["Soul"]

Outcome = PushResult | SoupdError
# Mail that does not keep a soul awake: what the scheduler and health checks send.
_HOUSEKEEPING = (Decay, Weekly, Homeostasis, Wakeup, LastRuns, SyncTasks, Ping)


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
    ) -> None:
        self.name = name
        self.config = config
        self._db_path = db_path
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
        self._store: Store | None = None
        self._mind: Mind | None = None
        self._agenda: Agenda | None = None
        self._cards: CardStore | None = None
        self._knowledge: Knowledge | None = None
        self._persons: Persons | None = None
        # Derived-state changes of the turn in progress, committed once per turn.
        self._changes = Changes()
        # What the turn is handling right now: what a crash is blamed on.
        self._current: Sequence[Envelope[Message]] = ()

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
        store = await Store.open(
            self._db_path,
            synchronous=self.config.store.synchronous,
            context_turns=self.config.recall.context_turns,
        )
        self._store = store
        mind = self._mind = Mind(self.name, self.config, store, self._brain, self._emit)
        self._agenda = Agenda(store, self._brain)
        self._cards = CardStore(store, self._brain.root / "cards")
        persons = self._persons = Persons(store)
        knowledge = self._knowledge = Knowledge(
            store, self.config.knowledge, HygieneGate(self.config.hygiene)
        )
        batch: list[Envelope[Message]] = []
        try:
            await self._brain.ensure()
            await mind.load()
            await knowledge.load()
            await persons.load()
            task_status.started()
            active = anyio.current_time() if active_at is None else active_at
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
                await self._turn(batch)
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
            self._persons = None
            with anyio.CancelScope(shield=True):
                await mind.aclose()
                await store.close()

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
        self._log.info(
            "soul.turn",
            messages=len(batch),
            ms=round((time.perf_counter() - started) * 1000, 3),
        )

    async def _observe(self, envelopes: Sequence[Envelope[Message]]) -> None:
        self._current = envelopes
        events = [e.message.event for e in envelopes if isinstance(e.message, Observe)]
        outcomes, reason = await self._ingest(events)
        trigger: tuple[Envelope[Message], PushResult] | None = None
        for envelope, outcome in zip(envelopes, outcomes, strict=True):
            envelope.done = True
            if isinstance(outcome, PushResult) and outcome.reflected:
                # Answered once the reflect is done: "reflected" means MEMORY.md is new.
                trigger = (envelope, outcome)
            elif envelope.reply is None:
                continue
            elif isinstance(outcome, SoupdError):
                envelope.reply.fail(outcome)
            else:
                envelope.reply.resolve(outcome)
        await self._session_draws(events, outcomes)
        self._direct(events, outcomes)
        if reason is not None:
            reflected = False
            try:
                reflected = await self._reflect_safely(reason)
            finally:
                # Answered even if the reflect blew up: the event itself is committed.
                if trigger is not None and trigger[0].reply is not None:
                    envelope, outcome = trigger
                    result = msgspec.structs.replace(outcome, reflected=reflected)
                    trigger[0].reply.resolve(result)

    def _direct(self, events: Sequence[EventIn], outcomes: Sequence[Outcome]) -> None:
        """Publish the direct messages just stored for the responder, when this soul
        answers (``[answer] enabled``): the kinds it answers, and mentions."""
        config = self.config.answer
        if not config.enabled:
            return
        for event, outcome in zip(events, outcomes, strict=True):
            stored = isinstance(outcome, PushResult) and outcome.status == "stored"
            if stored and (event.kind in config.kinds or event.mentioned):
                assert isinstance(outcome, PushResult)
                self._emit(
                    "direct",
                    {
                        "event_id": outcome.event_id,
                        "text": event.text,
                        "kind": event.kind,
                        "sender": event.sender,
                        "channel": event.channel,
                        "session": event.session,
                    },
                )

    async def _ingest(self, events: Sequence[EventIn]) -> tuple[list[Outcome], str | None]:
        """Gate, de-duplicate and commit ``events`` (with the turn's changes) in one
        transaction. Returns one outcome per event, and why to reflect now, if so."""
        store = self._require_store()
        mind = self._require_mind()
        now = self._clock.now()
        outcomes: list[Outcome | None] = [None] * len(events)
        admitted: list[tuple[int, NewEvent]] = []
        changes = self._changes
        world = mind.world if self.config.cognition else None
        intake, persons = self._intake, self._require_persons()
        for index, event in enumerate(events):
            try:
                verdict = intake.admit(event, now, world)
            except SoupdError as error:
                self._rejected[error.code] += 1
                self._log.info("event.rejected", code=error.code, ref=event.ref)
                outcomes[index] = error
                continue
            if isinstance(verdict, Dropped):
                changes.counters["dropped.attention"] += 1
                outcomes[index] = PushResult(None, verdict.salience, "dropped")
            else:
                new = verdict
                person = persons.resolve(new.channel, new.sender)
                if person is not None:
                    new = msgspec.structs.replace(new, person=person)
                admitted.append((index, new))

        refs = [new.ref for _, new in admitted if new.ref is not None]
        known = await store.known_refs(refs) if refs else {}
        fresh: list[tuple[int, NewEvent]] = []
        first_of_ref: dict[str, int] = {}  # ref -> position in ``fresh``
        repeats: list[tuple[int, int]] = []  # (event index, position in ``fresh``)
        echoes = await self._echoes([new for _, new in admitted])
        for position, (index, new) in enumerate(admitted):
            if new.ref is not None and new.ref in known:
                event_id, salience = known[new.ref]
                outcomes[index] = PushResult(event_id, salience, "duplicate")
            elif position in echoes:
                event_id, salience = echoes[position]
                outcomes[index] = PushResult(event_id, salience, "duplicate")
            elif new.ref is not None and new.ref in first_of_ref:
                repeats.append((index, first_of_ref[new.ref]))
            else:
                if new.ref is not None:
                    first_of_ref[new.ref] = len(fresh)
                fresh.append((index, new))

        reasons = mind.perceive([new for _, new in fresh], changes)
        if "periodic" in reasons and self._defer_periodic():
            reasons = [None] * len(reasons)
        plan = Plan()
        if fresh and self.config.cognition:
            plan = await self._require_knowledge().perceive([new for _, new in fresh])
        if fresh or changes:
            ids = await store.append(
                [new for _, new in fresh], changes, now, plan.write if plan else None
            )
            self._require_knowledge().committed(plan)
            await self._committed(changes)
            debug = self._log.is_enabled_for(logging.DEBUG)
            for (index, new), event_id, why in zip(fresh, ids, reasons, strict=True):
                outcomes[index] = PushResult(
                    event_id, new.salience, "stored", new.surprise, why is not None
                )
                if debug:
                    with structlog.contextvars.bound_contextvars(event_id=event_id):
                        self._log.debug("event.stored", salience=new.salience, ref=new.ref)
            for index, position in repeats:
                first = fresh[position][1]
                outcomes[index] = PushResult(ids[position], first.salience, "duplicate")
        assert all(o is not None for o in outcomes)
        reason = next((why for why in reasons if why is not None), None)
        return outcomes, reason  # type: ignore[return-value]

    async def _echoes(self, events: Sequence[NewEvent]) -> dict[int, tuple[int, float]]:
        """Events that repeat a stored one said by the same sender through another
        channel within ``[knowledge] same_event_window`` seconds: the same sentence
        arriving by two paths is one event (no false corroboration). By position."""
        window = self.config.knowledge.same_event_window
        if not window:
            return {}
        store = self._require_store()
        found: dict[int, tuple[int, float]] = {}
        for position, new in enumerate(events):
            if new.channel is not None and new.sender is not None:
                echo = await store.echo(new, window)
                if echo is not None:
                    found[position] = echo
        return found

    def _defer_periodic(self) -> bool:
        """Whether a periodic reflect should wait for a quieter turn: while the soul is
        busy (big turns lately, or mail waiting), up to ``max_deferral`` observations. A
        reflect reads at most ``max_observations`` of them, so a flood costs a bounded
        reflect now and then rather than one per turn. Surprise never waits."""
        config, mailbox = self.config.reflect, self._mailbox
        busy = self._load >= config.busy_turn or (
            mailbox is not None and mailbox.statistics().queued > 0
        )
        return busy and self._require_mind().clock.since < config.max_deferral

    async def _committed(self, changes: Changes) -> None:
        """``changes`` were written: let the mind catch up, start a fresh set."""
        self._changes = Changes()
        await self._require_mind().after_write(changes)

    async def _commit_changes(self) -> None:
        if self._changes:
            changes = self._changes
            await self._require_store().flush(changes, self._clock.now())
            await self._committed(changes)

    async def _reflect(self, reason: str) -> ReflectResult:
        """Reflect and commit its result, then crystallise the new summary into a card
        (raises SoulUnavailable when it cannot)."""
        try:
            mind = self._require_mind()
            result = await mind.reflect(reason, self._changes)
            await self._commit_changes()
            if result.changed:
                await self._crystallise(mind.summary.text)
        except (OSError, SoupdError) as error:
            self._log.error("soul.reflect_failed", reason=reason, error=str(error))
            raise SoulUnavailable(
                f"soul {self.name!r} could not reflect ({error}); see the daemon log"
            ) from None
        return result

    async def _reflect_safely(self, reason: str) -> bool:
        """Reflect after stored events; a failure is logged (by ``_reflect``), never
        raised: the events that triggered it are committed whatever happens here."""
        try:
            await self._reflect(reason)
        except SoulUnavailable:
            return False
        return True

    async def _handle(self, envelope: Envelope[Message]) -> None:
        message, reply = envelope.message, envelope.reply
        if isinstance(message, Crash):
            raise InjectedFault(f"injected fault in soul {self.name!r}: {message.reason}")
        try:
            match message:
                case Import(events=events):
                    # Shielded: an import commits chunk by chunk, so an interrupted one
                    # could not be resumed without storing its first chunks twice.
                    # Its size is bounded by the frame cap.
                    with anyio.CancelScope(shield=True):
                        result: object = await self._import(events)
                case Recall(query=query, k=k, explain=explain):
                    result = await self._recall(query, k, explain)
                case Context(query=query, session=session):
                    result = await self._context(query, session)
                case Stats():
                    result = await self._stats()
                case Reflect():
                    result = await self._reflect("manual")
                case Weekly():
                    self._ran("weekly")
                    result = await self._require_mind().weekly_summary(
                        self._clock.now(), self._changes
                    )
                    await self._commit_changes()
                    await self._tide()  # the weekly tide comes with the weekly summary
                case Tide():
                    result = await self._tide()
                case StatusPage(stamp=stamp):
                    result = {"html": await self._status_page(stamp)}
                case Decay(now=now):
                    self._ran("decay")
                    result = await self._decay(self._clock.now() if now is None else now)
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
                case Forget(ref=ref, match=match, before=before, everything=everything):
                    result = await self._forget(ref, match, before, everything)
                case Export(cursor=cursor):
                    result = await self._export(cursor)
                case Backup(path=path):
                    target = Path(path)
                    size = await self._rights().backup(target)
                    result = {"path": str(target), "bytes": size}
                case CardAdd() as add:
                    result = await self._add_card(add)
                case CardNote(number=number, text=text):
                    try:
                        result = await self._require_cards().note(number, text, self._clock.now())
                    except ValueError as exc:
                        raise InvalidParams(f"cannot add that note: {exc}") from None
                case Cards(strict=strict):
                    cards = self._require_cards()
                    problems = await cards.check() if strict else []
                    result = {"cards": await cards.all(), "problems": problems}
                case Lightning() as lightning:
                    result = await self._lightning(lightning)
                case Judge(draw=draw, card=card, verdict=verdict, line=line):
                    try:
                        result = await self._require_collider().verdict(
                            draw, card, verdict, line, self._clock.now()
                        )
                    except ValueError as exc:
                        raise InvalidParams(f"cannot record that verdict: {exc}") from None
                case Ledger(limit=limit):
                    collider = self._require_collider()
                    result = {
                        "draws": await collider.ledger(limit),
                        "silence_rate": await collider.silence_rate(),
                    }
                case Rebuild():
                    await self._commit_changes()
                    result = await self._rights().rebuild(self._clock.now())
                    await self._require_mind().load()
                case ClaimAdd() | ClaimChange() | Claims() | GoalSet() | Goals():
                    result = await self._knowing(message)
                case Why(hash=wanted):
                    result = await self._require_knowledge().assembly(wanted)
                    if result is None:
                        raise InvalidParams(
                            f"no context {wanted!r} was assembled by soul {self.name!r}"
                            if wanted
                            else f"soul {self.name!r} has assembled no context yet"
                        )
                case PersonLink(person=person, channel=channel, external=external):
                    try:
                        result = await self._require_persons().link(
                            person, channel, external, self._clock.now()
                        )
                    except ValueError as exc:
                        raise InvalidParams(str(exc)) from None
                case PersonsMessage():
                    result = {"persons": await self._require_persons().all()}
                case MemoryMap(budget=budget):
                    store, knowledge = self._require_store(), self._require_knowledge()
                    result = {"map": await memory_map(store, knowledge, budget)}
                case Read(id=label):
                    try:
                        result = await read(self._require_store(), self._require_knowledge(), label)
                    except (ValueError, LookupError) as exc:
                        raise InvalidParams(str(exc)) from None
                case _:
                    raise InvalidParams(f"soul cannot handle {type(message).__name__}")
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
        for start in range(0, len(events), size):
            outcomes, reason = await self._ingest(events[start : start + size])
            if reason is not None:
                await self._reflect_safely(reason)
            for offset, outcome in enumerate(outcomes):
                if isinstance(outcome, SoupdError):
                    result.rejected += 1
                    if len(result.reasons) < MAX_REASONS:
                        result.reasons.append(
                            Rejection(start + offset, outcome.code, outcome.message)
                        )
                    else:
                        result.reasons_truncated = True
                elif outcome.status == "stored":
                    result.stored += 1
                elif outcome.status == "dropped":
                    result.dropped += 1
                else:
                    result.duplicate += 1
        self._log.info(
            "soul.imported",
            stored=result.stored,
            dropped=result.dropped,
            duplicate=result.duplicate,
            rejected=result.rejected,
        )
        return result

    def _k(self, k: int | None) -> int:
        config = self.config.recall
        if k is None:
            return config.k
        if not 1 <= k <= config.max_k:
            raise InvalidParams(
                f"k must be between 1 and {config.max_k} for soul {self.name!r} "
                "(raise [recall] max_k in its TOML to allow more)"
            )
        return k

    async def _recall(self, query: str, k: int | None, explain: bool = False) -> RecallResult:
        limit = self._k(k)
        started = time.perf_counter()
        found = await self._require_mind().recall(
            query, limit, self._changes, now=self._clock.now(), explain=explain
        )
        items = found.items
        if self.config.cognition:
            # Goals join recall by activation: bridge triggers and domains reach them too.
            knowledge = self._require_knowledge()
            goals = [g for g in knowledge.goals.values() if g.state in ("active", "paused")]
            chosen = activated(
                goals,
                query,
                threshold=self.config.knowledge.goal_threshold,
                limit=self.config.knowledge.goals_limit,
            )
            items = items + [c.item for c in goal_candidates(chosen, self._clock.now())]
        self._recall_latency.add(time.perf_counter() - started)
        return RecallResult(items)

    async def _context(self, query: str | None, session: str | None = None) -> ContextResult:
        """The context block: stable sections, then what ranks for ``query`` in retrieval
        or emergence mode (see :mod:`souls.assembly`), within the section, total and
        session budgets; the assembly is logged for ``why``."""
        mind = self._require_mind()
        now = self._clock.now()
        config = self.config.context
        memories: list[RecallItem] = []
        ceiling = 0.0
        if query:
            memories = (await mind.recall(query, config.recall_k, self._changes, now=now)).items
            ceiling = mind.ceiling(query)
        contenders = memory_candidates(memories, ceiling)
        upcoming: list[Task] = []
        if self.config.cognition:
            overdue, upcoming = await self._tasks_due(now)
            contenders += await self._require_knowledge().candidates(query or "", now, overdue)
        ranking, shown, logged = choose(contenders, self.config.potential, config.recall_k)
        paused = ""
        if shown and config.session_chars:
            since = now - config.session_window
            spent = await self._require_knowledge().session_spent(session, since)
            spent += sum(a.recalled for a in self._changes.assemblies if a.session == session)
            if spent >= config.session_chars:
                resume = dt.datetime.fromtimestamp(now + config.session_window, dt.UTC)
                paused = (
                    f"(recalled items paused: this session injected {spent} characters of "
                    f"recalled items in the last {config.session_window:g} s, the budget is "
                    f"{config.session_chars}; they resume by {resume:%Y-%m-%d %H:%M} UTC)"
                )
                logged = []
        result = assemble(
            config,
            identity=await self._brain.identity(),
            summary=mind.summary.text,
            weekly=mind.weekly.text,
            gut_feelings=mind.gut_feelings(query),
            known_gaps=await mind.known_gaps(),
            due_tasks="\n".join(f"- [t{t.line}] {t.text} (due {_utc(t.due)})" for t in upcoming),
            internal_signal=mind.take_signal(self._changes),
            spark=mind.take_spark(self._changes),
            recalled=shown,
            paused=paused,
        )
        recalled = next((s for s in result.sections if s.name == "recalled"), None)
        injected = set(recalled.items) if recalled is not None and not paused else set()
        logged = [item for item in logged if item.id in injected]
        mode = "none" if not contenders else ranking.mode
        self._changes.assemblies.append(
            AssemblyRow(
                hash=result.hash,
                session=session,
                query=query,
                mode=mode,
                chars=len(result.text),
                recalled=recalled.chars if recalled is not None and not paused else 0,
                paused=bool(paused),
                items=msgspec.json.encode(logged).decode(),
                sections=msgspec.json.encode(
                    [
                        {"name": s.name, "chars": s.chars, "truncated": s.truncated}
                        for s in result.sections
                    ]
                ).decode(),
            )
        )
        self._log.info(
            "context.assembled",
            hash=result.hash,
            prefix_hash=result.prefix_hash,
            chars=len(result.text),
            mode=mode,
            paused=bool(paused),
            sections=[s.name for s in result.sections],
            items=[item.id for item in logged],
        )
        return result

    async def _tasks_due(self, now: float) -> tuple[list[Task], list[Task]]:
        """Open TASKS.md tasks: those overdue, and those due within ``tasks_hours``."""
        horizon = now + self.config.context.tasks_hours * 3600
        tasks = parse_tasks(await self._brain.tasks()).pending()
        overdue = [t for t in tasks if t.due <= now]
        upcoming = [t for t in tasks if now < t.due <= horizon]
        return overdue, upcoming

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
        (outcome,), reason = await self._ingest([event])
        self._emit("wakeup", {"key": key, "text": task.text, "due": task.due})
        if reason is not None:
            await self._reflect_safely(reason)
        if isinstance(outcome, SoupdError):
            self._log.warning("soul.wakeup_rejected", key=key, code=outcome.code)
            return None
        return outcome

    async def _decay(self, now: float) -> DecayResult:
        await self._commit_changes()
        return await self._require_mind().decay(now)

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
            **await self._require_mind().table_counts(),
        )

    async def _crystallise(self, summary: str) -> None:
        conclusions, questions, tags = crystallise(summary)
        if conclusions:
            card = await self._require_cards().add(
                title="",
                conclusions=conclusions,
                questions=questions,
                tags=tags,
                source="reflect",
                memories=cited(summary),
                now=self._clock.now(),
            )
            self._emit("card", {"number": card.number, "title": card.title})

    async def _add_card(self, add: CardAdd) -> Card:
        try:
            return await self._require_cards().add(
                title=add.title,
                conclusions=add.conclusions,
                questions=add.questions,
                tags=add.tags,
                source="synthesis" if add.members else "manual",
                members=add.members,
                now=self._clock.now(),
            )
        except ValueError as exc:
            raise InvalidParams(f"cannot add that card: {exc}") from None

    async def _session_draws(self, events: Sequence[EventIn], outcomes: Sequence[Outcome]) -> None:
        """A stored session-start event draws cards by itself, when the soul says so."""
        if not self.config.lightning.on_session_start:
            return
        for event, outcome in zip(events, outcomes, strict=True):
            stored = isinstance(outcome, PushResult) and outcome.status == "stored"
            if stored and event.kind == "session_start":
                try:
                    await self._lightning(Lightning(topic=event.text))
                except SoupdError as error:  # too few cards yet, say: the session goes on
                    self._log.info("soul.session_draw_skipped", reason=error.message)

    async def _lightning(self, request: Lightning) -> Collision:
        collision = await self._require_collider().collide(
            request.topic,
            self._clock.now(),
            self.config.lightning,
            self._require_mind().judge(),
            seed=request.seed,
            n=request.n,
            exclude=request.exclude,
        )
        self._log.info(
            "soul.lightning",
            draw=collision.draw,
            seed=collision.seed,
            cards=collision.cards,
            presented=collision.presented,
            criterion=collision.criterion,
            judge=collision.judge,
        )
        if collision.presented:
            self._require_mind().hold_spark(collision.spark, self._changes)
            self._emit(
                "spark",
                {
                    "draw": collision.draw,
                    "cards": collision.cards,
                    "criterion": collision.criterion,
                },
            )
        return collision

    async def _tide(self) -> TideReport:
        now = self._clock.now()
        report = await tide(self._require_store(), now, self.config.hebbian.association_threshold)
        folder = anyio.Path(self._brain.root / "tide")
        await folder.mkdir(parents=True, exist_ok=True)
        stamp = dt.datetime.fromtimestamp(now, dt.UTC).strftime("%Y-%m-%d")
        await (folder / f"{stamp}.md").write_text(report.markdown, encoding="utf-8")
        await (folder / f"{stamp}.html").write_text(report.html, encoding="utf-8")
        self._emit("tide", {"complete": report.complete, "file": f"tide/{stamp}.md"})
        return report

    async def _status_page(self, stamp: str) -> str:
        cards = await self._require_cards().all()
        now = self._clock.now()
        weights = {
            card.number: weight(pool_card(card), now, self.config.lightning) for card in cards
        }
        report = await tide(self._require_store(), now, self.config.hebbian.association_threshold)
        collider = self._require_collider()
        draws = await collider.ledger(10_000)
        mix = await collider.verdict_mix()
        when = stamp or dt.datetime.fromtimestamp(now, dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
        return render_status_page(self.name, cards, weights, draws, mix, report.markdown, when)

    def _require_collider(self) -> Collider:
        return Collider(self.name, self._require_store(), self._require_cards())

    def _require_cards(self) -> CardStore:
        if self._cards is None:
            raise SoulUnavailable(f"soul {self.name!r} is not running; retry shortly")
        return self._cards

    def _rights(self) -> DataRights:
        return DataRights(self._require_store(), self.config.somatic)

    async def _forget(
        self, ref: str | None, match: str | None, before: float | None, everything: bool
    ) -> ForgetResult:
        await self._commit_changes()
        rights = self._rights()
        ids = await rights.matching_events(
            ref=ref, match=match, before=before, everything=everything
        )
        result, redacted = await rights.forget(ids, self._clock.now())
        await self._require_cards().rewrite(redacted)
        # Summaries, markers and the index changed under the mind: rebuild it.
        mind = self._require_mind()
        mind.forget_caches()
        await mind.load()
        await self._require_knowledge().load()
        self._log.info("soul.forgot", **msgspec.structs.asdict(result))
        return result

    async def _export(self, cursor: str | None) -> dict[str, object]:
        try:
            records, following = await self._rights().export_page(cursor)
        except ValueError as exc:
            raise InvalidParams(f"invalid params for export: {exc}") from None
        return {"records": records, "cursor": following}

    def _require_agenda(self) -> Agenda:
        if self._agenda is None:
            raise SoulUnavailable(f"soul {self.name!r} is not running; retry shortly")
        return self._agenda

    async def _knowing(self, message: ClaimAdd | ClaimChange | Claims | GoalSet | Goals) -> object:
        """Claims and goals asked for over the socket (ValueError → a clear client error)."""
        knowledge = self._require_knowledge()
        now = self._clock.now()
        try:
            match message:
                case ClaimAdd() as add:
                    return await knowledge.entries.state(add, now)
                case ClaimChange(action=action, id=claim_id, value=value):
                    return await knowledge.entries.change(action, claim_id, value, now)
                case Claims(every=every):
                    return {
                        "claims": await knowledge.entries.claims(every=every),
                        "questions": await knowledge.entries.questions(state="unanswered"),
                        "fidelity_ai": knowledge.entries.fidelity_ai,
                    }
                case GoalSet(update=update):
                    return await knowledge.update_goal(update, now)
                case Goals():
                    return {"goals": sorted(knowledge.goals.values(), key=lambda g: g.id)}
        except ValueError as exc:
            raise InvalidParams(str(exc)) from None

    def _require_persons(self) -> Persons:
        if self._persons is None:
            raise SoulUnavailable(f"soul {self.name!r} is not running; retry shortly")
        return self._persons

    def _require_knowledge(self) -> Knowledge:
        if self._knowledge is None:
            raise SoulUnavailable(f"soul {self.name!r} is not running; retry shortly")
        return self._knowledge

    def _require_mind(self) -> Mind:
        if self._mind is None:
            raise SoulUnavailable(f"soul {self.name!r} is not running; retry shortly")
        return self._mind

    def _require_store(self) -> Store:
        if self._store is None:
            raise SoulUnavailable(f"soul {self.name!r} is not running; retry shortly")
        return self._store


def _utc(seconds: float) -> str:
    return dt.datetime.fromtimestamp(seconds, dt.UTC).strftime("%Y-%m-%d %H:%M UTC")


def _ignore(kind: str, payload: dict[str, object]) -> None:
    """The default output sink: a soul run without a daemon publishes nowhere."""
