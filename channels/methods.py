"""The socket methods: params types and what each does.

A method decodes its params into a typed Struct (unknown keys rejected) and settles
the request's reply exactly once: directly, or by handing the reply to a soul's
mailbox with the message (``tell`` with ``reply_to``), so no task is spawned per
request and a full mailbox slows the sender down instead of growing a queue.
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Protocol

import msgspec

from channels.forwarding import Forwarder
from channels.protocol import decode_params
from souls.actor.mailbox import CallbackReply, Reply
from souls.actor.memories import MAX_PAGE, MemoryUpdated, parse_cursor
from souls.actor.rights import ForgetResult, RebuildResult
from souls.collision.cards import Card
from souls.collision.collider import Collision
from souls.collision.tide import TideReport
from souls.events import EventIn, event_time, with_replay_ref
from souls.intake.field_screen import screen
from souls.intake.hygiene_gate import HygieneConfig, HygieneGate
from souls.knowledge.goals import GoalChange
from souls.knowledge.persons import parse_identity
from souls.messages import (
    AddTask,
    Backup,
    CardAdd,
    CardNote,
    Cards,
    ClaimAdd,
    ClaimChange,
    Claims,
    Confidence,
    Context,
    Crash,
    Decay,
    Export,
    Forget,
    Goals,
    GoalSet,
    GoalUpdate,
    Homeostasis,
    Import,
    Judge,
    Ledger,
    Lightning,
    MemoryDelete,
    MemoryGet,
    MemoryList,
    MemoryMap,
    MemoryUpdate,
    Message,
    PersonLink,
    Persons,
    Read,
    Rebuild,
    Recall,
    Reflect,
    Stats,
    StatusPage,
    SyncTasks,
    Tide,
    Weekly,
    Why,
    memory_id,
)
from souls.messages import Observe as ObserveMessage
from souls.mind.metacognition import Confidence as ConfidenceResult
from souls.recall.assembly import AssemblyLog
from souls.results import (
    MAX_REASONS,
    ContextResult,
    DecayResult,
    HomeostasisResult,
    ImportResult,
    MemoryItem,
    MemoryPage,
    PushResult,
    RecallResult,
    ReflectResult,
    Rejection,
    SoulStats,
    TasksResult,
)
from supervisor.errors import InvalidParams, SoupdError, UnknownMethod
from supervisor.registry import Registry
from supervisor.soul_files import toml_text

__all__ = ["Methods"]


class _Params(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    pass


class NoParams(_Params, frozen=True):
    pass


class SoulCreateParams(_Params, frozen=True):
    soul: str
    # The soul's settings: a table of its TOML's tables and keys, or the file's whole
    # text as toml (not both; neither: every key at its default).
    config: dict[str, Any] | None = None
    toml: str | None = None
    # Create it on the state folder a soul of that name deleted without purge left
    # (refused otherwise, naming the folder).
    reopen: bool = False


class SoulDeleteParams(_Params, frozen=True):
    soul: str
    # Also remove the soul's state folder (its database, brain, cards), once stopped.
    purge: bool = False


class SoulAdmin(Protocol):
    """Who creates and deletes souls at run time (the daemon)."""

    async def create_soul(self, name: str, text: str, *, reopen: bool) -> dict[str, Any]: ...

    async def delete_soul(self, name: str, *, purge: bool) -> dict[str, Any]: ...


class SoulParams(_Params, frozen=True):
    soul: str


class PushParams(EventIn, frozen=True, kw_only=True, forbid_unknown_fields=True):
    soul: str


class ImportParams(SoulParams, frozen=True):
    events: list[msgspec.Raw]


class _Filters(SoulParams, frozen=True):
    # Only memories said by this sender (or the person linked to it), in this session,
    # of this kind, from since (inclusive) to until (exclusive): ISO 8601 or Unix seconds.
    sender: str | None = None
    session: str | None = None
    kind: str | None = None
    since: float | str | None = None
    until: float | str | None = None


class RecallParams(_Filters, frozen=True, kw_only=True):
    query: str
    k: int | None = None
    # Each item says why it ranked (BM25 terms, neighbouring turns, cues, layer).
    explain: bool = False


class MemoryListParams(_Filters, frozen=True, kw_only=True):
    # The next_cursor of the page before (newest first); none: the newest page.
    cursor: str | None = None
    limit: int = 50


class MemoryIdParams(SoulParams, frozen=True):
    # The memory's number (7) or its label as ids are shown (m7): souls.messages.memory_id.
    id: int | str


class MemoryUpdateParams(MemoryIdParams, frozen=True):
    # The corrected text: stored as a new memory in the old one's place.
    text: str


class ContextParams(SoulParams, frozen=True):
    query: str | None = None
    session: str | None = None


class ClaimAddParams(SoulParams, frozen=True):
    value: str
    type: str = "fact"
    slot: str | None = None
    subject: str = "user"
    confidence: str = "high"


class ClaimIdParams(SoulParams, frozen=True):
    id: int
    value: str = ""


class ClaimsParams(SoulParams, frozen=True):
    all: bool = False


class GoalParams(SoulParams, frozen=True):
    action: str
    statement: str = ""
    speaker: str = "user"
    domain: str = ""
    priority: int | None = None
    triggers: list[str] = msgspec.field(default_factory=list)
    note: str = ""
    goal_id: int | None = None


class PersonLinkParams(SoulParams, frozen=True):
    person: str
    identity: str  # CHANNEL:ID


class WhyParams(SoulParams, frozen=True):
    hash: str | None = None


class MapParams(SoulParams, frozen=True):
    budget: int = 2000


class ReadParams(SoulParams, frozen=True):
    id: str


class CrashParams(SoulParams, frozen=True):
    reason: str = "requested over the socket"


class DecayParams(SoulParams, frozen=True):
    # As of when (ISO 8601 or Unix seconds); default: now.
    now: float | str | None = None
    # Only count what it would do (the same counts, with dry_run true); change nothing.
    dry_run: bool = False


class ConfidenceParams(SoulParams, frozen=True):
    topic: str


class ForgetParams(SoulParams, frozen=True):
    # Exactly one of: the event with this ref; the event of this memory (7 or m7, as
    # memory.delete); events whose text contains this (case-insensitive); events
    # before this time (ISO 8601 or Unix seconds); all.
    ref: str | None = None
    id: int | str | None = None
    match: str | None = None
    before: float | str | None = None
    all: bool = False
    # Only count what would be deleted (the same counts, with dry_run true); delete nothing.
    dry_run: bool = False


class ExportParams(SoulParams, frozen=True):
    cursor: str | None = None


class BackupParams(SoulParams, frozen=True):
    # Absolute path of the copy, written by the daemon's user.
    path: str


class CardAddParams(SoulParams, frozen=True):
    conclusions: list[str]
    title: str = ""
    questions: list[str] = []
    tags: list[str] = []


class CardSynthesizeParams(CardAddParams, frozen=True, kw_only=True):
    # The cards this protein synthesises (at least two).
    members: list[int]


class CardNoteParams(SoulParams, frozen=True):
    number: int
    text: str


class CardsParams(SoulParams, frozen=True):
    # Also check that the cards/ folder and the database agree.
    strict: bool = False


class LightningParams(SoulParams, frozen=True):
    topic: str = ""
    # Reproduce an earlier draw: its seed (recorded in the ledger).
    seed: int | None = None
    n: int | None = None
    # Cards to leave out: exact path, path prefix, or a unique substring.
    exclude: list[str] = []
    # Reproduce the draw of this ledger row (its topic, seed, n, exclusions, weights).
    as_of: int | None = None


class VerdictParams(SoulParams, frozen=True):
    draw: int
    card: int
    # strong | approve | neutral | oppose
    verdict: str
    # For a strong approval: the card line (conclusion number) it points at.
    line: int | None = None


class StatusPageParams(SoulParams, frozen=True):
    # Text for the page's footer instead of the time (reproducible pages).
    stamp: str = ""


class LedgerParams(SoulParams, frozen=True):
    limit: int = 50


class TideParams(SoulParams, frozen=True):
    # Apply the closure proposals of these cards (close the questions they name).
    close: list[int] = []


class LogsParams(_Params, frozen=True):
    # Only this soul's lines (all lines when unset).
    soul: str | None = None
    # How many of the latest lines.
    lines: int = 100


class TaskAddParams(SoulParams, frozen=True):
    text: str
    # When: ISO 8601 (UTC when no zone) or Unix seconds.
    at: float | str


def _filters(method: str, params: _Filters) -> tuple[float | None, float | None]:
    """The since and until of ``params`` in Unix seconds, once each filter is checked."""
    bounds: list[float | None] = []
    for name, value in (("since", params.since), ("until", params.until)):
        try:
            bounds.append(None if value is None else event_time(value, 0.0))
        except ValueError as exc:
            said = str(exc).removeprefix("ts ")
            raise InvalidParams(f"invalid params for {method}: {name} {said}") from None
    since, until = bounds
    if since is not None and until is not None and since >= until:
        raise InvalidParams(
            f"invalid params for {method}: since ({params.since!r}) must be before until "
            f"({params.until!r}); until is exclusive"
        )
    for name, text in (
        ("sender", params.sender),
        ("session", params.session),
        ("kind", params.kind),
    ):
        if text is not None and not text.strip():
            raise InvalidParams(
                f"invalid params for {method}: {name} must not be empty (leave it out to "
                "have every one)"
            )
    return since, until


@dataclass(frozen=True, slots=True)
class _Method:
    params: type[Any]
    run: Callable[[Any, Reply], Awaitable[None]]
    # The Struct the result is (its JSON Schema documents the HTTP answer); None when
    # the result is a plain table.
    result: type[Any] | None = None


class Methods:
    """Every method the socket serves, bound to the daemon's registry."""

    def __init__(
        self,
        registry: Registry,
        status: Callable[[], Any],
        *,
        fault_injection: bool = False,
        logs: Callable[[str | None, int], list[str]] | None = None,
        forgotten: Callable[[str], None] | None = None,
    ) -> None:
        self._registry = registry
        self._status = status
        self._logs = logs
        # Told the name of a soul that forgot everything, once it has.
        self._forgotten = forgotten
        # Creates and deletes souls (soul.create, soul.delete); set by the daemon.
        self.souls: SoulAdmin | None = None
        # On a shared store: sends a request for a soul another daemon owns to it
        # (channels.forwarding); set by the daemon.
        self.forwarder: Forwarder | None = None
        # Every string of a soul.create passes the credential rule's built-in patterns.
        self._screen = HygieneGate(HygieneConfig())
        # Events handed to souls so far (pushed or imported): the STATUS rate.
        self.events_received = 0
        self._table: dict[str, _Method] = {
            "event.push": _Method(PushParams, self._push, PushResult),
            "event.import": _Method(ImportParams, self._import, ImportResult),
            "recall": _Method(RecallParams, self._recall, RecallResult),
            "context": _Method(ContextParams, self._context, ContextResult),
            "reflect": _Method(SoulParams, self._reflect, ReflectResult),
            "weekly": _Method(SoulParams, self._weekly, ReflectResult),
            "decay": _Method(DecayParams, self._decay, DecayResult),
            "homeostasis": _Method(SoulParams, self._homeostasis, HomeostasisResult),
            "confidence": _Method(ConfidenceParams, self._confidence, ConfidenceResult),
            "card.add": _Method(CardAddParams, self._card_add, Card),
            "card.synthesize": _Method(CardSynthesizeParams, self._card_synthesize, Card),
            "card.note": _Method(CardNoteParams, self._card_note, Card),
            "cards": _Method(CardsParams, self._cards),
            "lightning": _Method(LightningParams, self._lightning, Collision),
            "ledger": _Method(LedgerParams, self._ledger),
            "verdict": _Method(VerdictParams, self._verdict),
            "tide": _Method(TideParams, self._tide, TideReport),
            "claim.add": _Method(ClaimAddParams, self._claim_add),
            "claim.update": _Method(ClaimIdParams, self._claim_change("update")),
            "claim.correct": _Method(ClaimIdParams, self._claim_change("correct")),
            "claim.retract": _Method(ClaimIdParams, self._claim_change("retract")),
            "claims": _Method(ClaimsParams, self._claims),
            "goal.update": _Method(GoalParams, self._goal_update, GoalChange),
            "goals": _Method(SoulParams, self._goals),
            "why": _Method(WhyParams, self._why, AssemblyLog),
            "person.link": _Method(PersonLinkParams, self._person_link),
            "persons": _Method(SoulParams, self._persons),
            "map": _Method(MapParams, self._map),
            "memory.read": _Method(ReadParams, self._read),
            "memory.list": _Method(MemoryListParams, self._memory_list, MemoryPage),
            "memory.get": _Method(MemoryIdParams, self._memory_get, MemoryItem),
            "memory.update": _Method(MemoryUpdateParams, self._memory_update, MemoryUpdated),
            "memory.delete": _Method(MemoryIdParams, self._memory_delete, ForgetResult),
            "status_page": _Method(StatusPageParams, self._status_page),
            "forget": _Method(ForgetParams, self._forget, ForgetResult),
            "export": _Method(ExportParams, self._export),
            "backup": _Method(BackupParams, self._backup),
            "rebuild": _Method(SoulParams, self._rebuild, RebuildResult),
            "task.add": _Method(TaskAddParams, self._task_add, TasksResult),
            "tasks": _Method(SoulParams, self._tasks, TasksResult),
            "soul.list": _Method(NoParams, self._soul_list),
            "soul.create": _Method(SoulCreateParams, self._soul_create),
            "soul.delete": _Method(SoulDeleteParams, self._soul_delete),
            "soul.stats": _Method(SoulParams, self._soul_stats, SoulStats),
            "daemon.status": _Method(NoParams, self._daemon_status),
            "logs": _Method(LogsParams, self._recent_logs),
        }
        if fault_injection:
            self._table["debug.crash"] = _Method(CrashParams, self._crash)

    @property
    def names(self) -> list[str]:
        # "subscribe" streams on the connection itself (channels.server), not here.
        return sorted([*self._table, "subscribe"])

    def params_of(self, method: str) -> type[Any]:
        """The params Struct of ``method`` (the HTTP API's schemas are made from it)."""
        return self._table[method].params

    def result_of(self, method: str) -> type[Any] | None:
        """The result Struct of ``method``, None when its result is a plain table."""
        return self._table[method].result

    def has_soul(self, name: str) -> bool:
        try:
            self._registry.lookup(name)
        except SoupdError:
            return False
        return True

    async def dispatch(self, method: str, raw: msgspec.Raw, reply: Reply) -> None:
        """Run ``method``; raises SoupdError (which the caller turns into the reply)."""
        entry = self._table.get(method)
        if entry is None:
            raise UnknownMethod(
                f"unknown method {method!r}; known methods: {', '.join(self.names)}"
            )
        params = decode_params(method, raw, entry.params)
        await entry.run(params, reply)

    async def _tell(self, soul: str, message: Message, reply: Reply) -> None:
        await self._registry.lookup(soul).mailbox.tell(message, reply)

    async def _push(self, params: PushParams, reply: Reply) -> None:
        await self._tell(params.soul, ObserveMessage(params), reply)
        self.events_received += 1

    async def _import(self, params: ImportParams, reply: Reply) -> None:
        # Each event is decoded on its own so that one bad event is a counted
        # rejection with its reason, not a failure of the whole import.
        events: list[EventIn] = []
        positions: list[int] = []
        bad: list[Rejection] = []
        for index, raw in enumerate(params.events):
            try:
                # The reason's index names the event: its message need not (a CLI
                # import shows it beside the event's line in the file).
                events.append(with_replay_ref(decode_params("this event", raw, EventIn)))
                positions.append(index)
            except SoupdError as error:
                bad.append(Rejection(index, error.code, error.message))

        def merge(value: Any, error: SoupdError | None) -> None:
            if error is not None:
                reply.fail(error)
                return
            assert isinstance(value, ImportResult)
            reasons = [Rejection(positions[r.index], r.code, r.message) for r in value.reasons]
            merged = sorted(bad + reasons, key=lambda r: r.index)
            value.reasons = merged[:MAX_REASONS]
            value.reasons_truncated = value.reasons_truncated or len(merged) > MAX_REASONS
            value.rejected += len(bad)
            reply.resolve(value)

        await self._tell(params.soul, Import(events), CallbackReply(merge))
        self.events_received += len(events)

    async def _recall(self, params: RecallParams, reply: Reply) -> None:
        since, until = _filters("recall", params)
        message = Recall(
            params.query,
            params.k,
            params.explain,
            sender=params.sender,
            session=params.session,
            kind=params.kind,
            since=since,
            until=until,
        )
        await self._tell(params.soul, message, reply)

    async def _memory_list(self, params: MemoryListParams, reply: Reply) -> None:
        since, until = _filters("memory.list", params)
        if not 1 <= params.limit <= MAX_PAGE:
            raise InvalidParams(f"memory.list: limit must be between 1 and {MAX_PAGE}")
        message = MemoryList(
            parse_cursor(params.cursor),
            params.limit,
            sender=params.sender,
            session=params.session,
            kind=params.kind,
            since=since,
            until=until,
        )
        await self._tell(params.soul, message, reply)

    async def _memory_get(self, params: MemoryIdParams, reply: Reply) -> None:
        await self._tell(params.soul, MemoryGet(memory_id(params.id)), reply)

    async def _memory_update(self, params: MemoryUpdateParams, reply: Reply) -> None:
        if not params.text.strip():
            raise InvalidParams(
                "memory.update needs the corrected text: text (to remove the memory, use "
                "memory.delete)"
            )
        await self._tell(params.soul, MemoryUpdate(memory_id(params.id), params.text), reply)

    async def _memory_delete(self, params: MemoryIdParams, reply: Reply) -> None:
        await self._tell(params.soul, MemoryDelete(memory_id(params.id)), reply)

    async def _context(self, params: ContextParams, reply: Reply) -> None:
        await self._tell(params.soul, Context(params.query, params.session), reply)

    async def _claim_add(self, params: ClaimAddParams, reply: Reply) -> None:
        message = ClaimAdd(
            params.value, params.type, params.slot, params.subject, params.confidence
        )
        await self._tell(params.soul, message, reply)

    def _claim_change(self, action: str) -> Callable[[ClaimIdParams, Reply], Awaitable[None]]:
        async def change(params: ClaimIdParams, reply: Reply) -> None:
            if action != "retract" and not params.value.strip():
                raise InvalidParams(f"claim.{action} needs the new value: value")
            await self._tell(params.soul, ClaimChange(action, params.id, params.value), reply)

        return change

    async def _claims(self, params: ClaimsParams, reply: Reply) -> None:
        await self._tell(params.soul, Claims(params.all), reply)

    async def _goal_update(self, params: GoalParams, reply: Reply) -> None:
        try:
            update = msgspec.convert(
                {
                    "action": params.action,
                    "statement": params.statement,
                    "speaker": params.speaker,
                    "domain": params.domain,
                    "priority": params.priority,
                    "triggers": params.triggers,
                    "note": params.note,
                    "goal_id": params.goal_id,
                },
                GoalUpdate,
            )
        except msgspec.ValidationError as exc:
            raise InvalidParams(
                f"invalid params for goal.update: {exc}; action is one of new, progress, "
                "change, achieve, abandon, pause, resume"
            ) from None
        await self._tell(params.soul, GoalSet(update), reply)

    async def _goals(self, params: SoulParams, reply: Reply) -> None:
        await self._tell(params.soul, Goals(), reply)

    async def _person_link(self, params: PersonLinkParams, reply: Reply) -> None:
        try:
            channel, external = parse_identity(params.identity)
        except ValueError as exc:
            raise InvalidParams(f"person.link: {exc}") from None
        await self._tell(params.soul, PersonLink(params.person, channel, external), reply)

    async def _persons(self, params: SoulParams, reply: Reply) -> None:
        await self._tell(params.soul, Persons(), reply)

    async def _why(self, params: WhyParams, reply: Reply) -> None:
        await self._tell(params.soul, Why(params.hash), reply)

    async def _map(self, params: MapParams, reply: Reply) -> None:
        if not 200 <= params.budget <= 20_000:
            raise InvalidParams("map: budget must be between 200 and 20000 characters")
        await self._tell(params.soul, MemoryMap(params.budget), reply)

    async def _read(self, params: ReadParams, reply: Reply) -> None:
        await self._tell(params.soul, Read(params.id), reply)

    async def _reflect(self, params: SoulParams, reply: Reply) -> None:
        await self._tell(params.soul, Reflect(), reply)

    async def _weekly(self, params: SoulParams, reply: Reply) -> None:
        await self._tell(params.soul, Weekly(), reply)

    async def _decay(self, params: DecayParams, reply: Reply) -> None:
        now = None
        if params.now is not None:
            try:
                now = event_time(params.now, 0.0)
            except ValueError as exc:
                raise InvalidParams(f"invalid params for decay: {exc}") from None
        await self._tell(params.soul, Decay(now, params.dry_run), reply)

    async def _homeostasis(self, params: SoulParams, reply: Reply) -> None:
        await self._tell(params.soul, Homeostasis(), reply)

    async def _confidence(self, params: ConfidenceParams, reply: Reply) -> None:
        await self._tell(params.soul, Confidence(params.topic), reply)

    async def _card_add(self, params: CardAddParams, reply: Reply) -> None:
        message = CardAdd(params.conclusions, params.title, params.questions, params.tags)
        await self._tell(params.soul, message, reply)

    async def _card_synthesize(self, params: CardSynthesizeParams, reply: Reply) -> None:
        if len(set(params.members)) < 2:
            raise InvalidParams("card.synthesize needs at least two distinct member cards")
        message = CardAdd(
            params.conclusions, params.title, params.questions, params.tags, params.members
        )
        await self._tell(params.soul, message, reply)

    async def _card_note(self, params: CardNoteParams, reply: Reply) -> None:
        await self._tell(params.soul, CardNote(params.number, params.text), reply)

    async def _cards(self, params: CardsParams, reply: Reply) -> None:
        await self._tell(params.soul, Cards(params.strict), reply)

    async def _lightning(self, params: LightningParams, reply: Reply) -> None:
        if params.seed is not None and not 0 <= params.seed < 2**63:
            raise InvalidParams("lightning: seed must be between 0 and 2**63 - 1")
        message = Lightning(params.topic, params.seed, params.n, params.exclude, params.as_of)
        await self._tell(params.soul, message, reply)

    async def _verdict(self, params: VerdictParams, reply: Reply) -> None:
        message = Judge(params.draw, params.card, params.verdict, params.line)
        await self._tell(params.soul, message, reply)

    async def _status_page(self, params: StatusPageParams, reply: Reply) -> None:
        await self._tell(params.soul, StatusPage(params.stamp), reply)

    async def _tide(self, params: TideParams, reply: Reply) -> None:
        await self._tell(params.soul, Tide(sorted(set(params.close))), reply)

    async def _ledger(self, params: LedgerParams, reply: Reply) -> None:
        if not 1 <= params.limit <= 10_000:
            raise InvalidParams("ledger: limit must be between 1 and 10000")
        await self._tell(params.soul, Ledger(params.limit), reply)

    async def _forget(self, params: ForgetParams, reply: Reply) -> None:
        given = [params.ref, params.id, params.match, params.before]
        if sum(value is not None for value in given) + params.all != 1:
            raise InvalidParams(
                "forget needs exactly one of ref, match, id, before or all; "
                'e.g. {"soul": "ada", "ref": "msg-42"}'
            )
        memory = None if params.id is None else memory_id(params.id)
        if params.match is not None and not params.match.strip():
            raise InvalidParams("forget: match must not be empty (use all to forget everything)")
        before = None
        if params.before is not None:
            try:
                before = event_time(params.before, 0.0)
            except ValueError as exc:
                raise InvalidParams(f"invalid params for forget: {exc}") from None
        message = Forget(params.ref, params.match, before, params.all, params.dry_run, memory)
        if params.all and not params.dry_run and self._forgotten is not None:
            forgotten, soul = self._forgotten, params.soul

            def settle(value: Any, error: SoupdError | None) -> None:
                if error is None:
                    forgotten(soul)
                    reply.resolve(value)
                else:
                    reply.fail(error)

            await self._tell(params.soul, message, CallbackReply(settle))
            return
        await self._tell(params.soul, message, reply)

    async def _export(self, params: ExportParams, reply: Reply) -> None:
        await self._tell(params.soul, Export(params.cursor), reply)

    async def _backup(self, params: BackupParams, reply: Reply) -> None:
        if not os.path.isabs(params.path):
            raise InvalidParams(
                f"backup path {params.path!r} must be absolute (the daemon writes it)"
            )
        await self._tell(params.soul, Backup(params.path), reply)

    async def _rebuild(self, params: SoulParams, reply: Reply) -> None:
        await self._tell(params.soul, Rebuild(), reply)

    async def _task_add(self, params: TaskAddParams, reply: Reply) -> None:
        try:
            due = event_time(params.at, 0.0)
        except ValueError as exc:
            raise InvalidParams(f"invalid params for task.add: {exc}") from None
        await self._tell(params.soul, AddTask(params.text, due), reply)

    async def _tasks(self, params: SoulParams, reply: Reply) -> None:
        await self._tell(params.soul, SyncTasks(), reply)

    async def _soul_stats(self, params: SoulParams, reply: Reply) -> None:
        handle = self._registry.lookup(params.soul)

        def with_queue(value: Any, error: SoupdError | None) -> None:
            if error is not None:
                reply.fail(error)
            else:
                queued = handle.mailbox.statistics().queued
                reply.resolve(msgspec.structs.replace(value, queued=queued))

        await handle.mailbox.tell(Stats(), CallbackReply(with_queue))

    async def _crash(self, params: CrashParams, reply: Reply) -> None:
        await self._registry.lookup(params.soul).mailbox.tell(Crash(params.reason))
        reply.resolve({"crashing": params.soul})

    def _admin(self) -> SoulAdmin:
        if self.souls is None:
            raise InvalidParams("souls cannot be created or deleted here (no daemon)")
        return self.souls

    async def _soul_create(self, params: SoulCreateParams, reply: Reply) -> None:
        if params.config is not None and params.toml is not None:
            raise InvalidParams(
                "soul.create takes the soul's settings as config (a table) or as toml (the "
                "file's text), not both"
            )
        screen(self._screen, params)
        text = params.toml if params.toml is not None else toml_text(params.config or {})
        reply.resolve(await self._admin().create_soul(params.soul, text, reopen=params.reopen))

    async def _soul_delete(self, params: SoulDeleteParams, reply: Reply) -> None:
        reply.resolve(await self._admin().delete_soul(params.soul, purge=params.purge))

    async def _soul_list(self, params: NoParams, reply: Reply) -> None:
        reply.resolve(
            {
                "souls": [
                    {
                        "name": h.name,
                        "state": h.state,
                        "restarts": h.restarts,
                        "wakes": h.wakes,
                        "queued": h.mailbox.statistics().queued,
                        "last_error": h.last_error,
                    }
                    for h in self._registry.handles()
                ]
            }
        )

    async def _recent_logs(self, params: LogsParams, reply: Reply) -> None:
        if not 1 <= params.lines <= 10_000:
            raise InvalidParams("logs: lines must be between 1 and 10000")
        recent = self._logs(params.soul, params.lines) if self._logs is not None else []
        reply.resolve({"lines": recent})

    async def _daemon_status(self, params: NoParams, reply: Reply) -> None:
        reply.resolve(self._status())
