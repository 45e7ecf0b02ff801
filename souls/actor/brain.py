"""A soul's brain directory: the Markdown files people and the soul both read.

``SOUL.md`` (identity, written by the user), ``MEMORY.md`` (the consolidated summary,
written by reflect) and ``WEEKLY.md`` (the weekly layer). File I/O goes through a
thread so the event loop never blocks on the file system; a missing file reads as
empty; a summary is replaced atomically (write, rename), so a reader sees the old
version or the new one, never half of one, and never through a planted link
(:mod:`souls.store.files`). The files are views: every version is in
the soul's database, and a soul rewrites its files from there when it starts, so they
are not fsynced (a power cut may leave an old view until the next start).
"""

from __future__ import annotations

import errno
from pathlib import Path

import anyio

from souls.store.files import replace_text
from supervisor.errors import DiskFull

__all__ = ["Brain"]

_FILES = {"consolidated": "MEMORY.md", "weekly": "WEEKLY.md"}


class Brain:
    def __init__(self, root: Path) -> None:
        self.root = root

    async def ensure(self) -> None:
        await anyio.Path(self.root).mkdir(parents=True, exist_ok=True)

    async def identity(self) -> str:
        return await self._read("SOUL.md")

    async def tasks(self) -> str:
        return await self._read("TASKS.md")

    async def write_tasks(self, text: str) -> None:
        await anyio.to_thread.run_sync(_replace, self.root / "TASKS.md", text)

    async def write_summary(self, layer: str, text: str) -> None:
        await anyio.to_thread.run_sync(_replace, self.root / _FILES[layer], text)

    async def sync_summary(self, layer: str, text: str) -> None:
        """Make the layer's file show ``text`` (the database's version) if it does not."""
        if await self._read(_FILES[layer]) != _as_file(text):
            await self.write_summary(layer, text)

    async def _read(self, name: str) -> str:
        try:
            return await anyio.Path(self.root / name).read_text(encoding="utf-8")
        except FileNotFoundError:
            return ""


def _replace(path: Path, text: str) -> None:
    try:
        replace_text(path, _as_file(text))
    except OSError as exc:
        if exc.errno in (errno.ENOSPC, errno.EDQUOT):
            raise DiskFull(path) from exc
        raise


def _as_file(text: str) -> str:
    return text if text.endswith("\n") or not text else text + "\n"
