"""Recollection: what a soul brings back when asked, as recalled items or a context block.

A recall is the mind's ranked memories for a query, joined (with cognition on) by the
goals the query activates. A context is the block an agent puts in its system prompt:
the stable sections, then what ranks for the query in retrieval or emergence mode (see
:mod:`souls.recall.assembly`), within the section, total and session budgets (see
:mod:`souls.recall.context`). Invariants a caller may rely on:

* ``k`` outside ``1..[recall] max_k`` raises InvalidParams naming the setting to raise.
* Every recall's duration goes into ``latency`` (what ``stats`` reports).
* Every assembled context is logged twice: as an assembly row in the ``changes`` passed
  (committed with the turn; ``why`` reads it) and as a ``context.assembled`` log line.
  Both list only the items the block actually shows.
* Once a session has injected ``[context] session_chars`` characters of recalled items
  within ``session_window`` seconds, the recalled section is a notice saying when they
  resume, and no item is logged as shown.
* What a context injects *surfaced* then (:mod:`souls.recall.surfacing`): its rarity
  counts from now, written with the turn. Nothing surfaces while recall is paused, so
  once it resumes what was injected before the pause gives way to what was not.
"""

from __future__ import annotations

import datetime as dt
import time

import msgspec
import structlog

from souls.actor.brain import Brain
from souls.actor.clock import Clock
from souls.actor.cognition import Mind
from souls.actor.embedding import Embedding
from souls.actor.metrics import LatencyWindow
from souls.config import SoulConfig
from souls.embed.vectors import Near
from souls.knowledge.goals import activated, channel, goal_candidates
from souls.knowledge.knowledge import Knowledge
from souls.knowledge.navigate import memory_map
from souls.knowledge.tasks import Task, parse_tasks
from souls.messages import Recall
from souls.recall.assembly import LoggedItem, choose, memory_candidates
from souls.recall.context import assemble, room
from souls.results import ContextResult, RecallItem, RecallResult
from souls.store.changes import AssemblyRow, Changes
from souls.store.store import Scope
from supervisor.errors import InvalidParams

__all__ = ["Recollection", "scope_of"]


def scope_of(asked: Recall) -> Scope | None:
    """What a recall request narrows to, None when it does not."""
    scope = Scope(asked.sender, asked.session, asked.kind, asked.since, asked.until)
    return scope if scope else None


