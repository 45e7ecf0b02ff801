"""Loading configuration: ``soupd.toml`` for the daemon, one TOML file per soul.

Everything is parsed into frozen msgspec Structs with unknown keys rejected. Every
key has a default, so no file is needed at all; with no soul file a soul named
``default`` exists. A :class:`ConfigError` names the file, the key path and what was
expected. Loading validates *everything* before anything is used, so a bad edit can
never leave a half-applied configuration.

A soul file that does not validate is fatal where the whole configuration is asked for
(``soupd config check``), and refused on its own at start (``lenient``): the daemon runs
the other souls and lists the refused files in :attr:`Settings.refused`, so one bad file
in the souls folder (a backup copy, a typo) never keeps the rest from starting.
"""

from __future__ import annotations

import ipaddress
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, TypeVar
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import msgspec

from channels.config import ChannelConfig, channel_problem, raw_problem
from souls.config import RestartConfig, ScheduleOverrides, SoulConfig
from supervisor.config_file import expand, parse_toml, resolve
from supervisor.config_problems import explain, problems
from supervisor.errors import ConfigError
from supervisor.paths import Locations, soul_name_problem

__all__ = [
    "DaemonConfig",
    "HttpConfig",
    "ScheduleConfig",
    "Settings",
    "StoreBackendConfig",
    "check_file",
    "load_settings",
    "read_souls",
    "read_toml",
    "shared_folders",
    "soul_config",
]

T = TypeVar("T")
DEFAULT_SOUL = "default"


