"""An import cut into requests the daemon takes: each under half its 1 MiB frame cap
and at most 2000 events, as ``soupd import`` sends them, and the replies summed into
one :class:`~soupd._types.ImportResult` whose reasons name positions in the caller's
list. Each batch is sent again after a broken connection only when every event of it
has a ``ref`` or a ``ts`` (then the daemon stores it once, however often it comes).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import msgspec

from soupd._calls import Call, import_result, when
from soupd._types import ImportResult, Rejection

__all__ = ["ImportPlan"]

_BATCH_BYTES = 512 * 1024
_BATCH_EVENTS = 2000
# Most reasons one result lists, as the daemon caps them (the counts stay complete).
_MAX_REASONS = 100

_encoder = msgspec.json.Encoder()


class ImportPlan:
    """The requests of one import (``calls``, in order) and how to sum their replies."""

    def __init__(
        self, soul: str, events: Iterable[Mapping[str, Any]], timeout: float | None
    ) -> None:
        self.calls: list[Call[ImportResult]] = []
        self._starts: list[int] = []
        # Events refused before sending: one alone would not fit a request.
        self._refused: list[Rejection] = []
        batch: list[dict[str, Any]] = []
        size, start, index = 0, 0, -1
        for index, event in enumerate(events):
            shown = {k: when(v) if k == "ts" else v for k, v in event.items()}
            length = len(_encoder.encode(shown)) + 1
            if length > _BATCH_BYTES:
                self._refused.append(
                    Rejection(
                        index=index,
                        code="frame_too_large",
                        message=f"event is over {_BATCH_BYTES} bytes as JSON; the daemon "
                        "stores texts of at most 8000 characters",
                    )
                )
                continue
            if batch and (size + length > _BATCH_BYTES or len(batch) >= _BATCH_EVENTS):
                self._add(soul, batch, start, timeout)
                batch, size = [], 0
            if not batch:
                start = index
            batch.append(shown)
            size += length
        if batch or not self.calls:
            self._add(soul, batch, start, timeout)

    def _add(
        self, soul: str, batch: list[dict[str, Any]], start: int, timeout: float | None
    ) -> None:
        keyed = all(e.get("ref") is not None or e.get("ts") is not None for e in batch)
        params = {"soul": soul, "events": batch}
        self.calls.append(Call("event.import", params, import_result, keyed, timeout))
        self._starts.append(start)

    def merge(self, results: Sequence[ImportResult]) -> ImportResult:
        """One result for the whole import, reasons by position in the caller's list."""
        reasons = list(self._refused)
        stored = dropped = duplicate = 0
        rejected = len(self._refused)
        truncated = False
        for result, call, start in zip(results, self.calls, self._starts, strict=True):
            stored, dropped = stored + result.stored, dropped + result.dropped
            duplicate += result.duplicate
            rejected += result.rejected
            truncated = truncated or result.reasons_truncated
            positions = self._batch_positions(call, start)
            reasons.extend(
                Rejection(index=positions[r.index], code=r.code, message=r.message)
                for r in result.reasons
                if 0 <= r.index < len(positions)
            )
        reasons.sort(key=lambda r: r.index)
        return ImportResult(
            stored=stored,
            dropped=dropped,
            duplicate=duplicate,
            rejected=rejected,
            reasons=reasons[:_MAX_REASONS],
            reasons_truncated=truncated or len(reasons) > _MAX_REASONS,
        )

    def _batch_positions(self, call: Call[ImportResult], start: int) -> list[int]:
        """The caller's positions of a batch's events: from ``start`` on, skipping the
        events refused before sending."""
        count = len(call.params["events"])
        refused = {r.index for r in self._refused}
        positions: list[int] = []
        index = start
        while len(positions) < count:
            if index not in refused:
                positions.append(index)
            index += 1
        return positions
