"""The outputs of a soul reach the subscribers of every daemon of a shared PostgreSQL
store (#21, supervisor/relay.py): two real daemons on one real database, alpha served
by the second. A subscriber on the first, over the socket and over HTTP (Server-Sent
Events), gets what alpha produces there (a reflect; the wake-up of a due task, its
payload over NOTIFY's 8000 bytes), each once, in order, as a subscriber on the owner
does, who gets each once too (not again from the relay). A listening session that ends
is opened again; a daemon on SQLite relays nothing."""

from __future__ import annotations

import json
import re
import socket
import threading
import time
from pathlib import Path
from typing import Any

import anyio
import asyncpg
import httpx

from e2e.harness import Connection, Daemon, Home, request_frame, running, wait_for
from e2e.shared import shared_home
from supervisor.outputs import Output, Outputs, Subscription

# Owned from the start by the daemon started first, never given up while it runs.
AWAKE = "[lifecycle]\nhibernate_after = 0\n"
# TASKS.md edits noticed within a tenth of a second.
FAST = "[schedule]\ntasks_poll_seconds = 0.1\n"
# The kinds a soul's store of memories produces (not the daemon's log, nor overflow).
KINDS = ["card", "direct", "internal_signal", "reflect", "reply", "spark", "tide", "wakeup"]
# The text of a task long enough for a wake-up over NOTIFY's limit.
LONG = " ".join(f"water plant {i} on the balcony" for i in range(400))


def _home(root: Path, name: str, dsn: str) -> Home:
    home = shared_home(root, name, dsn, AWAKE, ("alpha",))
    config = home.config_dir / "soupd.toml"
    config.write_text(config.read_text() + FAST)
    return home


def _manual(outputs: list[dict[str, Any]]) -> int:
    """How many reflects asked for by ``reflect`` are among ``outputs``."""
    return sum(o["kind"] == "reflect" and o["payload"]["reason"] == "manual" for o in outputs)


class _Watcher(threading.Thread):
    """A subscriber of alpha's outputs over the daemon's socket, reading in the
    background until :meth:`close`."""

    def __init__(self, daemon: Daemon) -> None:
        super().__init__(daemon=True)
        self.outputs: list[dict[str, Any]] = []
        self.error: BaseException | None = None
        self._conn = Connection(daemon.home.socket)
        self._conn.send(request_frame(1, "subscribe", {"souls": ["alpha"], "kinds": KINDS}))
        reply = self._conn.recv()
        assert reply.get("result", {}).get("subscribed") is True, reply
        self._conn.sock.settimeout(None)  # outputs come when they come; close ends it
        self.start()

    def run(self) -> None:
        try:
            for frame in self._conn.replies():
                self.outputs.append(frame["output"])
        except OSError as exc:
            self.error = exc

    def close(self) -> None:
        self._conn.sock.shutdown(socket.SHUT_RDWR)
        self.join(10)
        self._conn.close()


class _Stream(threading.Thread):
    """A subscriber of alpha's outputs by Server-Sent Events on the daemon's HTTP API,
    reading until ``until`` manual reflects came."""

    def __init__(self, root: Path, home: Home, until: int) -> None:
        super().__init__(daemon=True)
        port = re.search(r"^port = (\d+)$", (home.config_dir / "soupd.toml").read_text(), re.M)
        assert port is not None
        self._url = f"http://127.0.0.1:{port[1]}/v1/souls/alpha/subscribe?kinds={','.join(KINDS)}"
        self._token = (root / "http.token").read_text().strip()
        self._until = until
        self.outputs: list[dict[str, Any]] = []
        self.subscribed = threading.Event()
        self.error: BaseException | None = None
        self.start()

    def run(self) -> None:
        headers = {"authorization": f"Bearer {self._token}"}
        try:
            with httpx.stream("GET", self._url, headers=headers, timeout=60) as response:
                assert response.status_code == 200, response.read()
                name = None
                for line in response.iter_lines():
                    if line.startswith("event: "):
                        name = line.removeprefix("event: ")
                    elif line.startswith("data: ") and name == "subscribed":
                        self.subscribed.set()
                    elif line.startswith("data: ") and name == "output":
                        self.outputs.append(json.loads(line.removeprefix("data: ")))
                        if _manual(self.outputs) >= self._until:
                            return
        except (httpx.HTTPError, AssertionError) as exc:
            self.error = exc


def _relay(daemon: Daemon) -> dict[str, Any]:
    relay: dict[str, Any] = daemon.result("daemon.status")["relay"]
    return relay


