"""The mailbox vocabulary: every message a soul understands, as one tagged union.

Messages are frozen msgspec Structs. Whoever sends one may attach a reply; the soul
settles it with the result named in each docstring, or with a SoupdError.
"""

from __future__ import annotations

from typing import Literal

import msgspec

from souls.events import EventIn
from supervisor.errors import InvalidParams

__all__ = [
    "AddTask",
    "Backup",
    "CardAdd",
    "CardNote",
    "Cards",
    "ClaimAdd",
    "ClaimChange",
    "Claims",
    "Confidence",
    "Context",
    "Crash",
    "Decay",
    "Embedded",
    "Export",
    "Extracted",
    "Forget",
    "GoalAction",
    "GoalSet",
    "GoalUpdate",
    "Goals",
    "Homeostasis",
    "Import",
    "Judge",
    "LastRuns",
    "Ledger",
    "Lightning",
    "MemoryDelete",
    "MemoryGet",
    "MemoryList",
    "MemoryMap",
    "MemoryUpdate",
    "Message",
    "Observe",
    "PersonLink",
    "Persons",
    "Ping",
    "Read",
    "Rebuild",
    "Recall",
    "Reflect",
    "Stats",
    "StatusPage",
    "SyncTasks",
    "Tide",
    "Wakeup",
    "Weekly",
    "Why",
    "memory_id",
]


class Observe(msgspec.Struct, frozen=True, tag="observe"):
    """Take one event through the gates and store it. Reply: ``PushResult``."""

    event: EventIn


class Import(msgspec.Struct, frozen=True, tag="import"):
    """Take many events through the gates, committing in batches. Reply: ``ImportResult``."""

    events: list[EventIn]


class Recall(msgspec.Struct, frozen=True, tag="recall"):
    """Rank memories for ``query``. Reply: ``RecallResult``; with ``explain``, each
    item says why it ranked. ``sender``, ``session``, ``kind``, ``since`` and
    ``until`` (Unix seconds, until exclusive) narrow it to those memories (see
    :class:`souls.store.store.Scope`)."""

    query: str
    k: int | None = None
    explain: bool = False
    sender: str | None = None
    session: str | None = None
    kind: str | None = None
    since: float | None = None
    until: float | None = None


class Context(msgspec.Struct, frozen=True, tag="context"):
    """Assemble the prompt block, optionally recalling for ``query``; ``session`` names
    whose session budget it counts against. Reply: ``ContextResult``."""

    query: str | None = None
    session: str | None = None


class Stats(msgspec.Struct, frozen=True, tag="stats"):
    """Counts and latencies of this soul. Reply: ``SoulStats``."""


class Crash(msgspec.Struct, frozen=True, tag="crash"):
    """Raise InjectedFault inside the actor (fault injection; see ``[testing]``)."""

    reason: str = "requested"


class Reflect(msgspec.Struct, frozen=True, tag="reflect"):
    """Reflect now, whatever the counters say. Reply: ``ReflectResult``."""


class Weekly(msgspec.Struct, frozen=True, tag="weekly"):
    """Write the weekly summary layer from the last week. Reply: ``ReflectResult``."""

    # Sent by the scheduler: the job's period (seconds). A run of it within half of that,
    # here or by another daemon of the shared store, makes this one a no-op (reply None):
    # a job runs once a period per soul, whichever daemons fire it.
    period: float | None = None


class Decay(msgspec.Struct, frozen=True, tag="decay"):
    """The nightly forgetting pass, as of ``now`` (Unix seconds; default: the clock).
    Reply: ``DecayResult``."""

    now: float | None = None
    # Only count what it would do (the reply's counts, ``dry_run`` true); change nothing.
    dry_run: bool = False
    # Sent by the scheduler: the job's period (seconds). A run of it within half of that,
    # here or by another daemon of the shared store, makes this one a no-op (reply None):
    # a job runs once a period per soul, whichever daemons fire it.
    period: float | None = None


class Homeostasis(msgspec.Struct, frozen=True, tag="homeostasis"):
    """Measure the drives against their set points. Reply: ``HomeostasisResult``."""

    # Sent by the scheduler: the job's period (seconds). A run of it within half of that,
    # here or by another daemon of the shared store, makes this one a no-op (reply None):
    # a job runs once a period per soul, whichever daemons fire it.
    period: float | None = None


class Confidence(msgspec.Struct, frozen=True, tag="confidence"):
    """How well the soul knows ``topic``. Reply: ``metacognition.Confidence``."""

    topic: str


class SyncTasks(msgspec.Struct, frozen=True, tag="sync_tasks"):
    """Re-read TASKS.md into the due table. Reply: ``TasksResult``."""


class AddTask(msgspec.Struct, frozen=True, tag="add_task"):
    """Append a task to TASKS.md (a reminder the soul sets). Reply: ``TasksResult``."""

    text: str
    due: float


class Wakeup(msgspec.Struct, frozen=True, tag="wakeup"):
    """A task came due: store the wake-up event, once. Reply: ``PushResult`` or None
    when the task is no longer pending (fired already, checked, deleted)."""

    key: str


