"""Linear scanning for the claim rules: what is asked of a position of a sentence, answered
without reading the sentence again (DESIGN §3.10; issue 19: one soul never stalls the rest).

The rules find many matches in one sentence, and each match asks about its surroundings:
is it inside quotation marks, does "if" come just before it, does it overlap an action
already claimed. Read naively (``sentence[:at].count(...)``, a ``...$`` regex over
``sentence[:at]``) each question costs the length of the sentence, and a long sentence of
repeated triggers ("I painted I painted ...") costs its length squared. What a caller may
rely on:

- ``Quotes(sentence).inside(at)`` is ``O(log q)`` after one ``O(len)`` pass (``q`` the
  quotation marks the sentence holds), and answers as counting the marks before ``at``.
- ``ends_at(pattern, text, at)`` looks back at most ``REACH`` characters: it is the
  pattern (anchored with ``$``) searched in ``text[at - REACH : at]``, with ``\\b`` and
  lookbehinds still seeing the characters before that window.
- ``Cue(words, han).absent(text)`` is a necessary condition read at the speed of
  ``str.find``: when it says absent, a pattern that needs one of those literal pieces
  (lowercase English, or Chinese) cannot match, and the scan of that pattern is skipped.
- ``Claimed`` answers whether a span overlaps one already claimed in time proportional to
  the span's length, never to the number of spans claimed.
- ``Found(pattern, text)`` runs ``pattern.finditer(text)`` once; then ``search(at)`` is
  ``pattern.search(text, at)``'s span, ``last_end(at)`` the end of the last match found
  that ends at or before ``at``, ``meets(start, end)`` whether one overlaps that span and
  ``before(at)`` how many start before ``at``, each in
  ``O(log m)`` (``m`` the matches); ``search`` runs the search only from inside a match.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right

__all__ = ["REACH", "Claimed", "Cue", "Found", "Quotes", "ends_at"]

# How far back a word that qualifies what follows ("if", "what", a clause opener) is
# looked for: longer than any of those words and the blanks after them in real text.
REACH = 32

_MARKS = re.compile('["“”「」]')


class Quotes:
    """Where a sentence's quotation marks are, to say whether a position is inside them:
    after an odd number of straight quotes, or more opening than closing curly or corner
    quotes."""

    __slots__ = ("_at",)

    def __init__(self, sentence: str) -> None:
        self._at: dict[str, list[int]] = {}
        for m in _MARKS.finditer(sentence):
            self._at.setdefault(m.group(), []).append(m.start())

    def _before(self, mark: str, at: int) -> int:
        found = self._at.get(mark)
        return bisect_left(found, at) if found else 0

    def inside(self, at: int) -> bool:
        if not self._at:
            return False
        return (
            self._before('"', at) % 2 == 1
            or self._before("“", at) > self._before("”", at)
            or self._before("「", at) > self._before("」", at)
        )


def ends_at(pattern: re.Pattern[str], text: str, at: int, reach: int = REACH) -> bool:
    """Whether ``pattern``, which ends with ``$``, matches text that ends at ``at`` and
    starts at most ``reach`` characters before it."""
    return pattern.search(text, max(0, at - reach), at) is not None


# The letters a case-insensitive pattern matches as i or s that str.lower() keeps apart
# (dotless i, long s).
_ALSO_ASCII = {0x131: "i", 0x17F: "s"}


class Cue:
    """Literal pieces one of which a pattern needs: lowercase English (found in the
    lowered text) or Chinese. A cue is a prefilter, never a rule: it may say present
    where the pattern then finds nothing, never absent where it would find something
    (a pattern's case-insensitive English is matched by its lowercase pieces in
    ``text.lower()``)."""

    __slots__ = ("han", "words")

    def __init__(self, words: str, han: str = "") -> None:
        self.words = tuple(words.split("|")) if words else ()
        self.han = tuple(han.split("|")) if han else ()

    def absent(self, text: str, low: str | None = None) -> bool:
        """Whether none of the pieces occurs in ``text`` (``low``: ``text.lower()``, if
        the caller has it)."""
        plain = text.isascii()
        if self.words:
            low = text.lower() if low is None else low
            if not plain and ("\u0131" in low or "\u017f" in low):
                low = low.translate(_ALSO_ASCII)
            if any(w in low for w in self.words):
                return False
        return plain or not any(h in text for h in self.han)


class Claimed:
    """The character spans of one sentence that a claim has taken."""

    __slots__ = ("_taken",)

    def __init__(self, length: int) -> None:
        self._taken = bytearray(length)

    def overlaps(self, start: int, end: int) -> bool:
        return start < end and self._taken.find(1, start, end) != -1

    def holds(self, at: int) -> bool:
        return 0 <= at < len(self._taken) and self._taken[at] == 1

    def take(self, start: int, end: int) -> None:
        if start < end:
            self._taken[start:end] = b"\x01" * (end - start)


class Found:
    """The matches of a pattern in one text, found once, left to right and without
    overlaps (a pattern that never matches the empty string)."""

    __slots__ = ("_ends", "_pattern", "_starts", "_text")

    def __init__(
        self, pattern: re.Pattern[str], text: str, spans: list[tuple[int, int]] | None = None
    ) -> None:
        """``spans``: the matches of ``finditer``, when the caller finds them faster."""
        self._pattern, self._text = pattern, text
        if spans is None:
            spans = [m.span() for m in pattern.finditer(text)]
        self._starts = [a for a, _ in spans]
        self._ends = [b for _, b in spans]

    def inside(self, at: int) -> bool:
        """Whether ``at`` is inside a match found, after its start."""
        k = bisect_left(self._starts, at)
        return k > 0 and self._ends[k - 1] > at

    def search(self, at: int) -> tuple[int, int] | None:
        """The span of ``pattern.search(text, at)``. Every position from the end of a
        match found to the start of the next failed, whatever the search's start: only a
        start inside a match (rare) is searched again."""
        k = bisect_left(self._starts, at)
        if k == 0 or self._ends[k - 1] <= at:
            return (self._starts[k], self._ends[k]) if k < len(self._starts) else None
        m = self._pattern.search(self._text, at)
        return m.span() if m else None

    def last_end(self, at: int) -> int:
        """The end of the last match found that ends at or before ``at``; 0 if none."""
        k = bisect_right(self._ends, at)
        return self._ends[k - 1] if k else 0

    def meets(self, start: int, end: int) -> bool:
        """Whether a match found overlaps ``[start, end)``: a necessary condition for a
        match of the pattern's literals in ``text[start:end]``."""
        k = bisect_right(self._ends, start)
        return k < len(self._starts) and self._starts[k] < end

    def before(self, at: int) -> int:
        """How many of the matches found start before ``at``."""
        return bisect_left(self._starts, at)
