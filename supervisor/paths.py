"""Where soupd keeps things, XDG-style, with no config file needed.

* config:  ``$XDG_CONFIG_HOME/soupd/soupd.toml`` (optional) and ``souls/<name>.toml``;
  ``--config FILE`` / ``$SOUPD_CONFIG`` name another ``soupd.toml`` (its folder then
  holds ``souls/``).
* state:   ``$XDG_STATE_HOME/soupd/`` (one folder per soul: its database, see
  :func:`soul_database`, and its brain).
* socket:  ``$XDG_RUNTIME_DIR/soupd/soupd.sock``; without ``XDG_RUNTIME_DIR`` a private
  ``/tmp/soupd-<uid>/`` (mode 0700, ours) is used. ``--socket`` / ``$SOUPD_SOCKET`` win.
* under systemd, ``$CONFIGURATION_DIRECTORY``, ``$STATE_DIRECTORY`` and
  ``$RUNTIME_DIRECTORY`` (set by ``ConfigurationDirectory=`` and friends) come first.
"""

from __future__ import annotations

import errno
import os
import re
import stat
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from supervisor.errors import ClientError, ConfigError

__all__ = [
    "Locations",
    "check_private_dir",
    "check_socket_path",
    "locate",
    "open_private",
    "soul_database",
    "soul_name_problem",
]

_SOUL_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
_SUN_PATH_MAX = 107  # sockaddr_un.sun_path is 108 bytes including the NUL


@dataclass(frozen=True, slots=True)
class Locations:
    config_file: Path
    default_souls_dir: Path
    default_state_dir: Path
    default_socket: Path
    socket_override: Path | None
    # True when the config file was named (--config or $SOUPD_CONFIG): it must exist.
    explicit_config: bool = False


def locate(
    env: Mapping[str, str], *, config: str | None = None, socket: str | None = None
) -> Locations:
    """Resolve the default places from the environment and the command line."""
    home = Path(env.get("HOME") or os.path.expanduser("~"))
    config_file = Path(config or env.get("SOUPD_CONFIG") or "")
    if not (config or env.get("SOUPD_CONFIG")):
        systemd_config = _systemd(env, "CONFIGURATION_DIRECTORY")
        if systemd_config is not None:
            config_file = systemd_config / "soupd.toml"
        else:
            config_home = Path(_xdg(env, "XDG_CONFIG_HOME") or home / ".config")
            config_file = config_home / "soupd" / "soupd.toml"
    state_home = Path(_xdg(env, "XDG_STATE_HOME") or home / ".local" / "state")
    state_dir = _systemd(env, "STATE_DIRECTORY") or state_home / "soupd"
    override = socket or env.get("SOUPD_SOCKET")
    return Locations(
        config_file=config_file.expanduser(),
        default_souls_dir=config_file.expanduser().parent / "souls",
        default_state_dir=state_dir,
        default_socket=_runtime_dir(env) / "soupd.sock",
        socket_override=Path(override).expanduser() if override else None,
        explicit_config=bool(config or env.get("SOUPD_CONFIG")),
    )


def _xdg(env: Mapping[str, str], name: str) -> str | None:
    """An XDG variable, ignored when relative (as the XDG base directory spec says)."""
    value = env.get(name)
    return value if value and os.path.isabs(value) else None


def _systemd(env: Mapping[str, str], name: str) -> Path | None:
    """A directory systemd created for the service (StateDirectory= and friends); when
    it lists several, the first."""
    value = env.get(name, "").split(":")[0]
    return Path(value) if value and os.path.isabs(value) else None


def _runtime_dir(env: Mapping[str, str]) -> Path:
    systemd_runtime = _systemd(env, "RUNTIME_DIRECTORY")
    if systemd_runtime is not None:
        return systemd_runtime
    runtime = _xdg(env, "XDG_RUNTIME_DIR")
    if runtime:
        return Path(runtime) / "soupd"
    return Path("/tmp") / f"soupd-{os.getuid()}"


def check_private_dir(path: Path) -> None:
    """Fail if an existing socket folder could be used by another user."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid() or info.st_mode & 0o022:
        raise ConfigError(
            str(path),
            "",
            "socket folder is not a private directory of this user; remove it, or set "
            "XDG_RUNTIME_DIR or --socket to a private place",
        )


def check_socket_path(path: Path) -> None:
    if len(os.fsencode(path)) > _SUN_PATH_MAX:
        raise ConfigError(
            str(path),
            "",
            f"socket path is longer than {_SUN_PATH_MAX} bytes, which Unix sockets cannot "
            "use; choose a shorter path with --socket",
        )


def soul_name_problem(name: str) -> str | None:
    """Why ``name`` cannot be a soul name, or None when it can."""
    if _SOUL_NAME.fullmatch(name) and ".." not in name:
        return None
    return (
        f"soul name {name!r} is invalid: use 1-64 letters, digits, '_', '-' or '.', "
        "starting with a letter or digit"
    )


def soul_database(soul_dir: Path) -> Path:
    """The database file of the soul whose state folder is ``soul_dir``."""
    return soul_dir / "soul.db"


def open_private(path: Path) -> TextIO:
    """``path`` opened for writing text, readable by this user only (0600, also when it
    existed with wider modes); a symlink in its place is refused (ELOOP)."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        fd = os.open(path, flags, 0o600)
    except OSError as exc:
        why = "it is a symlink" if exc.errno == errno.ELOOP else exc.strerror
        raise ClientError(f"cannot write {path}: {why}; give a plain file path") from None
    try:
        os.fchmod(fd, 0o600)
        return os.fdopen(fd, "w", encoding="utf-8")
    except BaseException:
        os.close(fd)
        raise
