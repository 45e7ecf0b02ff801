"""The deck: a soul's cards and the collisions drawn from them, as its actor serves them.

Cards come from a reflect that changed the summary (:meth:`Deck.crystallise`: what that
reflect concluded and no earlier card says) and from the user (:meth:`Deck.add`,
:meth:`Deck.note`). Lightning draws collide them with a topic (:meth:`Deck.lightning`;
on a stored session start too, when ``[lightning] on_session_start``; ``as_of``
reproduces a recorded draw); the user judges what was presented (:meth:`Deck.verdict`)
and applies the tide's closure proposals (:meth:`Deck.tide` with ``close``); the
ledger, the tide and the status page report on it all. The mechanics live in
:mod:`souls.collision.cards`, :mod:`souls.collision.collider`, :mod:`souls.collision.tide` and
:mod:`souls.collision.status_page`; the deck joins them to the clock, the soul's folder and its
outputs. Invariants a caller may rely on:

* A presented collision is held as the spark of the next context (in the ``changes``
  passed) and published as a ``spark`` output; a silent one leaves only its ledger row.
* A card crystallised from a reflect is published as a ``card`` output.
* A tide is written to ``tide/YYYY-MM-DD.md`` and ``.html`` in the soul's folder and
  published as a ``tide`` output.
* A card, note or verdict the store refuses raises InvalidParams saying why; NotFound
  when the card or draw it names does not exist.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from collections.abc import Set as AbstractSet
from pathlib import Path

import anyio
import structlog

from souls.actor.clock import Clock
from souls.actor.cognition import Emit, Mind
from souls.actor.ingest import Outcome
from souls.collision.cards import Card, CardStore
from souls.collision.collider import Collider, Collision, pool_card
from souls.collision.crystal import CardConfig, Counts, conclude, read_summary
from souls.collision.lightning import weight
from souls.collision.status_page import render_status_page
from souls.collision.tide import TideReport, closures, tide
from souls.config import SoulConfig
from souls.events import EventIn
from souls.messages import CardAdd, Lightning
from souls.mind.reflect import REFLECT_OFFLOAD_CHARS
from souls.results import PushResult
from souls.store.changes import Changes
from souls.store.interface import SoulStore
from supervisor.errors import InvalidParams, MissingItem, NotFound, SoupdError
from supervisor.pace import in_worker

__all__ = ["Deck"]


class Deck:
    """The cards of one running soul, built once its store and mind are open. ``root``
    is the soul's folder (the tide reports go under ``tide/``)."""

    def __init__(
        self,
        name: str,
        config: SoulConfig,
        clock: Clock,
        *,
        store: SoulStore,
        cards: CardStore,
        mind: Mind,
        root: Path,
        emit: Emit,
    ) -> None:
        self._name = name
        self._config = config
        self._clock = clock
        self._store = store
        self._cards = cards
        self._mind = mind
        self._root = root
        self._emit = emit
        self._collider = Collider(name, store, cards)
        self._log = structlog.get_logger("soupd.soul")

    async def crystallise(self, summary: str) -> None:
        """Turn what a new summary concluded into a card (none if it concluded nothing
        that the summary before it and the earlier cards did not already say)."""
        before = await self._store.summary("consolidated", back=1)
        previous = before.text if before is not None else ""
        if len(summary) + len(previous) < REFLECT_OFFLOAD_CHARS:
            reading = read_summary(summary, previous)
        else:  # reading a long summary costs about 0.4 ms per thousand characters
            reading = await in_worker(read_summary, summary, previous)
        rarity = await self._rarity(reading.terms)
        known, people = await self._cards.line_keys(), await self._collider.people()
        draft = conclude(reading, known, rarity, CardConfig(), people)
        if draft.conclusions:
            card = await self._cards.add(
                title="",
                conclusions=draft.conclusions,
                questions=draft.questions,
                tags=draft.tags,
                source="reflect",
                memories=draft.memories,
                now=self._clock.now(),
            )
            self._emit("card", {"number": card.number, "title": card.title})

    async def _rarity(self, wanted: AbstractSet[str]) -> Counts:
        """How many visible memories hold each of ``wanted`` (in their text or their
        neighbouring turns, as recall counts them), and how many there are."""
        stats = await self._store.term_stats()
        return Counts(stats.documents, {t: n for t in wanted if (n := stats.df(t))})

    async def add(self, add: CardAdd) -> Card:
        """A card from the user: a protein (``synthesis``) when it has members."""
        try:
            return await self._cards.add(
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

    async def note(self, number: int, text: str) -> Card:
        try:
            return await self._cards.note(number, text, self._clock.now())
        except MissingItem as exc:
            raise NotFound(f"cannot add that note: {exc}") from None
        except ValueError as exc:
            raise InvalidParams(f"cannot add that note: {exc}") from None

    async def listing(self, strict: bool) -> dict[str, object]:
        """Every card, and (``strict``) where the folder and the database differ."""
        problems = await self._cards.check() if strict else []
        return {"cards": await self._cards.all(), "problems": problems}

    async def session_draws(
        self, events: Sequence[EventIn], outcomes: Sequence[Outcome], changes: Changes
    ) -> None:
        """A stored session-start event draws cards by itself, when the soul says so."""
        if not self._config.lightning.on_session_start:
            return
        for event, outcome in zip(events, outcomes, strict=True):
            stored = isinstance(outcome, PushResult) and outcome.status == "stored"
            if stored and event.kind == "session_start":
                try:
                    await self.lightning(Lightning(topic=event.text), changes)
                except SoupdError as error:  # too few cards yet, say: the session goes on
                    self._log.info("soul.session_draw_skipped", reason=error.message)

    async def lightning(self, request: Lightning, changes: Changes) -> Collision:
        try:
            collision = await self._collider.collide(
                request.topic,
                self._clock.now(),
                self._config.lightning,
                self._mind.judge(),
                seed=request.seed,
                n=request.n,
                exclude=request.exclude,
                as_of=request.as_of,
            )
        except MissingItem as exc:
            raise NotFound(f"cannot draw: {exc}") from None
        except ValueError as exc:
            raise InvalidParams(f"cannot draw: {exc}") from None
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
            self._mind.hold_spark(collision.spark, changes)
            self._emit(
                "spark",
                {
                    "draw": collision.draw,
                    "cards": collision.cards,
                    "criterion": collision.criterion,
                },
            )
        return collision

    async def verdict(
        self, draw: int, card: int, verdict: str, line: int | None
    ) -> dict[str, object]:
        try:
            return await self._collider.verdict(draw, card, verdict, line, self._clock.now())
        except MissingItem as exc:
            raise NotFound(f"cannot record that verdict: {exc}") from None
        except ValueError as exc:
            raise InvalidParams(f"cannot record that verdict: {exc}") from None

    async def ledger(self, limit: int) -> dict[str, object]:
        """The last ``limit`` draws, silenced ones too, and the silence rate."""
        return {
            "draws": await self._collider.ledger(limit),
            "silence_rate": await self._collider.silence_rate(),
        }

    async def tide(self, close: Sequence[int] = ()) -> TideReport:
        """The tide, after closing the questions its closure proposals name on the cards
        ``close`` lists (the user's act; InvalidParams for a card with no proposal)."""
        now = self._clock.now()
        if close:
            cards = await self._cards.all()
            people = await self._collider.people()
            proposals = await anyio.to_thread.run_sync(closures, cards, self._config.tide, people)
            proposed = {p.card for p in proposals}
            unknown = sorted(set(close) - proposed)
            if unknown:
                listed = ", ".join(str(n) for n in sorted(proposed)) or "none"
                raise InvalidParams(
                    f"card {unknown[0]} has no closure proposal (proposed: {listed}); "
                    "see `soupd tide`"
                )
            for proposal in proposals:
                if proposal.card in close:
                    await self._cards.close(
                        proposal.card, proposal.question, proposal.answered_by, proposal.line, now
                    )
        report = await self._report(now)
        folder = anyio.Path(self._root / "tide")
        await folder.mkdir(parents=True, exist_ok=True)
        stamp = dt.datetime.fromtimestamp(now, dt.UTC).strftime("%Y-%m-%d")
        await (folder / f"{stamp}.md").write_text(report.markdown, encoding="utf-8")
        await (folder / f"{stamp}.html").write_text(report.html, encoding="utf-8")
        self._emit("tide", {"complete": report.complete, "file": f"tide/{stamp}.md"})
        return report

    async def _report(self, now: float) -> TideReport:
        cards, people = await self._cards.all(), await self._collider.people()
        threshold = self._config.hebbian.association_threshold
        return await tide(self._store, cards, now, self._config.tide, threshold, people)

    async def status_page(self, stamp: str) -> str:
        """The static HTML status page; ``stamp`` (default: now) is the time it shows."""
        cards = await self._cards.all()
        now = self._clock.now()
        weights = {
            card.number: weight(pool_card(card), now, self._config.lightning) for card in cards
        }
        report = await self._report(now)
        draws = await self._collider.ledger(10_000)
        mix = await self._collider.verdict_mix()
        when = stamp or dt.datetime.fromtimestamp(now, dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
        return render_status_page(self._name, cards, weights, draws, mix, report.markdown, when)
