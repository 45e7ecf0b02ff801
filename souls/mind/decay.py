"""Forgetting on the Ebbinghaus curve: the numbers of the nightly decay (DESIGN §3.6).

The pass itself is one transaction in :meth:`souls.store.interface.SoulStore.decay`; the soul
runs it on a ``decay`` message (nightly from the scheduler, or ``soupd decay``).
"""

from __future__ import annotations

import msgspec

__all__ = ["DecayConfig"]


class DecayConfig(msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    # Memories at least this salient are never hidden.
    permanent_at: float = 0.7
    # Memories at least this salient (and below permanent_at) are hidden after
    # medium_days without being recalled; less salient ones after low_days.
    medium_at: float = 0.4
    medium_days: float = 30.0
    low_days: float = 7.0
    # Hidden memories are purged (index and row) this many days after hiding.
    purge_days: float = 7.0

    def __post_init__(self) -> None:
        if not 0 <= self.medium_at <= self.permanent_at <= 1:
            raise ValueError("need 0 <= medium_at <= permanent_at <= 1")
        if min(self.medium_days, self.low_days, self.purge_days) < 0:
            raise ValueError("day counts must be >= 0")
