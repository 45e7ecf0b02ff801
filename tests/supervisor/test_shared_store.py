"""The daemon's shared PostgreSQL store (supervisor/shared.py) on a real server: the DSN
read from where the config names it and never shown, a soul's store opened under its
lease only, SoulElsewhere naming the owner, the lease given up for another daemon."""

from __future__ import annotations

from pathlib import Path

import pytest
from shared_parts import note, postgres_config

from supervisor.errors import ConfigError, LeaseLost, SharedStoreUnusable, SoulElsewhere
from supervisor.shared import SharedStore, _scrubbed

A, B = "http://10.0.0.1:7411", "http://10.0.0.2:7411"


async def test_one_daemon_serves_a_soul_another_is_told_where(
    pg_dsn: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("SOUPD_TEST_DSN", pg_dsn)
    (tmp_path / "dsn").write_text(pg_dsn + "\n")
    (tmp_path / "dsn").chmod(0o600)
    first = await SharedStore.open(
        postgres_config(dsn_env="SOUPD_TEST_DSN"), A, config_file="a.toml"
    )
    second = await SharedStore.open(
        postgres_config(dsn_file=str(tmp_path / "dsn")), B, config_file="b.toml"
    )
    try:
        store = await first.open_soul("alpha", context_turns=0)
        assert await store.append([note(1)], now=1.0) == [1]
        assert first.fence("alpha") is not None
        with pytest.raises(SoulElsewhere) as elsewhere:
            await second.open_soul("alpha", context_turns=0)
        assert elsewhere.value.owner == A
        assert A in elsewhere.value.message
        assert await second.owner("alpha") == A
        await store.close()
        await first.give_up("alpha")
        assert first.fence("alpha") is None
        with pytest.raises(LeaseLost):
            await store.append([note(2)], now=2.0)  # given up: fenced off
        moved = await second.open_soul("alpha", context_turns=0)
        assert await moved.append([note(2)], now=2.0) == [2]
        assert await first.owner("alpha") == B
        await moved.close()
    finally:
        await first.close()
        await second.close()


async def test_a_dsn_not_to_be_read_is_a_config_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SOUPD_TEST_DSN", raising=False)
    with pytest.raises(ConfigError) as error:
        await SharedStore.open(
            postgres_config(dsn_env="SOUPD_TEST_DSN"), A, config_file="soupd.toml"
        )
    assert error.value.message.startswith(
        "soupd.toml: store.dsn_env: environment variable SOUPD_TEST_DSN (the PostgreSQL DSN)"
        " is not set"
    )
    with pytest.raises(ConfigError, match="dsn_file: cannot read the PostgreSQL DSN from /nonex"):
        await SharedStore.open(
            postgres_config(dsn_file="/nonexistent/dsn"), A, config_file="soupd.toml"
        )


async def test_a_wrong_password_is_named_but_never_shown(
    pg_dsn: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    wrong = pg_dsn.replace("postgresql://", "postgresql://nobody:Secr3tPassw0rd@", 1)
    monkeypatch.setenv("SOUPD_TEST_DSN", wrong)
    with pytest.raises(SharedStoreUnusable) as error:
        await SharedStore.open(
            postgres_config(dsn_env="SOUPD_TEST_DSN"), A, config_file="soupd.toml"
        )
    assert "$SOUPD_TEST_DSN" in error.value.message
    assert error.value.code == "store_unusable"
    assert "Secr3tPassw0rd" not in error.value.message
    assert wrong not in error.value.message


async def test_an_unreachable_server_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SOUPD_TEST_DSN", "postgresql://u:pw@127.0.0.1:1/nothing")
    with pytest.raises(SharedStoreUnusable, match=r"\$SOUPD_TEST_DSN.*(refused|Connect)"):
        await SharedStore.open(
            postgres_config(dsn_env="SOUPD_TEST_DSN"), A, config_file="soupd.toml"
        )


@pytest.mark.parametrize(
    ("dsn", "password"),
    [
        ("postgresql://soupd:p%40ss%20w0rd@db.internal:5432/soupd", "p@ss w0rd"),
        ("host=db.internal user=soupd password=s3cret dbname=soupd", "s3cret"),
        ("host=db.internal password='two words' dbname=soupd", "two words"),
        ("postgresql://soupd@db.internal/soupd?password=q%26q&sslmode=require", "q&q"),
    ],
)
def test_no_form_of_the_password_is_in_a_store_error(dsn: str, password: str) -> None:
    # The driver's messages may quote the DSN, or the password as it decoded it.
    said = _scrubbed(ValueError(f"cannot parse {dsn!r}: near {password!r}"), dsn)
    assert password not in said
    assert dsn not in said
    assert said.startswith("ValueError: cannot parse")
