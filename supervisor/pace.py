"""Cooperative time slices: a turn's CPU work gives the event loop back every few ms.

Every soul shares one event loop, so a turn that computes for 30 ms (a batch of 8,000
character events: the gate, tokenising, surprise) holds up every other soul's mail for
those 30 ms. A :class:`Pacer` is called between the steps of such work and yields to the
loop once the turn has held it for a slice; a turn of small events never reaches a slice
and pays nothing (a checkpoint per event would cost more than the event's own work).
"""

from __future__ import annotations

import time

import anyio.lowlevel

__all__ = ["SLICE", "Pacer"]

# How long one soul's turn may hold the loop between checkpoints, in seconds (1 ms: a
# bystander soul waits for a few such slices per push, see bench/abuse.py).
SLICE = 0.001


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
