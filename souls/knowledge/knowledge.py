"""What a soul knows and wants: typed entries and claims, questions, goals (DESIGN §3.10).

Storage and bookkeeping around the pure modules :mod:`souls.knowledge.claims`,
:mod:`souls.knowledge.questions` and :mod:`souls.knowledge.goals`:

* **At ingest** (:meth:`Knowledge.perceive`) the rule extractor reads every stored
  event; candidates pass the three gates and the merge algebra against the claims of
  their slot; questions are recorded, and an ``assistant`` event settles the pending
  questions of its conversation. Nothing is written here: the plan is written by
  :meth:`Plan.write` inside the transaction that appends the events (so a claim exists
  exactly when its event does), with the event ids that transaction hands out.
* **On request**: goal updates, one transaction each; stated entries, updates,
  corrections and retractions go through :attr:`Knowledge.entries`
  (:mod:`souls.knowledge.entries`).

Only the soul actor calls this (one writer). Open goals, pending questions and the
entries in force are kept in memory (:class:`souls.knowledge.entries.InForce`),
everything else is read when needed. A context makes contenders only of the entries
that can rank among the items it keeps (:func:`souls.recall.shortlist.shortlist`), so
its cost hardly grows with the number of entries.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import anyio
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
)
from souls.knowledge.entries import QUESTION_COLUMNS, Claim, Entries
from souls.knowledge.goal_merge import follow
from souls.knowledge.goal_talk import read_goals
from souls.knowledge.goals import Goal, GoalChange, GoalNote, apply, relink
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
from souls.store.batch import Batch
from souls.store.changes import ClaimClosing, write_claims
from souls.store.store import NewEvent, Store
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


_GOAL_COLUMNS = (
    "id, speaker, statement, domain, priority, triggers, state, progress, created, updated,"
    " event_id"
)
_GOAL_UPSERT = f"INSERT OR REPLACE INTO goals ({_GOAL_COLUMNS}) VALUES (?,?,?,?,?,?,?,?,?,?,?)"


def _goal_row(goal: Goal) -> tuple[object, ...]:
    return (
        goal.id, goal.speaker, goal.statement, goal.domain, goal.priority,
        json.dumps(list(goal.triggers)), goal.state,
        msgspec.json.encode(goal.progress).decode(), goal.created, goal.updated,
        goal.event_id,
    )  # fmt: skip


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
    # by Knowledge.perceive), and the claims as written (None: not written).
    fresh: bool | None = None
    written: list[Claim] | None = None

    def __bool__(self) -> bool:
        return bool(self.claims or self.updates or self.questions or self.settled or self.goals)

    def write(self, batch: Batch, event_ids: Sequence[int], now: float) -> None:
        """Add the plan's rows to ``batch``, the transaction that appends the events."""
        self.written = [
            Claim(
                c.row.id, SLOTS[c.row.slot].type, c.row.subject, c.row.slot, c.row.value,
                c.row.quote, event_ids[c.offset], c.row.source, c.row.confidence, c.row.state,
                c.row.valid_from, c.row.valid_to, c.row.recorded_from, c.row.recorded_to,
                c.row.due, None,
            )
            for c in self.claims
        ]  # fmt: skip
        write_claims(
            batch,
            self.written,
            [ClaimClosing(u.id, u.state, u.valid_to, u.recorded_to) for u in self.updates],
        )
        batch.executemany(
            "INSERT INTO questions (id, event_id, asker, session, text, asked, state)"
            " VALUES (?, ?, ?, ?, ?, ?, 'pending')",
            [
                (q.id, event_ids[offset], q.asker, q.session, q.text, asked)
                for offset, q, asked in self.questions
            ],
        )
        batch.executemany(
            "UPDATE questions SET state = ?, resolved = ?, answer = ? WHERE id = ?",
            [(state, now, event_ids[offset], qid) for qid, state, offset in self.settled],
        )
        self.goals = [_sourced(change, event_ids) for change in self.goals]
        batch.executemany(_GOAL_UPSERT, [_goal_row(change.goal) for change in self.goals])


