"""Files in a soul's folders: checked before use, written atomically, never through a link.

A soul's folder and its brain folder hold its database and the Markdown views people
read (MEMORY.md, TASKS.md, cards/, tide/). On a shared machine another local user may
plant a symlink there to make the daemon serve or overwrite a file that is not the
soul's, so:

* :func:`check_soul_files` refuses a folder or a database file that is a symlink, is
  not this user's, or that others may write to, before the soul opens anything;
* :func:`replace_text` writes through a fresh temporary file created exclusively (a
  planted ``.NAME.tmp`` is removed, never followed) and renames it over the target:
  a link in the target's place is replaced, its target untouched.

Blocking calls: run them in a worker thread.
"""

from __future__ import annotations

import contextlib
import os
import stat
from pathlib import Path

from supervisor.errors import UnsafeFile

__all__ = ["check_soul_files", "create_private", "replace_text"]

_CREATE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
# The database and SQLite's companions; a link in place of any of them would make the
# soul read or write another file.
_DATABASE_SUFFIXES = ("", "-wal", "-shm", "-journal")


def check_soul_files(database: Path, *folders: Path) -> None:
    """Raise UnsafeFile naming the path and what to do, unless each folder (when it
    exists) is a real directory of this user that others cannot write to, and the
    database and its companions (when they exist) are regular files of this user."""
    for folder in (database.parent, *folders):
        info = _lstat(folder)
        if info is None:
            continue
        if not stat.S_ISDIR(info.st_mode):
            raise UnsafeFile(f"{folder} is not a directory (a symlink?); remove it")
        _check_owner(folder, info)
    for suffix in _DATABASE_SUFFIXES:
        path = database.with_name(database.name + suffix)
        info = _lstat(path)
        if info is None:
            continue
        if not stat.S_ISREG(info.st_mode):
            raise UnsafeFile(
                f"{path} is not a regular file (a symlink?); remove it, or restore the "
                "soul's own file from a backup"
            )
        _check_owner(path, info)


def replace_text(path: Path, text: str, mode: int = 0o600) -> None:
    """Make ``path`` hold ``text``: all of it or, after a crash, the previous version."""
    temporary = path.with_name(f".{path.name}.tmp")
    with contextlib.suppress(FileNotFoundError):
        os.unlink(temporary)  # left by a crash, or planted: never written through
    fd = os.open(temporary, _CREATE, mode)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temporary)
        raise
    os.replace(temporary, path)


def create_private(path: Path) -> None:
    """An empty ``path`` only this user may read (0600), made afresh: a file or a planted
    link left in its place is removed first, never followed."""
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)
    os.close(os.open(path, _CREATE, 0o600))


def _lstat(path: Path) -> os.stat_result | None:
    try:
        return os.lstat(path)
    except FileNotFoundError:
        return None


def _check_owner(path: Path, info: os.stat_result) -> None:
    if info.st_uid != os.geteuid():
        raise UnsafeFile(
            f"{path} belongs to uid {info.st_uid}, not to this daemon's user; "
            "a soul's files must be its own (chown them, or move them away)"
        )
    if info.st_mode & 0o022:
        raise UnsafeFile(
            f"{path} can be written by other users (mode {stat.S_IMODE(info.st_mode):o}); "
            "chmod go-w it"
        )
