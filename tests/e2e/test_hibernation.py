"""Hibernation, end to end: souls start hibernating, an idle soul closes its database and
the next message (a push, a recall, a due task) wakes it with all its data; nothing
acknowledged is lost however often it sleeps and wakes; status shows which souls are
awake. No test here measures time: ``hibernate_after`` is only made short."""

from __future__ import annotations

import datetime as dt
import json
import subprocess
from typing import Any

from .harness import SOUPD, Daemon, Home, StartSoupd, pipelined_pushes, wait_for

DOZY = "[lifecycle]\nhibernate_after = 0.05\n"
# Goes back to sleep only after housekeeping, never within a test otherwise.
SLEEPY = "[lifecycle]\nhibernate_after = 3600\n"
FAST = "[schedule]\ntasks_poll_seconds = 0.1\n"


def soul_row(daemon: Daemon, name: str) -> dict[str, Any]:
    (row,) = [s for s in daemon.result("soul.list")["souls"] if s["name"] == name]
    return row  # type: ignore[no-any-return]


def hibernating(daemon: Daemon, name: str) -> dict[str, Any] | None:
    row = soul_row(daemon, name)
    return row if row["state"] == "hibernating" else None


def test_a_soul_starts_hibernating_and_the_next_message_wakes_it(
    soupd_home: Home, start_soupd: StartSoupd
) -> None:
    soupd_home.add_soul("ada", DOZY)
    daemon = start_soupd()
    assert soul_row(daemon, "ada")["state"] == "hibernating"
    assert not (soupd_home.soul_dir("ada") / "soul.db").exists()  # nothing opened yet
    assert soupd_home.soul_dir("ada").is_dir()  # but its folder is there for SOUL.md

    first = daemon.push("ada", "the staging database moved to host db-7", ref="mv-1")
    assert first["status"] == "stored"
    asleep = wait_for(lambda: hibernating(daemon, "ada"), "ada to hibernate")
    assert asleep["wakes"] == 1

    (item,) = daemon.recall("ada", "staging database")  # wakes it, with its data
    assert item["refs"] == ["mv-1"]
    wait_for(lambda: hibernating(daemon, "ada"), "ada to hibernate again")
    assert daemon.push("ada", "moved again", ref="mv-1")["status"] == "duplicate"
    assert daemon.counts("ada") == (1, 1)
    assert soul_row(daemon, "ada")["wakes"] >= 3
    assert soul_row(daemon, "ada")["restarts"] == 0


def test_nothing_acknowledged_is_lost_while_a_soul_sleeps_and_wakes(
    soupd_home: Home, start_soupd: StartSoupd
) -> None:
    soupd_home.add_soul("ada", DOZY)
    daemon = start_soupd()
    statuses: dict[str, int] = {}
    with daemon.connect() as conn:
        for burst in range(8):
            refs = [(f"b{burst}-{i}", f"burst {burst} note {i}") for i in range(50)]
            conn.send(pipelined_pushes("ada", refs, first_id=burst * 100))
            for _ in refs:
                reply = conn.recv()
                status = reply["result"]["status"] if "result" in reply else reply["error"]
                statuses[str(status)] = statuses.get(str(status), 0) + 1
            if burst % 2:
                # Sometimes the next burst finds it asleep, sometimes falling asleep.
                wait_for(lambda: hibernating(daemon, "ada"), "ada to hibernate")
    assert statuses == {"stored": 400}
    assert daemon.counts("ada") == (400, 400)
    assert soul_row(daemon, "ada")["wakes"] >= 4
    assert daemon.stop() == 0

    again = start_soupd()
    assert again.counts("ada") == (400, 400)


def watch(home: Home, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [str(SOUPD), "--json", "watch", *args], env=home.env, stdout=subprocess.PIPE, text=True
    )


def test_a_due_task_wakes_a_hibernating_soul_only_for_itself(
    soupd_home: Home, start_soupd: StartSoupd
) -> None:
    soupd_home.write_config(FAST)
    soupd_home.add_soul("ada", SLEEPY)
    daemon = start_soupd()
    watcher = watch(soupd_home, "ada", "--kind", "wakeup")
    try:
        wait_for(lambda: daemon.result("daemon.status")["subscribers"] == 1, "the watcher")
        due = dt.datetime.now(dt.UTC) + dt.timedelta(seconds=2)
        (soupd_home.soul_dir("ada") / "TASKS.md").write_text(
            f"- [ ] call the dentist @due({due:%Y-%m-%dT%H:%M:%SZ})\n", encoding="utf-8"
        )
        assert watcher.stdout is not None
        output = json.loads(watcher.stdout.readline())
    finally:
        watcher.terminate()
        watcher.communicate(timeout=10)
    assert (output["soul"], output["kind"], output["payload"]["text"]) == (
        "ada",
        "wakeup",
        "call the dentist",
    )
    # Woken to read TASKS.md, then for the wake-up; asleep again after each, although
    # hibernate_after is an hour: housekeeping does not keep a soul awake.
    asleep = wait_for(lambda: hibernating(daemon, "ada"), "ada to hibernate")
    assert asleep["wakes"] >= 2
    found = daemon.result("recall", {"soul": "ada", "query": "dentist"})["items"]
    assert [item["text"] for item in found] == ["wake-up: call the dentist"]
    assert soul_row(daemon, "ada")["state"] == "running"  # a request keeps it awake


def test_status_shows_which_souls_are_awake(soupd_home: Home, start_soupd: StartSoupd) -> None:
    soupd_home.add_soul("ada")  # the default: hibernates when idle
    soupd_home.add_soul("bo", "[lifecycle]\nhibernate_after = 0\n")  # never
    soupd_home.add_soul("cy", SLEEPY)
    daemon = start_soupd()
    daemon.push("cy", "cy has something to do")

    status = daemon.result("daemon.status")
    assert (status["souls"], status["souls_awake"], status["souls_hibernating"]) == (3, 2, 1)
    table = soupd_home.cli("souls").stdout.splitlines()
    states = {line.split()[0]: line.split()[1] for line in table[1:]}
    assert states == {"ada": "hibernating", "bo": "running", "cy": "running"}
    human = soupd_home.cli("status").stdout.splitlines()
    assert "souls_hibernating: 1" in human


def test_a_restart_wakes_a_soul_only_to_catch_up(soupd_home: Home, start_soupd: StartSoupd) -> None:
    soupd_home.add_soul("ada", SLEEPY)
    first = start_soupd()
    first.push("ada", "kept across the restart", ref="k")
    assert first.stop() == 0

    second = start_soupd()
    # At start it catches up on what it missed (one short wake), then sleeps again.
    caught_up = wait_for(
        lambda: (
            second.result("daemon.status")["souls_catching_up"] == 0 and hibernating(second, "ada")
        ),
        "the catch-up",
    )
    assert caught_up["wakes"] == 1
    assert [i["refs"] for i in second.recall("ada", "kept")] == [["k"]]
