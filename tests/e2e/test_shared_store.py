"""Two real daemons on one real PostgreSQL database ([store] backend = "postgres", #21):
each soul is served by one of them at a time. A request reaching the other is forwarded
to the owner over its HTTP API and answered as if served there; once the owner gives the
soul up, or dies by kill -9, the other takes it over on its next request, with
everything the first acknowledged; the user's forget reaches it from either; what
neither may do on this store yet says so."""

from __future__ import annotations

import json
import re
import signal
import time
from pathlib import Path

import anyio
import asyncpg
import httpx
import pytest

from e2e.harness import Daemon, Home, running, wait_for
from e2e.knowing_chat import FACTS, GOALS, TOLD, TURNS, timestamp
from e2e.shared import shared_home


def _home(root: Path, name: str, dsn: str, soul: str = "") -> Home:
    return shared_home(root, name, dsn, soul or "[lifecycle]\nhibernate_after = 1.0\n", ("alpha",))


def http_call(root: Path, home: Home, method: str, params: dict[str, object]) -> httpx.Response:
    """``method`` on the HTTP API of ``home``'s daemon, with the shared token."""
    port = re.search(r"^port = (\d+)$", (home.config_dir / "soupd.toml").read_text(), re.M)
    assert port is not None
    token = (root / "http.token").read_text().strip()
    return httpx.post(
        f"http://127.0.0.1:{port[1]}/v1/rpc/{method}",
        json=params,
        headers={"authorization": f"Bearer {token}"},
        timeout=30,
    )


def _events(daemon: Daemon, event: str) -> list[dict[str, object]]:
    return [e for e in daemon.log() if e.get("event") == event]


def _error(daemon: Daemon, method: str, params: dict[str, object]) -> dict[str, object]:
    reply = daemon.call(method, params)
    assert "error" in reply, reply
    error: dict[str, object] = reply["error"]
    return error


def test_a_request_reaching_the_other_daemon_is_served_by_the_owner(
    tmp_path: Path, pg_dsn: str
) -> None:
    a, b = _home(tmp_path, "a", pg_dsn), _home(tmp_path, "b", pg_dsn)
    try:
        with running(a) as first, running(b) as second:
            pushed = first.push("alpha", "the deploy of monday failed on the migration")
            assert pushed["status"] == "stored"
            # The first daemon owns alpha while it is awake: the second forwards to it.
            again = second.push("alpha", "the deploy of tuesday failed on the migration too")
            assert (again["status"], again["event_id"]) == ("stored", 2)
            assert len(second.recall("alpha", "deploy migration")) == 2
            # By the second daemon's HTTP API too.
            stats = http_call(tmp_path, b, "soul.stats", {"soul": "alpha"})
            assert stats.status_code == 200, stats.text
            assert stats.json()["events"] == 2
            assert second.counts("alpha") == (2, 2)
            assert not _events(second, "soul.lease_taken")  # served by the first only
            # Idle for hibernate_after, the first gives the soul up; the second takes
            # it on its next request and has all the first stored.
            wait_for(lambda: _events(first, "soul.lease_given_up"), "alpha given up", 30)
            assert second.counts("alpha") == (2, 2)
            assert _events(second, "soul.lease_taken")
            assert second.push("alpha", "wednesday's deploy went fine")["status"] == "stored"
            assert first.counts("alpha") == (3, 3)  # forwarded the other way now
            # The user's forget, by either daemon: gone from the shared store.
            forgot = first.result("forget", {"soul": "alpha", "match": "tuesday"})
            assert forgot["events"] == 1
            assert second.counts("alpha") == (2, 2)
            assert not [
                h for h in first.recall("alpha", "tuesday deploy") if "tuesday" in h["text"]
            ]
            # Not yet on this store: said so, nothing changed.
            copy = str(tmp_path / "copy.db")
            unsupported = _error(first, "backup", {"soul": "alpha", "path": copy})
            assert unsupported["code"] == "unsupported"
            assert "pg_dump" in str(unsupported["message"])
            assert second.counts("alpha") == (2, 2)
    finally:
        a.cleanup()
        b.cleanup()


def test_a_daemon_killed_by_sigkill_loses_its_souls_to_the_other(
    tmp_path: Path, pg_dsn: str
) -> None:
    awake = "[lifecycle]\nhibernate_after = 0\n"  # owned from the start, never given up
    a, b = _home(tmp_path, "a", pg_dsn, awake), _home(tmp_path, "b", pg_dsn, awake)
    try:
        first = Daemon.start(a)
        try:
            acked = [
                first.push("alpha", f"note {i} about the garden")["event_id"] for i in range(5)
            ]
            assert len(set(acked)) == 5
            with running(b) as second:
                assert second.counts("alpha") == (5, 5)  # forwarded to the owner
                first.send_signal(signal.SIGKILL)
                first.wait()
                killed = time.monotonic()
                stats = wait_for(
                    lambda: second.call("soul.stats", {"soul": "alpha"}).get("result"),
                    "the second daemon taking alpha over",
                    timeout=30,
                )
                took = time.monotonic() - killed
                assert stats["events"] == 5  # every acknowledged event, once
                assert took < 5, took  # the bound for a takeover
                assert second.push("alpha", "after the takeover")["status"] == "stored"
                assert second.counts("alpha") == (6, 6)
        finally:
            if first.proc.poll() is None:
                first.stop()
    finally:
        a.cleanup()
        b.cleanup()


