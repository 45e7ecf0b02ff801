"""Fixtures of the client tests: a real daemon (``tests/conftest.py``) and, for the
tests that hold both clients to the same behaviour, ``client``: a :class:`soupd.Client`,
or a :class:`soupd.AsyncClient` driven from this thread through an anyio blocking
portal (its calls run on an event loop of their own; the test reads the same)."""

from __future__ import annotations

import functools
from collections.abc import Iterator
from typing import Any

import anyio.from_thread
import pytest
from e2e.harness import Daemon

import soupd


class Portalled:
    """An AsyncClient whose methods are called from synchronous test code."""

    def __init__(self, client: soupd.AsyncClient, portal: anyio.from_thread.BlockingPortal):
        self.inner, self._portal = client, portal

    def __getattr__(self, name: str) -> Any:
        method = getattr(self.inner, name)
        if not callable(method):
            return method

        def call(*args: Any, **kwargs: Any) -> Any:
            return self._portal.call(functools.partial(method, *args, **kwargs))

        return call


@pytest.fixture
def daemon(soupd: Daemon) -> Daemon:
    """The ``soupd`` fixture's daemon, by a name that leaves ``soupd`` to the package."""
    return soupd


@pytest.fixture(params=["sync", "async"])
def client(request: pytest.FixtureRequest, daemon: Daemon) -> Iterator[Any]:
    """A client of ``daemon`` (souls alpha and beta)."""
    if request.param == "sync":
        with soupd_client(daemon) as sync:
            yield sync
        return
    with anyio.from_thread.start_blocking_portal() as portal:
        inner = soupd_async(daemon)
        portal.call(inner.__aenter__)
        try:
            yield Portalled(inner, portal)
        finally:
            portal.call(inner.aclose)


def soupd_client(daemon: Daemon, **options: Any) -> soupd.Client:
    return soupd.Client(daemon.home.socket, **options)


def soupd_async(daemon: Daemon, **options: Any) -> soupd.AsyncClient:
    return soupd.AsyncClient(daemon.home.socket, **options)
