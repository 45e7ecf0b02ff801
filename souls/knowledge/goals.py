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
from collections.abc import Callable, Iterable, Sequence
from typing import Literal

import msgspec

from souls.knowledge.domains import DOMAIN_LEXICON, concept_words, concepts, domains_in, hits
from souls.messages import GoalAction, GoalUpdate
from souls.mind.topics import is_topic
from souls.recall.assembly import Contender, age_days
from souls.recall.potential import Scored
from souls.results import RecallItem
from souls.text.content import is_content
from souls.text.tokenize import query_terms, tokens
from supervisor.errors import MissingItem

__all__ = [
    "LOW_PRIORITY",
    "MAX_NOTES",
    "MAX_STATEMENT",
    "MAX_TRIGGERS",
    "Activation",
    "Goal",
    "GoalChange",
    "GoalNote",
    "GoalState",
    "Person",
    "activated",
    "activation",
    "apply",
    "channel",
    "goal_candidates",
    "relink",
    "topic_key",
]

GoalState = Literal["active", "paused", "achieved", "abandoned"]

MAX_STATEMENT = 500  # characters, statements and notes alike
MAX_TRIGGERS = 2
MAX_TRIGGER = 100  # characters per trigger phrase
MAX_DOMAIN = 40
MAX_NOTES = 20  # a goal keeps its latest notes only
_SAME_TOPIC_JACCARD = 0.6
# A goal of this priority or lower may have no bridge trigger (linghun: triggers are for
# high and medium goals); a goal taken from conversation is stated at LOW_PRIORITY.
LOW_PRIORITY = 2
# Verbs that say how a goal is pursued, not what it is about: "save for a house" and
# "buy a house" are one topic. Compared as stems, irregular past tenses as their verb.
_PURSUIT = frozenset(
    tokens(
        "save saving buy get start try finish complete train training learn practice study run "
        "improve become work keep continue achieve reach plan prepare afford do go make"
    )
)
_IRREGULAR = {
    "ran": "run", "won": "win", "bought": "buy", "did": "do", "made": "make", "got": "get",
    "wrote": "write", "sold": "sell", "went": "go", "becam": "becom", "found": "find",
    "paid": "pay", "built": "build", "met": "meet", "taught": "teach", "began": "begin",
    "left": "leav", "flew": "fli", "drove": "drive", "swam": "swim", "sang": "sing",
}  # fmt: skip
_LEXICON_DOMAINS = frozenset(DOMAIN_LEXICON)
# How the soul names the holder of a goal: the person behind a speaker, when linked.
Person = Callable[[str], str]

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
    # The event the goal was first read from; None when stated through goal.update. A
    # merge keeps the first statement's event (the goal's source, not its latest word).
    event_id: int | None = None


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


def apply(
    goals: Sequence[Goal],
    update: GoalUpdate,
    *,
    now: float,
    next_id: int,
    person: Person = str,
) -> GoalChange:
    """Apply ``update`` to the goals of the soul; ``goals`` is not modified.

    ``next_id`` is used only when a goal is created. ``person``: the person behind a
    speaker (an account linked to a person, see :mod:`souls.knowledge.persons`): two
    speakers behind whom stands one person hold their goals together, and a goal
    created or merged is held by the person's name. Raises ``ValueError`` for invalid
    input, an unknown or ambiguous target, or a transition the state machine forbids.
    """
    speaker = update.speaker.strip()
    if not speaker:
        raise ValueError("a goal update needs a speaker (who holds the goal)")
    speaker = person(speaker)
    if update.action == "new":
        return _new(goals, update, speaker, now, next_id, person)
    goal = _target(goals, update, speaker, person)
    allowed = _FROM[update.action]
    if goal.state not in allowed:
        raise ValueError(_transition_error(goal, update.action))
    note = _text(update.note, "note", required=update.action == "progress")
    fields: dict[str, object] = {"updated": now, "progress": _noted(goal.progress, now, note)}
    if update.action in _TO:
        fields["state"] = _TO[update.action]
    if update.action == "change":
        fields |= _rewrite(goal, update)
    if goal.speaker != speaker:
        fields["speaker"] = speaker  # held by the person from now on
    return GoalChange(
        outcome="updated", goal=msgspec.structs.replace(goal, **fields), previous=goal
    )


