"""One HTTP POST whose answer is read up to a byte limit: what an OpenAI-compatible
endpoint sends (embeddings here, chat in :mod:`souls.llm.chat`) is untrusted, and a
broken or hostile server must not fill the daemon's memory before anything checks it."""

from __future__ import annotations

import httpx

__all__ = ["post_bounded"]


async def post_bounded(
    http: httpx.AsyncClient, url: str, body: bytes, headers: dict[str, str], most: int
) -> tuple[int, bytes] | None:
    """POST ``body`` to ``url``; the status and the answer, or None once the answer runs
    past ``most`` bytes (nothing more is read). Transport errors propagate."""
    async with http.stream("POST", url, content=body, headers=headers) as got:
        chunks: list[bytes] = []
        size = 0
        async for chunk in got.aiter_bytes():
            size += len(chunk)
            if size > most:
                return None
            chunks.append(chunk)
        return got.status_code, b"".join(chunks)
