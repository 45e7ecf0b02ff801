"""A soul's mind: the cognitive state it carries between turns, and what changes it.

Everything here is derived from the soul's database and rebuilt by :meth:`Mind.load`
after a restart: the summaries in force (and the world model they define), the reflect
counters, somatic markers, strong Hebbian edges, recall statistics, the pending
internal signal. The soul actor calls in turn by turn; the mind never writes to the
store itself but records what should change in a :class:`~souls.store.changes.Changes`.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import structlog

from souls.actor.brain import Brain
from souls.collision.judge import BuiltinJudge, Judge, LLMJudge
from souls.config import SoulConfig
from souls.embed.vectors import Near
from souls.intake.surprise import WorldModel
from souls.llm.chat import ChatClient, LLMReflector
from souls.mind.appraisal import appraise, with_person
from souls.mind.hebbian import Associations, pairs
from souls.mind.homeostasis import check as homeostasis_check
from souls.mind.markers import Markers, gut_feelings
from souls.mind.metacognition import (
    Confidence,
    gap_for,
    gap_matches,
    known_gaps_section,
    sense_confidence,
)
from souls.mind.reflect import REFLECT_OFFLOAD_CHARS, ExtractiveReflector, Reflector
from souls.mind.reflection import ReflectClock
from souls.recall.recall import Citations, HitCache, Recollection, recall
from souls.recall.surfacing import Surfacings, resting
from souls.results import DecayResult, HomeostasisResult, RecallItem, ReflectResult
from souls.store.bm25 import TermStats
from souls.store.changes import Changes, SummaryVersion
from souls.store.fading import Fading
from souls.store.interface import SoulStore
from souls.store.store import NewEvent, Scope
from souls.text.tokenize import fts_match, query_terms
from supervisor.pace import Pacer, in_worker

__all__ = ["Emit", "Mind"]

# Where a soul's outputs go (wake-ups, internal signals, reflects...): kind, payload.
Emit = Callable[[str, dict[str, Any]], None]
DAY = 86_400.0
_SIGNAL = "signal.pending"
_SPARK = "spark.pending"
_RECENT_EVENTS = 5


@dataclass(slots=True)
class _Layer:
    text: str = ""
    citations: Citations | None = None

    def set(self, text: str, citations: Citations) -> None:
        self.text = text
        self.citations = citations


def _digest(text: str) -> tuple[Citations, WorldModel]:
    """What a summary's text defines: its citations and the world model it makes."""
    return Citations(text), WorldModel(text)


async def _digested(text: str) -> tuple[Citations, WorldModel]:
    """``_digest(text)``; in a worker process for a long summary (tokenising it costs
    about 0.3 ms per thousand characters)."""
    if len(text) < REFLECT_OFFLOAD_CHARS:
        return _digest(text)
    return await in_worker(_digest, text)


