"""``soupd config check``: every problem of the configuration at once, not the first.

:mod:`supervisor.config` stops at the first fault, as loading must (nothing half
applied). The check instead validates each key on its own, so one run lists them all:
each file is parsed, then every key of every table is converted alone against its type
(an unknown key names the closest known one; a bad value of a fixed set lists the
set), and a table whose keys are all valid is converted whole, for the checks across
its keys. What depends on the rest being valid (the souls two files share, the souls a
channel feeds) is checked once the files are.

Warnings do not fail the check: a channel's credential named by an environment variable
that this environment does not set (the daemon's environment may differ: systemd's
``Environment=``, ``LoadCredential=``).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec

from channels.config import ChannelConfig, channel_problem, raw_problem
from souls.config import SoulConfig
from supervisor.config import DEFAULT_SOUL, DaemonConfig, read_souls, shared_folders
from supervisor.config_file import expand, parse_toml
from supervisor.config_problems import fails, problems, value_problems
from supervisor.errors import ConfigError
from supervisor.paths import Locations, soul_name_problem

__all__ = ["Report", "check_configuration", "check_one_file"]


@dataclass
class Report:
    """What a check found: errors (the configuration would be refused) and warnings."""

    errors: list[ConfigError] = field(default_factory=list)
    warnings: list[ConfigError] = field(default_factory=list)
    souls: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.errors


def check_configuration(locations: Locations) -> Report:
    """Check ``soupd.toml`` (when there is one) and every soul file."""
    report = Report()
    config_file = locations.config_file
    daemon: DaemonConfig | None = DaemonConfig()
    if config_file.exists():
        daemon = _check_daemon(config_file, report)
    elif locations.explicit_config:
        report.errors.append(
            ConfigError(
                str(config_file), "", "file not found; create it, or drop --config / $SOUPD_CONFIG"
            )
        )
        return report
    from supervisor.config import load_settings

    # Where the souls are: as the daemon resolves it (with defaults if soupd.toml is bad).
    try:
        settings = load_settings(locations, lenient=True)
        souls_dir, state_dir = settings.souls_dir, settings.state_dir
    except ConfigError:
        souls_dir, state_dir = locations.default_souls_dir, locations.default_state_dir
    files = sorted(souls_dir.glob("*.toml")) if souls_dir.is_dir() else []
    good = {p.stem: soul for p in files if (soul := _check_soul(p, report)) is not None}
    if not files:
        good, _ = read_souls(souls_dir)
    report.errors += shared_folders(good, souls_dir, state_dir).values()
    report.souls = sorted(good)
    default = state_dir / "souls" / DEFAULT_SOUL / "soul.db"
    if files and DEFAULT_SOUL not in good and default.exists():
        report.warnings.append(
            ConfigError(
                str(souls_dir / f"{DEFAULT_SOUL}.toml"),
                "",
                f"the {DEFAULT_SOUL!r} soul has data ({default.parent}) but does not run: "
                f"soul files exist and none is {DEFAULT_SOUL}.toml; create this file (it may "
                "be empty) to run it",
            )
        )
    if daemon is not None and (problem := channel_problem(daemon.channels, set(good))):
        report.errors.append(ConfigError(str(config_file), *problem))
    return report


def check_one_file(path: Path) -> tuple[str, Report]:
    """Check one file: a soul file when it sits in a ``souls`` folder, else soupd.toml."""
    report = Report()
    if path.parent.name == "souls":
        _check_soul(path, report)
        return "soul", report
    _check_daemon(path, report)
    return "daemon", report


def _check_daemon(path: Path, report: Report) -> DaemonConfig | None:
    try:
        data = parse_toml(path)
    except ConfigError as error:
        report.errors.append(error)
        return None
    before = len(report.errors)
    channels = data.get("channels")
    tables = channels if isinstance(channels, list) else []
    refused: set[int] = set()
    for index, table in enumerate(tables):
        # One table at a time, so that every channel's literal secret is named.
        if (secret := raw_problem({"channels": [table]})) is not None:
            key, problem = secret
            key = key.replace("channels[0]", f"channels[{index}]", 1)
            report.errors.append(ConfigError(str(path), key, problem))
            refused.add(index)
    if refused:
        # The rest is still checked: the other tables, and each other channel alone.
        rest = {key: value for key, value in data.items() if key != "channels"}
        report.errors += problems(path, rest, DaemonConfig)
        for index, table in enumerate(tables):
            if index not in refused:
                report.errors += value_problems(path, f"channels[{index}]", table, ChannelConfig)
    else:
        report.errors += problems(path, data, DaemonConfig)
    for index, table in enumerate(tables):
        # Warned for every channel valid alone, whatever else the file gets wrong.
        if index not in refused and not fails(table, ChannelConfig):
            channel = msgspec.convert(table, ChannelConfig, strict=True)
            report.warnings += _unset_secrets(path, index, channel)
    for key, value in _path_keys(data):
        try:
            expand(path, key, value)
        except ConfigError as error:
            report.errors.append(error)
    if len(report.errors) > before:
        return None
    return msgspec.convert(data, DaemonConfig, strict=True)


def _path_keys(data: Mapping[str, Any]) -> list[tuple[str, str]]:
    keys = [
        ("paths", "souls_dir"),
        ("paths", "state_dir"),
        ("socket", "path"),
        ("http", "token_file"),
    ]
    found = []
    for table, key in keys:
        section = data.get(table)
        if isinstance(section, Mapping) and isinstance(section.get(key), str):
            found.append((f"{table}.{key}", section[key]))
    return found


def _check_soul(path: Path, report: Report) -> SoulConfig | None:
    if (name := soul_name_problem(path.stem)) is not None:
        report.errors.append(ConfigError(str(path), "", f"{name}; rename the file"))
        return None
    try:
        data = parse_toml(path)
    except ConfigError as error:
        report.errors.append(error)
        return None
    found = problems(path, data, SoulConfig)
    if isinstance(brain := data.get("brain_dir"), str):
        try:
            expand(path, "brain_dir", brain)
        except ConfigError as error:
            found.append(error)
    report.errors += found
    return None if found else msgspec.convert(data, SoulConfig, strict=True)


def _unset_secrets(path: Path, index: int, channel: ChannelConfig) -> list[ConfigError]:
    warnings = []
    for key in channel.__struct_fields__:
        name = getattr(channel, key)
        if key.endswith("_env") and isinstance(name, str) and not os.environ.get(name):
            warnings.append(
                ConfigError(
                    str(path),
                    f"channels[{index}].{key}",
                    f"environment variable {name} is not set here, so channel "
                    f"{channel.name!r} would not connect; set it in soupd's environment "
                    "(systemd: Environment= or LoadCredential=)",
                )
            )
    return warnings
