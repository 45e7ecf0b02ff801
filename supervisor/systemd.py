"""systemd integration in pure Python (no libsystemd): sd_notify and socket activation.

* :class:`Notifier` sends ``READY=1``, ``STATUS=``, ``RELOADING=1``, ``STOPPING=1`` and
  ``WATCHDOG=1`` datagrams to ``$NOTIFY_SOCKET`` (a path, or ``@name`` for the abstract
  namespace). Without ``$NOTIFY_SOCKET`` every call does nothing, so the daemon runs
  the same under systemd or not.
* :func:`activated_socket` returns the listening socket systemd handed over
  (``LISTEN_FDS`` / ``LISTEN_PID``, fd 3), if any.
"""

from __future__ import annotations

import os
import socket
import time
from collections.abc import Mapping

import structlog

__all__ = ["SD_LISTEN_FDS_START", "Notifier", "activated_socket", "watchdog_interval"]

SD_LISTEN_FDS_START = 3
_log = structlog.get_logger("soupd.systemd")


class Notifier:
    def __init__(self, environ: Mapping[str, str] = os.environ) -> None:
        address = environ.get("NOTIFY_SOCKET", "")
        # An abstract socket is written "@name"; its real name starts with a NUL byte.
        self._address = "\0" + address[1:] if address.startswith("@") else address
        self.sent = 0

    @property
    def enabled(self) -> bool:
        return bool(self._address)

    def notify(self, *fields: str) -> None:
        """Send one datagram of ``KEY=value`` lines; never raises (systemd may be gone)."""
        if not self._address:
            return
        message = "\n".join(fields).encode()
        try:
            with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
                sock.setblocking(False)  # a datagram to a local socket: never waits
                sock.sendto(message, self._address)
            self.sent += 1
        except OSError as exc:
            _log.warning("systemd.notify_failed", error=str(exc))

    def ready(self, status: str) -> None:
        self.notify("READY=1", f"STATUS={status}")

    def status(self, status: str) -> None:
        self.notify(f"STATUS={status}")

    def reloading(self) -> None:
        monotonic_usec = time.clock_gettime_ns(time.CLOCK_MONOTONIC) // 1000
        self.notify("RELOADING=1", f"MONOTONIC_USEC={monotonic_usec}")

    def stopping(self) -> None:
        self.notify("STOPPING=1", "STATUS=stopping: draining mailboxes")

    def watchdog(self) -> None:
        self.notify("WATCHDOG=1")


def watchdog_interval(environ: Mapping[str, str] = os.environ) -> float | None:
    """Seconds between watchdog pings (half of WatchdogSec), when systemd asks for them
    for this process."""
    usec = environ.get("WATCHDOG_USEC")
    pid = environ.get("WATCHDOG_PID")
    if not usec or not usec.isdigit() or int(usec) == 0:
        return None
    if pid and pid.isdigit() and int(pid) != os.getpid():
        return None
    return int(usec) / 2_000_000


def activated_socket(environ: Mapping[str, str] = os.environ) -> socket.socket | None:
    """The listening Unix socket passed by systemd socket activation, if any."""
    fds, pid = environ.get("LISTEN_FDS", ""), environ.get("LISTEN_PID", "")
    if not (fds.isdigit() and int(fds) >= 1 and pid.isdigit() and int(pid) == os.getpid()):
        return None
    sock = socket.socket(fileno=SD_LISTEN_FDS_START)
    if sock.family != socket.AF_UNIX or sock.type != socket.SOCK_STREAM:
        sock.detach()
        raise OSError(
            "the socket systemd passed (fd 3) is not a Unix stream socket; set "
            "ListenStream=/path/to/soupd.sock in soupd.socket"
        )
    os.set_inheritable(SD_LISTEN_FDS_START, False)
    return sock