class Forget(msgspec.Struct, frozen=True, tag="forget"):
    """Delete events (one criterion) and everything derived from them.
    Reply: ``ForgetResult``."""

    ref: str | None = None
    match: str | None = None
    before: float | None = None
    everything: bool = False
    # Only count what would go (the reply's counts, ``dry_run`` true); delete nothing.
    dry_run: bool = False
    # The event of this memory (as ``MemoryDelete``); NotFound when there is none.
    memory: int | None = None


class Export(msgspec.Struct, frozen=True, tag="export"):
    """A page of events and derived state. Reply: ``{"records": [...], "cursor"}``."""

    cursor: str | None = None


class Backup(msgspec.Struct, frozen=True, tag="backup"):
    """An online copy of the database at ``path``. Reply: ``{"path", "bytes"}``."""

    path: str


class Rebuild(msgspec.Struct, frozen=True, tag="rebuild"):
    """Recompute derived state from the events. Reply: ``RebuildResult``."""


class CardAdd(msgspec.Struct, frozen=True, tag="card_add"):
    """Crystallise a card by hand (a protein when ``members`` are given). Reply: ``Card``."""

    conclusions: list[str]
    title: str = ""
    questions: list[str] = msgspec.field(default_factory=list)
    tags: list[str] = msgspec.field(default_factory=list)
    members: list[int] = msgspec.field(default_factory=list)


class CardNote(msgspec.Struct, frozen=True, tag="card_note"):
    """Append a note to a card. Reply: ``Card``."""

    number: int
    text: str


class Cards(msgspec.Struct, frozen=True, tag="cards"):
    """Every card; with ``strict``, where the folder and the database disagree.
    Reply: ``{"cards": [...], "problems": [...]}``."""

    strict: bool = False


class Lightning(msgspec.Struct, frozen=True, tag="lightning"):
    """Draw cards, judge the collision with ``topic``, record it; ``as_of``: reproduce
    that recorded draw (its topic, seed, n, exclusions and weights). Reply: ``Collision``."""

    topic: str = ""
    seed: int | None = None
    n: int | None = None
    exclude: list[str] = msgspec.field(default_factory=list)
    as_of: int | None = None


class Judge(msgspec.Struct, frozen=True, tag="judge"):
    """The user's verdict on a card of a presented draw. Reply: the recorded verdict."""

    draw: int
    card: int
    verdict: str
    line: int | None = None


class Tide(msgspec.Struct, frozen=True, tag="tide"):
    """The weekly reconciliation report, written to tide/ too, after closing the questions
    its closure proposals name on the cards ``close`` lists. Reply: ``TideReport``."""

    close: list[int] = msgspec.field(default_factory=list)


class StatusPage(msgspec.Struct, frozen=True, tag="status_page"):
    """The collision-memory status page as one HTML file. Reply: ``{"html"}``."""

    stamp: str = ""


class Ledger(msgspec.Struct, frozen=True, tag="ledger"):
    """The latest draws. Reply: ``{"draws": [...], "silence_rate"}``."""

    limit: int = 50


class ClaimAdd(msgspec.Struct, frozen=True, tag="claim_add"):
    """State an entry: a slot claim (``slot`` + ``value``), or a free fact, rule or event
    (``value`` alone). Reply: ``{"claim", "outcome", "closed"}``."""

    value: str
    kind: str = "fact"  # fact | rule | event
    slot: str | None = None
    subject: str = "user"
    confidence: str = "high"


class ClaimChange(msgspec.Struct, frozen=True, tag="claim_change"):
    """``update`` (supersede with ``value``), ``correct`` (the same, and the AI side was
    wrong: its fidelity drops) or ``retract`` an entry. Reply: ``{"claim", "closed"}``."""

    action: str
    id: int
    value: str = ""


class Claims(msgspec.Struct, frozen=True, tag="claims"):
    """Active and deferred entries (``every``: closed ones too), the open questions and
    the AI-side fidelity. Reply: ``{"claims", "questions", "fidelity_ai"}``."""

    every: bool = False


GoalAction = Literal["new", "progress", "change", "achieve", "abandon", "pause", "resume"]


