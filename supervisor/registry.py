"""The registry: soul name → handle, and how a soul is hosted in the tree.

A :class:`SoulHandle` is what the rest of the daemon holds on to: the soul's name,
config and mailbox. The mailbox belongs to the handle, not to the actor task, so it
survives the actor's restarts and its hibernation: whoever sends mail never needs to
know whether the soul is awake. Each soul is one *temporary* child of the ``souls``
dynamic supervisor, a host that lives as long as the soul is configured::

    soul:<name>   host: hibernating ⇄ awake
      └─ soul:<name>   the soul's own supervisor, while awake (restart intensity
           └─ actor     from its TOML) over the actor: the store open, the mind loaded

States (``SoulHandle.state``)::

    hibernating ─mail─► starting ──► running ─idle─► hibernating
                                        │ crash ▲
                                        └► restarting      (too many crashes: failed;
                                                            stopped on purpose: stopped)

Invariants a caller may rely on:

* A soul with ``[lifecycle] hibernate_after > 0`` starts hibernating: nothing of it is
  opened until its first message. With 0 it starts awake (its database opened before
  the daemon is ready) and never hibernates.
* Hibernating, the host waits on the mailbox itself. The first envelope to arrive is
  put back at the head of the queue and the soul is started; so any message at all (a
  request, a scheduled job, a wake-up) wakes it, and mail is handled in the order it
  was sent. Mail that arrives while an idle soul is closing stays queued and wakes it
  again at once: nothing queued is ever lost, no caller sees an error.
* A crash while awake restarts the actor under its own supervisor, as ever; too many
  crashes, or a database that cannot be opened on waking, fail the soul (its queued
  mail is answered with ``soul_unavailable``) and spare its siblings.
"""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import anyio
import anyio.abc
import structlog

from souls.actor.clock import Clock
from souls.actor.cognition import Emit
from souls.actor.mailbox import Mailbox
from souls.actor.soul import Soul
from souls.config import SoulConfig
from souls.messages import Message
from souls.store.files import check_soul_files
from supervisor.errors import (
    ChildStartError,
    LeaseLost,
    RestartIntensityExceeded,
    SoulElsewhere,
    SoulUnavailable,
    SoupdError,
    UnknownSoul,
)
from supervisor.tree import ChildSpec, Supervisor

if TYPE_CHECKING:  # asyncpg is an optional extra: imported by the daemon when configured
    from souls.store.interface import SoulStore
    from supervisor.shared import SharedStore

__all__ = ["Registry", "RegistryStatistics", "SoulHandle", "SoulState"]

SoulState = Literal["starting", "running", "hibernating", "restarting", "failed", "stopped"]
_AWAKE: frozenset[SoulState] = frozenset({"starting", "running", "restarting"})


