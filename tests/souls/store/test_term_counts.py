"""The BM25 counts a PostgreSQL store keeps between queries (souls/store/postgres/
term_counts.py), with every term of the soul kept or only those asked: an append's
counts follow it, a read that overlaps an append keeps nothing, so each change is
counted once. The database here is a stand-in whose answers the test releases when it chooses
(the real server's part is tests/souls/store/test_interface.py's)."""

from __future__ import annotations

from typing import Any, cast

import anyio
import asyncpg
import pytest

from souls.store.postgres import term_counts
from souls.store.postgres.term_counts import TermCounts


@pytest.fixture(autouse=True, params=[20_000, 0], ids=["every-term", "terms-asked"])
def kept(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> int:
    monkeypatch.setattr(term_counts, "_KEPT", request.param)
    return int(request.param)


class Table:
    """index_stats and term_stats of one soul; a read waits for ``release`` when held."""

    def __init__(self) -> None:
        self.index = (10, 40)
        self.terms = {"deploy": (4, 5)}
        self.held: anyio.Event | None = None
        self.reads = 0

    async def fetchrow(self, sql: str, *args: Any) -> tuple[int, int]:
        self.reads += 1
        found = self.index  # read at once, answered when released: as a server would
        if self.held is not None:
            await self.held.wait()
        return found

    async def fetch(self, sql: str, *args: Any) -> list[tuple[str, int, int]]:
        self.reads += 1
        if "LIMIT" in sql:  # every term of the soul, up to the limit
            return [(t, *counts) for t, counts in self.terms.items()][: args[1]]
        return [(t, *self.terms[t]) for t in args[1] if t in self.terms]

    def commit(self) -> None:
        """An append of two rows holding "deploy" (one in its own text), one of them
        the first to hold "lyon", committed."""
        self.index = (12, 50)
        self.terms["deploy"] = (5, 7)
        self.terms["lyon"] = (1, 1)


async def _applied(counts: TermCounts) -> None:
    counts.applied(2, 10, {"deploy": 1, "lyon": 1}, {"deploy": 2, "lyon": 1})


async def _read(counts: TermCounts, table: Table, *terms: str) -> object:
    return await counts.read(cast(asyncpg.Connection, table), 1, terms)


async def test_kept_counts_follow_a_committed_append() -> None:
    table, counts = Table(), TermCounts()
    assert await _read(counts, table, "deploy", "lyon") == (
        10,
        40,
        {"deploy": (4, 5), "lyon": (0, 0)},
    )
    with counts.writing():
        table.commit()
        await _applied(counts)
    reads = table.reads
    assert await _read(counts, table, "deploy", "lyon") == (
        12,
        50,
        {"deploy": (5, 7), "lyon": (1, 1)},
    )
    assert table.reads == reads  # answered from what is kept


async def test_a_soul_grown_past_the_limit_reads_the_terms_asked(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(term_counts, "_KEPT", 1)
    table, counts = Table(), TermCounts()
    assert await _read(counts, table, "deploy") == (10, 40, {"deploy": (4, 5)})
    with counts.writing():
        table.commit()
        await _applied(counts)  # two terms now: past the limit
    assert await _read(counts, table, "lyon", "deploy") == (
        12,
        50,
        {"lyon": (1, 1), "deploy": (5, 7)},
    )


@pytest.mark.parametrize("commit_before_read", [False, True])
async def test_a_read_overlapping_an_append_keeps_nothing(commit_before_read: bool) -> None:
    table, counts = Table(), TermCounts()
    table.held = anyio.Event()
    async with anyio.create_task_group() as tg:
        with counts.writing():
            if commit_before_read:  # the read sees the append's rows...
                table.commit()
            tg.start_soon(_read, counts, table, "deploy")
            await anyio.wait_all_tasks_blocked()
            if not commit_before_read:  # ...or the rows before it
                table.commit()
            table.held.set()
            await anyio.wait_all_tasks_blocked()  # the read ended; the append is under way
            await _applied(counts)
    table.held = None
    # Whatever the overlapping read saw, the counts read next are the committed ones.
    assert await _read(counts, table, "deploy") == (12, 50, {"deploy": (5, 7)})