class GoalUpdate(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    action: GoalAction
    # For ``new`` and ``change``: the (new) statement. Without ``goal_id`` it also finds
    # the goal to update by topic; with ``goal_id`` it may be empty except for ``new``.
    statement: str
    speaker: str
    # Empty / None / () mean "not given": 3 for a new goal's priority, unchanged by change.
    domain: str = ""
    priority: int | None = None
    triggers: tuple[str, ...] = ()
    note: str = ""  # appended to the goal's progress; required for ``progress``
    goal_id: int | None = None


class GoalSet(msgspec.Struct, frozen=True, tag="goal_set"):
    """A goal update (new, progress, change, achieve, abandon, pause, resume).
    Reply: ``GoalChange``."""

    update: GoalUpdate


class Goals(msgspec.Struct, frozen=True, tag="goals"):
    """Every goal. Reply: ``{"goals": [...]}``."""


class Why(msgspec.Struct, frozen=True, tag="why"):
    """What a context injected and why (the latest, or the one whose hash starts with
    ``hash``). Reply: ``AssemblyLog``."""

    hash: str | None = None


class MemoryMap(msgspec.Struct, frozen=True, tag="map"):
    """The four-axis memory map within ``budget`` characters. Reply: ``{"map"}``."""

    budget: int = 2000


class Read(msgspec.Struct, frozen=True, tag="read"):
    """One item by the id the map or a context printed (m12, e5, c7, g1...)."""

    id: str


class MemoryList(msgspec.Struct, frozen=True, tag="memory_list"):
    """A page of memories, newest first: those with an id below ``cursor`` (all when
    None), at most ``limit``, narrowed like a recall (``sender``, ``session``, ``kind``,
    ``since`` inclusive, ``until`` exclusive, Unix seconds). Reply: ``MemoryPage``."""

    cursor: int | None = None
    limit: int = 50
    sender: str | None = None
    session: str | None = None
    kind: str | None = None
    since: float | None = None
    until: float | None = None


class MemoryGet(msgspec.Struct, frozen=True, tag="memory_get"):
    """One memory by its id, hidden or not. Reply: ``MemoryItem``."""

    id: int


class MemoryUpdate(msgspec.Struct, frozen=True, tag="memory_update"):
    """Replace memory ``id``'s text with a corrected one (see souls/actor/memories.py).
    Reply: ``MemoryUpdated``."""

    id: int
    text: str


class MemoryDelete(msgspec.Struct, frozen=True, tag="memory_delete"):
    """Forget memory ``id`` and its event, as ``Forget`` by ref does. Reply:
    ``ForgetResult``."""

    id: int


class PersonLink(msgspec.Struct, frozen=True, tag="person_link"):
    """Link ``channel``:``external`` to the person ``person`` (made when new).
    Reply: ``{"person", "identity", "moved_from", "events", "claims"}``."""

    person: str
    channel: str
    external: str


class Persons(msgspec.Struct, frozen=True, tag="persons"):
    """Every person with their identities. Reply: ``{"persons": [...]}``."""


class Ping(msgspec.Struct, frozen=True, tag="ping"):
    """Are you handling mail? Reply: ``"pong"`` (the watchdog's health check)."""


class Extracted(msgspec.Struct, frozen=True, tag="extracted"):
    """Mail a soul's extractor sends it: claims are ready to write (souls/actor/
    extraction.py). No reply; never sent from outside the soul."""


class Embedded(msgspec.Struct, frozen=True, tag="embedded"):
    """Mail a soul's embedder sends it: vectors are ready to write (souls/actor/
    embedding.py). No reply; never sent from outside the soul."""


class LastRuns(msgspec.Struct, frozen=True, tag="last_runs"):
    """When each scheduled job last ran for this soul. Reply: ``dict[str, float]``."""


Message = (
    Observe
    | Import
    | Recall
    | Context
    | Stats
    | Crash
    | Reflect
    | Weekly
    | Decay
    | Homeostasis
    | Confidence
    | SyncTasks
    | AddTask
    | Wakeup
    | LastRuns
    | Extracted
    | Embedded
    | Ping
    | Forget
    | Export
    | Backup
    | Rebuild
    | CardAdd
    | CardNote
    | Cards
    | Lightning
    | Ledger
    | Judge
    | Tide
    | StatusPage
    | ClaimAdd
    | ClaimChange
    | Claims
    | GoalSet
    | Goals
    | Why
    | MemoryMap
    | Read
    | MemoryList
    | MemoryGet
    | MemoryUpdate
    | MemoryDelete
    | PersonLink
    | Persons
)


# A memory's id as people and programs give it: its number (``7``) or its label
# (``m7``), the form ``soupd memories``, recall and a context show; the one reading of it
# that the socket's methods, the MCP tools and the CLI share (the client package
# ``soupd`` sends what it is given, and the socket reads it here).

# Ids are SQLite rowids: from 1, below 2**63.
_LIMIT = 2**63


def memory_id(value: object) -> int:
    """The memory id ``value`` names: a whole number from 1, or that number after
    ``m`` (``m7``, as ids are shown). Raises InvalidParams, naming the accepted forms,
    for anything else."""
    number: int | None = None
    if isinstance(value, int) and not isinstance(value, bool):
        number = value
    elif isinstance(value, str):
        digits = value[1:] if value[:1] in ("m", "M") else value
        # ASCII digits only: str.isdigit also takes '²' and other scripts' digits.
        if digits.isascii() and digits.isdigit() and len(digits) <= 19:
            number = int(digits)
    if number is None or not 1 <= number < _LIMIT:
        raise InvalidParams(
            f"not a memory id: {value!r}; give its number (7) or its label (m7), as "
            "`soupd memories SOUL` lists them"
        )
    return number
