"""Small in-process measurements a soul keeps about itself."""

from __future__ import annotations

from collections import deque

__all__ = ["LatencyWindow"]


class LatencyWindow:
    """The last ``size`` durations (seconds) and their percentiles, in milliseconds."""

    def __init__(self, size: int = 10_000) -> None:
        self._samples: deque[float] = deque(maxlen=size)
        self.count = 0

    def add(self, seconds: float) -> None:
        self._samples.append(seconds)
        self.count += 1

    def percentile_ms(self, p: float) -> float | None:
        """Nearest-rank percentile ``p`` (0 to 100) in ms, or None with no samples."""
        if not self._samples:
            return None
        ordered = sorted(self._samples)
        rank = max(0, min(len(ordered) - 1, round(p / 100 * len(ordered) + 0.5) - 1))
        return round(ordered[rank] * 1000, 4)
