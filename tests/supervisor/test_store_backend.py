"""``[store]`` in soupd.toml (issue #21): the backend and where its DSN is read from,
validated by config check; "postgres" refused, by config check and by the daemon, until
the PostgreSQL store is complete."""

from __future__ import annotations

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


def test_postgres_is_refused_until_the_store_is_complete(tmp_path: Path) -> None:
    for where in ('dsn_env = "SOUPD_DSN"', 'dsn_file = "/run/credentials/soupd/dsn"'):
        error = refusal(tmp_path, f'[store]\nbackend = "postgres"\n{where}\n')
        assert error.key == "store"
        assert "not yet supported for souls" in str(error)


@pytest.mark.parametrize(
    ("text", "key", "says"),
    [
        ('backend = "postgres"', "store", "needs dsn_env"),
        ('backend = "postgres"\ndsn_env = "A"\ndsn_file = "/x"', "store", "not both"),
        ('backend = "postgres"\ndsn_env = "postgresql://u:pw@db/soupd"', "store",
         "never to the DSN itself"),
        ('backend = "postgres"\ndsn = "postgresql://u:pw@db/soupd"', "store.dsn",
         "must not be written in soupd.toml"),
        ('dsn_env = "SOUPD_DSN"', "store", 'for backend = "postgres"'),
        ('backend = "mysql"', "store.backend", "invalid enum value 'mysql'"),
        ("pool_min = 5\npool_max = 2", "store", "pool_min <= pool_max"),
        ("pool_min = 0", "store", "pool_min"),
    ],
)  # fmt: skip
def test_config_check_names_what_is_wrong(tmp_path: Path, text: str, key: str, says: str) -> None:
    error = refusal(tmp_path, f"[store]\n{text}\n")
    assert error.key == key
    assert says in str(error)


def test_the_daemon_refuses_to_start_on_postgres(soupd_home: Home) -> None:
    path = soupd_home.write_config('[store]\nbackend = "postgres"\ndsn_env = "SOUPD_DSN"\n')
    soupd_home.add_soul("alpha")
    for args in (("config", "check"), ("start",)):
        result = soupd_home.cli(*args)
        assert result.returncode == 2, (args, result.stdout, result.stderr)
        assert str(path) in result.stderr
        assert "not yet supported for souls" in result.stderr
