"""The connection, against the real daemon: subscribe streams what a push causes,
timeouts, and reconnecting (after a restart; on a break, only what is safe to repeat)."""

from __future__ import annotations

import os
import signal
import threading
import time
from typing import Any

import anyio
import pytest
from e2e.harness import Daemon, Home, StartSoupd

import soupd

from .conftest import soupd_async, soupd_client


def test_subscribe_yields_what_a_push_causes(daemon: Daemon) -> None:
    with (
        soupd_client(daemon) as client,
        client.subscribe(["alpha"], kinds=["reflect"], timeout=15) as outputs,
    ):
        # The first event of a soul is all surprise: it reflects at once.
        pushed = client.push("alpha", "the deploy failed on a migration timeout")
        assert pushed.reflected
        output = next(outputs)
    assert isinstance(output, soupd.Output)
    assert (output.soul, output.kind, output.payload["reason"]) == ("alpha", "reflect", "surprise")


async def test_async_subscribe_yields_what_a_push_causes(daemon: Daemon) -> None:
    async with (
        soupd_async(daemon) as client,
        client.subscribe(["beta"], kinds=["reflect"], timeout=15) as outputs,
    ):
        await client.push("alpha", "nobody listens to alpha here")
        await client.push("beta", "quantum chromodynamics lecture notes")
        output = await anext(outputs)
    assert (output.soul, output.kind) == ("beta", "reflect")


def test_subscribing_to_an_unknown_soul_fails(daemon: Daemon) -> None:
    client = soupd_client(daemon)
    with pytest.raises(soupd.UnknownSoul), client.subscribe(["nobody"], timeout=15):
        pass


async def test_an_unknown_output_kind_is_refused_by_both_clients(daemon: Daemon) -> None:
    said = "unknown output kind 'reflects'; the kinds are " + ", ".join(soupd.OUTPUT_KINDS)
    sync = soupd_client(daemon)
    with pytest.raises(soupd.InvalidParams, match=said), sync.subscribe(["alpha"], ["reflects"]):
        pass
    async with soupd_async(daemon) as client:
        with pytest.raises(soupd.InvalidParams, match=said):
            async with client.subscribe(["alpha"], kinds=["reflect", "reflects"], timeout=15):
                pass
        # Every kind of the list is one the daemon takes.
        async with client.subscribe(["alpha"], kinds=list(soupd.OUTPUT_KINDS), timeout=15):
            pass
    assert daemon.result("daemon.status")["subscribers"] == 0


def test_a_call_past_its_timeout_raises_and_the_next_one_works(daemon: Daemon) -> None:
    with soupd_client(daemon, timeout=15) as client:
        client.push("alpha", "before the pause")
        os.kill(daemon.pid, signal.SIGSTOP)  # the daemon hears nothing while stopped
        try:
            started = time.monotonic()
            with pytest.raises(soupd.ClientTimeout) as raised:
                client.recall("alpha", "pause", timeout=0.5)
            waited = time.monotonic() - started
        finally:
            os.kill(daemon.pid, signal.SIGCONT)
        assert isinstance(raised.value, TimeoutError)
        assert 0.5 <= waited < 5
        # The timed-out connection was dropped: its late reply is never taken for this one.
        assert [hit.text for hit in client.recall("alpha", "pause")] == ["before the pause"]


async def test_async_call_past_its_timeout_raises_and_leaves_the_connection(
    daemon: Daemon,
) -> None:
    async with soupd_async(daemon, timeout=0.5) as client:
        os.kill(daemon.pid, signal.SIGSTOP)
        try:
            with pytest.raises(soupd.ClientTimeout):
                await client.souls()
        finally:
            os.kill(daemon.pid, signal.SIGCONT)
        # The same connection: the late reply to the call that gave up is dropped,
        # never taken for this one (ids differ).
        assert [s.name for s in await client.souls(timeout=15)] == ["alpha", "beta"]
        assert client.statistics() == soupd.ClientStatistics(in_flight=0, reconnects=0)


async def test_async_calls_of_many_tasks_are_pipelined_on_one_connection(
    daemon: Daemon,
) -> None:
    words = ["zebra", "walrus", "heron", "marmot", "ibis"]
    pushed: dict[str, soupd.PushResult] = {}
    async with soupd_async(daemon, timeout=30) as client:

        async def push(word: str) -> None:
            pushed[word] = await client.push("alpha", f"a note on the {word}", ref=word)

        os.kill(daemon.pid, signal.SIGSTOP)
        try:
            async with anyio.create_task_group() as tasks:
                for word in words:
                    tasks.start_soon(push, word)
                with anyio.fail_after(10):
                    # All five are out together, none answered: nobody waits its turn.
                    while client.statistics().in_flight < len(words):  # noqa: ASYNC110
                        await anyio.sleep(0.01)
                os.kill(daemon.pid, signal.SIGCONT)
        finally:
            os.kill(daemon.pid, signal.SIGCONT)
        assert sorted(result.event_id or 0 for result in pushed.values()) == [1, 2, 3, 4, 5]
        for word in words:
            (hit,) = await client.recall("alpha", word)
            assert (hit.text, hit.refs) == (f"a note on the {word}", [word])
        assert client.statistics() == soupd.ClientStatistics(in_flight=0, reconnects=0)


