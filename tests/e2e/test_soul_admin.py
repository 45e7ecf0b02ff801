"""Souls at run time, end to end: soul.create writes the soul's file (atomically, 0600)
and starts it, soul.delete stops it and removes the file (its data kept unless purged);
bad names and bad settings are refused with a clear error and no file written; the
default soul is never removed silently."""

from __future__ import annotations

import json
import signal
import stat
import tomllib
from pathlib import Path
from typing import Any

import pytest

from .harness import Daemon, Home, StartSoupd, wait_for

FAKE_KEY = "AKIA" + "ABCDEFGHIJ234567"  # assembled so no scanner takes it for a leak


def names(daemon: Daemon) -> dict[str, str]:
    return {s["name"]: s["state"] for s in daemon.result("soul.list")["souls"]}


def settle(daemon: Daemon, expected: dict[str, str]) -> None:
    """Wait for the souls to come to ``expected`` (fails if they don't): at start every
    soul opens to catch up on its housekeeping and then hibernates, so "starting" is
    only on the way there."""
    wait_for(lambda: names(daemon) == expected, f"souls {expected}")


def soul_files(home: Home) -> list[str]:
    folder = home.config_dir / "souls"
    return sorted(p.name for p in folder.iterdir()) if folder.is_dir() else []


def test_create_push_recall_restart_delete_purge(soupd_home: Home, start_soupd: StartSoupd) -> None:
    daemon = start_soupd()
    settle(daemon, {"default": "hibernating"})
    daemon.push("default", "the default soul keeps its memories")
    created = daemon.result(
        "soul.create",
        {"soul": "ada", "config": {"recall": {"k": 3}, "lifecycle": {"hibernate_after": 0}}},
    )
    path = soupd_home.config_dir / "souls" / "ada.toml"
    assert created == {"soul": "ada", "file": str(path), "state": "running",
                       "default_kept": True, "reopened": None}  # fmt: skip
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert tomllib.loads(path.read_text()) == {
        "recall": {"k": 3},
        "lifecycle": {"hibernate_after": 0},
    }
    # The first soul file did not take the default soul away: it got a file of its own.
    assert soul_files(soupd_home) == ["ada.toml", "default.toml"]
    assert set(names(daemon)) == {"ada", "default"}
    assert names(daemon)["ada"] == "running"  # hibernate_after = 0: awake from the start

    for n in range(5):
        daemon.push("ada", f"note {n} about the harbour crane")
    assert len(daemon.recall("ada", "harbour crane")) == 3  # its own [recall] k
    assert daemon.recall("default", "memories")

    # A restart finds the soul in its file, with its data.
    assert daemon.stop() == 0
    daemon = start_soupd()
    settle(daemon, {"ada": "running", "default": "hibernating"})
    assert len(daemon.recall("ada", "harbour crane")) == 3
    assert daemon.recall("default", "memories")

    deleted = daemon.result("soul.delete", {"soul": "ada"})
    state = soupd_home.soul_dir("ada")
    assert deleted == {"soul": "ada", "file": str(path), "stopped": True, "purged": False,
                       "kept": [str(state)]}  # fmt: skip
    assert not path.exists()
    assert "ada" not in names(daemon)
    assert daemon.call("recall", {"soul": "ada", "query": "crane"})["error"]["code"] == (
        "unknown_soul"
    )
    assert (state / "soul.db").exists()  # data kept
    # The same name is not silently the old soul again: refused, naming the data.
    refused = daemon.call("soul.create", {"soul": "ada"})
    assert refused["error"]["code"] == "invalid_params", refused
    message = refused["error"]["message"]
    assert str(state) in message
    assert "reopen" in message
    assert "soupd soul delete ada --purge" in message
    assert not path.exists()
    assert "ada" not in names(daemon)
    # Asked for, the soul finds its data where it left it, and says where.
    reopened = daemon.result("soul.create", {"soul": "ada", "reopen": True})
    assert reopened["reopened"] == str(state)
    assert path.read_text() == ""
    assert len(daemon.recall("ada", "harbour crane", k=10)) == 5
    (line,) = [e for e in daemon.log() if e.get("event") == "soul.created" and e["reopened"]]
    assert line["reopened"] == str(state)

    purged = daemon.result("soul.delete", {"soul": "ada", "purge": True})
    assert (purged["purged"], purged["kept"]) == (True, [])
    assert not state.exists()
    assert not path.exists()
    assert daemon.call("soul.delete", {"soul": "ada"})["error"]["code"] == "unknown_soul"
    assert daemon.stop() == 0
    daemon = start_soupd()
    assert set(names(daemon)) == {"default"}  # its own file stays


