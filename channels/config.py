"""Channel settings: one ``[[channels]]`` table per channel in ``soupd.toml``.

Each table is one of four kinds (``kind = "webhook" | "telegram" | "slack" |
"signal"``), a msgspec tagged union with unknown keys rejected. Credentials never
live in the TOML: a key holding one is named ``<what>_env`` (an environment variable)
or ``<what>_file`` (a file, e.g. under ``/run/credentials``), and a literal secret is
refused by :func:`raw_problem` before the file is converted.

Two configs are equal when every setting is: a reload restarts exactly the channels
whose table changed (:mod:`channels.supervisor`).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import Any

import msgspec

from supervisor.secrets import read_secret as secret

__all__ = [
    "ChannelConfig",
    "SignalConfig",
    "SlackConfig",
    "TelegramConfig",
    "WebhookConfig",
    "channel_problem",
    "raw_problem",
    "read_secret",
]


class _Channel(
    msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True, tag_field="kind"
):
    # Unique name; it prefixes sessions ("<name>:<conversation>") and shows in status.
    name: str
    # The souls this channel feeds; each inbound event goes to all of them.
    souls: list[str]
    # Output kinds sent back to the conversation they belong to.
    deliver: list[str] = msgspec.field(default_factory=lambda: ["reply", "wakeup"])
    # Outbound messages held while the upstream is slow; beyond, they are dropped
    # and counted (status: outbox_overflow).
    outbox: int = 256
    # Reconnect delays: exponential from backoff_initial, capped at backoff_max
    # seconds, each drawn at random between half and all of it (jitter).
    backoff_initial: float = 1.0
    backoff_max: float = 300.0
    # Seconds to wait for the souls to acknowledge an inbound event; past it the
    # event is not acknowledged upstream (it comes again).
    ack_timeout: float = 30.0

    def __post_init__(self) -> None:
        if not self.name or not self.name.replace("-", "").replace("_", "").isalnum():
            raise ValueError(f"name {self.name!r} must be letters, digits, - or _")
        if not self.souls:
            raise ValueError(f"channel {self.name!r}: souls must name at least one soul")
        if self.outbox < 1 or self.ack_timeout <= 0:
            raise ValueError(f"channel {self.name!r}: outbox must be >= 1, ack_timeout > 0")
        if not 0 < self.backoff_initial <= self.backoff_max:
            raise ValueError(f"channel {self.name!r}: need 0 < backoff_initial <= backoff_max")


class WebhookConfig(_Channel, frozen=True, kw_only=True, tag="webhook"):
    # Address and port to listen on (loopback by default; port 0 picks a free one,
    # shown in `soupd status`).
    host: str = "127.0.0.1"
    port: int = 8787
    # The HMAC-SHA256 secret (GitHub style X-Hub-Signature-256): an environment
    # variable or a file. One of them is required: any local user can reach a TCP
    # port, which the Unix socket would refuse them.
    secret_env: str | None = None
    secret_file: str | None = None
    # Accept unsigned requests from anyone who can reach the port (warned at start).
    allow_unauthenticated: bool = False
    # Largest request body accepted, in bytes (larger: 413).
    max_body: int = 1 << 20
    # Outputs cannot go back over a webhook.
    deliver: list[str] = msgspec.field(default_factory=list)

    def __post_init__(self) -> None:
        super().__post_init__()
        if not 0 <= self.port < 65536 or self.max_body < 1024:
            raise ValueError(f"channel {self.name!r}: port 0-65535, max_body >= 1024")
        if self.deliver:
            raise ValueError(f"channel {self.name!r}: a webhook cannot deliver outputs")
        if self.secret_env is not None and self.secret_file is not None:
            raise ValueError(f"channel {self.name!r}: set secret_env or secret_file, not both")
        signed = self.secret_env is not None or self.secret_file is not None
        if signed and self.allow_unauthenticated:
            raise ValueError(
                f"channel {self.name!r}: allow_unauthenticated goes with no secret; drop one"
            )
        if not signed and not self.allow_unauthenticated:
            raise ValueError(
                f"channel {self.name!r}: a webhook needs secret_env or secret_file, since any "
                "local user can reach its port; set allow_unauthenticated = true to accept "
                "unsigned requests anyway"
            )


class TelegramConfig(_Channel, frozen=True, kw_only=True, tag="telegram"):
    # The bot token (from @BotFather): an environment variable or a file.
    token_env: str | None = None
    token_file: str | None = None
    # Bot API base URL (a local Bot API server, or a test fake).
    api_url: str = "https://api.telegram.org"
    # Long-polling timeout of getUpdates, seconds.
    poll_timeout: int = 30
    # An OpenAI-compatible /v1/audio/transcriptions URL: voice messages are
    # transcribed there and stored as kind "voice". Unset: voice messages are skipped.
    transcribe_url: str | None = None
    # The model name sent to the transcriber.
    transcribe_model: str = "whisper-1"

    def __post_init__(self) -> None:
        super().__post_init__()
        _one_secret(self.name, "token", self.token_env, self.token_file)
        if not 0 <= self.poll_timeout <= 600:
            raise ValueError(f"channel {self.name!r}: poll_timeout must be 0-600")


class SlackConfig(_Channel, frozen=True, kw_only=True, tag="slack"):
    # App-level token (xapp-…, connections:write) for Socket Mode.
    app_token_env: str | None = None
    app_token_file: str | None = None
    # Bot token (xoxb-…) for auth.test and chat.postMessage.
    bot_token_env: str | None = None
    bot_token_file: str | None = None
    # Web API base URL.
    api_url: str = "https://slack.com/api"

    def __post_init__(self) -> None:
        super().__post_init__()
        _one_secret(self.name, "app_token", self.app_token_env, self.app_token_file)
        _one_secret(self.name, "bot_token", self.bot_token_env, self.bot_token_file)


class SignalConfig(_Channel, frozen=True, kw_only=True, tag="signal"):
    # The signal-cli daemon started with --http (no credentials: keep it on loopback).
    url: str = "http://127.0.0.1:8080"
    # The account soupd speaks as (phone number or ACI): mentions of it count, and
    # it is passed to every call (multi-account daemons need it).
    account: str

    def __post_init__(self) -> None:
        super().__post_init__()
        if not self.account:
            raise ValueError(f"channel {self.name!r}: account must not be empty")


ChannelConfig = WebhookConfig | TelegramConfig | SlackConfig | SignalConfig


def _one_secret(channel: str, what: str, env: str | None, file: str | None) -> None:
    if (env is None) == (file is None):
        raise ValueError(
            f"channel {channel!r}: set exactly one of {what}_env (an environment variable) "
            f"or {what}_file (a file holding it)"
        )


# Keys that would hold a credential in the clear, whatever channel kind.
_SECRET_WORDS = ("token", "secret", "password", "api_key", "apikey", "key")


_KINDS = ("webhook", "telegram", "slack", "signal")


def raw_problem(data: Mapping[str, Any]) -> tuple[str, str] | None:
    """``(key path, problem)`` for a literal secret or an unknown kind in ``[[channels]]``.

    Checked on the raw TOML, before conversion, so the error names the key and says
    what to do (where the secret belongs, which kinds exist) instead of calling it an
    unknown key or an invalid value.
    """
    channels = data.get("channels")
    if not isinstance(channels, list):
        return None
    for index, table in enumerate(channels):
        if not isinstance(table, Mapping):
            continue
        kind = table.get("kind")
        if isinstance(kind, str) and kind not in _KINDS:
            return (
                f"channels[{index}].kind",
                f"unknown kind {kind!r}; use one of {', '.join(_KINDS)}",
            )
        for key in table:
            base = key.removesuffix("_env").removesuffix("_file")
            if base != key or not any(key.endswith(word) for word in _SECRET_WORDS):
                continue
            return (
                f"channels[{index}].{key}",
                "secrets must not be written in soupd.toml; put it in an environment "
                f'variable and set {key}_env = "NAME", or in a file readable by soupd '
                f'only and set {key}_file = "/run/credentials/…"',
            )
    return None


def channel_problem(
    channels: Sequence[ChannelConfig], souls: Collection[str]
) -> tuple[str, str] | None:
    """``(key path, problem)`` when names repeat or a channel feeds an unknown soul."""
    seen: set[str] = set()
    for index, channel in enumerate(channels):
        if channel.name in seen:
            return f"channels[{index}].name", f"{channel.name!r} is used twice; rename one"
        seen.add(channel.name)
        for soul in channel.souls:
            if soul not in souls:
                return (
                    f"channels[{index}].souls",
                    f"no soul named {soul!r}; add souls/{soul}.toml or remove it here",
                )
    return None


async def read_secret(channel: str, what: str, env: str | None, file: str | None) -> str:
    """The channel's credential from its environment variable or file, read when the
    channel connects (a rotated file is picked up at the next reconnect); ValueError
    says what to fix."""
    return await secret(f"channel {channel!r}", what, env, file)
