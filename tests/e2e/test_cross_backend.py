"""A soul moves between the backends by ``soupd export`` and ``soupd import`` (#21): from a
daemon on SQLite files to one on the shared PostgreSQL store, and back to SQLite, with
its events (attributed as before), goals, person links and stated claims, and recall
answering the same. Real daemons, a real server (tests/pgserver.py)."""

from __future__ import annotations

import json
from pathlib import Path

from e2e.harness import Daemon, Home, StartSoupd, running
from e2e.shared import shared_home
from e2e.test_import_restore import attributed, claims, goals, persons, seed


def _held(home: Home, daemon: Daemon, soul: str) -> dict[str, object]:
    """What a user reads of ``soul``: goals, persons, claims, who said what, and recall."""
    recalled = [
        [item["text"] for item in daemon.recall(soul, question, k=3)]
        for question in ("where does Ann live?", "what is her job?", "the dog")
    ]
    return {
        "goals": goals(daemon, soul),
        "persons": persons(daemon, soul),
        "claims": sorted(claims(daemon, soul), key=repr),
        "attributed": attributed(home, soul),
        "recalled": recalled,
    }


def _moved(home: Home, source: Path, soul: str) -> dict[str, int]:
    result = home.cli("--json", "import", soul, source)
    assert result.returncode == 0, result.stderr
    counts: dict[str, int] = json.loads(result.stdout)
    return {k: counts[k] for k in ("stored", "rejected", "goals", "persons", "claims")}


def test_a_soul_moves_from_sqlite_to_postgresql_and_back(
    soupd_home: Home, start_soupd: StartSoupd, tmp_path: Path, pg_dsn: str
) -> None:
    soupd_home.add_soul("ada")
    soupd_home.add_soul("back")
    lite = start_soupd()
    seed(lite)
    before = _held(soupd_home, lite, "ada")
    assert before["persons"] == [("Ann", ["slack:U1", "telegram:4711"])]
    out = tmp_path / "from-sqlite.jsonl"
    assert soupd_home.cli("export", "ada", out).returncode == 0
    moved = {"stored": 6, "rejected": 0, "goals": 3, "persons": 1, "claims": 2}

    shared = shared_home(tmp_path / "pg", "a", pg_dsn, "", ("ada",))
    try:
        with running(shared) as pg:
            assert _moved(shared, out, "ada") == moved
            assert _held(shared, pg, "ada") == before
            again = tmp_path / "from-postgresql.jsonl"
            assert shared.cli("export", "ada", again).returncode == 0
    finally:
        shared.cleanup()
    # The database keeps the soul; the second export brings it back to a SQLite file.
    assert _moved(soupd_home, again, "back") == moved
    assert _held(soupd_home, lite, "back") == before