class _Section(msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    pass


class PathsConfig(_Section, frozen=True):
    # Where soul databases and brains live; default $XDG_STATE_HOME/soupd.
    state_dir: str | None = None
    # Where the per-soul TOML files are; default: souls/ beside this file.
    souls_dir: str | None = None


class SocketConfig(_Section, frozen=True):
    # Socket path; default $XDG_RUNTIME_DIR/soupd/soupd.sock (--socket and $SOUPD_SOCKET win).
    path: str | None = None
    # File mode of the socket, octal: "0600" for a user install, "0660" with a group.
    mode: str = "0600"
    # Extra uids allowed to connect besides the daemon's own and root.
    allow_uids: list[int] = []
    # Largest frame accepted, in bytes.
    max_frame_bytes: int = 1 << 20
    # Requests one connection may have in flight before the daemon stops reading it.
    max_in_flight: int = 512
    # Connections served at once; more are refused with too_many_connections. Never more
    # than three quarters of the daemon's open-file limit (the rest is for soul databases).
    max_connections: int = 512
    # Bytes of replies that may wait unread on one connection: past it the daemon stops
    # reading that connection, and a result that does not fit is replaced by a
    # reply_buffer_full error (a result alone on the connection may be bigger).
    max_buffered_bytes: int = 16 << 20
    # Bytes of replies and half-received frames buffered for all connections together.
    max_buffered_total: int = 128 << 20
    # Of those, bytes of half-received frames (requests whose newline has not come yet)
    # for all connections together: past it the daemon stops reading connections in
    # the middle of a frame until some frame completes or times out (the first to find
    # it full may finish its frame, so that one always can). Peers that trickle big
    # frames pin no more than this plus one frame; fresh memory costs ~3.5 ms a MiB.
    # 0 (the default): a quarter of max_buffered_total (32 MiB), at least max_frame_bytes.
    max_partial_total: int = 0
    # Seconds a begun frame may take to reach its newline (then frame_timeout, closed).
    frame_timeout: float = 10.0
    # Seconds a connection may sit with nothing to do (no request, no reply being
    # worked on, no subscription), or with its replies unread, before it is closed.
    idle_timeout: float = 300.0

    def __post_init__(self) -> None:
        try:
            mode = int(self.mode, 8)
        except ValueError:
            raise ValueError(f'mode {self.mode!r} is not an octal number like "0600"') from None
        if mode & ~0o777 or mode & 0o007:
            raise ValueError(
                f"mode {self.mode!r} must not grant access to others; use 0600 or 0660"
            )
        if self.max_frame_bytes < 1024 or self.max_in_flight < 1:
            raise ValueError("max_frame_bytes must be >= 1024 and max_in_flight >= 1")
        if self.max_connections < 1:
            raise ValueError("max_connections must be >= 1")
        if self.max_buffered_bytes < 65536 or self.max_buffered_total < max(
            self.max_buffered_bytes, self.max_frame_bytes
        ):
            raise ValueError(
                "max_buffered_bytes must be >= 65536, and max_buffered_total at least "
                "max_buffered_bytes and max_frame_bytes"
            )
        if self.max_partial_total == 0:
            share = max(self.max_frame_bytes, self.max_buffered_total // 4)
            msgspec.structs.force_setattr(self, "max_partial_total", share)
        if not self.max_frame_bytes <= self.max_partial_total <= self.max_buffered_total:
            raise ValueError(
                "max_partial_total must be at least max_frame_bytes and at most max_buffered_total"
            )
        if not 0 < self.frame_timeout <= 86400 or not 0 < self.idle_timeout <= 86400 * 7:
            raise ValueError(
                "frame_timeout must be > 0 and <= 86400, idle_timeout > 0 and <= 604800"
            )


class HttpConfig(_Section, frozen=True):
    # Serve the HTTP API (JSON, bearer token; see the README) besides the socket.
    enabled: bool = True
    # Address and port; loopback by default. Port 0 picks a free one (`soupd status`).
    host: str = "127.0.0.1"
    port: int = 7411
    # Listen on an address other machines can reach (host not loopback). Whoever has the
    # token is in, over plain HTTP: put a TLS proxy in front.
    allow_remote: bool = False
    # The file holding the bearer token; created (0600, random) at the first start.
    # Default: http.token in the state folder.
    token_file: str | None = None
    # Seconds a request waits for its answer; then 504 (it may still be carried out).
    request_timeout: float = 120.0
    # Seconds a connection's first request head may take to arrive (then it is closed),
    # and a request body (then 408).
    body_timeout: float = 30.0
    # Connections and requests served at once; more are answered 503.
    max_connections: int = 256

    def __post_init__(self) -> None:
        if not 0 <= self.port < 65536:
            raise ValueError(f"port {self.port} must be 0-65535")
        if not 0 < self.request_timeout <= 86400 or not 0 < self.body_timeout <= 3600:
            raise ValueError("request_timeout must be > 0 and <= 86400, body_timeout 0-3600")
        if self.max_connections < 1:
            raise ValueError("max_connections must be >= 1")
        if not self.allow_remote and not is_loopback(self.host):
            raise ValueError(
                f"host {self.host!r} is not a loopback address: other machines could reach "
                "the API; use 127.0.0.1 (a TLS proxy in front for remote use), or set "
                "allow_remote = true"
            )


def is_loopback(host: str) -> bool:
    """Whether ``host`` names this machine only (127.0.0.0/8, ::1, localhost)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class LogConfig(_Section, frozen=True):
    # Lowest level written: debug, info, warning, error.
    level: Literal["debug", "info", "warning", "error"] = "info"
    # "auto": console rendering on a TTY, JSON lines otherwise.
    format: Literal["auto", "json", "console"] = "auto"


class SupervisionConfig(RestartConfig, frozen=True):
    """The daemon's own tree, with the same keys as a soul's ``[restart]``: more than
    ``max_restarts`` restarts within ``max_seconds`` and the daemon exits non-zero (so
    systemd restarts it); ``shutdown`` is what the socket server may spend finishing
    requests at shutdown."""


_DAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")


class ScheduleConfig(_Section, frozen=True):
    # Zone of the times below (an IANA name such as "Europe/Oslo").
    timezone: str = "UTC"
    # Nightly decay (forgetting), "HH:MM".
    decay: str = "03:00"
    # Weekly summary (and, later, the tide): day and "HH:MM".
    weekly_day: str = "sun"
    weekly: str = "04:00"
    # Homeostasis check interval.
    homeostasis_minutes: float = 15.0
    # How often TASKS.md files are checked for edits: every awake soul's each poll...
    tasks_poll_seconds: float = 1.0
    # ...and hibernating souls' in turn, at most this many files a second.
    tasks_sweep_per_second: float = 250.0

    def __post_init__(self) -> None:
        self.zone()
        self.decay_at()
        self.weekly_at()
        if self.weekly_day not in _DAYS:
            raise ValueError(f"weekly_day {self.weekly_day!r} must be one of {', '.join(_DAYS)}")
        if min(self.homeostasis_minutes, self.tasks_poll_seconds, self.tasks_sweep_per_second) <= 0:
            raise ValueError(
                "homeostasis_minutes, tasks_poll_seconds and tasks_sweep_per_second must be > 0"
            )

    def zone(self) -> ZoneInfo:
        try:
            return ZoneInfo(self.timezone)
        except (ZoneInfoNotFoundError, ValueError):
            raise ValueError(f"timezone {self.timezone!r} is not a known IANA zone") from None

    def decay_at(self) -> tuple[int, int]:
        return _clock_time("decay", self.decay)

    def weekly_at(self) -> tuple[int, int]:
        return _clock_time("weekly", self.weekly)

    def merged(self, overrides: ScheduleOverrides) -> ScheduleConfig:
        """This schedule with a soul's overrides (its set keys) applied."""
        changes = {
            name: value
            for name in overrides.__struct_fields__
            if (value := getattr(overrides, name)) is not None
        }
        return msgspec.structs.replace(self, **changes) if changes else self


def _clock_time(key: str, value: str) -> tuple[int, int]:
    hours, _, minutes = value.partition(":")
    if hours.isdigit() and minutes.isdigit() and int(hours) < 24 and int(minutes) < 60:
        return int(hours), int(minutes)
    raise ValueError(f'{key} {value!r} is not a time of day; use "HH:MM", e.g. "03:00"')


class ReloadConfig(_Section, frozen=True):
    # Reload by itself when soupd.toml or a soul file changes (SIGHUP always reloads).
    watch: bool = False
    # How often the files are checked when watching.
    poll_seconds: float = 2.0

    def __post_init__(self) -> None:
        if self.poll_seconds <= 0:
            raise ValueError("poll_seconds must be > 0")


class NotifyConfig(_Section, frozen=True):
    # Under systemd (Type=notify): how often STATUS= is sent (souls, events/s, failures).
    status_seconds: float = 10.0

    def __post_init__(self) -> None:
        if self.status_seconds <= 0:
            raise ValueError("status_seconds must be > 0")


class StoreBackendConfig(_Section, frozen=True):
    # Where souls keep their memory: "sqlite" (a database file per soul, the default) or
    # "postgres" (one database shared by several daemons, each soul owned by one of them
    # at a time; in progress, issue #21: backup and rebuild not there yet).
    backend: Literal["sqlite", "postgres"] = "sqlite"
    # PostgreSQL's DSN, never written here (it holds the password): the name of an
    # environment variable holding it, or a file (readable by soupd only) holding it.
    dsn_env: str | None = None
    dsn_file: str | None = None
    # Connections of the daemon's pool (its lease session is one more of its own).
    pool_min: int = 1
    pool_max: int = 10
    # Where other daemons reach this one's HTTP API (where a request for a soul it owns
    # is forwarded). Default: http://[http] host:port.
    advertise: str | None = None

    def __post_init__(self) -> None:
        if (
            self.dsn_env is not None
            and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", self.dsn_env) is None
        ):
            raise ValueError(
                f"dsn_env {self.dsn_env!r} is not an environment variable's name; set it to "
                "the name of the variable that holds the DSN, never to the DSN itself"
            )
        if self.dsn_env is not None and self.dsn_file is not None:
            raise ValueError("set one of dsn_env or dsn_file, not both")
        if not 1 <= self.pool_min <= self.pool_max:
            raise ValueError(f"pool sizes need 1 <= pool_min <= pool_max (got {self.pool_min}, "
                             f"{self.pool_max})")  # fmt: skip
        if self.backend == "sqlite":
            if self.dsn_env is not None or self.dsn_file is not None:
                raise ValueError('dsn_env and dsn_file are for backend = "postgres"')
            return
        if self.dsn_env is None and self.dsn_file is None:
            raise ValueError(
                'backend = "postgres" needs dsn_env (an environment variable holding the '
                "DSN) or dsn_file (a file holding it)"
            )
        _check_advertised(self.advertise)


def postgres_missing(config_file: Path) -> ConfigError:
    """What ``backend = "postgres"`` says where the asyncpg driver is not installed."""
    return ConfigError(
        str(config_file),
        "store.backend",
        'backend = "postgres" needs the PostgreSQL driver, an optional extra: install '
        "soupd with it (pip install 'soupd[postgres]', or '.[postgres]' from a checkout)",
    )


def _check_advertised(advertise: str | None) -> None:
    """``[store] advertise``: where the other daemons send this one's requests, with the
    shared bearer token: explicit, a scheme, a host and a port, nothing else, and over
    TLS unless the host is this machine."""
    example = (
        'such as "https://soupd-a.internal:7411" (or "http://127.0.0.1:7411" when the '
        "daemons share one host)"
    )
    if advertise is None:
        raise ValueError(
            'backend = "postgres" needs advertise: the URL of this daemon\'s HTTP API as the '
            f"other daemons reach it (requests for its souls are forwarded there), {example}"
        )
    found = re.fullmatch(r"(https?)://(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+):(\d{1,5})/?", advertise)
    if found is None or not 0 < int(found[3]) < 65536:
        raise ValueError(
            f"advertise {advertise!r} must be the URL of this daemon's HTTP API with its "
            f"port and nothing after it, {example}"
        )
    if found[1] == "http" and not is_loopback(found[2].strip("[]")):
        raise ValueError(
            f"advertise {advertise!r} would have the bearer token sent over plain HTTP to "
            "another machine; put a TLS proxy in front of the API and advertise https://"
        )


class TestingConfig(_Section, frozen=True):
    # Enables the debug.crash method, which makes a soul raise (to test supervision).
    fault_injection: bool = False


class DaemonConfig(_Section, frozen=True):
    paths: PathsConfig = msgspec.field(default_factory=PathsConfig)
    socket: SocketConfig = msgspec.field(default_factory=SocketConfig)
    http: HttpConfig = msgspec.field(default_factory=HttpConfig)
    log: LogConfig = msgspec.field(default_factory=LogConfig)
    supervision: SupervisionConfig = msgspec.field(default_factory=SupervisionConfig)
    schedule: ScheduleConfig = msgspec.field(default_factory=ScheduleConfig)
    reload: ReloadConfig = msgspec.field(default_factory=ReloadConfig)
    notify: NotifyConfig = msgspec.field(default_factory=NotifyConfig)
    store: StoreBackendConfig = msgspec.field(default_factory=StoreBackendConfig)
    testing: TestingConfig = msgspec.field(default_factory=TestingConfig)
    # One [[channels]] table per channel (webhook, telegram, slack, signal).
    channels: list[ChannelConfig] = []


@dataclass(frozen=True, slots=True)
class Settings:
    """Everything the daemon needs, resolved and validated."""

    daemon: DaemonConfig
    souls: Mapping[str, SoulConfig]
    config_file: Path
    souls_dir: Path
    state_dir: Path
    socket: Path
    # Soul files refused by a lenient load, by path: the souls they name do not run.
    refused: Mapping[str, ConfigError] = field(default_factory=dict)

    def refused_soul(self, path: str) -> str | None:
        """The soul a refused file would be, when its name can be one."""
        stem = Path(path).stem
        return stem if soul_name_problem(stem) is None else None

    def soul_dir(self, name: str) -> Path:
        return self.state_dir / "souls" / name

    @property
    def http_token(self) -> Path:
        """The HTTP API's token file: ``[http] token_file`` (relative to soupd.toml's
        folder), else ``http.token`` in the state folder."""
        configured = self.daemon.http.token_file
        default = self.state_dir / "http.token"
        if configured is None:
            return default
        return resolve(self.config_file.parent, Path(configured).expanduser(), default)

    @property
    def advertised(self) -> str:
        """Where other daemons of a shared store reach this one: ``[store] advertise``,
        else its HTTP API's address."""
        http = self.daemon.http
        return self.daemon.store.advertise or f"http://{http.host}:{http.port}"  # sqlite: unused

    def brain_dir(self, name: str) -> Path:
        brain = self.souls[name].brain_dir
        return Path(brain).expanduser() if brain else self.soul_dir(name)


def read_toml(path: Path, kind: type[T]) -> T:
    """Parse and validate one TOML file. A missing file is an error (callers decide)."""
    data = parse_toml(path)
    if kind is DaemonConfig and (secret := raw_problem(data) or _store_secret(data)) is not None:
        raise ConfigError(str(path), *secret)
    return convert(path, data, kind)


def _store_secret(data: Mapping[str, Any]) -> tuple[str, str] | None:
    """A DSN written in ``[store]`` (it holds the password): where it belongs instead."""
    store = data.get("store")
    if isinstance(store, Mapping) and "dsn" in store:
        return (
            "store.dsn",
            "a DSN holds the password and must not be written in soupd.toml; put it in an "
            'environment variable and set dsn_env = "NAME", or in a file readable by soupd '
            'only and set dsn_file = "/run/credentials/…"',
        )
    return None


def convert(path: Path, data: Mapping[str, Any], kind: type[T]) -> T:
    """``data`` as a ``kind``, or the first of its problems as ``soupd config check``
    words them (an unknown key with the closest known one)."""
    try:
        return msgspec.convert(data, kind, strict=True)
    except msgspec.ValidationError as exc:
        found = problems(path, data, kind)
        if found:
            raise found[0] from None
        key, problem = explain(str(exc))
        raise ConfigError(str(path), key, problem) from None


def load_settings(locations: Locations, *, lenient: bool = False) -> Settings:
    """Load ``soupd.toml`` (if present) and every soul file; raise ConfigError on any fault.

    ``lenient``: a soul file that does not validate is left out and listed in
    ``refused`` instead (faults of ``soupd.toml`` still raise)."""
    config_file = locations.config_file
    if config_file.exists():
        daemon = read_toml(config_file, DaemonConfig)
    elif locations.explicit_config:
        raise ConfigError(
            str(config_file), "", "file not found; create it, or drop --config / $SOUPD_CONFIG"
        )
    else:
        daemon = DaemonConfig()
    base = config_file.parent
    paths = dict(_daemon_paths(config_file, daemon))
    souls_dir = resolve(base, paths.get("paths.souls_dir"), locations.default_souls_dir)
    state_dir = resolve(base, paths.get("paths.state_dir"), locations.default_state_dir)
    socket = locations.socket_override or resolve(
        base, paths.get("socket.path"), locations.default_socket
    )
    souls, refused = read_souls(souls_dir)
    for name, error in shared_folders(souls, souls_dir, state_dir).items():
        del souls[name]
        refused[error.path] = error
    if refused and not lenient:
        raise next(iter(refused.values()))
    if (problem := channel_problem(daemon.channels, souls)) is not None:
        raise ConfigError(str(config_file), *problem)
    return Settings(
        daemon=daemon,
        souls=souls,
        config_file=config_file,
        souls_dir=souls_dir,
        state_dir=state_dir,
        socket=socket,
        refused=refused,
    )


def load_souls(souls_dir: Path) -> dict[str, SoulConfig]:
    """Every soul file of ``souls_dir``; raise ConfigError on the first that is bad."""
    souls, refused = read_souls(souls_dir)
    if refused:
        raise next(iter(refused.values()))
    return souls


def read_souls(souls_dir: Path) -> tuple[dict[str, SoulConfig], dict[str, ConfigError]]:
    """The soul files of ``souls_dir`` that validate, and the error of each that does not
    (by path, in file order). With no soul file at all, the ``default`` soul."""
    files = sorted(souls_dir.glob("*.toml")) if souls_dir.is_dir() else []
    souls: dict[str, SoulConfig] = {}
    refused: dict[str, ConfigError] = {}
    for path in files:
        try:
            souls[path.stem] = _read_named_soul(path)
        except ConfigError as error:
            refused[str(path)] = error
    if not files:
        souls[DEFAULT_SOUL] = SoulConfig()
    return souls, refused


def shared_folders(
    souls: Mapping[str, SoulConfig], souls_dir: Path, state_dir: Path
) -> dict[str, ConfigError]:
    """Souls whose brain_dir is another soul's brain or state folder (in name order, the
    later one is refused): two souls writing one MEMORY.md would serve each other's text."""
    taken: dict[str, str] = {}
    for name in sorted(souls):
        taken[os.path.realpath(state_dir / "souls" / name)] = name
    problems: dict[str, ConfigError] = {}
    for name in sorted(souls):
        configured = souls[name].brain_dir
        if configured is None:
            continue
        brain = os.path.realpath(Path(configured).expanduser())
        owner = taken.setdefault(brain, name)
        if owner != name:
            problems[name] = ConfigError(
                str(souls_dir / f"{name}.toml"),
                "brain_dir",
                f"{configured!r} is soul {owner!r}'s folder too; give each soul its own",
            )
    return problems


def _read_named_soul(path: Path) -> SoulConfig:
    problem = soul_name_problem(path.stem)
    if problem is not None:
        raise ConfigError(str(path), "", f"{problem}; rename the file")
    return _read_soul(path)


def _read_soul(path: Path) -> SoulConfig:
    return soul_config(path, parse_toml(path))


def soul_config(path: Path, data: Mapping[str, Any]) -> SoulConfig:
    """One soul's tables (a soul file's content, parsed) validated as the soul file at
    ``path`` is at load: every key, its brain_dir as a path, its schedule's times."""
    config = convert(path, data, SoulConfig)
    if config.brain_dir is not None:
        expand(path, "brain_dir", config.brain_dir)
    try:
        # The soul's own times follow soupd.toml's format: checked here, as the daemon's
        # are, so a bad one is this file's error (never a crash when jobs are scheduled).
        ScheduleConfig().merged(config.schedule)
    except ValueError as exc:
        raise ConfigError(str(path), "schedule", str(exc)) from None
    return config


def check_file(path: Path) -> str:
    """Validate one file: a soul file when it sits in a ``souls`` folder, else soupd.toml."""
    if path.parent.name == "souls":
        problem = soul_name_problem(path.stem)
        if problem is not None:
            raise ConfigError(str(path), "", problem)
        _read_soul(path)
        return "soul"
    _daemon_paths(path, read_toml(path, DaemonConfig))
    return "daemon"


def _daemon_paths(path: Path, daemon: DaemonConfig) -> list[tuple[str, Path]]:
    """The paths ``soupd.toml`` sets, by key, each checked by
    :func:`~supervisor.config_file.expand`."""
    configured = {
        "paths.souls_dir": daemon.paths.souls_dir,
        "paths.state_dir": daemon.paths.state_dir,
        "socket.path": daemon.socket.path,
        "http.token_file": daemon.http.token_file,
        "store.dsn_file": daemon.store.dsn_file,
    }
    return [(k, expand(path, k, v)) for k, v in configured.items() if v is not None]
