"""The store interface, made explicit (DESIGN §5, issue #21): what a soul's actor needs
of its store, so that the SQLite :class:`~souls.store.store.Store` (one database file
per soul, the embedded default) and the PostgreSQL
:class:`~souls.store.postgres.store.PgStore` (one shared database) sit behind the same
calls. The soul actor remains the only writer of its soul on either.

:class:`SoulStore` is narrow: append events (with the derived rows of their turn), read
by id, search (exact FTS5 BM25 on both: :mod:`souls.store.postgres.search`), hide,
decay, forget, the ``due`` rows of the @due wake-ups, the claims recall reads
(``successors``, ``stating``, ``superseded`` hits), the statistics recall ranks with,
and the migrations applied.
Both stores satisfy it (checked by mypy below, and by tests/souls/store/test_interface.py,
test_store.py, test_fading.py, test_due.py, test_claim_rows.py and test_knowledge_rows.py,
and tests/souls/knowledge/test_knowledge_backends.py, which run every test of the
interface against both backends).
Opening is each backend's own (``Store.open(path)``, ``PgStore.open(pool, soul)``):
that is where they differ.
Recall (souls/recall/recall.py, cues.py) reads through the interface alone
(tests/souls/recall/test_recall_backends.py runs it on both); so do the mind
(souls/actor/cognition.py: summaries, ``soul_state``, the observations a reflect folds in,
edges, markers, gaps, activity; :mod:`souls.store.inner` on SQLite,
:mod:`souls.store.postgres.inner`, tests/souls/store/test_inner.py), surfacing
(souls/recall/surfacing.py) and ``memory.list``/``get``/``update`` (souls/actor/memories.py
and the soul's correction: :mod:`souls.store.pages`, :mod:`souls.store.postgres.pages`,
tests/souls/store/test_pages.py) and the semantic layer's vectors
(souls/actor/embedding.py: :mod:`souls.store.embeddings`,
:mod:`souls.store.postgres.embeddings`, tests/souls/store/test_embeddings.py). The
collision room (souls/collision/cards.py, collider.py, tide.py, and the actor's deck)
reads and writes its
cards, draws and verdicts through :class:`CardRows` (``SoulStore.cards``: a protocol of
its own, as the room's tables are; :mod:`souls.store.cards`,
:mod:`souls.store.postgres.cards`, tests/souls/store/test_card_rows.py). People behind
accounts (souls/knowledge/persons.py) are linked and read through it too
(:mod:`souls.store.persons`, :mod:`souls.store.postgres.persons`,
tests/souls/store/test_person_rows.py). The knowledge room (souls/knowledge/knowledge.py,
entries.py, navigate.py) reads and writes through :class:`KnowledgeRows`
(``SoulStore.knowledge``; :mod:`souls.store.knowledge`,
:mod:`souls.store.postgres.knowledge`, tests/souls/store/test_knowledge_rows.py): its
goals, questions, the claims it reads, the entries the user states, the logged
assemblies it reads back and the memory map's reads. What ingest adds to it — the
claims read from the events and the closings of older ones, the questions asked and
settled, the goals read from what people said — goes in the turn's
:class:`~souls.store.changes.Changes` (``claims``, ``closings``, ``questions``,
``settlements``, ``goals``: :meth:`souls.knowledge.knowledge.Plan.joined`), appended
with its events on either backend.
A model's reading of an event (souls/actor/extraction.py: its claims merged against
the claims of their slots read once, its unspoken items) is written in one transaction
by ``KnowledgeRows.write_extracted``, only while the event is still stored
(:mod:`souls.knowledge.extracted`, tests/souls/knowledge/test_extracted.py); the
unspoken items are read back by ``KnowledgeRows.unspoken``.
The logs a forget scrubs (the ledger's draws, assemblies' queries, gaps, ``soul_state``
values, goals: souls/actor/scrub.py decides what quotes a forgotten text) are read by
``SoulStore.logs`` and rewritten by ``SoulStore.scrub`` (:mod:`souls.store.logs`,
:mod:`souls.store.postgres.logs`, tests/souls/store/test_log_rows.py).
The user's full forget (souls/actor/forgetting.py, which rights.py's forget calls)
decides in Python from what ``SoulStore.forgetting`` reads (the events' texts and
memories, the cards citing them, every summary version, the events that remain) and
the logs: the card lines redacted, the summary versions that cite a forgotten memory,
the markers recomputed, the logs' scrub (a :class:`~souls.store.forgetting.ForgetPlan`);
``SoulStore.forget_all`` applies it with the events' deletion in one transaction (what
derives from them by event id: memories and their index rows, edges, vectors, card
sources, claims, questions, unspoken items, goals' event ids; rolled back for a dry
run), and ``SoulStore.compact`` then clears what SQLite keeps of deleted rows
(``secure_delete``, set by ``forget_all``, FTS5 ``optimize``, WAL checkpoint; nothing on
PostgreSQL) (:mod:`souls.store.forgetting`, :mod:`souls.store.postgres.forgetting`,
tests/souls/actor/test_forgetting.py).
A soul's export (souls/actor/exporting.py) pages through the rows
``SoulStore.export_rows`` reads of each table of
:data:`~souls.store.export.EXPORT_TABLES` (:mod:`souls.store.export`,
:mod:`souls.store.postgres.export`, tests/souls/actor/test_exporting.py: the same
records from either backend).

The rows the interface returns (:class:`~souls.store.store.NewEvent`, ``Hit``,
``Candidate``, ``Row``, ``Origin``, ``StoreCounts``, ``Successor``,
:class:`~souls.store.bm25.TermStats`; :mod:`souls.store.inner`'s ``Summary``,
``Observation``, ``MindCounts``; :mod:`souls.store.pages`' ``StoredEvent``;
:mod:`souls.store.knowledge`'s ``Question``, ``LoggedAssembly``, ``UnspokenRow``;
:mod:`souls.store.changes`' ``NewClaim``, ``GoalRow``; :mod:`souls.store.logs`' ``Logs``,
``Scrub``; :mod:`souls.store.forgetting`'s ``Forgetting``, ``ForgetPlan``,
``Forgotten``; :class:`~souls.store.scope.Scope`)
are shared, defined beside the SQLite store.

What is NOT behind the interface yet — the remaining work of #21's first point. SQL
that reaches the SQLite connection directly (``store.db``, or the connection of
``store.transaction()``), outside souls/store/:

* souls/actor/rights.py — backup (SQLite's backup API) and rebuild (the markers it
  recomputes and the FTS5 index it rebuilds), which answer ``unsupported`` on
  PostgreSQL; the forget (the events a request names: ``SoulStore.forgettable``) and
  the export run on both.
* souls/store/changes.py — :func:`~souls.store.changes.write_changes` writes all of a
  turn's derived rows in SQLite SQL; PgStore writes them all too (edges, markers,
  gaps, summaries, ``fired``, assemblies, surfaced, claims, questions, goals... in
  the same transaction). Of the modules that read those rows back, the mind's,
  surfacing's, ``due``'s, recall's and the knowledge room's reads are behind the
  interface; those listed above are SQLite's only.
* souls/store/check.py, reindex.py, files.py — the read-only checks of a database
  file, the FTS5 index rebuilt, the files beside it: SQLite's only, none yet for
  PostgreSQL (``soupd migrate`` is supervisor.shared's; no export/import between the
  two yet).
* The semantic layer's vectors are a ``bytea`` on PostgreSQL, searched in the soul's
  matrix as on SQLite: the pgvector extension is not used yet. The ``memory_sources``
  of derived memories, which decay's purge and forget delete on SQLite, have no
  PostgreSQL side (PostgreSQL holds observations only).
* :meth:`SoulStore.forget`, the store's part of a forget alone, leaves the claims and
  questions of the events it deletes on both backends (``forget_all`` deletes them);
  a goal read from such an event loses its event id on both (a foreign key on each).
  On PostgreSQL a deleted row's bytes stay in its dead tuple and the server's WAL
  until autovacuum reclaims the page (``compact`` forces nothing there).
* Not in the interface: ``Store.transaction()``, ``Store.commit()`` and ``Store.db``,
  the SQLite connection the callers above write through.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Protocol

from souls.results import Card, DecayResult, DueTask, MemoryItem
from souls.store.bm25 import TermStats
from souls.store.cards import DrawRow, NewCard
from souls.store.changes import Changes, ClaimClosing, GoalRow, NewClaim
from souls.store.fading import Fading
from souls.store.forgetting import ForgetPlan, Forgetting, Forgotten
from souls.store.inner import MindCounts, Observation, Summary
from souls.store.knowledge import LoggedAssembly, Question, Table, UnspokenRow
from souls.store.logs import Logs, Scrub
from souls.store.neighbours import Row
from souls.store.pages import StoredEvent
from souls.store.store import Candidate, Hit, NewEvent, Origin, Scope, StoreCounts, Successor

__all__ = ["CardRows", "KnowledgeRows", "SoulStore"]


class CardRows(Protocol):
    """The collision room's rows of one soul (``SoulStore.cards``: souls/store/cards.py,
    souls/store/postgres/cards.py): cards, the ledger of draws, verdicts. Writes are
    each one transaction; numbers are the soul's own, never reused."""

    async def existing(self, numbers: Sequence[int]) -> set[int]:
        """Those of ``numbers`` that are cards."""
        ...

    async def add(self, card: NewCard) -> int:
        """Store a new card (its lines in order, members, the events of its memories);
        its number."""
        ...

    async def line_texts(self) -> list[str]:
        """Every conclusion and question of every card, by card and position."""
        ...

    async def close(
        self, number: int, question: int, answered_by: int, line: int, note: str, now: float
    ) -> None:
        """Record a question of card ``number`` closed and append ``note`` to it."""
        ...

    async def note(self, number: int, text: str, now: float) -> None:
        """Append a note to card ``number``, touching it."""
        ...

    async def load(self, number: int | None) -> list[Card]:
        """Card ``number`` (none or one), or every card by number."""
        ...

    async def links(self, threshold: float) -> list[tuple[int, int, float]]:
        """Card pairs whose source events' memories share a Hebbian edge of at least
        ``threshold``, with the strongest, by the pair."""
        ...

    async def closures_since(self, since: float) -> int: ...

    async def add_draw(self, draw: DrawRow) -> int:
        """Record a draw in the ledger; its number."""
        ...

    async def draw(self, number: int) -> DrawRow | None: ...

    async def draws(self, limit: int) -> list[tuple[int, DrawRow]]:
        """The latest ``limit`` draws, the latest first."""
        ...

    async def draws_since(self, since: float) -> list[tuple[int, DrawRow]]:
        """The draws made at or after ``since``, the earliest first."""
        ...

    async def presented_before(self, before: int | None) -> list[tuple[int, str]]:
        """(number, verdicts) of the presented draws below ``before``, earliest first."""
        ...

    async def silence(self) -> tuple[int, int]:
        """Draws that are no reproduction, and how many of them were silenced."""
        ...

    async def add_verdict(
        self, draw: int, card: int, verdict: str, line: int | None, now: float
    ) -> str | None:
        """Record a verdict (a strong one counts on the card); if the card already has
        one for that draw, nothing changes and that one is returned."""
        ...

    async def judged(self) -> set[tuple[int, int]]: ...

    async def verdict_counts(self) -> dict[str, int]: ...

    async def strong_since(self, since: float) -> int: ...