@dataclass(eq=False)
class SoulHandle:
    name: str
    config: SoulConfig
    db_path: Path
    brain_dir: Path
    mailbox: Mailbox[Message]
    # Where the soul's outputs go (the daemon's outputs hub), if anywhere.
    emit: Emit | None = None
    # The shared PostgreSQL store ([store] backend = "postgres"), if the daemon is on
    # one: the soul's store is opened under its lease, given up when it hibernates.
    shared: SharedStore | None = None
    state: SoulState = "starting"
    # Restarts after a crash, and wakes from hibernation, since the daemon started.
    restarts: int = 0
    wakes: int = 0
    last_error: str | None = None
    # Set while the soul is stopped to be restarted with a new config: its mailbox, and
    # the mail in it, go on to the next incarnation instead of being failed.
    handing_over: bool = False
    _log: structlog.typing.FilteringBoundLogger = field(
        default_factory=lambda: structlog.get_logger("soupd.registry")
    )

    @property
    def awake(self) -> bool:
        """Whether the soul's database is open (it is starting, running or restarting)."""
        return self.state in _AWAKE

    def fail(self, reason: str) -> None:
        """Stop taking mail for good and fail whatever is still queued."""
        self.state = "failed"
        self.last_error = reason
        self.mailbox.close()
        self.mailbox.fail_pending(
            SoulUnavailable(
                f"soul {self.name!r} has failed ({reason}); fix the cause, then "
                "restart the daemon or reload its config"
            )
        )

    def stop(self) -> None:
        """The soul was stopped on purpose: refuse new mail, fail what was left."""
        self.state = "stopped"
        self.mailbox.close()
        self.mailbox.fail_pending(
            SoulUnavailable(f"soul {self.name!r} was stopped; retry once it runs again")
        )

    def _running(self) -> None:
        self.state = "running"

    def child_spec(self, clock: Clock) -> ChildSpec:
        """The spec that hosts this soul, hibernating or awake, for as long as it runs."""
        restart = self.config.restart
        lazy = self.config.lifecycle.hibernate_after > 0

        async def host(task_status: anyio.abc.TaskStatus[Any]) -> None:
            # Until the first start is reported, a failure to start belongs to whoever
            # starts the soul (the daemon fails it and goes on with the others).
            status: anyio.abc.TaskStatus[Any] | None = task_status
            try:
                if lazy:
                    # Its folder exists from the start (for SOUL.md and TASKS.md); its
                    # database is opened only when the first message wakes it.
                    await anyio.to_thread.run_sync(_make_dirs, self.db_path.parent, self.brain_dir)
                    self.state = "hibernating"
                    self._log.info("soul.started", soul=self.name, state=self.state)
                    task_status.started()
                    status = None
                while True:
                    if self.state == "hibernating":
                        if not await self._wait_for_mail():
                            return
                        self.wakes += 1
                        self._log.info("soul.waking", soul=self.name)
                    try:
                        await self._awake(clock, status)
                    except ChildStartError as exc:
                        cause = exc.__cause__
                        if not isinstance(cause, SoulElsewhere) and not (
                            self.shared is not None and isinstance(cause, SoulUnavailable)
                        ):
                            raise
                        # Another daemon of the shared store owns the soul, or the store
                        # cannot be reached now: its mail is told so; the next tries again.
                        self._elsewhere(cause)
                        if status is not None:
                            self.state = "hibernating"
                            self._log.info("soul.started", soul=self.name, state=self.state)
                            status.started()
                    status = None
                    self.state = "hibernating"
            except RestartIntensityExceeded as exc:
                self.fail(str(exc.__cause__ or exc))
                self._log.error("soul.failed", soul=self.name, reason=self.last_error)
            except ChildStartError as exc:
                if status is not None:
                    raise
                cause = exc.__cause__ or exc
                # Our own errors already say what happened and what to do.
                self.fail(
                    cause.message
                    if isinstance(cause, SoupdError)
                    else f"{type(cause).__name__}: {cause}"
                )
                self._log.error("soul.wake_failed", soul=self.name, reason=self.last_error)
            except anyio.get_cancelled_exc_class():
                if self.handing_over:
                    self.state = "stopped"
                else:
                    self.stop()
                raise

        return ChildSpec(f"soul:{self.name}", host, restart="temporary", shutdown=restart.shutdown)

    def _elsewhere(self, error: SoupdError) -> None:
        """The soul cannot be served here now (the shared store: another daemon's lease,
        or the store out of reach): the queued mail is answered with ``error``."""
        self.last_error = error.message
        self.mailbox.fail_pending(error)

    def _opener(self) -> Callable[[], Awaitable[SoulStore]] | None:
        """How the soul's store opens: under its lease on the shared store, else the
        soul's own file (None: Soul's default)."""
        shared = self.shared
        if shared is None:
            return None
        context_turns = self.config.recall.context_turns

        async def open_store() -> SoulStore:
            return await shared.open_soul(self.name, context_turns=context_turns)

        return open_store

    async def _wait_for_mail(self) -> bool:
        """Wait, hibernating, for the first message, and put it back at the head of the
        queue for the soul to handle; False once the mailbox is closed and empty."""
        try:
            first = await self.mailbox.receive_batch(1)
        except anyio.EndOfStream:
            return False
        self.mailbox.redeliver(first)
        return True

    async def _awake(self, clock: Clock, task_status: anyio.abc.TaskStatus[Any] | None) -> None:
        """Run the soul under its own supervisor until it hibernates."""
        restart = self.config.restart
        # A soul woken from hibernation was idle until now: if only housekeeping woke
        # it, it goes back to sleep as soon as that is done. One restarted after a
        # crash was busy: it counts as active from its restart.
        idle_since = -math.inf if self.config.lifecycle.hibernate_after > 0 else None
        booted = False
        with anyio.CancelScope() as asleep:

            async def actor(task_status: anyio.abc.TaskStatus[None]) -> None:
                nonlocal booted
                # Nothing of the soul is opened through a planted link or another's file.
                await anyio.to_thread.run_sync(check_soul_files, self.db_path, self.brain_dir)
                # A fresh Soul on every start: in-memory state is rebuilt from the database.
                soul = Soul(
                    self.name,
                    self.config,
                    db_path=self.db_path,
                    brain_dir=self.brain_dir,
                    clock=clock,
                    emit=self.emit,
                    open_store=self._opener(),
                )
                booted_before, booted = booted, True
                self.state = "restarting" if booted_before else "starting"
                if booted_before:
                    self.restarts += 1
                    if self.shared is not None:
                        try:
                            await self.shared.claim(self.name)
                        except (SoulElsewhere, SoulUnavailable) as error:
                            # Restarted after a crash, and the lease went to another
                            # daemon (its session ended) or the store is out of reach:
                            # no crash to count; the queued mail is told, the soul rests.
                            self._elsewhere(error)
                            asleep.cancel()
                            return
                try:
                    await soul.run(
                        self.mailbox,
                        task_status=_Started(task_status, self._running),
                        active_at=None if booted_before else idle_since,
                    )
                except* LeaseLost:
                    # Another daemon of the shared store took the soul over while a
                    # background write (extraction, embedding) of this one was under
                    # way: nothing of it was stored; the soul rests here, as if
                    # hibernating, and its next mail learns where it is served.
                    self._log.warning("soul.lease_lost", soul=self.name)
                # Soul.run returns only when the soul hibernates: its store is closed;
                # its supervisor goes down with it.
                asleep.cancel()

            own = Supervisor(
                f"soul:{self.name}",
                [ChildSpec("actor", actor, restart="transient", shutdown=restart.shutdown)],
                max_restarts=restart.max_restarts,
                max_seconds=restart.max_seconds,
            )
            try:
                await own.run(task_status=task_status or anyio.TASK_STATUS_IGNORED)
            finally:
                # The lease is the host's: kept across the actor's restarts (a crash
                # must not hand the soul to another daemon mid-way), given up when it
                # hibernates or stops.
                if self.shared is not None:
                    with anyio.CancelScope(shield=True):
                        await self.shared.give_up(self.name)


