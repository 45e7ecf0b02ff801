"""Exact BM25 on PostgreSQL: FTS5's ``bm25()``, computed over an inverted index.

The SQLite store ranks with FTS5's ``bm25()`` (:mod:`souls.store.store`): k1 = 1.2,
b = 0.75; idf = ln((N - n + 0.5) / (n + 0.5)), floored at 1e-6, where N is the index's
row count and n the rows matching the term (in the memory's own text when the search
is restricted to it, in any column otherwise); a row's length and the average length
count every column; a term's frequency in a row adds 1 for each instance in the own
text and the context's weight for each in the neighbouring turns. This module does the
same sum, in the same order, in double precision, so that both stores rank the same
rows the same way (bench/pg_overlap.py measures it): the idf is worked out here from
``term_stats`` with :func:`math.log` (C's ``log``, as FTS5's), the per-row part in SQL
over the ``postings`` of the query's terms.

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

__all__ = ["Query", "match_terms", "own_sql", "plan", "ranked_sql"]

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


def ranked_sql(
    query: Query, first: int, where: Sequence[str], descending_ids: bool
) -> tuple[str, list[object]]:
    """A SELECT of (memory id, BM25) of the soul ``$1``'s rows matching ``query``, best
    first, ties broken by id (``descending_ids``: the later stored first), as many as
    the parameter after the returned ones says; the query's parameters are numbered
    from ``$first``. ``where``: further conditions on ``p.memory_id``.

    Only the postings of the query's terms are read; a row's score adds its terms'
    shares in the query's order, from 0.0 (one column a term, ``FILTER (WHERE q.n =
    ...)``), each term it lacks adding 0.0, as FTS5 does: the same sum to the last bit.
    A term's frequency: its own occurrences, plus the context weight added once per
    occurrence in the context (soupd_tf; no loop for one or none). Without the
    context, a row matches by its own text only (``own > 0``). ``query`` has a term at
    least (:func:`match_terms` reads one or refuses)."""
    assert query.terms, "a search of no terms"
    terms, idfs, avg, k1, k1p, b, omb, w = (f"${first + n}" for n in range(8))
    params: list[object] = [query.terms, query.idfs, query.average, K1, K1 + 1.0, B, 1 - B]
    if query.context:
        params.append(query.weight)
        tf = (
            f"CASE WHEN near < 2 THEN own + near * {w}::float8"
            f" ELSE soupd_tf(own, near, {w}::float8) END"
        )
        matched = ""
    else:
        tf = "own::float8"
        matched = " AND own > 0"
    conditions = f"WHERE {' AND '.join(where)}" if where else ""
    order = "DESC" if descending_ids else "ASC"
    share = (
        f"q.idf * ((p.tf * {k1p}::float8) / (p.tf + {k1}::float8 * ({omb}::float8"
        f" + {b}::float8 * p.length / {avg}::float8)))"
    )
    # Each term's share in its own column, added up in the query's order (no ordered
    # aggregate: that sorts each row's few shares apart, a third of the statement).
    score = " + ".join(
        ["0.0::float8"]
        + [
            f"coalesce(max({share}) FILTER (WHERE q.n = {n}), 0.0::float8)"
            for n in range(1, len(query.terms) + 1)
        ]
    )
    sql = f"""
        SELECT p.memory_id, {score} AS score
        FROM unnest({terms}::text[], {idfs}::float8[]) WITH ORDINALITY AS q (term, idf, n)
        CROSS JOIN LATERAL (SELECT memory_id, length, {tf} AS tf FROM postings
                            WHERE soul = $1 AND term = q.term{matched} OFFSET 0) AS p
        {conditions}
        GROUP BY p.memory_id
        ORDER BY score DESC, p.memory_id {order}
        LIMIT ${first + len(params)}
    """
    return sql, params


def own_sql(param: int) -> str:
    """The condition that ``p.memory_id``'s own text holds any of the terms in the
    parameter ``$param``."""
    return (
        "p.memory_id IN (SELECT memory_id FROM postings WHERE soul = $1"
        f" AND term = ANY(${param}::text[]) AND own > 0)"
    )
