"""The PostgreSQL store (issue #21, in progress): many souls in one shared database.

:mod:`~souls.store.postgres.schema` its migrations, :mod:`~souls.store.postgres.search`
exact BM25 on an inverted index, :mod:`~souls.store.postgres.store` the store of one
soul behind :class:`souls.store.interface.SoulStore`, :mod:`~souls.store.postgres.lease`
a soul's ownership by advisory lock. Needs the ``postgres`` extra (asyncpg). Not yet
selectable by users: the daemon still opens SQLite stores only.
"""

__all__ = ["lease", "schema", "search", "store"]
