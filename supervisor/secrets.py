"""Secrets named in a config, never written in it: read from an environment variable
or a file when they are needed (a channel's token, the shared store's DSN)."""

from __future__ import annotations

import os
import stat

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
        owner, mode, value = await anyio.to_thread.run_sync(_read_file, file)
    except OSError as exc:
        raise ValueError(
            f"{who}cannot read {what} from {file}: {exc.strerror or exc}; check the path "
            "and that soupd's user may read it"
        ) from None
    if owner not in (os.geteuid(), 0):
        raise ValueError(
            f"{who}{file} ({what}) belongs to uid {owner}, not to soupd's user (uid "
            f"{os.geteuid()}) nor root: its owner could change it at any time; give it to "
            "soupd's user (`chown`) or root"
        )
    if mode & 0o007:
        raise ValueError(
            f"{who}{file} ({what}) has mode {mode:04o}: every user of this machine may read "
            f"it; run `chmod o-rwx {file}` (and change the secret if it may have been read)"
        )
    if not value:
        raise ValueError(f"{who}{file} ({what}) is empty")
    return value


def _read_file(path: str) -> tuple[int, int, str]:
    """The owner's uid, the permission bits and the stripped text (its first 64 KiB) of
    the file at ``path`` (``~`` expanded; one open: owner and bits are the read file's)."""
    with open(os.path.expanduser(path), encoding="utf-8") as f:
        found = os.fstat(f.fileno())
        return found.st_uid, stat.S_IMODE(found.st_mode), f.read(1 << 16).strip()
