"""Typed entries on disk: facts, rules and events with their claims' history, and the
questions people asked (DESIGN §3.10).

:class:`Entries` reads them for the soul (what is in force, a slot's history, the open
questions) and writes what the user states: an entry (``claim.add``: a slot claim goes
through the merge algebra of :mod:`souls.knowledge.claims`, a free entry is simply active), an
update that supersedes one (never injected again), a correction (the same, and when it
corrects the soul's own extraction the AI-side fidelity drops), a retraction. Each write
is one transaction. Rows are never rewritten but to close them (state, valid_to,
recorded_to): a change is a new row plus a closed old one. Every row is read and
written through the store interface (``SoulStore.knowledge``), on either backend.

The entries in force (active and deferred) are also kept in memory, the active ones
indexed for context assembly, which reads them on every agent turn: see
:class:`InForce` for how the view is kept equal to the table.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Sequence
from typing import Any

import msgspec

from souls.intake.hygiene_gate import HygieneGate
from souls.knowledge.claim_events import parts
from souls.knowledge.claims import (
    LEGACY_TYPES,
    SLOTS,
    Candidate,
    ClaimRow,
    ClaimUpdate,
    Confidence,
    gate,
    merge,
    related_slots,
)
from souls.messages import ClaimAdd
from souls.recall.assembly import terms
from souls.recall.shortlist import Entry, EntryIndex
from souls.store.changes import CLAIM_COLUMNS, ClaimClosing, NewClaim
from souls.store.interface import SoulStore
from souls.store.knowledge import Question
from supervisor.errors import MissingItem

__all__ = [
    "CLAIM_COLUMNS",
    "COMMITMENTS",
    "FIDELITY",
    "Claim",
    "Entries",
    "InForce",
    "Question",
]

FIDELITY = "fidelity_ai"  # its soul_state key
# Slots whose active claims are open obligations (unresolved pressure).
COMMITMENTS = frozenset({"commitment", "plan"})
_IN_FORCE = ("active", "deferred")


class Claim(NewClaim, frozen=True):
    """A stored entry as the wire shows it: the claims row the store writes
    (:class:`~souls.store.changes.NewClaim`, whose fields are the table's columns)."""

    @property
    def text(self) -> str:
        """How the context shows it: a told event as linghun's ``subject | action |
        object | entities | detail`` ("Mel | painted | a lake sunrise | | last year
        (2022)"), a slot claim as ``subject slot words: value`` ("ann pet name: Mochi"),
        anything else as its value."""
        if self.slot == "event":
            p = parts(self.subject, self.value, self.quote, self.valid_from, self.valid_from)
            shown = " | ".join((p.subject, p.action, p.object, ", ".join(p.entities), p.detail))
            return shown + (" (needs verification)" if self.confidence == "low" else "")
        slot = self.slot.replace("_", " ") if self.slot else ""
        shown = f"{self.subject} {slot}: {self.value}" if slot else self.value
        if self.confidence == "low":
            shown += " (needs verification)"
        return shown


class InForce:
    """The entries in force (active and deferred) by id, and the active ones as a
    context brings them up, indexed (:class:`souls.recall.shortlist.EntryIndex`).

    Invariant: while ``fresh``, ``claims`` is what the claims table holds in force. A
    writer of claims calls :meth:`writing` before it writes (the view is stale from
    then on: a write that fails half-way leaves it so) and :meth:`apply` once its
    transaction committed, with what it wrote; one that cannot say what it wrote (a
    forget, a person link) leaves the view stale. :meth:`Entries.current` reloads a
    stale view before anyone reads it.
    """

    def __init__(self) -> None:
        self.claims: dict[int, Claim] = {}
        self.index = EntryIndex()
        self.fresh = False

    def reset(self, claims: Iterable[Claim]) -> None:
        """Hold ``claims``: those in force, as the table has them."""
        self.claims = {c.id: c for c in claims if c.state in _IN_FORCE}
        self.index = EntryIndex([_entry(c) for c in self.claims.values() if c.state == "active"])
        self.fresh = True

    def writing(self) -> bool:
        """A write to the claims table begins; returns whether the view was fresh (what
        :meth:`apply` restores)."""
        fresh, self.fresh = self.fresh, False
        return fresh

    def apply(
        self, inserted: Iterable[Claim], updates: Iterable[ClaimUpdate], *, fresh: bool
    ) -> None:
        """The write :meth:`writing` announced committed: ``inserted`` rows as stored,
        then ``updates`` applied as the table applies them. The view is ``fresh`` again
        unless an update names a row it does not hold."""
        for claim in inserted:
            self._put(claim)
        for update in updates:
            held = self.claims.get(update.id)
            if held is None:
                fresh = False  # a row out of force changed: only the table knows it now
                continue
            self._put(
                msgspec.structs.replace(
                    held,
                    state=update.state,
                    valid_to=held.valid_to if update.valid_to is None else update.valid_to,
                    recorded_to=(
                        held.recorded_to if update.recorded_to is None else update.recorded_to
                    ),
                )
            )
        self.fresh = fresh

    def _put(self, claim: Claim) -> None:
        if claim.state in _IN_FORCE:
            self.claims[claim.id] = claim
        else:
            self.claims.pop(claim.id, None)
        if claim.state == "active":
            self.index.add(_entry(claim))
        else:
            self.index.discard(claim.id)


def _claim_row(row: tuple[Any, ...]) -> ClaimRow:
    """A claims row (``CLAIM_COLUMNS``) as the merge algebra reads it: without its type
    and the entry it replaces, a claim of no source event of event 0."""
    (claim_id, _, subject, slot, value, quote, event_id, source, confidence, state,
     valid_from, valid_to, recorded_from, recorded_to, due, _) = row  # fmt: skip
    return ClaimRow(
        claim_id, subject, slot, value, quote, 0 if event_id is None else event_id, source,
        confidence, state, valid_from, valid_to, recorded_from, recorded_to, due,
    )  # fmt: skip


def _entry(claim: Claim) -> Entry:
    """``claim`` as a context brings it up: an open obligation counts from when it was
    made, anything else from when it was recorded."""
    text, user = claim.text, claim.source == "user"
    held = tuple(map(sys.intern, terms(text)))  # one string per term, however many hold it
    if claim.slot in COMMITMENTS:
        shown = f"(open {claim.slot}) {text}"
        return Entry(claim.id, "commitment", shown, held, claim.valid_from, user)
    return Entry(claim.id, "claim", text, held, claim.recorded_from, user)


class Entries:
    def __init__(self, store: SoulStore, hygiene: HygieneGate, penalty: float) -> None:
        self._store = store
        self._hygiene = hygiene
        self._penalty = penalty
        self.fidelity_ai = 1.0
        self.view = InForce()

    async def load(self) -> None:
        fidelity = (await self._store.soul_state()).get(FIDELITY)
        self.fidelity_ai = 1.0 if fidelity is None else float(fidelity)
        await self.reload()

    async def reload(self) -> None:
        """Read the entries in force from the table again."""
        self.view.reset(await self.claims())

    async def current(self) -> InForce:
        """The entries in force, reloaded first when the view is stale."""
        if not self.view.fresh:
            await self.reload()
        return self.view

    def invalidate(self) -> None:
        """Claims are about to change in ways only the table will know (a forget, a
        person link): the view is reloaded before it is read again."""
        self.view.fresh = False

    async def claims(self, *, every: bool = False, ids: Sequence[int] = ()) -> list[Claim]:
        """Active and deferred entries (``every``: all of them, closed ones too), or the
        entries named in ``ids``."""
        found = await self._store.knowledge.claims(every=every, ids=ids)
        return [Claim(*msgspec.structs.astuple(claim)) for claim in found]

    async def questions(
        self, *, state: str | None = None, ids: Sequence[int] = ()
    ) -> list[Question]:
        """The questions named in ``ids``, else those in ``state`` (unanswered), by id."""
        return await self._store.knowledge.questions(state=state or "unanswered", ids=ids)

    async def history(self, claim: Claim) -> list[Claim]:
        """Every entry of ``claim``'s slot (or its chain of updates), oldest first."""
        if claim.slot is not None:
            found = await self._store.knowledge.slot_claims(claim.subject, [claim.slot])
            return [Claim(*msgspec.structs.astuple(c)) for c in found]
        chain = [claim]
        while chain[0].replaces is not None:
            older = await self.claims(ids=[chain[0].replaces])
            if not older:
                break
            chain.insert(0, older[0])
        return chain

    async def person(self, subject: str) -> str:
        """The person ``subject`` stands for: a linked account's id ("mel", "telegram:
        4711") or a person's name in any case is that person's name; anything else is
        itself. An id two persons share names neither."""
        channel, sep, external = subject.partition(":")
        account = (channel.strip(), external.strip()) if sep else None
        wanted = _nocase(subject)
        names = {
            name
            for _, name, at, held in await self._store.persons()
            if _nocase(name) == wanted
            or (held is not None and _nocase(held) == wanted)
            or (account is not None and (at, held) == account)
        }
        return names.pop() if len(names) == 1 else subject

    async def slot_rows(self, subject: str, slots: Sequence[str]) -> list[ClaimRow]:
        """The claims of ``subject`` in ``slots`` as the merge algebra reads them (no
        source event: 0), by id."""
        found = await self._store.knowledge.slot_claims(subject, slots)
        return [_claim_row(msgspec.structs.astuple(claim)) for claim in found]

    async def state(self, add: ClaimAdd, now: float) -> dict[str, object]:
        """Store an entry the user states (source ``user``): a slot claim goes through
        the merge algebra like an extracted one; a free entry is simply active."""
        value = _entry_value(add.value, self._hygiene)
        kind = LEGACY_TYPES.get(add.kind.strip().lower())
        if kind is None:
            raise ValueError(
                f"type must be one of {', '.join(LEGACY_TYPES)}, not {add.kind!r}"
                " (decision and preference are kept as rule, experience as event,"
                " identity as fact)"
            )
        if add.confidence not in _CONFIDENCES:
            raise ValueError(f"confidence must be one of {', '.join(_CONFIDENCES)}")
        subject = await self.person(" ".join(add.subject.split()) or "user")
        if add.slot is None:
            claim = _new(kind, subject, None, value, add.confidence, now)
            claim = await self._insert(claim, [])
            return {"claim": claim, "outcome": "stated", "closed": []}
        if add.slot not in SLOTS:
            raise ValueError(f"unknown slot {add.slot!r}; slots: {', '.join(sorted(SLOTS))}")
        candidate = Candidate(
            subject=subject,
            slot=add.slot,
            value=value,
            quote=value,
            source="user",
            confidence=_CONFIDENCES[add.confidence],
        )
        # The same gates as an extracted claim, the value its own quote: the slot, and
        # above all the credential check (a stated "password" is refused, not stored).
        checked = gate(candidate, value)
        if not checked.passed:
            raise ValueError(f"the entry was refused: {checked.reason}")
        slots = tuple(sorted(related_slots(add.slot)))
        rows = await self.slot_rows(subject, slots)
        result = merge(rows, candidate, event_id=-1, valid_from=now, now=now)
        closed = [u.id for u in result.updates if u.state in ("superseded", "retracted")]
        if result.insert_state is None:
            await self._update(result.updates)
            (same,) = await self.claims(ids=[result.duplicate or 0])
            return {"claim": same, "outcome": "duplicate", "closed": closed}
        claim = msgspec.structs.replace(
            _new(SLOTS[add.slot].type, subject, add.slot, value, add.confidence, now),
            state=result.insert_state,
            confidence=result.insert_confidence or add.confidence,
            valid_from=now if result.insert_valid_from is None else result.insert_valid_from,
            valid_to=result.insert_valid_to,
            recorded_to=result.insert_recorded_to,
        )
        claim = await self._insert(claim, result.updates)
        return {"claim": claim, "outcome": result.insert_state, "closed": closed}

    async def change(self, action: str, claim_id: int, value: str, now: float) -> dict[str, object]:
        """``update`` or ``correct`` an entry with a new value (the old one is
        superseded, and never injected again), or ``retract`` it."""
        if action not in ("update", "correct", "retract"):
            raise ValueError(f"action must be update, correct or retract, not {action!r}")
        found = await self.claims(ids=[claim_id])
        if not found:
            raise MissingItem(f"no entry c{claim_id}; `soupd claims` lists them")
        old = found[0]
        if old.state in ("superseded", "retracted"):
            raise ValueError(f"entry c{claim_id} is already {old.state}; change the entry in force")
        if action == "retract":
            await self._update([ClaimUpdate(old.id, "retracted", now, now)])
            return {
                "claim": msgspec.structs.replace(
                    old, state="retracted", valid_to=now, recorded_to=now
                ),
                "closed": [old.id],
            }
        new_value = _entry_value(value, self._hygiene)
        claim = msgspec.structs.replace(
            _new(old.type, old.subject, old.slot, new_value, "high", now), replaces=old.id
        )
        closed = [old]
        if old.slot is not None and SLOTS[old.slot].single:
            # The user's word settles the slot: a deferred tie closes with the old value.
            closed += [
                c
                for c in await self.history(old)
                if c.state in ("active", "deferred") and c.id != old.id
            ]
        updates = [ClaimUpdate(c.id, "superseded", now, now) for c in closed]
        if action == "correct" and old.source != "user":
            # The soul's own belief was wrong: what it extracts weighs less from now on.
            self.fidelity_ai = round(max(0.0, self.fidelity_ai - self._penalty), 6)
        claim = await self._insert(claim, updates, fidelity=action == "correct")
        return {"claim": claim, "closed": [c.id for c in closed], "fidelity_ai": self.fidelity_ai}

    async def _insert(
        self, claim: Claim, updates: Sequence[ClaimUpdate], *, fidelity: bool = False
    ) -> Claim:
        """Store ``claim`` (its id from the table) with ``updates``; the claim as stored."""
        stored = await self._write(claim, updates, fidelity)
        assert stored is not None
        return stored

    async def _update(self, updates: Sequence[ClaimUpdate]) -> None:
        await self._write(None, updates, False)

    async def _write(
        self, claim: Claim | None, updates: Sequence[ClaimUpdate], fidelity: bool
    ) -> Claim | None:
        """One transaction: insert ``claim``, apply ``updates``, store the fidelity when
        asked."""
        fresh = self.view.writing()
        claim_id = await self._store.knowledge.state_entry(
            claim,
            [ClaimClosing(u.id, u.state, u.valid_to, u.recorded_to) for u in updates],
            {FIDELITY: repr(self.fidelity_ai)} if fidelity else {},
        )
        stored = None if claim is None else msgspec.structs.replace(claim, id=claim_id)
        self.view.apply([] if stored is None else [stored], updates, fresh=fresh)
        return stored


def _new(
    type_: str, subject: str, slot: str | None, value: str, confidence: str, now: float
) -> Claim:
    """A stated entry (its id comes from the table when it is stored)."""
    return Claim(
        id=0,
        type=type_,
        subject=subject,
        slot=slot,
        value=value,
        quote="",
        event_id=None,
        source="user",
        confidence=confidence,
        state="active",
        valid_from=now,
        valid_to=None,
        recorded_from=now,
        recorded_to=None,
    )


_CONFIDENCES: dict[str, Confidence] = {"high": "high", "medium": "medium", "low": "low"}
# SQLite's NOCASE: ASCII letters folded, nothing else (what a person's name matched by).
_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


def _nocase(text: str) -> str:
    return text.translate(_ASCII_LOWER)


_MAX_VALUE = 1000


def _entry_value(value: str, hygiene: HygieneGate) -> str:
    value = " ".join(value.split())
    if not value:
        raise ValueError("the entry's value is empty; say what is true")
    if len(value) > _MAX_VALUE:
        raise ValueError(
            f"the entry's value is {len(value)} characters; keep it under {_MAX_VALUE}"
        )
    hygiene.check(value)  # a credential is never stored, not even as a claim
    return value
