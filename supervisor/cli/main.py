"""The ``soupd`` command: ``start`` runs the daemon; every other command is a client.

Errors print one line on stderr (one JSON object under ``--json``) and the exit status
says the cause (:mod:`supervisor.cli.exits`). ``--json``, before or after the command,
prints the result of the socket call with its times in ISO 8601
(:mod:`supervisor.cli.render`).

Starting is cheap: the parser imports nothing but the standard library's argparse and
the command modules, which import what they need when they run (``soupd --help`` does
not load the socket client, msgspec or any configuration Struct; a test holds that).
A client command reads ``[socket] path`` of ``soupd.toml`` and no soul file
(:func:`supervisor.config_file.client_socket`).

The commands of a topic live in sibling modules of :mod:`supervisor.cli`, each with a
``register`` that adds them through ``command`` and the helpers it is handed (see
:mod:`supervisor.cli.shared`).
Here: the parser, the dispatch, those helpers and the daemon's own commands. Commands
are registered in the order ``--help`` lists them (so ``import`` stays here, before
``recall``, not beside ``export`` in :mod:`supervisor.cli.data`).
"""

from __future__ import annotations

import argparse
import functools
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

from supervisor.cli import cards, check, data, exits, knowledge, loop, memories, soul, tasks
from supervisor.errors import SoupdError
from supervisor.output_kinds import OUTPUT_KINDS

if TYPE_CHECKING:
    from supervisor.config import Settings

__all__ = ["main"]


def main(argv: Sequence[str] | None = None) -> int:
    _check_packages()
    argv = sys.argv[1:] if argv is None else list(argv)
    as_json = "--json" in argv
    try:
        args = _parser(as_json).parse_args(argv)
        code: int = args.handler(args)
    except SoupdError as error:
        exits.say_error(error.code, error.message, as_json=as_json)
        return exits.status_of(error)
    except KeyboardInterrupt:
        return exits.INTERRUPTED
    except BaseException as error:
        if not _pipe_closed(error):
            raise
        # The reader went away (`soupd cards x | head`): nothing more to say, to anyone.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return exits.PIPE_CLOSED
    return code


def _pipe_closed(error: BaseException) -> bool:
    """Whether ``error`` is (or wraps, from a task group) a write to a closed stdout."""
    if isinstance(error, BaseExceptionGroup):
        return all(_pipe_closed(e) for e in error.exceptions)
    return isinstance(error, BrokenPipeError)


class _Parser(argparse.ArgumentParser):
    """argparse, saying a usage error as JSON under ``--json`` (exit 2 either way)."""

    as_json = False

    def error(self, message: str) -> NoReturn:
        if not self.as_json:
            super().error(message)
        exits.say_error("usage", f"{message}; see `{self.prog} --help`", as_json=True)
        sys.exit(exits.USAGE)


class _Version(argparse.Action):
    """``--version``, read from the installed distribution only when asked for."""

    def __call__(self, parser: argparse.ArgumentParser, *_: Any, **__: Any) -> None:
        import importlib.metadata

        print(f"soupd {importlib.metadata.version('soupd')}")
        parser.exit()


def _parser(as_json: bool = False) -> argparse.ArgumentParser:
    _Parser.as_json = as_json
    parser = _Parser(prog="soupd", description="A living memory for LLM agents.")
    parser.add_argument("--version", action=_Version, nargs=0, help="print the version")
    parser.add_argument("--config", metavar="FILE", help="soupd.toml to use ($SOUPD_CONFIG)")
    parser.add_argument("--socket", metavar="PATH", help="daemon socket ($SOUPD_SOCKET)")
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def command(name: str, handler: Callable[[argparse.Namespace], int], help: str) -> Any:
        p = sub.add_parser(name, help=help, description=help)
        p.set_defaults(handler=handler)
        _json_flag(p)
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
    recall.add_argument("--sender", help="only what this sender (or linked person) said")
    recall.add_argument("--session", help="only memories of this session")
    recall.add_argument("--kind", help="only memories of this kind (message, dm, voice...)")
    recall.add_argument("--since", help="only from this time on (ISO 8601 or Unix seconds)")
    recall.add_argument("--until", help="only before this time (ISO 8601 or Unix seconds)")
    context = command("context", _context, "print the context block for a soul")
    context.add_argument("soul")
    context.add_argument("query", nargs="?")
    context.add_argument("--session", help="count against this session's recall budget")
    command("status", _status, "show the daemon's status")
    command("migrate", _migrate, "bring the shared PostgreSQL database ([store]) up to date")
    soul.register(command, _call, _print)
    loop.register(command, _call, _print)
    tasks.register(command, _call, _print)
    data.register(command, _call, _print, _socket_path)
    memories.register(command, _call, _print)
    check.register(command, _print, _settings)
    cards.register(command, _call, _print)
    logs = command("logs", _logs, "the daemon's latest log lines (all, or one soul's)")
    logs.add_argument("soul", nargs="?")
    logs.add_argument("-n", "--lines", type=_count, default=100, help="how many (0: none)")
    logs.add_argument("-f", "--follow", action="store_true", help="keep printing new lines")
    watch = command("watch", _watch, "print souls' outputs live (reflects, signals, wake-ups)")
    watch.add_argument("souls", nargs="*", metavar="SOUL")
    watch.add_argument(
        "--kind",
        action="append",
        default=[],
        choices=OUTPUT_KINDS,
        help="only this kind (repeatable; default: all but log)",
    )
    knowledge.register(command, _call, _print)
    mcp = command("mcp", _mcp, "serve the socket's tools to an MCP host over stdio")
    mcp.add_argument("--soul", help="work on this soul only (tools then take no soul)")
    config = command("config", lambda a: 2, "configuration tools")
    config_sub = config.add_subparsers(dest="config_command", required=True, metavar="ACTION")
    config_check = config_sub.add_parser(
        "check", help="validate the configuration without starting"
    )
    config_check.add_argument("file", nargs="?", type=Path)
    config_check.set_defaults(handler=_config_check)
    _json_flag(config_check)
    return parser


