"""The semantic layer's parts that need no soul (DESIGN §3.12): what ``[embedding]``
says, the embedders that turn texts into vectors, and the vectors themselves.

:mod:`~souls.embed.config` is the ``[embedding]`` table; :mod:`~souls.embed.client` the
providers (the OpenAI embeddings API over httpx; fastembed or sentence-transformers in
process, imported only when configured); :mod:`~souls.embed.vectors` packs vectors for
the soul's SQLite file and finds the nearest ones to a query. The actor runs them
(souls/actor/embedding.py); recall fuses what they find (souls/recall/recall.py).

May import :mod:`souls.store`, :mod:`souls.text`, the vocabulary (events, messages,
results) and :mod:`supervisor.errors`; never recall, knowledge, llm or the actor.
"""

# The modules other rooms may import; the rest are this room's own.
__all__ = ["bounded", "client", "config", "vectors"]
