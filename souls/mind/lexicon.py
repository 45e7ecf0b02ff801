"""The valence lexicon (DESIGN §3.7): the words and phrases that make a text feel good
or bad, compiled for matching.

The entries themselves are configuration (``SomaticConfig.negative_words`` and
``positive_words``); this module turns a pair of entry lists into a ``Lexicon`` that
finds them in text. ``souls.mind.appraisal`` is its one user.

Invariants a caller may rely on:

- English entries match whole words: a space in an entry matches any whitespace, an
  apostrophe in it is optional. CJK entries match as substrings.
- Where two entries overlap at a position the longer one matches ("not working" over
  "working", 不太好 over 太好).
- ``entry_key`` is how a match finds its entry: two entries with one key are one entry.
- ``build_lexicon`` is pure and memoised: the same lists give the same ``Lexicon``.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from typing import Literal

from souls.mind.topics import has_cjk, normalise
from souls.text.tokenize import tokens

__all__ = ["Lexicon", "Valence", "build_lexicon", "entry_key"]

Valence = Literal["positive", "negative"]

# A Latin letter, digit or apostrophe: what may not touch an English entry for it to be a
# whole word (the tokenizer keeps apostrophes inside words too: "x'failed" is one word).
_WORD_EDGE = "a-z0-9\u00c0-\u024f'"
_WORDS = re.compile("[a-z0-9\u00c0-\u024f]+")


def entry_key(text: str) -> str:
    """A normalised entry or match, apostrophes dropped: how hits find their entry."""
    return " ".join(normalise(text).replace("'", "").split())


class Lexicon:
    """Negative and positive entries compiled: ``regex`` finds every entry in normalised
    text (``souls.mind.topics.normalise``) and ``valence`` maps a match's ``entry_key`` to its
    valence."""

    def __init__(self, negative: Sequence[str], positive: Sequence[str]) -> None:
        self.valence: dict[str, Valence] = {}
        patterns: dict[str, str] = {}
        lexicons: tuple[tuple[Sequence[str], Valence], ...] = (
            (negative, "negative"),
            (positive, "positive"),
        )
        for words, valence in lexicons:
            for word in words:
                self.valence[entry_key(word)] = valence
                patterns[entry_key(word)] = _pattern(normalise(word))
        # Longest first, so that at any position the longest entry wins ("not working"
        # over "working", 不太好 over 太好); ties sorted for determinism.
        entries = sorted(self.valence, key=lambda w: (-len(w), w))
        # No entries, no regex: an empty pattern would match everywhere. The whole-word
        # guards wrap the English alternation once rather than every entry: the same
        # matches, several times faster.
        english = [patterns[w] for w in entries if not has_cjk(w)]
        chinese = [patterns[w] for w in entries if has_cjk(w)]
        parts = []
        if english:
            parts.append(rf"(?<![{_WORD_EDGE}])(?:{'|'.join(english)})(?![{_WORD_EDGE}])")
        parts += chinese
        self.regex = re.compile("|".join(parts)) if parts else None
        # Every term of every entry: none of them is a topic.
        self.terms = frozenset(t for word in entries for t in tokens(word))
        # A cheap test first, since most texts carry no valence and the full regex
        # tries every entry at every position: the first word of each English entry
        # (apostrophes dropped), and each CJK entry as a substring.
        self.first_words = frozenset(w.split()[0] for w in entries if not has_cjk(w))
        # The same, as the shared tokenizer would emit them: checked against a text's
        # tokens when the caller has them (the soul always does).
        self.first_tokens = frozenset(t for w in self.first_words for t in tokens(w))
        cjk = [re.escape(w) for w in entries if has_cjk(w)]
        self.cjk = re.compile("|".join(cjk)) if cjk else None

    def may_match(self, low: str, words: Sequence[str] | None) -> bool:
        """False when ``regex`` certainly finds nothing in ``low`` (normalised text whose
        tokens are ``words`` when given); cheap."""
        if not low.isascii() and self.cjk is not None and self.cjk.search(low):
            return True
        if words is not None:
            return not self.first_tokens.isdisjoint(words)
        return not self.first_words.isdisjoint(_WORDS.findall(low.replace("'", "")))


def _pattern(word: str) -> str:
    if has_cjk(word):
        return re.escape(word)
    # Any whitespace between words; an entry's apostrophe may be left out. (Whole-word
    # guards are added around all English entries at once.)
    return r"\s+".join(re.escape(part).replace("'", "'?") for part in word.split())


@functools.lru_cache(maxsize=8)
def build_lexicon(negative: tuple[str, ...], positive: tuple[str, ...]) -> Lexicon:
    """The ``Lexicon`` of these entries (memoised: a few configs are ever in use)."""
    return Lexicon(negative, positive)