@pytest.mark.parametrize("missing", ["SOUPD_TEST_DSN"])
def test_a_daemon_without_its_dsn_says_what_to_set(
    tmp_path: Path, pg_dsn: str, missing: str
) -> None:
    home = _home(tmp_path, "a", pg_dsn)
    home.extra_env.pop(missing)
    try:
        result = home.cli("start")
        assert result.returncode != 0
        assert "store.dsn_env: environment variable SOUPD_TEST_DSN" in result.stderr
        assert pg_dsn not in result.stderr + result.stdout
    finally:
        home.cleanup()


def test_a_lost_lease_session_costs_a_retry_not_the_soul(tmp_path: Path, pg_dsn: str) -> None:
    # The server ends the daemon's lease session (a restart of PostgreSQL, a lost
    # network): the soul's writes are fenced off, it is taken again under a new session,
    # and it is served again after a retry or two; it never ends up failed.
    home = _home(tmp_path, "a", pg_dsn, "[lifecycle]\nhibernate_after = 0.5\n")
    try:
        with running(home) as daemon:
            assert daemon.push("alpha", "before the session went")["status"] == "stored"
            wait_for(lambda: _events(daemon, "soul.lease_given_up"), "alpha hibernating", 15)

            async def kill_lease_session() -> int:
                db = await asyncpg.connect(pg_dsn)
                try:
                    ended: int = await db.fetchval(
                        "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity"
                        " WHERE application_name LIKE 'soupd leases %'"
                    )
                finally:
                    await db.close()
                return ended

            assert anyio.run(kill_lease_session) == 1
            # At once, before the session is found dead: the waking soul is told to retry.
            first = daemon.call("soul.stats", {"soul": "alpha"})
            assert "result" in first or first["error"]["code"] == "soul_unavailable", first
            wait_for(lambda: _events(daemon, "store.lease_session_opened"), "a new session", 15)
            stored = wait_for(
                lambda: daemon.call(
                    "event.push", {"soul": "alpha", "text": "after it", "ref": "x"}
                ).get("result"),
                "alpha served again",
                15,
            )
            assert stored["event_id"] == 2
            assert daemon.counts("alpha") == (2, 2)
            souls = daemon.result("soul.list")["souls"]
            assert [s["state"] for s in souls if s["name"] == "alpha"] == ["running"]
    finally:
        home.cleanup()


def test_soupd_migrate_brings_the_database_up_to_date(tmp_path: Path, pg_dsn: str) -> None:
    home = _home(tmp_path, "a", pg_dsn)
    try:
        first = home.cli("--json", "migrate")
        assert first.returncode == 0, first.stderr
        done = json.loads(first.stdout)
        assert done["backend"] == "postgres"
        assert done["applied"] == done["migrations"]
        assert len(done["migrations"]) >= 13
        again = home.cli("migrate")
        assert again.returncode == 0, again.stderr
        assert again.stdout.startswith(f"up to date: {len(done['migrations'])} migrations")
        home.extra_env["SOUPD_TEST_DSN"] = pg_dsn.replace("127.0.0.1", "127.0.0.1:1", 1)
        refused = home.cli("migrate")
        assert refused.returncode != 0
        assert "$SOUPD_TEST_DSN" in refused.stderr
        assert home.extra_env["SOUPD_TEST_DSN"] not in refused.stderr + refused.stdout
    finally:
        home.cleanup()


def test_four_weeks_of_messy_chat_give_the_same_knowing_on_postgresql(
    tmp_path: Path, pg_dsn: str
) -> None:
    # The bilingual chat of tests/e2e/knowing_chat.py (typos, fillers, moves, a renamed
    # cat, a called-off plan, goals reached and dropped) played through a daemon on the
    # shared store: the same facts, events and goals a reader would hold as on SQLite.
    home = shared_home(tmp_path, "a", pg_dsn, "", ("kim",))
    try:
        with running(home) as daemon:
            for n, (day, hour, sender, kind, text) in enumerate(TURNS):
                fields: dict[str, object] = {
                    "kind": kind,
                    "ts": timestamp(day, hour),
                    "ref": f"t{n}",
                }
                if sender:
                    fields["sender"] = sender
                assert daemon.push("kim", text, **fields)["status"] == "stored", text
            claims = daemon.result("claims", {"soul": "kim", "all": True})["claims"]
            facts = {
                (c["subject"], c["slot"], c["value"], c["state"])
                for c in claims
                if c["slot"] != "event"
            }
            assert facts == FACTS
            told = [(c["subject"], c["value"]) for c in claims if c["slot"] == "event"]
            assert len(told) == len(TOLD)
            for subject, piece in TOLD:
                assert any(s == subject and piece in v for s, v in told), (subject, piece)
            goals = daemon.result("goals", {"soul": "kim"})["goals"]
            assert {(g["speaker"], g["statement"], g["state"]) for g in goals} == GOALS
            # And recall puts the fact in force first: the move, not the old city.
            where = daemon.recall("kim", "where does Sam live now?", k=3)
            assert "Lyon" in where[0]["text"], [w["text"] for w in where]
    finally:
        home.cleanup()