def test_kept_data_is_purged_later_and_never_reopened_unasked(
    soupd_home: Home, start_soupd: StartSoupd
) -> None:
    soupd_home.add_soul("bob")
    daemon = start_soupd()
    daemon.result("soul.create", {"soul": "ada"})
    daemon.push("ada", "the lighthouse keeper's log")
    deleted = daemon.result("soul.delete", {"soul": "ada"})
    state = soupd_home.soul_dir("ada")
    assert deleted["kept"] == [str(state)]
    # No soul, only its data: a delete without purge says so and keeps it.
    kept = daemon.call("soul.delete", {"soul": "ada"})
    assert kept["error"]["code"] == "unknown_soul", kept
    assert str(state) in kept["error"]["message"]
    assert "soupd soul delete ada --purge" in kept["error"]["message"]
    assert (state / "soul.db").exists()
    # With purge, the kept data goes.
    purged = daemon.result("soul.delete", {"soul": "ada", "purge": True})
    assert purged == {"soul": "ada", "file": None, "stopped": False, "purged": True, "kept": []}
    assert not state.exists()
    (line,) = [e for e in daemon.log() if e.get("event") == "soul.deleted" and not e["file"]]
    assert (line["soul"], line["purged"]) == ("ada", True)
    nothing = daemon.call("soul.delete", {"soul": "ada", "purge": True})
    assert nothing["error"]["code"] == "unknown_soul"
    assert "kept" not in nothing["error"]["message"]
    # A name no soul ever had, or one that is no name, is refused as before.
    assert daemon.call("soul.delete", {"soul": "carol", "purge": True})["error"]["code"] == (
        "unknown_soul"
    )
    evil = daemon.call("soul.delete", {"soul": "../bob", "purge": True})
    assert evil["error"]["code"] == "invalid_params", evil
    assert (soupd_home.state_dir / "souls" / "bob").exists()
    # Created again now, the soul starts empty, and no reopen is needed.
    fresh = daemon.result("soul.create", {"soul": "ada"})
    assert fresh["reopened"] is None
    assert daemon.recall("ada", "lighthouse") == []
    # A reopen with nothing kept is a plain create.
    assert daemon.result("soul.create", {"soul": "cy", "reopen": True})["reopened"] is None


@pytest.mark.parametrize(
    ("params", "code", "said"),
    [
        ({"soul": "../evil"}, "invalid_params", "soul name"),
        ({"soul": ".hidden"}, "invalid_params", "soul name"),
        ({"soul": "a/b"}, "invalid_params", "soul name"),
        ({"soul": ""}, "invalid_params", "soul name"),
        ({"soul": "default"}, "invalid_params", "exists already"),
        ({"soul": "ada", "config": {"recal": {"k": 3}}}, "invalid_params", "recal"),
        ({"soul": "ada", "config": {"recall": {"k": "many"}}}, "invalid_params", "recall.k"),
        ({"soul": "ada", "config": {"lifecycle": {"hibernate_after": -1}}}, "invalid_params",
         "hibernate_after"),
        ({"soul": "ada", "config": {"schedule": {"decay": "S03:00"}}}, "invalid_params",
         "schedule"),
        ({"soul": "ada", "config": {"recall": [{"k": 1}]}}, "invalid_params", "recall"),
        ({"soul": "ada", "toml": "[recall\nk = 3"}, "invalid_params", "not valid TOML"),
        ({"soul": "ada", "toml": "", "config": {}}, "invalid_params", "not both"),
        ({"soul": "ada", "config": {"llm": {"base_url": "http://x/?key=" + FAKE_KEY}}},
         "hygiene.credential", "credential"),
        ({"soul": "ada", "colour": "red"}, "invalid_params", "colour"),
    ],
)  # fmt: skip
def test_bad_names_and_settings_are_refused_and_nothing_is_written(
    soupd_home: Home, start_soupd: StartSoupd, params: dict[str, Any], code: str, said: str
) -> None:
    daemon = start_soupd()
    reply = daemon.call("soul.create", params)
    assert reply["error"]["code"] == code, reply
    assert said in reply["error"]["message"], reply
    assert soul_files(soupd_home) == []
    assert not list(soupd_home.root.rglob("evil*"))
    settle(daemon, {"default": "hibernating"})


def test_a_soul_that_cannot_start_leaves_no_file(
    soupd_home: Home, start_soupd: StartSoupd, tmp_path: Path
) -> None:
    soupd_home.add_soul("bob")
    daemon = start_soupd()
    blocked = tmp_path / "a-file"
    blocked.write_text("not a folder")
    reply = daemon.call("soul.create", {"soul": "ada", "config": {
        "brain_dir": str(blocked / "brain"), "lifecycle": {"hibernate_after": 0}}})  # fmt: skip
    assert reply["error"]["code"] == "invalid_params", reply
    assert "cannot start" in reply["error"]["message"]
    assert soul_files(soupd_home) == ["bob.toml"]
    settle(daemon, {"bob": "hibernating"})
    # Another soul's folder is refused as at load.
    shared = daemon.call("soul.create", {"soul": "ada", "config": {
        "brain_dir": str(soupd_home.soul_dir("bob"))}})  # fmt: skip
    assert "bob" in shared["error"]["message"], shared
    assert soul_files(soupd_home) == ["bob.toml"]


