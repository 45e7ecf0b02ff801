"""The one tokenizer of soupd: recall (FTS5 BM25), surprise and everything else.

Index and query MUST both go through this module. A memory is indexed as
``fts_document(text)`` in an FTS5 table declared with ``tokenize='ascii'`` and searched
with ``fts_match(query_terms(q))``; any other path to either side silently breaks recall.

Invariants a caller may rely on:

- ``tokens`` is deterministic, keeps order and duplicates; text is NFKC-normalised and
  lowercased first (so full-width Latin letters and decomposed accents match their usual form).
- Words of non-CJK scripts (maximal runs of Unicode letters and digits, so numbers are
  tokens and ``_`` splits words) are Snowball-stemmed with the English algorithm; the
  stemmer leaves words of other scripts (Cyrillic, Greek...) essentially as they are.
- Apostrophes (``'`` or U+2019) inside a word are joined, after a possessive ``'s`` is
  dropped: ``John's`` → ``john``, ``don't`` → ``dont``, ``O'Brien`` → ``obrien``.
- A CJK run (Han, Hiragana, Katakana, Hangul; CJK punctuation ends a run) yields, in
  this order, its unigrams and then its bigrams: ``数据库`` → 数 据 库 数据 据库.
  Runs and words appear in text order, so ``deploy到prod`` → deploy 到 prod.
- Every token is made of ASCII letters and digits or non-ASCII characters only, so the
  FTS5 ``ascii`` tokenizer reads a space-joined document back as exactly these tokens.
- ``relatives(stem)`` names the stems that may be the same word in another form, which
  Snowball leaves apart (``failur``/``fail``, ``allergi``/``allerg``, ``painter``/``paint``):
  the index keeps one stem per word, recall weighs a relative lower than the word itself.
"""

from __future__ import annotations

import functools
import re
import threading
import unicodedata
from collections.abc import Sequence

import Stemmer

__all__ = ["fts_document", "fts_match", "query_terms", "relatives", "tokens"]

# Han (with its iteration marks and radicals), kana (not the punctuation U+30A0, U+30FB),
# Bopomofo, Hangul (jamo and syllables), half-width kana and Hangul, supplementary Han.
_CJK = (
    "\u1100-\u11ff\u2e80-\u2fdf\u3005-\u3007\u3021-\u3029\u3031-\u3035\u303b\u303c"
    "\u3041-\u309f\u30a1-\u30fa\u30fc-\u30ff\u3105-\u31bf\u31f0-\u31ff\u3400-\u4dbf"
    "\u4e00-\u9fff\ua960-\ua97f\uac00-\ud7ff\uf900-\ufaff\uff66-\uffdc"
    "\U00020000-\U0003ffff"
)
_LETTER = rf"[^\W_{_CJK}]"
# Group 1: a CJK run; group 2: a word, possibly with apostrophes inside.
_RUN = re.compile(rf"([{_CJK}]+)|({_LETTER}+(?:'{_LETTER}+)*)")
_ASCII_WORD = re.compile(r"[a-z0-9]+(?:'[a-z0-9]+)*")

# Compared after stemming (see _stopwords). Deliberately small: BM25 already discounts
# frequent terms; this only keeps "how do I ..." queries from matching everything.
_STOPWORDS = """
a an the and or but if then than so of to in on at by for with from into about as is
are was were be been being am do does did done have has had having i me my you your
he him his she her it its we our they them their this that these those what which who
whom whose how when where why there here will would can could should shall may might
must not no nor
""".split()

# PyStemmer instances must not be used by two threads at once: one per thread, made on
# first use. They, the stem memo and the cached stemmed stopwords are the module's only
# state.
_per_thread = threading.local()

# Word -> Snowball stem, shared by every thread (each dict operation is atomic under the
# GIL, and _stems never reads it twice for one word). Stemming is most of a tokenizer
# call and texts repeat a small vocabulary, so a memo hit is 5x cheaper than the stemmer
# (and than PyStemmer's own cache, switched off below). Emptied when it reaches
# _MEMO_WORDS entries: bounded memory, and the frequent words come straight back.
_MEMO: dict[str, str] = {}
_MEMO_WORDS = 50_000


def _stemmer() -> Stemmer.Stemmer:
    try:
        stemmer: Stemmer.Stemmer = _per_thread.stemmer
    except AttributeError:
        stemmer = _per_thread.stemmer = Stemmer.Stemmer("english")
        stemmer.maxCacheSize = 0  # _MEMO caches instead
    return stemmer


