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


def score_sql(query: Query, first: int) -> tuple[str, str, list[object]]:
    """SQL for a ``memory_index AS i`` row's BM25 for ``query``: a LATERAL subquery
    ``f`` of the terms' frequencies in the row (each worked out once), the score
    expression over it, and their parameters, numbered from ``$first``. The terms are
    summed one after another from 0.0, as FTS5 does (a plain expression, no aggregate)."""
    avg, k1, k1p, b, omb, w = (f"${first + n}::float8" for n in range(6))
    params: list[object] = [query.average, K1, K1 + 1.0, B, 1 - B]
    if query.context:
        params.append(query.weight)
    norm = f"({k1} * ({omb} + {b} * i.length / {avg}))"
    frequencies: list[str] = []
    counts: list[tuple[str, str]] = []
    parts = []
    for n, (term, idf) in enumerate(zip(query.terms, query.idfs, strict=True), start=1):
        t, weight = f"${first + len(params)}::text", f"${first + len(params) + 1}::float8"
        params += [term, idf]
        own = f"coalesce((i.own_counts ->> {t})::integer, 0)"
        if query.context:
            near = f"coalesce((i.near_counts ->> {t})::integer, 0)"
            counts.append((own, near))
            frequencies.append(
                f"CASE WHEN k.near[{n}] < 2 THEN k.own[{n}] + k.near[{n}] * {w}"
                f" ELSE soupd_tf(k.own[{n}], k.near[{n}], {w}) END"
            )
        else:
            frequencies.append(f"{own}::float8")
        parts.append(f"{weight} * ((f.tf[{n}] * {k1p}) / (f.tf[{n}] + {norm}))")
    # OFFSET 0 keeps each LATERAL a subquery of its own: pulled up into the outer query,
    # its array would be built again at every reference (terms² lookups a row).
    lateral = f"LATERAL (SELECT ARRAY[{', '.join(frequencies)}]::float8[] AS tf OFFSET 0) AS f"
    if counts:
        # The context's counts first, each looked up once; one instance or none needs no
        # loop for FTS5's sum (own + weight is it), soupd_tf does the rest.
        own_counts = ", ".join(own for own, _ in counts)
        near_counts = ", ".join(near for _, near in counts)
        lateral = (
            f"LATERAL (SELECT ARRAY[{own_counts}] AS own, ARRAY[{near_counts}] AS near"
            " OFFSET 0) AS k,"
            f" {lateral}"
        )
    return lateral, f"(0.0::float8 + {' + '.join(parts)})", params


def matches_sql(query: Query, terms: str) -> str:
    """The condition that a ``memory_index AS i`` row matches any of the terms in the
    parameter ``terms`` (own text, or any column when ``query`` counts the context)."""
    if query.context:
        return f"(i.terms && {terms}::text[] OR i.context && {terms}::text[])"
    return f"i.terms && {terms}::text[]"
