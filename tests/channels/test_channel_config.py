"""``[[channels]]`` in soupd.toml: kinds, validation, credentials only from env or file,
and every key documented in config/soupd.example.toml."""

from __future__ import annotations

import os
import re
from pathlib import Path

import msgspec
import pytest

from channels.config import (
    SignalConfig,
    SlackConfig,
    TelegramConfig,
    WebhookConfig,
    read_secret,
)
from supervisor.config import DaemonConfig, load_settings, read_toml
from supervisor.errors import ConfigError
from supervisor.paths import Locations

EXAMPLE = Path(__file__).resolve().parents[2] / "config" / "soupd.example.toml"

TELEGRAM = """
[[channels]]
name = "tg"
kind = "telegram"
souls = ["ada"]
token_env = "TELEGRAM_TOKEN"
"""


def load(tmp_path: Path, daemon: str, souls: tuple[str, ...] = ("ada",)) -> DaemonConfig:
    config = tmp_path / "soupd.toml"
    config.write_text(daemon)
    (tmp_path / "souls").mkdir(exist_ok=True)
    for soul in souls:
        (tmp_path / "souls" / f"{soul}.toml").write_text("")
    locations = Locations(
        config_file=config,
        default_souls_dir=tmp_path / "souls",
        default_state_dir=tmp_path / "state",
        default_socket=tmp_path / "soupd.sock",
        socket_override=None,
    )
    return load_settings(locations).daemon


def test_each_table_becomes_its_kind(tmp_path: Path) -> None:
    text = (
        TELEGRAM
        + """
[[channels]]
name = "hooks"
kind = "webhook"
souls = ["ada"]
port = 0
secret_file = "/run/credentials/soupd.service/hook"

[[channels]]
name = "work"
kind = "slack"
souls = ["ada"]
app_token_env = "A"
bot_token_env = "B"

[[channels]]
name = "phone"
kind = "signal"
souls = ["ada"]
account = "+4790000000"
"""
    )
    tg, hooks, work, phone = load(tmp_path, text).channels
    assert isinstance(tg, TelegramConfig)
    assert tg.token_env == "TELEGRAM_TOKEN"
    assert isinstance(hooks, WebhookConfig)
    assert hooks.deliver == []
    assert isinstance(work, SlackConfig)
    assert work.deliver == ["reply", "wakeup"]
    assert isinstance(phone, SignalConfig)
    assert phone.url == "http://127.0.0.1:8080"


@pytest.mark.parametrize(
    ("table", "key"),
    [
        ('token = "123:ABC"', "channels[0].token"),
        ('bot_token = "xoxb-1"', "channels[0].bot_token"),
        ('secret = "hunter2"', "channels[0].secret"),
    ],
)
def test_a_literal_secret_is_refused_with_what_to_do(tmp_path: Path, table: str, key: str) -> None:
    with pytest.raises(ConfigError) as caught:
        load(tmp_path, TELEGRAM + table + "\n")
    error = caught.value
    assert error.key == key
    assert "must not be written in soupd.toml" in error.problem
    assert f"{key.split('.')[-1]}_env" in error.problem
    assert "_file" in error.problem


# A webhook table with neither a secret nor the explicit unsigned mode.
HOOK = '[[channels]]\nname = "hooks"\nkind = "webhook"\nsouls = ["ada"]\nport = 0\n'


def test_an_unsigned_webhook_must_be_asked_for(tmp_path: Path) -> None:
    (hooks,) = load(tmp_path, HOOK + "allow_unauthenticated = true\n").channels
    assert hooks.allow_unauthenticated


@pytest.mark.parametrize(
    ("text", "key", "problem"),
    [
        (TELEGRAM.replace('"ada"', '"nobody"'), "channels[0].souls", "no soul named 'nobody'"),
        (TELEGRAM + TELEGRAM, "channels[1].name", "'tg' is used twice"),
        (
            TELEGRAM.replace("telegram", "irc"),
            "channels[0].kind",
            "unknown kind 'irc'; use one of webhook",
        ),
        (TELEGRAM + 'token_file = "/x"\n', "channels[0]", "exactly one of token_env"),
        (TELEGRAM + "pol_timeout = 1\n", "channels[0].pol_timeout", "unknown key"),
        (TELEGRAM.replace('souls = ["ada"]', "souls = []"), "channels[0]", "at least one soul"),
        (HOOK, "channels[0]", "needs secret_env or secret_file, since any local user"),
        (
            HOOK + 'secret_env = "S"\nallow_unauthenticated = true\n',
            "channels[0]",
            "allow_unauthenticated goes with no secret",
        ),
    ],
)
def test_mistakes_name_the_key(tmp_path: Path, text: str, key: str, problem: str) -> None:
    with pytest.raises(ConfigError) as caught:
        load(tmp_path, text)
    assert caught.value.key == key
    assert problem in caught.value.problem


async def test_secrets_come_from_the_environment_or_a_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TOKEN", " 123:ABC\n")
    assert await read_secret("tg", "token", "TOKEN", None) == "123:ABC"
    (tmp_path / "token").write_text("456:DEF\n")
    (tmp_path / "token").chmod(0o644)
    # A secret file every user of the machine may read is refused, naming the fix.
    with pytest.raises(ValueError, match=r"has mode 0644: every user .*`chmod o-rwx"):
        await read_secret("tg", "token", None, str(tmp_path / "token"))
    (tmp_path / "token").chmod(0o640)  # a group of its own may share it
    assert await read_secret("tg", "token", None, str(tmp_path / "token")) == "456:DEF"
    if os.geteuid() == 0:  # (CI runs as root: there a file can be given to another user)
        # One that another user owns, who could change it at any time, is refused too.
        os.chown(tmp_path / "token", 65534, -1)
        with pytest.raises(ValueError, match=r"belongs to uid 65534, not to soupd's user"):
            await read_secret("tg", "token", None, str(tmp_path / "token"))
        os.chown(tmp_path / "token", 0, -1)
    monkeypatch.delenv("TOKEN")
    with pytest.raises(ValueError, match="environment variable TOKEN"):
        await read_secret("tg", "token", "TOKEN", None)
    with pytest.raises(ValueError, match="cannot read token from"):
        await read_secret("tg", "token", None, str(tmp_path / "missing"))


def test_every_channel_key_is_documented_in_the_example() -> None:
    text = EXAMPLE.read_text()
    block = text[text.index("# [[channels]]") :]
    documented = set(re.findall(r"^# (\w+) = ", block, re.MULTILINE))
    for kind in (WebhookConfig, TelegramConfig, SlackConfig, SignalConfig):
        keys = {field.name for field in msgspec.structs.fields(kind)} | {"kind"}
        assert keys <= documented, f"{kind.__name__}: {sorted(keys - documented)}"
    assert read_toml(EXAMPLE, DaemonConfig).channels == []