def _stems(words: list[str]) -> list[str]:
    """The stems of ``words``, in order: exactly what the stemmer says, through _MEMO."""
    known = _MEMO.get
    # ``or``: a memoised stem is never "" (and if one were, _stem would only redo it).
    return [known(word) or _stem(word) for word in words]


def _stem(word: str) -> str:
    """The stem of ``word``, memoised. Numbers are their own stems (the stemmer has no
    rule for a word without a letter), neither stemmed nor memoised: ids and counts
    would only crowd the memo."""
    if word.isdigit():
        return word
    stem: str = _stemmer().stemWord(word)
    if len(_MEMO) >= _MEMO_WORDS:
        _MEMO.clear()
    _MEMO[word] = stem
    return stem


@functools.cache
def _stopwords() -> frozenset[str]:
    return frozenset(_stemmer().stemWords(_STOPWORDS))


def _join_apostrophes(words: list[str]) -> list[str]:
    return [(w[:-2] if w.endswith("'s") else w).replace("'", "") if "'" in w else w for w in words]


def tokens(text: str) -> list[str]:
    """The stemmed, lowercase tokens of ``text`` in order, duplicates kept."""
    if not text.isascii():
        text = unicodedata.normalize("NFKC", text)
    low = text.lower()
    if "\u2019" in low:
        low = low.replace("\u2019", "'")
    if low.isascii():  # the common case: no CJK, one regex pass
        words: list[str] = _ASCII_WORD.findall(low)
        if "'" in low:
            words = _join_apostrophes(words)
        return _stems(words) if words else []
    out: list[str] = []
    slots: list[int] = []  # where in ``out`` each word goes, once stemmed
    words = []
    for run, word in _RUN.findall(low):
        if word:
            slots.append(len(out))
            out.append(word)
            words.append(word)
        else:
            out.extend(run)
            out.extend([run[i : i + 2] for i in range(len(run) - 1)])
    if words:
        if "'" in low:
            words = _join_apostrophes(words)
        for slot, stem in zip(slots, _stems(words), strict=True):
            out[slot] = stem
    return out


def query_terms(text: str, words: Sequence[str] | None = None) -> list[str]:
    """Distinct tokens of ``text`` in first-seen order, stopwords removed.

    When every token is a stopword the distinct tokens are returned instead, so a query
    such as "what is this" still searches for something. ``words``: ``tokens(text)``
    when the caller has it already.
    """
    distinct = list(dict.fromkeys(tokens(text) if words is None else words))
    stop = _stopwords()
    return [t for t in distinct if t not in stop] or distinct


def fts_document(text: str) -> str:
    """What to store in the FTS5 ``ascii`` column for ``text``."""
    return " ".join(tokens(text))


def fts_match(terms: Sequence[str]) -> str:
    """An FTS5 MATCH expression for any of ``terms``; ``""`` for none (skip the query)."""
    return " OR ".join(['"' + t.replace('"', '""') + '"' for t in terms])


# What Snowball leaves at the end of one form of a word and not of another: -y/-ies (i)
# against -ic, -ure (ur), agent nouns (-er, -r, -or, -ist, -ian), -ion, -al, -age, -ship.
# A morphological rule, not a word list: ``fail`` and ``failur``, ``allerg`` and
# ``allergi``, ``profess`` and ``profession`` are one word to a reader. It also pairs a
# few words that are not (``part``/``parti``, ``care``/``career``), which is why a
# relative only counts for part of a word.
_RESIDUES = ("i", "e", "r", "er", "or", "ur", "ic", "al", "ag", "ion", "ian", "ist", "ship")
# A base shorter than this is too short to say two stems are one word (run/runner).
_MIN_BASE = 4


@functools.lru_cache(maxsize=8192)
def relatives(stem: str) -> tuple[str, ...]:
    """Stems that may be ``stem`` in another form, in a fixed order, ``stem`` excluded:
    the same base (at least four letters, ASCII only) with another of Snowball's
    leftover endings, or none. Whether a soul holds any of them is for the caller to
    look up. Numbers, CJK and other scripts have none."""
    if len(stem) < _MIN_BASE or not stem.isascii() or not stem.isalpha():
        return ()
    bases = [stem] + [
        stem[: -len(end)]
        for end in _RESIDUES
        if stem.endswith(end) and len(stem) - len(end) >= _MIN_BASE
    ]
    found = dict.fromkeys(base + end for base in bases for end in ("", *_RESIDUES))
    found.pop(stem, None)
    return tuple(found)
