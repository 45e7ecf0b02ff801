"""Goals: what a speaker means to bring about, and which situations call it to mind.

DESIGN §3.10 (from linghun's goal.js). Two halves, both pure: no I/O, no clock (``now``
is passed in); the caller stores the rows.

**The state machine** (:func:`apply`)::

    new ──► active ◄── pause / resume ──► paused
            │  progress, change keep the state  │
            ├── achieve ──► achieved ◄──────────┤
            └── abandon ──► abandoned ◄─────────┘

achieved and abandoned are terminal: an update on a closed goal raises, and stating the
goal again with ``new`` opens a new goal. Every invalid update raises ``ValueError`` with
a message that names the goal, its state and the action, and says what to do instead.

**Same topic.** A ``new`` merges into an open goal, and an update without ``goal_id``
finds its goal, when the two are on the same topic: same speaker, compatible domains
(equal, or one of them empty) and content terms (the set of
:func:`souls.text.tokenize.query_terms`, the way recall reads text) that either overlap with
Jaccard ≥ 0.6 or where one set, of at least two terms, lies inside the other. The
containment arm catches a restatement that adds detail ("save for a house" → "save for a
house deposit by 2027"); the 0.6 keeps goals that differ in their one key word apart
("save money for a house" / "... for a car" have Jaccard 0.5).

**Activation** (:func:`activation`, :func:`activated`) follows DESIGN's formula::

    score = alpha·sim·[stateW > 0] + beta·stateW·(0.25·domainHit + 0.35·bridgeHit + 0.40·sim + 0.15)

The ``[stateW > 0]`` factor is ours: DESIGN's alpha·sim alone would let an achieved or
abandoned goal surface on word overlap, and a closed goal must never surface, so its
score is 0. A situation that shares no word with the statement still brings an active
goal up through its bridge trigger (score 0.20) or its domain word (0.16), above the
default threshold 0.15; a situation touching nothing scores 0.06. Same input, same output.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Literal

import msgspec

from souls.messages import GoalAction, GoalUpdate
from souls.recall.assembly import Contender, age_days
from souls.recall.potential import Scored
from souls.results import RecallItem
from souls.text.tokenize import query_terms, tokens

__all__ = [
    "MAX_NOTES",
    "MAX_STATEMENT",
    "MAX_TRIGGERS",
    "Activation",
    "Goal",
    "GoalChange",
    "GoalNote",
    "GoalState",
    "activated",
    "activation",
    "apply",
    "goal_candidates",
]

GoalState = Literal["active", "paused", "achieved", "abandoned"]

MAX_STATEMENT = 500  # characters, statements and notes alike
MAX_TRIGGERS = 2
MAX_TRIGGER = 100  # characters per trigger phrase
MAX_DOMAIN = 40
MAX_NOTES = 20  # a goal keeps its latest notes only
_SAME_TOPIC_JACCARD = 0.6

_OPEN: frozenset[GoalState] = frozenset({"active", "paused"})
_STATE_WEIGHT: dict[GoalState, float] = {
    "active": 1.0,
    "paused": 0.5,
    "achieved": 0.0,
    "abandoned": 0.0,
}
# From which states each update action is allowed, and the state it leads to.
_FROM: dict[GoalAction, frozenset[GoalState]] = {
    "progress": _OPEN,
    "change": _OPEN,
    "achieve": _OPEN,
    "abandon": _OPEN,
    "pause": frozenset({"active"}),
    "resume": frozenset({"paused"}),
}
_TO: dict[GoalAction, GoalState] = {
    "achieve": "achieved",
    "abandon": "abandoned",
    "pause": "paused",
    "resume": "active",
}


class GoalNote(msgspec.Struct, frozen=True):
    at: float  # when the note was made (seconds since the epoch)
    text: str


class Goal(msgspec.Struct, frozen=True, kw_only=True):
    id: int
    speaker: str  # who holds the goal
    statement: str
    domain: str  # lowercase topic word ("money", "health"), may be empty
    priority: int  # 1..5, 5 highest
    triggers: tuple[str, ...]  # 1-2 bridge phrases: situations that should recall it
    state: GoalState
    created: float
    updated: float
    progress: tuple[GoalNote, ...] = ()  # oldest first, at most MAX_NOTES


class GoalChange(msgspec.Struct, frozen=True, kw_only=True):
    outcome: Literal["created", "merged", "updated"]
    goal: Goal  # the goal as it is now: store it under goal.id (insert or replace)
    previous: Goal | None  # as it was; None when created


class Activation(msgspec.Struct, frozen=True, kw_only=True):
    goal: Goal
    sim: float  # cosine of the situation's and the statement's content-term sets
    domain_hit: bool
    bridge_hit: bool
    trigger: str  # the trigger phrase that hit, "" when none
    state_w: float
    score: float


def apply(goals: Sequence[Goal], update: GoalUpdate, *, now: float, next_id: int) -> GoalChange:
    """Apply ``update`` to the goals of the soul; ``goals`` is not modified.

    ``next_id`` is used only when a goal is created. Raises ``ValueError`` for invalid
    input, an unknown or ambiguous target, or a transition the state machine forbids.
    """
    speaker = update.speaker.strip()
    if not speaker:
        raise ValueError("a goal update needs a speaker (who holds the goal)")
    if update.action == "new":
        return _new(goals, update, speaker, now, next_id)
    goal = _target(goals, update, speaker)
    allowed = _FROM[update.action]
    if goal.state not in allowed:
        raise ValueError(_transition_error(goal, update.action))
    note = _text(update.note, "note", required=update.action == "progress")
    fields: dict[str, object] = {"updated": now, "progress": _noted(goal.progress, now, note)}
    if update.action in _TO:
        fields["state"] = _TO[update.action]
    if update.action == "change":
        fields |= _rewrite(goal, update)
    return GoalChange(
        outcome="updated", goal=msgspec.structs.replace(goal, **fields), previous=goal
    )


def activation(goal: Goal, situation: str, *, alpha: float = 0.6, beta: float = 0.4) -> Activation:
    """How strongly ``situation`` calls ``goal`` to mind, with the parts of the score.

    domainHit: every token of the domain is in the situation. bridgeHit: for some
    trigger phrase, at least two thirds (rounded up) of its content terms are in the
    situation: all of a one- or two-word phrase, two of three ("rent goes up" hits "my
    rent went up"). That is linghun's "≥ 2 shared tokens" for short phrases, without
    letting a CJK phrase fire on one shared word (whose unigrams and bigram are three
    tokens): "房租涨价" (7 tokens) needs 5, which "房租又涨价了" has and "房价" lacks.
    """
    words = tokens(situation)
    present = set(words)
    sim = _cosine(set(query_terms(situation, words)), set(query_terms(goal.statement)))
    domain = set(tokens(goal.domain))
    domain_hit = bool(domain) and domain <= present
    trigger = next((t for t in goal.triggers if _bridges(t, present)), "")
    state_w = _STATE_WEIGHT[goal.state]
    pull = 0.25 * domain_hit + 0.35 * bool(trigger) + 0.40 * sim + 0.15
    score = alpha * sim * (state_w > 0) + beta * state_w * pull
    return Activation(
        goal=goal,
        sim=sim,
        domain_hit=domain_hit,
        bridge_hit=bool(trigger),
        trigger=trigger,
        state_w=state_w,
        score=score,
    )


def activated(
    goals: Sequence[Goal], situation: str, *, threshold: float = 0.15, limit: int = 3
) -> list[Activation]:
    """The goals ``situation`` activates: score ≥ ``threshold`` (and > 0), best first.

    Order: score descending, then priority descending, then id ascending, whatever the
    order of ``goals``. Closed goals never appear.
    """
    if threshold < 0 or limit < 0:
        raise ValueError("threshold and limit must be >= 0")
    scored = (activation(goal, situation) for goal in goals)
    found = [a for a in scored if a.score > 0 and a.score >= threshold]
    found.sort(key=lambda a: (-a.score, -a.goal.priority, a.goal.id))
    return found[:limit]


def _bridges(trigger: str, present: set[str]) -> bool:
    terms = set(query_terms(trigger))
    return bool(terms) and 3 * len(terms & present) >= 2 * len(terms)


def _new(
    goals: Sequence[Goal], update: GoalUpdate, speaker: str, now: float, next_id: int
) -> GoalChange:
    if update.goal_id is not None:
        raise ValueError(
            "a new goal takes no goal_id; to update goal "
            f"g{update.goal_id} use progress, change, achieve, abandon, pause or resume"
        )
    statement = _statement(update.statement)
    domain = _domain(update.domain)
    triggers = _triggers(update.triggers)
    if not triggers:
        raise ValueError(
            "a new goal needs 1-2 bridge triggers: short phrases for the situations that "
            "should bring it to mind (e.g. 'rent goes up' for saving for a house)"
        )
    priority = _priority(3 if update.priority is None else update.priority)
    note = _text(update.note, "note", required=False)
    terms = _terms(statement)
    same = [
        g
        for g in goals
        if g.speaker == speaker and g.state in _OPEN and _same_topic(g, terms, domain)
    ]
    if same:
        old = max(same, key=lambda g: (_jaccard(_terms(g.statement), terms), -g.id))
        if not note and statement.casefold() != old.statement.casefold():
            note = f"restated: {statement}"
        merged = msgspec.structs.replace(
            old,
            domain=old.domain or domain,
            priority=max(old.priority, priority),
            triggers=_union(old.triggers, triggers),
            state="active",  # stating a paused goal again takes it up again
            updated=now,
            progress=_noted(old.progress, now, note),
        )
        return GoalChange(outcome="merged", goal=merged, previous=old)
    if any(g.id == next_id for g in goals):
        raise ValueError(f"next_id {next_id} is already the id of a goal")
    goal = Goal(
        id=next_id,
        speaker=speaker,
        statement=statement,
        domain=domain,
        priority=priority,
        triggers=triggers,
        state="active",
        created=now,
        updated=now,
        progress=_noted((), now, note),
    )
    return GoalChange(outcome="created", goal=goal, previous=None)


def _target(goals: Sequence[Goal], update: GoalUpdate, speaker: str) -> Goal:
    """The goal an update other than ``new`` is about (not yet checked against the action)."""
    if update.goal_id is not None:
        goal = next((g for g in goals if g.id == update.goal_id), None)
        if goal is None:
            raise ValueError(f"no goal g{update.goal_id}; list the goals to find its id")
        if goal.speaker != speaker:
            raise ValueError(f"goal g{goal.id} is held by {goal.speaker!r}, not {speaker!r}")
        return goal
    statement = update.statement.strip()
    if not statement:
        raise ValueError(f"{update.action} needs the goal's id (goal_id) or its statement")
    terms = _terms(statement)
    domain = _domain(update.domain)
    same = [g for g in goals if g.speaker == speaker and _same_topic(g, terms, domain)]
    open_ = [g for g in same if g.state in _OPEN]
    if len(open_) > 1:
        ids = ", ".join(f"g{g.id}" for g in sorted(open_, key=lambda g: g.id))
        raise ValueError(
            f"{_short(statement)!r} matches several open goals of {speaker!r} ({ids}); "
            "say which with goal_id"
        )
    if open_:
        return open_[0]
    if same:  # only closed goals match: name the latest in the transition error
        return max(same, key=lambda g: (g.updated, g.id))
    raise ValueError(
        f"no goal of {speaker!r} matches {_short(statement)!r}; give its goal_id, "
        "or create it with action 'new'"
    )


def _transition_error(goal: Goal, action: GoalAction) -> str:
    head = f"goal g{goal.id} ({_short(goal.statement)!r}) is {goal.state}: cannot {action} it"
    if goal.state not in _OPEN:
        return f"{head}; a closed goal stays closed, state it again with action 'new'"
    can = [a for a, states in _FROM.items() if goal.state in states]
    return f"{head}; from {goal.state} it can {', '.join(can)}"


def _rewrite(goal: Goal, update: GoalUpdate) -> dict[str, object]:
    """The fields a ``change`` sets: those it gives (statement, domain, triggers, priority)."""
    fields: dict[str, object] = {}
    if update.statement.strip():
        fields["statement"] = _statement(update.statement)
    if update.domain.strip():
        fields["domain"] = _domain(update.domain)
    if update.triggers:
        fields["triggers"] = _triggers(update.triggers)
    if update.priority is not None:
        fields["priority"] = _priority(update.priority)
    if not fields:
        raise ValueError(
            f"change of goal g{goal.id} gives nothing to change: "
            "give a statement, domain, triggers or priority"
        )
    return fields


def _statement(text: str) -> str:
    statement = _text(text, "statement", required=True)
    if not query_terms(statement):
        raise ValueError("a goal statement needs at least one word")
    return statement


def _text(text: str, what: str, *, required: bool) -> str:
    text = text.strip()
    if required and not text:
        raise ValueError(f"the {what} must not be empty")
    if len(text) > MAX_STATEMENT:
        raise ValueError(f"the {what} has {len(text)} characters; keep it to {MAX_STATEMENT}")
    return text


def _domain(domain: str) -> str:
    domain = domain.strip().lower()
    if len(domain) > MAX_DOMAIN:
        raise ValueError(
            f"a domain is one topic word ('money', 'health'), not {len(domain)} characters"
        )
    return domain


def _priority(priority: int) -> int:
    if not 1 <= priority <= 5:
        raise ValueError(f"priority {priority} is out of range: use 1 (lowest) to 5 (highest)")
    return priority


def _triggers(phrases: Sequence[str]) -> tuple[str, ...]:
    """Validated trigger phrases, stripped, duplicates (ignoring case) dropped: 0-2 of them."""
    found: dict[str, str] = {}
    for phrase in phrases:
        phrase = phrase.strip()
        if not phrase or not query_terms(phrase) or len(phrase) > MAX_TRIGGER:
            raise ValueError(
                f"trigger {phrase!r} is not usable: a trigger is a short phrase "
                f"(1 to {MAX_TRIGGER} characters, with a word in it)"
            )
        found.setdefault(phrase.casefold(), phrase)
    if len(found) > MAX_TRIGGERS:
        raise ValueError(f"a goal takes 1-{MAX_TRIGGERS} bridge triggers, not {len(found)}")
    return tuple(found.values())


def _union(old: tuple[str, ...], new: tuple[str, ...]) -> tuple[str, ...]:
    seen = {t.casefold() for t in old}
    return (*old, *(t for t in new if t.casefold() not in seen))[:MAX_TRIGGERS]


def _noted(notes: tuple[GoalNote, ...], now: float, note: str) -> tuple[GoalNote, ...]:
    return (*notes, GoalNote(now, note))[-MAX_NOTES:] if note else notes


def _terms(text: str) -> frozenset[str]:
    return frozenset(query_terms(text))


def _same_topic(goal: Goal, terms: frozenset[str], domain: str) -> bool:
    if goal.domain and domain and goal.domain != domain:
        return False
    theirs = _terms(goal.statement)
    smaller = min(len(theirs), len(terms))
    contained = smaller >= 2 and len(theirs & terms) == smaller
    return contained or _jaccard(theirs, terms) >= _SAME_TOPIC_JACCARD


def _jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    return len(a & b) / len(a | b) if a or b else 0.0


def _cosine(a: set[str], b: set[str]) -> float:
    return len(a & b) / math.sqrt(len(a) * len(b)) if a and b else 0.0


def _short(text: str, width: int = 60) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def goal_candidates(activations: Sequence[Activation], now: float) -> list[Contender]:
    found = []
    for a in activations:
        goal = a.goal
        why = "bridge trigger" if a.bridge_hit else "domain" if a.domain_hit else "statement"
        text = f"(goal, {goal.state}, priority {goal.priority}) {goal.statement}"
        item = RecallItem(goal.id, "goal", text, round(a.score, 6), f"goal:{why}", [])
        scored = Scored(
            id=goal.id,
            kind="goal",
            text=goal.statement,
            bm25=min(a.score, 1.0),
            unsurfaced_days=age_days(goal.updated, now),
        )
        found.append(Contender(item, scored))
    return found
