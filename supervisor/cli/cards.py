"""The CLI for a soul's cards and collision memory: the cards (``soupd cards``), a
lightning draw against a topic (``lightning``), the user's verdict on a card of a
presented draw (``verdict``), every draw (``ledger``), the weekly reconciliation
(``tide``) and the status page (``status-page``).

Registered into the main parser by :func:`register`; each command is one socket call
whose reply is printed for people (or as JSON with ``--json``). ``cards --strict`` and
``tide`` exit 3 when the cards and the database disagree or verdicts are pending.
``lightning --as-of N`` reproduces draw N from its ledger row; ``tide --close CARD``
applies the tide's closure proposals for that card.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from supervisor.cli.shared import Call, Command, Show

__all__ = ["register"]


def register(command: Command, call: Call, show: Show) -> None:
    def cards(args: argparse.Namespace) -> int:
        result = call(args, "cards", {"soul": args.soul, "strict": args.strict})
        show(args, result, _cards_text)
        return 3 if result["problems"] else 0

    def lightning(args: argparse.Namespace) -> int:
        params: dict[str, Any] = {"soul": args.soul, "topic": args.topic, "exclude": args.exclude}
        if args.seed is not None:
            params["seed"] = args.seed
        if args.n is not None:
            params["n"] = args.n
        if args.as_of is not None:
            params["as_of"] = args.as_of
        return show(args, call(args, "lightning", params), _lightning_text)

    def verdict(args: argparse.Namespace) -> int:
        params: dict[str, Any] = {
            "soul": args.soul,
            "draw": args.draw,
            "card": args.card,
            "verdict": args.verdict,
        }
        if args.line is not None:
            params["line"] = args.line
        result = call(args, "verdict", params)
        return show(
            args, result, lambda r: f"{r['verdict']} on card {r['card']:04d}, draw {r['draw']}"
        )

    def status_page(args: argparse.Namespace) -> int:
        result = call(args, "status_page", {"soul": args.soul, "stamp": args.stamp})
        if args.out is None:
            sys.stdout.write(result["html"])
        else:
            from supervisor.paths import open_private

            with open_private(args.out) as out:  # the cards quote what the soul was told
                out.write(result["html"])
            print(f"wrote {args.out}")
        return 0

    def tide(args: argparse.Namespace) -> int:
        result = call(args, "tide", {"soul": args.soul, "close": args.close})
        show(args, result, lambda r: r["markdown"].rstrip("\n"))
        return 0 if result["complete"] else 3

    def ledger(args: argparse.Namespace) -> int:
        result = call(args, "ledger", {"soul": args.soul, "limit": args.limit})
        return show(args, result, _ledger_text)

    p = command("cards", cards, "a soul's conclusion cards")
    p.add_argument("soul")
    p.add_argument("--strict", action="store_true", help="check that cards/ and the database agree")
    p = command("lightning", lightning, "draw cards at random against a topic")
    p.add_argument("soul")
    p.add_argument("topic", nargs="?", default="")
    p.add_argument("--seed", type=int, help="reproduce a draw (see the ledger)")
    p.add_argument("--n", type=int, help="cards to draw (default: the soul's, 3)")
    p.add_argument("--exclude", action="append", default=[], metavar="PATTERN")
    p.add_argument(
        "--as-of", type=int, metavar="DRAW", help="reproduce a recorded draw (see the ledger)"
    )
    p = command("verdict", verdict, "your verdict on a card of a presented draw")
    p.add_argument("soul")
    p.add_argument("draw", type=int)
    p.add_argument("card", type=int)
    p.add_argument("verdict", choices=["strong", "approve", "neutral", "oppose"])
    p.add_argument("--line", type=int, help="the card line a strong approval points at")
    p = command("status-page", status_page, "write a soul's collision-memory status page")
    p.add_argument("soul")
    p.add_argument("--out", type=Path, help="the HTML file (default: standard output)")
    p.add_argument("--stamp", default="", help="footer text instead of the time")
    p = command("tide", tide, "the weekly reconciliation report (exit 3 if incomplete)")
    p.add_argument("soul")
    p.add_argument(
        "--close",
        type=int,
        action="append",
        default=[],
        metavar="CARD",
        help="apply the closure proposals for this card (close its answered questions)",
    )
    p = command("ledger", ledger, "every draw: seed, cards, verdicts, presented or not")
    p.add_argument("soul")
    p.add_argument("-n", "--limit", type=int, default=20)


def _cards_text(r: dict[str, Any]) -> str:
    lines = [
        f"{c['number']:04d} {c['kind']:<7} {len(c['conclusions'])} conclusions, "
        f"{len(c['questions']) - len(c.get('closed', []))} open questions  {c['title']}"
        for c in r["cards"]
    ] or ["(no cards yet)"]
    lines += [f"problem: {p}" for p in r["problems"]]
    return "\n".join(lines)


def _collision_text(c: dict[str, Any]) -> str:
    shown = f"presented ({c['criterion']})" if c["presented"] else "silent"
    cards = ", ".join(f"{n:04d}" for n in c["cards"])
    judged = f", judged by {c['judge']}" if c.get("judge", "builtin") != "builtin" else ""
    replay = f", reproduces draw {c['replay_of']}" if c.get("replay_of") is not None else ""
    return (
        f"draw {c['draw']}: cards {cards} on {c['topic']!r}: {shown}"
        f"  [seed {c['seed']}{judged}{replay}]"
    )


def _lightning_text(c: dict[str, Any]) -> str:
    lines = [_collision_text(c)]
    for v in c["verdicts"]:
        lines.append(f"  {'pass' if v['passed'] else 'no  '} {v['criterion']}: {v['reason']}")
        lines += [
            f"       card {line['card']:04d} {line['kind']} {line['number']}: {line['text']}"
            for line in v.get("lines", [])
        ]
    lines.append(f"  reproduce: {c['reproduce']}")
    return "\n".join(lines)


def _ledger_text(r: dict[str, Any]) -> str:
    lines = [_collision_text(c) for c in r["draws"]] or ["(no draws yet)"]
    if r["silence_rate"] is not None:
        lines.append(f"silence rate: {r['silence_rate']:.0%}")
    return "\n".join(lines)
