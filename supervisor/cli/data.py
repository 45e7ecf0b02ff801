"""The CLI for a soul's data as a whole: delete events and what was derived from them
(``soupd forget``), write it all out (``export``), copy the database while it runs
(``backup``) and derive it all again (``rebuild``).

Registered into the main parser by :func:`register`; each command is one socket call
whose reply is printed for people (or as JSON with ``--json``), but ``export``, which
pages through the soul on one connection and writes JSON lines (to a file, with a
progress line on a terminal: records, rate, time).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TextIO

from supervisor.cli.shared import Call, Command, Show, key_values, memory_id

__all__ = ["register"]


def register(
    command: Command, call: Call, show: Show, socket: Callable[[argparse.Namespace], Path]
) -> None:
    def forget(args: argparse.Namespace) -> int:
        params: dict[str, Any] = {"soul": args.soul}
        for key in ("ref", "id", "match", "before"):
            if getattr(args, key) is not None:
                params[key] = getattr(args, key)
        if args.all:
            params["all"] = True
        if args.dry_run:
            params["dry_run"] = True
        return show(args, call(args, "forget", params), _forget_text)

    def export(args: argparse.Namespace) -> int:
        import anyio
        import msgspec

        from channels.client import Client
        from supervisor.cli.progress import Progress
        from supervisor.paths import open_private

        async def go(out: TextIO) -> int:
            count = 0
            # On standard output the records are the output: no bar beside them.
            bar = Progress(
                f"exporting {args.soul}",
                None,
                unit="records",
                enabled=args.file is not None and sys.stderr.isatty(),
            )
            async with Client.connect(socket(args)) as client:
                cursor = None
                while True:
                    page = await client.call("export", {"soul": args.soul, "cursor": cursor})
                    for record in page["records"]:
                        out.write(msgspec.json.encode(record).decode() + "\n")
                    count += len(page["records"])
                    bar.advance(len(page["records"]))
                    cursor = page["cursor"]
                    if cursor is None:
                        bar.close()
                        return count

        if args.file is None:
            anyio.run(go, sys.stdout)
            return 0
        with open_private(args.file) as out:
            count = anyio.run(go, out)
        print(f"exported {count} records to {args.file}")
        return 0

    def backup(args: argparse.Namespace) -> int:
        result = call(args, "backup", {"soul": args.soul, "path": str(args.file.resolve())})
        return show(args, result, lambda r: f"backed up {r['bytes']} bytes to {r['path']}")

    def rebuild(args: argparse.Namespace) -> int:
        return show(args, call(args, "rebuild", {"soul": args.soul}), key_values)

    p = command("forget", forget, "delete events and everything derived from them")
    p.add_argument("soul")
    which = p.add_mutually_exclusive_group(required=True)
    which.add_argument("--ref", help="the event with this ref")
    which.add_argument(
        "--id", type=memory_id, help="the memory with this id, 7 or m7 (`soupd memories`)"
    )
    which.add_argument("--match", help="events whose text contains this (any case)")
    which.add_argument("--before", help="events before this time (ISO 8601)")
    which.add_argument("--all", action="store_true", help="every event of the soul")
    p.add_argument(
        "--dry-run", action="store_true", help="only count what would go; delete nothing"
    )
    p = command("export", export, "write a soul's events and derived state as JSON lines")
    p.add_argument("soul")
    p.add_argument("file", nargs="?", type=Path, help="default: standard output")
    p = command("backup", backup, "a consistent copy of a soul's database, while it runs")
    p.add_argument("soul")
    p.add_argument("file", type=Path)
    p = command("rebuild", rebuild, "recompute derived state and report differences")
    p.add_argument("soul")


def _forget_text(r: dict[str, Any]) -> str:
    verb = "would forget" if r.get("dry_run") else "forgot"
    return (
        f"{verb} {r['events']} events, {r['memories']} memories, {r['edges']} edges, "
        f"{r['summaries']} summary versions; {r['markers']} markers recomputed"
    )
