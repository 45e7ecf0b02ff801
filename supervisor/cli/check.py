"""``soupd check SOUL``: verify a soul's database file directly, daemon running or not,
and say what to do about each check that fails.

The checks themselves are :mod:`souls.store.check`'s (read-only: ``PRAGMA integrity_check``,
FTS5's own check on a copy, the index against the memories, the migrations). Here: the
report for people or as JSON, one line on stderr per failed check with its remedy, and
the exit status: 0 when every check passed, 3 when one failed, 6 when there is nothing
to check (no such soul, no database yet), 1 when the file cannot be read.

Registered into the main parser by :func:`register`.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from supervisor.cli import exits
from supervisor.cli.shared import Command, LoadSettings, Show

if TYPE_CHECKING:
    from souls.store.check import Report as CheckReport

__all__ = ["register"]


def register(command: Command, show: Show, settings: LoadSettings) -> None:
    def check(args: argparse.Namespace) -> int:
        import sqlite3

        import msgspec

        from souls.store.check import check as check_database
        from supervisor.paths import soul_database

        # The file itself, read-only: no daemon needed, and a running one is not disturbed.
        configured = settings(args)
        if args.soul not in configured.souls:
            names = ", ".join(sorted(configured.souls))
            exits.say_error(
                "unknown_soul",
                f"no soul named {args.soul!r} in {configured.souls_dir} (configured: {names}); "
                "`soupd config check` lists the souls",
                as_json=args.json,
            )
            return exits.NOT_FOUND
        database = soul_database(configured.soul_dir(args.soul))
        try:
            report = check_database(database)
        except FileNotFoundError:
            exits.say_error(
                "no_database",
                f"{database} does not exist: the daemon creates it when it first wakes soul "
                f"{args.soul!r}; if the daemon runs with another --config or environment "
                "(systemd), run the check with the same",
                as_json=args.json,
            )
            return exits.NOT_FOUND
        except (OSError, sqlite3.Error) as error:
            cause = error.strerror if isinstance(error, OSError) else error
            exits.say_error(
                "cannot_check",
                f"cannot read {database}: {cause}; run the check as the daemon's user, with "
                "room in $TMPDIR for a copy of the database",
                as_json=args.json,
            )
            return exits.ERROR
        problems = _problems(report, args.soul)
        result = {"ok": report.ok, "problems": problems, **msgspec.to_builtins(report)}
        show(args, result, lambda _: _text(report))
        for problem in problems:
            print(f"soupd: check failed: {problem}", file=sys.stderr)
        return exits.OK if report.ok else exits.CHECK_FAILED

    p = command(
        "check", check, "verify a soul's database file, daemon running or not (exit 3 if bad)"
    )
    p.add_argument("soul")


def _text(r: CheckReport) -> str:
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


def _problems(r: CheckReport, soul: str) -> list[str]:
    """One line per failed check: the file, what is wrong, what to do."""
    where = r.database
    restore = f"stop the daemon and restore the file from a copy made by `soupd backup {soul} FILE`"
    # The index is derived from the memories: `soupd rebuild` writes it afresh.
    reindex = f"rebuild it from the memories with `soupd rebuild {soul}` (the daemon running)"
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
