"""Intake: one event through the hygiene gate, its time, and the attention gate.

A step without I/O that turns an ``EventIn`` into a row ready to store, a drop, or an
error; it gives the event loop back between its costly parts (see supervisor.pace). It
is the soul's one write boundary: nothing reaches the store otherwise.
"""

from __future__ import annotations

from dataclasses import dataclass

from souls.events import EventIn, event_time
from souls.intake.attention_gate import AttentionConfig, AttentionGate
from souls.intake.field_screen import screen, shown
from souls.intake.hygiene_gate import HygieneConfig, HygieneGate
from souls.intake.offload import checked_words
from souls.intake.surprise import WorldModel
from souls.store.store import NewEvent
from supervisor.errors import InvalidParams
from supervisor.pace import Pacer

__all__ = ["Dropped", "Intake"]


@dataclass(frozen=True, slots=True)
class Dropped:
    """Below the attention threshold: counted, never stored."""

    salience: float


class Intake:
    def __init__(self, hygiene: HygieneConfig, attention: AttentionConfig) -> None:
        self.gate = HygieneGate(hygiene)
        self._hygiene = hygiene
        self._attention = AttentionGate(attention)

    def shown(self, value: str | None) -> str | None:
        """``value`` (a ref) as a log line may carry it (see field_screen.shown)."""
        return shown(value, self.gate)

    async def admit(
        self, event: EventIn, now: float, world: WorldModel | None, pace: Pacer
    ) -> NewEvent | Dropped:
        """Gate ``event`` and measure its surprise against ``world`` (if any), giving the
        event loop back between the steps when ``pace`` says the turn held it a slice
        (a long text is gated and tokenised in a worker process: souls.intake.offload).

        Raises RejectedInput (hygiene) or InvalidParams (bad time)."""
        words = await checked_words(self._hygiene, self.gate, event.text)
        screen(self.gate, event, skip=("text",))
        await pace()
        try:
            ts = event_time(event.ts, now)
        except ValueError as exc:
            raise InvalidParams(str(exc)) from None
        salience = self._attention.score(
            kind=event.kind, text=event.text, group=event.group, mentioned=event.mentioned
        )
        if not self._attention.admits(salience):
            return Dropped(salience)
        return NewEvent(
            ref=event.ref,
            kind=event.kind,
            channel=event.channel,
            sender=event.sender,
            group=event.group,
            mentioned=event.mentioned,
            session=event.session,
            ts=ts,
            recorded=now,
            salience=salience,
            text=event.text,
            doc=" ".join(words),
            surprise=world.novelty(words) if world is not None else 0.0,
        )
