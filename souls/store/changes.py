"""Changes to a soul's derived state, gathered during a turn and written in one go.

A turn (recalls, appraisals, a reflect, a signal...) does not write as it goes: it
records what should change in a :class:`Changes`, and the store writes all of it in
the same transaction as the turn's events (or on its own when the turn stored none).
One write path, one transaction per turn, and recall stays a pure read.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

import msgspec

from souls.store.batch import Batch

__all__ = [
    "CLAIM_COLUMNS", "GOAL_COLUMNS", "GOAL_UPSERT", "SET_STATE", "AssemblyRow", "Changes",
    "ClaimClosing", "GoalRow", "NewClaim", "NewQuestion", "Settlement", "SummaryVersion",
    "sourced", "write_changes", "write_claims",
]  # fmt: skip

# The claims table's columns, in the order of NewClaim's fields.
CLAIM_COLUMNS = (
    "id, type, subject, slot, value, quote, event_id, source, confidence, state,"
    " valid_from, valid_to, recorded_from, recorded_to, due, replaces"
)
# The goals table's columns, in the order of GoalRow's fields.
GOAL_COLUMNS = (
    "id, speaker, statement, domain, priority, triggers, state, progress, created, updated,"
    " event_id"
)


GOAL_UPSERT = f"INSERT OR REPLACE INTO goals ({GOAL_COLUMNS}) VALUES (?,?,?,?,?,?,?,?,?,?,?)"


def sourced(event_id: int | None, event_ids: Sequence[int]) -> int | None:
    """A row's source event resolved: a negative ``event_id``, ``-1 - offset``, names
    the event at ``offset`` among ``event_ids``, those the same append hands out."""
    if event_id is None or event_id >= 0:
        return event_id
    return event_ids[-1 - event_id]


@dataclass(frozen=True, slots=True)
class SummaryVersion:
    layer: str  # consolidated | weekly
    text: str
    observations: int
    reflector: str
    reason: str


@dataclass(frozen=True, slots=True)
class AssemblyRow:
    hash: str
    session: str | None
    query: str | None
    mode: str
    chars: int
    recalled: int  # characters of recalled items injected
    paused: bool
    items: str  # JSON
    sections: str  # JSON


class NewClaim(msgspec.Struct, frozen=True):
    """A claim to store (an entry of the soul's knowledge: souls.knowledge.entries),
    under the id the soul handed out. ``event_id``: its source event; a negative one,
    ``-1 - offset``, is the event at ``offset`` among those the same append stores
    (their ids are known when it writes)."""

    id: int
    type: str
    subject: str
    slot: str | None
    value: str
    quote: str
    event_id: int | None
    source: str
    confidence: str
    state: str
    valid_from: float
    valid_to: float | None
    recorded_from: float
    recorded_to: float | None
    due: float | None = None
    replaces: int | None = None

    def sourced(self, event_ids: Sequence[int]) -> NewClaim:
        """The claim with its source event's id resolved (``event_ids``: the ids the
        append handed out, in order)."""
        if self.event_id is None or self.event_id >= 0:
            return self
        return msgspec.structs.replace(self, event_id=sourced(self.event_id, event_ids))


class ClaimClosing(msgspec.Struct, frozen=True):
    """A stored claim closed (superseded, retracted...): its new state, and the end of
    its valid and recorded time when they end now (None: kept as they are)."""

    id: int
    state: str
    valid_to: float | None
    recorded_to: float | None


class NewQuestion(msgspec.Struct, frozen=True):
    """A question someone asked (souls.knowledge.questions), stored pending under the
    id the soul handed out. ``event_id``: the event that asked it, negative as
    :class:`NewClaim`'s."""

    id: int
    event_id: int
    asker: str | None
    session: str | None
    text: str
    asked: float


class Settlement(msgspec.Struct, frozen=True):
    """A pending question settled (answered, unanswered) by the reply ``answer`` (an
    event id, negative as :class:`NewClaim`'s), resolved at the append's ``now``."""

    id: int
    state: str
    answer: int


