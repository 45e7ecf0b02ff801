"""A throw-away PostgreSQL server for the benchmarks that need one, started as the
tests start theirs (tests/pgserver.py: Debian's postgresql binaries, initdb into a
temporary folder, loopback only), stopped at the end, a SIGTERM included."""

from __future__ import annotations

import signal
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")

__all__ = ["on_throwaway_server"]


def on_throwaway_server(run: Callable[[str], T]) -> T:
    """``run(dsn)`` on a fresh server; exits saying why when there is none (then give
    the benchmark a ``--dsn``)."""
    sys.path.append(str(Path(__file__).resolve().parent.parent / "tests"))
    from pgserver import PgServer, missing

    why = missing()
    if why is not None:
        sys.exit(f"no PostgreSQL: {why} (or give --dsn)")
    # A SIGTERM (timeout, Ctrl-C in a pipeline) still stops the server: via SystemExit.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    server = PgServer.start()
    try:
        return run(server.dsn)
    finally:
        server.stop()