def activation(goal: Goal, situation: str, *, alpha: float = 0.6, beta: float = 0.4) -> Activation:
    """How strongly ``situation`` calls ``goal`` to mind, with the parts of the score.

    domainHit: the situation holds a word of the goal's domain in the bilingual domain
    lexicon (:mod:`souls.knowledge.domains`: "budget" is money, 房贷 too); a domain the
    lexicon lacks hits where the situation holds the domain word itself. bridgeHit: for
    some trigger phrase, the situation shares at least two of its terms (linghun's "≥ 2
    shared tokens") and at least two thirds of them ("rent goes up" hits "my rent went
    up", "the rent is due" does not). A one-word trigger never bridges. The two thirds
    keep a CJK phrase from firing on one shared word (whose unigrams and bigram are
    three tokens): "房租涨价" (7 tokens) needs 5, which "房租又涨价了" has and "房价" lacks.
    """
    words = tokens(situation)
    present = set(words)
    sim = _cosine(set(query_terms(situation, words)), set(query_terms(goal.statement)))
    domain_hit = _domain_hit(goal.domain, situation, present)
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
    shared = len(terms & present)
    return shared >= 2 and 3 * shared >= 2 * len(terms)


def _domain_hit(domain: str, situation: str, present: set[str]) -> bool:
    if not domain:
        return False
    if domain in _LEXICON_DOMAINS:
        return domain in domains_in(situation)
    return hits(domain, situation)