def test_cli_create_list_delete(soupd_home: Home, start_soupd: StartSoupd) -> None:
    soupd_home.add_soul("bob")
    start_soupd()
    made = soupd_home.cli("soul", "create", "ada", "--set", "recall.k=4",
                          "--set", "lifecycle.hibernate_after=0", "--json")  # fmt: skip
    assert made.returncode == 0, made.stderr
    assert json.loads(made.stdout)["state"] == "running"
    path = soupd_home.config_dir / "souls" / "ada.toml"
    assert tomllib.loads(path.read_text()) == {
        "recall": {"k": 4},
        "lifecycle": {"hibernate_after": 0},
    }
    listed = soupd_home.cli("souls", "--json")
    assert [s["name"] for s in json.loads(listed.stdout)["souls"]] == ["ada", "bob"]
    human = soupd_home.cli("soul", "list")
    assert human.returncode == 0
    assert "ada" in human.stdout
    assert "running" in human.stdout
    again = soupd_home.cli("soul", "create", "ada")
    assert again.returncode == 5, again.stderr  # refused input
    assert "exists already" in again.stderr
    bad = soupd_home.cli("soul", "create", "x", "--set", "recall")
    assert bad.returncode == 5, bad.stderr
    gone = soupd_home.cli("soul", "delete", "ada", "--purge")
    assert gone.returncode == 0, gone.stderr
    assert "state folder removed" in gone.stdout
    assert not path.exists()
    assert not soupd_home.soul_dir("ada").exists()
    missing = soupd_home.cli("soul", "delete", "ada")
    assert missing.returncode == 6, missing.stderr  # not found


def test_cli_reopens_kept_data_only_when_asked_and_purges_it_later(
    soupd_home: Home, start_soupd: StartSoupd
) -> None:
    soupd_home.add_soul("bob")
    daemon = start_soupd()
    assert soupd_home.cli("soul", "create", "ada").returncode == 0
    daemon.push("ada", "the tide tables for March")
    assert soupd_home.cli("soul", "delete", "ada").returncode == 0
    state = soupd_home.soul_dir("ada")

    refused = soupd_home.cli("soul", "create", "ada")
    assert refused.returncode == 5, refused.stderr  # refused input
    assert str(state) in refused.stderr
    assert "soupd soul create ada --reopen" in refused.stderr
    reopened = soupd_home.cli("soul", "create", "ada", "--reopen")
    assert reopened.returncode == 0, reopened.stderr
    assert f"reopened the data it kept: {state}" in reopened.stdout
    assert daemon.recall("ada", "tide tables")

    assert soupd_home.cli("soul", "delete", "ada").returncode == 0
    kept = soupd_home.cli("soul", "delete", "ada")
    assert kept.returncode == 6, kept.stderr  # no such soul, and it says what is left
    assert str(state) in kept.stderr
    purged = soupd_home.cli("soul", "delete", "ada", "--purge", "--json")
    assert purged.returncode == 0, purged.stderr
    assert json.loads(purged.stdout) == {
        "soul": "ada", "file": None, "stopped": False, "purged": True, "kept": []
    }  # fmt: skip
    assert not state.exists()
    made = soupd_home.cli("soul", "create", "ada", "--json")
    assert made.returncode == 0, made.stderr
    assert json.loads(made.stdout)["reopened"] is None
    assert daemon.recall("ada", "tide tables") == []


def test_a_hand_added_first_file_says_the_default_soul_stops(
    soupd_home: Home, start_soupd: StartSoupd
) -> None:
    daemon = start_soupd()
    daemon.push("default", "remember the default soul")
    soupd_home.add_soul("ada")
    seen = len(daemon.log())
    daemon.send_signal(signal.SIGHUP)

    def warned() -> dict[str, Any] | None:
        lines = [e for e in daemon.log()[seen:] if e.get("event") == "soul.default_removed"]
        return lines[0] if lines else None

    line = wait_for(warned, "the warning that the default soul stopped")
    assert "default.toml" in line["fix"]
    assert line["kept"] == str(soupd_home.soul_dir("default"))
    checked = soupd_home.cli("config", "check", "--json")
    warnings = json.loads(checked.stdout)["warnings"]
    assert any("default" in w["problem"] and "does not run" in w["problem"] for w in warnings)
    assert "soupd soul create default --reopen" in line["fix"]
    # Its data is intact: its own file brings it back, asked for (its data is kept data).
    assert daemon.call("soul.create", {"soul": "default"})["error"]["code"] == "invalid_params"
    daemon.result("soul.create", {"soul": "default", "reopen": True})
    assert daemon.recall("default", "remember")


