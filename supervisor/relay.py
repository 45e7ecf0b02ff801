"""The outputs relay of a shared PostgreSQL store (issue #21): every daemon of one store
sees every soul's outputs, whichever daemon serves the soul.

A soul publishes its outputs into the hub of the daemon that serves it
(:mod:`supervisor.outputs`); a client subscribed on another daemon, and that daemon's
channels, would never see them. So each daemon sends every output of its souls to the
others by PostgreSQL's LISTEN/NOTIFY, on the one channel :data:`CHANNEL`, and publishes
into its own hub what the others sent (:meth:`supervisor.outputs.Outputs.publish_relayed`,
which never relays again).

* What goes out: every kind but ``log`` (a daemon's own log lines) and ``overflow``
  (a subscription's own report) — :data:`RELAYED_KINDS`. A notification names the
  daemon (its advertised address and this run's instance id), the soul, the kind, the
  time and the payload.
* Every output is kept in the ``relayed_outputs`` table, inserted by the statement that
  notifies, and the notification names its row only: listeners read the row. LISTEN
  and NOTIFY need no privilege, so any role that may connect to the database hears the
  channel and may send on it; the rows are the soupd role's (nobody else may read or
  write them), so a notification tells nobody what was said, and one forged only names
  a row that exists (read once: each row is published once) or none (counted missed).
  (And a payload of NOTIFY must be under 8000 bytes, an output may be larger.) Rows
  older than :data:`KEEP_SECONDS` are deleted, every :data:`SWEEP_SECONDS`, by every
  daemon.
* Publishing never waits: :meth:`Relay.offer` (the hub's hook, synchronous) puts the
  notification in a queue bounded by count and by bytes (:data:`QUEUE_COUNT`,
  :data:`QUEUE_BYTES`), which one task of the relay drains through the pool; when it is
  full, the output is dropped for the other daemons (still published here) and counted.
  While the store is out of reach the drain retries, with backoff.
* Listening takes a session of its own (neither the pool's nor the lease session),
  watched, and opened again with backoff when it ends. What was sent meanwhile is not
  seen (NOTIFY keeps nothing for a session that is not there): a gap, logged
  (``relay.listener_lost``), never a duplicate. A daemon skips its own notifications.

Counters (``daemon.status`` → ``relay``): sent (each kept in the table), failed (refused
by the server: dropped), dropped (the queue full), received, missed (a notification
that could not be read, or the listener falling behind), queued and queued_bytes,
listening, reconnects. On a daemon with SQLite nothing of this runs.
"""

from __future__ import annotations

import uuid
from collections import OrderedDict
from typing import TYPE_CHECKING, Any

import anyio
import anyio.abc
import asyncpg
import msgspec
import structlog
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from supervisor.output_kinds import OUTPUT_KINDS
from supervisor.outputs import Output, Outputs

if TYPE_CHECKING:
    from supervisor.shared import SharedStore

__all__ = [
    "CHANNEL",
    "KEEP_SECONDS",
    "QUEUE_BYTES",
    "QUEUE_COUNT",
    "RELAYED_KINDS",
    "Relay",
]

# The LISTEN/NOTIFY channel of every daemon of the store.
CHANNEL = "soupd_outputs"
# The kinds that go to the other daemons.
RELAYED_KINDS = frozenset(OUTPUT_KINDS) - {"log", "overflow"}
# Seconds a large output's row is kept for the listeners; how often old rows go.
KEEP_SECONDS = 600.0
SWEEP_SECONDS = 60.0
# The queue of outputs to send: at most so many, and so many bytes of them.
QUEUE_COUNT = 1024
QUEUE_BYTES = 8 * 1024 * 1024
# Notifications heard and not yet published here (each under 8000 bytes).
HEARD_COUNT = 1024
# Seconds between looks at an idle listening session; a look's bound.
PROBE = 1.0
_PROBE_TIMEOUT = 5.0
# Seconds one send may take (the pool's connection included) before it is tried again.
_SEND_TIMEOUT = 10.0
# Instances of other daemons whose last notification is remembered; rows published here.
_INSTANCES = 256
_ROWS = 4096
# Backoff of the reconnections and retries, in seconds.
_BACKOFF_FIRST = 0.5
_BACKOFF_MAX = 30.0

