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
        params: dict[str, Any] = {"soul": args.soul}
        if args.now:
            params["now"] = args.now
        return show(args, call(args, "decay", params), key_values)

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
    p.add_argument("--now", help="as of this time (ISO 8601), to test the curve")
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
