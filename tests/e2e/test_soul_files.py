"""Bad soul files at start: the daemon refuses each one alone and runs the other souls.

A souls folder in the wild holds more than good files: an editor's backup copy with a
space in its name, a hidden file, a look-alike name in another script, a value of the
wrong type. Each is refused with a log line naming the file and the problem; a soul a
refused file would be is listed as failed and says why when asked; the good souls run.
Reloads go on working while a known-bad file stays as it was, and a mended file's soul
starts on the next reload; a new bad edit is rejected whole, as before.
"""

from __future__ import annotations

import signal
from pathlib import Path
from typing import Any

from e2e.harness import Daemon, Home, running, wait_for

OUTCOMES = ("config.reloaded", "config.reload_rejected")
BAD_VALUE = '[mailbox]\ncapacity = "plenty"\n'


def reload(daemon: Daemon) -> dict[str, Any]:
    seen = sum(1 for e in daemon.log() if e.get("event") in OUTCOMES)
    daemon.send_signal(signal.SIGHUP)

    def outcome() -> dict[str, Any] | None:
        done = [e for e in daemon.log() if e.get("event") in OUTCOMES]
        return done[seen] if len(done) > seen else None

    return wait_for(outcome, "the reload to finish")  # type: ignore[no-any-return]


def states(daemon: Daemon) -> dict[str, str]:
    return {s["name"]: s["state"] for s in daemon.result("soul.list")["souls"]}


def test_one_bad_soul_file_refuses_that_soul_only(soupd_home: Home) -> None:
    soupd_home.add_soul("alpha", "[hygiene]\nmax_chars = 700\n")
    soupd_home.add_soul("ada copy", "")  # a backup copy: a space is no soul name
    soupd_home.add_soul(".hidden", "")
    soupd_home.add_soul("\u0430da", "")  # Cyrillic a (U+0430): a look-alike of "ada"
    soupd_home.add_soul("bob", BAD_VALUE)
    souls = soupd_home.config_dir / "souls"
    with running(soupd_home) as daemon:
        # The good soul serves.
        assert daemon.push("alpha", "the harbour crane is fixed")["status"] == "stored"
        assert daemon.recall("alpha", "harbour crane")
        # Each bad file is refused alone, named with its problem.
        refused = {e["file"]: e for e in daemon.log() if e.get("event") == "soul.config_refused"}
        assert set(refused) == {
            str(souls / "ada copy.toml"),
            str(souls / ".hidden.toml"),
            str(souls / "\u0430da.toml"),
            str(souls / "bob.toml"),
        }
        assert all(e["level"] == "error" for e in refused.values())
        assert "rename the file" in refused[str(souls / "ada copy.toml")]["problem"]
        assert refused[str(souls / "bob.toml")]["key"] == "mailbox.capacity"
        # bob is known, failed, and says why; names that cannot be souls are not listed.
        assert states(daemon) == {"alpha": "running", "bob": "failed"}
        error = daemon.call("event.push", {"soul": "bob", "text": "hello"})["error"]
        assert error["code"] == "soul_unavailable", error
        assert "bob.toml" in error["message"]
        assert "mailbox.capacity" in error["message"]

        # Known-bad files left as they are do not block an edit of another soul.
        soupd_home.add_soul("alpha", "[hygiene]\nmax_chars = 900\n")
        assert reload(daemon)["event"] == "config.reloaded"
        too_long = daemon.call("event.push", {"soul": "alpha", "text": "y" * 901})
        assert "limit of 900" in too_long["error"]["message"]

        # Mended, bob starts on the next reload and keeps what it is given.
        soupd_home.add_soul("bob", "[mailbox]\ncapacity = 64\n")
        assert reload(daemon)["event"] == "config.reloaded"
        wait_for(lambda: states(daemon).get("bob") in ("running", "hibernating"), "bob to run")
        assert daemon.push("bob", "bob's first note")["status"] == "stored"

        # A new bad edit is rejected whole, and the last good config stays in force.
        soupd_home.add_soul("alpha", BAD_VALUE)
        rejected = reload(daemon)
        assert rejected["event"] == "config.reload_rejected"
        assert rejected["file"] == str(souls / "alpha.toml")
        too_long = daemon.call("event.push", {"soul": "alpha", "text": "y" * 901})
        assert "limit of 900" in too_long["error"]["message"]


def test_config_check_still_fails_on_a_bad_soul_file(soupd_home: Home) -> None:
    soupd_home.add_soul("alpha", "")
    soupd_home.add_soul("bob", BAD_VALUE)
    checked = soupd_home.cli("config", "check")
    assert checked.returncode == 2, checked
    assert "bob.toml: mailbox.capacity" in checked.stderr


def test_a_soul_never_opens_a_planted_link_or_another_users_file(
    soupd_home: Home, tmp_path: Path
) -> None:
    soupd_home.add_soul("alpha")
    soupd_home.add_soul("bob")
    soupd_home.add_soul("carol")
    with running(soupd_home) as daemon:
        daemon.push("alpha", "alpha's private diary: the flamingo code is 4711")
        daemon.push("carol", "carol's note")
    # bob's database becomes a link to alpha's; carol's folder opens to everyone.
    bob_db = soupd_home.soul_dir("bob") / "soul.db"
    bob_db.unlink(missing_ok=True)
    bob_db.symlink_to(soupd_home.soul_dir("alpha") / "soul.db")
    soupd_home.soul_dir("carol").chmod(0o777)
    # alpha's MEMORY.md temporary is planted as a link to a file outside its folder.
    outside = tmp_path / "outside.txt"
    outside.write_text("not the soul's")
    planted = soupd_home.soul_dir("alpha") / ".MEMORY.md.tmp"
    planted.unlink(missing_ok=True)
    planted.symlink_to(outside)
    with running(soupd_home) as daemon:
        refused = daemon.call("recall", {"soul": "bob", "query": "flamingo"})["error"]
        assert refused["code"] == "soul_unavailable", refused
        assert str(bob_db) in refused["message"]
        assert "not a regular file" in refused["message"]
        assert "flamingo" not in str(refused)
        opened = daemon.call("recall", {"soul": "carol", "query": "note"})["error"]
        assert "can be written by other users" in opened["message"]
        # alpha serves, and rewrites its MEMORY.md without writing through the link.
        assert daemon.recall("alpha", "flamingo code")
        assert daemon.result("reflect", {"soul": "alpha"})["layer"] == "consolidated"
        assert outside.read_text() == "not the soul's"
        memory = soupd_home.soul_dir("alpha") / "MEMORY.md"
        assert memory.is_file()
        assert not memory.is_symlink()
        assert not planted.exists()


def test_two_souls_sharing_a_brain_dir_refuse_the_later(soupd_home: Home, tmp_path: Path) -> None:
    brain = tmp_path / "brain"
    soupd_home.add_soul("alpha", f'brain_dir = "{brain}"\n')
    soupd_home.add_soul("bob", f'brain_dir = "{brain}"\n')
    checked = soupd_home.cli("config", "check")
    assert checked.returncode == 2, checked
    assert "bob.toml: brain_dir" in checked.stderr
    assert "soul 'alpha'" in checked.stderr
    with running(soupd_home) as daemon:
        assert states(daemon) == {"alpha": "hibernating", "bob": "failed"}
        assert daemon.push("alpha", "alpha writes its brain")["status"] == "stored"
