"""A soul's brain directory: the Markdown files people and the soul both read.

``SOUL.md`` (identity, written by the user) and ``MEMORY.md`` (the consolidated
summary, written by reflect). Reads go through a thread so the event loop never
blocks on the file system; a missing file reads as empty.
"""

from __future__ import annotations

from pathlib import Path

import anyio

__all__ = ["Brain"]


class Brain:
    def __init__(self, root: Path) -> None:
        self.root = root

    async def ensure(self) -> None:
        await anyio.Path(self.root).mkdir(parents=True, exist_ok=True)

    async def identity(self) -> str:
        return await self._read("SOUL.md")

    async def summary(self) -> str:
        return await self._read("MEMORY.md")

    async def _read(self, name: str) -> str:
        try:
            return await anyio.Path(self.root / name).read_text(encoding="utf-8")
        except FileNotFoundError:
            return ""