# What a session that is gone, or a server out of reach, raises: a send is tried again.
# (OperatorInterventionError: the server shutting down or starting, a statement
# cancelled.)
_GONE = (
    OSError,
    TimeoutError,
    asyncpg.PostgresConnectionError,
    asyncpg.OperatorInterventionError,
    asyncpg.InterfaceError,
    asyncpg.InternalClientError,
    # and the pool failing to open a connection: a password refused (being rotated),
    # the server's connections all taken
    asyncpg.InvalidAuthorizationSpecificationError,
    asyncpg.InsufficientResourcesError,
)
# What else the server may answer a statement with: that output is dropped. Opening or
# using the listening session, whatever fails is tried again (a password refused now
# may be rotated into the DSN file later; the relay never brings the daemon down).
_REFUSED = asyncpg.PostgresError
_UNLISTENED = (*_GONE, _REFUSED, ValueError)

# The output kept in the table and its row named, in one statement: the notification
# goes out (at the commit) only with the row in place.
_STORE_AND_NOTIFY = """
    WITH kept AS (
        INSERT INTO relayed_outputs (soul, payload)
        SELECT id, $2 FROM souls WHERE name = $1
        RETURNING id
    )
    SELECT pg_notify($3, kept.id::text) FROM kept
"""
_SWEEP = "DELETE FROM relayed_outputs WHERE at < now() - make_interval(secs => $1)"
_READ = "SELECT payload FROM relayed_outputs WHERE id = $1"


class _Note(msgspec.Struct, frozen=True):
    """A kept output (a row's payload): an output of ``soul``, sent by the daemon
    advertised at ``daemon`` (``instance``: its run)."""

    daemon: str
    instance: str
    seq: int  # of the instance's outputs sent, counting from 1
    soul: str
    kind: str
    ts: float
    payload: dict[str, Any]


class _Outgoing(msgspec.Struct, frozen=True):
    note: _Note
    text: str  # the note, encoded
    size: int  # its bytes


_encoder = msgspec.json.Encoder()
_decoder = msgspec.json.Decoder(_Note)