class GoalRow(msgspec.Struct, frozen=True):
    """A goal as the goals table holds it (souls.knowledge.goals decides what a goal
    is): ``triggers`` and ``progress`` are JSON, kept byte for byte as written.
    ``event_id``: the event it was first read from (None: stated), negative as
    :class:`NewClaim`'s."""

    id: int
    speaker: str
    statement: str
    domain: str
    priority: int
    triggers: str
    state: str
    progress: str
    created: float
    updated: float
    event_id: int | None

    def sourced(self, event_ids: Sequence[int]) -> GoalRow:
        """The goal with its source event's id resolved, as :meth:`NewClaim.sourced`."""
        if self.event_id is None or self.event_id >= 0:
            return self
        return msgspec.structs.replace(self, event_id=sourced(self.event_id, event_ids))


@dataclass(slots=True)
class Changes:
    # Persistent counters to add to (drops per reason...).
    counters: Counter[str] = field(default_factory=Counter)
    # Hebbian edge increments, keyed by (a, b) with a < b.
    edges: Counter[tuple[int, int]] = field(default_factory=Counter)
    # Memories returned by a recall: last_recalled = now, recalls + 1.
    recalled: set[int] = field(default_factory=set)
    # Retrieval-induced forgetting: salience to take off, per memory.
    penalties: dict[int, float] = field(default_factory=dict)
    # Somatic markers to set (absolute weights).
    markers: dict[tuple[str, str], float] = field(default_factory=dict)
    # Labels of marker topics to set: topic -> the word shown for it (every valence).
    marker_labels: dict[str, str] = field(default_factory=dict)
    # Knowledge gaps to record: (topic, detail).
    gaps: list[tuple[str, str]] = field(default_factory=list)
    # New summary versions.
    summaries: list[SummaryVersion] = field(default_factory=list)
    # soul_state values to set.
    state: dict[str, str] = field(default_factory=dict)
    # Due tasks that fired: key -> when.
    fired: dict[str, float] = field(default_factory=dict)
    # Assembled contexts to log.
    assemblies: list[AssemblyRow] = field(default_factory=list)
    # Items a context injected (by label, m12 c5 g3...) -> when they surfaced.
    surfaced: dict[str, float] = field(default_factory=dict)
    # Claims to store, then stored claims to close (in that order: a claim of this
    # turn may be closed by it too).
    claims: list[NewClaim] = field(default_factory=list)
    closings: list[ClaimClosing] = field(default_factory=list)
    # Questions asked, then questions settled (a question of this turn may be settled
    # by it too), and goals to store (insert or replace, by id).
    questions: list[NewQuestion] = field(default_factory=list)
    settlements: list[Settlement] = field(default_factory=list)
    goals: list[GoalRow] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(
            self.counters
            or self.edges
            or self.recalled
            or self.penalties
            or self.markers
            or self.marker_labels
            or self.gaps
            or self.summaries
            or self.state
            or self.fired
            or self.assemblies
            or self.surfaced
            or self.claims
            or self.closings
            or self.questions
            or self.settlements
            or self.goals
        )


# A soul state entry set (``soul_state``): a turn's, or a decay's record of its run.
SET_STATE = (
    "INSERT INTO soul_state (key, value) VALUES (?, ?)"
    " ON CONFLICT (key) DO UPDATE SET value = excluded.value"
)


