"""Time, end to end: @due wake-ups from TASKS.md (live, and missed while the daemon was
down), reminders the soul sets, lines it cannot read, and hot reload of the config."""

from __future__ import annotations

import datetime as dt
import json
import signal
import subprocess
import time

from .harness import SOUPD, Daemon, Home, StartSoupd, wait_for

FAST = "[schedule]\ntasks_poll_seconds = 0.1\n"


def at(seconds_from_now: float) -> str:
    moment = dt.datetime.now(dt.UTC) + dt.timedelta(seconds=seconds_from_now)
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def watch(home: Home, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [str(SOUPD), "--json", "watch", *args],
        env=home.env,
        stdout=subprocess.PIPE,
        text=True,
    )


def outputs(process: subprocess.Popen[str]) -> list[dict[str, object]]:
    process.terminate()
    out, _ = process.communicate(timeout=10)
    return [json.loads(line) for line in out.splitlines()]


def wakeups(daemon: Daemon, soul: str) -> list[str]:
    found = daemon.result("recall", {"soul": soul, "query": "wake-up", "k": 50})["items"]
    return sorted(item["text"] for item in found if item["kind"] == "observation")


def test_a_due_task_wakes_the_soul_and_reaches_subscribers(
    soupd_home: Home, start_soupd: StartSoupd
) -> None:
    soupd_home.write_config(FAST)
    soupd_home.add_soul("ada")
    daemon = start_soupd()
    watcher = watch(soupd_home, "ada", "--kind", "wakeup")
    try:
        wait_for(lambda: daemon.result("daemon.status")["subscribers"] == 1, "the watcher")
        tasks = soupd_home.soul_dir("ada") / "TASKS.md"
        tasks.write_text(f"# Tasks\n- [ ] call the dentist @due({at(2)})\n", encoding="utf-8")
        wait_for(lambda: wakeups(daemon, "ada"), "the wake-up event", timeout=15)
    finally:
        seen = outputs(watcher)
    assert [(o["soul"], o["kind"], o["payload"]["text"]) for o in seen] == [
        ("ada", "wakeup", "call the dentist")
    ]
    assert wakeups(daemon, "ada") == ["wake-up: call the dentist"]
    listed = daemon.result("tasks", {"soul": "ada"})
    assert listed["pending"] == []
    assert [t["text"] for t in listed["fired"]] == ["call the dentist"]


