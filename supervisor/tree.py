"""An OTP-shaped supervisor on anyio: children are started, watched, restarted and stopped.

Invariants a caller may rely on:

* Children start one after the other, in order (static ones, then dynamic ones in order of
  addition), and a child counts as started only once it called ``task_status.started()``.
  They stop in reverse of that order, one at a time, each within its ``shutdown`` budget.
* Every child task is owned by the task group inside :meth:`Supervisor.run`; nothing
  outlives ``run()``. Cancelling ``run()`` is the normal stop, and the cancellation is
  always re-raised once the children are stopped.
* A crash (the start function raising) or a normal return is handled by one task, the one
  running ``run()``, under a lock that ``start_child``/``terminate_child`` also take: the
  tree never changes shape under a restart in progress.
* Restarting follows the child's ``restart`` type and the supervisor's strategy. More than
  ``max_restarts`` restarts within ``max_seconds`` stops every child and makes ``run()``
  raise :class:`RestartIntensityExceeded`, which a parent supervisor sees as a crash.
* This module knows nothing of what its children do.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import anyio
import anyio.abc
import structlog

from supervisor.childspec import (
    DEFAULT_SHUTDOWN,
    ChildInfo,
    ChildSpec,
    ChildState,
    Restart,
    _shutdown_budget,
    shielded_cleanup,
)
from supervisor.errors import ChildStartError, RestartIntensityExceeded, SupervisorError

__all__ = [
    "DEFAULT_SHUTDOWN",
    "ChildInfo",
    "ChildSpec",
    "ChildState",
    "Restart",
    "Strategy",
    "Supervisor",
    "SupervisorStatistics",
    "shielded_cleanup",
]

Strategy = Literal["one_for_one", "one_for_all", "rest_for_one"]

# Extra wait past a child's shutdown budget before warning that it overran.
_OVERRUN_GRACE = 1.0

_log = structlog.get_logger()


@dataclass(frozen=True, slots=True)
class SupervisorStatistics:
    """Counters since construction. ``restarts_total`` counts restarts the supervisor went
    ahead with (what intensity limits), not the siblings a group restart takes along."""

    name: str
    strategy: Strategy
    running: bool
    children: int
    restarts_total: int
    crashes_total: int


class _Handshake:
    """Passes ``started()`` through and remembers it was called, so a failure can be told
    apart as a boot failure (goes to the starter) or a crash (goes to the supervisor)."""

    __slots__ = ("_status", "was_started")

    def __init__(self, status: anyio.abc.TaskStatus[Any]) -> None:
        self._status = status
        self.was_started = False

    def started(self, value: Any = None) -> None:
        self._status.started(value)
        self.was_started = True


@dataclass(eq=False, slots=True)
class _Child:
    spec: ChildSpec
    state: ChildState = "starting"
    restarts: int = 0
    value: Any = None
    # One generation per start; an exit report from an older generation is stale.
    generation: int = 0
    scope: anyio.CancelScope = field(default_factory=anyio.CancelScope)
    # Set when the current generation's task is past its start function; None before any.
    done: anyio.Event | None = None

    def is_running(self) -> bool:
        return self.done is not None and not self.done.is_set()


class Supervisor:
    """Runs children per their :class:`ChildSpec` under one restart ``strategy``."""

    def __init__(
        self,
        name: str,
        children: Sequence[ChildSpec] = (),
        *,
        strategy: Strategy = "one_for_one",
        max_restarts: int = 3,
        max_seconds: float = 5.0,
    ) -> None:
        ids = [spec.id for spec in children]
        if duplicates := sorted({i for i in ids if ids.count(i) > 1}):
            raise SupervisorError(f"supervisor {name!r}: duplicate child ids {duplicates}")
        if max_restarts < 0 or max_seconds <= 0:
            raise SupervisorError(
                f"supervisor {name!r}: need max_restarts >= 0 and max_seconds > 0"
            )
        self.name = name
        self.strategy: Strategy = strategy
        self.max_restarts = max_restarts
        self.max_seconds = max_seconds
        self._specs = tuple(children)
        # Insertion order is start order; restarts keep a child's place.
        self._children: dict[str, _Child] = {}
        # Only the latest max_restarts + 1 times matter to the intensity check.
        self._restart_times: deque[float] = deque(maxlen=max_restarts + 1)
        # Holds at most one report per child generation started since the last drain.
        self._exits: deque[tuple[_Child, int, Exception | None]] = deque()
        self._lock = anyio.Lock()
        self._wakeup = anyio.Event()
        self._tg: anyio.abc.TaskGroup | None = None
        self._closing = False
        self._restarts_total = 0
        self._crashes_total = 0

    async def run(
        self, *, task_status: anyio.abc.TaskStatus[Supervisor] = anyio.TASK_STATUS_IGNORED
    ) -> None:
        """Start the children in order, report ``started(self)``, then supervise until
        cancelled. Raises :class:`ChildStartError` if a static child fails to start and
        :class:`RestartIntensityExceeded` when restarts exceed the intensity."""
        if self._tg is not None:
            raise SupervisorError(f"supervisor {self.name!r} is already running")
        self._children.clear()
        self._exits.clear()
        self._restart_times.clear()
        self._closing = False
        self._wakeup = anyio.Event()
        failure: SupervisorError | None = None
        try:
            async with anyio.create_task_group() as tg:
                self._tg = tg
                try:
                    for spec in self._specs:
                        await self._add(spec)
                    task_status.started(self)
                    await self._watch()
                except (ChildStartError, RestartIntensityExceeded) as exc:
                    failure = exc
                finally:
                    self._closing = True
                    with anyio.CancelScope(shield=True):
                        async with self._lock:
                            for child in reversed(self._children.values()):
                                await self._stop(child)
                            self._children.clear()
        finally:
            self._tg = None
        # Raised outside the task group so callers get the error itself, not a group.
        if failure is not None:
            raise failure

    async def start_child(self, spec: ChildSpec) -> Any:
        """Add and start a child while running; returns the value it passed to started()."""
        self._require_running()
        async with self._lock:
            self._require_running()
            if spec.id in self._children:
                raise SupervisorError(
                    f"supervisor {self.name!r} already has a child {spec.id!r}; "
                    "terminate it first or pick another id"
                )
            return await self._add(spec)

    async def terminate_child(self, child_id: str) -> None:
        """Stop a child within its shutdown budget and forget its spec.

        A child must not terminate itself this way: it would wait for its own exit.
        """
        self._require_running()
        async with self._lock:
            child = self._children.get(child_id)
            if child is None:
                raise SupervisorError(
                    f"supervisor {self.name!r} has no child {child_id!r}; "
                    "which_children() lists the current ones"
                )
            await self._stop(child)
            del self._children[child_id]

    def which_children(self) -> list[ChildInfo]:
        return [
            ChildInfo(c.spec.id, c.spec.restart, c.state, c.restarts, c.value)
            for c in self._children.values()
        ]

    def statistics(self) -> SupervisorStatistics:
        return SupervisorStatistics(
            name=self.name,
            strategy=self.strategy,
            running=self._tg is not None and not self._closing,
            children=len(self._children),
            restarts_total=self._restarts_total,
            crashes_total=self._crashes_total,
        )

    def _require_running(self) -> None:
        if self._tg is None or self._closing:
            raise SupervisorError(
                f"supervisor {self.name!r} is not running; children can be added or "
                "removed only while its run() is active"
            )

    async def _add(self, spec: ChildSpec) -> Any:
        child = _Child(spec)
        self._children[spec.id] = child
        try:
            return await self._start(child)
        except Exception as exc:
            del self._children[spec.id]
            raise ChildStartError(
                f"supervisor {self.name!r} could not start child {spec.id!r}: {exc!r}; "
                "fix what its start function raised (chained below)"
            ) from exc
        except BaseException:
            del self._children[spec.id]
            raise

    async def _start(self, child: _Child) -> Any:
        assert self._tg is not None
        child.generation += 1
        child.scope = anyio.CancelScope()
        child.done = anyio.Event()
        value = await self._tg.start(self._run_child, child, child.generation)
        # Shielded only now: while booting the child must still feel its starter's
        # cancellation, but once up only its own stop (in reverse order) may end it.
        child.scope.shield = True
        child.value = value
        child.state = "running"
        _log.info("child.started", supervisor=self.name, child=child.spec.id)
        return value

    async def _run_child(
        self, child: _Child, generation: int, *, task_status: anyio.abc.TaskStatus[Any]
    ) -> None:
        _shutdown_budget.set(child.spec.shutdown)
        scope, done = child.scope, child.done
        assert done is not None
        handshake = _Handshake(task_status)
        outcome: Exception | None = None
        try:
            with scope:
                await child.spec.start(handshake)
        except Exception as exc:
            if not handshake.was_started:
                raise  # a boot failure belongs to whoever awaits the start
            outcome = exc
        finally:
            done.set()
        if scope.cancel_called:
            if outcome is not None:
                _log.warning(
                    "child.crashed",
                    supervisor=self.name,
                    child=child.spec.id,
                    while_stopping=True,
                    exc_info=outcome,
                )
            return
        self._exits.append((child, generation, outcome))
        self._wakeup.set()

    async def _watch(self) -> None:
        while True:
            await self._wakeup.wait()
            self._wakeup = anyio.Event()
            while self._exits:
                child, generation, outcome = self._exits.popleft()
                async with self._lock:
                    current = self._children.get(child.spec.id)
                    if current is child and child.generation == generation:
                        await self._handle_exit(child, outcome)

    async def _handle_exit(self, child: _Child, outcome: Exception | None) -> None:
        if outcome is None:
            _log.info("child.exited", supervisor=self.name, child=child.spec.id)
        else:
            self._crashed(child, outcome)
        restart = child.spec.restart
        if restart == "temporary" or (restart == "transient" and outcome is None):
            del self._children[child.spec.id]
            return
        await self._restart(child, outcome)

    def _crashed(self, child: _Child, exc: Exception) -> None:
        self._crashes_total += 1
        _log.error("child.crashed", supervisor=self.name, child=child.spec.id, exc_info=exc)

    async def _restart(self, failed: _Child, cause: Exception | None) -> None:
        # Each pass restarts one group; a member failing its handshake is a new crash,
        # so the loop runs again from it, bounded by the intensity check.
        while True:
            self._count_restart(failed, cause)
            order = list(self._children.values())
            if self.strategy == "one_for_one":
                group = [failed]
            elif self.strategy == "one_for_all":
                group = order
            else:
                group = order[order.index(failed) :]
            for sibling in reversed(group):
                await self._stop(sibling)
            # As in OTP, a temporary sibling stopped for a group restart is not restarted.
            for sibling in group:
                if sibling is not failed and sibling.spec.restart == "temporary":
                    del self._children[sibling.spec.id]
            group = [c for c in group if c.spec.id in self._children]
            for member in group:
                member.state = "restarting"
            _log.info(
                "child.restarting",
                supervisor=self.name,
                child=failed.spec.id,
                strategy=self.strategy,
                group=[c.spec.id for c in group],
            )
            for member in group:
                member.restarts += 1
                try:
                    await self._start(member)
                except Exception as exc:  # noqa: BLE001 -- any failed handshake is a crash
                    self._crashed(member, exc)
                    failed, cause = member, exc
                    break
            else:
                return

    def _count_restart(self, failed: _Child, cause: Exception | None) -> None:
        now = anyio.current_time()
        self._restart_times.append(now)
        while self._restart_times[0] < now - self.max_seconds:
            self._restart_times.popleft()
        if len(self._restart_times) <= self.max_restarts:
            self._restarts_total += 1
            return
        what = "exited" if cause is None else f"crashed with {cause!r}"
        _log.error(
            "supervisor.intensity_exceeded",
            supervisor=self.name,
            child=failed.spec.id,
            max_restarts=self.max_restarts,
            max_seconds=self.max_seconds,
        )
        raise RestartIntensityExceeded(
            f"supervisor {self.name!r} gave up after more than {self.max_restarts} restarts "
            f"within {self.max_seconds}s; last, child {failed.spec.id!r} {what}. "
            "Fix the failing child, or raise max_restarts if such bursts are expected"
        ) from cause

    async def _stop(self, child: _Child) -> None:
        if not child.is_running():
            return
        assert child.done is not None
        child.state = "stopping"
        # Shielded: a stop interrupted half-way would leave a child nobody waits for.
        with anyio.CancelScope(shield=True):
            child.scope.cancel()
            with anyio.move_on_after(child.spec.shutdown + _OVERRUN_GRACE):
                await child.done.wait()
            if not child.done.is_set():
                # Python cannot kill a task: a child that shields its cleanup past its
                # budget can only be waited for. Say so loudly, and keep waiting.
                _log.warning(
                    "child.shutdown_overrun",
                    supervisor=self.name,
                    child=child.spec.id,
                    shutdown=child.spec.shutdown,
                )
                await child.done.wait()
