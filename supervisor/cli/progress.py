"""A progress bar on standard error for long commands (``soupd import``, ``export``):
done of total, rate and time left, redrawn at most ten times a second.

Shown only when standard error is a terminal: piped or redirected, nothing is written
(no carriage returns in a log file). Without a total (an export does not know its
size beforehand) it shows what was done and the rate.
"""

from __future__ import annotations

import sys
import time
from typing import TextIO

__all__ = ["Progress"]

_WIDTH = 24
_EVERY = 0.1  # seconds between redraws


class Progress:
    def __init__(
        self,
        label: str,
        total: float | None,
        *,
        unit: str = "",
        stream: TextIO | None = None,
        enabled: bool | None = None,
    ) -> None:
        self._stream = stream or sys.stderr
        self.enabled = self._stream.isatty() if enabled is None else enabled
        self._label = label
        self._total = total
        self._unit = unit
        self.done = 0.0
        self._started = time.monotonic()
        self._drawn = 0.0

    def advance(self, amount: float) -> None:
        self.done += amount
        now = time.monotonic()
        if self.enabled and now - self._drawn >= _EVERY:
            self._drawn = now
            self._draw(now)

    def close(self) -> None:
        """Draw the final state and end the line."""
        if self.enabled:
            self._draw(time.monotonic())
            self._stream.write("\n")
            self._stream.flush()

    def line(self, now: float) -> str:
        elapsed = max(now - self._started, 1e-9)
        rate = self.done / elapsed
        head = f"{self._label} "
        if self._total:
            share = min(self.done / self._total, 1.0)
            filled = round(share * _WIDTH)
            left = (self._total - self.done) / rate if rate > 0 else None
            head += (
                f"[{'#' * filled}{'.' * (_WIDTH - filled)}] {share:4.0%} "
                f"{_amount(self.done, self._unit)}/{_amount(self._total, self._unit)}"
            )
            tail = f"  {_amount(rate, self._unit)}/s  ETA {_clock(left)}"
        else:
            head += _amount(self.done, self._unit)
            tail = f"  {_amount(rate, self._unit)}/s  {_clock(elapsed)}"
        return head + tail

    def _draw(self, now: float) -> None:
        self._stream.write("\r" + self.line(now) + "\x1b[K")
        self._stream.flush()


def _amount(value: float, unit: str) -> str:
    if unit == "B":
        for prefix in ("", "k", "M", "G"):
            if value < 1000 or prefix == "G":
                return f"{value:.0f} B" if not prefix else f"{value:.1f} {prefix}B"
            value /= 1000
    return f"{value:,.0f}{' ' + unit if unit else ''}"


def _clock(seconds: float | None) -> str:
    if seconds is None:
        return "--:--"
    minutes, secs = divmod(int(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes:02d}:{secs:02d}"
