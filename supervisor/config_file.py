"""One configuration file as text: TOML parsed with errors that name the file, paths
in it expanded and resolved, and the socket a client connects to.

:mod:`supervisor.config` loads and validates the whole configuration through these;
the CLI's client commands need only :func:`client_socket`, which reads nothing but
``[socket] path`` of ``soupd.toml``: no soul file is parsed, and no other key of
``soupd.toml`` is validated, so a typo in a soul's file never keeps ``soupd status`` or
``soupd recall`` from reaching the daemon (``soupd config check`` reports it). The
module imports no Struct of the configuration, which keeps a client's start cheap.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

from supervisor.errors import ConfigError
from supervisor.paths import Locations

__all__ = ["client_socket", "expand", "parse_text", "parse_toml", "resolve"]


def parse_toml(path: Path) -> dict[str, Any]:
    """The tables of one TOML file; a ConfigError naming it when it cannot be read."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(str(path), "", f"cannot read: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise ConfigError(str(path), "", "not UTF-8 text; save it as UTF-8") from None
    return parse_text(path, text)


def parse_text(path: Path, text: str) -> dict[str, Any]:
    """The tables of ``text``, the content ``path`` has or is to have."""
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(str(path), "", f"not valid TOML: {exc}") from None


def expand(path: Path, key: str, value: str) -> Path:
    """``value`` as a path with ``~`` expanded. A path the daemon could not use at all
    is a ConfigError here, so it is refused (also on reload) before anything is applied."""
    if "\x00" in value:
        raise ConfigError(str(path), key, "contains a NUL character; remove it")
    try:
        return Path(value).expanduser()
    except RuntimeError:
        raise ConfigError(
            str(path),
            key,
            f"cannot expand {value.split('/')[0]!r}: no such user's home; use an absolute path",
        ) from None


def resolve(base: Path, configured: Path | None, default: Path) -> Path:
    """A configured path, relative ones taken from ``base`` (the file's folder)."""
    if configured is None:
        return default
    return configured if configured.is_absolute() else base / configured


def client_socket(locations: Locations) -> Path:
    """The socket a client connects to: ``--socket`` / ``$SOUPD_SOCKET``, else ``[socket]
    path`` of ``soupd.toml``, else the default. Reads that one key, the way the daemon
    resolves it."""
    if locations.socket_override is not None:
        return locations.socket_override
    config_file = locations.config_file
    if not config_file.exists():
        if locations.explicit_config:
            raise ConfigError(
                str(config_file), "", "file not found; create it, or drop --config / $SOUPD_CONFIG"
            )
        return locations.default_socket
    section = parse_toml(config_file).get("socket", {})
    configured = section.get("path") if isinstance(section, dict) else None
    if configured is None:
        return locations.default_socket
    if not isinstance(configured, str):
        raise ConfigError(str(config_file), "socket.path", "expected a string (a file path)")
    return resolve(
        config_file.parent,
        expand(config_file, "socket.path", configured),
        locations.default_socket,
    )
