"""Which socket the client connects to, found the way the ``soupd`` CLI finds it.

In order: the ``socket`` argument; ``$SOUPD_SOCKET``; ``[socket] path`` of
``soupd.toml`` (``$SOUPD_CONFIG``, else ``$CONFIGURATION_DIRECTORY/soupd.toml`` under
systemd, else ``$XDG_CONFIG_HOME/soupd/soupd.toml``; a relative path is taken from the
file's folder); else ``$RUNTIME_DIRECTORY/soupd.sock`` under systemd,
``$XDG_RUNTIME_DIR/soupd/soupd.sock``, or ``/tmp/soupd-<uid>/soupd.sock``.

This repeats what ``supervisor.paths`` and ``supervisor.config_file`` decide, on
purpose: the client imports nothing of the daemon. A test holds the two to the same
answers.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from pathlib import Path

from soupd._errors import ConfigInvalid

__all__ = ["find_socket"]


def find_socket(
    socket: str | os.PathLike[str] | None = None, env: Mapping[str, str] | None = None
) -> Path:
    """The socket path to connect to (see the module docstring for the order)."""
    env = os.environ if env is None else env
    if socket is not None:
        return Path(socket).expanduser()
    override = env.get("SOUPD_SOCKET")
    if override:
        return Path(override).expanduser()
    default = _runtime_dir(env) / "soupd.sock"
    named = env.get("SOUPD_CONFIG")
    config = Path(named).expanduser() if named else _config_file(env)
    if not config.exists():
        if named:
            raise ConfigInvalid(
                f"{config}: file not found; create it, or unset $SOUPD_CONFIG",
            )
        return default
    try:
        tables = tomllib.loads(config.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ConfigInvalid(
            f"{config}: cannot read it to find [socket] path ({exc}); fix it, or set $SOUPD_SOCKET"
        ) from None
    section = tables.get("socket", {})
    configured = section.get("path") if isinstance(section, dict) else None
    if configured is None:
        return default
    if not isinstance(configured, str):
        raise ConfigInvalid(f"{config}: socket.path: expected a string (a file path)")
    path = Path(configured).expanduser()
    return path if path.is_absolute() else config.parent / path


def _config_file(env: Mapping[str, str]) -> Path:
    systemd = _systemd(env, "CONFIGURATION_DIRECTORY")
    if systemd is not None:
        return systemd / "soupd.toml"
    home = Path(env.get("HOME") or os.path.expanduser("~"))
    config_home = Path(_xdg(env, "XDG_CONFIG_HOME") or home / ".config")
    return (config_home / "soupd" / "soupd.toml").expanduser()


def _runtime_dir(env: Mapping[str, str]) -> Path:
    systemd = _systemd(env, "RUNTIME_DIRECTORY")
    if systemd is not None:
        return systemd
    runtime = _xdg(env, "XDG_RUNTIME_DIR")
    if runtime:
        return Path(runtime) / "soupd"
    return Path("/tmp") / f"soupd-{os.getuid()}"


def _xdg(env: Mapping[str, str], name: str) -> str | None:
    value = env.get(name)
    return value if value and os.path.isabs(value) else None


def _systemd(env: Mapping[str, str], name: str) -> Path | None:
    value = env.get(name, "").split(":")[0]
    return Path(value) if value and os.path.isabs(value) else None
