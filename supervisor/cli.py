"""The ``soupd`` command: ``start`` runs the daemon; every other command is a client.

Errors print one line on stderr and exit non-zero (1 for an error from the daemon or
the connection, 2 for usage and configuration errors). ``--json`` prints the raw
result of the socket call.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import sqlite3
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TextIO

import anyio
import msgspec

from channels.client import Client
from souls.check import Report as CheckReport
from souls.check import check as check_database
from supervisor import cli_knowledge
from supervisor.config import Settings, check_file, load_settings
from supervisor.errors import ConfigError, SoupdError
from supervisor.paths import locate

__all__ = ["main"]


def main(argv: Sequence[str] | None = None) -> int:
    _check_packages()
    args = _parser().parse_args(argv)
    try:
        code: int = args.handler(args)
    except ConfigError as error:
        print(f"soupd: config error: {error.message}", file=sys.stderr)
        return 2
    except SoupdError as error:
        print(f"soupd: {error.code}: {error.message}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    return code


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="soupd", description="A living memory for LLM agents.")
    parser.add_argument("--config", metavar="FILE", help="soupd.toml to use ($SOUPD_CONFIG)")
    parser.add_argument("--socket", metavar="PATH", help="daemon socket ($SOUPD_SOCKET)")
    parser.add_argument("--json", action="store_true", help="print the raw JSON result")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def command(name: str, handler: Callable[[argparse.Namespace], int], help: str) -> Any:
        p = sub.add_parser(name, help=help, description=help)
        p.set_defaults(handler=handler)
        return p

    command("start", _start, "run the daemon in the foreground (it never forks)")
    send = command("send", _send, "push one event into a soul")
    send.add_argument("soul")
    send.add_argument("text")
    for flag in ("kind", "channel", "sender", "group", "ref", "ts", "session"):
        send.add_argument(f"--{flag}")
    send.add_argument("--mentioned", action="store_true", help="the soul was addressed directly")
    imp = command("import", _import, "import events from a JSON-lines file (one event a line)")
    imp.add_argument("soul")
    imp.add_argument("file", type=Path)
    recall = command("recall", _recall, "recall memories for a query")
    recall.add_argument("soul")
    recall.add_argument("query")
    recall.add_argument("-k", type=int, default=None, help="how many (default: the soul's)")
    recall.add_argument("--explain", action="store_true", help="say why each item ranked")
    context = command("context", _context, "print the context block for a soul")
    context.add_argument("soul")
    context.add_argument("query", nargs="?")
    context.add_argument("--session", help="count against this session's recall budget")
    command("status", _status, "show the daemon's status")
    command("souls", _souls, "list the souls and their state")
    stats = command("stats", _stats, "counts and latencies of one soul")
    stats.add_argument("soul")
    reflect = command("reflect", _reflect, "make a soul reflect now (rewrites its MEMORY.md)")
    reflect.add_argument("soul")
    weekly = command("weekly", _weekly, "write a soul's weekly summary now")
    weekly.add_argument("soul")
    decay = command("decay", _decay, "run the nightly forgetting pass on a soul now")
    decay.add_argument("soul")
    decay.add_argument("--now", help="as of this time (ISO 8601), to test the curve")
    confidence = command("confidence", _confidence, "how well a soul knows a topic")
    confidence.add_argument("soul")
    confidence.add_argument("topic")
    homeostasis = command("homeostasis", _homeostasis, "measure a soul's drives now")
    homeostasis.add_argument("soul")
    remind = command("remind", _remind, "add a task with a due time to a soul's TASKS.md")
    remind.add_argument("soul")
    remind.add_argument("text")
    remind.add_argument("--at", required=True, help="when: ISO 8601 (UTC if no zone)")
    tasks = command("tasks", _tasks, "a soul's pending tasks, and lines of TASKS.md it can't read")
    tasks.add_argument("soul")
    forget = command("forget", _forget, "delete events and everything derived from them")
    forget.add_argument("soul")
    which = forget.add_mutually_exclusive_group(required=True)
    which.add_argument("--ref", help="the event with this ref")
    which.add_argument("--match", help="events whose text contains this (any case)")
    which.add_argument("--before", help="events before this time (ISO 8601)")
    which.add_argument("--all", action="store_true", help="every event of the soul")
    export = command("export", _export, "write a soul's events and derived state as JSON lines")
    export.add_argument("soul")
    export.add_argument("file", nargs="?", type=Path, help="default: standard output")
    backup = command("backup", _backup, "a consistent copy of a soul's database, while it runs")
    backup.add_argument("soul")
    backup.add_argument("file", type=Path)
    rebuild = command("rebuild", _rebuild, "recompute derived state and report differences")
    rebuild.add_argument("soul")
    verify = command(
        "check", _check, "verify a soul's database file, daemon running or not (exit 3 if bad)"
    )
    verify.add_argument("soul")
    # SUPPRESS: without the flag here, the global --json (before the command) still holds.
    verify.add_argument(
        "--json", action="store_true", default=argparse.SUPPRESS, help="print the report as JSON"
    )
    cards = command("cards", _cards, "a soul's conclusion cards")
    cards.add_argument("soul")
    cards.add_argument(
        "--strict", action="store_true", help="check that cards/ and the database agree"
    )
    lightning = command("lightning", _lightning, "draw cards at random against a topic")
    lightning.add_argument("soul")
    lightning.add_argument("topic", nargs="?", default="")
    lightning.add_argument("--seed", type=int, help="reproduce a draw (see the ledger)")
    lightning.add_argument("--n", type=int, help="cards to draw (default: the soul's, 3)")
    lightning.add_argument("--exclude", action="append", default=[], metavar="PATTERN")
    verdict = command("verdict", _verdict, "your verdict on a card of a presented draw")
    verdict.add_argument("soul")
    verdict.add_argument("draw", type=int)
    verdict.add_argument("card", type=int)
    verdict.add_argument("verdict", choices=["strong", "approve", "neutral", "oppose"])
    verdict.add_argument("--line", type=int, help="the card line a strong approval points at")
    page = command("status-page", _status_page, "write a soul's collision-memory status page")
    page.add_argument("soul")
    page.add_argument("--out", type=Path, help="the HTML file (default: standard output)")
    page.add_argument("--stamp", default="", help="footer text instead of the time")
    tide_cmd = command("tide", _tide, "the weekly reconciliation report (exit 3 if incomplete)")
    tide_cmd.add_argument("soul")
    ledger = command("ledger", _ledger, "every draw: seed, cards, verdicts, presented or not")
    ledger.add_argument("soul")
    ledger.add_argument("-n", "--limit", type=int, default=20)
    logs = command("logs", _logs, "the daemon's latest log lines (all, or one soul's)")
    logs.add_argument("soul", nargs="?")
    logs.add_argument("-n", "--lines", type=int, default=100)
    logs.add_argument("-f", "--follow", action="store_true", help="keep printing new lines")
    watch = command("watch", _watch, "print souls' outputs live (reflects, signals, wake-ups)")
    watch.add_argument("souls", nargs="*", metavar="SOUL")
    watch.add_argument("--kind", action="append", default=[], help="only this kind (repeatable)")
    cli_knowledge.register(command, _call, _print)
    mcp = command("mcp", _mcp, "serve the socket's tools to an MCP host over stdio")
    mcp.add_argument("--soul", help="work on this soul only (tools then take no soul)")
    config = command("config", lambda a: 2, "configuration tools")
    config_sub = config.add_subparsers(dest="config_command", required=True, metavar="ACTION")
    check = config_sub.add_parser("check", help="validate the configuration without starting")
    check.add_argument("file", nargs="?", type=Path)
    check.set_defaults(handler=_config_check)
    return parser


def _settings(args: argparse.Namespace) -> Settings:
    return load_settings(locate(os.environ, config=args.config, socket=args.socket))


def _socket_path(args: argparse.Namespace) -> Path:
    return _settings(args).socket


def _start(args: argparse.Namespace) -> int:
    from supervisor.daemon import Daemon
    from supervisor.logs import configure_logging

    # Souls' databases and brains are private to the daemon's user.
    os.umask(0o077)
    locations = locate(os.environ, config=args.config, socket=args.socket)
    settings = load_settings(locations)
    configure_logging(settings.daemon.log.level, settings.daemon.log.format)
    try:
        anyio.run(Daemon(settings, locations=locations).run)
    except SoupdError:
        raise
    except BaseExceptionGroup as group:
        first = _first_leaf(group)
        if isinstance(first, SoupdError):
            raise first from group
        raise
    return 0


def _first_leaf(group: BaseExceptionGroup[Any]) -> BaseException:
    first = group.exceptions[0]
    return _first_leaf(first) if isinstance(first, BaseExceptionGroup) else first


def _call(args: argparse.Namespace, method: str, params: dict[str, Any]) -> Any:
    async def go() -> Any:
        async with Client.connect(_socket_path(args)) as client:
            return await client.call(method, params)

    return anyio.run(go)


def _print(args: argparse.Namespace, result: Any, human: Callable[[Any], str]) -> int:
    if args.json:
        sys.stdout.write(msgspec.json.encode(result).decode() + "\n")
    else:
        text = human(result)
        if text:
            print(text)
    return 0


def _send(args: argparse.Namespace) -> int:
    params: dict[str, Any] = {"soul": args.soul, "text": args.text}
    for flag in ("kind", "channel", "sender", "group", "ref", "session"):
        if getattr(args, flag) is not None:
            params[flag] = getattr(args, flag)
    if args.ts is not None:
        params["ts"] = float(args.ts) if _is_number(args.ts) else args.ts
    if args.mentioned:
        params["mentioned"] = True
    result = _call(args, "event.push", params)

    def human(r: dict[str, Any]) -> str:
        if r["status"] == "stored":
            return f"stored event {r['event_id']} (salience {r['salience']:.2f})"
        if r["status"] == "duplicate":
            return f"duplicate of event {r['event_id']} (same ref); nothing stored"
        return f"dropped: salience {r['salience']:.2f} is below the attention threshold"

    return _print(args, result, human)


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _import(args: argparse.Namespace) -> int:
    from supervisor.importer import import_file

    socket = _socket_path(args)
    result = anyio.run(import_file, socket, args.soul, args.file, sys.stderr.isatty())

    def human(r: dict[str, Any]) -> str:
        lines = [
            f"stored {r['stored']}, dropped {r['dropped']}, duplicate {r['duplicate']}, "
            f"rejected {r['rejected']}"
            + (f", skipped {r['skipped']} derived records" if r.get("skipped") else "")
        ]
        if r["goals"] or r["links"] or r["claims"]:
            lines.append(
                f"restored {r['goals']} goals, {r['persons']} persons with {r['links']} "
                f"linked accounts, {r['claims']} stated claims"
            )
        lines += [f"  line {x['line']}: {x['code']}: {x['message']}" for x in r["reasons"]]
        return "\n".join(lines)

    _print(args, result, human)
    return 0


def _recall(args: argparse.Namespace) -> int:
    params: dict[str, Any] = {"soul": args.soul, "query": args.query}
    if args.k is not None:
        params["k"] = args.k
    if args.explain:
        params["explain"] = True
    result = _call(args, "recall", params)

    def human(r: dict[str, Any]) -> str:
        if not r["items"]:
            return "(nothing recalled)"
        rows = []
        for item in r["items"]:
            refs = f"  refs: {', '.join(item['refs'])}" if item["refs"] else ""
            rows.append(
                f"[m{item['id']}] {item['score']:7.3f} {item['via']:<8} {item['text']}{refs}"
            )
            rows += [f"    {reason}" for reason in item.get("explain", {}).get("reasons", [])]
        return "\n".join(rows)

    return _print(args, result, human)


def _context(args: argparse.Namespace) -> int:
    params: dict[str, Any] = {"soul": args.soul}
    if args.query:
        params["query"] = args.query
    if args.session:
        params["session"] = args.session
    result = _call(args, "context", params)
    return _print(args, result, lambda r: r["text"].rstrip("\n") or "(empty context)")


def _status(args: argparse.Namespace) -> int:
    result = _call(args, "daemon.status", {})

    def human(r: dict[str, Any]) -> str:
        lines = [f"{k}: {v}" for k, v in r.items() if k != "channels"]
        for c in r.get("channels", []):
            state = c["state"]
            if c["retry_in_s"] is not None:
                state += f", retry in {c['retry_in_s']:.1f} s"
            error = f"; last error: {c['last_error']}" if c["last_error"] else ""
            lines.append(
                f"channel {c['name']} ({c['kind']}): {state}; {c['stored']} stored, "
                f"{c['unacknowledged']} unacknowledged, {c['sent']} sent, "
                f"{c['outbox_overflow']} dropped outbound{error}"
            )
        return "\n".join(lines)

    return _print(args, result, human)


def _souls(args: argparse.Namespace) -> int:
    result = _call(args, "soul.list", {})

    def human(r: dict[str, Any]) -> str:
        rows = [f"{'NAME':<24} {'STATE':<11} {'RESTARTS':>8} {'QUEUED':>7}"]
        for s in r["souls"]:
            error = f"  {s['last_error']}" if s["last_error"] else ""
            rows.append(
                f"{s['name']:<24} {s['state']:<11} {s['restarts']:>8} {s['queued']:>7}{error}"
            )
        return "\n".join(rows)

    return _print(args, result, human)


def _stats(args: argparse.Namespace) -> int:
    result = _call(args, "soul.stats", {"soul": args.soul})
    return _print(args, result, _key_values)


def _key_values(result: dict[str, Any]) -> str:
    return "\n".join(f"{key}: {value}" for key, value in result.items())


def _reflect(args: argparse.Namespace) -> int:
    return _print(args, _call(args, "reflect", {"soul": args.soul}), _key_values)


def _weekly(args: argparse.Namespace) -> int:
    return _print(args, _call(args, "weekly", {"soul": args.soul}), _key_values)


def _decay(args: argparse.Namespace) -> int:
    params: dict[str, Any] = {"soul": args.soul}
    if args.now:
        params["now"] = args.now
    return _print(args, _call(args, "decay", params), _key_values)


def _homeostasis(args: argparse.Namespace) -> int:
    return _print(args, _call(args, "homeostasis", {"soul": args.soul}), _key_values)


def _confidence(args: argparse.Namespace) -> int:
    result = _call(args, "confidence", {"soul": args.soul, "topic": args.topic})

    def human(r: dict[str, Any]) -> str:
        lines = [
            f"{r['state']} (score {r['score']:.2f}: coverage {r['coverage']:.2f}, "
            f"somatic {r['somatic']:.2f})"
        ]
        lines += [f"  gap: {gap}" for gap in r["gaps"]]
        return "\n".join(lines)

    return _print(args, result, human)


def _tasks_text(r: dict[str, Any]) -> str:
    def when(seconds: float) -> str:
        return dt.datetime.fromtimestamp(seconds, dt.UTC).strftime("%Y-%m-%d %H:%M UTC")

    lines = [f"{when(t['due'])}  {t['text']}  (line {t['line']})" for t in r["pending"]]
    lines = lines or ["(no pending tasks)"]
    lines += [f"fired {when(t['fired_at'])}: {t['text']}" for t in r.get("fired", [])[:5]]
    lines += [f"line {e['line']}: {e['problem']}  [{e['source']}]" for e in r["errors"]]
    return "\n".join(lines)


def _remind(args: argparse.Namespace) -> int:
    params = {"soul": args.soul, "text": args.text, "at": args.at}
    return _print(args, _call(args, "task.add", params), _tasks_text)


def _tasks(args: argparse.Namespace) -> int:
    result = _call(args, "tasks", {"soul": args.soul})
    _print(args, result, _tasks_text)
    return 3 if result["errors"] else 0


def _forget(args: argparse.Namespace) -> int:
    params: dict[str, Any] = {"soul": args.soul}
    for key in ("ref", "match", "before"):
        if getattr(args, key) is not None:
            params[key] = getattr(args, key)
    if args.all:
        params["all"] = True
    result = _call(args, "forget", params)

    def human(r: dict[str, Any]) -> str:
        return (
            f"forgot {r['events']} events, {r['memories']} memories, {r['edges']} edges, "
            f"{r['summaries']} summary versions; {r['markers']} markers recomputed"
        )

    return _print(args, result, human)


def _export(args: argparse.Namespace) -> int:
    async def go(out: TextIO) -> int:
        count = 0
        async with Client.connect(_socket_path(args)) as client:
            cursor = None
            while True:
                page = await client.call("export", {"soul": args.soul, "cursor": cursor})
                for record in page["records"]:
                    out.write(msgspec.json.encode(record).decode() + "\n")
                count += len(page["records"])
                cursor = page["cursor"]
                if cursor is None:
                    return count

    if args.file is None:
        anyio.run(go, sys.stdout)
        return 0
    with open(args.file, "w", encoding="utf-8") as out:
        count = anyio.run(go, out)
    print(f"exported {count} records to {args.file}")
    return 0


def _backup(args: argparse.Namespace) -> int:
    result = _call(args, "backup", {"soul": args.soul, "path": str(args.file.resolve())})
    return _print(args, result, lambda r: f"backed up {r['bytes']} bytes to {r['path']}")


def _rebuild(args: argparse.Namespace) -> int:
    return _print(args, _call(args, "rebuild", {"soul": args.soul}), _key_values)


def _check(args: argparse.Namespace) -> int:
    # The file itself, read-only: no daemon needed, and a running one is not disturbed.
    settings = _settings(args)
    if args.soul not in settings.souls:
        configured = ", ".join(sorted(settings.souls))
        print(
            f"soupd: unknown_soul: no soul named {args.soul!r} in {settings.souls_dir} "
            f"(configured: {configured}); `soupd config check` lists the souls",
            file=sys.stderr,
        )
        return 1
    database = settings.soul_dir(args.soul) / "soul.db"
    try:
        report = check_database(database)
    except FileNotFoundError:
        print(
            f"soupd: no_database: {database} does not exist: the daemon creates it when it "
            f"first wakes soul {args.soul!r}; if the daemon runs with another --config or "
            "environment (systemd), run the check with the same",
            file=sys.stderr,
        )
        return 1
    except (OSError, sqlite3.Error) as error:
        cause = error.strerror if isinstance(error, OSError) else error
        print(
            f"soupd: cannot_check: cannot read {database}: {cause}; run the check as the "
            "daemon's user, with room in $TMPDIR for a copy of the database",
            file=sys.stderr,
        )
        return 1
    problems = _check_problems(report, args.soul)
    result = {"ok": report.ok, "problems": problems, **msgspec.to_builtins(report)}
    _print(args, result, lambda _: _check_text(report))
    for problem in problems:
        print(f"soupd: check failed: {problem}", file=sys.stderr)
    return 0 if report.ok else 3


def _check_text(r: CheckReport) -> str:
    def verdict(ok: bool, detail: str) -> str:
        return ("ok" if ok else "FAILED") + (f": {detail}" if detail else "")

    found = r.integrity if not r.integrity_ok else []
    lines = [
        f"database    {r.database}",
        f"integrity   {verdict(r.integrity_ok, f'{len(found)} finding(s)' if found else '')}",
        *(f"  {line}" for line in found[:5]),
        f"fts         {verdict(r.fts_ok, '' if r.fts_ok else r.fts)}",
    ]
    c = r.counts
    if c is None:
        lines.append(f"tables      FAILED: {r.unreadable}")
        return "\n".join(lines)
    applied = len(r.applied) - len(r.unknown)
    schema = f"{applied} of {applied + len(r.pending)} migrations applied"
    if r.pending:
        schema += f"; {len(r.pending)} pending (applied when the daemon next opens it)"
    if r.unknown:
        schema += f"; unknown to this soupd: {', '.join(r.unknown)}"
    lines.append(f"schema      {verdict(r.schema_ok, schema)}")
    index = f"{c.indexed} rows for {c.visible} visible memories"
    if not r.index_ok:
        index += (
            f"; {c.index_rows_missing} memories missing from it, "
            f"{c.index_rows_extra} rows of no visible memory"
        )
    lines += [
        f"index       {verdict(r.index_ok, index)}",
        f"events      {c.events}",
        f"memories    {c.memories} ({c.visible} visible)",
        f"claims      {c.claims}",
        f"cards       {c.cards}",
    ]
    return "\n".join(lines)


def _check_problems(r: CheckReport, soul: str) -> list[str]:
    """One line per failed check: the file, what is wrong, what to do."""
    where = r.database
    restore = f"stop the daemon and restore the file from a copy made by `soupd backup {soul} FILE`"
    reindex = (
        f"{restore}, or re-derive it from the events: `soupd export {soul} FILE`, stop the "
        f"daemon, move {where} away, start the daemon, `soupd import {soul} FILE`"
    )
    if not r.integrity_ok:
        # What else failed follows from it, and restoring the file mends that too.
        return [f"{where} is corrupt (PRAGMA integrity_check: {r.integrity[0]}); {restore}"]
    problems = []
    if r.counts is None:
        problems.append(f"{where}: its tables cannot be read ({r.unreadable}); {restore}")
    if not r.fts_ok:
        problems.append(
            f"{where}: the full-text index fails FTS5's integrity-check ({r.fts}), so recall "
            f"may miss memories; {reindex}"
        )
    if r.counts is not None and not r.index_ok:
        problems.append(
            f"{where}: the full-text index disagrees with the memories "
            f"({r.counts.index_rows_missing} missing from it, {r.counts.index_rows_extra} "
            f"rows of no visible memory); {reindex}"
        )
    if not r.schema_ok:
        problems.append(
            f"{where} was written by a newer soupd (migrations {', '.join(r.unknown)}); "
            "upgrade soupd before starting the daemon on it"
        )
    return problems


def _cards(args: argparse.Namespace) -> int:
    result = _call(args, "cards", {"soul": args.soul, "strict": args.strict})

    def human(r: dict[str, Any]) -> str:
        lines = [
            f"{c['number']:04d} {c['kind']:<7} {len(c['conclusions'])} conclusions, "
            f"{len(c['questions'])} open questions  {c['title']}"
            for c in r["cards"]
        ] or ["(no cards yet)"]
        lines += [f"problem: {p}" for p in r["problems"]]
        return "\n".join(lines)

    _print(args, result, human)
    return 3 if result["problems"] else 0


def _collision_text(c: dict[str, Any]) -> str:
    shown = f"presented ({c['criterion']})" if c["presented"] else "silent"
    cards = ", ".join(f"{n:04d}" for n in c["cards"])
    judged = f", judged by {c['judge']}" if c.get("judge", "builtin") != "builtin" else ""
    return f"draw {c['draw']}: cards {cards} on {c['topic']!r}: {shown}  [seed {c['seed']}{judged}]"


def _lightning(args: argparse.Namespace) -> int:
    params: dict[str, Any] = {"soul": args.soul, "topic": args.topic, "exclude": args.exclude}
    if args.seed is not None:
        params["seed"] = args.seed
    if args.n is not None:
        params["n"] = args.n
    result = _call(args, "lightning", params)

    def human(c: dict[str, Any]) -> str:
        lines = [_collision_text(c)]
        lines += [
            f"  {'pass' if v['passed'] else 'no  '} {v['criterion']}: {v['reason']}"
            for v in c["verdicts"]
        ]
        lines.append(f"  reproduce: {c['reproduce']}")
        return "\n".join(lines)

    return _print(args, result, human)


def _verdict(args: argparse.Namespace) -> int:
    params: dict[str, Any] = {
        "soul": args.soul,
        "draw": args.draw,
        "card": args.card,
        "verdict": args.verdict,
    }
    if args.line is not None:
        params["line"] = args.line
    result = _call(args, "verdict", params)
    return _print(
        args, result, lambda r: f"{r['verdict']} on card {r['card']:04d}, draw {r['draw']}"
    )


def _status_page(args: argparse.Namespace) -> int:
    result = _call(args, "status_page", {"soul": args.soul, "stamp": args.stamp})
    if args.out is None:
        sys.stdout.write(result["html"])
    else:
        args.out.write_text(result["html"], encoding="utf-8")
        print(f"wrote {args.out}")
    return 0


def _tide(args: argparse.Namespace) -> int:
    result = _call(args, "tide", {"soul": args.soul})
    _print(args, result, lambda r: r["markdown"].rstrip("\n"))
    return 0 if result["complete"] else 3


def _ledger(args: argparse.Namespace) -> int:
    result = _call(args, "ledger", {"soul": args.soul, "limit": args.limit})

    def human(r: dict[str, Any]) -> str:
        lines = [_collision_text(c) for c in r["draws"]] or ["(no draws yet)"]
        if r["silence_rate"] is not None:
            lines.append(f"silence rate: {r['silence_rate']:.0%}")
        return "\n".join(lines)

    return _print(args, result, human)


def _logs(args: argparse.Namespace) -> int:
    async def go() -> None:
        async with Client.connect(_socket_path(args)) as client:
            params: dict[str, Any] = {"lines": args.lines}
            if args.soul:
                params["soul"] = args.soul
            for line in (await client.call("logs", params))["lines"]:
                print(line, flush=True)
            if not args.follow:
                return
            souls = [args.soul] if args.soul else []
            async with client.subscribe(souls, ["log"]) as stream:
                async for output in stream:
                    print(output["payload"].get("line", output["payload"]), flush=True)

    anyio.run(go)
    return 0


def _watch(args: argparse.Namespace) -> int:
    async def go() -> None:
        async with (
            Client.connect(_socket_path(args)) as client,
            client.subscribe(args.souls, args.kind) as outputs,
        ):
            async for output in outputs:
                if args.json:
                    line = msgspec.json.encode(output).decode()
                else:
                    payload = " ".join(f"{k}={v}" for k, v in output["payload"].items())
                    line = f"{output['soul'] or '-'} {output['kind']}: {payload}"
                print(line, flush=True)

    anyio.run(go)
    return 0


def _mcp(args: argparse.Namespace) -> int:
    # Imported here: the MCP SDK (pydantic, starlette) would slow every other command.
    from channels.mcp import serve

    anyio.run(serve, _socket_path(args), args.soul)
    return 0


def _config_check(args: argparse.Namespace) -> int:
    if args.file is not None:
        kind = check_file(args.file)
        print(f"{args.file}: ok ({kind} config)")
        return 0
    settings = _settings(args)
    where = settings.config_file if settings.config_file.exists() else "(no soupd.toml: defaults)"
    print(f"{where}: ok; souls: {', '.join(sorted(settings.souls))} (from {settings.souls_dir})")
    return 0


def _check_packages() -> None:
    """Fail clearly when another distribution's ``supervisor`` or ``channels`` shadows ours."""
    import channels
    import souls
    import supervisor

    home = Path(souls.__file__).parent.parent
    for module in (supervisor, channels):
        origin = Path(module.__file__ or "").parent.parent
        if origin != home or (module is supervisor and not getattr(module, "__soupd__", False)):
            sys.exit(
                f"soupd: the '{module.__name__}' package at {module.__file__} is not soupd's; "
                "install soupd into its own virtualenv (see README)"
            )
