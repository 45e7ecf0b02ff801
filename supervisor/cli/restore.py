"""Restoring what the user set from a ``soupd export``: the records other than events.

Of an export, the events come back and derived state (memories, extracted claims,
summaries...) is derived again from them. What the user set, which no event holds, is
restored through the methods that set it:

* ``identity`` records: ``person.link`` to the person their ``person`` record names,
  all of them before any event (a first pass, :func:`scan_links`, finds them; an export
  lists them after its events), so that the soul attributes the imported events to the
  person at ingest;
* ``goal`` records: ``goal.update`` with ``new``, a ``progress`` for each note, then
  the transition to the goal's state (``pause``, ``achieve``, ``abandon``). The times
  (created, updated, each note's) become those of the import: no method takes a time;
* claims the user stated (source ``user``, no event) that are in force: ``claim.add``.
  Closed ones (superseded, retracted) are history and are skipped.

Goals and claims are restored in file order, after the events above them (a user's
claim then outranks the claims re-extracted from those events, as it did). One the
soul already holds (a goal of the same speaker and statement; a stated claim of the
same type, subject, slot and value) is a duplicate, so importing a file twice restores
nothing twice.

A :class:`Restorer` adds what it restored (``goals``, ``persons``, ``links``,
``claims``), found duplicate or skipped to the totals of the import it serves
(:mod:`supervisor.cli.importer`), and hands a record it cannot restore to that import's
``reject`` with its line number.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec

from channels.client import Client
from supervisor.errors import RemoteError

__all__ = ["Restorer", "is_claim", "scan_links"]

# An export writes a claim's own type (fact, rule, event) as the record's type; a
# record of type "claim" takes the entry type from "kind".
_ENTRY_TYPES = frozenset({"fact", "rule", "event"})
# The goal.update action that takes a newly stated (active) goal to the exported state.
_TRANSITIONS: dict[str, str | None] = {
    "active": None,
    "paused": "pause",
    "achieved": "achieve",
    "abandoned": "abandon",
}


class _Typed(msgspec.Struct):
    type: str | None = None


class _Person(msgspec.Struct):
    id: int
    name: str


class _Identity(msgspec.Struct):
    channel: str
    external: str
    person: int


class _Note(msgspec.Struct):
    text: str


class _Goal(msgspec.Struct):
    statement: str
    speaker: str = "user"
    domain: str = ""
    priority: int | None = None
    triggers: list[str] | str = []  # an export holds the JSON text of the list
    state: str = "active"
    progress: list[_Note] | str = []  # likewise


class _Entry(msgspec.Struct):
    value: str
    source: str
    subject: str = "user"
    slot: str | None = None
    confidence: str = "high"
    state: str = "active"
    event_id: int | None = None
    kind: str = "fact"  # the entry type, in a record of type "claim"


_typed = msgspec.json.Decoder(_Typed)


def scan_links(file: Path) -> list[tuple[int, str, Any]]:
    """The ``person`` and ``identity`` records of ``file``: (line number, type, record).
    Blocking: runs in a worker thread. A line that does not decode is left to the main
    pass, which reports it."""
    found: list[tuple[int, str, Any]] = []
    with file.open("rb") as handle:
        for number, raw in enumerate(handle, 1):
            try:
                kind = _typed.decode(raw).type
                if kind in ("person", "identity"):
                    found.append((number, kind, msgspec.json.decode(raw)))
            except msgspec.DecodeError:
                continue
    return found


def is_claim(record: dict[str, Any]) -> bool:
    """An export's claim record: typed as its entry (fact, rule, event) or as a claim,
    with a value and a source where an event has a text."""
    kind = record["type"]
    typed = isinstance(kind, str) and (kind in _ENTRY_TYPES or kind == "claim")
    return typed and "value" in record and "source" in record and "text" not in record


class Restorer:
    """Restores one import's persons, goals and stated claims into one soul."""

    def __init__(
        self,
        client: Client,
        soul: str,
        totals: dict[str, int],
        reject: Callable[[int, str, str], None],
    ) -> None:
        self._client = client
        self._soul = soul
        self._totals = totals
        self._reject = reject
        # What the soul held before: read at the first goal or claim (None until then).
        self._goals: set[tuple[str, str]] | None = None
        self._claims: set[tuple[str, str, str | None, str]] | None = None

    async def _call(self, line: int, method: str, params: dict[str, Any]) -> Any:
        """The method's result, or None after counting the record rejected (a reason
        that concerns the record: its params or the hygiene gate; any other error,
        such as an unknown soul, ends the import as it would for events)."""
        try:
            return await self._client.call(method, {"soul": self._soul, **params})
        except RemoteError as error:
            if error.code != "invalid_params" and not error.code.startswith("hygiene."):
                raise
            self._reject(line, error.code, error.message)
            return None

    async def link(self, people: list[tuple[int, str, Any]]) -> None:
        """Link every identity record to its person: before the first event."""
        persons: dict[int, str] = {}
        records = 0  # person records that decode
        for number, kind, record in people:
            if kind == "person":
                try:
                    person = msgspec.convert(record, _Person)
                except msgspec.ValidationError as exc:
                    self._reject(number, "bad_record", f"person record: {exc}")
                    continue
                persons[person.id] = person.name
                records += 1
        linked: set[int] = set()
        for number, kind, record in people:
            if kind != "identity":
                continue
            try:
                identity = msgspec.convert(record, _Identity)
            except msgspec.ValidationError as exc:
                self._reject(number, "bad_record", f"identity record: {exc}")
                continue
            account = f"{identity.channel}:{identity.external}"
            if identity.person not in persons:
                self._reject(
                    number,
                    "bad_record",
                    f"identity {account} names person {identity.person}, "
                    "which no person record of the file has",
                )
                continue
            params = {"person": persons[identity.person], "identity": account}
            if await self._call(number, "person.link", params) is not None:
                self._totals["links"] += 1
                linked.add(identity.person)
        # A person with no account to link cannot be made: person.link needs one.
        self._totals["persons"] += len(linked)
        self._totals["skipped"] += records - len(linked)

    async def goal(self, number: int, record: dict[str, Any]) -> None:
        """Restore the goal record of line ``number``: state it, replay its notes and
        take it to its state."""
        try:
            goal = msgspec.convert(record, _Goal)
            triggers = _listed(goal.triggers, list[str])
            notes = _listed(goal.progress, list[_Note])
        except msgspec.DecodeError as exc:
            self._reject(number, "bad_record", f"goal record: {exc}")
            return
        if goal.state not in _TRANSITIONS:
            self._reject(
                number,
                "bad_record",
                f"goal record: state {goal.state!r} is not one of {', '.join(_TRANSITIONS)}",
            )
            return
        transition = _TRANSITIONS[goal.state]
        if self._goals is None:
            held = (await self._client.call("goals", {"soul": self._soul}))["goals"]
            self._goals = {(g["speaker"], _folded(g["statement"])) for g in held}
        if (goal.speaker, _folded(goal.statement)) in self._goals:
            self._totals["duplicate"] += 1
            return
        params: dict[str, Any] = {"action": "new", "statement": goal.statement}
        params |= {"speaker": goal.speaker, "domain": goal.domain, "triggers": triggers}
        params |= {"priority": goal.priority}
        change = await self._call(number, "goal.update", params)
        if change is None:
            return
        goal_id = change["goal"]["id"]
        if change["outcome"] == "merged":
            # Two open goals on one topic cannot both be stated: new merges them.
            self._reject(
                number,
                "goal_merged",
                f"goal {goal.statement!r} merged into the open goal g{goal_id} of "
                f"{goal.speaker!r} on the same topic; its notes and state were not replayed",
            )
            return
        steps: list[dict[str, Any]] = [{"action": "progress", "note": n.text} for n in notes]
        steps += [{"action": transition}] if transition else []
        for step in steps:
            step |= {"goal_id": goal_id, "speaker": goal.speaker}
            if await self._call(number, "goal.update", step) is None:
                return  # the goal stands, partly restored; the reason says why
        self._totals["goals"] += 1

    async def claim(self, number: int, record: dict[str, Any]) -> None:
        """Restore the claim record of line ``number`` if the user stated it and it is
        in force; skip it otherwise."""
        try:
            entry = msgspec.convert(record, _Entry)
        except msgspec.ValidationError as exc:
            self._reject(number, "bad_record", f"claim record: {exc}")
            return
        kind = record["type"] if record["type"] in _ENTRY_TYPES else entry.kind
        stated = entry.source == "user" and entry.event_id is None
        if not stated or entry.state not in ("active", "deferred"):
            self._totals["skipped"] += 1  # extracted again from the events, or history
            return
        if self._claims is None:
            held = (await self._client.call("claims", {"soul": self._soul}))["claims"]
            self._claims = {
                _entry_key(c["type"], c["subject"], c["slot"], c["value"])
                for c in held
                if c["source"] == "user"
            }
        if _entry_key(kind, entry.subject, entry.slot, entry.value) in self._claims:
            self._totals["duplicate"] += 1
            return
        params = {"value": entry.value, "type": kind, "slot": entry.slot}
        params |= {"subject": entry.subject, "confidence": entry.confidence}
        added = await self._call(number, "claim.add", params)
        if added is not None:
            self._totals["duplicate" if added["outcome"] == "duplicate" else "claims"] += 1


def _listed(value: Any, shape: Any) -> Any:
    """A list field of a record, given as the list or as its JSON text (an export's)."""
    if isinstance(value, str):
        return msgspec.json.decode(value, type=shape)
    return value


def _folded(text: str) -> str:
    return " ".join(text.split()).casefold()


def _entry_key(
    kind: str, subject: str, slot: str | None, value: str
) -> tuple[str, str, str | None, str]:
    return kind, " ".join(subject.split()) or "user", slot, _folded(value)
