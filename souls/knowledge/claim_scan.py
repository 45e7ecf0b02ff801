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
"""

from __future__ import annotations

import re
from bisect import bisect_left

__all__ = ["REACH", "Claimed", "Cue", "Quotes", "ends_at"]

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
