"""What a soul answers: the result Structs that replies carry (and the wire encodes)."""

from __future__ import annotations

from typing import Literal

import msgspec

__all__ = [
    "MAX_REASONS",
    "Card",
    "ContextResult",
    "DecayResult",
    "DueTask",
    "Explanation",
    "HomeostasisResult",
    "ImportResult",
    "MemoryItem",
    "MemoryPage",
    "PushResult",
    "RecallItem",
    "RecallResult",
    "ReflectResult",
    "Rejection",
    "Section",
    "SoulStats",
    "TaskProblem",
    "TasksResult",
    "TermWeight",
]


# Most rejection reasons one import reply lists (the count is always complete).
MAX_REASONS = 100


class PushResult(msgspec.Struct, frozen=True):
    # The stored event's id; for a duplicate, the id stored first; None when dropped.
    event_id: int | None
    salience: float
    status: Literal["stored", "dropped", "duplicate"]
    # Novelty against the summary in force (stored events only).
    surprise: float | None = None
    # True when this event made the soul reflect.
    reflected: bool = False
    # The tokens that made the surprise (stored events only): the event's content words
    # the summary has never used, as the tokenizer stems them, first seen first, at most
    # souls.intake.surprise.MAX_NOVEL.
    novel: list[str] = msgspec.field(default_factory=list)


class Rejection(msgspec.Struct, frozen=True):
    index: int  # position of the event in the request
    code: str
    message: str


class ImportResult(msgspec.Struct):
    stored: int = 0
    dropped: int = 0
    duplicate: int = 0
    rejected: int = 0
    # The reasons, one per rejected event, capped (see ``reasons_truncated``).
    reasons: list[Rejection] = msgspec.field(default_factory=list)
    reasons_truncated: bool = False


class TermWeight(msgspec.Struct, frozen=True):
    term: str  # a query term, as the tokenizer stems it
    score: float  # its share of the BM25 score
    text: int  # times it occurs in the memory's own text
    context: int  # times it occurs in the memory's neighbouring turns


class Explanation(msgspec.Struct, frozen=True, omit_defaults=True):
    """Why a recalled item ranked: a memory found by BM25 scores ``bm25 * speaker *
    time``; one cited by a summary line scores the line's coverage of the query; an
    associate scores the strength of the Hebbian edge that brought it. Its relevance
    (see :class:`RecallItem`) is ``lexical * speaker * time`` at most 1 (a cited one:
    at least its line's coverage)."""

    # BM25 over the memory's text and (weighted lower) its neighbouring turns.
    bm25: float = 0.0
    terms: list[TermWeight] = msgspec.field(default_factory=list)
    # The part of ``bm25`` owed to the neighbouring turns.
    context: float = 0.0
    # Factor for being said by someone the query names.
    speaker: float = 1.0
    # Factor for being from a date or period the query names.
    time: float = 1.0
    # Share of the query covered by the summary line that cites it.
    summary: float | None = None
    # Strength of the Hebbian edge that brought it along.
    hebbian: float | None = None
    # The share of the query's evidence its words hold (its own text, its neighbouring
    # turns, other forms of the query's words), the lexical part of its relevance.
    lexical: float = 0.0
    # The part of ``lexical`` owed to other forms of the query's words (fail, failure).
    related: float = 0.0
    # With [embedding] on: the cosine of its embedding with the query's (the semantic
    # part of its relevance, see [recall] dense_weight); None without one.
    dense: float | None = None
    # What breaks a near-tie: its salience, and when it was said (Unix seconds).
    salience: float | None = None
    when: float | None = None
    # The memory whose fact it superseded ("successor"), or that superseded its fact.
    succeeds: int | None = None
    superseded_by: int | None = None
    # The same, in words.
    reasons: list[str] = msgspec.field(default_factory=list)


class RecallItem(msgspec.Struct, frozen=True, omit_defaults=True):
    id: int  # memory id
    kind: str
    text: str
    # The ranking score in its layer's own units (BM25 with cues, a summary line's
    # coverage, a Hebbian edge's weight): for ``explain``; compare ``relevance``.
    score: float
    via: str  # why it is here: "bm25", "summary", "weekly", "hebbian", "successor", "claim", "goal"
    refs: list[str]  # the ``ref``s of the source events
    # How well it answers the query, in [0, 1], comparable across queries and souls: the
    # share of the query's evidence (its words, weighted by how rare each is, and the
    # speaker and date it names) the item holds. 1.0: every word of the query (as a
    # memory made of exactly those words would); 0.5: half of it. Items come in
    # non-increasing relevance; nothing of relevance 0 is recalled.
    relevance: float = 0.0
    # Why it ranked, when the caller asked (``explain``); left off the wire otherwise.
    explain: Explanation | None = None


