"""What the daemon answers, as typed objects.

Each is a frozen msgspec Struct decoded straight from a reply. Fields the daemon adds
later are ignored (a newer daemon never breaks an older client); times are Unix
seconds (floats).
"""

from __future__ import annotations

from typing import Any

import msgspec

__all__ = [
    "Claim",
    "ClaimChange",
    "Claims",
    "Context",
    "Explanation",
    "ForgetResult",
    "Goal",
    "GoalChange",
    "GoalNote",
    "ImportResult",
    "Memory",
    "MemoryPage",
    "MemoryUpdated",
    "Output",
    "Person",
    "PersonLink",
    "PushResult",
    "Question",
    "RecallHit",
    "Rejection",
    "Section",
    "Soul",
    "SoulCreated",
    "SoulDeleted",
    "Task",
    "TaskProblem",
    "Tasks",
    "TermWeight",
    "Why",
    "WhyItem",
    "WhySection",
]


class _Result(msgspec.Struct, frozen=True, kw_only=True):
    pass


class PushResult(_Result, frozen=True):
    """``status`` is stored, dropped (below the attention threshold) or duplicate (the
    ``ref`` was stored before: ``event_id`` is the first one's)."""

    event_id: int | None
    salience: float
    status: str
    surprise: float | None = None
    reflected: bool = False
    novel: list[str] = []


class Rejection(_Result, frozen=True):
    index: int
    code: str
    message: str


class ImportResult(_Result, frozen=True):
    stored: int = 0
    dropped: int = 0
    duplicate: int = 0
    rejected: int = 0
    reasons: list[Rejection] = []
    reasons_truncated: bool = False


class TermWeight(_Result, frozen=True):
    term: str
    score: float
    text: int
    context: int


class Explanation(_Result, frozen=True):
    """Why a hit ranked (asked with ``explain=True``); ``reasons`` says it in words."""

    bm25: float = 0.0
    terms: list[TermWeight] = []
    context: float = 0.0
    speaker: float = 1.0
    time: float = 1.0
    summary: float | None = None
    hebbian: float | None = None
    lexical: float = 0.0
    related: float = 0.0
    dense: float | None = None
    salience: float | None = None
    when: float | None = None
    succeeds: int | None = None
    superseded_by: int | None = None
    reasons: list[str] = []


class RecallHit(_Result, frozen=True):
    """One recalled memory. ``relevance`` is in [0, 1] on one scale for every query
    and soul (set one threshold); ``score`` is the ranking score in its layer's units."""

    id: int
    kind: str
    text: str
    score: float
    via: str
    refs: list[str] = []
    relevance: float = 0.0
    explain: Explanation | None = None


class Section(_Result, frozen=True):
    name: str
    text: str
    chars: int
    truncated: bool = False
    memory_ids: list[int] = []
    items: list[str] = []


class Context(_Result, frozen=True):
    """The block for an agent's system prompt (``text``); ``prefix_hash`` stays the
    same between reflects, so a prompt cache keeps the prefix."""

    text: str
    sections: list[Section]
    hash: str
    prefix_hash: str


class WhyItem(_Result, frozen=True):
    id: str
    kind: str
    score: float
    reason: str


class WhySection(_Result, frozen=True):
    name: str
    chars: int
    truncated: bool = False


class Why(_Result, frozen=True):
    """What went into a context (the last one, or the one of ``hash``) and why."""

    hash: str
    created: float
    query: str | None = None
    session: str | None = None
    mode: str = ""
    chars: int = 0
    recalled: int = 0
    paused: bool = False
    items: list[WhyItem] = []
    sections: list[WhySection] = []


class ForgetResult(_Result, frozen=True):
    """How much of each kind was erased (with ``dry_run``: would be)."""

    events: int = 0
    memories: int = 0
    edges: int = 0
    summaries: int = 0
    markers: int = 0
    card_lines: int = 0
    claims: int = 0
    questions: int = 0
    scrubbed: int = 0
    goals: int = 0
    dry_run: bool = False


class Memory(_Result, frozen=True):
    id: int
    kind: str
    text: str
    salience: float = 0.0
    created: float = 0.0
    recalls: int = 0
    last_recalled: float | None = None
    hidden_at: float | None = None
    event_id: int | None = None
    ref: str | None = None
    sender: str | None = None
    session: str | None = None
    channel: str | None = None
    # When its event happened (``created`` is when it was stored).
    ts: float | None = None


