"""Knowing: the requests that read or edit what a soul knows and whom it knows.

Claims and goals (stated, changed, listed), why a context was assembled, the persons
and their linked accounts, the memory map and a labelled read. Each is a short call
into :class:`~souls.knowledge.knowledge.Knowledge`, :class:`~souls.knowledge.persons.Persons` or
:mod:`souls.knowledge.navigate`; this module only joins them to the clock and turns their
refusals into client errors. Invariants a caller may rely on:

* A request the knowledge, persons or navigation refuse (``ValueError``) raises
  InvalidParams with the refusal's message; one naming a claim or goal id the soul has
  none of (``MissingItem``), or a ``read`` of an unknown label (``LookupError``), raises
  NotFound with it. ``why`` of a context never assembled raises InvalidParams naming
  the soul.
* A person link leaves the in-memory entries view current: the account's claims change
  subject in the table only, so the view is marked stale before the link and reloaded
  after it (left stale, to reload on next use, if the link fails).
"""

from __future__ import annotations

from typing import Final

from souls.actor.clock import Clock
from souls.actor.extraction import unspoken
from souls.knowledge.knowledge import Knowledge
from souls.knowledge.navigate import memory_map, read
from souls.knowledge.persons import Persons
from souls.messages import (
    ClaimAdd,
    ClaimChange,
    Claims,
    Goals,
    GoalSet,
    MemoryMap,
    PersonLink,
    Read,
    Why,
)
from souls.messages import Persons as PersonsMessage
from souls.store.interface import SoulStore
from supervisor.errors import InvalidParams, MissingItem, NotFound

__all__ = ["KNOWING", "Knowing", "KnowingRequest"]

KnowingRequest = (
    ClaimAdd
    | ClaimChange
    | Claims
    | GoalSet
    | Goals
    | Why
    | PersonLink
    | PersonsMessage
    | MemoryMap
    | Read
)
# The same types as KnowingRequest, for isinstance: keep the two in step.
KNOWING: Final = (
    ClaimAdd,
    ClaimChange,
    Claims,
    GoalSet,
    Goals,
    Why,
    PersonLink,
    PersonsMessage,
    MemoryMap,
    Read,
)


class Knowing:
    def __init__(
        self,
        name: str,
        clock: Clock,
        *,
        store: SoulStore,
        knowledge: Knowledge,
        persons: Persons,
    ) -> None:
        self._name = name
        self._clock = clock
        self._store = store
        self._knowledge = knowledge
        self._persons = persons

    async def handle(self, request: KnowingRequest) -> object:
        """The reply to ``request`` (see each message's docstring for its shape)."""
        match request:
            case ClaimAdd() | ClaimChange() | Claims() | GoalSet() | Goals():
                return await self._claims_and_goals(request)
            case Why(hash=wanted):
                assembly = await self._knowledge.assembly(wanted)
                if assembly is None:
                    raise InvalidParams(
                        f"no context {wanted!r} was assembled by soul {self._name!r}"
                        if wanted
                        else f"soul {self._name!r} has assembled no context yet"
                    )
                return assembly
            case PersonLink(person=person, channel=channel, external=external):
                entries = self._knowledge.entries
                entries.invalidate()  # the account's claims change subject
                try:
                    linked = await self._persons.link(person, channel, external, self._clock.now())
                except ValueError as exc:
                    raise InvalidParams(str(exc)) from None
                await entries.reload()
                return linked | await self._knowledge.follow_links()
            case PersonsMessage():
                return {"persons": await self._persons.all()}
            case MemoryMap(budget=budget):
                return {"map": await memory_map(self._store, self._knowledge, budget)}
            case Read(id=label):
                try:
                    return await read(self._store, self._knowledge, label)
                except LookupError as exc:  # an unknown label
                    raise NotFound(str(exc)) from None
                except ValueError as exc:
                    raise InvalidParams(str(exc)) from None

    async def _claims_and_goals(
        self, request: ClaimAdd | ClaimChange | Claims | GoalSet | Goals
    ) -> object:
        entries, now = self._knowledge.entries, self._clock.now()
        try:
            match request:
                case ClaimAdd() as add:
                    return await entries.state(add, now)
                case ClaimChange(action=action, id=claim_id, value=value):
                    return await entries.change(action, claim_id, value, now)
                case Claims(every=every):
                    listing: dict[str, object] = {
                        "claims": await entries.claims(every=every),
                        "questions": await entries.questions(state="unanswered"),
                        "fidelity_ai": entries.fidelity_ai,
                    }
                    if every:  # never facts: only the full listing shows them, apart
                        listing["unspoken"] = await unspoken(self._store)
                    return listing
                case GoalSet(update=update):
                    return await self._knowledge.update_goal(update, now)
                case Goals():
                    return {"goals": sorted(self._knowledge.goals.values(), key=lambda g: g.id)}
        except MissingItem as exc:
            raise NotFound(str(exc)) from None
        except ValueError as exc:
            raise InvalidParams(str(exc)) from None
