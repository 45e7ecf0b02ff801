"""The CLI for memories by id: ``soupd memories SOUL`` lists them (newest first, a page
at a time, with recall's filters), ``soupd memory get|update|delete SOUL ID`` reads,
corrects or forgets one (``memory delete`` is ``forget --id``).

Registered into the main parser by :func:`register`; each command is one socket call
whose reply is printed for people (times in ISO 8601) or as JSON with ``--json``.
"""

from __future__ import annotations

import argparse
from typing import Any

from supervisor.cli.render import iso
from supervisor.cli.shared import Call, Command, Show, memory_id

__all__ = ["register"]

_FILTERS = ("sender", "session", "kind", "since", "until")


def register(command: Command, call: Call, show: Show) -> None:
    def memories(args: argparse.Namespace) -> int:
        params: dict[str, Any] = {"soul": args.soul, "limit": args.limit}
        if args.cursor is not None:
            params["cursor"] = args.cursor
        for name in _FILTERS:
            value = getattr(args, name)
            if value is not None:
                params[name] = _seconds(value) if name in ("since", "until") else value
        return show(args, call(args, "memory.list", params), _page_text)

    def get(args: argparse.Namespace) -> int:
        result = call(args, "memory.get", {"soul": args.soul, "id": args.id})
        return show(args, result, _item_text)

    def update(args: argparse.Namespace) -> int:
        params = {"soul": args.soul, "id": args.id, "text": args.text}
        return show(args, call(args, "memory.update", params), _updated_text)

    def delete(args: argparse.Namespace) -> int:
        result = call(args, "memory.delete", {"soul": args.soul, "id": args.id})
        return show(args, result, _forgot_text)

    p = command("memories", memories, "list a soul's memories, newest first, a page at a time")
    p.add_argument("soul")
    p.add_argument("--cursor", help="the next page after this one (as the last page said)")
    p.add_argument("--limit", type=int, default=50, help="memories per page (default 50)")
    p.add_argument("--sender", help="only what this sender (or linked person) said")
    p.add_argument("--session", help="only memories of this session")
    p.add_argument("--kind", help="only memories of this kind (message, dm, voice...)")
    p.add_argument("--since", help="only from this time on (ISO 8601 or Unix seconds)")
    p.add_argument("--until", help="only before this time (ISO 8601 or Unix seconds)")
    p = command("memory", lambda a: 2, "read, correct or forget one memory by its id")
    actions = p.add_subparsers(dest="memory_command", required=True, metavar="ACTION")
    for name, handler, text in (
        ("get", get, "show one memory"),
        ("update", update, "correct its text (stored as a new memory in its place)"),
        ("delete", delete, "forget it and everything derived from it (= forget --id)"),
    ):
        action = actions.add_parser(name, help=text, description=text)
        action.set_defaults(handler=handler)
        action.add_argument("soul")
        action.add_argument(
            "id", type=memory_id, help="the memory's id, 7 or m7 (as `soupd memories` lists it)"
        )
        if name == "update":
            action.add_argument("text", help="the corrected text")
        # As every command's: --json after the action too (SUPPRESS keeps a global one).
        action.add_argument(
            "--json", action="store_true", default=argparse.SUPPRESS, help="print as JSON"
        )


def _seconds(value: str) -> float | str:
    try:
        return float(value)
    except ValueError:
        return value


def _line(item: dict[str, Any]) -> str:
    when = iso(item["ts"] if item["ts"] is not None else item["created"])
    who = f" {item['sender']}:" if item["sender"] else ""
    hidden = " (hidden by decay)" if item["hidden_at"] is not None else ""
    return f"[m{item['id']}] {when}{who} {item['text']}{hidden}"


def _page_text(r: dict[str, Any]) -> str:
    if not r["items"]:
        return "(no memories)"
    lines = [_line(item) for item in r["items"]]
    if r["next_cursor"] is not None:
        lines.append(f"(more: --cursor {r['next_cursor']})")
    return "\n".join(lines)


def _item_text(r: dict[str, Any]) -> str:
    lines = [_line(r)]
    for key in ("ref", "session", "channel"):
        if r[key] is not None:
            lines.append(f"  {key}: {r[key]}")
    lines.append(f"  salience {r['salience']:.2f}, recalled {r['recalls']} times")
    return "\n".join(lines)


def _forgot_text(r: dict[str, Any]) -> str:
    return (
        f"forgot {r['events']} events, {r['memories']} memories, {r['edges']} edges, "
        f"{r['summaries']} summary versions; {r['markers']} markers recomputed"
    )


def _updated_text(r: dict[str, Any]) -> str:
    return f"memory m{r['replaced']} corrected: now m{r['id']} (event {r['event_id']})"
