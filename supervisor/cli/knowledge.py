"""The CLI for what a soul knows and wants: claims, goals, persons, why a context said
what it said, the memory map and reading one item (``soupd claims|claim|goals|goal|person|
persons|why|map|read``).

Registered into the main parser by :func:`register`; each command is one socket call
whose reply is printed for people (or as JSON with ``--json``).
"""

from __future__ import annotations

import argparse
import datetime as dt
from typing import Any

from supervisor.cli.render import TIME_KEYS, human_value
from supervisor.cli.shared import Call, Command, Show
from supervisor.errors import InvalidParams

__all__ = ["register"]


def register(command: Command, call: Call, show: Show) -> None:
    def claims(args: argparse.Namespace) -> int:
        result = call(args, "claims", {"soul": args.soul, "all": args.all})
        return show(args, result, _claims_text)

    def claim(args: argparse.Namespace) -> int:
        if args.action == "add":
            # `claim add SOUL VALUE`: an entry being stated has no id yet, so the one
            # positional after the soul is its value.
            if args.id is not None and args.value is not None:
                raise InvalidParams(
                    "claim add takes the entry alone (no id): quote it as one argument"
                )
            params: dict[str, Any] = {
                "soul": args.soul,
                "value": args.value if args.value is not None else args.id,
                "type": args.type,
                "subject": args.subject,
                "confidence": args.confidence,
            }
            if args.slot:
                params["slot"] = args.slot
            result = call(args, "claim.add", params)
        else:
            params = {"soul": args.soul, "id": _number(args.id, "c"), "value": args.value or ""}
            result = call(args, f"claim.{args.action}", params)
        return show(args, result, lambda r: _claim_line(r["claim"]) + _closed(r["closed"]))

    def goals(args: argparse.Namespace) -> int:
        result = call(args, "goals", {"soul": args.soul})
        return show(args, result, lambda r: "\n".join(map(_goal_line, r["goals"])) or "(no goals)")

    def goal(args: argparse.Namespace) -> int:
        params: dict[str, Any] = {
            "soul": args.soul,
            "action": args.action,
            "statement": args.statement or "",
            "speaker": args.speaker,
            "domain": args.domain,
            "triggers": args.trigger,
            "note": args.note,
        }
        if args.priority is not None:
            params["priority"] = args.priority
        if args.id is not None:
            params["goal_id"] = _number(args.id, "g")
        result = call(args, "goal.update", params)
        return show(args, result, lambda r: f"{r['outcome']}: {_goal_line(r['goal'])}")

    def why(args: argparse.Namespace) -> int:
        params: dict[str, Any] = {"soul": args.soul}
        if args.hash:
            params["hash"] = args.hash
        return show(args, call(args, "why", params), _why_text)

    def memory_map(args: argparse.Namespace) -> int:
        result = call(args, "map", {"soul": args.soul, "budget": args.budget})
        return show(args, result, lambda r: r["map"] or "(nothing to map yet)")

    def read(args: argparse.Namespace) -> int:
        result = call(args, "memory.read", {"soul": args.soul, "id": args.id})
        return show(args, result, _read_text)

    def person(args: argparse.Namespace) -> int:
        params = {"soul": args.soul, "person": args.person, "identity": args.identity}
        result = call(args, "person.link", params)
        moved = f" (was {result['moved_from']})" if result["moved_from"] else ""
        return show(
            args,
            result,
            lambda r: (
                f"{r['identity']} is {r['person']}{moved}; {r['events']} events and "
                f"{r['claims']} claims now follow {r['person']}"
            ),
        )

    def persons(args: argparse.Namespace) -> int:
        result = call(args, "persons", {"soul": args.soul})
        return show(
            args,
            result,
            lambda r: (
                "\n".join(
                    f"{p['name']}: {', '.join(p['identities']) or '(no accounts)'}"
                    for p in r["persons"]
                )
                or "(no persons)"
            ),
        )

    p = command("person", person, "link an account (CHANNEL:ID) to a person")
    p.add_argument("action", choices=["link"])
    p.add_argument("soul")
    p.add_argument("person")
    p.add_argument("identity", metavar="CHANNEL:ID")
    p = command("persons", persons, "a soul's persons and their accounts")
    p.add_argument("soul")
    p = command("claims", claims, "a soul's facts, rules and claims, and open questions")
    p.add_argument("soul")
    p.add_argument("--all", action="store_true", help="closed entries too (the history)")
    p = command("claim", claim, "state, update, correct or retract an entry")
    p.add_argument("action", choices=["add", "update", "correct", "retract"])
    p.add_argument("soul")
    p.add_argument(
        "id", nargs="?", help="the entry (c7) to update, correct or retract; add: the entry"
    )
    p.add_argument("value", nargs="?", help="the new value")
    p.add_argument("--slot", help="a claim slot such as pet_name (add)")
    p.add_argument("--type", default="fact", choices=["fact", "rule", "event"])
    p.add_argument("--subject", default="user", help="whom it is about (add)")
    p.add_argument("--confidence", default="high", choices=["high", "medium", "low"])
    p = command("goals", goals, "a soul's goals with their state and priority")
    p.add_argument("soul")
    p = command("goal", goal, "a goal update: new, progress, change, achieve, abandon...")
    p.add_argument("soul")
    p.add_argument(
        "action", choices=["new", "progress", "change", "achieve", "abandon", "pause", "resume"]
    )
    p.add_argument("statement", nargs="?", help="the goal (new, change) or words to find it")
    p.add_argument("--id", help="the goal (g3), instead of finding it by its statement")
    p.add_argument("--speaker", default="user", help="who holds the goal")
    p.add_argument("--domain", default="")
    p.add_argument("--priority", type=int, help="1-5, 5 highest")
    p.add_argument("--trigger", action="append", default=[], help="a bridge phrase (1-2)")
    p.add_argument("--note", default="", help="progress note")
    p = command("why", why, "what a context injected and why")
    p.add_argument("soul")
    p.add_argument("hash", nargs="?", help="the context's hash (default: the latest)")
    p = command("map", memory_map, "the memory map: situations, goals, archive, evidence")
    p.add_argument("soul")
    p.add_argument("--budget", type=int, default=2000, help="characters (default 2000)")
    p = command("read", read, "one item by the id a map or context shows (m12, c7, g1...)")
    p.add_argument("soul")
    p.add_argument("id")


