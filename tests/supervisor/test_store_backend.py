"""``[store]`` in soupd.toml (issue #21): the backend, where its DSN is read from and
the address the daemon advertises, validated by config check (the daemon on PostgreSQL:
tests/e2e/test_shared_store.py)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from e2e.harness import Home

from supervisor.config import DaemonConfig, StoreBackendConfig, check_file, read_toml
from supervisor.errors import ConfigError


def daemon_file(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "soupd.toml"
    path.write_text(text, encoding="utf-8")
    return path


def refusal(tmp_path: Path, text: str) -> ConfigError:
    path = daemon_file(tmp_path, text)
    with pytest.raises(ConfigError) as caught:
        check_file(path)
    assert caught.value.path == str(path)
    return caught.value


def test_sqlite_is_the_default(tmp_path: Path) -> None:
    assert read_toml(daemon_file(tmp_path, ""), DaemonConfig).store == StoreBackendConfig()
    config = read_toml(daemon_file(tmp_path, '[store]\nbackend = "sqlite"\n'), DaemonConfig)
    assert config.store.backend == "sqlite"
    assert (config.store.pool_min, config.store.pool_max) == (1, 10)


def test_postgres_takes_a_dsn_from_the_environment_or_a_file(tmp_path: Path) -> None:
    here = 'advertise = "http://127.0.0.1:7411"'
    for where in ('dsn_env = "SOUPD_DSN"', 'dsn_file = "/run/credentials/soupd/dsn"'):
        path = daemon_file(tmp_path, f'[store]\nbackend = "postgres"\n{where}\n{here}\n')
        assert check_file(path) == "daemon"
        assert read_toml(path, DaemonConfig).store.backend == "postgres"
    for advertise in (
        "https://soupd-a.internal:7411",
        "http://[::1]:7411",
        "https://10.0.0.5:443/",
    ):
        path = daemon_file(
            tmp_path, f'[store]\nbackend = "postgres"\ndsn_env = "D"\nadvertise = "{advertise}"\n'
        )
        assert read_toml(path, DaemonConfig).store.advertise == advertise


@pytest.mark.parametrize(
    ("text", "key", "says"),
    [
        ('backend = "postgres"\nadvertise = "http://127.0.0.1:1"', "store", "needs dsn_env"),
        ('backend = "postgres"\ndsn_env = "A"\ndsn_file = "/x"', "store", "not both"),
        ('backend = "postgres"\ndsn_env = "postgresql://u:pw@db/soupd"', "store",
         "never to the DSN itself"),
        ('backend = "postgres"\ndsn = "postgresql://u:pw@db/soupd"', "store.dsn",
         "must not be written in soupd.toml"),
        ('dsn_env = "SOUPD_DSN"', "store", 'for backend = "postgres"'),
        ('backend = "mysql"', "store.backend", "invalid enum value 'mysql'"),
        ("pool_min = 5\npool_max = 2", "store", "pool_min <= pool_max"),
        ("pool_min = 0", "store", "pool_min"),
        ('backend = "postgres"\ndsn_env = "D"\nadvertise = "10.0.0.5:7411"', "store",
         "must be the URL of this daemon's HTTP API"),
        ('backend = "postgres"\ndsn_env = "D"', "store", "needs advertise"),
        ('backend = "postgres"\ndsn_env = "D"\nadvertise = "https://a.internal"', "store",
         "with its port and nothing after it"),
        ('backend = "postgres"\ndsn_env = "D"\nadvertise = "https://a.internal:7411/x?y"',
         "store", "with its port and nothing after it"),
        ('backend = "postgres"\ndsn_env = "D"\nadvertise = "http://10.0.0.5:7411"', "store",
         "over plain HTTP to another machine"),
    ],
)  # fmt: skip
def test_config_check_names_what_is_wrong(tmp_path: Path, text: str, key: str, says: str) -> None:
    error = refusal(tmp_path, f"[store]\n{text}\n")
    assert error.key == key
    assert says in str(error)


# Runs soupd's own entry point with the asyncpg driver made impossible to import, as on a
# machine where soupd was installed without its "postgres" extra.
_WITHOUT_ASYNCPG = """
import builtins, sys
real = builtins.__import__
def without(name, *args, **kwargs):
    if name == "asyncpg" or name.startswith("asyncpg."):
        raise ModuleNotFoundError("No module named 'asyncpg'", name="asyncpg")
    return real(name, *args, **kwargs)
builtins.__import__ = without
from supervisor.cli.main import main
sys.argv = ["soupd", *sys.argv[1:]]
sys.exit(main())
"""


@pytest.mark.parametrize("command", ["start", "migrate"])
def test_postgres_without_its_driver_says_what_to_install(soupd_home: Home, command: str) -> None:
    path = soupd_home.write_config(
        '[store]\nbackend = "postgres"\ndsn_env = "SOUPD_DSN"\n'
        'advertise = "http://127.0.0.1:7411"\n'
    )
    soupd_home.extra_env["SOUPD_DSN"] = "postgresql://u@127.0.0.1:1/x"
    done = subprocess.run(
        [sys.executable, "-c", _WITHOUT_ASYNCPG, command],
        env=soupd_home.env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert f"{path}: store.backend" in done.stderr
    assert "pip install 'soupd[postgres]'" in done.stderr
    assert "Traceback" not in done.stderr