class KnowledgeRows(Protocol):
    """The knowledge room's rows of one soul (``SoulStore.knowledge``:
    souls/store/knowledge.py, souls/store/postgres/knowledge.py): goals, questions,
    the claims the room reads, the entries the user states, the contexts assembled,
    and the memory map's reads. Writes are each one shielded transaction; what a turn
    adds (claims and the closings of older ones, questions asked and settled, goals)
    goes with its events, in Changes."""

    async def next_id(self, table: Table) -> int:
        """One more than the largest id of ``table`` (claims, questions), 1 when empty."""
        ...

    async def goals(self) -> list[GoalRow]:
        """Every goal, by id."""
        ...

    async def write_goals(self, goals: Sequence[GoalRow], gone: Sequence[int] = ()) -> None:
        """Store ``goals`` (insert or replace, by id), then delete the goals ``gone``."""
        ...

    async def pending(self, limit: int) -> list[Question]:
        """The latest ``limit`` pending questions, oldest first."""
        ...

    async def questions(
        self, *, state: str = "unanswered", ids: Sequence[int] = ()
    ) -> list[Question]:
        """The questions named in ``ids``, else those in ``state``, by id."""
        ...

    async def claims(self, *, every: bool = False, ids: Sequence[int] = ()) -> list[NewClaim]:
        """The claims named in ``ids``, else those in force (active, deferred), else
        (``every``) all of them; by id."""
        ...

    async def slot_claims(self, subject: str, slots: Sequence[str]) -> list[NewClaim]:
        """Every claim about ``subject`` in one of ``slots``, closed ones too, by id."""
        ...

    async def state_entry(
        self, claim: NewClaim | None, closings: Sequence[ClaimClosing], state: Mapping[str, str]
    ) -> int | None:
        """Store ``claim`` under the next claim id (its own is ignored), close
        ``closings``, set the ``soul_state`` values of ``state``; the claim's id."""
        ...

    async def write_extracted(
        self,
        event_id: int,
        claims: Sequence[NewClaim],
        closings: Sequence[ClaimClosing],
        unspoken: Sequence[UnspokenRow],
    ) -> int | None:
        """A model's reading of event ``event_id`` (souls/knowledge/extracted.py): if
        the event is still stored, store ``claims`` under their own ids, close
        ``closings`` and add the ``unspoken`` items not stored yet (by id), in one
        shielded transaction; how many unspoken items were new. None, with nothing
        written, when the event is gone."""
        ...

    async def unspoken(self) -> list[UnspokenRow]:
        """Every unspoken item, oldest first (by when recorded, then id); they go with
        their event when it is forgotten."""
        ...

    async def spent(self, session: str | None, since: float) -> int:
        """Characters of recalled items the contexts of ``session`` (None: of no
        session) injected at or after ``since``."""
        ...

    async def assembly(self, prefix: str | None) -> LoggedAssembly | None:
        """The latest logged assembly whose hash starts with ``prefix``, ASCII case
        ignored and every other character itself (no wildcards, no escape), or the
        latest without one."""
        ...

    async def recent(self, limit: int) -> list[tuple[int, str]]:
        """The latest ``limit`` visible observations as (memory id, text), newest first."""
        ...

    async def latest_summaries(self) -> list[tuple[int, str, str]]:
        """The latest version of each summary layer as (id, layer, text), by id."""
        ...

    async def days(self, limit: int) -> list[tuple[str, int, int, int]]:
        """The latest ``limit`` days (UTC ``YYYY-MM-DD``) that have events as (day,
        events, first id, last id), the latest first."""
        ...

    async def event(self, event_id: int) -> dict[str, object] | None:
        """Event ``event_id`` in full (souls.store.knowledge's ``EVENT_KEYS``)."""
        ...

    async def summary_version(self, summary_id: int) -> dict[str, object] | None:
        """Summary version ``summary_id`` in full (``SUMMARY_KEYS``)."""
        ...