def _number(label: str | None, letter: str) -> int:
    if label is None:
        raise InvalidParams(f"say which entry, e.g. {letter}7")
    digits = label[1:] if label[:1] in (letter, letter.upper(), "r") else label
    if not digits.isdigit():
        raise InvalidParams(f"{label!r} is not an id like {letter}7")
    return int(digits)


def _when(seconds: float | None) -> str:
    if seconds is None:
        return "…"
    return dt.datetime.fromtimestamp(seconds, dt.UTC).strftime("%Y-%m-%d %H:%M")


def _claim_line(c: dict[str, Any]) -> str:
    letter = "r" if c["type"] == "rule" else "c"
    what = f"{c['subject']} {c['slot']} = {c['value']}" if c["slot"] else c["value"]
    mark = " (needs verification)" if c["confidence"] == "low" else ""
    valid = f"valid {_when(c['valid_from'])} → {_when(c['valid_to'])}"
    return f"{letter}{c['id']} [{c['state']}] {what}{mark}  ({c['source']}, {valid})"


def _closed(ids: list[int]) -> str:
    return "\nclosed: " + ", ".join(f"c{i}" for i in ids) if ids else ""


def _claims_text(r: dict[str, Any]) -> str:
    lines = [_claim_line(c) for c in r["claims"]] or ["(no entries)"]
    lines += [f"q{q['id']} [unanswered] {q['text']}" for q in r["questions"]]
    lines.append(f"AI-side fidelity: {r['fidelity_ai']:.2f}")
    return "\n".join(lines)


def _goal_line(g: dict[str, Any]) -> str:
    triggers = f"; when: {'; '.join(g['triggers'])}" if g["triggers"] else ""
    domain = f"{g['domain']}: " if g["domain"] else ""
    return (
        f"g{g['id']} [{g['state']}] p{g['priority']} {domain}{g['statement']}"
        f"  (held by {g['speaker']}{triggers})"
    )


def _why_text(r: dict[str, Any]) -> str:
    query = repr(r["query"]) if r["query"] else "no query"
    lines = [
        f"context {r['hash']} at {_when(r['created'])} UTC for {query}: {r['mode']} mode, "
        f"{r['chars']} characters, {r['recalled']} of them recalled"
    ]
    if r["paused"]:
        lines.append("recalled items were paused: the session budget was spent")
    lines += [f"  {i['id']:>6}  {i['score']:.3f}  {i['kind']}: {i['reason']}" for i in r["items"]]
    lines += [
        f"  section {s['name']}: {s['chars']} characters" + (" (cut)" if s["truncated"] else "")
        for s in r["sections"]
    ]
    return "\n".join(lines)


def _read_text(r: dict[str, Any]) -> str:
    lines = []
    for key, value in r.items():
        if isinstance(value, dict):
            lines.append(f"{key}:")
            lines += [f"  {k}: {human_value(v)}" for k, v in value.items()]
        elif isinstance(value, list):
            lines.append(f"{key}: {len(value)}")
            lines += [
                f"  - {_claim_line(v) if isinstance(v, dict) and 'slot' in v else human_value(v)}"
                for v in value
            ]
        else:
            timed = key in TIME_KEYS and isinstance(value, float | int)
            lines.append(f"{key}: {_when(value) if timed else human_value(value)}")
    return "\n".join(lines)
