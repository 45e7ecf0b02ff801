"""Homes of daemons sharing one PostgreSQL store (tests/e2e/test_shared_store.py,
test_failover.py)."""

from __future__ import annotations

import socket
from pathlib import Path

from e2e.harness import Home

__all__ = ["free_port", "shared_home"]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


def shared_home(root: Path, name: str, dsn: str, soul: str, souls: tuple[str, ...]) -> Home:
    """A daemon's home on the shared store at ``dsn``: its HTTP API on a port of its
    own, advertised; the bearer token file shared by the daemons of ``root``."""
    port = free_port()
    home = Home(root / name, extra_env={"SOUPD_TEST_DSN": dsn})
    home.write_config(
        f'[log]\nlevel = "info"\n[http]\nport = {port}\ntoken_file = "{root / "http.token"}"\n'
        '[store]\nbackend = "postgres"\ndsn_env = "SOUPD_TEST_DSN"\n'
        f'advertise = "http://127.0.0.1:{port}"\n'
    )
    # Every daemon configures the souls; their memory is the database's, not any one's.
    for each in souls:
        home.add_soul(each, soul)
    return home
