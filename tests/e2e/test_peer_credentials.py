"""The daemon checks who connects (SO_PEERCRED): another uid is refused, clearly.

Needs root, to make a client process with another uid (CI runs as root). The socket is
made group-accessible (mode 0660) so the foreign client gets past the file permissions
and reaches the daemon's own check.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from .harness import Home, StartSoupd, wait_for

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="needs root to run a foreign uid")

NOBODY = 65534

CLIENT = """
import os, socket, sys
os.setgid(0)
os.setuid(int(sys.argv[2]))
s = socket.socket(socket.AF_UNIX)
s.settimeout(10)
s.connect(sys.argv[1])
s.sendall(b'{"id": 1, "method": "soul.list"}\\n')
data = b""
while not data.endswith(b"\\n"):
    chunk = s.recv(65536)
    if not chunk:
        break
    data += chunk
sys.stdout.write(data.decode())
"""


def foreign_call(sock: str, uid: int) -> str:
    done = subprocess.run(
        [sys.executable, "-c", CLIENT, sock, str(uid)],
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    return done.stdout


def open_path(path: str) -> None:
    """Let other users traverse the folders above the socket (tmp dirs are 0700)."""
    folder = os.path.dirname(path)
    while folder not in ("/", "/tmp"):
        os.chmod(folder, os.stat(folder).st_mode | 0o011)
        folder = os.path.dirname(folder)


def test_a_foreign_uid_is_refused_and_logged(soupd_home: Home, start_soupd: StartSoupd) -> None:
    soupd_home.write_config('[socket]\nmode = "0660"\n')
    daemon = start_soupd()
    sock = str(soupd_home.socket)
    open_path(sock)

    reply = json.loads(foreign_call(sock, NOBODY))

    assert reply["id"] is None
    assert reply["error"]["code"] == "peer_refused"
    assert str(NOBODY) in reply["error"]["message"]
    assert "allow_uids" in reply["error"]["message"]
    refusals = wait_for(
        lambda: [e for e in daemon.log() if e.get("event") == "socket.peer_refused"],
        "the refusal in the log",
    )
    assert refusals[-1]["peer_uid"] == NOBODY
    # The daemon is unharmed and still serves its own user.
    assert daemon.result("soul.list")["souls"]


def test_allow_uids_lets_a_named_uid_in(soupd_home: Home, start_soupd: StartSoupd) -> None:
    soupd_home.write_config(f'[socket]\nmode = "0660"\nallow_uids = [{NOBODY}]\n')
    start_soupd()
    sock = str(soupd_home.socket)
    open_path(sock)

    reply = json.loads(foreign_call(sock, NOBODY))

    assert reply["id"] == 1
    assert [s["name"] for s in reply["result"]["souls"]] == ["default"]


def test_socket_mode_keeps_other_users_out_by_default(
    soupd_home: Home, start_soupd: StartSoupd
) -> None:
    start_soupd()
    sock = str(soupd_home.socket)
    open_path(sock)
    assert os.stat(sock).st_mode & 0o777 == 0o600

    with pytest.raises(subprocess.CalledProcessError) as refused:
        foreign_call(sock, NOBODY)
    assert "PermissionError" in refused.value.stderr