class Relay:
    """One daemon's part of the relay: :meth:`offer` is the hub's hook, :meth:`run` the
    child of the daemon's tree that sends and listens."""

    def __init__(self, store: SharedStore, outputs: Outputs) -> None:
        self._store = store
        self._outputs = outputs
        self.address = store.address
        self.instance = uuid.uuid4().hex
        send: MemoryObjectSendStream[_Outgoing]
        receive: MemoryObjectReceiveStream[_Outgoing]
        send, receive = anyio.create_memory_object_stream(QUEUE_COUNT)
        self._queue, self._queued = send, receive
        heard_send: MemoryObjectSendStream[str]
        heard_receive: MemoryObjectReceiveStream[str]
        heard_send, heard_receive = anyio.create_memory_object_stream(HEARD_COUNT)
        self._heard, self._hearing = heard_send, heard_receive
        self._log = structlog.get_logger("soupd.relay").bind(daemon=self.address)
        self._full = False  # the queue refused an output since it last had room
        self._seq = 0
        # The last output published here of each instance of the other daemons (a send
        # tried again after its answer was lost may be kept twice: the second is left),
        # and the rows read lately (a row named again, by a forged notification, is not).
        self._last: OrderedDict[str, int] = OrderedDict()
        self._rows: OrderedDict[int, None] = OrderedDict()
        self.queued_bytes = 0
        self.sent = 0
        self.failed = 0
        self.dropped = 0
        self.received = 0
        self.missed = 0
        self.reconnects = 0
        self.listening = False

    # -- sending ----------------------------------------------------------------------

    def offer(self, output: Output) -> None:
        """Queue ``output`` for the other daemons, without waiting (the hub's hook): a
        kind not relayed is left; when the queue is full it is dropped and counted."""
        if output.kind not in RELAYED_KINDS:
            return
        self._seq += 1
        note = _Note(
            self.address,
            self.instance,
            self._seq,
            output.soul,
            output.kind,
            output.ts,
            output.payload,
        )
        try:
            encoded = _encoder.encode(note)
        except (TypeError, ValueError, OverflowError) as exc:
            self.dropped += 1
            self._log.warning(
                "relay.unencodable", soul=output.soul, kind=output.kind, problem=str(exc)
            )
            return
        size = len(encoded)
        if self.queued_bytes + size > QUEUE_BYTES:
            self._drop(output, size)
            return
        try:
            self._queue.send_nowait(_Outgoing(note, encoded.decode(), size))
        except anyio.WouldBlock:
            self._drop(output, size)
            return
        self.queued_bytes += size

    def _drop(self, output: Output, size: int) -> None:
        self.dropped += 1
        if not self._full:  # once until the queue has room again, not once an output
            self._full = True
            self._log.warning(
                "relay.queue_full",
                soul=output.soul,
                kind=output.kind,
                bytes=size,
                queued=self._queued.statistics().current_buffer_used,
                queued_bytes=self.queued_bytes,
                dropped=self.dropped,
            )

    async def _drain(self) -> None:
        """Send the queued outputs, in order, one at a time."""
        while True:
            item = await self._queued.receive()
            self.queued_bytes -= item.size
            self._full = False
            delay = _BACKOFF_FIRST
            while True:
                try:
                    await self._send(item)
                except _GONE as exc:
                    self._log.warning(
                        "relay.send_failed",
                        soul=item.note.soul,
                        kind=item.note.kind,
                        problem=self._store.problem(exc),
                        retry_in=delay,
                    )
                    await anyio.sleep(delay)
                    delay = min(2 * delay, _BACKOFF_MAX)
                    continue
                except _REFUSED as exc:
                    self.failed += 1
                    self._log.error(
                        "relay.send_refused",
                        soul=item.note.soul,
                        kind=item.note.kind,
                        bytes=item.size,
                        problem=self._store.problem(exc),
                    )
                break

    async def _send(self, item: _Outgoing) -> None:
        note = item.note
        with anyio.fail_after(_SEND_TIMEOUT):
            async with self._store.pool.acquire() as db:
                done = await db.execute(_STORE_AND_NOTIFY, note.soul, item.text, CHANNEL)
        if done == "SELECT 0":  # no row in souls: not a soul of the store
            self.failed += 1
            self._log.error("relay.soul_unknown", soul=note.soul, kind=note.kind)
            return
        self.sent += 1

    async def _sweeping(self) -> None:
        """Every :data:`SWEEP_SECONDS`, delete the kept outputs older than
        :data:`KEEP_SECONDS` (the other daemons' too: whichever comes first)."""
        while True:
            await anyio.sleep(SWEEP_SECONDS)
            try:
                with anyio.fail_after(_SEND_TIMEOUT):
                    async with self._store.pool.acquire() as db:
                        await db.execute(_SWEEP, KEEP_SECONDS)
            except (*_GONE, _REFUSED) as exc:
                self._log.warning("relay.sweep_failed", problem=self._store.problem(exc))

    # -- listening --------------------------------------------------------------------

    async def run(
        self, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED
    ) -> None:
        """Send and listen until cancelled; started once the first try to listen is
        done (listening or not: it is tried again in the background)."""
        async with anyio.create_task_group() as tg:
            tg.start_soon(self._drain)
            tg.start_soon(self._sweeping)
            await self._listen(task_status)

    async def _listen(self, task_status: anyio.abc.TaskStatus[None]) -> None:
        """Listen on a session of the relay's own, opened again with backoff whenever it
        fails to open or ends."""
        delay = _BACKOFF_FIRST
        status: anyio.abc.TaskStatus[None] | None = task_status
        while True:
            listened = False
            try:
                db = await self._store.connect(f"soupd relay {self.address}")
            except _UNLISTENED as exc:
                self._log.error(
                    "relay.listen_failed", problem=self._store.problem(exc), retry_in=delay
                )
            else:
                try:
                    await self._listen_on(db)
                    listened = True
                    if status is not None:
                        status.started()
                        status = None
                    await self._hear(db)
                except _UNLISTENED as exc:
                    self._log.error(
                        "relay.listener_lost" if listened else "relay.listen_failed",
                        problem=self._store.problem(exc),
                        retry_in=_BACKOFF_FIRST if listened else delay,
                    )
                finally:
                    self.listening = False
                    with anyio.CancelScope(shield=True):
                        await _close(db)
                self.reconnects += 1
            if status is not None:
                status.started()
                status = None
            if listened:
                delay = _BACKOFF_FIRST  # it was up: the next try soon, then backing off
            await anyio.sleep(delay)
            delay = min(2 * delay, _BACKOFF_MAX)

    async def _listen_on(self, db: asyncpg.Connection) -> None:
        await db.add_listener(CHANNEL, self._heard_one)
        self.listening = True
        self._log.info("relay.listening", channel=CHANNEL, reconnects=self.reconnects)

    async def _hear(self, db: asyncpg.Connection) -> None:
        """Publish what the others send, until the session ends (raises what asyncpg
        raises then, or ConnectionError)."""
        while True:
            text = None
            with anyio.move_on_after(PROBE):
                text = await self._hearing.receive()
            if text is not None:
                await self._publish(db, text)
                continue
            if db.is_closed():
                raise ConnectionError("the listening session ended")
            with anyio.fail_after(_PROBE_TIMEOUT):
                await db.fetchval("SELECT 1")

    def _heard_one(self, _db: object, _pid: int, _channel: str, payload: str) -> None:
        """asyncpg's listener callback: the notification handed to the listening task."""
        try:
            self._heard.send_nowait(payload)
        except anyio.WouldBlock:
            self.missed += 1
            self._log.warning("relay.listener_behind", missed=self.missed)

    async def _publish(self, db: asyncpg.Connection, text: str) -> None:
        """The output a notification names, read from its row (on the listening session
        itself) and published into this daemon's hub, unless it is this run's own or was
        published already."""
        row = int(text) if text.isascii() and text.isdigit() and len(text) < 19 else None
        if row is None:
            self.missed += 1
            self._log.warning("relay.unreadable", problem="not a row's id", bytes=len(text))
            return
        if row in self._rows:
            return
        self._rows[row] = None
        while len(self._rows) > _ROWS:
            self._rows.popitem(last=False)
        with anyio.fail_after(_PROBE_TIMEOUT):
            kept: str | None = await db.fetchval(_READ, row)
        if kept is None:
            self.missed += 1
            self._log.warning("relay.row_gone", id=row)
            return
        try:
            note = _decoder.decode(kept)
        except msgspec.DecodeError as exc:
            self.missed += 1
            self._log.warning("relay.unreadable", id=row, problem=str(exc))
            return
        if note.instance == self.instance or not self._first(note):
            return
        if note.kind not in OUTPUT_KINDS:
            # (a daemon of another version, with a kind this one does not know)
            self.missed += 1
            self._log.warning(
                "relay.unknown_kind", soul=note.soul, kind=note.kind, source=note.daemon
            )
            return
        self.received += 1
        self._outputs.publish_relayed(Output(note.soul, note.kind, note.ts, note.payload))

    def _first(self, note: _Note) -> bool:
        """Whether ``note`` comes after the last of its instance published here."""
        last = self._last.get(note.instance)
        if last is not None and note.seq <= last:
            self._log.info("relay.duplicate", source=note.daemon, seq=note.seq, soul=note.soul)
            return False
        self._last[note.instance] = note.seq
        self._last.move_to_end(note.instance)
        while len(self._last) > _INSTANCES:
            self._last.popitem(last=False)
        return True

    def status(self) -> dict[str, Any]:
        return {
            "listening": self.listening,
            "sent": self.sent,
            "failed": self.failed,
            "dropped": self.dropped,
            "queued": self._queued.statistics().current_buffer_used,
            "queued_bytes": self.queued_bytes,
            "received": self.received,
            "missed": self.missed,
            "reconnects": self.reconnects,
        }


async def _close(db: asyncpg.Connection) -> None:
    """Close ``db`` within a bound; one that does not close in time is cut off."""
    if db.is_closed():
        return
    with anyio.move_on_after(2.0):
        try:
            await db.close()
        except (*_GONE, asyncpg.PostgresError):
            pass
    if not db.is_closed():
        db.terminate()