def test_watch_shows_a_wakeups_due_time_as_iso_8601(
    soupd_home: Home, start_soupd: StartSoupd
) -> None:
    soupd_home.write_config(FAST)
    soupd_home.add_soul("ada")
    daemon = start_soupd()
    watcher = subprocess.Popen(
        [str(SOUPD), "watch", "ada", "--kind", "wakeup"],
        env=soupd_home.env,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        wait_for(lambda: daemon.result("daemon.status")["subscribers"] == 1, "the watcher")
        due = at(2)
        added = soupd_home.cli("remind", "ada", "ping me soon", "--at", due)
        assert added.returncode == 0, added.stderr
        wait_for(lambda: wakeups(daemon, "ada"), "the wake-up event", timeout=15)
    finally:
        watcher.terminate()
        out, _ = watcher.communicate(timeout=10)
    [line] = out.splitlines()
    assert " ada wakeup: " in line, line
    assert "text=ping me soon" in line
    # Readable, with its zone, as --json gives it; never the raw Unix seconds.
    assert f"due={due.removesuffix('Z')}+00:00" in line, line
    stamp = dt.datetime.fromisoformat(due).timestamp()
    assert str(stamp) not in line


def test_a_task_due_while_the_daemon_was_down_fires_at_start_once(
    soupd_home: Home, start_soupd: StartSoupd
) -> None:
    soupd_home.write_config(FAST)
    soupd_home.add_soul("ada")
    daemon = start_soupd()
    tasks = soupd_home.soul_dir("ada") / "TASKS.md"
    tasks.write_text(f"- [ ] renew the certificate @due({at(3)})\n", encoding="utf-8")
    wait_for(lambda: daemon.result("tasks", {"soul": "ada"})["pending"], "the task is known")
    assert daemon.stop() == 0
    time.sleep(3.5)  # the due time passes while nobody runs

    again = start_soupd()
    wait_for(lambda: wakeups(again, "ada"), "the missed wake-up", timeout=15)
    assert again.stop() == 0
    third = start_soupd()  # and never twice, however often the daemon starts
    time.sleep(0.5)
    assert wakeups(third, "ada") == ["wake-up: renew the certificate"]


def test_editing_checking_and_deleting_tasks(soupd_home: Home, start_soupd: StartSoupd) -> None:
    soupd_home.write_config(FAST)
    soupd_home.add_soul("ada")
    daemon = start_soupd()
    tasks = soupd_home.soul_dir("ada") / "TASKS.md"
    tasks.write_text(
        f"- [ ] one @due({at(3600)})\n- [ ] two @due({at(3600)})\n- [ ] three @due({at(7200)})\n"
        "- [ ] broken @due(2026-02-30)\n",
        encoding="utf-8",
    )

    def pending() -> list[str]:
        return [t["text"] for t in daemon.result("tasks", {"soul": "ada"})["pending"]]

    wait_for(lambda: sorted(pending()) == ["one", "three", "two"], "three pending tasks")
    # Check one, delete two, move three to two seconds from now.
    tasks.write_text(f"- [x] one @due({at(3600)})\n- [ ] three @due({at(2)})\n", encoding="utf-8")
    wait_for(lambda: wakeups(daemon, "ada") == ["wake-up: three"], "the moved task", timeout=15)
    assert pending() == []
    cli = soupd_home.cli("tasks", "ada")
    assert cli.returncode == 0
    assert "(no pending tasks)" in cli.stdout


def test_unreadable_lines_are_reported(soupd_home: Home, start_soupd: StartSoupd) -> None:
    soupd_home.add_soul("ada")
    daemon = start_soupd()
    (soupd_home.soul_dir("ada") / "TASKS.md").write_text(
        "- [ ] fine @due(2099-01-01)\n- [ ] broken @due(2026-13-01)\n", encoding="utf-8"
    )
    cli = soupd_home.cli("tasks", "ada")
    assert cli.returncode == 3
    assert "line 2" in cli.stdout
    assert "is not a date" in cli.stdout
    wait_for(
        lambda: any(e.get("event") == "tasks.unreadable_line" for e in daemon.log()),
        "the log line",
    )


def test_remind_appends_without_disturbing_the_file(
    soupd_home: Home, start_soupd: StartSoupd
) -> None:
    soupd_home.write_config(FAST)
    soupd_home.add_soul("ada")
    daemon = start_soupd()
    tasks = soupd_home.soul_dir("ada") / "TASKS.md"
    original = "# My list\n\nSome prose, *formatted*.\n- [ ] a thing @due(2099-01-01)"
    tasks.write_text(original, encoding="utf-8")
    added = soupd_home.cli("remind", "ada", "water the plants", "--at", at(2))
    assert added.returncode == 0, added.stderr
    assert "water the plants" in added.stdout
    text = tasks.read_text(encoding="utf-8")
    assert text.startswith(original + "\n")
    assert text.endswith("\n")
    wait_for(lambda: wakeups(daemon, "ada") == ["wake-up: water the plants"], "the reminder")
    bad = soupd_home.cli("remind", "ada", "nope", "--at", "tomorrow-ish")
    assert bad.returncode == 5  # refused input
    assert "invalid_params" in bad.stderr


def test_the_same_reminder_twice_is_stored_once(soupd_home: Home, start_soupd: StartSoupd) -> None:
    soupd_home.add_soul("ada")
    daemon = start_soupd()
    first = soupd_home.cli(
        "--json", "remind", "ada", "call the dentist", "--at", "2030-01-01T09:00Z"
    )
    assert first.returncode == 0, first.stderr
    added = json.loads(first.stdout)
    assert added["existing"] is False
    # Again, spelled another way (the same instant, whitespace collapsed): nothing new.
    again = soupd_home.cli("remind", "ada", "call  the dentist", "--at", "2030-01-01 10:00+01:00")
    assert again.returncode == 0, again.stderr
    assert f"already set, nothing added (key {added['key']})" in again.stdout
    repeated = json.loads(
        soupd_home.cli(
            "--json", "remind", "ada", "call the dentist", "--at", "2030-01-01T09:00Z"
        ).stdout
    )
    assert (repeated["existing"], repeated["key"]) == (True, added["key"])
    text = (soupd_home.soul_dir("ada") / "TASKS.md").read_text(encoding="utf-8")
    assert text.count("call the dentist") == 1
    listed = soupd_home.cli("tasks", "ada")
    assert listed.returncode == 0, listed.stdout  # no line of its own flagged
    assert "duplicate" not in listed.stdout
    assert "2030-01-01 09:00 UTC  call the dentist  (line 1)" in listed.stdout
    assert not [e for e in daemon.log() if e.get("event") == "tasks.unreadable_line"]


def test_sighup_reloads_souls_and_rejects_a_bad_edit(
    soupd_home: Home, start_soupd: StartSoupd
) -> None:
    soupd_home.add_soul("ada")
    soupd_home.add_soul("bob")
    daemon = start_soupd()
    daemon.result("event.push", {"soul": "ada", "text": "ada remembers this"})

    def souls() -> dict[str, str]:
        return {s["name"]: s["state"] for s in daemon.result("soul.list")["souls"]}

    soupd_home.add_soul("cy")  # appears
    (soupd_home.config_dir / "souls" / "bob.toml").unlink()  # goes away
    soupd_home.add_soul("ada", "[recall]\nk = 3\n")  # changes
    daemon.send_signal(signal.SIGHUP)
    # Started anew, as every soul starts: hibernating until mail comes.
    wait_for(lambda: souls() == {"ada": "hibernating", "cy": "hibernating"}, "the reloaded souls")
    assert daemon.result("recall", {"soul": "ada", "query": "remembers"})["items"]

    soupd_home.add_soul("ada", "[recall]\nkk = 3\n")  # a typo
    daemon.send_signal(signal.SIGHUP)
    rejected = wait_for(
        lambda: [e for e in daemon.log() if e.get("event") == "config.reload_rejected"],
        "the rejection",
    )
    assert rejected[-1]["key"] == "recall.kk"
    assert rejected[-1]["file"].endswith("ada.toml")
    assert souls() == {"ada": "running", "cy": "hibernating"}  # the last good config stays


def test_file_changes_reload_when_watching(soupd_home: Home, start_soupd: StartSoupd) -> None:
    soupd_home.write_config("[reload]\nwatch = true\npoll_seconds = 0.1\n")
    soupd_home.add_soul("ada")
    daemon = start_soupd()
    soupd_home.add_soul("bo")
    wait_for(
        lambda: {s["name"] for s in daemon.result("soul.list")["souls"]} == {"ada", "bo"},
        "the new soul",
    )
