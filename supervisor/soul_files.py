"""Soul files written and removed at run time (``soul.create``, ``soul.delete``).

A soul created over the socket is a soul file like any other: ``souls/<name>.toml``,
written so that a reader (the daemon at its next start, the config watcher, ``soupd
config check``) sees either no file or the whole of it. The text is written to a
temporary file in the same folder (0600, ``O_EXCL | O_NOFOLLOW``), flushed to disk,
then linked to its name, which fails if the name was taken meanwhile (no file is ever
replaced), and the folder is synced. A soul's settings may come as a table (JSON in
the request): :func:`toml_text` writes it as TOML, tables of keys whose values are
strings, numbers, booleans or lists of them (what every soul setting is).

A soul deleted without ``purge`` leaves its state folder (database, brain) behind: its
*kept data*. Nothing reopens it unasked: ``soul.create`` of that name is refused unless
``reopen`` (:func:`kept_refusal`), and ``soul.delete`` with ``purge`` of a name that has
no soul but kept data removes the data (without ``purge``: :class:`KeptData`).
"""

from __future__ import annotations

import contextlib
import errno
import json
import math
import os
import re
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from supervisor.errors import InvalidParams, UnknownSoul
from supervisor.paths import soul_name_problem

__all__ = [
    "KeptData",
    "has_kept_data",
    "kept_refusal",
    "purge_state",
    "remove_soul_file",
    "soul_path",
    "toml_text",
    "write_soul_file",
]

_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")


def soul_path(souls_dir: Path, name: str) -> Path:
    """The file of soul ``name``; InvalidParams when the name is not a safe file name."""
    if (problem := soul_name_problem(name)) is not None:
        raise InvalidParams(problem)
    return souls_dir / f"{name}.toml"


def toml_text(table: Mapping[str, Any]) -> str:
    """``table`` as TOML text; InvalidParams for a value TOML has no place for here."""
    lines: list[str] = []
    _table(table, "", lines)
    return "\n".join(lines).lstrip("\n") + ("\n" if lines else "")


def _table(table: Mapping[str, Any], prefix: str, lines: list[str]) -> None:
    nested = []
    for key, value in table.items():
        if isinstance(value, Mapping):
            nested.append((key, value))
        else:
            lines.append(f"{_key(key)} = {_value(f'{prefix}{key}', value)}")
    for key, value in nested:
        lines += ["", f"[{prefix}{_key(key)}]"]
        _table(value, f"{prefix}{_key(key)}.", lines)


def _key(key: object) -> str:
    if not isinstance(key, str) or not key:
        raise InvalidParams(f"config: key {key!r} must be a non-empty string")
    return key if _BARE_KEY.fullmatch(key) else json.dumps(key)


def _value(key: str, value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise InvalidParams(f"config: {key} must be a finite number")
        return repr(value)
    if isinstance(value, str):
        # A JSON string is a TOML basic string: the same escapes.
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, list):
        return "[" + ", ".join(_value(key, item) for item in value) + "]"
    raise InvalidParams(
        f"config: {key} is {type(value).__name__}; a soul setting is a string, number, "
        "boolean, list or table (or send the whole file as toml)"
    )


def write_soul_file(path: Path, text: str) -> None:
    """Write ``text`` as the new file ``path`` at once (see the module docstring);
    FileExistsError when ``path`` exists. Blocking: run it in a worker thread."""
    folder = path.parent
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    temporary = folder / f".{path.name}.{os.getpid()}.tmp"
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    fd = os.open(temporary, flags, 0o600)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(text)
            out.flush()
            os.fsync(out.fileno())
        os.link(temporary, path, follow_symlinks=False)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temporary)
    _sync_folder(folder)


def remove_soul_file(path: Path) -> bool:
    """Remove the soul file ``path`` (a link in its place is removed, never followed);
    False when there was none. Blocking: run it in a worker thread."""
    try:
        os.unlink(path)
    except FileNotFoundError:
        return False
    except IsADirectoryError:
        raise InvalidParams(f"{path} is a folder, not a soul file; remove it by hand") from None
    _sync_folder(path.parent)
    return True


def _sync_folder(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        os.fsync(fd)
    except OSError as exc:  # some filesystems cannot sync a folder; the file is synced
        if exc.errno not in (errno.EINVAL, errno.ENOTSUP):
            raise
    finally:
        os.close(fd)


def purge_state(folder: Path) -> None:
    """Remove a stopped soul's state folder and everything in it (links are removed,
    never followed). Blocking: run it in a worker thread."""
    if folder.is_symlink():
        folder.unlink()
    elif folder.exists():
        shutil.rmtree(folder)


def has_kept_data(folder: Path) -> bool:
    """Whether ``folder`` (a soul's state folder) holds anything: a link in its place
    counts, an empty folder does not. Blocking: run it in a worker thread."""
    if folder.is_symlink():
        return True
    try:
        with os.scandir(folder) as entries:
            return any(True for _ in entries)
    except (FileNotFoundError, NotADirectoryError):
        return folder.exists()


def kept_refusal(name: str, folder: Path) -> InvalidParams:
    """soul.create of ``name`` without ``reopen`` while ``folder`` holds kept data."""
    return InvalidParams(
        f"soul {name!r} has kept data in {folder} (a soul of that name was deleted without "
        "purge); to create it on that data send reopen: true (`soupd soul create "
        f"{name} --reopen`), to start afresh remove it first (`soupd soul delete {name} "
        "--purge`)"
    )


class KeptData(UnknownSoul):
    """soul.delete without ``purge`` of a name that has no soul, only kept data."""

    def __init__(self, name: str, folder: Path) -> None:
        super().__init__(name)
        self.message = (
            f"no soul named {name!r}; the data of a soul of that name deleted earlier is "
            f"kept in {folder}: remove it with purge (`soupd soul delete {name} --purge`), "
            f"or create the soul on it again (`soupd soul create {name} --reopen`)"
        )
        self.args = (self.message,)
