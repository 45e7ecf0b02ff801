"""The CLI for a soul's tasks with due times, the lines of its ``TASKS.md``: ``soupd
remind`` adds one (once: the same text and due time again adds nothing and says so),
``soupd tasks`` lists the pending ones, the last fired and the lines the soul cannot read
(exit 3 while there are any).

Registered into the main parser by :func:`register`; each command is one socket call
whose reply is printed for people (or as JSON with ``--json``).
"""

from __future__ import annotations

import argparse
import datetime as dt
from typing import Any

from supervisor.cli.shared import Call, Command, Show

__all__ = ["register"]


def register(command: Command, call: Call, show: Show) -> None:
    def remind(args: argparse.Namespace) -> int:
        params = {"soul": args.soul, "text": args.text, "at": args.at}
        return show(args, call(args, "task.add", params), _added_text)

    def tasks(args: argparse.Namespace) -> int:
        result = call(args, "tasks", {"soul": args.soul})
        show(args, result, _tasks_text)
        return 3 if result["errors"] else 0

    p = command("remind", remind, "add a task with a due time to a soul's TASKS.md")
    p.add_argument("soul")
    p.add_argument("text")
    p.add_argument("--at", required=True, help="when: ISO 8601 (UTC if no zone)")
    p = command("tasks", tasks, "a soul's pending tasks, and lines of TASKS.md it can't read")
    p.add_argument("soul")


def _added_text(r: dict[str, Any]) -> str:
    """``soupd remind``: whether the task was added or already there, then the list."""
    if r.get("existing"):
        head = f"already set, nothing added (key {r['key']})"
    else:
        head = f"added (key {r['key']})"
    return f"{head}\n{_tasks_text(r)}"


def _tasks_text(r: dict[str, Any]) -> str:
    def when(seconds: float) -> str:
        return dt.datetime.fromtimestamp(seconds, dt.UTC).strftime("%Y-%m-%d %H:%M UTC")

    lines = [f"{when(t['due'])}  {t['text']}  (line {t['line']})" for t in r["pending"]]
    lines = lines or ["(no pending tasks)"]
    lines += [f"fired {when(t['fired_at'])}: {t['text']}" for t in r.get("fired", [])[:5]]
    lines += [f"line {e['line']}: {e['problem']}  [{e['source']}]" for e in r["errors"]]
    return "\n".join(lines)
