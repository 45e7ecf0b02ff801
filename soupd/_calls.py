"""What each client method sends and how its reply is read, for both clients.

A :class:`Call` is plain data: the method, its params (``None`` values left out, so
the daemon's defaults apply), the decoder of its result, and whether it may be sent
again when the connection broke before its reply came (``retry``). That is so for
reads (recall, context, claims...: asking twice changes nothing that matters), and
for writes that carry their own idempotency key: a push with a ``ref`` (the daemon
stores one event per ``(soul, ref)`` and answers the second ``duplicate``), an import
whose every event has a ``ref`` or a ``ts`` (the daemon derives a key from a timed
event). Any other write is never sent twice: it might have been carried out once.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Generic, TypeVar

import msgspec

from soupd._errors import InvalidParams
from soupd._types import (
    OUTPUT_KINDS,
    ClaimChange,
    Claims,
    Context,
    ForgetResult,
    Goal,
    GoalChange,
    ImportResult,
    Memory,
    MemoryPage,
    MemoryUpdated,
    Person,
    PersonLink,
    PushResult,
    RecallHit,
    Soul,
    SoulCreated,
    SoulDeleted,
    Tasks,
    Why,
)

__all__ = [
    "Call",
    "When",
    "calls",
    "import_result",
    "method_signature",
    "subscribe_params",
    "when",
]

T = TypeVar("T")
# A time: Unix seconds, ISO 8601 text (UTC when it has no zone), or a datetime.
When = float | str | datetime


@dataclass(frozen=True, slots=True)
class Call(Generic[T]):
    method: str
    params: dict[str, Any]
    decode: Callable[[msgspec.Raw], T]
    retry: bool
    # None: the client's default timeout.
    timeout: float | None = None


def method_signature(build: Callable[..., Call[Any]]) -> inspect.Signature:
    """The signature a client method built on ``build`` shows: ``self`` first, and
    what the call returns rather than the Call."""
    signature = inspect.signature(build)
    returns = signature.return_annotation
    if isinstance(returns, str) and returns.startswith("Call[") and returns.endswith("]"):
        returns = returns[len("Call[") : -1]
    this = inspect.Parameter("self", inspect.Parameter.POSITIONAL_ONLY)
    return signature.replace(
        parameters=[this, *signature.parameters.values()], return_annotation=returns
    )


def _of(kind: type[T]) -> Callable[[msgspec.Raw], T]:
    return msgspec.json.Decoder(kind).decode


class _Items(msgspec.Struct, frozen=True):
    items: list[RecallHit]


class _Goals(msgspec.Struct, frozen=True):
    goals: list[Goal]


class _Persons(msgspec.Struct, frozen=True):
    persons: list[Person]


class _Souls(msgspec.Struct, frozen=True):
    souls: list[Soul]


_items, _goals = _of(_Items), _of(_Goals)
_persons, _souls = _of(_Persons), _of(_Souls)
_push, import_result = _of(PushResult), _of(ImportResult)
_context, _why, _forget = _of(Context), _of(Why), _of(ForgetResult)
_memory, _page, _updated = _of(Memory), _of(MemoryPage), _of(MemoryUpdated)
_claims, _claim_change = _of(Claims), _of(ClaimChange)
_goal_change, _person_link, _tasks = _of(GoalChange), _of(PersonLink), _of(Tasks)
_created, _deleted = _of(SoulCreated), _of(SoulDeleted)


def _hits(raw: msgspec.Raw) -> list[RecallHit]:
    return _items(raw).items


def _goal_list(raw: msgspec.Raw) -> list[Goal]:
    return _goals(raw).goals


def _person_list(raw: msgspec.Raw) -> list[Person]:
    return _persons(raw).persons


def _soul_list(raw: msgspec.Raw) -> list[Soul]:
    return _souls(raw).souls


def when(value: When | None) -> float | str | None:
    if isinstance(value, datetime):
        return value.isoformat()
    return value


def subscribe_params(
    souls: list[str] | None, kinds: list[str] | None, buffer: int
) -> dict[str, Any]:
    """``subscribe``'s params; InvalidParams for a kind the daemon never streams (it
    would refuse it too), before any connection is opened."""
    unknown = [kind for kind in kinds or [] if kind not in OUTPUT_KINDS]
    if unknown:
        raise InvalidParams(
            f"invalid params for subscribe: unknown output kind {unknown[0]!r}; "
            f"the kinds are {', '.join(OUTPUT_KINDS)}"
        )
    return {"souls": souls or [], "kinds": kinds or [], "buffer": buffer}


def _params(**given: Any) -> dict[str, Any]:
    return {key: value for key, value in given.items() if value is not None}


class _Calls:
    """One function per client method; each returns the :class:`Call` to run."""

    def push(
        self,
        soul: str,
        text: str,
        *,
        sender: str | None = None,
        kind: str | None = None,
        session: str | None = None,
        channel: str | None = None,
        group: str | None = None,
        mentioned: bool | None = None,
        ref: str | None = None,
        ts: When | None = None,
        timeout: float | None = None,
    ) -> Call[PushResult]:
        params = _params(
            soul=soul,
            text=text,
            sender=sender,
            kind=kind,
            session=session,
            channel=channel,
            group=group,
            mentioned=mentioned,
            ref=ref,
            ts=when(ts),
        )
        return Call("event.push", params, _push, retry=ref is not None, timeout=timeout)

    def recall(
        self,
        soul: str,
        query: str,
        *,
        k: int | None = None,
        explain: bool = False,
        sender: str | None = None,
        session: str | None = None,
        kind: str | None = None,
        since: When | None = None,
        until: When | None = None,
        timeout: float | None = None,
    ) -> Call[list[RecallHit]]:
        params = _params(
            soul=soul,
            query=query,
            k=k,
            explain=explain or None,
            sender=sender,
            session=session,
            kind=kind,
            since=when(since),
            until=when(until),
        )
        return Call("recall", params, _hits, retry=True, timeout=timeout)

    def context(
        self,
        soul: str,
        query: str | None = None,
        *,
        session: str | None = None,
        timeout: float | None = None,
    ) -> Call[Context]:
        params = _params(soul=soul, query=query, session=session)
        return Call("context", params, _context, retry=True, timeout=timeout)

    def why(self, soul: str, hash: str | None = None, *, timeout: float | None = None) -> Call[Why]:
        return Call("why", _params(soul=soul, hash=hash), _why, retry=True, timeout=timeout)

    def forget(
        self,
        soul: str,
        *,
        ref: str | None = None,
        id: int | str | None = None,
        match: str | None = None,
        before: When | None = None,
        all: bool = False,
        dry_run: bool = False,
        timeout: float | None = None,
    ) -> Call[ForgetResult]:
        """Erase, for good, exactly one of: the event with ``ref``, the event of memory
        ``id`` (7 or m7, as :meth:`delete_memory`), events whose text contains ``match``,
        events ``before`` a time, or ``all``; with ``dry_run``, only count what would go.
        Not sent twice: a retry would report nothing erased."""
        params = _params(
            soul=soul,
            ref=ref,
            id=id,
            match=match,
            before=when(before),
            all=all or None,
            dry_run=dry_run or None,
        )
        return Call("forget", params, _forget, retry=dry_run, timeout=timeout)

    def list_memories(
        self,
        soul: str,
        *,
        cursor: str | None = None,
        limit: int | None = None,
        sender: str | None = None,
        session: str | None = None,
        kind: str | None = None,
        since: When | None = None,
        until: When | None = None,
        timeout: float | None = None,
    ) -> Call[MemoryPage]:
        params = _params(
            soul=soul,
            cursor=cursor,
            limit=limit,
            sender=sender,
            session=session,
            kind=kind,
            since=when(since),
            until=when(until),
        )
        return Call("memory.list", params, _page, retry=True, timeout=timeout)

    def get_memory(self, soul: str, id: int | str, *, timeout: float | None = None) -> Call[Memory]:
        """Memory ``id``: its number (7) or its label as ids are shown (m7)."""
        return Call("memory.get", {"soul": soul, "id": id}, _memory, retry=True, timeout=timeout)

    def update_memory(
        self, soul: str, id: int | str, text: str, *, timeout: float | None = None
    ) -> Call[MemoryUpdated]:
        """Correct memory ``id``'s text: a new memory in its place (re-derived)."""
        params = {"soul": soul, "id": id, "text": text}
        return Call("memory.update", params, _updated, retry=False, timeout=timeout)

    def delete_memory(
        self, soul: str, id: int | str, *, timeout: float | None = None
    ) -> Call[ForgetResult]:
        """Forget memory ``id`` and its event, as :meth:`forget` by ref does."""
        params = {"soul": soul, "id": id}
        return Call("memory.delete", params, _forget, retry=False, timeout=timeout)

    def claims(self, soul: str, *, all: bool = False, timeout: float | None = None) -> Call[Claims]:
        params = _params(soul=soul, all=all or None)
        return Call("claims", params, _claims, retry=True, timeout=timeout)

    def add_claim(
        self,
        soul: str,
        value: str,
        *,
        type: str | None = None,
        slot: str | None = None,
        subject: str | None = None,
        confidence: str | None = None,
        timeout: float | None = None,
    ) -> Call[ClaimChange]:
        params = _params(
            soul=soul, value=value, type=type, slot=slot, subject=subject, confidence=confidence
        )
        return Call("claim.add", params, _claim_change, retry=False, timeout=timeout)

    def correct_claim(
        self, soul: str, id: int, value: str, *, timeout: float | None = None
    ) -> Call[ClaimChange]:
        params = {"soul": soul, "id": id, "value": value}
        return Call("claim.correct", params, _claim_change, retry=False, timeout=timeout)

    def retract_claim(
        self, soul: str, id: int, *, timeout: float | None = None
    ) -> Call[ClaimChange]:
        return Call(
            "claim.retract", {"soul": soul, "id": id}, _claim_change, retry=False, timeout=timeout
        )

    def goals(self, soul: str, *, timeout: float | None = None) -> Call[list[Goal]]:
        return Call("goals", {"soul": soul}, _goal_list, retry=True, timeout=timeout)

    def add_goal(
        self,
        soul: str,
        statement: str,
        *,
        speaker: str | None = None,
        domain: str | None = None,
        priority: int | None = None,
        triggers: Iterable[str] = (),
        timeout: float | None = None,
    ) -> Call[GoalChange]:
        params = _params(
            soul=soul,
            action="new",
            statement=statement,
            speaker=speaker,
            domain=domain,
            priority=priority,
            triggers=list(triggers) or None,
        )
        return Call("goal.update", params, _goal_change, retry=False, timeout=timeout)

    def update_goal(
        self,
        soul: str,
        goal_id: int,
        action: str,
        *,
        note: str | None = None,
        timeout: float | None = None,
    ) -> Call[GoalChange]:
        """``action``: progress (with a ``note``), achieve, abandon, pause, resume."""
        params = _params(soul=soul, goal_id=goal_id, action=action, note=note)
        return Call("goal.update", params, _goal_change, retry=False, timeout=timeout)

    def persons(self, soul: str, *, timeout: float | None = None) -> Call[list[Person]]:
        return Call("persons", {"soul": soul}, _person_list, retry=True, timeout=timeout)

    def link_person(
        self, soul: str, person: str, identity: str, *, timeout: float | None = None
    ) -> Call[PersonLink]:
        params = {"soul": soul, "person": person, "identity": identity}
        return Call("person.link", params, _person_link, retry=False, timeout=timeout)

    def remind(
        self, soul: str, text: str, at: When, *, timeout: float | None = None
    ) -> Call[Tasks]:
        params = {"soul": soul, "text": text, "at": when(at)}
        return Call("task.add", params, _tasks, retry=False, timeout=timeout)

    def tasks(self, soul: str, *, timeout: float | None = None) -> Call[Tasks]:
        return Call("tasks", {"soul": soul}, _tasks, retry=True, timeout=timeout)

    def souls(self, *, timeout: float | None = None) -> Call[list[Soul]]:
        return Call("soul.list", {}, _soul_list, retry=True, timeout=timeout)

    def create_soul(
        self,
        soul: str,
        *,
        config: Mapping[str, Any] | None = None,
        toml: str | None = None,
        reopen: bool = False,
        timeout: float | None = None,
    ) -> Call[SoulCreated]:
        """Write ``souls/<soul>.toml`` in the daemon's config folder and start the soul:
        its settings as ``config`` (the TOML's tables and keys, as a dict) or as the
        file's ``toml`` text; neither: every default. A name whose deleted soul kept its
        data is refused (InvalidParams naming the folder) unless ``reopen``: then the
        soul starts on that data (``reopened`` names the folder)."""
        given = dict(config) if config is not None else None
        params = _params(soul=soul, config=given, toml=toml, reopen=reopen or None)
        return Call("soul.create", params, _created, retry=False, timeout=timeout)

    def delete_soul(
        self, soul: str, *, purge: bool = False, timeout: float | None = None
    ) -> Call[SoulDeleted]:
        """Stop the soul and remove its file; its database and brain stay unless
        ``purge``. With ``purge``, a name with no soul but the data a deleted one kept
        has that data removed (``stopped`` False)."""
        params = _params(soul=soul, purge=purge or None)
        return Call("soul.delete", params, _deleted, retry=False, timeout=timeout)


calls = _Calls()
