"""One daemon per state directory: an exclusive ``flock`` on ``<state_dir>/soupd.lock``.

Two daemons on one state directory (each with its own socket) would both open every
soul's database and write it from two processes: the second would take events ids the
first already handed out. The lock is taken before any soul opens its database and held
for the daemon's life; the kernel drops it when the process ends, ``kill -9`` included,
so a stale file never blocks a restart. The file holds the holder's pid, for the message
the next daemon gives.
"""

from __future__ import annotations

import errno
import fcntl
import os
from pathlib import Path

from supervisor.errors import ConfigError

__all__ = ["StateLock"]

LOCK_NAME = "soupd.lock"


class StateLock:
    """The state directory's lock; :meth:`acquire` once, :meth:`release` at the end."""

    def __init__(self, state_dir: Path) -> None:
        self.path = state_dir / LOCK_NAME
        self._fd: int | None = None

    def acquire(self) -> None:
        """Take the lock or raise ConfigError naming the daemon that holds it."""
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        flags = os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC
        try:
            fd = os.open(self.path, flags, 0o600)
        except OSError as exc:
            raise ConfigError(
                str(self.path),
                "",
                f"cannot open the state lock: {exc.strerror}; "
                "the state directory must be this user's, with no symlink in its place",
            ) from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            holder = _read_pid(fd)
            os.close(fd)
            if exc.errno not in (errno.EWOULDBLOCK, errno.EAGAIN):
                raise ConfigError(
                    str(self.path), "", f"cannot lock the state directory: {exc.strerror}"
                ) from None
            who = f"soupd pid {holder}" if holder else "another soupd"
            raise ConfigError(
                str(self.path.parent),
                "",
                f"the state directory is in use by {who}; stop that daemon, or give this "
                "one another [paths] state_dir",
            ) from None
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        self._fd = fd

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)  # closing drops the flock
            self._fd = None


def _read_pid(fd: int) -> int | None:
    try:
        text = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None
