"""One daemon per state directory, and a socket folder no other user can write to."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from e2e.harness import Home, StartSoupd


def test_a_second_daemon_on_the_same_state_directory_names_the_first(
    soupd_home: Home, start_soupd: StartSoupd, tmp_path: Path
) -> None:
    first = start_soupd()
    first.push("default", "written by the first daemon")
    other = tmp_path / "other-run"
    other.mkdir(mode=0o700)

    second = soupd_home.cli("--socket", other / "soupd.sock", "start")

    assert second.returncode != 0
    lines = second.stderr.strip().splitlines()
    assert len(lines) == 1, second.stderr
    assert f"in use by soupd pid {first.pid}" in lines[0]
    assert str(soupd_home.state_dir) in lines[0]
    assert not (other / "soupd.sock").exists()
    # The first never noticed: it serves, and its events are its own.
    assert first.push("default", "still taking events")["status"] == "stored"
    assert first.counts("default") == (2, 2)
    assert first.stop() == 0
    # Its lock goes with it: the next daemon starts on the same state.
    again = start_soupd()
    assert again.counts("default") == (2, 2)


@pytest.mark.parametrize("owner", ["self", "nobody"])
def test_a_socket_folder_others_can_write_is_refused(
    soupd_home: Home, tmp_path: Path, owner: str
) -> None:
    shared = tmp_path / "shared-run"
    shared.mkdir()
    shared.chmod(0o777)
    if owner == "nobody":
        if os.geteuid() != 0:
            pytest.fail("giving a folder to another user needs root (CI runs as root)")
        os.chown(shared, 65534, 65534)

    started = soupd_home.cli("--socket", shared / "soupd.sock", "start")

    assert started.returncode == 2, started
    assert "not a private directory of this user" in started.stderr
    assert str(shared) in started.stderr
    assert not (shared / "soupd.sock").exists()
    assert not list(soupd_home.state_dir.glob("souls/*/soul.db"))  # no soul was opened
