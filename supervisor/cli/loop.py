"""The CLI for a soul's cognitive loop on demand: its counts (``soupd stats``), the
passes the loop otherwise runs by itself (``reflect``, ``weekly``, ``decay``,
``homeostasis``) and how well it knows a topic (``confidence``).

Registered into the main parser by :func:`register`; each command is one socket call
whose reply is printed for people (or as JSON with ``--json``).
"""

from __future__ import annotations

import argparse
from typing import Any

from supervisor.cli.shared import Call, Command, Show, key_values
from supervisor.errors import UsageError

__all__ = ["register"]


def register(command: Command, call: Call, show: Show) -> None:
    def stats(args: argparse.Namespace) -> int:
        result = call(args, "soul.stats", {"soul": args.soul})
        return show(args, result, key_values)

    def reflect(args: argparse.Namespace) -> int:
        return show(args, call(args, "reflect", {"soul": args.soul}), key_values)

    def weekly(args: argparse.Namespace) -> int:
        return show(args, call(args, "weekly", {"soul": args.soul}), key_values)

    def decay(args: argparse.Namespace) -> int:
        import time

        params: dict[str, Any] = {"soul": args.soul}
        if args.dry_run and args.apply:
            raise UsageError(
                "decay: --dry-run and --apply ask for opposite things; give one of them "
                "(--dry-run: only count; --apply: run it even as of a future --now)"
            )
        # Decay as of a later time hides and purges for real, now: never by a typo.
        # Without --apply it only says what it would do.
        later = args.now is not None and args.now > time.time() and not args.apply
        if args.now is not None:
            params["now"] = args.now
        if args.dry_run or later:
            params["dry_run"] = True
        hint = " (--now is in the future: add --apply to run it)" if later else ""
        return show(args, call(args, "decay", params), lambda r: _decay_text(r) + hint)

    def homeostasis(args: argparse.Namespace) -> int:
        return show(args, call(args, "homeostasis", {"soul": args.soul}), key_values)

    def confidence(args: argparse.Namespace) -> int:
        result = call(args, "confidence", {"soul": args.soul, "topic": args.topic})
        return show(args, result, _confidence_text)

    p = command("stats", stats, "counts and latencies of one soul")
    p.add_argument("soul")
    p = command("reflect", reflect, "make a soul reflect now (rewrites its MEMORY.md)")
    p.add_argument("soul")
    p = command("weekly", weekly, "write a soul's weekly summary now")
    p.add_argument("soul")
    p = command("decay", decay, "run the nightly forgetting pass on a soul now")
    p.add_argument("soul")
    p.add_argument(
        "--now",
        type=_moment,
        help="as of this time (ISO 8601, UTC when no zone, or Unix seconds), to test the curve",
    )
    p.add_argument(
        "--dry-run",
        action="store_true",
        help="only say what it would hide, purge and prune; change nothing",
    )
    p.add_argument(
        "--apply",
        action="store_true",
        help="run it even as of a future --now (without it, that is a dry run)",
    )
    p = command("confidence", confidence, "how well a soul knows a topic")
    p.add_argument("soul")
    p.add_argument("topic")
    p = command("homeostasis", homeostasis, "measure a soul's drives now")
    p.add_argument("soul")


def _confidence_text(r: dict[str, Any]) -> str:
    lines = [
        f"{r['state']} (score {r['score']:.2f}: coverage {r['coverage']:.2f}, "
        f"somatic {r['somatic']:.2f})"
    ]
    lines += [f"  gap: {gap}" for gap in r["gaps"]]
    return "\n".join(lines)


def _decay_text(r: dict[str, Any]) -> str:
    counts = (
        f"{r['hidden']} memories, {r['purged']} purged, "
        f"{r['edges_pruned']} edges and {r['markers_pruned']} markers pruned"
    )
    if r.get("dry_run"):
        return f"would hide {counts}; a dry run, nothing changed"
    return f"hid {counts}"


def _moment(text: str) -> float:
    """argparse's type for a time: Unix seconds for ISO 8601 (UTC when it has no zone)
    or Unix seconds, read as the daemon reads a time (:func:`souls.events.event_time`);
    anything else is a usage error saying what is accepted."""
    from souls.events import event_time

    try:
        value: float | str = float(text)
    except ValueError:
        value = text
    try:
        return event_time(value, 0.0)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a time soupd can use: give ISO 8601 (2026-11-29T09:30:00Z; UTC "
            "when it has no zone) or Unix seconds, from 1970 on"
        ) from None
