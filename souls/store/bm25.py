"""Exact BM25 over the shared tokenizer, with the statistics of the visible index.

SQLite FTS5 finds candidates; this module scores them, with the same formula FTS5's
``bm25()`` uses (k1 = 1.2, b = 0.75, idf = ln((N - n + 0.5) / (n + 0.5)) floored at
1e-6), so a candidate's score does not depend on which query fetched it.

A row of the index is a memory's own tokens and, in lower-weighted columns, the tokens
of its neighbouring turns (its *context*). As FTS5 does with column weights, a term's
frequency in a row is its count in the text plus ``weight`` times its count in the
context; the row's length, the average length and the document frequencies count every
column alike. That lets
recall fetch candidates with only the *discriminating* terms of a query — scoring
every document that contains a very common word is what makes plain OR queries
slow — and still rank them by the whole query.

:class:`TermStats` is derived state: rebuilt from the FTS5 vocabulary, kept up to
date as documents are indexed, dropped whenever the soul restarts or hibernates.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from souls.text.tokenize import relatives

__all__ = ["Held", "Shares", "TermScore", "TermStats", "split"]

K1 = 1.2
B = 0.75
_IDF_FLOOR = 1e-6
# Query words whose held forms TermStats keeps between two changes of its counts.
_FORMS_KEPT = 4096


def split(doc: str, prior: str = "", later: str = "") -> tuple[list[str], list[str]]:
    """A row's tokens from its indexed documents (tokens joined by spaces): its own
    (``doc``) and its neighbouring turns' (``prior`` and ``later``), as the scorer of
    :meth:`TermStats.scorer` and :meth:`Shares.of` take them, so that each row recall
    looks at is split once."""
    return doc.split(), f"{prior} {later}".split() if prior or later else []


@dataclass(frozen=True, slots=True)
class TermScore:
    """One query term's share of a row's BM25 score."""

    term: str
    score: float
    text: int  # occurrences in the memory's own text
    context: int  # occurrences in its neighbouring turns


class TermStats:
    """Document frequency per term, document count and total length of an index."""

    def __init__(self, df: Mapping[str, int], documents: int, tokens: int) -> None:
        self._df: Counter[str] = Counter(df)
        self.documents = documents
        self.tokens = tokens
        # The other forms of a word (see :meth:`relatives`) that some row holds, by word:
        # dropped whenever a document frequency changes, and past _FORMS_KEPT words.
        self._forms: dict[str, tuple[str, ...]] = {}

    def df(self, term: str) -> int:
        return self._df.get(term, 0)

    def add(self, documents: Iterable[Sequence[str]]) -> None:
        """Account for newly indexed rows (each a token list, every column)."""
        for tokens in documents:
            self._df.update(set(tokens))
            self.documents += 1
            self.tokens += len(tokens)
        self._forms.clear()

    def replace(self, old: Sequence[str], new: Sequence[str]) -> None:
        """Account for a row rewritten from ``old`` tokens to ``new`` (every column)."""
        self._df.subtract(set(old))
        self._df.update(set(new))
        self.tokens += len(new) - len(old)
        self._forms.clear()

    def idf(self, term: str) -> float:
        n = self._df.get(term, 0)
        value = math.log((self.documents - n + 0.5) / (n + 0.5))
        return value if value > 0 else _IDF_FLOOR

    def discriminating(self, terms: Sequence[str], fraction: float, floor: int) -> list[str]:
        """The terms in at most ``fraction`` of the documents or ``floor`` documents,
        whichever is more; the rarest term when there is none."""
        limit = max(fraction * self.documents, floor)
        rare = [t for t in terms if self.df(t) <= limit]
        return rare or [min(terms, key=self.df)]

    def score(
        self,
        terms: Sequence[str],
        tokens: Sequence[str],
        context: Sequence[str] = (),
        weight: float = 0.0,
        scale: Mapping[str, float] | None = None,
    ) -> float:
        """BM25 of a row for the query ``terms`` (distinct): ``tokens`` are the
        memory's own, ``context`` its neighbours', counted ``weight`` times. ``scale``:
        what a term counts for, when not fully (a word's relative, see :meth:`relatives`)."""
        length = len(tokens) + len(context)
        if not length or not self.documents or not self.tokens:
            return 0.0
        norm = K1 * (1 - B + B * length / (self.tokens / self.documents))
        total = 0.0
        for term in terms:
            tf = tokens.count(term) + (weight * context.count(term) if context else 0.0)
            if tf:
                share = scale.get(term, 1.0) if scale else 1.0
                total += share * self.idf(term) * tf * (K1 + 1) / (tf + norm)
        return total

    def scorer(
        self, terms: Sequence[str], weight: float, scale: Mapping[str, float] | None = None
    ) -> Callable[[Sequence[str], Sequence[str]], float]:
        """:meth:`score` of a row given as its own tokens and its context's (see
        :func:`split`), for many rows: what does not depend on the row is worked out
        once."""
        scored = [
            (term, self.idf(term) * (scale.get(term, 1.0) if scale else 1.0)) for term in terms
        ]
        average = self.tokens / self.documents if self.documents else 0.0
        saturation = K1 + 1
        wanted = frozenset(terms)

        def score(tokens: Sequence[str], context: Sequence[str]) -> float:
            length = len(tokens) + len(context)
            if not length or not average:
                return 0.0
            norm = K1 * (1 - B + B * length / average)
            total = 0.0
            if context:
                for term, idf in scored:
                    tf = tokens.count(term) + weight * context.count(term)
                    if tf:
                        total += idf * tf * saturation / (tf + norm)
            else:
                # Only the terms the row holds are counted (a row holds few of them),
                # in the query's order: the same sum. (Its own tokens are few to hash.)
                present = wanted.intersection(tokens)
                for term, idf in scored:
                    if term in present:
                        own = tokens.count(term)
                        total += idf * own * saturation / (own + norm)
            return total

        return score

    def weight(self, term: str) -> float:
        """What ``term`` weighs as evidence that a row holds a query (resonance R,
        DESIGN §3.5): ln((N + 0.5) / (n + 0.5)), the idf of a term against all rows. A
        term in every row weighs nothing (holding it tells no row from another); one in
        no row weighs most. Unlike BM25's idf it stays positive for a term in most rows,
        so a small soul still tells its rows apart."""
        n = self._df.get(term, 0)
        return max(math.log((self.documents + 0.5) / (n + 0.5)), 0.0)

    def evidence(self, term: str) -> float:
        """What ``term`` weighs in a recalled item's relevance: ln((N + 1) / (n + 0.5)),
        :meth:`weight` but above 0 even for a term in every row — "deploy" still says
        that a memory is about deploys when every memory is — and a share of the
        whole query's evidence that is next to nothing when other words weigh more."""
        n = self._df.get(term, 0)
        return math.log((self.documents + 1) / (n + 0.5))

    def ideal(self, terms: Sequence[str], *, positive: bool = False) -> float:
        """The most a row can hold of a query of ``terms`` (distinct): the BM25, with
        :meth:`weight` for idf (``positive``: :meth:`evidence`), of a row made of
        exactly those terms, each once. 0 when the query holds no evidence at all
        (every term in every row, by :meth:`weight`)."""
        if not terms or not self.documents or not self.tokens:
            return 0.0
        weigh = self.evidence if positive else self.weight
        norm = K1 * (1 - B + B * len(terms) / (self.tokens / self.documents))
        return sum(weigh(term) for term in terms) * (K1 + 1) / (1 + norm)

    def resonance(
        self,
        terms: Sequence[str],
        tokens: Sequence[str],
        context: Sequence[str] = (),
        context_weight: float = 0.0,
        related: Mapping[str, str] | None = None,
        related_share: float = 0.0,
        *,
        positive: bool = False,
    ) -> float:
        """R of a row for the query ``terms`` (distinct, all of them, known or not): the
        share of the query it holds, its BM25 with :meth:`weight` for idf over
        :meth:`ideal`, in [0, 1]. 0 when the query holds no evidence.

        ``related``: other forms of the query's words (see :meth:`relatives`), each of
        which counts ``related_share`` of the word it stands for, never more. With
        ``positive``, evidence is :meth:`evidence`: a recalled item's lexical relevance."""
        ideal = self.ideal(terms, positive=positive)
        length = len(tokens) + len(context)
        if not ideal > 0 or not length:
            return 0.0
        weigh = self.evidence if positive else self.weight
        norm = K1 * (1 - B + B * length / (self.tokens / self.documents))
        held = 0.0
        for term in terms:
            tf = tokens.count(term) + (context_weight * context.count(term) if context else 0.0)
            if tf:
                held += weigh(term) * tf * (K1 + 1) / (tf + norm)
        for other, word in (related or {}).items():
            tf = tokens.count(other) + (context_weight * context.count(other) if context else 0.0)
            if tf:
                most = min(weigh(other), weigh(word))
                held += related_share * most * tf * (K1 + 1) / (tf + norm)
        return min(held / ideal, 1.0)

    def bound(self, terms: Sequence[str]) -> float:
        """More than ``terms`` can add to any row's :meth:`score` (each term's share
        stays below its idf times K1 + 1)."""
        return sum(self.idf(term) for term in terms) * (K1 + 1) * (1 + 1e-9) + 1e-12

    def relatives(self, terms: Sequence[str], words: Sequence[str]) -> dict[str, str]:
        """Other forms of ``words`` (query words, known or not) that some row holds and
        ``terms`` do not already name, each with the word it stands for (the first
        that has it): ``failur`` → ``fail``, ``allergi`` → ``allerg``."""
        named = set(terms) | set(words)
        found: dict[str, str] = {}
        for word in words:
            for other in self._held_forms(word):
                if other not in named and other not in found:
                    found[other] = word
        return found

    def _held_forms(self, word: str) -> tuple[str, ...]:
        """The other forms of ``word`` that some row holds, in :func:`relatives`' order."""
        forms = self._forms.get(word)
        if forms is None:
            if len(self._forms) >= _FORMS_KEPT:  # queries of ever new words: bounded
                self._forms.clear()
            df = self._df
            forms = self._forms[word] = tuple(o for o in relatives(word) if df.get(o, 0) > 0)
        return forms

    def explain(
        self,
        terms: Sequence[str],
        tokens: Sequence[str],
        context: Sequence[str],
        weight: float,
        scale: Mapping[str, float] | None = None,
    ) -> list[TermScore]:
        """Each matching term's share of :meth:`score` (same arguments), best first."""
        length = len(tokens) + len(context)
        if not length or not self.documents or not self.tokens:
            return []
        norm = K1 * (1 - B + B * length / (self.tokens / self.documents))
        shares = []
        for term in terms:
            own, near = tokens.count(term), context.count(term)
            tf = own + weight * near
            if tf:
                share = scale.get(term, 1.0) if scale else 1.0
                score = share * self.idf(term) * tf * (K1 + 1) / (tf + norm)
                shares.append(TermScore(term, score, own, near))
        return sorted(shares, key=lambda share: (-share.score, share.term))


@dataclass(frozen=True, slots=True)
class Held:
    """What one row holds of a query (see :class:`Shares`)."""

    # BM25 with :meth:`TermStats.evidence` for idf, over the ideal row's; above 1 for a
    # row holding the words more than once (capped only where it is shown).
    relevance: float
    resonance: float  # the same with :meth:`TermStats.weight`: R (DESIGN §3.5)
    coverage: float  # the share of the query's evidence held, whatever the row's length


class Shares:
    """What rows hold of one query, worked out for many rows: the query's ``terms``
    (distinct, all of them, known or not), other forms of its words (``related``:
    form → the word it stands for, each counting ``related_share`` of it, never more)
    and a row's neighbours counting ``context_weight``."""

    def __init__(
        self,
        stats: TermStats,
        terms: Sequence[str],
        related: Mapping[str, str],
        related_share: float,
        context_weight: float,
    ) -> None:
        self._terms = [(t, stats.evidence(t), stats.weight(t)) for t in terms]
        self._related = [
            (
                form,
                word,
                min(stats.evidence(form), stats.evidence(word)),
                min(stats.weight(form), stats.weight(word)),
            )
            for form, word in related.items()
        ]
        self._share = related_share
        self._context = context_weight
        self._wanted = frozenset(terms) | frozenset(related)
        self._average = stats.tokens / stats.documents if stats.documents else 0.0
        self._evidence = sum(e for _, e, _ in self._terms)
        if terms and stats.documents and stats.tokens:
            ideal = (K1 + 1) / (1 + K1 * (1 - B + B * len(terms) / self._average))
            self._ideal = self._evidence * ideal  # as TermStats.ideal, positive or not
            self._ideal_r = sum(w for _, _, w in self._terms) * ideal
        else:
            self._ideal = self._ideal_r = 0.0

    def of(self, own: Sequence[str], near: Sequence[str] = ()) -> Held:
        """What the row (its own tokens and its neighbours', see :func:`split`) holds
        of the query."""
        length = len(own) + len(near)
        if not length or not self._average:
            return Held(0.0, 0.0, 0.0)
        norm = K1 * (1 - B + B * length / self._average)
        context = self._context
        evidence = weight = covered = 0.0
        held: dict[str, float] = {}
        # Without neighbours, only the terms and forms the row holds are counted, in
        # order: the same sums. (Hashing a row's many neighbouring tokens costs more.)
        present = self._wanted if near else self._wanted.intersection(own)
        for term, e, w in self._terms:
            if term not in present:
                continue
            mine = own.count(term)
            tf = mine + context * near.count(term) if near else mine
            if tf:
                saturated = tf * (K1 + 1) / (tf + norm)
                evidence += e * saturated
                weight += w * saturated
                held[term] = 1.0 if mine else context
        for form, word, e, w in self._related:
            if form not in present:
                continue
            mine = own.count(form)
            tf = mine + context * near.count(form) if near else mine
            if tf:
                saturated = self._share * tf * (K1 + 1) / (tf + norm)
                evidence += e * saturated
                weight += w * saturated
                part = self._share * (1.0 if mine else context)
                held[word] = min(held.get(word, 0.0) + part, 1.0)
        if held:
            # Only the words held add to the sum (a word not held adds 0.0: the same sum).
            covered = sum(e * held[t] for t, e, _ in self._terms if t in held) / self._evidence
        return Held(
            evidence / self._ideal if self._ideal > 0 else 0.0,
            min(weight / self._ideal_r, 1.0) if self._ideal_r > 0 else 0.0,
            covered,
        )
