"""A full disk: writes are refused plainly, the soul stays up and answers reads, and it
stores again once there is room (a real tmpfs, filled to the brim, then grown).

Reported: SQLITE_FULL crashed the soul four times, then it stayed failed after space was
freed and after SIGHUP; clients were told "cannot rollback - no transaction is active".
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from e2e.harness import Home, StartSoupd


# Text that compresses nowhere: every push takes its size on disk (and the index more).
def line(n: int) -> str:
    return f"harbour log {n}: " + " ".join(f"w{n}x{i}" for i in range(600))


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    if os.geteuid() != 0:
        if os.environ.get("CI"):
            pytest.fail("mounting a tmpfs needs root, which CI has")
        pytest.skip("mounting a tmpfs needs root (CI runs this as root)")
    where = tmp_path / "small"
    where.mkdir(mode=0o700)
    subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=3m,mode=0700", "tmpfs", str(where)], check=True
    )
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)


def test_a_full_disk_refuses_writes_keeps_reads_and_recovers(
    soupd_home: Home, start_soupd: StartSoupd, small_disk: Path
) -> None:
    soupd_home.write_config(f'[paths]\nstate_dir = "{small_disk}"\n')
    soupd_home.add_soul("ada", "cognition = false\n")
    daemon = start_soupd()
    stored = 0
    error: dict[str, str] | None = None
    for n in range(2000):
        reply = daemon.call("event.push", {"soul": "ada", "text": line(n)})
        if "error" in reply:
            error = reply["error"]
            break
        stored += 1
    assert error is not None, "the disk never filled"
    assert stored > 10
    assert error["code"] == "disk_full", error
    assert "is full" in error["message"]
    assert "rollback" not in error["message"]
    # Still up, still answering reads; more writes are refused the same way.
    assert daemon.recall("ada", "harbour log 3")
    again = [daemon.call("event.push", {"soul": "ada", "text": line(5000 + n)}) for n in range(5)]
    refused = [r["error"] for r in again if "error" in r]
    assert refused, again
    assert {e["code"] for e in refused} == {"disk_full"}, refused
    stored += len(again) - len(refused)
    (row,) = daemon.result("soul.list")["souls"]
    assert row["state"] == "running", row
    assert row["restarts"] == 0, row
    warned = [e for e in daemon.log() if e.get("event") == "soul.disk_full"]
    assert len(warned) == 1  # once, not per refused write
    # Room again: the very next write is stored, and nothing acknowledged was lost.
    subprocess.run(["mount", "-o", "remount,size=64m", str(small_disk)], check=True)
    assert daemon.push("ada", "the disk has room again")["status"] == "stored"
    assert daemon.result("soul.stats", {"soul": "ada"})["events"] == stored + 1
    assert daemon.recall("ada", "disk room again")
    assert daemon.stop() == 0
    check = soupd_home.cli("check", "ada")
    assert check.returncode == 0, check.stdout + check.stderr


def test_a_full_disk_under_a_reflecting_soul_keeps_it_up(
    soupd_home: Home, start_soupd: StartSoupd, small_disk: Path
) -> None:
    """With cognition on, a reflect writes MEMORY.md too: a full disk there is refused
    like any write (the summary's versions live in the database)."""
    soupd_home.write_config(f'[paths]\nstate_dir = "{small_disk}"\n')
    soupd_home.add_soul("ada")
    daemon = start_soupd()
    codes: set[str] = set()
    for n in range(2000):
        replies = [daemon.call("event.push", {"soul": "ada", "text": line(n)})]
        if n % 7 == 6:
            replies.append(daemon.call("reflect", {"soul": "ada"}))
        codes |= {r["error"]["code"] for r in replies if "error" in r}
        if codes:
            break
    assert codes == {"disk_full"}, codes
    (row,) = daemon.result("soul.list")["souls"]
    assert row["state"] in ("running", "hibernating"), row
    assert row["restarts"] == 0, row
    subprocess.run(["mount", "-o", "remount,size=64m", str(small_disk)], check=True)
    assert daemon.result("reflect", {"soul": "ada"})["layer"] == "consolidated"
    assert daemon.push("ada", "room again")["status"] == "stored"
