"""What a supervisor is told about a child, what it reports back, and the child's stop budget.

A child is a coroutine function taking a task status. It must call
``task_status.started(value)`` once it is ready to serve; ``value`` is handed to whoever
started it. After that it runs until it returns (a normal exit), raises (a crash) or is
cancelled by its supervisor (a stop). On a stop it has ``ChildSpec.shutdown`` seconds to
clean up, and gets them by entering :func:`shielded_cleanup` in its ``finally`` block.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, Literal

import anyio
import anyio.abc

__all__ = [
    "DEFAULT_SHUTDOWN",
    "ChildInfo",
    "ChildSpec",
    "ChildState",
    "Restart",
    "shielded_cleanup",
]

Restart = Literal["permanent", "transient", "temporary"]
ChildState = Literal["starting", "running", "restarting", "stopping"]

DEFAULT_SHUTDOWN = 5.0
"""Cleanup budget in seconds, for a child spec that names none and for code outside a child."""

# Set inside each child's own task before its start function runs, so the value follows
# the child (and any task it spawns) and never leaks into its siblings.
_shutdown_budget: ContextVar[float] = ContextVar("soupd_child_shutdown", default=DEFAULT_SHUTDOWN)


@dataclass(frozen=True, slots=True)
class ChildSpec:
    """How to run one child.

    ``restart``: ``permanent`` children are always restarted, ``transient`` ones only after
    a crash, ``temporary`` ones never. ``shutdown`` is the seconds the child may spend
    cleaning up once told to stop.
    """

    id: str
    start: Callable[[anyio.abc.TaskStatus[Any]], Awaitable[None]]
    restart: Restart = "permanent"
    shutdown: float = DEFAULT_SHUTDOWN

    def __post_init__(self) -> None:
        if not self.id:
            raise ValueError("a child spec needs a non-empty id")
        if self.shutdown < 0:
            raise ValueError(f"child {self.id!r}: shutdown must be >= 0, got {self.shutdown}")


@dataclass(frozen=True, slots=True)
class ChildInfo:
    """A snapshot of one supervised child; ``restarts`` counts its starts after the first."""

    id: str
    restart: Restart
    state: ChildState
    restarts: int
    value: Any


def shielded_cleanup() -> anyio.CancelScope:
    """A shielded scope whose deadline is now plus the current child's shutdown budget.

    Enter it in a child's ``finally``/``except`` so awaits there survive the stop that
    triggered them, yet cannot outlast the budget. Outside a supervised child the budget is
    :data:`DEFAULT_SHUTDOWN`.
    """
    return anyio.CancelScope(shield=True, deadline=anyio.current_time() + _shutdown_budget.get())
