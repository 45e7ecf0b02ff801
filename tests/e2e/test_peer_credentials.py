"""The daemon checks who connects (SO_PEERCRED): another uid is refused, clearly, unless
it is in the socket's group while the socket lets its group in (0660: a system install,
where the members of the soupd group are the daemon's users).

Needs root, to make a client process with another uid and groups (CI runs as root). A
foreign client that must reach the daemon's own check uses a socket it can open, so it
gets past the file permissions without being in any group the socket lets in: the
socket file is opened to everyone (0666) after the daemon made it.
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
os.setgroups([int(g) for g in sys.argv[4].split(",") if g])
os.setgid(int(sys.argv[3]))
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


def foreign_call(sock: str, uid: int, gid: int = NOBODY, groups: tuple[int, ...] = ()) -> str:
    """One soul.list call by a process of ``uid``, primary group ``gid`` and
    supplementary ``groups``."""
    done = subprocess.run(
        [sys.executable, "-c", CLIENT, sock, str(uid), str(gid), ",".join(map(str, groups))],
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
    os.chmod(sock, 0o666)  # past the file mode: the daemon's own rule decides

    reply = json.loads(foreign_call(sock, NOBODY))

    assert reply["id"] is None
    assert reply["error"]["code"] == "peer_refused"
    message = reply["error"]["message"]
    assert str(NOBODY) in message
    assert f"the daemon's user (uid {os.getuid()}), root and members" in message  # the rule
    assert "allow_uids" in message
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
    os.chmod(sock, 0o666)

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


@pytest.mark.parametrize(
    ("gid", "groups"), [(0, ()), (NOBODY, (0,))], ids=["primary-group", "supplementary-group"]
)
def test_the_socket_group_is_let_in_when_the_mode_lets_a_group_in(
    soupd_home: Home, start_soupd: StartSoupd, gid: int, groups: tuple[int, ...]
) -> None:
    """A system install: socket 0660, owned by the daemon's group; its members are in,
    by their primary group or a supplementary one (SO_PEERGROUPS)."""
    soupd_home.write_config('[socket]\nmode = "0660"\n')
    start_soupd()
    sock = str(soupd_home.socket)
    open_path(sock)
    assert os.stat(sock).st_gid == os.getgid()

    reply = json.loads(foreign_call(sock, NOBODY, gid, groups))

    assert reply["id"] == 1, reply
    assert [s["name"] for s in reply["result"]["souls"]] == ["default"]


def test_outside_the_group_a_0660_socket_names_the_group_in_its_refusal(
    soupd_home: Home, start_soupd: StartSoupd
) -> None:
    soupd_home.write_config('[socket]\nmode = "0660"\n')
    daemon = start_soupd()
    sock = str(soupd_home.socket)
    open_path(sock)
    os.chmod(sock, 0o666)  # past the file mode: the daemon's own rule decides

    reply = json.loads(foreign_call(sock, NOBODY))

    assert reply["error"]["code"] == "peer_refused"
    assert f"members of the socket's group 'root' (gid {os.getgid()})" in reply["error"]["message"]
    (refused,) = [e for e in daemon.log() if e.get("event") == "socket.peer_refused"]
    assert "group" in refused["rule"]