def test_both_clients_reconnect_after_the_daemon_restarts(
    daemon: Daemon, start_soupd: StartSoupd
) -> None:
    sync = soupd_client(daemon)
    sync.push("alpha", "said before the restart", ref="r-1")

    async def connect() -> soupd.AsyncClient:
        client = soupd_async(daemon)
        await client.__aenter__()
        return client

    with anyio.from_thread.start_blocking_portal() as portal:
        asynchronous = portal.call(connect)
        assert daemon.stop() == 0
        again = start_soupd()
        # Not a read: a claim is sent once only, so the client must see the old
        # connection is gone before it sends (it does: the daemon closed it).
        assert sync.add_claim("alpha", "prefers tea").claim is not None
        assert portal.call(asynchronous.add_claim, "alpha", "likes jazz").claim is not None
        assert [h.text for h in portal.call(asynchronous.recall, "alpha", "restart")] == [
            "said before the restart"
        ]
        assert (sync.reconnects, asynchronous.reconnects) == (1, 1)
        portal.call(asynchronous.aclose)
    sync.close()
    assert again.proc.poll() is None


def test_a_connection_closed_for_idling_is_replaced_before_the_next_call(
    soupd_home: Home, start_soupd: StartSoupd
) -> None:
    soupd_home.write_config("[socket]\nidle_timeout = 0.5\n")
    daemon = start_soupd()
    with soupd_client(daemon) as sync:
        asynchronous = soupd_async(daemon)

        async def claim_after_idling() -> soupd.ClaimChange:
            async with asynchronous:
                await anyio.sleep(1.5)  # the daemon says idle_timeout and closes
                return await asynchronous.add_claim("default", "likes jazz")

        time.sleep(1.5)
        # A claim is never sent twice: it goes out only on a connection known to be good.
        assert sync.add_claim("default", "prefers tea").claim is not None
        assert anyio.run(claim_after_idling).claim is not None
        assert sync.statistics().reconnects == 1
        assert asynchronous.statistics().reconnects == 1
        values = {claim.value for claim in sync.claims("default").claims}
    assert values == {"prefers tea", "likes jazz"}


def test_a_broken_call_is_sent_again_only_when_that_is_safe(daemon: Daemon) -> None:
    """The daemon dies with four requests unanswered: the two safe to repeat (a recall,
    a push with a ref) are sent again (and find no daemon), the two that are not (a
    claim, a push without a ref) are reported lost, never repeated."""
    calls: dict[str, Any] = {
        "recall": lambda c: c.recall("alpha", "x"),
        "push with ref": lambda c: c.push("alpha", "x", ref="once"),
        "claim": lambda c: c.add_claim("alpha", "x"),
        "push": lambda c: c.push("alpha", "x"),
    }
    clients = {name: soupd_client(daemon, timeout=30).__enter__() for name in calls}
    raised: dict[str, BaseException] = {}

    def run(name: str) -> None:
        try:
            calls[name](clients[name])
        except soupd.SoupdError as exc:
            raised[name] = exc

    os.kill(daemon.pid, signal.SIGSTOP)
    threads = [threading.Thread(target=run, args=(name,)) for name in calls]
    for thread in threads:
        thread.start()
    time.sleep(0.5)  # every request is in the daemon's socket buffer, unread
    os.kill(daemon.pid, signal.SIGKILL)
    os.kill(daemon.pid, signal.SIGCONT)
    daemon.proc.wait(15)
    for thread in threads:
        thread.join(15)
    # Sent again: each tried a new connection (and found no daemon; or, in the moment
    # the dying daemon's listening socket outlives the connection, one that broke too).
    assert {name: client.statistics().reconnects for name, client in clients.items()} == {
        "recall": 1,
        "push with ref": 1,
        "claim": 0,
        "push": 0,
    }
    assert isinstance(raised["recall"], soupd.DaemonNotRunning | soupd.ConnectionLost)
    assert isinstance(raised["push with ref"], soupd.DaemonNotRunning | soupd.ConnectionLost)
    assert type(raised["claim"]) is soupd.ConnectionLost
    assert type(raised["push"]) is soupd.ConnectionLost
    assert "may or may not have been carried out" in str(raised["claim"])
    for client in clients.values():
        client.close()


async def test_async_broken_calls_on_one_connection_are_sent_again_only_when_safe(
    daemon: Daemon,
) -> None:
    """The same four calls pipelined on one AsyncClient when the daemon dies."""
    raised: dict[str, type[BaseException]] = {}
    async with soupd_async(daemon, timeout=30) as client:
        calls: dict[str, Any] = {
            "recall": lambda: client.recall("alpha", "x"),
            "push with ref": lambda: client.push("alpha", "x", ref="once"),
            "claim": lambda: client.add_claim("alpha", "x"),
            "push": lambda: client.push("alpha", "x"),
        }

        async def run(name: str) -> None:
            try:
                await calls[name]()
            except soupd.SoupdError as exc:
                raised[name] = type(exc)

        os.kill(daemon.pid, signal.SIGSTOP)
        async with anyio.create_task_group() as tasks:
            for name in calls:
                tasks.start_soon(run, name)
            with anyio.fail_after(10):
                while client.statistics().in_flight < len(calls):  # noqa: ASYNC110
                    await anyio.sleep(0.01)
            os.kill(daemon.pid, signal.SIGKILL)
            os.kill(daemon.pid, signal.SIGCONT)
        reconnects = client.statistics().reconnects
    daemon.proc.wait(15)
    assert reconnects == 2  # the recall and the push with a ref, each sent again once
    assert raised["recall"] in (soupd.DaemonNotRunning, soupd.ConnectionLost)
    assert raised["push with ref"] in (soupd.DaemonNotRunning, soupd.ConnectionLost)
    assert (raised["claim"], raised["push"]) == (soupd.ConnectionLost, soupd.ConnectionLost)


def test_no_daemon_is_daemon_not_running(daemon: Daemon) -> None:
    path = daemon.home.runtime / "nobody.sock"
    with pytest.raises(soupd.DaemonNotRunning, match="not running"):
        soupd.Client(path).souls()
