"""The PostgreSQL store (``[store] backend = "postgres"``): many souls in one shared
database, each owned by one daemon at a time.

:mod:`~souls.store.postgres.schema` its migrations, :mod:`~souls.store.postgres.search`
exact BM25 on an inverted index (:mod:`~souls.store.postgres.term_counts` the counts it
reads, kept between queries), :mod:`~souls.store.postgres.store` the store of one soul
behind :class:`souls.store.interface.SoulStore`, :mod:`~souls.store.postgres.lease` a
soul's ownership by advisory lock, :mod:`~souls.store.postgres.writing` every write
fenced by it. Needs the ``postgres`` extra (asyncpg).
"""

__all__ = ["lease", "schema", "search", "store"]
