"""Two real daemons on one real PostgreSQL database ([store] backend = "postgres", #21):
each soul is served by one of them at a time. A request reaching the other is told where
the soul is served (soul_elsewhere, naming the owner); once the owner stops, or dies by
kill -9, the other takes the soul over on its next request, with everything the first
acknowledged; what the other daemon may not do on this store yet says so."""

from __future__ import annotations

import signal
import time
from pathlib import Path

import pytest

from e2e.harness import Daemon, Home, running, wait_for


def _home(root: Path, name: str, dsn: str, soul: str = "") -> Home:
    home = Home(root / name, extra_env={"SOUPD_TEST_DSN": dsn})
    home.write_config(
        '[log]\nlevel = "info"\n[http]\nenabled = false\n'
        f'[store]\nbackend = "postgres"\ndsn_env = "SOUPD_TEST_DSN"\n'
        f'advertise = "http://{name}.example:7411"\n'
    )
    # Both daemons configure the soul; its memory is the database's, not either's.
    home.add_soul("alpha", soul or "[lifecycle]\nhibernate_after = 1.0\n")
    return home


def _error(daemon: Daemon, method: str, params: dict[str, object]) -> dict[str, object]:
    reply = daemon.call(method, params)
    assert "error" in reply, reply
    error: dict[str, object] = reply["error"]
    return error


def test_one_daemon_serves_a_soul_the_other_says_where(tmp_path: Path, pg_dsn: str) -> None:
    a, b = _home(tmp_path, "a", pg_dsn), _home(tmp_path, "b", pg_dsn)
    try:
        with running(a) as first, running(b) as second:
            assert (
                first.push("alpha", "the deploy of monday failed on the migration")["status"]
                == "stored"
            )
            # The first daemon owns alpha while it is awake: the second says where it is.
            error = _error(second, "event.push", {"soul": "alpha", "text": "hello"})
            assert error["code"] == "soul_elsewhere"
            assert "http://a.example:7411" in str(error["message"])
            # Idle for hibernate_after, the first gives the soul up; the second takes
            # it on its next request and has all the first stored.
            hits = wait_for(
                lambda: (
                    second.call("recall", {"soul": "alpha", "query": "deploy migration"})
                    .get("result", {})
                    .get("items")
                ),
                "the second daemon serving alpha",
                timeout=30,
            )
            assert "migration" in hits[0]["text"]
            assert second.push("alpha", "tuesday's deploy went fine")["status"] == "stored"
            assert _error(first, "recall", {"soul": "alpha", "query": "x"})["code"] == (
                "soul_elsewhere"
            )
            # Not yet on this store: said so, nothing changed.
            unsupported = _error(second, "forget", {"soul": "alpha", "ref": "x"})
            assert unsupported["code"] == "unsupported"
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
                assert _error(second, "soul.stats", {"soul": "alpha"})["code"] == "soul_elsewhere"
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
