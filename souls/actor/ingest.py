"""Ingest: a running soul's write path, from incoming events to committed rows.

One :meth:`Ingest.ingest` call is one transaction. Its events are gated
(:class:`~souls.intake.intake.Intake`), tagged with the person who sent them, de-duplicated,
perceived by the mind and the knowledge layer, and appended together with the turn's
pending :class:`~souls.store.changes.Changes`. Invariants a caller may rely on:

* One outcome per event, in order: a :class:`~souls.results.PushResult` (``stored``,
  ``dropped`` or ``duplicate``; a stored one with its surprise and the novel tokens that
  made it) or the :class:`~supervisor.errors.SoupdError` that rejected it. A duplicate
  is one whose ``ref`` is stored already or comes earlier in the same call, or the same
  sentence from the same sender through another channel within ``[knowledge]
  same_event_window`` (an *echo*: no false corroboration).
* Nothing is written unless an event is fresh or the changes are non-empty. When
  something is, ``committed`` is awaited with the changes just written, before the
  call returns: the caller starts a fresh set there.
* The reason to reflect is returned, never acted on: the caller reflects once it has
  acknowledged the events. While the soul is busy, a periodic reason is withheld (for
  up to ``[reflect] max_deferral`` observations); a surprise never is (only the storm
  guard of ``[surprise]``, by time, may hold one back).
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Awaitable, Callable, Sequence

import msgspec
import structlog

from souls.actor.clock import Clock
from souls.actor.cognition import Emit, Mind
from souls.actor.mailbox import Mailbox
from souls.config import SoulConfig
from souls.events import EventIn
from souls.intake.intake import Dropped, Intake
from souls.knowledge.knowledge import Knowledge, Plan
from souls.knowledge.persons import Persons
from souls.messages import Message
from souls.results import MAX_REASONS, ImportResult, PushResult, Rejection
from souls.store.changes import Changes
from souls.store.interface import SoulStore
from souls.store.store import NewEvent
from supervisor.errors import SoupdError
from supervisor.pace import Pacer

__all__ = ["Committed", "Ingest", "Offer", "Outcome", "tally"]

Outcome = PushResult | SoupdError
# Called with the changes a transaction just wrote (see the module docstring).
Committed = Callable[[Changes], Awaitable[None]]
# Called, without waiting, with the ids and events a transaction just stored: the LLM
# extractor's backlog (souls/actor/extraction.py).
Offer = Callable[[Sequence[int], Sequence[NewEvent]], None]


class Ingest:
    """The write path of one soul, built once its store and mind are open.

    ``rejected`` counts rejections by error code; it belongs to the caller, which
    reports it."""

    def __init__(
        self,
        config: SoulConfig,
        clock: Clock,
        *,
        intake: Intake,
        rejected: Counter[str],
        store: SoulStore,
        mind: Mind,
        knowledge: Knowledge,
        persons: Persons,
        mailbox: Mailbox[Message],
        committed: Committed,
        emit: Emit,
        offer: Offer | None = None,
    ) -> None:
        self._config = config
        self._clock = clock
        self._intake = intake
        self._rejected = rejected
        self._store = store
        self._mind = mind
        self._knowledge = knowledge
        self._persons = persons
        self._mailbox = mailbox
        self._committed = committed
        self._emit = emit
        self._offer = offer
        self._log = structlog.get_logger("soupd.soul")

    async def ingest(
        self, events: Sequence[EventIn], changes: Changes, *, load: float
    ) -> tuple[list[Outcome], str | None]:
        """Gate, de-duplicate and commit ``events`` with ``changes`` in one transaction.
        Returns one outcome per event, and why to reflect now, if so. ``load``: the
        soul's messages per turn, smoothed (a busy soul defers a periodic reflect)."""
        store, mind = self._store, self._mind
        now = self._clock.now()
        outcomes: list[Outcome | None] = [None] * len(events)
        admitted: list[tuple[int, NewEvent]] = []
        world = mind.world if self._config.cognition else None
        intake, persons = self._intake, self._persons
        pace = Pacer()
        for index, event in enumerate(events):
            await pace()
            try:
                verdict = await intake.admit(event, now, world, pace)
            except SoupdError as error:
                self._rejected[error.code] += 1
                self._log.info("event.rejected", code=error.code, ref=intake.shown(event.ref))
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

        reasons = await mind.perceive([new for _, new in fresh], changes, pace)
        if "periodic" in reasons and self._defer_periodic(load):
            reasons = [None] * len(reasons)
        plan = Plan()
        if fresh and self._config.cognition:
            await pace()
            plan = await self._knowledge.perceive([new for _, new in fresh], pace)
        if fresh or changes:
            ids = await store.append(
                [new for _, new in fresh], plan.joined(changes) if plan else changes, now
            )
            self._knowledge.committed(plan, ids)
            if self._offer is not None and fresh:
                self._offer(ids, [new for _, new in fresh])
            await self._committed(changes)
            debug = self._log.is_enabled_for(logging.DEBUG)
            pace.restart()
            for (index, new), event_id, why in zip(fresh, ids, reasons, strict=True):
                await pace()
                # The world the event was measured against: it changes only at reflect,
                # which comes after this call.
                novel = world.novel(new.doc.split()) if world is not None and new.surprise else []
                outcomes[index] = PushResult(
                    event_id, new.salience, "stored", new.surprise, why is not None, novel
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

    def direct(self, events: Sequence[EventIn], outcomes: Sequence[Outcome]) -> None:
        """Publish the direct messages just stored for the responder, when this soul
        answers (``[answer] enabled``): the kinds it answers, and mentions."""
        config = self._config.answer
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

    async def _echoes(self, events: Sequence[NewEvent]) -> dict[int, tuple[int, float]]:
        """Events that repeat a stored one said by the same sender through another
        channel within ``[knowledge] same_event_window`` seconds: the same sentence
        arriving by two paths is one event (no false corroboration). By position."""
        window = self._config.knowledge.same_event_window
        if not window:
            return {}
        store = self._store
        found: dict[int, tuple[int, float]] = {}
        for position, new in enumerate(events):
            if new.channel is not None and new.sender is not None:
                echo = await store.echo(new, window)
                if echo is not None:
                    found[position] = echo
        return found

    def _defer_periodic(self, load: float) -> bool:
        """Whether a periodic reflect should wait for a quieter turn: while the soul is
        busy (big turns lately, or mail waiting), up to ``max_deferral`` observations. A
        reflect reads at most ``max_observations`` of them, so a flood costs a bounded
        reflect now and then rather than one per turn. Surprise never waits."""
        config = self._config.reflect
        busy = load >= config.busy_turn or self._mailbox.statistics().queued > 0
        return busy and self._mind.clock.since < config.max_deferral


def tally(result: ImportResult, start: int, outcomes: Sequence[Outcome]) -> None:
    """Count one chunk of an import into ``result``; ``start`` is the chunk's first
    index in the import. At most ``MAX_REASONS`` rejections are listed, then
    ``reasons_truncated`` says more were left out."""
    for offset, outcome in enumerate(outcomes):
        if isinstance(outcome, SoupdError):
            result.rejected += 1
            if len(result.reasons) < MAX_REASONS:
                result.reasons.append(Rejection(start + offset, outcome.code, outcome.message))
            else:
                result.reasons_truncated = True
        elif outcome.status == "stored":
            result.stored += 1
        elif outcome.status == "dropped":
            result.dropped += 1
        else:
            result.duplicate += 1
