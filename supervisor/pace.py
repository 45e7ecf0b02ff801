"""Cooperative time slices: a turn's CPU work gives the event loop back every few ms.

Every soul shares one event loop, so a turn that computes for 30 ms (a batch of 8,000
character events: the gate, tokenising, surprise) holds up every other soul's mail for
those 30 ms. A :class:`Pacer` is called between the steps of such work and yields to the
loop once the turn has held it for a slice; a turn of small events never reaches a slice
and pays nothing (a checkpoint per event would cost more than the event's own work).

Some steps cannot be cut: one call that gates, tokenises or reads a long text costs a
few milliseconds at once. Those go to a worker process (:func:`in_worker`) from
:data:`OFFLOAD_CHARS` on, and the loop serves the other souls meanwhile. Workers run
at a lower CPU priority than the daemon (:data:`WORKER_NICE`): on a machine whose cores
are all busy, the one loop that serves every soul comes first, and a flood of long texts
to one soul waits for the CPU instead of the other souls' mail.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable
from typing import TypeVar, TypeVarTuple, Unpack

import anyio.lowlevel
import anyio.to_process

__all__ = ["OFFLOAD_CHARS", "SLICE", "WORKER_NICE", "Pacer", "in_worker"]

_T = TypeVar("_T")
_Args = TypeVarTuple("_Args")

# How long one soul's turn may hold the loop between checkpoints, in seconds (1 ms: a
# bystander soul waits for a few such slices per push, see bench/abuse.py).
SLICE = 0.001

# From this length on, a text's one-call work (gate, tokens, rule readings: ~1 ms per
# thousand characters) runs in a worker process: about 4 ms of work, against ~0.3 ms for
# the hand-over (pickling both ways, two pipe hops).
OFFLOAD_CHARS = 4096


# How much nicer than the daemon a worker process is (nice(2): added to the daemon's own;
# a worker of a daemon at nice 0 runs at 10).
WORKER_NICE = 10

# Whether this process (a worker) has lowered its priority already.
_niced = False


def _nicely(func: Callable[[Unpack[_Args]], _T], *args: *_Args) -> _T:
    """``func(*args)``, in a worker that lowered its own priority on its first call."""
    global _niced
    if not _niced:
        _niced = True
        # Where it is not allowed (a seccomp filter), the work is the same, only sooner.
        with contextlib.suppress(OSError):
            os.nice(WORKER_NICE)
    return func(*args)


async def in_worker(func: Callable[[Unpack[_Args]], _T], *args: *_Args) -> _T:
    """``func(*args)`` in one of anyio's worker processes (started on first use, at most
    one per core, idle ones stopped after a few minutes, each at :data:`WORKER_NICE`).
    ``func`` must be a module-level function and its arguments and result picklable.
    Cancelling kills the worker."""
    return await anyio.to_process.run_sync(_nicely, func, *args, cancellable=True)


class Pacer:
    def __init__(self, slice: float | None = None) -> None:
        self._slice = SLICE if slice is None else slice
        self._since = time.perf_counter()
        self.yields = 0  # how often it gave the loop back (a turn's figure)

    async def __call__(self) -> None:
        """Yield to the event loop if the work since the last yield took a slice."""
        if time.perf_counter() - self._since >= self._slice:
            await anyio.lowlevel.checkpoint()
            self.yields += 1
            self._since = time.perf_counter()

    def restart(self) -> None:
        """Count the slice from now (after an await that gave the loop back anyway)."""
        self._since = time.perf_counter()
