"""What a soul knows and wants: typed entries and claims, questions, goals (DESIGN §3.10).

Storage and bookkeeping around the pure modules :mod:`souls.knowledge.claims`,
:mod:`souls.knowledge.questions` and :mod:`souls.knowledge.goals`:

* **At ingest** (:meth:`Knowledge.perceive`) the rule extractor reads every stored
  event; candidates pass the three gates and the merge algebra against the claims of
  their slot; questions are recorded, and an ``assistant`` event settles the pending
  questions of its conversation. Nothing is written here: the plan's rows join the
  :class:`~souls.store.changes.Changes` the events are appended with
  (:meth:`Plan.joined`), so a claim exists exactly when its event does, its event named
  by its offset until the append hands out the ids.
* **On request**: goal updates, one transaction each; stated entries, updates,
  corrections and retractions go through :attr:`Knowledge.entries`
  (:mod:`souls.knowledge.entries`).

Only the soul actor calls this (one writer). Every row is read and written through the
store interface (``SoulStore.knowledge``: :mod:`souls.store.knowledge`), on either
backend. Open goals, pending questions and the
entries in force are kept in memory (:class:`souls.knowledge.entries.InForce`),
everything else is read when needed. A context makes contenders only of the entries
that can rank among the items it keeps (:func:`souls.recall.shortlist.shortlist`), so
its cost hardly grows with the number of entries.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import cast

import msgspec

from souls.intake.hygiene_gate import HygieneGate
from souls.knowledge.claims import (
    SLOTS,
    Candidate,
    ClaimRow,
    ClaimUpdate,
    extract_rules,
    gate,
    merge,
    related_slots,
    subject_of,
    updated,
)
from souls.knowledge.entries import Claim, Entries
from souls.knowledge.goal_merge import follow
from souls.knowledge.goal_talk import read_goals
from souls.knowledge.goals import Goal, GoalChange, GoalNote, GoalState, apply, relink
from souls.knowledge.questions import ASKING_KINDS, PendingQuestion, is_question, settle
from souls.knowledge.tasks import Task
from souls.messages import GoalUpdate
from souls.recall.assembly import (
    AssemblyLog,
    Contender,
    LoggedItem,
    Query,
    lexical,
    open_candidate,
)
from souls.recall.context import label
from souls.recall.potential import PotentialConfig
from souls.recall.shortlist import EntryIndex, entry_candidate, shortlist
from souls.recall.surfacing import Surfacings
from souls.store.changes import Changes, ClaimClosing, GoalRow, NewQuestion, Settlement
from souls.store.interface import SoulStore
from souls.store.store import NewEvent
from supervisor.pace import OFFLOAD_CHARS, Pacer, in_worker

__all__ = ["Knowledge", "KnowledgeConfig", "Plan"]

DAY = 86_400.0
# The pending questions kept in memory to settle; older ones stay pending.
_PENDING = 200


class KnowledgeConfig(msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    # Extract slot claims (names, pets, places, jobs, likes, promises, plans) from every
    # stored event with the built-in rules (no LLM, no cost worth measuring).
    claims: bool = True
    # Record the questions people ask and which ones an assistant reply left open.
    questions: bool = True
    # The same sentence from the same sender arriving through another channel within
    # this many seconds is one event, not two (no false corroboration). 0 = off.
    same_event_window: float = 120.0
    # How much one correction of a model's claim lowers the AI-side fidelity (0..1);
    # fidelity scales what AI-sourced entries weigh (faith = 0.5 + 0.5 * fidelity).
    correction_penalty: float = 0.1
    # Take goals, plans and values from what people say ("my goal is...", "I believe
    # in...", 我打算...), and their progress, achievement or abandonment from later turns.
    goals: bool = True
    # A goal joins recall when its activation reaches this score (and comes first in
    # the context's goal channel).
    goal_threshold: float = 0.15
    # At most this many goals join one recall or context.
    goals_limit: int = 3

    def __post_init__(self) -> None:
        if not 0 <= self.correction_penalty <= 1:
            raise ValueError("correction_penalty must be between 0 and 1")
        if self.goal_threshold < 0 or self.goals_limit < 0 or self.same_event_window < 0:
            raise ValueError("goal_threshold, goals_limit and same_event_window must be >= 0")


def _goal_row(goal: Goal) -> GoalRow:
    """``goal`` as the goals table holds it (triggers and progress as JSON)."""
    return GoalRow(
        goal.id, goal.speaker, goal.statement, goal.domain, goal.priority,
        json.dumps(list(goal.triggers)), goal.state,
        msgspec.json.encode(goal.progress).decode(), goal.created, goal.updated,
        goal.event_id,
    )  # fmt: skip


def _goal(row: GoalRow) -> Goal:
    return Goal(
        id=row.id,
        speaker=row.speaker,
        statement=row.statement,
        domain=row.domain,
        priority=row.priority,
        triggers=tuple(json.loads(row.triggers)),
        state=cast(GoalState, row.state),
        progress=tuple(msgspec.json.decode(row.progress, type=list[GoalNote])),
        created=row.created,
        updated=row.updated,
        event_id=row.event_id,
    )


def _sourced(change: GoalChange, event_ids: Sequence[int]) -> GoalChange:
    """``change`` with its goal's source event resolved: a goal read from an event of
    the batch being written holds ``-1 - offset`` until the event has its id."""
    source = change.goal.event_id
    if source is None or source >= 0:
        return change
    goal = msgspec.structs.replace(change.goal, event_id=event_ids[-1 - source])
    return msgspec.structs.replace(change, goal=goal)


def _rules(text: str, sender: str | None, ts: float, kind: str) -> list[Candidate]:
    """:func:`extract_rules` with positional arguments (what a worker process is sent)."""
    return extract_rules(text, sender=sender, ts=ts, kind=kind)


@dataclass(slots=True)
class _NewClaim:
    offset: int  # the event's position in the batch: its id is known at write time
    row: ClaimRow  # id is the claim id to use; event_id is ignored


@dataclass(slots=True)
class Plan:
    """What a batch of events adds to knowledge, written with the events."""

    claims: list[_NewClaim] = field(default_factory=list)
    updates: list[ClaimUpdate] = field(default_factory=list)
    questions: list[tuple[int, PendingQuestion, float]] = field(default_factory=list)
    settled: list[tuple[int, str, int]] = field(default_factory=list)  # id, state, offset
    goals: list[GoalChange] = field(default_factory=list)  # from what people said
    # Whether the entries in force were fresh when the plan was made (None: not made
    # by Knowledge.perceive).
    fresh: bool | None = None

    def __bool__(self) -> bool:
        return bool(self.claims or self.updates or self.questions or self.settled or self.goals)

    def joined(self, changes: Changes | None = None) -> Changes:
        """``changes`` (if any) with the plan's rows added, for the append that stores
        the plan's events: each row's event is named by its offset among them (``-1 -
        offset``) until the append hands out the ids. A new Changes holding a copy of
        each of ``changes``' containers (their items, frozen, are shared): neither is
        changed through the other, so ``changes`` is as it was should the append fail."""
        base = changes if changes is not None else Changes()
        joined = Changes(
            **{f.name: copy.copy(getattr(base, f.name)) for f in dataclasses.fields(base)}
        )
        joined.claims += self._claims(lambda offset: -1 - offset)
        joined.closings += [
            ClaimClosing(u.id, u.state, u.valid_to, u.recorded_to) for u in self.updates
        ]
        joined.questions += [
            NewQuestion(q.id, -1 - offset, q.asker, q.session, q.text, asked)
            for offset, q, asked in self.questions
        ]
        joined.settlements += [
            Settlement(qid, state, -1 - offset) for qid, state, offset in self.settled
        ]
        joined.goals += [_goal_row(change.goal) for change in self.goals]
        return joined

    def stored(self, event_ids: Sequence[int]) -> list[Claim]:
        """The append stored the plan with its events, ``event_ids`` (in order): its
        goals take their source events; the claims as written."""
        self.goals = [_sourced(change, event_ids) for change in self.goals]
        return self._claims(event_ids.__getitem__)

    def _claims(self, event_of: Callable[[int], int]) -> list[Claim]:
        """The plan's new claims, the event at offset ``i`` named ``event_of(i)``."""
        return [
            Claim(
                c.row.id, SLOTS[c.row.slot].type, c.row.subject, c.row.slot, c.row.value,
                c.row.quote, event_of(c.offset), c.row.source, c.row.confidence, c.row.state,
                c.row.valid_from, c.row.valid_to, c.row.recorded_from, c.row.recorded_to,
                c.row.due, None,
            )
            for c in self.claims
        ]  # fmt: skip