def _new(
    goals: Sequence[Goal],
    update: GoalUpdate,
    speaker: str,
    now: float,
    next_id: int,
    person: Person,
) -> GoalChange:
    if update.goal_id is not None:
        raise ValueError(
            "a new goal takes no goal_id; to update goal "
            f"g{update.goal_id} use progress, change, achieve, abandon, pause or resume"
        )
    statement = _statement(update.statement)
    domain = _domain(update.domain)
    triggers = _triggers(update.triggers)
    priority = _priority(3 if update.priority is None else update.priority)
    if not triggers and priority > LOW_PRIORITY:
        raise ValueError(
            f"a new goal of priority {priority} needs 1-2 bridge triggers: short phrases "
            "for the situations that should bring it to mind (e.g. 'rent goes up' for "
            f"saving for a house); a goal of priority {LOW_PRIORITY} or lower may have none"
        )
    note = _text(update.note, "note", required=False)
    terms = _terms(statement)
    same = [
        g
        for g in goals
        if person(g.speaker) == speaker
        and g.state in _OPEN
        and _same_topic(g, terms, domain, statement)
    ]
    if same:
        old = max(same, key=lambda g: (_jaccard(_terms(g.statement), terms), -g.id))
        if not note and statement.casefold() != old.statement.casefold():
            note = f"restated: {statement}"
        merged = msgspec.structs.replace(
            old,
            speaker=speaker,
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


def _target(goals: Sequence[Goal], update: GoalUpdate, speaker: str, person: Person) -> Goal:
    """The goal an update other than ``new`` is about (not yet checked against the action)."""
    if update.goal_id is not None:
        goal = next((g for g in goals if g.id == update.goal_id), None)
        if goal is None:
            raise MissingItem(f"no goal g{update.goal_id}; list the goals to find its id")
        if person(goal.speaker) != speaker:
            raise ValueError(f"goal g{goal.id} is held by {goal.speaker!r}, not {speaker!r}")
        return goal
    statement = update.statement.strip()
    if not statement:
        raise ValueError(f"{update.action} needs the goal's id (goal_id) or its statement")
    terms = _terms(statement)
    domain = _domain(update.domain)
    same = [
        g
        for g in goals
        if person(g.speaker) == speaker and _same_topic(g, terms, domain, statement)
    ]
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


def _same_topic(goal: Goal, terms: frozenset[str], domain: str, statement: str) -> bool:
    """Same topic: by the statements' terms (Jaccard ≥ 0.6, or the one set, of two terms
    or more, inside the other), or by their topic keys (:func:`topic_key`: what the
    goals are about, whatever the verb and the language) where the one lies inside the
    other: "saving for a house" and 明年买房 share the house."""
    if goal.domain and domain and goal.domain != domain:
        return False
    theirs = _terms(goal.statement)
    smaller = min(len(theirs), len(terms))
    contained = smaller >= 2 and len(theirs & terms) == smaller
    if contained or _jaccard(theirs, terms) >= _SAME_TOPIC_JACCARD:
        return True
    a, b = topic_key(goal.statement), topic_key(statement)
    return bool(a) and bool(b) and _jaccard(a, b) >= _SAME_TOPIC_JACCARD


def topic_key(text: str, *, verbs: bool = False) -> frozenset[str]:
    """What ``text`` is about: its content terms (irregular past tenses as their verb;
    without ``verbs``, the verbs of pursuit such as save, buy, train left out), CJK words
    of two characters, and the bilingual concepts it names (:data:`CONCEPTS`, as
    ``@house``)."""
    named = concepts(text)
    found: set[str] = {f"@{c}" for c in named}
    stems: set[str] = set()
    chinese: list[str] = []
    for name in named:  # a word a concept stands for is the concept, not a term
        words = concept_words(name)
        stems |= words[0]
        chinese += words[1]
    for term in tokens(text):
        term = _IRREGULAR.get(term, term)
        if term in stems:
            continue
        if term.isascii():
            if is_content(term) and len(term) > 1 and (verbs or term not in _PURSUIT):
                found.add(term)
        elif len(term) == 2 and is_topic(term) and not any(w in term for w in chinese):
            found.add(term)
    return frozenset(found)


def _jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    return len(a & b) / len(a | b) if a or b else 0.0


def _cosine(a: set[str], b: set[str]) -> float:
    return len(a & b) / math.sqrt(len(a) * len(b)) if a and b else 0.0


def _short(text: str, width: int = 60) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def relink(goals: Sequence[Goal], person: Person) -> tuple[list[Goal], list[int]]:
    """Goals after a person link: each held by the person behind its speaker, and two
    open goals of one person on one topic made one (the older keeps its id and gains
    the other's notes and triggers). Returns the goals that changed and the ids of
    those merged away; ``goals`` is not modified."""
    by_id = {g.id: g for g in goals}
    changed: dict[int, Goal] = {}
    for goal in goals:
        who = person(goal.speaker)
        if who != goal.speaker:
            changed[goal.id] = by_id[goal.id] = msgspec.structs.replace(goal, speaker=who)
    gone: list[int] = []
    for goal in sorted(by_id.values(), key=lambda g: g.id):
        if goal.id in gone or goal.state not in _OPEN:
            continue
        for other in sorted(by_id.values(), key=lambda g: g.id):
            if other.id <= goal.id or other.id in gone or other.state not in _OPEN:
                continue
            if other.speaker != goal.speaker:
                continue
            if not _same_topic(goal, _terms(other.statement), other.domain, other.statement):
                continue
            notes = sorted((*goal.progress, *other.progress), key=lambda n: n.at)
            goal = msgspec.structs.replace(
                goal,
                domain=goal.domain or other.domain,
                priority=max(goal.priority, other.priority),
                triggers=_union(goal.triggers, other.triggers),
                updated=max(goal.updated, other.updated),
                progress=tuple(notes[-MAX_NOTES:]),
            )
            changed[goal.id] = by_id[goal.id] = goal
            changed.pop(other.id, None)
            gone.append(other.id)
    return [changed[i] for i in sorted(changed)], gone


def channel(goals: Iterable[Goal], situation: str, *, threshold: float = 0.15) -> list[RecallItem]:
    """The goal channel of a context: every open goal, its statement only (with who
    holds it, unless that is "user", and "(paused)" for a paused one) — no triggers, no
    priority, no state machine (linghun: the evidence channel is statement-only; the
    triggers are navigation, for the map). The goals ``situation`` activates (score ≥
    ``threshold``) come first, best first, so that a budget cuts the others; then the
    rest, active before paused, priority high to low, then id. Deterministic."""
    open_ = [g for g in goals if g.state in _OPEN]
    scores = {g.id: activation(g, situation).score for g in open_} if situation.strip() else {}
    ranked = sorted(
        open_,
        key=lambda g: (
            -scores.get(g.id, 0.0) if scores.get(g.id, 0.0) >= threshold else 0.0,
            _GOAL_STATE_ORDER[g.state],
            -g.priority,
            g.id,
        ),
    )
    found = []
    for goal in ranked:
        holder = "" if goal.speaker == "user" else f"{goal.speaker}: "
        paused = " (paused)" if goal.state == "paused" else ""
        score = round(scores.get(goal.id, 0.0), 6)
        found.append(
            RecallItem(goal.id, "goal", f"{holder}{goal.statement}{paused}", score, "goal", [])
        )
    return found


_GOAL_STATE_ORDER: dict[GoalState, int] = {"active": 0, "paused": 1, "achieved": 2, "abandoned": 3}


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
