"""Read-only checks of a soul's database file: is it sound, and what does it hold.

What a caller may rely on:

* Nothing here writes the checked file. It is opened read-only (``mode=ro``), so it can
  be checked with the daemon stopped or running: WAL lets a reader see one consistent
  snapshot beside the writer, and never blocks it (while a check holds its snapshot,
  the WAL cannot be checkpointed past it and grows instead).
* FTS5's own ``integrity-check`` is a command written as an INSERT, so it cannot run
  on a read-only connection; it runs on a temporary copy made with the backup API, in
  ``$TMPDIR`` (the copy needs as much room as the database).
* As with any reader of a WAL database, SQLite may leave empty ``-wal`` and ``-shm``
  files beside a database nobody else has open; the next writer takes them over.

The functions are synchronous and block for as long as the file takes to read: run them
from a thread (or a plain command), never in an event loop.
"""

from __future__ import annotations

import contextlib
import sqlite3
import tempfile
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import msgspec

from souls.store.schema import MIGRATIONS

__all__ = ["Counts", "Report", "check", "fts_integrity", "integrity", "stored_refs"]


class Counts(msgspec.Struct, frozen=True, kw_only=True):
    """Rows in the main tables; a table an older schema lacks counts 0."""

    events: int
    memories: int
    # Memories not hidden: exactly these must have a row in the full-text index.
    visible: int
    # Rows of the full-text index (memory_fts).
    indexed: int
    # Visible memories without an index row, and index rows of no visible memory.
    index_rows_missing: int
    index_rows_extra: int
    claims: int
    cards: int


class Report(msgspec.Struct, frozen=True, kw_only=True):
    """What :func:`check` found in one database, all read from one snapshot."""

    database: str
    # PRAGMA integrity_check's findings, one a line: exactly ["ok"] when the file is sound.
    integrity: list[str]
    # FTS5 integrity-check of the memory index: "ok", or SQLite's message.
    fts: str
    # None when the tables could not be read; ``unreadable`` then says why.
    counts: Counts | None
    unreadable: str
    # Migrations recorded in the file (in this soupd's order, then any unknown ones)...
    applied: list[str]
    # ...known to this soupd but not applied yet (the daemon applies them at open)...
    pending: list[str]
    # ...and applied by a soupd newer than this one.
    unknown: list[str]

    @property
    def integrity_ok(self) -> bool:
        return self.integrity == ["ok"]

    @property
    def fts_ok(self) -> bool:
        return self.fts == "ok"

    @property
    def index_ok(self) -> bool:
        """The index holds a row for every visible memory and for nothing else."""
        c = self.counts
        return c is not None and c.index_rows_missing == c.index_rows_extra == 0

    @property
    def schema_ok(self) -> bool:
        """This soupd knows every migration the file went through (pending ones are fine)."""
        return not self.unknown

    @property
    def ok(self) -> bool:
        return self.integrity_ok and self.fts_ok and self.index_ok and self.schema_ok


def check(database: Path) -> Report:
    """Every check on ``database``, from one snapshot.

    A corrupt or foreign file does not raise: what SQLite said is in the report. Raises
    OSError when the file cannot be opened (FileNotFoundError when there is none), and
    sqlite3.Error when SQLite cannot read it for reasons that say nothing about the file
    (no access to its folder for the ``-shm`` file, an I/O error, ``$TMPDIR`` full).
    """
    with _read_only(database) as db:
        # One read transaction: the checks and the copy see the same snapshot.
        db.execute("BEGIN")
        found = _integrity(db)
        try:
            tables = {name for (name,) in db.execute("SELECT name FROM sqlite_master")}
            applied: set[str] = set()
            if "migrations" in tables:
                applied = {name for (name,) in db.execute("SELECT name FROM migrations")}
            counts, unreadable = _counts(db, tables), ""
        except sqlite3.DatabaseError as exc:
            applied, counts, unreadable = set(), None, _finding(exc)
        # With no migration run yet (killed at its first open) there is no index to check.
        fts = "ok" if counts is not None and not applied else _fts_on_copy(db)
        # Closing ends the read transaction; nothing was written to commit.
    known = [name for name, _ in MIGRATIONS]
    unknown = sorted(applied - set(known))
    return Report(
        database=str(database),
        integrity=found,
        fts=fts,
        counts=counts,
        unreadable=unreadable,
        applied=[name for name in known if name in applied] + unknown,
        pending=[name for name in known if name not in applied],
        unknown=unknown,
    )


