"""The CLI for souls at run time: ``soupd souls`` (or ``soupd soul list``) lists them,
``soupd soul create NAME [--set KEY=VALUE ...] [--file FILE] [--reopen]`` writes the soul's
file in the config folder and starts it (on the data a deleted soul of that name kept
only with ``--reopen``; refused otherwise), ``soupd soul delete NAME [--purge]`` stops it
and removes its file (its data stays unless ``--purge``, which also removes the data a
soul deleted earlier kept).

``--set recall.k=12`` sets one key of the soul's TOML: the part before the last dot names
its table; the value is read as a TOML value (``12``, ``true``, ``"text"``, ``[1, 2]``)
and, when it is none, taken as text. ``--file`` sends a whole soul file instead.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from supervisor.cli.shared import Call, Command, Show

__all__ = ["register", "settings_table"]


def register(command: Command, call: Call, show: Show) -> None:
    def listing(args: argparse.Namespace) -> int:
        return show(args, call(args, "soul.list", {}), _list_text)

    def create(args: argparse.Namespace) -> int:
        params: dict[str, Any] = {"soul": args.name}
        if args.file is not None:
            params["toml"] = _read(args.file)
        else:
            params["config"] = settings_table(args.set)
        if args.reopen:
            params["reopen"] = True
        return show(args, call(args, "soul.create", params), _created_text)

    def delete(args: argparse.Namespace) -> int:
        params = {"soul": args.name, "purge": args.purge}
        return show(args, call(args, "soul.delete", params), _deleted_text)

    command("souls", listing, "list the souls and their state")
    p = command("soul", lambda a: 2, "create, delete or list souls while the daemon runs")
    actions = p.add_subparsers(dest="soul_command", required=True, metavar="ACTION")
    made = actions.add_parser("create", help="write the soul's file and start it")
    made.add_argument("name")
    given = made.add_mutually_exclusive_group()
    given.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="one setting of the soul's TOML, e.g. recall.k=12 (repeatable)",
    )
    given.add_argument("--file", type=Path, help="the soul's whole TOML file instead")
    made.add_argument(
        "--reopen",
        action="store_true",
        help="start it on the data a deleted soul of that name kept (refused otherwise)",
    )
    made.set_defaults(handler=create)
    gone = actions.add_parser("delete", help="stop the soul and remove its file (data kept)")
    gone.add_argument("name")
    gone.add_argument(
        "--purge",
        action="store_true",
        help="also remove its state folder (database, brain), or the one a deleted soul kept",
    )
    gone.set_defaults(handler=delete)
    every = actions.add_parser("list", help="list the souls and their state (= soupd souls)")
    every.set_defaults(handler=listing)
    for action in (made, gone, every):
        # As every command's: --json after the action too (SUPPRESS keeps a global one).
        action.add_argument(
            "--json", action="store_true", default=argparse.SUPPRESS, help="print as JSON"
        )


def settings_table(pairs: list[str]) -> dict[str, Any]:
    """``KEY=VALUE`` pairs as the nested table of a soul's TOML (see the module docstring);
    InvalidParams for a pair without ``=`` or a key set twice."""
    import tomllib

    from supervisor.errors import InvalidParams

    table: dict[str, Any] = {}
    for pair in pairs:
        key, sep, text = pair.partition("=")
        parts = key.strip().split(".")
        if not sep or not all(part.strip() for part in parts):
            raise InvalidParams(f"--set {pair!r}: use KEY=VALUE, e.g. recall.k=12")
        try:
            value: Any = tomllib.loads(f"value = {text}")["value"]
        except tomllib.TOMLDecodeError:
            value = text
        where = table
        for part in parts[:-1]:
            inner = where.setdefault(part.strip(), {})
            if not isinstance(inner, dict):
                raise InvalidParams(f"--set {pair!r}: {part} is set as a value already")
            where = inner
        last = parts[-1].strip()
        if last in where:
            raise InvalidParams(f"--set {pair!r}: {key.strip()} is set twice")
        where[last] = value
    return table


def _read(path: Path) -> str:
    from supervisor.errors import ConfigError

    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(str(path), "", f"cannot read: {exc}") from None


def _list_text(r: dict[str, Any]) -> str:
    rows = [f"{'NAME':<24} {'STATE':<11} {'RESTARTS':>8} {'QUEUED':>7}"]
    for s in r["souls"]:
        error = f"  {s['last_error']}" if s["last_error"] else ""
        rows.append(f"{s['name']:<24} {s['state']:<11} {s['restarts']:>8} {s['queued']:>7}{error}")
    return "\n".join(rows)


def _created_text(r: dict[str, Any]) -> str:
    lines = [f"created soul {r['soul']} ({r['state']}); its file: {r['file']}"]
    if r.get("reopened"):
        lines.append(f"reopened the data it kept: {r['reopened']}")
    if r["default_kept"]:
        lines.append("the default soul got a file of its own, so it keeps running")
    return "\n".join(lines)


def _deleted_text(r: dict[str, Any]) -> str:
    if not r["stopped"]:
        return f"no soul {r['soul']} runs; the data it kept is removed"
    done = f"deleted soul {r['soul']}: stopped" + (", its file removed" if r["file"] else "")
    if r["purged"]:
        done += ", its state folder removed"
    kept = "".join(f"\nkept: {folder}" for folder in r["kept"])
    return done + kept
