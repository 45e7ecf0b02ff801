"""``soupd import``: stream a JSON-lines file into a soul in bounded frames.

Each line is one event object (the fields of ``event.push`` without ``soul``), or a
record of ``soupd export`` (its events are imported, its derived records skipped). Lines
are grouped into ``event.import`` requests under the frame cap; each request is one or
more transactions in the soul. A line that is not JSON is a rejection reported with
its line number; it never stops the import.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import anyio
import msgspec

from channels.client import Client
from supervisor.errors import ClientError

__all__ = ["import_file"]

_FRAME_BYTES = 512 * 1024
_FRAME_EVENTS = 2000
_MAX_REASONS = 100
_EVENT_FIELDS = frozenset(
    {"text", "kind", "channel", "sender", "group", "mentioned", "ref", "ts", "session"}
)


async def import_file(socket: Path, soul: str, file: Path, progress: bool) -> dict[str, Any]:
    totals: dict[str, Any] = {
        "stored": 0,
        "dropped": 0,
        "duplicate": 0,
        "rejected": 0,
        "skipped": 0,
    }
    reasons: list[dict[str, Any]] = []

    def reject(line: int, code: str, message: str) -> None:
        totals["rejected"] += 1
        if len(reasons) < _MAX_REASONS:
            reasons.append({"line": line, "code": code, "message": message})

    async with Client.connect(socket) as client:

        async def flush(batch: list[bytes], lines: list[int]) -> None:
            frame = b'{"soul":' + msgspec.json.encode(soul) + b',"events":['
            frame += b",".join(batch) + b"]}"
            result = await client.call("event.import", msgspec.Raw(frame))
            for key in ("stored", "dropped", "duplicate"):
                totals[key] += result[key]
            for reason in result["reasons"]:
                reject(lines[reason["index"]], reason["code"], reason["message"])
            totals["rejected"] += result["rejected"] - len(result["reasons"])

        batch: list[bytes] = []
        lines: list[int] = []
        size = 0
        number = 0
        try:
            handle = await anyio.open_file(file, "rb")
        except OSError as exc:
            raise ClientError(f"cannot read {file}: {exc.strerror or exc}") from None
        async with handle:
            async for raw in handle:
                number += 1
                line = raw.strip()
                if not line:
                    continue
                try:
                    record = msgspec.json.decode(line)
                except msgspec.DecodeError as exc:
                    reject(number, "bad_json", f"not valid JSON ({exc}); one event object a line")
                    continue
                if isinstance(record, dict) and "type" in record:
                    # A line of `soupd export`: events come back, derived state is
                    # derived again rather than copied.
                    if record["type"] != "event":
                        totals["skipped"] += 1
                        continue
                    line = msgspec.json.encode(
                        {k: v for k, v in record.items() if k in _EVENT_FIELDS}
                    )
                if len(line) > _FRAME_BYTES:
                    reject(number, "frame_too_large", f"line is over {_FRAME_BYTES} bytes")
                    continue
                if batch and (size + len(line) > _FRAME_BYTES or len(batch) >= _FRAME_EVENTS):
                    await flush(batch, lines)
                    batch, lines, size = [], [], 0
                    if progress:
                        print(f"\rimported {number - 1} lines…", end="", file=sys.stderr)
                batch.append(line)
                lines.append(number)
                size += len(line) + 1
        if batch:
            await flush(batch, lines)
        if progress:
            print(f"\rimported {number} lines.   ", file=sys.stderr)
    totals["reasons"] = reasons
    return totals