def integrity(database: Path) -> list[str]:
    """``PRAGMA integrity_check``'s findings, one a line: exactly ``["ok"]`` when the
    file is sound. Raises as :func:`check` does."""
    with _read_only(database) as db:
        return _integrity(db)


def fts_integrity(database: Path) -> str:
    """FTS5's integrity-check of the memory index, on a copy: "ok", or what SQLite said.
    Raises as :func:`check` does."""
    with _read_only(database) as db:
        return _fts_on_copy(db)


def stored_refs(database: Path) -> Counter[str]:
    """Event rows per ref, by a table scan: the UNIQUE index on ``ref`` is not used, so
    a broken index cannot hide a duplicate. Raises sqlite3.Error when the events cannot
    be read."""
    with _read_only(database) as db:
        rows = db.execute("SELECT ref FROM events NOT INDEXED WHERE ref IS NOT NULL")
        return Counter(ref for (ref,) in rows)


# Errors that say the check could not read, not that the file is unsound.
_CANNOT_READ = {
    sqlite3.SQLITE_AUTH,
    sqlite3.SQLITE_BUSY,
    sqlite3.SQLITE_CANTOPEN,
    sqlite3.SQLITE_FULL,
    sqlite3.SQLITE_IOERR,
    sqlite3.SQLITE_LOCKED,
    sqlite3.SQLITE_NOMEM,
    sqlite3.SQLITE_PERM,
    sqlite3.SQLITE_READONLY,
}


def _finding(exc: sqlite3.DatabaseError) -> str:
    """What ``exc`` says about the file; re-raises it when it says nothing about it."""
    if exc.sqlite_errorcode & 0xFF in _CANNOT_READ:  # primary code of an extended one
        raise exc
    return str(exc)


@contextlib.contextmanager
def _read_only(database: Path) -> Iterator[sqlite3.Connection]:
    # Opened once first: OSError names the file and the cause, where SQLite would say
    # only "unable to open database file".
    with open(database, "rb"):
        pass
    uri = f"{database.resolve().as_uri()}?mode=ro"
    with contextlib.closing(sqlite3.connect(uri, uri=True, isolation_level=None)) as db:
        yield db


def _integrity(db: sqlite3.Connection) -> list[str]:
    try:
        rows = db.execute("PRAGMA integrity_check").fetchall()
    except sqlite3.DatabaseError as exc:  # a header or schema too broken to walk
        return [_finding(exc)]
    # A row may hold several findings, one a line, under a "*** in database main ***"
    # header that says nothing with one database attached.
    lines = [line for (text,) in rows for line in str(text).splitlines()]
    return [line for line in lines if not line.startswith("*** in database ")]


def _counts(db: sqlite3.Connection, tables: set[str]) -> Counts:
    def count(sql: str, *needs: str) -> int:
        if not set(needs) <= tables:
            return 0
        (value,) = db.execute(sql).fetchone()
        return int(value)

    visible = "SELECT id FROM memories WHERE hidden_at IS NULL"
    return Counts(
        events=count("SELECT count(*) FROM events", "events"),
        memories=count("SELECT count(*) FROM memories", "memories"),
        visible=count(f"SELECT count(*) FROM ({visible})", "memories"),
        indexed=count("SELECT count(*) FROM memory_fts", "memory_fts"),
        index_rows_missing=count(
            f"SELECT count(*) FROM ({visible}) WHERE id NOT IN (SELECT rowid FROM memory_fts)",
            "memories",
            "memory_fts",
        ),
        index_rows_extra=count(
            f"SELECT count(*) FROM memory_fts WHERE rowid NOT IN ({visible})",
            "memories",
            "memory_fts",
        ),
        claims=count("SELECT count(*) FROM claims", "claims"),
        cards=count("SELECT count(*) FROM cards", "cards"),
    )


def _fts_on_copy(db: sqlite3.Connection) -> str:
    with tempfile.TemporaryDirectory(prefix="soupd-check-") as scratch:
        try:
            with contextlib.closing(sqlite3.connect(Path(scratch) / "copy.db")) as copy:
                db.backup(copy)
                copy.execute("INSERT INTO memory_fts (memory_fts) VALUES ('integrity-check')")
        except sqlite3.DatabaseError as exc:
            return _finding(exc)
    return "ok"
