"""How the PostgreSQL store's statements are planned (souls/store/postgres/pool.py): the
searches on sessions of their own, planned once and kept (generic plans), everything
else planned for the values it meets (custom plans). Read off the server's own counts
(``pg_prepared_statements``), on a real server (tests/pgserver.py)."""

from __future__ import annotations

import asyncpg

from souls.store.postgres.pool import RANKING_SETTINGS, create_pool
from souls.store.postgres.store import PgStore
from souls.store.store import NewEvent
from souls.text.tokenize import fts_document, fts_match, query_terms


def said(i: int, text: str) -> NewEvent:
    return NewEvent(
        ref=None, kind="message", channel="t", sender="ada", group=None, mentioned=False,
        session="s", ts=float(i), recorded=float(i), salience=0.5, text=text,
        doc=fts_document(text),
    )  # fmt: skip


async def _plans(pool: asyncpg.Pool) -> tuple[int, int]:
    """(generic, custom) plans made for the prepared statements with parameters of
    ``pool``'s sessions (one without is planned once whatever the setting)."""
    generic = custom = 0
    for _ in range(pool.get_size()):
        async with pool.acquire() as db:
            row = await db.fetchrow(
                "SELECT coalesce(sum(generic_plans), 0), coalesce(sum(custom_plans), 0)"
                " FROM pg_prepared_statements WHERE cardinality(parameter_types) > 0"
            )
            assert row is not None
            generic, custom = generic + int(row[0]), custom + int(row[1])
    return generic, custom


async def test_searches_are_planned_once_and_the_rest_for_its_values(pg_dsn: str) -> None:
    pool = await create_pool(pg_dsn, min_size=1, max_size=1)
    ranking = await create_pool(pg_dsn, min_size=1, max_size=1, settings=RANKING_SETTINGS)
    try:
        store = await PgStore.open(pool, "alpha", context_turns=2, ranking=ranking)
        texts = ["the deploy failed on the database", "lunch with Ana", "the deploy went fine"]
        await store.append([said(i, t) for i, t in enumerate(texts)])
        match = fts_match(query_terms("did the deploy fail?"))
        found = []
        for _ in range(8):  # past the server's five custom plans of plan_cache_mode = auto
            found.append([c.memory_id for c in await store.candidates(match, 10, 0.4)])
            found.append([h.memory_id for h in await store.search(match, 10)])
        assert found[0]
        assert all(f == found[0] for f in found[::2])
        assert found[1]
        assert all(f == found[1] for f in found[1::2])
        generic, custom = await _plans(ranking)
        assert generic > 0
        assert custom == 0
        generic, custom = await _plans(pool)
        assert generic == 0
        assert custom > 0
    finally:
        await pool.close()
        await ranking.close()
