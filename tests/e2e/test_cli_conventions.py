"""The ``soupd`` command follows the conventions people and scripts expect: ``--json``
anywhere, errors as JSON under it, an exit status by cause, ``--version``, quiet on a
closed pipe, times in ISO 8601, no Python reprs, a cheap start, progress on a terminal
only, and client commands that never read a soul file."""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import os
import pty
import select
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from e2e.harness import SOUPD, Daemon, Home, StartSoupd, wait_for

USAGE, CHECK_FAILED, NOT_RUNNING, REFUSED, NOT_FOUND, PIPE_CLOSED = 2, 3, 4, 5, 6, 141


def ok(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 0, (result.returncode, result.stderr)
    assert result.stderr == ""
    return result.stdout


def json_error(result: subprocess.CompletedProcess[str], status: int) -> dict[str, str]:
    """The command failed with ``status`` and said why as one JSON object on stderr."""
    assert result.returncode == status, (result.returncode, result.stdout, result.stderr)
    assert result.stdout == ""
    (line,) = result.stderr.splitlines()
    error: dict[str, str] = json.loads(line)["error"]
    assert set(error) == {"code", "message"}
    return error


def on_a_terminal(home: Home, *args: str | Path, timeout: float = 30.0) -> tuple[int, str]:
    """Run ``soupd ARGS`` with stdout and stderr on a pseudo-terminal; (status, output)."""
    leader, follower = pty.openpty()
    proc = subprocess.Popen(
        [str(SOUPD), *map(str, args)],
        env=home.env,
        stdin=subprocess.DEVNULL,
        stdout=follower,
        stderr=follower,
    )
    os.close(follower)
    chunks = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        ready, _, _ = select.select([leader], [], [], 0.1)
        if ready:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # EIO: the terminal's last writer is gone
                break
            if not chunk:
                break
            chunks.append(chunk)
        elif proc.poll() is not None:
            break
    os.close(leader)
    return proc.wait(timeout), b"".join(chunks).decode(errors="replace")


def test_json_after_the_command_is_the_same_as_before_it(soupd: Daemon) -> None:
    soupd.push("alpha", "Deploy failed: database migration timeout")

    after = json.loads(ok(soupd.home.cli("recall", "alpha", "deploy", "--json")))
    before = json.loads(ok(soupd.home.cli("--json", "recall", "alpha", "deploy")))

    assert after == before
    assert after["items"][0]["text"] == "Deploy failed: database migration timeout"
    assert json.loads(ok(soupd.home.cli("status", "--json")))["pid"] == soupd.pid


def test_errors_under_json_are_json_with_a_status_by_cause(
    soupd: Daemon, soupd_home: Home, tmp_path: Path
) -> None:
    home = soupd.home

    missing = json_error(home.cli("recall", "nobody", "x", "--json"), NOT_FOUND)
    assert missing["code"] == "unknown_soul"
    refused = json_error(home.cli("--json", "send", "alpha", "line\nline\nline"), REFUSED)
    assert refused["code"] == "hygiene.repeated_lines"
    usage = json_error(home.cli("--json", "recall"), USAGE)
    assert usage["code"] == "usage"
    assert "--help" in usage["message"]
    elsewhere = tmp_path / "none.sock"
    down = json_error(home.cli("--json", "--socket", elsewhere, "status"), NOT_RUNNING)
    assert (down["code"], str(elsewhere) in down["message"]) == ("daemon_not_running", True)
    # Without --json: one line for people, the same status.
    plain = home.cli("--socket", elsewhere, "status")
    assert plain.returncode == NOT_RUNNING
    assert plain.stderr.startswith("soupd: daemon_not_running: ")


def test_version(soupd_home: Home) -> None:
    import importlib.metadata

    assert ok(soupd_home.cli("--version")) == f"soupd {importlib.metadata.version('soupd')}\n"


def test_a_closed_pipe_ends_the_command_quietly(soupd: Daemon, tmp_path: Path) -> None:
    lines = [json.dumps({"text": f"note {i} " + "pad " * 40, "ref": f"n-{i}"}) for i in range(800)]
    (tmp_path / "notes.jsonl").write_text("\n".join(lines) + "\n")
    soupd.home.cli("import", "alpha", tmp_path / "notes.jsonl")
    reader = subprocess.Popen(
        [str(SOUPD), "export", "alpha"],  # far more than a pipe holds
        env=soupd.home.env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert reader.stdout is not None
    assert reader.stderr is not None
    reader.stdout.readline()
    reader.stdout.close()  # as `| head -1` does

    assert reader.wait(30) == PIPE_CLOSED
    assert reader.stderr.read() == b""  # no BrokenPipeError, no traceback
    reader.stderr.close()


def test_claim_add_takes_the_value_after_the_soul(soupd: Daemon) -> None:
    added = ok(soupd.home.cli("claim", "add", "alpha", "The staging database is db-7"))

    assert "The staging database is db-7" in added
    (claim,) = soupd.result("claims", {"soul": "alpha"})["claims"]
    assert (claim["value"], claim["source"]) == ("The staging database is db-7", "user")


def test_client_commands_never_read_soul_files(soupd: Daemon) -> None:
    home = soupd.home
    # A typo lands in another soul's file after start: the daemon runs on, and so must
    # every client command (config check is where it is reported).
    home.add_soul("beta", "[recall]\nkk = 3\n")

    ok(home.cli("status"))
    ok(home.cli("send", "alpha", "still reachable"))
    ok(home.cli("recall", "alpha", "reachable"))
    ok(home.cli("logs", "-n", "1"))
    assert home.cli("config", "check").returncode == USAGE


def test_json_times_are_iso_8601_with_a_zone(soupd: Daemon) -> None:
    home = soupd.home
    soupd.push("alpha", "Deploy failed: database migration timeout")
    ok(home.cli("remind", "alpha", "check the deploy", "--at", "2030-01-02T03:04:05Z"))

    memory = json.loads(ok(home.cli("--json", "read", "alpha", "m1")))
    (task,) = json.loads(ok(home.cli("--json", "tasks", "alpha")))["pending"]

    assert dt.datetime.fromisoformat(memory["created"]).utcoffset() == dt.timedelta(0)
    assert task["due"] == "2030-01-02T03:04:05+00:00"


def test_human_output_has_no_python_reprs(soupd: Daemon) -> None:
    home = soupd.home
    soupd.push("alpha", "one event")

    for args in (("status",), ("stats", "alpha"), ("read", "alpha", "m1"), ("rebuild", "alpha")):
        text = ok(home.cli(*args))
        assert "{" not in text, (args, text)
        assert "None" not in text, (args, text)
        assert "True" not in text, (args, text)
        assert "False" not in text, (args, text)


def test_watch_refuses_an_unknown_kind(soupd: Daemon) -> None:
    result = soupd.home.cli("watch", "--kind", "reflects")

    assert result.returncode == USAGE
    assert "reflect" in result.stderr  # the valid kinds are listed


def test_help_imports_nothing_heavy() -> None:
    script = (
        "import sys\n"
        "from supervisor.cli.main import main\n"
        "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
        "print(' '.join(sorted(sys.modules)))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=60
    )
    loaded = set(done.stdout.splitlines()[-1].split())
    heavy = {
        "anyio",
        "msgspec",
        "structlog",
        "channels.client",
        "supervisor.config",
        "souls.config",
        "souls.store",
        "sqlite3",
        "asyncio",
    }
    assert not heavy & loaded, heavy & loaded


def test_import_shows_progress_on_a_terminal_only(soupd: Daemon, tmp_path: Path) -> None:
    lines = [json.dumps({"text": f"bulk {i} " + "pad " * 30, "ref": f"p-{i}"}) for i in range(3000)]
    path = tmp_path / "bulk.jsonl"
    path.write_text("\n".join(lines) + "\n")

    status, shown = on_a_terminal(soupd.home, "import", "alpha", path)

    assert status == 0, shown
    assert "importing bulk.jsonl" in shown
    assert "100%" in shown
    assert f"/{path.stat().st_size / 1e3:.1f} kB" in shown  # of the file's total
    assert "/s" in shown
    assert "ETA" in shown
    assert "stored 3000" in shown
    # Piped: the counts only, nothing on stderr.
    again = soupd.home.cli("import", "alpha", path)
    assert (again.returncode, again.stderr) == (0, "")


def test_logs_on_a_terminal_are_rendered_like_the_daemons(soupd: Daemon) -> None:
    status, shown = on_a_terminal(soupd.home, "logs", "-n", "5")
    piped = ok(soupd.home.cli("logs", "-n", "5")).splitlines()

    assert status == 0
    assert all(json.loads(line)["event"] for line in piped)
    rendered = [line for line in shown.splitlines() if line.strip()]
    assert len(rendered) == 5
    assert not any(line.lstrip().startswith("{") for line in rendered)
    assert "daemon.ready" in shown


def test_logs_follow_from_now_with_n_0(soupd: Daemon) -> None:
    follower = subprocess.Popen(
        [str(SOUPD), "logs", "-n", "0", "-f"],
        env=soupd.home.env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert follower.stdout is not None
        wait_for(lambda: soupd.result("daemon.status", {})["subscribers"] == 1, "subscribed")
        soupd.push("alpha", "something new")
        first = json.loads(follower.stdout.readline())
    finally:
        follower.terminate()
        follower.communicate(timeout=10)
    assert first["event"] != "daemon.ready"  # no old line: from now on only
    assert first.get("soul") == "alpha"


def test_watch_shows_outputs_not_log_lines(soupd: Daemon) -> None:
    watcher = subprocess.Popen(
        [str(SOUPD), "watch", "alpha"],
        env=soupd.home.env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert watcher.stdout is not None
        wait_for(lambda: soupd.result("daemon.status", {})["subscribers"] == 1, "subscribed")
        soupd.push("alpha", "Deploy failed: database migration timeout")  # reflects
        line = watcher.stdout.readline()
    finally:
        watcher.terminate()
        watcher.communicate(timeout=10)
    assert " alpha reflect: " in line, line
    assert "reason=surprise" in line


DECAY_SOUL = """
[hebbian]
prune_below = 0.95  # an edge fired once (1.0) fades to 0.9 in a night: pruned

[somatic]
prune_below = 100.0  # every marker goes in a night
"""


def soul_state(home: Home, soul: str) -> tuple[list[str], dict[str, bytes]]:
    """Everything a soul stores: its database's contents, read through a read-only
    connection (every table, dumped as SQL), and the bytes of each of its brain files."""
    folder = home.soul_dir(soul)
    uri = f"file:{folder / 'soul.db'}?mode=ro"
    with contextlib.closing(sqlite3.connect(uri, uri=True)) as db:
        dump = list(db.iterdump())
    files = {
        str(p.relative_to(folder)): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and not p.name.startswith("soul.db")
    }
    return dump, files


def test_decay_as_of_a_future_time_is_a_dry_run_unless_apply(
    soupd_home: Home, start_soupd: StartSoupd
) -> None:
    soupd_home.add_soul("ada", DECAY_SOUL)
    daemon = start_soupd()
    t1 = dt.datetime.now(dt.UTC) + dt.timedelta(days=400)
    t2 = (t1 + dt.timedelta(days=8)).strftime("%Y-%m-%dT%H:%M:%SZ")
    # Two memories hidden as of t1, so that eight days later they are due to be purged.
    daemon.push("ada", "lunch was soup", kind="cron", mentioned=True)  # salience 0.6
    daemon.push("ada", "the api key rotates monthly")  # 0.5
    daemon.push("ada", "prod outage: disk full", kind="dm")  # 1.0: permanent
    hid = daemon.result("decay", {"soul": "ada", "now": t1.timestamp()})
    assert (hid["hidden"], hid["purged"], hid["dry_run"]) == (2, 0, False)
    # New memories to hide, an edge fired by a recall, markers from a failure.
    for text in ("red kite over the hill", "red fox in the yard", "grey heron at the pond",
                 "Deploy failed: database migration timeout"):  # fmt: skip
        daemon.push("ada", text)
    assert len(daemon.recall("ada", "red")) == 2
    daemon.result("confidence", {"soul": "ada", "topic": "deploy"})  # notes a gap
    # A dry run as of now commits what the soul held pending (the recall's edge, the
    # gap) and changes nothing else: from here on, nothing may change.
    present = ok(soupd_home.cli("decay", "ada", "--dry-run"))
    assert present.startswith("would hide 0 memories"), present
    assert "dry run, nothing changed" in present
    before = soul_state(soupd_home, "ada")
    feeling = daemon.result("confidence", {"soul": "ada", "topic": "deploy"})  # the gap known
    assert feeling["somatic"] < 0.5  # the failure's marker, felt (0.5: no feeling)
    stats = daemon.result("soul.stats", {"soul": "ada"})
    assert stats["edges"] == 1
    assert stats["markers"] > 0

    dry = soupd_home.cli("--json", "decay", "ada", "--now", t2)

    assert dry.returncode == 0, dry.stderr
    counted = json.loads(dry.stdout)
    assert counted["dry_run"] is True
    # The three calm new memories, unrecalled for 400 days (the failure is permanent).
    assert counted["hidden"] == 3
    assert counted["purged"] == 2
    assert counted["edges_pruned"] == 1
    assert counted["markers_pruned"] == stats["markers"]
    # Nothing stored changed, nor what the soul holds in memory (its markers, its index).
    assert soul_state(soupd_home, "ada") == before
    assert daemon.result("confidence", {"soul": "ada", "topic": "deploy"}) == feeling
    said = soupd_home.cli("decay", "ada", "--now", t2)
    assert said.returncode == 0, said.stderr
    assert said.stdout.startswith("would hide 3 memories, 2 purged, 1 edges and "), said.stdout
    assert "add --apply to run it" in said.stdout
    assert soul_state(soupd_home, "ada") == before

    applied = soupd_home.cli("--json", "decay", "ada", "--now", t2, "--apply")

    assert applied.returncode == 0, applied.stderr
    assert json.loads(applied.stdout) == {**counted, "dry_run": False}  # what it counted
    assert soul_state(soupd_home, "ada")[0] != before[0]
    assert daemon.result("soul.stats", {"soul": "ada"})["markers"] == 0
    # The markers in memory went too: no feeling left about it.
    assert daemon.result("confidence", {"soul": "ada", "topic": "deploy"})["somatic"] == 0.5
    assert daemon.recall("ada", "red") == []
    # Usage errors (exit 2), saying what is accepted, with nothing asked of the soul.
    after = soul_state(soupd_home, "ada")
    both = soupd_home.cli("decay", "ada", "--dry-run", "--apply")
    assert both.returncode == USAGE, both.stderr
    assert "--dry-run and --apply ask for opposite things; give one of them" in both.stderr
    for when in ("yesterday", "2026-13-01", "nan", "-5"):
        wrong = soupd_home.cli("decay", "ada", "--now", when)
        assert wrong.returncode == USAGE, (when, wrong.stderr)
        assert "give ISO 8601 (2026-11-29T09:30:00Z; UTC when it has no zone) or Unix" in (
            wrong.stderr
        ), when
    assert soul_state(soupd_home, "ada") == after
    # Unix seconds are a time too: a dry run as of t2, counting nothing more to do.
    seconds = str(dt.datetime.fromisoformat(t2).timestamp())
    again = json.loads(ok(soupd_home.cli("--json", "decay", "ada", "--now", seconds)))
    assert (again["dry_run"], again["hidden"], again["purged"]) == (True, 0, 0)


def epoch_numbers(value: object, path: str = "") -> list[str]:
    """Where ``value`` holds a number that reads as a Unix time of 2017-2049."""
    if isinstance(value, dict):
        return [p for k, v in value.items() for p in epoch_numbers(v, f"{path}/{k}")]
    if isinstance(value, list):
        return [p for i, v in enumerate(value) for p in epoch_numbers(v, f"{path}/{i}")]
    if isinstance(value, int | float) and not isinstance(value, bool) and 1.5e9 < value < 2.5e9:
        return [path]
    return []


def test_no_json_output_holds_an_epoch_time(soupd: Daemon) -> None:
    home = soupd.home
    for n in range(3):
        soupd.push("alpha", f"Deploy {n} failed: database migration timeout", sender="ci")
    ok(home.cli("claim", "add", "alpha", "The staging database is db-7"))
    ok(home.cli("remind", "alpha", "check the deploy", "--at", "2030-01-02T03:04:05Z"))
    ok(home.cli("reflect", "alpha"))
    ok(home.cli("recall", "alpha", "deploy"))
    commands = [
        ("tide", "alpha"),
        ("cards", "alpha"),
        ("ledger", "alpha"),
        ("memories", "alpha"),
        ("memory", "get", "alpha", "m1"),
        ("read", "alpha", "m1"),
        ("recall", "alpha", "deploy", "--explain"),
        ("context", "alpha", "deploy"),
        ("why", "alpha"),
        ("claims", "alpha", "--all"),
        ("goals", "alpha"),
        ("tasks", "alpha"),
        ("stats", "alpha"),
        ("status",),
        ("souls",),
        ("decay", "alpha", "--dry-run"),
        ("forget", "alpha", "--id", "m1", "--dry-run"),
    ]
    for args in commands:
        done = home.cli("--json", *args)
        assert done.returncode in (0, CHECK_FAILED), (args, done.stderr)  # tide: 3 if pending
        assert epoch_numbers(json.loads(done.stdout)) == [], args

    tide = json.loads(home.cli("--json", "tide", "alpha").stdout)
    since, until = (dt.datetime.fromisoformat(tide[key]) for key in ("since", "until"))
    assert since.utcoffset() == until.utcoffset() == dt.timedelta(0)
    assert until - since == dt.timedelta(days=7)


def test_an_unknown_soul_says_how_to_make_one(soupd: Daemon) -> None:
    home = soupd.home
    said = json_error(home.cli("--json", "recall", "gamma", "deploy"), NOT_FOUND)
    on_the_socket = soupd.call("event.push", {"soul": "gamma", "text": "x"})["error"]

    assert said["code"] == on_the_socket["code"] == "unknown_soul"
    assert said["message"] == on_the_socket["message"]
    assert "`soupd soul create gamma`" in said["message"]
    assert "souls/gamma.toml" in said["message"]
    assert "`soupd souls`" in said["message"]
    # The advice, followed as written, works.
    ok(home.cli("soul", "create", "gamma"))
    assert ok(home.cli("recall", "gamma", "deploy")) == "(nothing recalled)\n"