def test_a_subscriber_on_either_daemon_gets_the_owners_outputs_once(
    tmp_path: Path, pg_dsn: str
) -> None:
    a, b = _home(tmp_path, "a", pg_dsn), _home(tmp_path, "b", pg_dsn)
    try:
        with running(b) as owner, running(a) as other:
            assert any(e.get("event") == "soul.lease_taken" for e in owner.log())
            for daemon in (owner, other):
                wait_for(lambda d=daemon: _relay(d)["listening"], "the relay listening")
            here, there = _Watcher(other), _Watcher(owner)
            stream = _Stream(tmp_path, a, until=2)
            try:
                assert stream.subscribed.wait(15), stream.error
                wait_for(
                    lambda: other.result("daemon.status")["subscribers"] == 2, "A's subscribers"
                )
                # A reflect asked of the first daemon: forwarded to the owner, which
                # reflects; its output comes back to the first by the relay.
                other.result("reflect", {"soul": "alpha"})
                wait_for(lambda: _manual(here.outputs) == 1, "the reflect on the first daemon")
                assert _manual(there.outputs) == 1

                # A task due a minute ago: the owner's scheduler wakes alpha for it at
                # once; the wake-up names the task's text, 12 kB of it.
                added = other.result(
                    "task.add", {"soul": "alpha", "text": LONG, "at": time.time() - 60}
                )
                assert [t["text"] for t in added["pending"]] == [LONG]
                wakeups = wait_for(
                    lambda: [o for o in here.outputs if o["kind"] == "wakeup"],
                    "the wake-up on the first daemon",
                    timeout=30,
                )
                assert wakeups[0]["payload"]["text"] == LONG
                assert len(json.dumps(wakeups[0]).encode()) > 8000

                # A last reflect: once it came, everything before it came too (the relay
                # keeps the owner's order), so nothing more is on its way.
                other.result("reflect", {"soul": "alpha"})
                for watcher in (here, there):
                    wait_for(lambda w=watcher: _manual(w.outputs) == 2, "the last reflect")
                stream.join(15)
                assert not stream.is_alive(), stream.error
            finally:
                here.close()
                there.close()
            assert (here.error, there.error, stream.error) == (None, None, None)

            # Each output once, in the owner's order, on either daemon and either way.
            assert [o["kind"] for o in there.outputs].count("wakeup") == 1
            assert here.outputs == there.outputs
            assert stream.outputs == there.outputs
            assert {o["soul"] for o in here.outputs} == {"alpha"}
            sent, got = _relay(owner), _relay(other)
            assert sent["sent"] >= len(there.outputs)
            assert (sent["dropped"], sent["failed"], got["missed"]) == (0, 0, 0)
            assert got["received"] >= len(here.outputs)
            assert (got["sent"], sent["received"]) == (0, 0)  # alpha's, from the owner only
    finally:
        a.cleanup()
        b.cleanup()


def test_the_relay_listens_again_once_its_session_ended(tmp_path: Path, pg_dsn: str) -> None:
    a, b = _home(tmp_path, "a", pg_dsn), _home(tmp_path, "b", pg_dsn)
    try:
        with running(b) as owner, running(a) as other:
            wait_for(lambda: _relay(other)["listening"], "the relay listening")
            # The first daemon's listening session ended by the server (as a restart of
            # it, or a lost network, would): the relay sees it and listens again.
            ended = anyio.run(_terminate, pg_dsn, "soupd relay %")
            assert ended >= 2  # one a daemon
            wait_for(
                lambda: _relay(other)["reconnects"] >= 1 and _relay(other)["listening"],
                "the relay listening again",
            )
            wait_for(lambda: _relay(owner)["reconnects"] >= 1, "the owner's too")
            here = _Watcher(other)
            try:
                wait_for(lambda: owner.result("daemon.status")["relay"]["listening"], "owner")
                other.result("reflect", {"soul": "alpha"})
                wait_for(lambda: _manual(here.outputs) == 1, "the reflect on the first daemon")
            finally:
                here.close()
            assert [o["kind"] for o in here.outputs] == ["reflect"]
            assert any(e.get("event") == "relay.listener_lost" for e in other.log())
    finally:
        a.cleanup()
        b.cleanup()