class RecallResult(msgspec.Struct, frozen=True):
    items: list[RecallItem]


class Section(msgspec.Struct, frozen=True):
    name: str
    text: str
    chars: int
    truncated: bool = False
    memory_ids: list[int] = msgspec.field(default_factory=list)
    # Every recalled item injected, by label (m12, c5, g3...), in order.
    items: list[str] = msgspec.field(default_factory=list)


class ContextResult(msgspec.Struct, frozen=True):
    text: str
    sections: list[Section]
    hash: str
    # Hash of the stable sections (identity, summary, weekly): unchanged between reflects.
    prefix_hash: str


class ReflectResult(msgspec.Struct, frozen=True):
    layer: str  # consolidated | weekly
    reason: str  # surprise | periodic | manual | weekly
    reflector: str  # extractive | llm
    observations: int
    changed: bool
    chars: int


class DecayResult(msgspec.Struct, frozen=True):
    hidden: int
    purged: int
    edges_pruned: int
    markers_pruned: int
    dry_run: bool = False  # only counted: nothing was changed


class DueTask(msgspec.Struct, frozen=True):
    key: str
    due: float
    text: str
    line: int
    fired_at: float | None = None


class TaskProblem(msgspec.Struct, frozen=True):
    line: int
    source: str
    problem: str


class TasksResult(msgspec.Struct, frozen=True):
    # Tasks still to fire, soonest first.
    pending: list[DueTask]
    # Lines of TASKS.md that could not be read as tasks, with what to fix.
    errors: list[TaskProblem]
    # Tasks that already fired (most recent first, capped).
    fired: list[DueTask] = msgspec.field(default_factory=list)
    # A task added (``AddTask``): its key, and whether TASKS.md already held that task
    # (the same text and due time), so nothing was written.
    key: str | None = None
    existing: bool = False


class HomeostasisResult(msgspec.Struct, frozen=True):
    distance: float
    drives: dict[str, float]
    signal: str | None


class SoulStats(msgspec.Struct, frozen=True):
    soul: str
    events: int
    memories: int
    hidden: int
    counters: dict[str, int]  # persistent: drops per reason
    rejected: dict[str, int]  # since start: rejections per hygiene rule
    queued: int
    mailbox_capacity: int
    recall_p50_ms: float | None
    recall_p95_ms: float | None
    recalls: int
    edges: int
    markers: int
    gaps: int
    reflects: int
    weeklies: int
    last_surprise: float | None
    # The LLM extractor's figures (souls/actor/extraction.py); empty without one.
    extraction: dict[str, int] = msgspec.field(default_factory=dict)
    # The embedder's figures (souls/actor/embedding.py): backlog, embedded, failures, ms
    # per batch...; empty with [embedding] provider = "none".
    embedding: dict[str, object] = msgspec.field(default_factory=dict)


class MemoryItem(msgspec.Struct, frozen=True):
    """One memory as ``memory.get`` and ``memory.list`` show it: its text, and the event
    it came from (who said it, when, where)."""

    id: int
    kind: str
    text: str
    salience: float
    created: float  # when it was stored, Unix seconds
    recalls: int
    last_recalled: float | None
    # When decay hid it (it is no longer recalled); None while it is visible.
    hidden_at: float | None
    event_id: int | None
    ref: str | None
    sender: str | None
    session: str | None
    channel: str | None
    ts: float | None  # when its event happened


class MemoryPage(msgspec.Struct, frozen=True):
    """A page of ``memory.list``, newest first; ``next_cursor`` asks for the next page
    (None after the last)."""

    items: list[MemoryItem]
    next_cursor: str | None


class Card(msgspec.Struct, frozen=True):
    """A card (souls/collision/cards.py): its conclusions, questions, tags, notes, and
    for a protein its members."""

    number: int
    kind: str  # card | protein
    title: str
    source: str  # reflect | manual | synthesis
    created: float
    conclusions: list[str]
    questions: list[str]
    tags: list[str]
    notes: list[str]
    members: list[int]
    strong_approvals: int = 0
    last_touched: float = 0.0
    # The questions (numbered from 1) the user closed.
    closed: list[int] = msgspec.field(default_factory=list)
    # When its conclusions were reached: the latest of the events it came from (the
    # conversation's time, which an import may date long before ``created``).
    reached: float = 0.0

    @property
    def open_questions(self) -> list[tuple[int, str]]:
        """The questions not closed yet, with their numbers."""
        return [(i, q) for i, q in enumerate(self.questions, 1) if i not in self.closed]