class Knowledge:
    def __init__(self, store: SoulStore, config: KnowledgeConfig, hygiene: HygieneGate) -> None:
        self._store = store
        self.config = config
        self.entries = Entries(store, hygiene, config.correction_penalty)
        self.goals: dict[int, Goal] = {}
        self.pending: list[PendingQuestion] = []
        self._next_question = 1
        # When each item last surfaced in a context (what rarity counts from), and the
        # entry index it was last put into (the view may put a new index in place).
        self.surfacings = Surfacings()
        self._surfaced_index: EntryIndex | None = None

    @property
    def store(self) -> SoulStore:
        """The soul's store (what the memory map reads)."""
        return self._store

    async def load(self) -> None:
        rows = self._store.knowledge
        self.surfacings = await Surfacings.read(self._store)
        self._surfaced_index = None
        self.goals = {row.id: _goal(row) for row in await rows.goals()}
        self.pending = [
            PendingQuestion(q.id, q.asker, q.session, q.text) for q in await rows.pending(_PENDING)
        ]
        await self.entries.load()
        self._next_question = await rows.next_id("questions")

    # -- ingest ---------------------------------------------------------------

    async def perceive(self, events: Sequence[NewEvent], pace: Pacer | None = None) -> Plan:
        """The claims and questions of ``events`` (about to be appended, in order),
        giving the event loop back between events when ``pace`` says so.

        Until :meth:`committed` takes the plan back, the entries in force count as
        stale: should the write fail, they are read again from the table."""
        pace = pace or Pacer(math.inf)
        plan = Plan(fresh=self.entries.view.writing())
        if self.config.goals:
            plan.goals = await self._goal_changes(events, pace)
        working: dict[tuple[str, tuple[str, ...]], list[ClaimRow]] = {}
        pending = list(self.pending)
        # Claim ids are read when needed: stated entries take theirs from the table too.
        next_claim, next_question = 0, self._next_question
        for offset, event in enumerate(events):
            await pace()
            if self.config.claims:
                speaker = event.person or event.sender
                if len(event.text) >= OFFLOAD_CHARS:
                    found = await in_worker(_rules, event.text, speaker, event.ts, event.kind)
                else:
                    found = extract_rules(event.text, sender=speaker, ts=event.ts, kind=event.kind)
                for candidate in found:
                    if not gate(candidate, event.text).passed:
                        continue
                    slots = tuple(sorted(related_slots(candidate.slot)))
                    key = (candidate.subject, slots)
                    if key not in working:
                        working[key] = await self.entries.slot_rows(candidate.subject, slots)
                    rows = working[key]
                    if not next_claim:
                        next_claim = await self._store.knowledge.next_id("claims")
                    # A told event holds from when it happened; the batch's events have
                    # no ids yet, so each stands for itself by its offset.
                    told = event.ts if candidate.when is None else candidate.when
                    pseudo = -1 - offset
                    result = merge(
                        rows, candidate, event_id=pseudo, valid_from=told, now=event.recorded
                    )
                    new: list[ClaimRow] = []
                    if result.insert_state is not None:
                        since = result.insert_valid_from
                        new.append(
                            ClaimRow(
                                next_claim, candidate.subject, candidate.slot, candidate.value,
                                candidate.quote, pseudo, candidate.source,
                                result.insert_confidence or candidate.confidence,
                                result.insert_state, told if since is None else since,
                                result.insert_valid_to, event.recorded, result.insert_recorded_to,
                                candidate.due,
                            )
                        )  # fmt: skip
                        plan.claims.append(_NewClaim(offset, new[0]))
                        next_claim += 1
                    rows[:] = [updated(row, result.updates) for row in rows] + new
                    # Updates to rows of this batch are folded into their insert.
                    batch = {c.row.id: c for c in plan.claims}
                    for update in result.updates:
                        if update.id in batch:
                            batch[update.id].row = updated(batch[update.id].row, [update])
                        else:
                            plan.updates.append(update)
            if not self.config.questions:
                continue
            if event.kind == "assistant":
                for settlement in settle(pending, session=event.session, reply=event.text):
                    plan.settled.append((settlement.question, settlement.state, offset))
                done = {qid for qid, _, _ in plan.settled}
                pending = [q for q in pending if q.id not in done]
            elif event.kind in ASKING_KINDS and is_question(event.text):
                asker = event.person or event.sender
                question = PendingQuestion(next_question, asker, event.session, event.text)
                next_question += 1
                plan.questions.append((offset, question, event.ts))
                pending.append(question)
        return plan

    def committed(self, plan: Plan, event_ids: Sequence[int]) -> None:
        """``plan`` was stored with its events, ``event_ids`` (what the append returned):
        bring the in-memory view up to date."""
        written = plan.stored(event_ids)
        if plan.fresh is not None:
            self.entries.view.apply(written, plan.updates, fresh=plan.fresh)
        self.goals.update((change.goal.id, change.goal) for change in plan.goals)
        if plan.questions:
            self._next_question = max(q.id for _, q, _ in plan.questions) + 1
        settled = {qid for qid, _, _ in plan.settled}
        self.pending = [q for q in self.pending if q.id not in settled]
        self.pending += [q for _, q, _ in plan.questions if q.id not in settled]
        del self.pending[:-_PENDING]

    # -- goals ----------------------------------------------------------------

    async def update_goal(self, update: GoalUpdate, now: float) -> GoalChange:
        """Apply a goal update (raises ValueError naming what is wrong) and store it.
        A speaker linked to a person holds its goals as that person."""
        next_id = max(self.goals, default=0) + 1
        person = await self._person()
        change = apply(list(self.goals.values()), update, now=now, next_id=next_id, person=person)
        goal = change.goal
        await self._store.knowledge.write_goals([_goal_row(goal)])
        self.goals[goal.id] = goal
        return change

    async def follow_links(self) -> dict[str, int]:
        """After a person link: goals held by a linked account are held by the person,
        and the person's duplicate open goals on one topic become one. One transaction."""
        changed, gone = relink(list(self.goals.values()), await self._person())
        if changed or gone:
            await self._store.knowledge.write_goals([_goal_row(g) for g in changed], gone)
            self.goals.update((g.id, g) for g in changed)
            for goal_id in gone:
                del self.goals[goal_id]
        return {"goals_moved": len(changed), "goals_merged": len(gone)}

    async def _goal_changes(self, events: Sequence[NewEvent], pace: Pacer) -> list[GoalChange]:
        """What ``events`` say about their speakers' goals (people's turns only)."""
        working = dict(self.goals)
        found: list[GoalChange] = []
        person: Callable[[str], str] | None = None
        for offset, event in enumerate(events):
            await pace()
            if event.kind not in ASKING_KINDS:
                continue
            if person is None:
                person = await self._person()
            signals = (
                await in_worker(read_goals, event.text)
                if len(event.text) >= OFFLOAD_CHARS
                else None
            )
            changes = follow(
                list(working.values()),
                event.text,
                signals=signals,
                speaker=subject_of(event.person or event.sender, event.kind),
                now=event.ts,
                next_id=max(working, default=0) + 1,
                person=person,
            )
            # A goal this event creates comes from it: its id is known at write time.
            changes = [
                msgspec.structs.replace(
                    c, goal=msgspec.structs.replace(c.goal, event_id=-1 - offset)
                )
                if c.outcome == "created"
                else c
                for c in changes
            ]
            for change in changes:
                working[change.goal.id] = change.goal
            found += changes
        # One row per goal: the last change of each is what the batch leaves.
        last = {change.goal.id: change for change in found}
        return list(last.values())

    async def _person(self) -> Callable[[str], str]:
        """Who stands behind a speaker: the person an account (or a person's own name)
        is linked to, read afresh (a link may have come since)."""
        people: dict[str, set[str]] = {}
        for _, external, name in await self._store.identities():
            people.setdefault(external.casefold(), set()).add(name)
            people.setdefault(name.casefold(), set()).add(name)
        # An account id two persons share (one per channel) names neither.
        known = {alias: next(iter(n)) for alias, n in people.items() if len(n) == 1}
        return lambda speaker: known.get(speaker.casefold(), speaker)

    # -- reading --------------------------------------------------------------

    # -- what a context may bring up -------------------------------------------

    async def candidates(
        self,
        query: str,
        now: float,
        overdue: Sequence[Task],
        ranking: tuple[PotentialConfig, int] | None = None,
    ) -> list[Contender]:
        """Everything of the soul's knowledge that may join a context for ``query``:
        active entries, open commitments and plans, unanswered questions, ``overdue``
        tasks. Goals are no contenders: they have their own channel
        (:func:`souls.knowledge.goals.channel`).

        ``ranking``: how the context ranks its contenders and how many it keeps (what
        it gives :func:`souls.recall.assembly.choose`); with it, only the entries that can be
        among those kept are contenders (:func:`souls.recall.shortlist.shortlist`), otherwise
        every active one is."""
        words = await self.query(query)
        index = await self._entry_index()
        fidelity_ai = self.entries.fidelity_ai
        if ranking is None:
            entries = index.entries()
        else:
            potential, limit = ranking
            entries = shortlist(index, words, now, potential, limit, fidelity_ai)
        found = [
            entry_candidate(entry, words, now, fidelity_ai, index.surfaced_at(entry.id))
            for entry in entries
        ]
        surfaced = self.surfacings.at
        for question in await self.entries.questions(state="unanswered"):
            who = f"{question.asker} asked" if question.asker else "asked"
            found.append(
                open_candidate(
                    "question",
                    question.id,
                    f"(unanswered question, {who}) {question.text}",
                    lexical(words, question.text),
                    opened=question.asked,
                    now=now,
                    surfaced=surfaced(label("question", question.id)),
                )
            )
        for task in overdue:
            found.append(
                open_candidate(
                    "task",
                    task.line,
                    f"(overdue task, TASKS.md line {task.line}) {task.text}",
                    lexical(words, task.text),
                    opened=task.due,
                    now=now,
                    surfaced=surfaced(label("task", task.line)),
                )
            )
        return found

    async def query(self, text: str | None) -> Query:
        """``text`` as R measures what an entry, a question or a task holds of it: its
        terms weighed as evidence in the soul's memories (``TermStats.weight``)."""
        if not text or not text.strip():
            return Query()
        stats = await self._store.term_stats()
        # Without memories to weigh them by, every term weighs the same.
        return Query.of(text, stats.weight if stats.documents else None)

    def surfaced(self, items: Sequence[str], now: float) -> dict[str, float]:
        """The items a context injected (by label) surfaced at ``now``: what changed,
        for the turn to write."""
        changed = self.surfacings.mark(items, now)
        if self._surfaced_index is not None:
            self._surfaced_index.surface(
                {int(item[1:]): at for item, at in changed.items() if item.startswith("c")}
            )
        return changed

    async def _entry_index(self) -> EntryIndex:
        """The entries in force, indexed, with when each last surfaced (put in again
        whenever the view holds a new index)."""
        index = (await self.entries.current()).index
        if index is not self._surfaced_index:
            index.surface(self.surfacings.with_letter("c"))
            self._surfaced_index = index
        return index

    async def session_spent(self, session: str | None, since: float) -> int:
        """Characters of recalled items the contexts of ``session`` injected since ``since``."""
        return await self._store.knowledge.spent(session, since)

    async def assembly(self, context_hash: str | None) -> AssemblyLog | None:
        """The logged assembly with ``context_hash`` (a prefix will do), else the latest."""
        logged = await self._store.knowledge.assembly(context_hash)
        if logged is None:
            return None
        row = logged.row
        return AssemblyLog(
            hash=row.hash,
            created=logged.created,
            session=row.session,
            query=row.query,
            mode=row.mode,
            chars=row.chars,
            recalled=row.recalled,
            paused=row.paused,
            items=msgspec.json.decode(row.items, type=list[LoggedItem]),
            sections=msgspec.json.decode(row.sections, type=list[dict[str, object]]),
        )