class Knowledge:
    def __init__(self, store: Store, config: KnowledgeConfig, hygiene: HygieneGate) -> None:
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
    def store(self) -> Store:
        """The soul's store (what the memory map reads)."""
        return self._store

    async def load(self) -> None:
        db = self._store.db
        self.surfacings = await Surfacings.read(self._store)
        self._surfaced_index = None
        self.goals = {g.id: g for g in await self._goals("1")}
        rows = await db.execute_fetchall(
            f"SELECT {QUESTION_COLUMNS} FROM questions WHERE state = 'pending'"
            " ORDER BY id DESC LIMIT ?",
            (_PENDING,),
        )
        self.pending = [PendingQuestion(r[0], r[2], r[3], r[4]) for r in reversed(list(rows))]
        await self.entries.load()
        self._next_question = await self._next("questions")

    async def _next(self, table: str) -> int:
        rows = list(
            await self._store.db.execute_fetchall(f"SELECT coalesce(max(id), 0) + 1 FROM {table}")
        )
        return int(rows[0][0])

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
                        next_claim = await self._next("claims")
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
                    rows[:] = [_apply(row, result.updates) for row in rows] + new
                    # Updates to rows of this batch are folded into their insert.
                    batch = {c.row.id: c for c in plan.claims}
                    for update in result.updates:
                        if update.id in batch:
                            batch[update.id].row = _apply(batch[update.id].row, [update])
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

    def committed(self, plan: Plan) -> None:
        """``plan`` was written: bring the in-memory view up to date."""
        if plan.fresh is not None:
            written = plan.written is not None
            self.entries.view.apply(
                plan.written or [], plan.updates if written else [], fresh=plan.fresh
            )
        if plan.written is not None:
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
        with anyio.CancelScope(shield=True):
            async with self._store.transaction() as db:
                await db.execute(_GOAL_UPSERT, _goal_row(goal))
        self.goals[goal.id] = goal
        return change

    async def follow_links(self) -> dict[str, int]:
        """After a person link: goals held by a linked account are held by the person,
        and the person's duplicate open goals on one topic become one. One transaction."""
        changed, gone = relink(list(self.goals.values()), await self._person())
        if changed or gone:
            with anyio.CancelScope(shield=True):
                async with self._store.transaction() as db:
                    await db.executemany(_GOAL_UPSERT, [_goal_row(g) for g in changed])
                    await db.executemany("DELETE FROM goals WHERE id = ?", [(i,) for i in gone])
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
        rows = await self._store.db.execute_fetchall(
            "SELECT i.external, p.name FROM identities AS i JOIN persons AS p ON p.id = i.person"
        )
        people: dict[str, set[str]] = {}
        for external, name in rows:
            people.setdefault(external.casefold(), set()).add(name)
            people.setdefault(name.casefold(), set()).add(name)
        # An account id two persons share (one per channel) names neither.
        known = {alias: next(iter(n)) for alias, n in people.items() if len(n) == 1}
        return lambda speaker: known.get(speaker.casefold(), speaker)

    async def _goals(self, where: str) -> list[Goal]:
        rows = await self._store.db.execute_fetchall(
            f"SELECT {_GOAL_COLUMNS} FROM goals WHERE {where} ORDER BY id"
        )
        return [
            Goal(
                id=r[0],
                speaker=r[1],
                statement=r[2],
                domain=r[3],
                priority=r[4],
                triggers=tuple(json.loads(r[5])),
                state=r[6],
                progress=tuple(msgspec.json.decode(r[7], type=list[GoalNote])),
                created=r[8],
                updated=r[9],
                event_id=r[10],
            )
            for r in rows
        ]

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
        rows = list(
            await self._store.db.execute_fetchall(
                "SELECT coalesce(sum(recalled), 0) FROM assemblies"
                " WHERE created >= ? AND session IS ?",
                (since, session),
            )
        )
        return int(rows[0][0])

    async def assembly(self, context_hash: str | None) -> AssemblyLog | None:
        """The logged assembly with ``context_hash`` (a prefix will do), else the latest."""
        sql = (
            "SELECT hash, created, session, query, mode, chars, recalled, paused, items,"
            " sections FROM assemblies"
        )
        if context_hash:
            rows = await self._store.db.execute_fetchall(
                sql + " WHERE hash LIKE ? ORDER BY id DESC LIMIT 1", (context_hash + "%",)
            )
        else:
            rows = await self._store.db.execute_fetchall(sql + " ORDER BY id DESC LIMIT 1")
        for row in rows:
            return AssemblyLog(
                hash=row[0],
                created=row[1],
                session=row[2],
                query=row[3],
                mode=row[4],
                chars=row[5],
                recalled=row[6],
                paused=bool(row[7]),
                items=msgspec.json.decode(row[8], type=list[LoggedItem]),
                sections=msgspec.json.decode(row[9], type=list[dict[str, object]]),
            )
        return None


def _apply(row: ClaimRow, updates: Sequence[ClaimUpdate]) -> ClaimRow:
    """``row`` after those of ``updates`` that concern it."""
    for update in updates:
        if update.id == row.id:
            row = msgspec.structs.replace(
                row,
                state=update.state,
                valid_to=row.valid_to if update.valid_to is None else update.valid_to,
                recorded_to=row.recorded_to if update.recorded_to is None else update.recorded_to,
            )
    return row
