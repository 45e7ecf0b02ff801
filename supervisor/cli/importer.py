"""``soupd import``: stream a JSON-lines file into a soul in bounded frames.

Each line is one event object (the fields of ``event.push`` without ``soul``), or a
record of ``soupd export``. Events are grouped into ``event.import`` requests under the
frame cap; each request is one or more transactions in the soul.

Of an export, the events come back and derived state (memories, extracted claims,
summaries...) is derived again from them; the records of what the user set (persons and
their accounts, goals, stated claims) are restored by :mod:`supervisor.cli.restore`: the
accounts before the first event, goals and claims in file order, each after the events
above it.

Every non-blank line is counted once: an event as stored, dropped, duplicate or
rejected; a record as restored (``goals``, ``persons``, ``links``, ``claims``),
duplicate, rejected or skipped. A line that is not JSON, a malformed record or one the
daemon rejects is a rejection with its line number; none stops the import.

With ``progress`` (standard error is a terminal), a bar shows the bytes of the file read
of its size, the rate and the time left (:class:`~supervisor.cli.progress.Progress`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
import msgspec

from channels.client import Client
from supervisor.cli.progress import Progress
from supervisor.cli.restore import Restorer, is_claim, scan_links
from supervisor.errors import UsageError

__all__ = ["import_file"]

_FRAME_BYTES = 512 * 1024
_FRAME_EVENTS = 2000
_MAX_REASONS = 100
_EVENT_FIELDS = frozenset(
    {"text", "kind", "channel", "sender", "group", "mentioned", "ref", "ts", "session"}
)


async def import_file(socket: Path, soul: str, file: Path, progress: bool) -> dict[str, Any]:
    try:
        people = await anyio.to_thread.run_sync(scan_links, file)
    except OSError as exc:
        raise _unreadable(file, exc) from None
    async with Client.connect(socket) as client:
        run = _Import(client, soul)
        await run.restorer.link(people)
        try:
            handle = await anyio.open_file(file, "rb")
        except OSError as exc:
            raise _unreadable(file, exc) from None
        size = (await anyio.Path(file).stat()).st_size
        bar = Progress(f"importing {file.name}", size, unit="B", enabled=progress)
        async with handle:
            async for raw in handle:
                run.number += 1
                line = raw.strip()
                if line:
                    await run.line(line)
                bar.advance(len(raw))
        await run.flush()
        bar.close()
    return {**run.totals, "reasons": run.first_reasons()}


def _unreadable(file: Path, exc: OSError) -> UsageError:
    return UsageError(
        f"cannot read {file}: {exc.strerror or exc}; name a JSON-lines file to import "
        "(one event object a line, or a `soupd export` file)"
    )


class _Import:
    """One import's connection, counts and pending frame of events."""

    def __init__(self, client: Client, soul: str) -> None:
        self._client = client
        self._soul = soul
        # Events: stored, dropped, duplicate, rejected. Records: restored (goals,
        # persons, links, claims), duplicate, rejected or skipped.
        keys = "stored dropped duplicate rejected skipped goals persons links claims"
        self.totals: dict[str, int] = dict.fromkeys(keys.split(), 0)
        self.reasons: list[dict[str, Any]] = []
        self.number = 0  # the line being read
        self._batch: list[bytes] = []
        self._lines: list[int] = []
        self._size = 0
        self.restorer = Restorer(client, soul, self.totals, self.reject)

    def reject(self, line: int, code: str, message: str) -> None:
        # Reasons come out of file order (a person record's at the start, an event's
        # when its frame is answered): the first _MAX_REASONS lines are kept, sorted.
        self.totals["rejected"] += 1
        self.reasons.append({"line": line, "code": code, "message": message})
        if len(self.reasons) >= 2 * _MAX_REASONS:
            self.reasons = self.first_reasons()

    def first_reasons(self) -> list[dict[str, Any]]:
        """The reasons of the first ``_MAX_REASONS`` rejected lines, in file order."""
        return sorted(self.reasons, key=lambda reason: reason["line"])[:_MAX_REASONS]

    async def line(self, line: bytes) -> None:
        number = self.number
        try:
            record = msgspec.json.decode(line)
        except msgspec.DecodeError as exc:
            self.reject(number, "bad_json", f"not valid JSON ({exc}); one event object a line")
            return
        if isinstance(record, dict) and "type" in record:
            kind = record["type"]
            if kind in ("person", "identity"):
                return  # linked and counted by Restorer.link, before the first event
            if is_claim(record):
                await self.flush()
                await self.restorer.claim(number, record)
                return
            if kind == "goal":
                await self.flush()
                await self.restorer.goal(number, record)
                return
            if kind != "event":
                self.totals["skipped"] += 1  # derived again from the events
                return
            line = msgspec.json.encode({k: v for k, v in record.items() if k in _EVENT_FIELDS})
        if len(line) > _FRAME_BYTES:
            self.reject(number, "frame_too_large", f"line is over {_FRAME_BYTES} bytes")
            return
        if self._batch and (
            self._size + len(line) > _FRAME_BYTES or len(self._batch) >= _FRAME_EVENTS
        ):
            await self.flush()
        self._batch.append(line)
        self._lines.append(number)
        self._size += len(line) + 1

    async def flush(self) -> None:
        """Import the pending events (one ``event.import`` request)."""
        if not self._batch:
            return
        frame = b'{"soul":' + msgspec.json.encode(self._soul) + b',"events":['
        frame += b",".join(self._batch) + b"]}"
        result = await self._client.call("event.import", msgspec.Raw(frame))
        for key in ("stored", "dropped", "duplicate"):
            self.totals[key] += result[key]
        for reason in result["reasons"]:
            self.reject(self._lines[reason["index"]], reason["code"], reason["message"])
        self.totals["rejected"] += result["rejected"] - len(result["reasons"])
        self._batch, self._lines, self._size = [], [], 0