def _json_flag(p: argparse.ArgumentParser) -> None:
    # SUPPRESS: without the flag here, the global --json (before the command) still holds.
    p.add_argument(
        "--json", action="store_true", default=argparse.SUPPRESS, help="print the result as JSON"
    )


def _settings(args: argparse.Namespace) -> Settings:
    from supervisor.config import load_settings
    from supervisor.paths import locate

    # Lenient: one bad soul file must not stop a command about another (config check
    # is the place that reports it).
    return load_settings(locate(os.environ, config=args.config, socket=args.socket), lenient=True)


def _socket_path(args: argparse.Namespace) -> Path:
    from supervisor.config_file import client_socket
    from supervisor.paths import locate

    return client_socket(locate(os.environ, config=args.config, socket=args.socket))


def _start(args: argparse.Namespace) -> int:
    import anyio

    from supervisor.config import load_settings
    from supervisor.daemon import Daemon
    from supervisor.logs import configure_logging

    # Souls' databases and brains are private to the daemon's user.
    os.umask(0o077)
    from supervisor.paths import locate

    locations = locate(os.environ, config=args.config, socket=args.socket)
    # A bad soul file refuses that soul only (logged at start), not the daemon.
    settings = load_settings(locations, lenient=True)
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


def _migrate(args: argparse.Namespace) -> int:
    import anyio

    settings = _settings(args)
    store = settings.daemon.store
    if store.backend != "postgres":
        result: dict[str, Any] = {"backend": store.backend, "applied": [], "migrations": []}
        nothing = "the souls' SQLite files are migrated as each soul opens: nothing to do"
        return _print(args, result, lambda _: nothing)
    try:
        from supervisor.shared import migrate_database
    except ModuleNotFoundError as missing:
        if missing.name != "asyncpg":
            raise
        from supervisor.config import postgres_missing

        raise postgres_missing(settings.config_file) from missing

    applied, every = anyio.run(
        functools.partial(migrate_database, store, config_file=str(settings.config_file))
    )
    result = {"backend": "postgres", "applied": applied, "migrations": every}

    def human(_: Any) -> str:
        if not applied:
            return f"up to date: {len(every)} migrations, the last {every[-1]}"
        return f"applied {len(applied)}: {', '.join(applied)}; now at {every[-1]}"

    return _print(args, result, human)


def _first_leaf(group: BaseExceptionGroup[Any]) -> BaseException:
    first = group.exceptions[0]
    return _first_leaf(first) if isinstance(first, BaseExceptionGroup) else first


def _call(args: argparse.Namespace, method: str, params: dict[str, Any]) -> Any:
    import anyio

    from channels.client import Client

    async def go() -> Any:
        async with Client.connect(_socket_path(args)) as client:
            return await client.call(method, params)

    return anyio.run(go)


def _print(args: argparse.Namespace, result: Any, human: Callable[[Any], str]) -> int:
    if args.json:
        import msgspec

        from supervisor.cli.render import iso_times

        sys.stdout.write(msgspec.json.encode(iso_times(result)).decode() + "\n")
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
    import anyio

    from supervisor.cli.importer import import_file

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
    # A line the daemon (or the file) refused is refused input, though the rest went in.
    return exits.REFUSED if result["rejected"] else exits.OK


def _recall(args: argparse.Namespace) -> int:
    params: dict[str, Any] = {"soul": args.soul, "query": args.query}
    if args.k is not None:
        params["k"] = args.k
    if args.explain:
        params["explain"] = True
    for name in ("sender", "session", "kind", "since", "until"):
        value = getattr(args, name)
        if value is not None:
            # A time given as digits is Unix seconds; anything else is read as ISO 8601.
            params[name] = _seconds(value) if name in ("since", "until") else value
    result = _call(args, "recall", params)

    def human(r: dict[str, Any]) -> str:
        if not r["items"]:
            return "(nothing recalled)"
        rows = []
        for item in r["items"]:
            refs = f"  refs: {', '.join(item['refs'])}" if item["refs"] else ""
            relevance = item.get("relevance", 0.0)
            rows.append(f"[m{item['id']}] {relevance:5.3f} {item['via']:<9} {item['text']}{refs}")
            rows += [f"    {reason}" for reason in item.get("explain", {}).get("reasons", [])]
        return "\n".join(rows)

    return _print(args, result, human)