class Mind:
    def __init__(
        self, name: str, config: SoulConfig, store: SoulStore, brain: Brain, emit: Emit
    ) -> None:
        self.name = name
        self.config = config
        self._store = store
        self._brain = brain
        self._emit = emit
        self._log = structlog.get_logger("soupd.mind")
        self.summary = _Layer()
        self.weekly = _Layer()
        self.world = WorldModel("")
        self.clock = ReflectClock()
        self.markers = Markers()
        self.signal = ""
        self.spark = ""
        self.last_surprise: float | None = None
        # The indexed documents of the latest events: what "the turn touches" besides
        # the query, for GUT FEELINGS.
        self._recent: deque[str] = deque(maxlen=_RECENT_EVENTS)
        self._terms: TermStats | None = None
        self._associations: Associations | None = None
        self._hits = HitCache()
        self._llm: ChatClient | None = None
        self.reflector = self._reflector()

    def _reflector(self) -> Reflector:
        extractive = ExtractiveReflector(self.config.attention.alarm_keywords)
        if self.config.reflect.reflector == "extractive" or self.config.llm.base_url is None:
            return extractive
        return LLMReflector(self._chat(), extractive)

    def _chat(self) -> ChatClient:
        """The soul's one chat client (one connection pool), made on first use."""
        if self._llm is None:
            self._llm = ChatClient(self.config.llm)
        return self._llm

    def judge(self) -> Judge:
        """Who judges collisions (``[gate] judge``): the model when the soul has one."""
        builtin = BuiltinJudge(self.config.gate)
        if self.config.gate.judge == "builtin" or self.config.llm.base_url is None:
            return builtin
        return LLMJudge(self._chat(), builtin)

    async def load(self) -> None:
        """Rebuild the mind from the database (at start and after a restart)."""
        for layer, target in (("consolidated", self.summary), ("weekly", self.weekly)):
            stored = await self._store.summary(layer)
            text = stored.text if stored else ""
            citations, world = await _digested(text)
            target.set(text, citations)
            if layer == "consolidated":
                self.world = world
            await self._brain.sync_summary(layer, target.text)
        state = await self._store.soul_state()
        self.clock = ReflectClock.from_state(state)
        self.signal = state.get(_SIGNAL, "")
        self.spark = state.get(_SPARK, "")
        self.markers = Markers.from_rows(
            await self._store.markers(), await self._store.marker_labels()
        )

    async def aclose(self) -> None:
        if self._llm is not None:
            await self._llm.aclose()

    # -- events ---------------------------------------------------------------

    async def perceive(
        self, events: Sequence[NewEvent], changes: Changes, pace: Pacer
    ) -> list[str | None]:
        """Account for events about to be stored: markers into ``changes``, reflect
        counters advanced. Returns, per event, the reason it makes the soul reflect (one
        reflect after the batch): "surprise" for every event of the batch that surprised
        (a surprise never waits, and that reflect folds the whole batch in), else
        "periodic" for the one event that completed the count, else None."""
        # The index statistics follow the store's writes (it indexes neighbouring
        # turns too); nothing to add here.
        if not self.config.cognition:
            return [None] * len(events)
        documents = [event.doc.split() for event in events]
        reasons: list[str | None] = []
        surprised = False
        somatic, reflect, surprise = self.config.somatic, self.config.reflect, self.config.surprise
        observe, markers, labels = self.clock.observe, changes.markers, changes.marker_labels
        for event, words in zip(events, documents, strict=True):
            await pace()
            reason = observe(event.surprise, event.recorded, reflect, surprise, triggered=surprised)
            if reason is None and event.surprise > surprise.threshold and not surprised:
                # Held back by the storm guard (it reflects later): counted, for stats.
                changes.counters["surprise.held"] += 1
            surprised = surprised or reason == "surprise"
            reasons.append(reason)
            appraisal = appraise(event.text, event.salience, somatic, words)
            if appraisal is not None:
                for marker in self.markers.add(with_person(appraisal, event.person)):
                    markers[(marker.topic, marker.valence)] = marker.weight
                    if marker.label is not None:
                        labels[marker.topic] = marker.label
        if surprised:
            # One reflect after the batch folds every event of it in: each event that
            # surprised reflects with it.
            threshold = surprise.threshold
            reasons = [
                "surprise" if reason == "surprise" or event.surprise > threshold else None
                for event, reason in zip(events, reasons, strict=True)
            ]
        else:
            at = next((index for index, reason in enumerate(reasons) if reason), -1)
            reasons = [reason if index == at else None for index, reason in enumerate(reasons)]
        if events:
            self.last_surprise = events[-1].surprise
        self._recent.extend(event.doc for event in events[-_RECENT_EVENTS:])
        changes.state.update(self.clock.to_state())
        return reasons

    # -- reflect ----------------------------------------------------------------

    async def reflect(self, reason: str, changes: Changes) -> ReflectResult:
        """Fold the observations since the last reflect into a new summary."""
        config = self.config.reflect
        observations = await self._store.observations(
            after_memory=self.clock.last_memory, limit=config.max_observations
        )
        text = await self.reflector.reflect(self.summary.text, observations, config.budget)
        # Everything stored so far is folded in now, even what did not make the cut.
        last = max(await self._store.last_memory(), self.clock.last_memory)
        citations, world = await _digested(text)
        # Nothing changed before this point: a reflect cancelled in one of the awaits
        # above leaves the mind and ``changes`` as they were.
        changed = text != self.summary.text
        self.clock.reflected(reason, last)
        changes.state.update(self.clock.to_state())
        changes.summaries.append(
            SummaryVersion("consolidated", text, len(observations), self.reflector.name, reason)
        )
        self.summary.set(text, citations)
        self.world = world
        await self._brain.write_summary("consolidated", text)
        self._emit("reflect", {"reason": reason, "observations": len(observations)})
        self._log.info(
            "soul.reflected", reason=reason, observations=len(observations), chars=len(text)
        )
        return ReflectResult(
            "consolidated", reason, self.reflector.name, len(observations), changed, len(text)
        )

    async def weekly_summary(self, now: float, changes: Changes) -> ReflectResult:
        config = self.config.reflect
        observations = await self._store.observations(
            since=now - 7 * DAY, limit=config.max_observations
        )
        text = await self.reflector.reflect(self.weekly.text, observations, config.weekly_budget)
        citations, _ = await _digested(text)
        changed = text != self.weekly.text
        changes.summaries.append(
            SummaryVersion("weekly", text, len(observations), self.reflector.name, "weekly")
        )
        self.weekly.set(text, citations)
        await self._brain.write_summary("weekly", text)
        return ReflectResult(
            "weekly", "weekly", self.reflector.name, len(observations), changed, len(text)
        )

    # -- recall -----------------------------------------------------------------

    async def resting(
        self, surfacings: Surfacings, limit: int
    ) -> tuple[list[RecallItem], dict[int, float]]:
        """The memories a context with no query may bring back (see
        :func:`souls.recall.surfacing.resting`), and when each was stored."""
        ids = await resting(self._store, surfacings, limit)
        hits = await self._store.hits([(memory_id, 0.0) for memory_id in ids])
        items = [
            RecallItem(
                hit.memory_id, hit.kind, hit.text, 0.0, "rarity", [hit.ref] if hit.ref else []
            )
            for hit in hits
        ]
        return items, {hit.memory_id: hit.created for hit in hits}

    async def recall(
        self,
        query: str,
        k: int,
        changes: Changes,
        *,
        now: float | None = None,
        explain: bool = False,
        scope: Scope | None = None,
        dense: Near | None = None,
    ) -> Recollection:
        """Recall through every layer; fire-together, recall times and retrieval-
        induced forgetting go into ``changes``. ``now``: what relative dates in the
        query count from (default: the wall clock). ``scope``: only memories within it.
        ``dense``: the memories nearest to the query by embedding, with their cosine
        and the spread of the query's cosines."""
        self._terms = await self._store.term_stats()  # kept current by the store
        now = time.time() if now is None else now
        if not self.config.cognition:
            return await recall(
                self._store,
                self._terms,
                self.config.recall,
                query,
                k,
                now=now,
                explain=explain,
                scope=scope,
                dense=dense,
            )
        hebbian = self.config.hebbian
        if self._associations is None:
            self._associations = Associations(
                await self._store.strong_edges(hebbian.association_threshold)
            )
        layers = [
            (name, layer.citations)
            for name, layer in (("summary", self.summary), ("weekly", self.weekly))
            if layer.citations is not None
        ]
        found = await recall(
            self._store,
            self._terms,
            self.config.recall,
            query,
            k,
            layers=layers,
            associations=self._associations,
            hebbian=hebbian,
            cache=self._hits,
            now=now,
            explain=explain,
            scope=scope,
            dense=dense,
        )
        # Only what really matched the query fires together (see souls.recall.recall).
        for pair in pairs(found.fired):
            changes.edges[pair] += 1
        changes.recalled.update(item.id for item in found.items)
        for memory_id in found.competitors:
            changes.penalties[memory_id] = (
                changes.penalties.get(memory_id, 0.0) + hebbian.rif_penalty
            )
        return found

    async def after_write(self, changes: Changes) -> None:
        """Bring the strong-edge index up to date once ``changes`` are committed."""
        if not changes.edges or self._associations is None:
            return
        threshold = self.config.hebbian.association_threshold
        weights = await self._store.edge_weights(list(changes.edges))
        for (a, b), weight in weights.items():
            if weight >= threshold:
                self._associations.set(a, b, weight)

    def forget_caches(self) -> None:
        """Drop the derived indexes; they are rebuilt when next needed."""
        self._terms = None
        self._store.drop_caches()
        self._associations = None
        self._hits = HitCache()

    async def decay(
        self, now: float, *, dry_run: bool = False, state: Mapping[str, str] | None = None
    ) -> DecayResult:
        """The nightly pass: memories fade and hide, edges and markers weaken; ``state``
        (the run's record) is stored with it, in its transaction. A ``dry_run`` only
        counts (the store's transaction is rolled back): neither the database nor what
        the mind holds in memory changes."""
        config, hebbian, somatic = self.config.decay, self.config.hebbian, self.config.somatic
        fading = Fading(
            permanent_at=config.permanent_at,
            medium_at=config.medium_at,
            medium_days=config.medium_days,
            low_days=config.low_days,
            purge_days=config.purge_days,
            edge_factor=hebbian.nightly_factor,
            edge_floor=hebbian.prune_below,
            marker_factor=somatic.nightly_decay,
            marker_floor=somatic.prune_below,
        )
        report = await self._store.decay(now, fading, dry_run=dry_run, state=state)
        if dry_run:
            self._log.info(
                "soul.decay_counted",
                hidden=report.hidden,
                purged=report.purged,
                edges_pruned=report.edges_pruned,
                markers_pruned=report.markers_pruned,
            )
            return report
        # The same arithmetic in memory as in SQL; derived indexes are rebuilt lazily.
        self.markers.decay(somatic)
        self.forget_caches()
        self._log.info(
            "soul.decayed",
            hidden=report.hidden,
            purged=report.purged,
            edges_pruned=report.edges_pruned,
            markers_pruned=report.markers_pruned,
        )
        return report

    async def last_runs(self) -> dict[str, float]:
        """When each scheduled job last ran here (Unix seconds), by job name."""
        state = await self._store.soul_state()
        return {k.removeprefix("ran."): float(v) for k, v in state.items() if k.startswith("ran.")}

    async def table_counts(self) -> dict[str, int]:
        counts = await self._store.mind_counts()
        return {
            "edges": counts.edges,
            "markers": counts.markers,
            "gaps": counts.gaps,
            "reflects": counts.reflects,
            "weeklies": counts.weeklies,
        }

    # -- feelings and self-knowledge ----------------------------------------------

    def gut_feelings(self, query: str | None) -> str:
        """Markers touched by the query or by the latest events."""
        terms = set(query_terms(query)) if query else set()
        for doc in self._recent:
            terms.update(doc.split())
        touching = self.markers.touching(sorted(terms))
        return gut_feelings(touching, self.config.somatic)

    async def known_gaps(self) -> str:
        config = self.config.metacognition
        gaps = await self._store.gaps(config.inject_gaps)
        return known_gaps_section([detail for _, detail in gaps], config)

    async def homeostasis(self, now: float, changes: Changes) -> HomeostasisResult:
        events, surprise = await self._store.activity(now - DAY, 20)
        positive, negative = self.markers.totals()
        signal = homeostasis_check(events, surprise, positive, negative, self.config.homeostasis)
        drives = {
            "engaged": signal.drives.engaged,
            "curious": signal.drives.curious,
            "balanced": signal.drives.balanced,
        }
        if signal.sentence:
            self.signal = signal.sentence
            changes.state[_SIGNAL] = signal.sentence
            self._emit("internal_signal", {"signal": signal.sentence, "distance": signal.distance})
        return HomeostasisResult(signal.distance, drives, signal.sentence)

    def hold_spark(self, spark: str, changes: Changes) -> None:
        """A collision passed the gate: it shows in the next context, once."""
        self.spark = spark
        changes.state[_SPARK] = spark

    def take_spark(self, changes: Changes) -> str:
        spark, self.spark = self.spark, ""
        if spark:
            changes.state[_SPARK] = ""
        return spark

    def take_signal(self, changes: Changes) -> str:
        """The pending internal signal, shown once: it is cleared as it is taken."""
        signal, self.signal = self.signal, ""
        if signal:
            changes.state[_SIGNAL] = ""
        return signal

    async def confidence(self, topic: str, changes: Changes) -> Confidence:
        config = self.config.metacognition
        terms = query_terms(topic)
        relevant = 0
        if terms:
            relevant = len(await self._store.search(fts_match(terms), config.coverage_saturation))
        positive = sum(m.weight for m in self.markers.touching(terms) if m.valence == "positive")
        negative = sum(m.weight for m in self.markers.touching(terms) if m.valence == "negative")
        gaps = [
            detail
            for gap_topic, detail in await self._store.gaps(1000)
            if gap_matches(topic, gap_topic)
        ]
        result = sense_confidence(topic, relevant, positive, negative, gaps, config)
        gap = gap_for(topic, result)
        if gap is not None and not gaps:  # one recorded gap per topic is enough
            changes.gaps.append((topic, gap))
        # No escalation here: the caller that asked (the answer loop) escalates the one
        # call it meant; the mind's client serves reflects and the judge.
        return result
