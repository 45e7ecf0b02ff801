"""Exact BM25 on PostgreSQL: FTS5's ``bm25()``, computed over a term-array index.

The SQLite store ranks with FTS5's ``bm25()`` (:mod:`souls.store.store`): k1 = 1.2,
b = 0.75; idf = ln((N - n + 0.5) / (n + 0.5)), floored at 1e-6, where N is the index's
row count and n the rows matching the term (in the memory's own text when the search
is restricted to it, in any column otherwise); a row's length and the average length
count every column; a term's frequency in a row adds 1 for each instance in the own
text and the context's weight for each in the neighbouring turns. This module does the
same sum, in the same order, in double precision, so that both stores rank the same
rows the same way (bench/pg_overlap.py measures it): the idf is worked out here from
``term_stats`` with :func:`math.log` (C's ``log``, as FTS5's), the per-row part in SQL.

What the store is asked to match is what :func:`souls.text.tokenize.fts_match` makes:
quoted terms joined by ``OR``. :func:`match_terms` reads exactly that back and refuses
anything else (FTS5 syntax the PostgreSQL store does not speak).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from souls.store.bm25 import K1, B

__all__ = ["Query", "match_terms", "plan"]

_IDF_FLOOR = 1e-6
_TERM = re.compile(r'"((?:[^"]|"")*)"')


def match_terms(match: str) -> list[str]:
    """The terms of an :func:`~souls.text.tokenize.fts_match` expression, in order
    (``"a" OR "b""c"`` → ``a``, ``b"c``). ValueError for anything else."""
    terms: list[str] = []
    position = 0
    text = match.strip()
    while True:
        found = _TERM.match(text, position)
        if found is None:
            raise ValueError(f"not a search expression of quoted terms joined by OR: {match!r}")
        terms.append(found.group(1).replace('""', '"'))
        position = found.end()
        if position == len(text):
            return terms
        if not text.startswith(" OR ", position):
            raise ValueError(f"not a search expression of quoted terms joined by OR: {match!r}")
        position += len(" OR ")


@dataclass(frozen=True, slots=True)
class Query:
    """A search's terms, each with its idf, and what the rows' scores depend on."""

    terms: list[str]
    idfs: list[float]
    average: float  # tokens per row, every column
    weight: float  # of a context instance; 0.0 when the search is of the own text
    context: bool  # match and count the neighbouring turns too


def plan(
    terms: Sequence[str],
    df: Mapping[str, tuple[int, int]],
    documents: int,
    tokens: int,
    context_weight: float | None,
) -> Query:
    """The :class:`Query` of ``terms`` given their (own-text rows, any-column rows)
    document frequencies ``df`` and the index's row and token counts."""
    column = 1 if context_weight is not None else 0
    rows = float(documents)
    idfs: list[float] = []
    for term in terms:
        hits = df.get(term, (0, 0))[column]
        idf = math.log((rows - hits + 0.5) / (hits + 0.5))
        idfs.append(idf if idf > 0.0 else _IDF_FLOOR)
    average = float(tokens) / rows if documents else 0.0
    weight = context_weight if context_weight is not None else 0.0
    return Query(list(terms), idfs, average, weight, context_weight is not None)


def score_sql(query: Query, first: int) -> tuple[str, list[object]]:
    """The SQL expression of a ``memory_index AS i`` row's BM25 for ``query`` and its
    parameters, numbered from ``$first``."""
    t, idf, avg, w, k1, k1p, b, omb = (f"${first + n}" for n in range(8))
    near = "cardinality(array_positions(i.context, q.term))" if query.context else "0"
    sql = f"""(SELECT coalesce(sum(q.idf * ((f.tf * {k1p}::float8)
                      / (f.tf + {k1}::float8 * ({omb}::float8 + {b}::float8 * i.length
                                               / {avg}::float8))) ORDER BY q.n), 0.0)
              FROM unnest({t}::text[], {idf}::float8[]) WITH ORDINALITY AS q (term, idf, n),
              LATERAL (SELECT soupd_tf(cardinality(array_positions(i.terms, q.term)),
                                       {near}, {w}::float8) AS tf) AS f)"""
    return sql, [query.terms, query.idfs, query.average, query.weight, K1, K1 + 1.0, B, 1 - B]


def matches_sql(query: Query, terms: str) -> str:
    """The condition that a ``memory_index AS i`` row matches any of the terms in the
    parameter ``terms`` (own text, or any column when ``query`` counts the context)."""
    if query.context:
        return f"(i.terms && {terms}::text[] OR i.context && {terms}::text[])"
    return f"i.terms && {terms}::text[]"