def test_the_config_watcher_sees_nothing_to_redo(soupd_home: Home, start_soupd: StartSoupd) -> None:
    soupd_home.write_config("[reload]\nwatch = true\npoll_seconds = 0.1\n")
    daemon = start_soupd()
    daemon.result("soul.create", {"soul": "ada", "config": {"lifecycle": {"hibernate_after": 0}}})
    daemon.push("ada", "written before the watcher looks")

    def reloaded() -> bool:
        return any(e.get("event") == "config.reloaded" for e in daemon.log())

    wait_for(reloaded, "the watcher to reload the changed folder")
    # The files it found are what the daemon runs already: no soul was started or stopped.
    assert not [e for e in daemon.log() if e.get("event") == "soul.reloaded"]
    (ada,) = [s for s in daemon.result("soul.list")["souls"] if s["name"] == "ada"]
    assert (ada["state"], ada["restarts"]) == ("running", 0)
    assert daemon.recall("ada", "watcher")
    daemon.result("soul.delete", {"soul": "ada"})
    seen = sum(1 for e in daemon.log() if e.get("event") == "config.reloaded")
    wait_for(
        lambda: sum(1 for e in daemon.log() if e.get("event") == "config.reloaded") > seen,
        "the watcher to see the file gone",
    )
    assert not [e for e in daemon.log() if e.get("event") == "soul.reloaded"]
    assert set(names(daemon)) == {"default"}


def test_a_refused_file_can_be_deleted_and_the_soul_made_again(
    soupd_home: Home, start_soupd: StartSoupd
) -> None:
    soupd_home.add_soul("bob")
    bad = soupd_home.add_soul("ada", '[mailbox]\ncapacity = "plenty"\n')
    daemon = start_soupd()
    assert names(daemon)["ada"] == "failed"
    taken = daemon.call("soul.create", {"soul": "ada"})
    assert "exists already" in taken["error"]["message"]
    deleted = daemon.result("soul.delete", {"soul": "ada"})
    assert deleted["file"] == str(bad)
    assert not bad.exists()
    assert set(names(daemon)) == {"bob"}
    daemon.result("soul.create", {"soul": "ada", "config": {"mailbox": {"capacity": 64}}})
    assert daemon.push("ada", "a fresh start")["status"] == "stored"
    # The last file gone, the default soul runs, as it would at the next start.
    daemon.result("soul.delete", {"soul": "ada"})
    daemon.result("soul.delete", {"soul": "bob"})
    assert set(names(daemon)) == {"default"}
    assert daemon.push("default", "back to the default")["status"] == "stored"
    refused = daemon.call("soul.delete", {"soul": "default"})
    assert "no file to delete" in refused["error"]["message"]


def test_an_unknown_key_is_told_as_config_check_tells_it(
    soupd_home: Home, start_soupd: StartSoupd, tmp_path: Path
) -> None:
    """soul.create (socket and CLI), the daemon's load and config check all name the
    closest known key and the table's keys."""
    typo = soupd_home.add_soul("carol", "[recall]\nkk = 1\n")
    daemon = start_soupd()
    checked = soupd_home.cli("config", "check", typo)
    assert checked.returncode != 0
    told = checked.stderr.split(f"{typo}: ", 1)[1].strip()
    assert told.startswith("recall.kk: unknown key; did you mean 'k'? (keys: k, "), told
    (refused,) = [e for e in daemon.log() if e.get("event") == "soul.config_refused"]
    assert f"recall.kk: {refused['problem']}" == told
    reply = daemon.call("soul.create", {"soul": "ada", "config": {"recall": {"kk": 1}}})
    assert reply["error"]["code"] == "invalid_params", reply
    assert reply["error"]["message"].endswith(f"ada.toml: {told}"), reply
    by_cli = soupd_home.cli("soul", "create", "bad", "--set", "recall.kk=1")
    assert by_cli.returncode == 5, by_cli.stderr
    assert f"bad.toml: {told}" in by_cli.stderr
    # A table of soupd.toml in a soul file: the soul file's tables are the keys.
    wrong_file = tmp_path / "wrong.toml"
    wrong_file.write_text('[paths]\nstate_dir = "/tmp/x"\n')
    by_file = soupd_home.cli("soul", "create", "bad", "--file", wrong_file)
    assert by_file.returncode == 5, by_file.stderr
    said = by_file.stderr.split("bad.toml: ", 1)[1].strip()
    assert said.startswith("paths: unknown key; "), said
    assert "(keys: " in said
    assert "recall" in said.split("(keys: ", 1)[1]
    assert soul_files(soupd_home) == ["carol.toml"]