class SoulStore(Protocol):
    """One soul's store, whichever the backend."""

    # Neighbouring turns indexed each side of a new memory (souls.store.neighbours).
    context_turns: int

    async def close(self) -> None: ...

    async def migrations(self) -> list[str]:
        """The names of the migrations applied, in order (applied at open)."""
        ...

    async def append(
        self, events: Sequence[NewEvent], changes: Changes | None = None, now: float = 0.0
    ) -> list[int]:
        """Append events, each with its observation memory and index row, and the
        derived rows of ``changes``, in one transaction; the new event ids in order.
        A negative event id in ``changes`` (a claim's, question's or goal's
        ``event_id``, a settlement's ``answer``) is ``-1 - offset``: the event at
        ``offset`` in ``events``, its id handed out by this append. A ref already
        stored fails the whole batch (the backend's integrity error)."""
        ...

    async def flush(self, changes: Changes, now: float) -> None:
        """Upsert derived rows alone (``changes``), in one transaction. ``changes``
        carries no negative event id (no event of its own to name)."""
        ...

    async def known_refs(self, refs: Sequence[str]) -> dict[str, tuple[int, float]]:
        """For each ref already stored: its event id and salience (idempotency)."""
        ...

    async def echo(self, event: NewEvent, window: float) -> tuple[int, float] | None:
        """A stored event with the same sender and text from another channel within
        ``window`` seconds (cross-channel de-duplication): its id and salience."""
        ...

    async def hide(self, memory_ids: Sequence[int], now: float) -> int:
        """Hide the visible memories among ``memory_ids`` as decay does (``hidden_at``
        set to ``now``, their index rows and the statistics they counted gone; the rows
        quoting them as context keep them: :mod:`souls.store.hiding`), in one
        transaction; how many were hidden."""
        ...

    async def decay(
        self,
        now: float,
        fading: Fading,
        *,
        dry_run: bool = False,
        state: Mapping[str, str] | None = None,
    ) -> DecayResult:
        """The nightly decay pass (:mod:`souls.store.fading`: memories hidden, hidden
        ones purged, edges and markers weakening) in one transaction with ``state``
        (soul state entries: the run's record, so it is stored if and only if the pass
        is), rolled back when ``dry_run``; its counts."""
        ...

    async def record_due(self, tasks: Sequence[DueTask]) -> None:
        """Reconcile the ``due`` rows (the @due wake-ups) with ``tasks``, the pending
        tasks of TASKS.md, in one transaction: each recorded under its key (its text
        and line updated), every unfired task not among them cancelled, a fired one
        left fired (:mod:`souls.store.due`). ``fired`` in Changes marks one fired."""
        ...

    async def pending_due(self) -> list[DueTask]:
        """The tasks still to fire, the soonest first (by due time, then key)."""
        ...

    async def due_task(self, key: str) -> DueTask | None:
        """The task under ``key`` if it is still to fire."""
        ...

    async def fired_due(self, limit: int) -> list[DueTask]:
        """The ``limit`` tasks that fired last, the latest first."""
        ...

    @property
    def cards(self) -> CardRows:
        """The collision room's rows (cards, draws, verdicts)."""
        ...

    @property
    def knowledge(self) -> KnowledgeRows:
        """The knowledge room's rows (goals, questions, claims it reads...)."""
        ...

    # The logs a forget scrubs (souls.store.logs; souls/actor/scrub.py).

    async def logs(self) -> Logs:
        """Every draw (id, topic, cards, verdicts), assembly query, gap, ``soul_state``
        value and goal (id, statement, progress), each by id."""
        ...

    async def scrub(self, scrub: Scrub) -> None:
        """Rewrite the rows ``scrub`` names (draws' topics and verdicts, assemblies'
        queries, gaps and ``soul_state`` values deleted, goals deleted or cut), in one
        shielded transaction."""
        ...

    # People behind accounts (souls.store.persons; souls/knowledge/persons.py).

    async def identities(self) -> list[tuple[str, str, str]]:
        """Every linked identity as (channel, external id, person's name), by identity."""
        ...

    async def persons(self) -> list[tuple[int, str, str | None, str | None]]:
        """Every person as (id, name, channel, external id): one row per identity, by
        person then identity; a person with none, one row of None."""
        ...

    async def link_person(
        self, name: str, channel: str, external: str, now: float
    ) -> tuple[int, int]:
        """Link account ``channel:external`` to person ``name`` (made when new; moved
        from another person if linked before) and attribute its events, their claims
        and their questions to the person, in one transaction; how many events and
        claims were attributed."""
        ...

    # The semantic layer's vectors (souls.store.embeddings; souls/actor/embedding.py).

    async def vectors(self, model: str) -> list[tuple[int, bytes]]:
        """The vectors of ``model`` of the visible memories, as (memory id, packed
        float32), by memory id."""
        ...

    async def unembedded(
        self, model: str, after: int, limit: int
    ) -> list[tuple[int, str, str | None]]:
        """The first ``limit`` visible memories above id ``after`` without a vector of
        ``model``, as (memory id, text, its event's sender), by id."""
        ...

    async def observation_memories(self, event_ids: Sequence[int]) -> dict[int, int]:
        """The observation memory of each of ``event_ids`` that still has one."""
        ...

    async def write_vectors(self, model: str, vectors: Sequence[tuple[int, bytes]]) -> set[int]:
        """Store each vector under its memory (one per memory: of any model before, or
        of the same memory listed twice, the last), for the memories still stored, in
        one transaction; the ids of those."""
        ...

    async def drop_vectors(self) -> int:
        """Delete every vector of the soul, in one transaction; how many there were."""
        ...

    async def vector_ids(self) -> set[int]:
        """The memories that have a vector (of any model)."""
        ...

    # Memories by id and page (souls.store.pages: memory.list, get, update).

    async def memory_page(
        self, scope: Scope | None, before: int | None, limit: int
    ) -> list[MemoryItem]:
        """Up to ``limit`` memories within ``scope`` (hidden ones too), with an id below
        ``before``, newest first."""
        ...

    async def memory_item(self, memory_id: int) -> MemoryItem | None:
        """Memory ``memory_id`` (hidden or not) with its event's ref, sender, session,
        channel and time; None when there is none."""
        ...

    async def stored_event(self, event_id: int) -> StoredEvent | None:
        """What event ``event_id`` said of itself besides its text; None when gone."""
        ...

    async def first_memory(self, event_id: int) -> int | None:
        """The first memory (by id) of event ``event_id``; None when it has none."""
        ...

    # The inner state, as the cognitive loop reads it back (souls.store.inner;
    # written by Changes, faded by decay).

    async def summary(self, layer: str, back: int = 0) -> Summary | None:
        """The latest version of the summary ``layer`` (consolidated, weekly), or the
        one ``back`` versions before it; None when there is none."""
        ...

    async def soul_state(self) -> dict[str, str]:
        """Every ``soul_state`` value by key (Changes' ``state``)."""
        ...

    async def observations(
        self, *, after_memory: int | None = None, since: float | None = None, limit: int
    ) -> list[Observation]:
        """The visible observations after memory id ``after_memory``, or of events said
        at or after ``since``, oldest first; of more than ``limit``, the most salient
        and surprising (then the newest) ``limit``."""
        ...

    async def last_memory(self) -> int:
        """The largest memory id stored, 0 when none."""
        ...

    async def strong_edges(self, threshold: float) -> list[tuple[int, int, float]]:
        """Every Hebbian edge of at least ``threshold`` as (a, b, weight), by a then b."""
        ...

    async def edge_weights(self, pairs: Sequence[tuple[int, int]]) -> dict[tuple[int, int], float]:
        """The weights of those of ``pairs`` (a < b) that have an edge."""
        ...

    async def markers(self) -> list[tuple[str, str, float]]:
        """Every somatic marker as (topic, valence, weight), by topic then valence."""
        ...

    async def marker_labels(self) -> dict[str, str]:
        """Each labelled topic's label (its first valence's, should two differ)."""
        ...

    async def gaps(self, limit: int) -> list[tuple[str, str]]:
        """The newest ``limit`` knowledge gaps as (topic, detail), oldest first."""
        ...

    async def activity(self, since: float, recent: int) -> tuple[int, list[float]]:
        """How many events were recorded at or after ``since``, and the surprise of
        the ``recent`` latest memories, the latest first."""
        ...

    async def mind_counts(self) -> MindCounts:
        """How many edges, markers, gaps and summary versions there are."""
        ...

    async def surfaced(self) -> list[tuple[str, float]]:
        """When each context item (m12, c5...) last surfaced, by label."""
        ...

    async def unsurfaced(self, limit: int) -> list[tuple[int, float]]:
        """The first ``limit`` visible observations, by id, never surfaced in a context
        (no ``m<id>`` row), as (memory id, salience)."""
        ...

    async def forget(self, event_ids: Sequence[int]) -> int:
        """Delete the events, their memories and index rows, rewriting their
        neighbours' context; how many events went."""
        ...

    # A soul's export (souls.store.export; souls/actor/exporting.py).

    async def export_rows(self, table: int, offset: int, limit: int) -> list[tuple[object, ...]]:
        """Up to ``limit`` rows of ``EXPORT_TABLES[table]`` (souls.store.export) from the
        ``offset``-th on, in the table's order, its columns in theirs."""
        ...

    # A full forget (souls.store.forgetting; souls/actor/forgetting.py decides).

    async def forgettable(
        self,
        *,
        ref: str | None = None,
        match: str | None = None,
        before: float | None = None,
        everything: bool = False,
    ) -> list[int]:
        """The ids of the events a forget request names, by id (exactly one criterion):
        every one, the one of ``ref``, those whose text holds ``match`` (ASCII case
        ignored, on both as SQLite's ``lower``), those said before ``before``."""
        ...

    async def forgetting(self, event_ids: Sequence[int]) -> Forgetting:
        """What a full forget of ``event_ids`` reads before it decides: their texts and
        memories, the cards citing them, every summary version, every other event."""
        ...

    async def forget_all(self, plan: ForgetPlan, *, dry_run: bool = False) -> Forgotten:
        """Delete ``plan``'s events and, by event id, what derives from them (memories,
        index rows, edges, vectors, card sources, claims, questions, unspoken items;
        the questions they settled reopen), and apply its decisions (card lines
        redacted, summary versions deleted, the markers replaced, the logs scrubbed),
        in one shielded transaction, rolled back when ``dry_run``; what went."""
        ...

    async def compact(self) -> None:
        """Leave no byte of what was deleted where the backend keeps it (SQLite: the
        index's old segments merged, the WAL truncated; PostgreSQL: nothing)."""
        ...

    async def search(
        self, match: str, limit: int, context_weight: float | None = None, *, own: str | None = None
    ) -> list[Hit]: ...

    async def candidates(
        self,
        match: str,
        limit: int,
        context_weight: float | None = None,
        *,
        own: str | None = None,
        scope: Scope | None = None,
    ) -> list[Candidate]: ...

    async def within(self, memory_ids: Sequence[int], scope: Scope) -> set[int]: ...

    async def hits(self, scored: Sequence[tuple[int, float]]) -> list[Hit]:
        """Read by id: the visible memories named, in that order, with those scores."""
        ...

    async def successors(self, memory_ids: Sequence[int]) -> dict[int, Successor]:
        """For each of ``memory_ids`` whose event stated a fact (a claim) that a later
        claim of the same subject and slot superseded, the visible memory of the
        superseding claim's event and what changed, the newest claim's when several
        did; none for one whose event stated the fact in force too. The claims are
        those Changes stored and closed (``claims``, ``closings``)."""
        ...

    async def stating(self, slots: Sequence[str], limit: int) -> list[int]:
        """The visible memories whose events stated a fact in force (an active claim)
        of one of ``slots``, the latest stated first, at most ``limit``."""
        ...

    async def rows(self, memory_ids: Sequence[int]) -> dict[int, Row]: ...

    async def origins(self, memory_ids: Sequence[int]) -> dict[int, Origin]: ...

    async def term_stats(self) -> TermStats: ...

    async def speakers(self) -> set[str]: ...

    def drop_caches(self) -> None: ...

    async def counts(self) -> StoreCounts: ...

    async def counters(self) -> dict[str, int]: ...


if TYPE_CHECKING:
    from souls.store.postgres.store import PgStore
    from souls.store.store import Store

    # Both backends satisfy the interface (mypy checks these two lines).
    _SQLITE: type[SoulStore] = Store
    _POSTGRES: type[SoulStore] = PgStore