class MemoryUpdated(_Result, frozen=True):
    """What an update did: the corrected text is memory ``id`` (of event ``event_id``)
    in place of ``replaced``, and forgetting that one removed ``forgot``."""

    id: int
    event_id: int
    replaced: int
    forgot: ForgetResult


class MemoryPage(_Result, frozen=True):
    """One page of memories; pass ``next_cursor`` back for the next (None: the last)."""

    items: list[Memory]
    next_cursor: str | None = None


class Claim(_Result, frozen=True):
    id: int
    type: str
    subject: str
    value: str
    state: str
    slot: str | None = None
    quote: str = ""
    event_id: int | None = None
    source: str = ""
    confidence: str = ""
    valid_from: float | None = None
    valid_to: float | None = None
    recorded_from: float | None = None
    recorded_to: float | None = None
    due: float | None = None
    replaces: int | None = None


class Question(_Result, frozen=True):
    id: int
    text: str
    state: str
    event_id: int | None = None
    asker: str | None = None
    session: str | None = None
    asked: float | None = None
    resolved: float | None = None
    answer: int | None = None


class Claims(_Result, frozen=True):
    claims: list[Claim]
    questions: list[Question] = []
    fidelity_ai: float | None = None


class ClaimChange(_Result, frozen=True):
    """What a claim add (or correct, retract) did: ``outcome`` and the claim now."""

    claim: Claim | None = None
    outcome: str = ""
    closed: list[Any] = []


class GoalNote(_Result, frozen=True):
    at: float
    text: str


class Goal(_Result, frozen=True):
    id: int
    statement: str
    state: str
    speaker: str = "user"
    domain: str = ""
    priority: int = 0
    triggers: list[str] = []
    created: float = 0.0
    updated: float = 0.0
    progress: list[GoalNote] = []
    event_id: int | None = None


class GoalChange(_Result, frozen=True):
    outcome: str
    goal: Goal
    previous: Goal | None = None


class Person(_Result, frozen=True):
    id: int
    name: str
    identities: list[str] = []


class PersonLink(_Result, frozen=True):
    person: str
    identity: str
    moved_from: str | None = None
    events: int = 0
    claims: int = 0


class Task(_Result, frozen=True):
    key: str
    due: float
    text: str
    line: int = 0
    fired_at: float | None = None


class TaskProblem(_Result, frozen=True):
    line: int
    source: str
    problem: str


class Tasks(_Result, frozen=True):
    pending: list[Task]
    errors: list[TaskProblem] = []
    fired: list[Task] = []
    # From ``remind``: the task's key, and True when the soul already had that task (the
    # same text and due time), so nothing new was stored.
    key: str | None = None
    existing: bool = False


class Soul(_Result, frozen=True):
    name: str
    state: str
    restarts: int = 0
    wakes: int = 0
    queued: int = 0
    last_error: str | None = None


class SoulCreated(_Result, frozen=True):
    """A soul made at run time: its TOML ``file`` written and the soul started."""

    soul: str
    file: str | None = None
    state: str = ""
    # Whether the ``default`` soul stays (adding a first soul file used to remove it).
    default_kept: bool | None = None
    # The state folder a soul of that name deleted earlier kept, now reopened (asked
    # for with ``reopen``); None when the soul starts empty.
    reopened: str | None = None


class SoulDeleted(_Result, frozen=True):
    """A soul stopped and its file removed; its state stays unless ``purged`` (the
    folders ``kept``). ``stopped`` False: there was no soul, only the data a deleted
    one kept, and it was purged."""

    soul: str
    file: str | None = None
    stopped: bool = True
    purged: bool = False
    kept: list[str] = []


# The kinds of output the daemon streams: its own list (supervisor.output_kinds)
# mirrored, as this package imports nothing of the daemon; tests/client holds them equal.
OUTPUT_KINDS: tuple[str, ...] = (
    "card",
    "direct",
    "internal_signal",
    "log",
    "overflow",
    "reflect",
    "reply",
    "spark",
    "tide",
    "wakeup",
)


class Output(_Result, frozen=True):
    """One streamed output of a soul: ``kind`` is one of :data:`OUTPUT_KINDS` (reflect,
    wakeup, internal_signal, spark, card, tide, direct, reply, log), ``overflow`` meaning
    ``payload["dropped"]`` outputs were lost because the subscriber fell behind."""

    soul: str
    kind: str
    ts: float
    payload: dict[str, Any] = {}
