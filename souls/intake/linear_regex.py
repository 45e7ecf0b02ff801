"""Regular expressions that run in linear time: RE2 (``google-re2``), typed.

Python's ``re`` backtracks, so one pattern and one unlucky text can hold the event loop
for seconds (``(a+)+$`` against ``"a" * 26 + "!"``). RE2 runs every pattern as an
automaton: the time to search a text grows with the text's length and never with how
the pattern could match it. What it cannot do in linear time it refuses to compile:
look-around, backreferences, possessive quantifiers, repetition counts over 1000.

Texts are searched as UTF-8 bytes, encoded once by the caller (:meth:`LinearPattern.
matches` takes ``bytes``), so several patterns over one text pay for one encoding.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, cast

import re2  # type: ignore[import-untyped]

__all__ = ["LinearMatch", "LinearPattern", "PatternError", "Prefilter"]

# The automaton's memory budget per pattern. RE2 falls back to a slower (still linear)
# engine when a search needs more, so this bounds memory, never correctness.
_MAX_MEM = 8 << 20


class PatternError(ValueError):
    """RE2 cannot compile the pattern; the message says why, in RE2's words."""


def _options(capture: bool) -> Any:
    options = re2.Options()
    options.max_mem = _MAX_MEM
    options.log_errors = False  # the error is raised to the caller, not written to stderr
    options.never_capture = not capture
    return options


class LinearMatch:
    """One match, read lazily (a rule's check often needs one group, a repeat none):
    the bytes it covers, its named groups as text ("" for a group that took no part),
    and the character right after it ("" at the end of the text)."""

    __slots__ = ("_data", "_groups", "_match", "end", "start")

    def __init__(self, data: bytes, match: Any, groups: dict[str, int]) -> None:
        self._data = data
        self._match = match
        self._groups = groups
        self.start, self.end = cast(tuple[int, int], match.span(0))

    @property
    def covered(self) -> bytes:
        """The match and the byte after it: equal for two matches a check would judge
        alike."""
        return self._data[self.start : self.end + 1]

    @property
    def text(self) -> str:
        return self._data[self.start : self.end].decode("utf-8", "replace")

    @property
    def after(self) -> str:
        # The next character, whole: a UTF-8 lead byte and its continuation bytes.
        return self._data[self.end : self.end + 4].decode("utf-8", "ignore")[:1]

    def __getitem__(self, name: str) -> str:
        index = self._groups.get(name)
        if index is None:
            return ""
        start, end = cast(tuple[int, int], self._match.span(index))
        return self._data[start:end].decode("utf-8", "replace") if start >= 0 else ""


class LinearPattern:
    """One compiled RE2 pattern."""

    __slots__ = ("_groups", "_regex", "pattern")

    def __init__(self, pattern: str, *, capture: bool = True) -> None:
        """Raises PatternError when RE2 cannot compile ``pattern``. Without ``capture``
        groups only group (a search then needs no more than the fastest engine)."""
        try:
            self._regex = re2.compile(pattern, _options(capture))
        except re2.error as exc:
            reason = exc.args[0] if exc.args else "invalid pattern"
            if isinstance(reason, bytes):
                reason = reason.decode("utf-8", "replace")
            raise PatternError(str(reason)) from None
        self.pattern = pattern
        self._groups = dict(cast(dict[str, int], self._regex.groupindex))

    def search(self, data: bytes) -> bool:
        """Whether the pattern matches anywhere in ``data`` (UTF-8)."""
        return self._regex.search(data) is not None

    def matches(self, data: bytes) -> Iterator[LinearMatch]:
        """The pattern's non-overlapping matches in ``data`` (UTF-8), left to right."""
        for match in self._regex.finditer(data):
            yield LinearMatch(data, match, self._groups)


class Prefilter:
    """Which of many patterns could match a text, from the literal strings each needs
    (RE2's FilteredRE2): one pass of a small automaton over the text. A pattern that
    needs no literal (``(?i)...``, ``\\d{8}:...``) is always a candidate."""

    __slots__ = ("_filter",)

    def __init__(self, patterns: list[str]) -> None:
        self._filter = re2.Filter()
        for pattern in patterns:
            try:
                self._filter.Add(pattern, _options(capture=False))
            except re2.error as exc:
                raise PatternError(f"{pattern!r}: {exc}") from None
        self._filter.Compile()

    def candidates(self, data: bytes) -> list[int]:
        """Indexes (in the order given) of the patterns that may match ``data``, sorted."""
        found = self._filter.Match(data, True)
        return sorted(cast(list[int], found)) if found else []