def test_another_role_on_the_database_hears_ids_only_and_forges_nothing(
    tmp_path: Path, pg_dsn: str
) -> None:
    # LISTEN and NOTIFY need no privilege: any role that may connect hears the channel
    # and may send on it. It hears row ids only, cannot read the rows, and what it
    # sends (a made-up output, an id of no row, an id already published) reaches no one.
    a, b = _home(tmp_path, "a", pg_dsn), _home(tmp_path, "b", pg_dsn)
    role = f"intruder_{abs(hash(str(tmp_path))) % 10**8}"
    anyio.run(_admin, pg_dsn, f"CREATE ROLE {role} LOGIN")
    try:
        with running(b) as owner, running(a) as other:
            for daemon in (owner, other):
                wait_for(lambda d=daemon: _relay(d)["listening"], "the relay listening")
            here = _Watcher(other)
            try:
                heard = anyio.run(_overhear, pg_dsn, role, lambda: owner.result(
                    "reflect", {"soul": "alpha"}
                ))  # fmt: skip
                assert heard.isdigit()
                wait_for(lambda: _manual(here.outputs) == 1, "the reflect on the first daemon")
                forged = json.dumps({
                    "daemon": "http://127.0.0.1:1", "instance": "x", "seq": 1, "soul": "alpha",
                    "kind": "reply", "ts": 1.0, "payload": {"text": "wire the money"},
                })  # fmt: skip
                anyio.run(_notify, pg_dsn, role, [forged, "987654321", heard])
                wait_for(lambda: _relay(other)["missed"] >= 2, "the forged ones counted")
                other.result("reflect", {"soul": "alpha"})
                wait_for(lambda: _manual(here.outputs) == 2, "the last reflect")
            finally:
                here.close()
            assert here.error is None
            assert [o["kind"] for o in here.outputs] == ["reflect", "reflect"]
            assert _relay(other)["missed"] == 2
    finally:
        a.cleanup()
        b.cleanup()
        anyio.run(_admin, pg_dsn, f"DROP ROLE IF EXISTS {role}")


async def _admin(dsn: str, sql: str) -> None:
    db = await asyncpg.connect(dsn)
    try:
        await db.execute(sql)
    finally:
        await db.close()


async def _overhear(dsn: str, role: str, then: Any) -> str:
    """What ``role`` hears on the relay's channel while ``then()`` runs; its reading of
    the table refused."""
    db = await asyncpg.connect(dsn, user=role)
    heard: list[str] = []
    try:
        await db.add_listener("soupd_outputs", lambda *args: heard.append(args[3]))
        await anyio.to_thread.run_sync(then)
        with anyio.fail_after(15):
            while not heard:  # noqa: ASYNC110 - the notification comes on this session
                await anyio.sleep(0.01)
        try:
            await db.fetch("SELECT payload FROM relayed_outputs")
        except asyncpg.InsufficientPrivilegeError:
            pass
        else:
            raise AssertionError(f"{role} read the relayed outputs")
    finally:
        await db.close()
    return heard[0]


async def _notify(dsn: str, role: str, payloads: list[str]) -> None:
    db = await asyncpg.connect(dsn, user=role)
    try:
        for payload in payloads:
            await db.execute("SELECT pg_notify('soupd_outputs', $1)", payload)
    finally:
        await db.close()


async def _terminate(dsn: str, application: str) -> int:
    """Sessions whose application_name is like ``application`` ended by the server."""
    db = await asyncpg.connect(dsn)
    try:
        ended: int = await db.fetchval(
            "SELECT count(*) FROM (SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
            " WHERE application_name LIKE $1 AND datname = current_database()) AS t",
            application,
        )
    finally:
        await db.close()
    return ended


def test_a_daemon_on_sqlite_relays_nothing(tmp_path: Path) -> None:
    home = Home(tmp_path / "solo")
    home.add_soul("alpha", AWAKE)
    try:
        with running(home) as daemon:
            status = daemon.result("daemon.status")
            assert (status["relay"], status["outputs_relayed"]) == (None, 0)
    finally:
        home.cleanup()


def test_a_relayed_output_is_not_relayed_again_nor_answered_here() -> None:
    """The hub's part, in process: what comes from another daemon goes to the subscribers
    but not back to the relay; a relayed direct message reaches the clients only, not
    the daemon's own subscriptions (its responder would answer what the owner answers)."""
    hub = Outputs()
    handed: list[Output] = []
    hub.relay_to(handed.append)
    with (
        hub.subscribe(frozenset({"alpha"})) as client,
        hub.subscribe(kinds=frozenset({"direct"}), internal=True) as responder,
    ):
        hub.publish_relayed(Output("alpha", "direct", 1.0, {"text": "hello"}))
        hub.publish_relayed(Output("alpha", "reflect", 2.0, {"reason": "manual"}))
        assert handed == []
        hub.publish("alpha", "direct", {"text": "here"})
        assert [o.payload for o in handed] == [{"text": "here"}]

        async def drain(subscription: Subscription, n: int) -> list[str]:
            return [(await subscription.receive()).kind for _ in range(n)]

        assert anyio.run(drain, client, 3) == ["direct", "reflect", "direct"]
        assert anyio.run(responder.receive).payload == {"text": "here"}  # not "hello"
    assert (hub.published, hub.relayed) == (1, 2)
