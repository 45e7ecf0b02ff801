"""The store: one soul's SQLite database and its full-text index.

:mod:`~souls.store.store` is the narrow interface the actor writes and searches
through (:mod:`~souls.store.interface` the protocol it shares with the PostgreSQL
store); :mod:`~souls.store.schema` its migrations, :mod:`~souls.store.changes` the
derived state a turn writes in one go, :mod:`~souls.store.due` the @due wake-ups' rows,
:mod:`~souls.store.inner` the inner state as the cognitive loop reads it back,
:mod:`~souls.store.pages` memories read by id and page,
:mod:`~souls.store.embeddings` the semantic layer's vectors,
:mod:`~souls.store.cards` the collision room's rows,
:mod:`~souls.store.knowledge` the knowledge room's (goals, questions, claims it reads),
:mod:`~souls.store.logs` the logs a forget scrubs,
:mod:`~souls.store.scope` what a recall or a listing is narrowed to,
:mod:`~souls.store.neighbours` how each memory is indexed with the turns around it,
:mod:`~souls.store.bm25` the exact BM25 over the index's statistics,
:mod:`~souls.store.hiding` memories hidden as decay does,
:mod:`~souls.store.fading` the nightly decay pass,
:mod:`~souls.store.bulk` multi-row inserts,
:mod:`~souls.store.batch` a write transaction in one round trip,
:mod:`~souls.store.reindex` the index rebuilt and :mod:`~souls.store.check` the
read-only checks of a database file, :mod:`~souls.store.forgetting` what a full forget
deletes and :mod:`~souls.store.export` the tables an export reads.

May import :mod:`souls.text`, the vocabulary (events, messages, results) and
:mod:`supervisor.errors`; never a room above it (intake, mind, recall, knowledge,
collision, llm, actor).
"""

# The modules other rooms may import; the rest are this room's own.
__all__ = [
    "bm25", "cards", "changes", "check", "export", "fading", "files", "forgetting", "inner",
    "interface", "knowledge", "logs", "neighbours", "reindex", "store",
]  # fmt: skip
