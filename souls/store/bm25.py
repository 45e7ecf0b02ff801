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

__all__ = ["TermScore", "TermStats"]

K1 = 1.2
B = 0.75
_IDF_FLOOR = 1e-6


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

    def df(self, term: str) -> int:
        return self._df.get(term, 0)

    def add(self, documents: Iterable[Sequence[str]]) -> None:
        """Account for newly indexed rows (each a token list, every column)."""
        for tokens in documents:
            self._df.update(set(tokens))
            self.documents += 1
            self.tokens += len(tokens)

    def replace(self, old: Sequence[str], new: Sequence[str]) -> None:
        """Account for a row rewritten from ``old`` tokens to ``new`` (every column)."""
        self._df.subtract(set(old))
        self._df.update(set(new))
        self.tokens += len(new) - len(old)

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
    ) -> float:
        """BM25 of a row for the query ``terms`` (distinct): ``tokens`` are the
        memory's own, ``context`` its neighbours', counted ``weight`` times."""
        length = len(tokens) + len(context)
        if not length or not self.documents or not self.tokens:
            return 0.0
        norm = K1 * (1 - B + B * length / (self.tokens / self.documents))
        total = 0.0
        for term in terms:
            tf = tokens.count(term) + (weight * context.count(term) if context else 0.0)
            if tf:
                total += self.idf(term) * tf * (K1 + 1) / (tf + norm)
        return total

    def scorer(self, terms: Sequence[str], weight: float) -> Callable[[str, str, str], float]:
        """:meth:`score` of a row given as its indexed documents (own text, prior and
        later turns: tokens joined by spaces), for many rows: what does not depend on
        the row is worked out once."""
        scored = [(term, self.idf(term)) for term in terms]
        average = self.tokens / self.documents if self.documents else 0.0

        def score(doc: str, prior: str, later: str) -> float:
            tokens = doc.split()
            context = f"{prior} {later}".split() if prior or later else []
            length = len(tokens) + len(context)
            if not length or not average:
                return 0.0
            norm = K1 * (1 - B + B * length / average)
            total = 0.0
            for term, idf in scored:
                tf = tokens.count(term) + (weight * context.count(term) if context else 0.0)
                if tf:
                    total += idf * tf * (K1 + 1) / (tf + norm)
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

    def ideal(self, terms: Sequence[str]) -> float:
        """The most a row can hold of a query of ``terms`` (distinct): the BM25, with
        :meth:`weight` for idf, of a row made of exactly those terms, each once. 0 when
        the query holds no evidence at all (every term in every row)."""
        if not terms or not self.documents or not self.tokens:
            return 0.0
        norm = K1 * (1 - B + B * len(terms) / (self.tokens / self.documents))
        return sum(self.weight(term) for term in terms) * (K1 + 1) / (1 + norm)

    def resonance(
        self,
        terms: Sequence[str],
        tokens: Sequence[str],
        context: Sequence[str] = (),
        context_weight: float = 0.0,
    ) -> float:
        """R of a row for the query ``terms`` (distinct, all of them, known or not): the
        share of the query it holds, its BM25 with :meth:`weight` for idf over
        :meth:`ideal`, in [0, 1]. 0 when the query holds no evidence."""
        ideal = self.ideal(terms)
        length = len(tokens) + len(context)
        if not ideal > 0 or not length:
            return 0.0
        norm = K1 * (1 - B + B * length / (self.tokens / self.documents))
        held = 0.0
        for term in terms:
            tf = tokens.count(term) + (context_weight * context.count(term) if context else 0.0)
            if tf:
                held += self.weight(term) * tf * (K1 + 1) / (tf + norm)
        return min(held / ideal, 1.0)

    def bound(self, terms: Sequence[str]) -> float:
        """More than ``terms`` can add to any row's :meth:`score` (each term's share
        stays below its idf times K1 + 1)."""
        return sum(self.idf(term) for term in terms) * (K1 + 1) * (1 + 1e-9) + 1e-12

    def explain(
        self, terms: Sequence[str], tokens: Sequence[str], context: Sequence[str], weight: float
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
                score = self.idf(term) * tf * (K1 + 1) / (tf + norm)
                shares.append(TermScore(term, score, own, near))
        return sorted(shares, key=lambda share: (-share.score, share.term))
