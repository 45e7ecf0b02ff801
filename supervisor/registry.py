"""The registry: soul name → handle, and how a soul is hosted in the tree.

A :class:`SoulHandle` is what the rest of the daemon holds on to: the soul's name,
config and mailbox. The mailbox belongs to the handle, not to the actor task, so it
survives the actor's restarts. Each soul runs under its own small supervisor (restart
intensity from its TOML); that supervisor is a *temporary* child of the ``souls``
dynamic supervisor, so a soul that keeps crashing is stopped and reported failed
while its siblings never notice.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import anyio
import anyio.abc
import structlog

from souls.clock import Clock
from souls.config import SoulConfig
from souls.mailbox import Mailbox
from souls.messages import Message
from souls.mind import Emit
from souls.soul import Soul
from supervisor.errors import RestartIntensityExceeded, SoulUnavailable, UnknownSoul
from supervisor.tree import ChildSpec, Supervisor

__all__ = ["Registry", "SoulHandle", "SoulState"]

SoulState = Literal["starting", "running", "restarting", "failed", "stopped"]


@dataclass(eq=False)
class SoulHandle:
    name: str
    config: SoulConfig
    db_path: Path
    brain_dir: Path
    mailbox: Mailbox[Message]
    # Where the soul's outputs go (the daemon's outputs hub), if anywhere.
    emit: Emit | None = None
    state: SoulState = "starting"
    starts: int = 0
    last_error: str | None = None
    _log: structlog.typing.FilteringBoundLogger = field(
        default_factory=lambda: structlog.get_logger("soupd.registry")
    )

    @property
    def restarts(self) -> int:
        return max(self.starts - 1, 0)

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
        """The spec that hosts this soul under its own supervisor."""
        restart = self.config.restart

        async def actor(task_status: anyio.abc.TaskStatus[None]) -> None:
            # A fresh Soul on every start: in-memory state is rebuilt from the database.
            soul = Soul(
                self.name,
                self.config,
                db_path=self.db_path,
                brain_dir=self.brain_dir,
                clock=clock,
                emit=self.emit,
            )
            self.state = "restarting" if self.starts else "starting"
            self.starts += 1
            await soul.run(self.mailbox, task_status=_Started(task_status, self._running))

        own = Supervisor(
            f"soul:{self.name}",
            [ChildSpec("actor", actor, restart="permanent", shutdown=restart.shutdown)],
            max_restarts=restart.max_restarts,
            max_seconds=restart.max_seconds,
        )

        async def host(task_status: anyio.abc.TaskStatus[Any]) -> None:
            try:
                await own.run(task_status=task_status)
            except RestartIntensityExceeded as exc:
                self.fail(str(exc.__cause__ or exc))
                self._log.error("soul.failed", soul=self.name, reason=self.last_error)
            except anyio.get_cancelled_exc_class():
                self.stop()
                raise

        return ChildSpec(f"soul:{self.name}", host, restart="temporary", shutdown=restart.shutdown)


class _Started:
    """A TaskStatus that runs ``hook`` when the child reports it has started."""

    def __init__(self, inner: anyio.abc.TaskStatus[None], hook: Callable[[], None]) -> None:
        self._inner = inner
        self._hook = hook

    def started(self, value: None = None) -> None:
        self._hook()
        self._inner.started(value)


class Registry:
    """Name → handle for every configured soul (the router of DESIGN §1)."""

    def __init__(self) -> None:
        self._souls: dict[str, SoulHandle] = {}

    def add(self, handle: SoulHandle) -> None:
        self._souls[handle.name] = handle

    def lookup(self, name: str) -> SoulHandle:
        """The handle of a soul that can take mail; UnknownSoul / SoulUnavailable otherwise."""
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
