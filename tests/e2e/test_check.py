"""``soupd check SOUL`` end to end: the database file checked read-only while the real
daemon runs (and keeps serving), after it stopped, once corrupted, and for a soul that
does not exist."""

from __future__ import annotations

import json
import random
import shutil
import sqlite3
import subprocess
from contextlib import closing
from pathlib import Path

from .harness import Home, StartSoupd, pipelined_pushes

PUSHES = 300


def passed(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 0, (result.stdout, result.stderr)
    assert result.stderr == ""
    return result.stdout


def fields(stdout: str) -> dict[str, str]:
    """The human report's ``name   value`` lines (indented finding lines skipped)."""
    rows = (line.split(maxsplit=1) for line in stdout.splitlines() if not line.startswith(" "))
    return {row[0]: row[1] for row in rows if len(row) == 2}


def test_check_while_running_and_after_stop(soupd_home: Home, start_soupd: StartSoupd) -> None:
    soupd_home.add_soul("alpha")
    database = soupd_home.soul_dir("alpha") / "soul.db"
    daemon = start_soupd()
    texts = [(f"c{i}", f"deploy {i} of the billing service finished") for i in range(PUSHES)]
    with daemon.connect() as conn:
        conn.send(pipelined_pushes("alpha", texts))
        replies = [conn.recv() for _ in texts]
    assert {r["result"]["status"] for r in replies} == {"stored"}

    running = fields(passed(soupd_home.cli("check", "alpha")))
    assert running["database"] == str(database)
    assert running["integrity"] == running["fts"] == "ok"
    assert running["events"] == str(PUSHES)  # every acknowledged event, read beside the WAL
    assert running["index"].startswith("ok: ")
    assert running["schema"].startswith("ok: ")
    # The daemon was not disturbed: it still stores, and the check sees that too.
    assert daemon.push("alpha", "one more after the check")["status"] == "stored"
    report = json.loads(passed(soupd_home.cli("check", "alpha", "--json")))
    assert report["ok"] is True
    assert report["problems"] == []
    assert report["counts"]["events"] == PUSHES + 1
    assert report["integrity"] == ["ok"]
    assert daemon.stop() == 0

    stopped = json.loads(passed(soupd_home.cli("--json", "check", "alpha")))
    assert stopped["ok"] is True
    assert stopped["counts"] == report["counts"]


def test_check_of_a_corrupt_database_names_the_file_and_the_remedy(
    soupd_home: Home, start_soupd: StartSoupd, tmp_path: Path
) -> None:
    soupd_home.add_soul("alpha")
    daemon = start_soupd()
    texts = [(f"c{i}", f"note {i}: the lighthouse keeper logged a ship") for i in range(PUSHES)]
    with daemon.connect() as conn:
        conn.send(pipelined_pushes("alpha", texts))
        assert all("result" in conn.recv() for _ in texts)
    assert daemon.stop() == 0
    database = soupd_home.soul_dir("alpha") / "soul.db"
    shutil.copyfile(database, tmp_path / "sound.db")
    with closing(sqlite3.connect(database)) as db:
        (root,) = db.execute("SELECT rootpage FROM sqlite_master WHERE name = 'events'").fetchone()
        (size,) = db.execute("PRAGMA page_size").fetchone()
    data = bytearray(database.read_bytes())
    start = (root - 1) * size  # the events table's first page, garbage from end to end
    data[start : start + size] = random.Random(5).randbytes(size)
    database.write_bytes(bytes(data))

    result = soupd_home.cli("check", "alpha")

    assert result.returncode == 3, (result.stdout, result.stderr)
    assert fields(result.stdout)["integrity"].startswith("FAILED: ")
    (problem,) = result.stderr.splitlines()
    assert problem.startswith(f"soupd: check failed: {database} is corrupt")
    assert "soupd backup alpha" in problem

    shutil.copyfile(tmp_path / "sound.db", database)  # restored
    passed(soupd_home.cli("check", "alpha"))


def test_check_of_an_unknown_soul_says_how_to_list_them(soupd_home: Home) -> None:
    soupd_home.add_soul("alpha")

    result = soupd_home.cli("check", "nobody")

    assert result.returncode == 6  # not found
    assert result.stdout == ""
    (line,) = result.stderr.splitlines()
    assert line.startswith("soupd: unknown_soul: no soul named 'nobody'")
    assert "alpha" in line
    assert "soupd config check" in line


def test_check_before_the_soul_ever_ran_says_where_it_looked(soupd_home: Home) -> None:
    soupd_home.add_soul("alpha")

    result = soupd_home.cli("check", "alpha")

    assert result.returncode == 6  # not found: no database yet
    (line,) = result.stderr.splitlines()
    assert str(soupd_home.soul_dir("alpha") / "soul.db") in line
    assert "does not exist" in line