def _make_dirs(*paths: Path) -> None:
    for path in paths:
        path.mkdir(parents=True, exist_ok=True)


class _Started:
    """A TaskStatus that runs ``hook`` when the child reports it has started."""

    def __init__(self, inner: anyio.abc.TaskStatus[None], hook: Callable[[], None]) -> None:
        self._inner = inner
        self._hook = hook

    def started(self, value: None = None) -> None:
        self._hook()
        self._inner.started(value)


@dataclass(frozen=True, slots=True)
class RegistryStatistics:
    souls: int
    awake: int
    hibernating: int
    failed: int


class Registry:
    """Name → handle for every configured soul (the router of DESIGN §1)."""

    def __init__(self) -> None:
        self._souls: dict[str, SoulHandle] = {}

    def add(self, handle: SoulHandle) -> None:
        self._souls[handle.name] = handle

    def lookup(self, name: str) -> SoulHandle:
        """The handle of a soul that can take mail (awake or hibernating: mail wakes it);
        UnknownSoul / SoulUnavailable otherwise."""
        handle = self._souls.get(name)
        if handle is None:
            raise UnknownSoul(name)
        if handle.state == "failed":
            raise SoulUnavailable(
                f"soul {name!r} has failed ({handle.last_error}); see the daemon log, fix the "
                "cause and restart the daemon"
            )
        if handle.state == "stopped":
            raise SoulUnavailable(f"soul {name!r} is stopped; retry once it runs again")
        return handle

    def lookup_any(self, name: str) -> SoulHandle:
        """The handle whatever its state; UnknownSoul when there is none."""
        handle = self._souls.get(name)
        if handle is None:
            raise UnknownSoul(name)
        return handle

    def remove(self, name: str) -> None:
        self._souls.pop(name, None)

    def handles(self) -> list[SoulHandle]:
        return [self._souls[name] for name in sorted(self._souls)]

    def statistics(self) -> RegistryStatistics:
        states = [handle.state for handle in self._souls.values()]
        return RegistryStatistics(
            souls=len(states),
            awake=sum(1 for state in states if state in _AWAKE),
            hibernating=states.count("hibernating"),
            failed=states.count("failed"),
        )