class Recollection:
    """The read side of one running soul, built once its store and mind are open."""

    def __init__(
        self,
        name: str,
        config: SoulConfig,
        clock: Clock,
        *,
        mind: Mind,
        knowledge: Knowledge,
        brain: Brain,
        latency: LatencyWindow,
        embedding: Embedding | None = None,
    ) -> None:
        self._name = name
        self._config = config
        self._clock = clock
        self._mind = mind
        self._knowledge = knowledge
        self._brain = brain
        self._latency = latency
        self._embedding = embedding
        self._log = structlog.get_logger("soupd.soul")

    async def recall(
        self,
        query: str,
        k: int | None,
        explain: bool,
        changes: Changes,
        *,
        scope: Scope | None = None,
    ) -> RecallResult:
        """The best ``k`` memories for ``query`` (default ``[recall] k``), in
        non-increasing relevance (see :func:`souls.recall.recall.recall`), then the goals
        it activates (none when ``scope`` narrows the recall: goals have no sender,
        session or time)."""
        limit = self._k(k)
        started = time.perf_counter()
        dense, waited = await self._similar(query, limit)
        found = await self._mind.recall(
            query,
            limit,
            changes,
            now=self._clock.now(),
            explain=explain,
            scope=scope,
            dense=dense,
        )
        items = found.items
        if self._config.cognition and not scope:
            # Goals join recall by activation: bridge triggers and domains reach them too.
            knowledge = self._knowledge
            goals = [g for g in knowledge.goals.values() if g.state in ("active", "paused")]
            chosen = activated(
                goals,
                query,
                threshold=self._config.knowledge.goal_threshold,
                limit=self._config.knowledge.goals_limit,
            )
            items = items + [
                msgspec.structs.replace(
                    c.item, relevance=round(min(max(c.item.score, 0.0), 1.0), 3)
                )
                for c in goal_candidates(chosen, self._clock.now())
            ]
        # The recall's own time: the wait for the query's vector is the provider's,
        # reported apart (stats: embedding.query_p50_ms).
        self._latency.add(time.perf_counter() - started - waited)
        return RecallResult(items)

    async def _similar(self, query: str, k: int) -> tuple[Near | None, float]:
        """The memories nearest to ``query`` by embedding (a few per result wanted), or
        None: no embedder, nothing embedded, or it failed (a lexical recall); and the
        seconds spent waiting for the query's vector."""
        if self._embedding is None:
            return None, 0.0
        started = time.perf_counter()
        vector = await self._embedding.query(query)
        waited = time.perf_counter() - started
        if vector is None:
            return None, waited
        return await self._embedding.nearest(vector, max(3 * k, 50)), waited

    async def context(
        self, query: str | None, session: str | None, changes: Changes
    ) -> ContextResult:
        """The context block: stable sections, then what ranks for ``query`` in retrieval
        or emergence mode (see :mod:`souls.recall.assembly`), within the section, total and
        session budgets; the assembly is logged for ``why``."""
        mind = self._mind
        now = self._clock.now()
        config = self._config.context
        memories: list[RecallItem] = []
        created: dict[int, float] = {}
        resonance: dict[int, float] = {}
        surfacings = self._knowledge.surfacings
        if query:
            dense, _ = await self._similar(query, config.recall_k)
            found = await mind.recall(query, config.recall_k, changes, now=now, dense=dense)
            memories, created, resonance = found.items, found.created, found.resonance
        elif self._config.cognition:
            # No query: emergence over what has waited longest (DESIGN §3.5, rarity S).
            memories, created = await mind.resting(surfacings, config.recall_k)
        contenders = surfacings.rarity_from(
            memory_candidates(memories, resonance, created=created, now=now), now
        )
        upcoming: list[Task] = []
        goals: list[RecallItem] = []
        if self._config.cognition:
            goals = channel(
                self._knowledge.goals.values(),
                query or "",
                threshold=self._config.knowledge.goal_threshold,
            )
            overdue, upcoming = await self._tasks_due(now)
            keeps = (self._config.potential, config.recall_k)  # what choose() is given
            contenders += await self._knowledge.candidates(query or "", now, overdue, keeps)
        ranking, shown, logged = choose(contenders, self._config.potential, config.recall_k)
        paused = ""
        if shown and config.session_chars:
            since = now - config.session_window
            spent = await self._knowledge.session_spent(session, since)
            spent += sum(a.recalled for a in changes.assemblies if a.session == session)
            if spent >= config.session_chars:
                resume = dt.datetime.fromtimestamp(now + config.session_window, dt.UTC)
                paused = (
                    f"(recalled items paused: this session injected {spent} characters of "
                    f"recalled items in the last {config.session_window:g} s, the budget is "
                    f"{config.session_chars}; they resume by {resume:%Y-%m-%d %H:%M} UTC)"
                )
                logged = []
        drawn = ""
        if config.map:
            budget = room("memory_map", config.map_chars)
            drawn = await memory_map(self._knowledge.store, self._knowledge, budget)
        result = assemble(
            config,
            identity=await self._brain.identity(),
            goals=goals,
            memory_map=drawn,
            summary=mind.summary.text,
            weekly=mind.weekly.text,
            gut_feelings=mind.gut_feelings(query),
            known_gaps=await mind.known_gaps(),
            due_tasks="\n".join(f"- [t{t.line}] {t.text} (due {_utc(t.due)})" for t in upcoming),
            internal_signal=mind.take_signal(changes),
            spark=mind.take_spark(changes),
            recalled=shown,
            paused=paused,
        )
        recalled = next((s for s in result.sections if s.name == "recalled"), None)
        injected = set(recalled.items) if recalled is not None and not paused else set()
        logged = [item for item in logged if item.id in injected]
        changes.surfaced.update(self._knowledge.surfaced([item.id for item in logged], now))
        channelled = next((s for s in result.sections if s.name == "goals"), None)
        if channelled is not None:  # the goal channel: logged, not ranked nor surfaced
            scores = {f"g{g.id}": g.score for g in goals}
            logged += [LoggedItem(i, "goal", scores[i], "goal channel") for i in channelled.items]
        mode = "none" if not contenders else ranking.mode
        changes.assemblies.append(
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

    def _k(self, k: int | None) -> int:
        config = self._config.recall
        if k is None:
            return config.k
        if not 1 <= k <= config.max_k:
            raise InvalidParams(
                f"k must be between 1 and {config.max_k} for soul {self._name!r} "
                "(raise [recall] max_k in its TOML to allow more)"
            )
        return k

    async def _tasks_due(self, now: float) -> tuple[list[Task], list[Task]]:
        """Open TASKS.md tasks: those overdue, and those due within ``tasks_hours``."""
        horizon = now + self._config.context.tasks_hours * 3600
        tasks = parse_tasks(await self._brain.tasks()).pending()
        overdue = [t for t in tasks if t.due <= now]
        upcoming = [t for t in tasks if now < t.due <= horizon]
        return overdue, upcoming


def _utc(seconds: float) -> str:
    return dt.datetime.fromtimestamp(seconds, dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
