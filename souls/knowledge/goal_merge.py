"""From what a turn says about goals to the goal updates it makes (DESIGN §3.10).

:func:`follow` reads a turn with :func:`souls.knowledge.goal_talk.read_goals` and applies
what it finds to the speaker's goals through the state machine of
:mod:`souls.knowledge.goals`, one signal after the other:

* a **new** goal, plan or value merges into an open goal of the same person on the same
  topic (restating a goal notes it, never duplicates it), else creates one at priority
  :data:`~souls.knowledge.goals.LOW_PRIORITY` without triggers (a rule cannot know which
  far-off situations should recall it; the domain lexicon reaches it meanwhile);
* a **state signal** (progress, achieve, abandon, pause) goes to the open goal of the
  speaker whose topic it shares most (:func:`~souls.knowledge.goals.topic_key`, verbs
  included, so "I finally ran it!" finds "run a half marathon"; ties go to the goal
  touched last). One that names nothing ("I did it!") goes to the goal the speaker
  touched last, if that was within :data:`RECENT` days; one that names something no
  open goal holds changes nothing.

Every change notes the sentence it came from. Pure: the caller stores the changes.
"""

from __future__ import annotations

from collections.abc import Sequence

from souls.knowledge.goal_talk import GoalSignal, read_goals
from souls.knowledge.goals import (
    LOW_PRIORITY,
    MAX_STATEMENT,
    Goal,
    GoalChange,
    Person,
    apply,
    topic_key,
)
from souls.messages import GoalUpdate

__all__ = ["RECENT", "follow"]

RECENT = 30.0  # days: how far back "I did it!" looks for the goal it is about
_DAY = 86_400.0


def follow(
    goals: Sequence[Goal],
    text: str,
    *,
    speaker: str,
    now: float,
    next_id: int,
    person: Person = str,
    signals: Sequence[GoalSignal] | None = None,
) -> list[GoalChange]:
    """The goal changes ``text``, said by ``speaker`` at ``now``, makes, in order; each
    later one sees the earlier ones. ``next_id``: the id of the first goal created.
    ``signals``: ``read_goals(text)`` when the caller has read it already (elsewhere)."""
    working = {g.id: g for g in goals}
    changes: list[GoalChange] = []
    who = person(speaker)
    for signal in read_goals(text) if signals is None else signals:
        update = _update(list(working.values()), signal, who, now, person)
        if update is None:
            continue
        try:
            change = apply(list(working.values()), update, now=now, next_id=next_id, person=person)
        except ValueError:
            continue  # a transition the machine refuses (pausing a paused goal...)
        working[change.goal.id] = change.goal
        if change.outcome == "created":
            next_id += 1
        changes.append(change)
    return changes


def _update(
    goals: list[Goal], signal: GoalSignal, who: str, now: float, person: Person
) -> GoalUpdate | None:
    note = _note(signal.quote)
    if signal.action == "new":
        return GoalUpdate(
            action="new",
            statement=signal.statement[:MAX_STATEMENT],
            speaker=who,
            domain=signal.domain,
            priority=LOW_PRIORITY,
            note=note,
        )
    mine = [g for g in goals if person(g.speaker) == who and g.state in ("active", "paused")]
    target = _target(mine, signal, now)
    if target is None:
        return None
    return GoalUpdate(action=signal.action, statement="", speaker=who, goal_id=target.id, note=note)


def _target(goals: list[Goal], signal: GoalSignal, now: float) -> Goal | None:
    if not goals:
        return None
    wanted = topic_key(signal.statement, verbs=True)
    if not wanted:
        latest = max(goals, key=lambda g: (g.updated, g.id))
        return latest if now - latest.updated <= RECENT * _DAY else None
    scored = [(len(wanted & topic_key(g.statement, verbs=True)), g.updated, g.id, g) for g in goals]
    best = max(scored, key=lambda s: s[:3])
    return best[3] if best[0] > 0 else None


def _note(quote: str) -> str:
    quote = " ".join(quote.split())
    return quote if len(quote) <= MAX_STATEMENT else quote[: MAX_STATEMENT - 1] + "…"