def write_changes(
    batch: Batch, changes: Changes, now: float, event_ids: Sequence[int] = ()
) -> None:
    """Add the statements that write ``changes`` to ``batch`` (none for what is empty).
    ``event_ids``: those the same append hands out, in order (what a claim's negative
    ``event_id`` names)."""
    batch.executemany(
        "INSERT INTO counters (name, value) VALUES (?, ?)"
        " ON CONFLICT (name) DO UPDATE SET value = value + excluded.value",
        list(changes.counters.items()),
    )
    batch.executemany(
        "INSERT INTO edges (a, b, weight, updated) VALUES (?, ?, ?, ?)"
        " ON CONFLICT (a, b) DO UPDATE SET weight = weight + excluded.weight,"
        " updated = excluded.updated",
        [(a, b, weight, now) for (a, b), weight in changes.edges.items()],
    )
    batch.executemany(
        "UPDATE memories SET last_recalled = ?, recalls = recalls + 1 WHERE id = ?",
        [(now, memory_id) for memory_id in sorted(changes.recalled)],
    )
    batch.executemany(
        "UPDATE memories SET salience = max(0.0, salience - ?) WHERE id = ?",
        [(amount, memory_id) for memory_id, amount in changes.penalties.items()],
    )
    batch.executemany(
        "INSERT INTO markers (topic, valence, weight, updated) VALUES (?, ?, ?, ?)"
        " ON CONFLICT (topic, valence) DO UPDATE SET weight = excluded.weight,"
        " updated = excluded.updated",
        [(topic, valence, w, now) for (topic, valence), w in changes.markers.items()],
    )
    # After the weights: a topic's new rows get their label here too.
    batch.executemany(
        "UPDATE markers SET label = ? WHERE topic = ? AND label IS NOT ?",
        [(label, topic, label) for topic, label in changes.marker_labels.items()],
    )
    batch.executemany(
        "INSERT INTO gaps (topic, detail, created) VALUES (?, ?, ?)",
        [(topic, detail, now) for topic, detail in changes.gaps],
    )
    batch.executemany(
        "INSERT INTO summaries (layer, text, created, observations, reflector, reason)"
        " VALUES (?, ?, ?, ?, ?, ?)",
        [(s.layer, s.text, now, s.observations, s.reflector, s.reason) for s in changes.summaries],
    )
    batch.executemany(
        "UPDATE due SET fired_at = ? WHERE key = ? AND fired_at IS NULL",
        [(at, key) for key, at in changes.fired.items()],
    )
    batch.executemany(
        "INSERT INTO assemblies (hash, created, session, query, mode, chars, recalled,"
        " paused, items, sections) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [
            (
                a.hash,
                now,
                a.session,
                a.query,
                a.mode,
                a.chars,
                a.recalled,
                int(a.paused),
                a.items,
                a.sections,
            )
            for a in changes.assemblies
        ],
    )
    batch.executemany(
        "INSERT INTO surfaced (item, at) VALUES (?, ?)"
        " ON CONFLICT (item) DO UPDATE SET at = max(at, excluded.at)",
        list(changes.surfaced.items()),
    )
    batch.executemany(SET_STATE, list(changes.state.items()))
    write_claims(batch, changes.claims, changes.closings, event_ids)
    batch.executemany(
        "INSERT INTO questions (id, event_id, asker, session, text, asked, state)"
        " VALUES (?, ?, ?, ?, ?, ?, 'pending')",
        [
            (q.id, sourced(q.event_id, event_ids), q.asker, q.session, q.text, q.asked)
            for q in changes.questions
        ],
    )
    batch.executemany(
        "UPDATE questions SET state = ?, resolved = ?, answer = ? WHERE id = ?",
        [(s.state, now, sourced(s.answer, event_ids), s.id) for s in changes.settlements],
    )
    batch.executemany(
        GOAL_UPSERT, [msgspec.structs.astuple(g.sourced(event_ids)) for g in changes.goals]
    )


def write_claims(
    batch: Batch,
    claims: Sequence[NewClaim],
    closings: Sequence[ClaimClosing],
    event_ids: Sequence[int] = (),
) -> None:
    """Add the statements that store ``claims`` (their negative event ids resolved
    against ``event_ids``) and then close ``closings`` to ``batch``."""
    batch.executemany(
        f"INSERT INTO claims ({CLAIM_COLUMNS}) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
        [msgspec.structs.astuple(c.sourced(event_ids)) for c in claims],
    )
    batch.executemany(
        "UPDATE claims SET state = ?, valid_to = coalesce(?, valid_to),"
        " recorded_to = coalesce(?, recorded_to) WHERE id = ?",
        [(c.state, c.valid_to, c.recorded_to, c.id) for c in closings],
    )
