"""Where each soul last heard from someone, kept across restarts.

An output that names no session (a wake-up from ``TASKS.md``) goes back to the
conversation its soul last heard from (:meth:`channels.base.Channel.route`). Without
this file a restart would forget every such place, and each wake-up would be
dropped as ``unroutable`` until someone spoke to the soul again.

The map lives in memory; :meth:`Conversations.note` is synchronous and cheap (it is
called for every inbound event, in the event loop) and only marks the map dirty when
the place actually changed. :meth:`Conversations.run` writes a dirty map at most once
per ``interval`` in a worker thread; the owner calls :meth:`Conversations.flush` once
more when it stops. The file is replaced atomically (temporary file in the same
folder, then rename), so a reader finds the old map or the new one, never half of
one. It is not fsynced: a write lost to a power cut costs one wake-up that finds no
conversation until the soul next hears from someone, the same as a missing file.

A missing file is an empty map; an unreadable or malformed one is logged as a warning
naming the file and ignored, so a damaged file can never keep the daemon from starting.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Literal

import anyio
import anyio.abc
import msgspec
import structlog

__all__ = ["Conversations", "ConversationsStatistics"]

_log = structlog.get_logger("soupd.channels")

# Bumped when the file's shape changes; a file of another version is ignored (warned).
_VERSION: Final = 1


class _Place(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    channel: str
    conversation: str


class _File(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    version: Literal[1]  # _VERSION: any other fails validation
    souls: dict[str, _Place]


@dataclass(frozen=True, slots=True)
class ConversationsStatistics:
    """A snapshot: entries held (one per soul at most), file writes since start."""

    entries: int
    dirty: bool
    writes: int
    write_failures: int


class Conversations:
    """``soul → (channel, conversation)``: where each soul last heard from someone.

    Shared by every channel, so a soul fed by two channels answers on the one it heard
    from last. Holds at most one entry per soul. With a ``path`` the map is loaded by
    :meth:`load` and written back by :meth:`run` / :meth:`flush`; without one it lives
    in memory only.
    """

    def __init__(self, path: Path | None = None, *, interval: float = 1.0) -> None:
        self.path = path
        self.interval = interval
        self._latest: dict[str, tuple[str, str]] = {}
        self._dirty = False
        self._loaded = False
        self._writes = 0
        self._write_failures = 0
        self._failing = False  # the last write failed (warned once per streak)
        # Created by run() (an anyio.Event needs the running loop); set by a change.
        self._changed: anyio.Event | None = None

    def note(self, soul: str, channel: str, conversation: str) -> None:
        """Remember where ``soul`` just heard from someone; never waits, never writes."""
        place = (channel, conversation)
        if self._latest.get(soul) != place:
            self._latest[soul] = place
            self._mark_dirty()

    def latest(self, soul: str) -> tuple[str, str] | None:
        return self._latest.get(soul)

    def forget_channel(self, channel: str) -> None:
        """Drop every entry that points at ``channel`` (removed from the config)."""
        kept = {s: place for s, place in self._latest.items() if place[0] != channel}
        if len(kept) != len(self._latest):
            self._latest = kept
            self._mark_dirty()

    def forget_soul(self, soul: str) -> None:
        """Drop ``soul``'s entry (its memory was forgotten: the chat goes with it)."""
        if self._latest.pop(soul, None) is not None:
            self._mark_dirty()

    def channels(self) -> frozenset[str]:
        """The channels some entry points at."""
        return frozenset(channel for channel, _ in self._latest.values())

    def statistics(self) -> ConversationsStatistics:
        return ConversationsStatistics(
            len(self._latest), self._dirty, self._writes, self._write_failures
        )

    def _mark_dirty(self) -> None:
        self._dirty = True
        if self._changed is not None:
            self._changed.set()

    # -- the file ------------------------------------------------------------------

    async def load(self) -> None:
        """Read the file once (later calls do nothing); never raises for a bad file.

        Entries noted before the load win over the file's: they are newer.
        """
        if self.path is None or self._loaded:
            return
        stored = await self._read(self.path)
        self._loaded = True  # not before: a load cut short by cancellation reads again
        for soul, place in stored.items():
            self._latest.setdefault(soul, (place.channel, place.conversation))

    async def _read(self, path: Path) -> dict[str, _Place]:
        try:
            stored = msgspec.json.decode(await anyio.Path(path).read_bytes(), type=_File)
        except FileNotFoundError:
            return {}
        except (OSError, msgspec.MsgspecError) as exc:
            _log.warning(
                "channels.conversations_unreadable",
                file=str(path),
                error=f"{type(exc).__name__}: {exc}",
                consequence="ignored: a wake-up goes where its soul next hears from someone; "
                "the file is rewritten then",
            )
            return {}
        return stored.souls

    async def run(
        self, *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED
    ) -> None:
        """Write the map whenever it changed, at most once per ``interval``; until cancelled.

        Does not write when cancelled: the owner calls :meth:`flush` once everything
        that notes has stopped, so that last write misses nothing.
        """
        if self.path is None:
            task_status.started()
            return  # nothing to write
        try:
            task_status.started()
            while True:
                if not self._dirty:
                    self._changed = anyio.Event()
                    await self._changed.wait()
                await self.flush()
                await anyio.sleep(self.interval)
        finally:
            self._changed = None

    async def flush(self) -> None:
        """Write the map now if it changed since the last write (in a worker thread).

        A failed write is counted and the map stays dirty, so the next flush tries
        again; only the first failure in a row is a warning (a full disk would otherwise
        warn every ``interval``).
        """
        if self.path is None or not self._dirty:
            return
        # The snapshot is taken here, in the loop: the thread never sees the live dict.
        snapshot = _File(_VERSION, {soul: _Place(*place) for soul, place in self._latest.items()})
        self._dirty = False
        try:
            await anyio.to_thread.run_sync(_replace, self.path, msgspec.json.encode(snapshot))
        except OSError as exc:
            self._dirty = True
            self._write_failures += 1
            (_log.debug if self._failing else _log.warning)(
                "channels.conversations_write_failed",
                file=str(self.path),
                error=f"{type(exc).__name__}: {exc}",
                consequence="kept in memory and tried again; after a restart wake-ups "
                "may find no conversation until someone speaks to the soul",
            )
            self._failing = True
        else:
            self._writes += 1
            if self._failing:
                self._failing = False
                _log.info("channels.conversations_written", file=str(self.path))


def _replace(path: Path, data: bytes) -> None:
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.tmp")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as handle:
        # A leftover temporary file keeps its old mode through O_CREAT; make it private.
        os.fchmod(handle.fileno(), 0o600)
        handle.write(data)
    os.replace(temporary, path)
