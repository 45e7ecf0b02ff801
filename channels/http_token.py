"""The HTTP API's bearer token: a file of this user's only, made at the first start.

Invariants:

* The token is ``secrets.token_urlsafe(32)`` (256 random bits), written to a file
  created with mode 0600 (``O_EXCL``, never through a symlink), and never logged.
* A token file that another user could read or write, that is not ours, or that is
  empty is refused (:class:`~supervisor.errors.UnsafeFile`): the API does not start
  with a token others may know. The message says what to do.
* :func:`token_matches` compares in constant time.
"""

from __future__ import annotations

import errno
import hmac
import os
import secrets
import stat
from pathlib import Path

from supervisor.errors import UnsafeFile

__all__ = ["load_or_create_token", "token_matches"]


def load_or_create_token(path: Path) -> str:
    """The token in ``path``, made first if the file does not exist. Blocking I/O (small):
    call it in a worker thread."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    token = secrets.token_urlsafe(32)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        fd = os.open(path, flags, 0o600)
    except FileExistsError:
        return _read(path)
    try:
        os.write(fd, (token + "\n").encode())
        os.fsync(fd)
    finally:
        os.close(fd)
    return token


def _read(path: Path) -> str:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError as exc:
        why = "it is a symlink" if exc.errno == errno.ELOOP else exc.strerror
        raise UnsafeFile(
            f"cannot read the HTTP token file {path}: {why}; make it a plain file of "
            "soupd's user, or delete it and a new token is made at the next start"
        ) from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_uid != os.getuid():
            raise UnsafeFile(
                f"the HTTP token file {path} is not a plain file of soupd's user; delete "
                "it and a new token is made at the next start"
            )
        if info.st_mode & 0o077:
            raise UnsafeFile(
                f"the HTTP token file {path} has mode {stat.S_IMODE(info.st_mode):04o}, so "
                f"other users may read the token; run `chmod 600 {path}` (and delete it for "
                "a new token if it may have been read)"
            )
        text = os.read(fd, 4096).decode("utf-8", errors="replace").strip()
    finally:
        os.close(fd)
    if not text:
        raise UnsafeFile(
            f"the HTTP token file {path} is empty; delete it and a new token is made at the "
            "next start"
        )
    return text


def token_matches(expected: str, authorization: str | None) -> bool:
    """Whether an ``Authorization`` header carries ``Bearer <expected>``."""
    if authorization is None:
        return False
    scheme, _, given = authorization.partition(" ")
    if scheme.lower() != "bearer":
        return False
    return hmac.compare_digest(expected.encode(), given.strip().encode())