def _seconds(value: str) -> float | str:
    try:
        return float(value)
    except ValueError:
        return value


def _context(args: argparse.Namespace) -> int:
    params: dict[str, Any] = {"soul": args.soul}
    if args.query:
        params["query"] = args.query
    if args.session:
        params["session"] = args.session
    result = _call(args, "context", params)
    return _print(args, result, lambda r: r["text"].rstrip("\n") or "(empty context)")


def _status(args: argparse.Namespace) -> int:
    from supervisor.cli.render import key_values

    result = _call(args, "daemon.status", {})

    def human(r: dict[str, Any]) -> str:
        lines = [key_values({k: v for k, v in r.items() if k not in ("channels", "http")})]
        http = r.get("http")
        if http is None:
            lines.append("http API: off ([http] enabled = false)")
        else:
            where = f" at http://{http['address']}" if http["address"] else ""
            error = f"; last error: {http['last_error']}" if http["last_error"] else ""
            lines.append(
                f"http API: {http['state']}{where}; token in {http['token_file']}; "
                f"{http['requests']} requests, {http['unauthorized']} unauthorized{error}"
            )
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


def _logs(args: argparse.Namespace) -> int:
    import anyio

    from channels.client import Client
    from supervisor.cli.logview import LogView

    view = LogView(tty=sys.stdout.isatty() and not args.json)

    async def go() -> None:
        async with Client.connect(_socket_path(args)) as client:
            if args.lines:
                params: dict[str, Any] = {"lines": args.lines}
                if args.soul:
                    params["soul"] = args.soul
                for line in (await client.call("logs", params))["lines"]:
                    print(view.render(line), flush=True)
            if not args.follow:
                return
            souls = [args.soul] if args.soul else []
            async with client.subscribe(souls, ["log"]) as stream:
                async for output in stream:
                    line = output["payload"].get("line", "")
                    print(view.render(line), flush=True)

    anyio.run(go)
    return 0


def _count(text: str) -> int:
    """A count of 0 or more, for argparse (a usage error otherwise)."""
    if not text.isdigit():
        raise argparse.ArgumentTypeError(f"{text!r} is not a count (0 or more)")
    return int(text)


def _watch(args: argparse.Namespace) -> int:
    import anyio
    import msgspec

    from channels.client import Client
    from supervisor.cli.render import human_value, iso, iso_times

    # Outputs, not the daemon's log lines (`soupd logs -f` is for those), unless asked.
    kinds = args.kind or [kind for kind in OUTPUT_KINDS if kind != "log"]

    async def go() -> None:
        async with (
            Client.connect(_socket_path(args)) as client,
            client.subscribe(args.souls, kinds) as outputs,
        ):
            async for output in outputs:
                if args.json:
                    line = msgspec.json.encode(iso_times(output)).decode()
                else:
                    # Times in the payload (a wake-up's due) as ISO 8601, as in --json.
                    fields = iso_times(output["payload"]).items()
                    payload = " ".join(f"{k}={human_value(v)}" for k, v in fields)
                    when = iso(output["ts"])[11:19] if "ts" in output else ""
                    line = f"{when} {output['soul'] or '-'} {output['kind']}: {payload}"
                print(line, flush=True)

    anyio.run(go)
    return 0


def _mcp(args: argparse.Namespace) -> int:
    import anyio

    # Imported here: the MCP SDK (pydantic, starlette) would slow every other command.
    from channels.mcp import serve

    anyio.run(serve, _socket_path(args), args.soul)
    return 0


def _config_check(args: argparse.Namespace) -> int:
    from supervisor.config_check import check_configuration, check_one_file
    from supervisor.paths import locate

    if args.file is not None:
        kind, report = check_one_file(args.file)
        done = f"{args.file}: ok ({kind} config)"
    else:
        locations = locate(os.environ, config=args.config, socket=args.socket)
        report = check_configuration(locations)
        where = locations.config_file if locations.config_file.exists() else "(no soupd.toml)"
        done = f"{where}: ok; souls: {', '.join(report.souls)}"
    if args.json:
        import json

        def entry(e: SoupdError) -> dict[str, str]:
            return {"path": getattr(e, "path", ""), "key": getattr(e, "key", ""),
                    "problem": getattr(e, "problem", e.message)}  # fmt: skip

        result = {
            "ok": report.ok,
            "souls": report.souls,
            "errors": [entry(e) for e in report.errors],
            "warnings": [entry(w) for w in report.warnings],
        }
        print(json.dumps(result, ensure_ascii=False))
    else:
        for error in report.errors:
            print(f"soupd: config error: {error.message}", file=sys.stderr)
        for warning in report.warnings:
            print(f"soupd: warning: {warning.message}", file=sys.stderr)
        if report.ok:
            print(done)
    return exits.OK if report.ok else exits.USAGE


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
