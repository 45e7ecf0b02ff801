"""The counts BM25 reads of a soul's index on PostgreSQL (``index_stats``: rows and
tokens; ``term_stats``: a term's own-text and any-column rows), kept by the soul's store
between queries: a recall reads them without two round trips of its own.

The soul's actor is the only writer of its rows, so its store knows every change: an
append's :class:`~souls.store.postgres.store._Delta` is applied to what is kept once it
committed; any other write that takes rows out of the index drops what is kept once it
committed. A read that overlapped an append (began before it ended, or ended while it
ran) keeps nothing, so what is kept is always the committed counts, each change
counted once."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager

import asyncpg

__all__ = ["TermCounts"]

# Terms kept at most (some 150 bytes each). A soul with no more holds all of its terms
# (read with the index's counts: then a query reads nothing); past it, the terms asked,
# read as asked.
_KEPT = 20_000


class TermCounts:
    """One soul's kept counts."""

    def __init__(self) -> None:
        self._index: tuple[int, int] | None = None
        self._terms: dict[str, tuple[int, int]] = {}
        self._complete = False  # every term of the soul is in _terms (absent: no row)
        self._generation = 0  # moves at every write's start and end, and every drop
        self._writes = 0  # appends under way

    async def read(
        self, db: asyncpg.Connection, soul: int, terms: Sequence[str]
    ) -> tuple[int, int, dict[str, tuple[int, int]]]:
        """The index's rows and tokens, and each of ``terms``' (own-text rows, rows);
        read from the database only where not kept."""
        generation = self._generation
        index, complete = self._index, self._complete
        found: dict[str, tuple[int, int]] = {}
        if index is None:
            row = await db.fetchrow(
                "SELECT documents, tokens FROM index_stats WHERE soul = $1", soul
            )
            index = (int(row[0]), int(row[1])) if row is not None else (0, 0)
            every = await db.fetch(
                "SELECT term, doc_rows, rows FROM term_stats WHERE soul = $1 LIMIT $2",
                soul,
                _KEPT + 1,
            )
            complete = len(every) <= _KEPT
            if complete:
                found = {term: (int(doc_rows), int(rows)) for term, doc_rows, rows in every}
        missing = [] if complete else [t for t in dict.fromkeys(terms) if t not in self._terms]
        if missing:
            found = dict.fromkeys(missing, (0, 0))
            for term, doc_rows, rows in await db.fetch(
                "SELECT term, doc_rows, rows FROM term_stats"
                " WHERE soul = $1 AND term = ANY($2::text[])",
                soul,
                missing,
            ):
                found[term] = (int(doc_rows), int(rows))
        kept = found if complete and self._index is None else self._terms
        counts = {term: found.get(term) or kept.get(term, (0, 0)) for term in terms}
        if generation == self._generation and not self._writes:  # no write overlapped
            if self._index is None:
                self._index, self._complete, self._terms = index, complete, found
            elif found:
                if len(self._terms) + len(found) > _KEPT:
                    self._terms.clear()
                self._terms.update(found)
        return index[0], index[1], counts

    @contextmanager
    def writing(self) -> Iterator[None]:
        """Around an append, from before its transaction to after :meth:`applied`:
        the reads that overlap it keep nothing."""
        self._writes += 1
        self._generation += 1
        try:
            yield
        finally:
            self._writes -= 1
            self._generation += 1

    def applied(
        self, documents: int, tokens: int, doc_rows: Mapping[str, int], rows: Mapping[str, int]
    ) -> None:
        """A committed append changed the counts by these amounts (within
        :meth:`writing`)."""
        if self._index is not None:
            self._index = (self._index[0] + documents, self._index[1] + tokens)
        kept, complete = self._terms, self._complete
        for term in doc_rows.keys() | rows.keys():
            if term in kept or complete:
                own, every = kept.get(term, (0, 0))
                kept[term] = (own + doc_rows.get(term, 0), every + rows.get(term, 0))
        if complete and len(kept) > _KEPT:  # grown past: the terms asked from now on
            self._complete = False
            kept.clear()

    def drop(self) -> None:
        """Rows left the index by a write that did not count them: read again."""
        self._generation += 1
        self._index = None
        self._complete = False
        self._terms = {}
