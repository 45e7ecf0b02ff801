"""The ``[http]`` table: loopback unless asked otherwise, and where the token file is."""

from __future__ import annotations

from pathlib import Path

import pytest

from supervisor.config import DaemonConfig, HttpConfig, is_loopback, load_settings, read_toml
from supervisor.config_check import check_configuration
from supervisor.errors import ConfigError
from supervisor.paths import locate


def env(root: Path) -> dict[str, str]:
    return {
        "HOME": str(root),
        "XDG_CONFIG_HOME": str(root / "config"),
        "XDG_STATE_HOME": str(root / "state"),
        "XDG_RUNTIME_DIR": str(root / "run"),
    }


def daemon_file(root: Path, text: str) -> Path:
    path = root / "config" / "soupd" / "soupd.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_the_defaults_serve_on_loopback() -> None:
    http = DaemonConfig().http
    assert (http.enabled, http.host, http.port, http.allow_remote) == (
        True,
        "127.0.0.1",
        7411,
        False,
    )


@pytest.mark.parametrize("host", ["127.0.0.1", "127.1.2.3", "::1", "localhost"])
def test_loopback_hosts(host: str) -> None:
    assert is_loopback(host)
    assert HttpConfig(host=host).host == host


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.168.1.4", "example.org", ""])
def test_a_host_others_reach_is_refused_unless_allowed(tmp_path: Path, host: str) -> None:
    assert not is_loopback(host)
    path = daemon_file(tmp_path, f'[http]\nhost = "{host}"\n')
    with pytest.raises(ConfigError) as caught:
        read_toml(path, DaemonConfig)
    assert caught.value.key == "http"
    assert "allow_remote = true" in caught.value.problem
    allowed = daemon_file(tmp_path, f'[http]\nhost = "{host}"\nallow_remote = true\n')
    assert read_toml(allowed, DaemonConfig).http.host == host


def test_config_check_reports_every_http_problem(tmp_path: Path) -> None:
    daemon_file(
        tmp_path,
        '[http]\nhost = "0.0.0.0"\nport = 70000\nenabeld = false\nrequest_timeout = "1"\n',
    )
    report = check_configuration(locate(env(tmp_path)))
    keys = sorted(error.key for error in report.errors)
    assert keys == ["http.enabeld", "http.request_timeout"], report.errors
    (unknown,) = [e for e in report.errors if e.key == "http.enabeld"]
    assert "did you mean 'enabled'?" in unknown.problem
    # Once the keys are right, the table's own rules are checked (and all named).
    daemon_file(tmp_path, '[http]\nhost = "0.0.0.0"\n')
    (error,) = check_configuration(locate(env(tmp_path))).errors
    assert (error.key, "not a loopback address" in error.problem) == ("http", True)


def test_the_token_file_is_in_the_state_folder_unless_named(tmp_path: Path) -> None:
    settings = load_settings(locate(env(tmp_path)))
    assert settings.http_token == tmp_path / "state" / "soupd" / "http.token"
    daemon_file(tmp_path, '[http]\ntoken_file = "secrets/api.token"\n')
    relative = load_settings(locate(env(tmp_path)))
    assert relative.http_token == tmp_path / "config" / "soupd" / "secrets" / "api.token"
    daemon_file(tmp_path, '[http]\ntoken_file = "~/api.token"\n')
    assert load_settings(locate(env(tmp_path))).http_token == Path("~/api.token").expanduser()
