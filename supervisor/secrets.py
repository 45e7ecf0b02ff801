"""Secrets named in a config, never written in it: read from an environment variable
or a file when they are needed (a channel's token, the shared store's DSN)."""

from __future__ import annotations

import os

import anyio

__all__ = ["read_secret"]


async def read_secret(who: str, what: str, env: str | None, file: str | None) -> str:
    """The secret ``what`` of ``who`` (as the message names them: "channel 'ops'"; empty
    when the caller says whose) from its environment variable ``env`` or its ``file``;
    ValueError says what to fix. The value itself never appears in a message.

    Read when it is needed (not at load), so a rotated file is picked up at the next
    connect."""
    who = f"{who}: " if who else ""
    if env is not None:
        value = os.environ.get(env, "").strip()
        if not value:
            raise ValueError(
                f"{who}environment variable {env} ({what}) is not set or empty; export it "
                "in soupd's environment (systemd: Environment= or LoadCredential=)"
            )
        return value
    if file is None:
        raise ValueError(f"{who}no {what} configured")
    try:
        path = await anyio.Path(file).expanduser()
        value = (await path.read_text(encoding="utf-8")).strip()
    except OSError as exc:
        raise ValueError(
            f"{who}cannot read {what} from {file}: {exc.strerror or exc}; check the path "
            "and that soupd's user may read it"
        ) from None
    if not value:
        raise ValueError(f"{who}{file} ({what}) is empty")
    return str(value)
