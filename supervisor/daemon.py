"""The daemon: builds the supervision tree from the settings and runs it.

Tree (``rest_for_one``: if the souls supervisor has to restart, the socket restarts
after it)::

    soupd
    ├── souls      dynamic supervisor; one temporary child per soul, each with its own
    │              supervisor over the soul actor
    ├── scheduler  APScheduler: nightly decay, weekly summary, homeostasis, @due wake-ups
    ├── socket     the Unix-socket server (it only listens once every soul is loaded;
    │              stopped before the souls: no new mail while they drain)
    ├── http       the HTTP API ([http], on by default; channels.http_api), the same
    │              methods as the socket
    ├── leases     on a shared PostgreSQL store: its lease session watched (supervisor.shared)
    ├── relay      ...and the outputs of every daemon's souls relayed (supervisor.relay)
    ├── channels   dynamic supervisor; one child per [[channels]] table (webhook,
    │              telegram, slack, signal)
    └── responder  answers direct messages of souls with [answer] enabled (their
                   model and tools; replies go out as "reply" outputs), stopped first

SIGTERM / SIGINT cancel the tree: children stop in reverse order, the socket
finishes the requests it read, souls finish their queued mail and commit. A second
signal exits at once.
"""

from __future__ import annotations

import dataclasses
import functools
import os
import signal
import sys
import time
from typing import TYPE_CHECKING, Any

import anyio
import anyio.abc
import structlog

from channels.config import channel_problem
from channels.methods import Methods
from channels.server import Server, ServerConfig, prepare_socket_path
from channels.supervisor import Channels
from souls.actor.clock import Clock, SystemClock
from souls.actor.mailbox import Mailbox
from souls.config import SoulConfig
from souls.messages import Message, Ping
from supervisor.config import (
    DEFAULT_SOUL,
    Settings,
    load_settings,
    postgres_missing,
    read_souls,
    shared_folders,
    soul_config,
)
from supervisor.config_file import parse_text
from supervisor.errors import (
    ChildStartError,
    ConfigError,
    InvalidParams,
    SoulUnavailable,
    SoupdError,
    UnknownSoul,
)
from supervisor.heap import freeze_start_up_heap
from supervisor.logstream import LogStream
from supervisor.outputs import Outputs
from supervisor.paths import Locations, check_private_dir, check_socket_path, soul_database
from supervisor.registry import Registry, SoulHandle
from supervisor.responder import Responder
from supervisor.scheduler import Scheduler
from supervisor.soul_files import (
    KeptData,
    has_kept_data,
    kept_refusal,
    purge_state,
    remove_soul_file,
    soul_path,
    write_soul_file,
)
from supervisor.statelock import StateLock
from supervisor.systemd import Notifier, activated_socket, watchdog_interval
from supervisor.tree import ChildSpec, Supervisor

if TYPE_CHECKING:
    from channels.http_api import HttpApi
    from supervisor.relay import Relay
    from supervisor.shared import SharedStore

__all__ = ["Daemon"]

# The file the default soul gets when a soul is created beside it (see create_soul).
_DEFAULT_TEXT = (
    "# The default soul: written by soupd when another soul was created at run time, so\n"
    "# that this one keeps running (with no soul file at all, it runs without one).\n"
)

VERSION = "0.1.0"
# Seconds a thread holds the GIL before another that asked for it gets it (see run).
_SWITCH_INTERVAL = 0.001
_log = structlog.get_logger("soupd.daemon")


class Daemon:
    def __init__(
        self,
        settings: Settings,
        *,
        clock: Clock | None = None,
        locations: Locations | None = None,
    ) -> None:
        self.settings = settings
        self._locations = locations
        self.clock = clock or SystemClock()
        self.registry = Registry()
        self.outputs = Outputs()
        self.scheduler = Scheduler(settings, self.registry)
        self.channels = Channels(
            settings.daemon.channels,
            self.registry,
            self.outputs,
            conversations=settings.state_dir / "channels" / "conversations.json",
        )
        self.responder = Responder(self.registry, self.outputs)
        self._logs: LogStream | None = None
        self.started_at = time.time()
        self._souls = Supervisor("souls", max_restarts=1_000_000, max_seconds=1.0)
        # Held while the souls change: a reload, a soul created or deleted at run time.
        self._changing = anyio.Lock()
        socket_config = settings.daemon.socket
        self.notifier = Notifier()
        self._activated = activated_socket()
        self.server = Server(
            ServerConfig(
                path=settings.socket,
                inherited=self._activated,
                mode=int(socket_config.mode, 8),
                allow_uids=tuple(socket_config.allow_uids),
                limits=socket_config,
            ),
            Methods(
                self.registry,
                self.status,
                fault_injection=settings.daemon.testing.fault_injection,
                logs=self.recent_logs,
                forgotten=self.channels.conversations.forget_soul,
            ),
            self.outputs,
        )
        # The shared PostgreSQL store, when [store] backend = "postgres" (opened by run).
        self._shared: SharedStore | None = None
        # Its outputs relay: every soul's outputs reach every daemon of the store.
        self._relay: Relay | None = None
        self.http: HttpApi | None = None
        if settings.daemon.http.enabled:
            # Imported only when used: Starlette and uvicorn cost a daemon without it nothing.
            from channels.http_api import HttpApi

            self.http = HttpApi(
                settings.daemon.http,
                token_file=settings.http_token,
                methods=self.server.methods,
                outputs=self.outputs,
                max_body=socket_config.max_frame_bytes,
                version=VERSION,
                webhooks=self.channels,
            )

    async def run(self) -> None:
        """Run until SIGTERM/SIGINT; raises if the tree gives up (exit non-zero)."""
        # Each soul's SQLite calls run in a worker thread that needs the GIL back from the
        # event loop; while one soul computes, Python's default 5 ms hand-over interval
        # makes every statement of another soul's commit wait up to 5 ms. 1 ms keeps a
        # bystander's push near its idle latency at a small cost in throughput.
        sys.setswitchinterval(_SWITCH_INTERVAL)
        check_socket_path(self.settings.socket)
        if self._activated is None:
            # A socket folder another user can write to could have our socket replaced
            # under us (systemd's socket activation owns its folder itself).
            check_private_dir(self.settings.socket.parent)
            # Refuse early, before any soul opens its database, if another daemon is live.
            await prepare_socket_path(self.settings.socket)
        lock = StateLock(self.settings.state_dir)
        await anyio.to_thread.run_sync(lock.acquire)
        try:
            store = self.settings.daemon.store
            if store.backend == "postgres":
                # Imported only when used: asyncpg is the optional "postgres" extra.
                try:
                    from supervisor.shared import SharedStore
                except ModuleNotFoundError as missing:
                    if missing.name != "asyncpg":
                        raise
                    raise postgres_missing(self.settings.config_file) from missing

                self._shared = await SharedStore.open(
                    store, self.settings.advertised, config_file=str(self.settings.config_file)
                )
                _log.info(
                    "store.shared", where=self._shared.where, advertised=self.settings.advertised
                )
                # A request for a soul another daemon owns is forwarded to it.
                from channels.forwarding import Forwarder

                forwarder = Forwarder(
                    self.settings.http_token,
                    self.settings.advertised,
                    self.settings.daemon.http.request_timeout,
                )
                self.server.methods.forwarder = forwarder
                self.channels.forwarder = forwarder  # and a channel's event, the same way
                from supervisor.relay import Relay

                self._relay = Relay(self._shared, self.outputs)
                self.outputs.relay_to(self._relay.offer)
            try:
                await self._run_locked()
            finally:
                self.outputs.relay_to(None)
                if self._shared is not None:
                    with anyio.CancelScope(shield=True):
                        if self.server.methods.forwarder is not None:
                            await self.server.methods.forwarder.aclose()
                        await self._shared.close()
        finally:
            lock.release()

    async def _run_locked(self) -> None:
        supervision = self.settings.daemon.supervision
        http = []
        if self.http is not None:
            http = [ChildSpec("http", self.http.run, restart="permanent", shutdown=10.0)]
        if self._shared is not None:
            http.append(ChildSpec("leases", self._shared.watch, restart="permanent", shutdown=5.0))
        if self._relay is not None:
            http.append(ChildSpec("relay", self._relay.run, restart="permanent", shutdown=5.0))
        root = Supervisor(
            "soupd",
            [
                ChildSpec("souls", self._run_souls, restart="permanent", shutdown=60.0),
                ChildSpec("scheduler", self._run_scheduler, restart="permanent", shutdown=5.0),
                ChildSpec(
                    "socket", self._run_socket, restart="permanent", shutdown=supervision.shutdown
                ),
                *http,
                ChildSpec("channels", self.channels.run, restart="permanent", shutdown=10.0),
                ChildSpec("responder", self.responder.run, restart="permanent", shutdown=5.0),
            ],
            strategy="rest_for_one",
            max_restarts=supervision.max_restarts,
            max_seconds=supervision.max_seconds,
        )
        self._logs = LogStream(self.outputs)
        self._logs.attach()
        try:
            await self._run_tree(root)
        finally:
            self._logs.detach()

    async def _run_tree(self, root: Supervisor) -> None:
        # The signal watcher lives outside the tree's scope: while the tree stops
        # gracefully it still listens, so a second signal can force the exit.
        tree = anyio.CancelScope()
        async with anyio.create_task_group() as outer:
            outer.start_soon(self._watch_signals, tree)
            with tree:
                async with anyio.create_task_group() as tg:
                    await tg.start(root.run)
                    if self.settings.daemon.reload.watch:
                        # Started before "ready": a file written once the daemon says it
                        # is ready is a change the watcher sees.
                        await tg.start(self._watch_config)
                    frozen = freeze_start_up_heap()
                    _log.info(
                        "daemon.ready",
                        frozen_objects=frozen,
                        souls=len(self.settings.souls),
                        socket=str(self.settings.socket),
                        pid=os.getpid(),
                    )
                    self.notifier.ready(self._status_line())
                    tg.start_soon(self._report_status)
                    interval = watchdog_interval()
                    if interval is not None:
                        tg.start_soon(self._watchdog, interval)
            outer.cancel_scope.cancel()
        _log.info("daemon.stopped")

    def _status_line(self) -> str:
        handles = self.registry.handles()
        failed = [h for h in handles if h.state == "failed"]
        line = f"{len(handles) - len(failed)} souls running"
        if failed:
            line += f", {len(failed)} failed (last: {failed[-1].name}: {failed[-1].last_error})"
        return line

    async def _report_status(self) -> None:
        """STATUS= for systemctl status: souls, events per second, last failure."""
        methods = self.server.methods
        before = methods.events_received
        every = self.settings.daemon.notify.status_seconds
        while True:
            await anyio.sleep(every)
            now = methods.events_received
            rate = (now - before) / every
            before = now
            awake = self.registry.statistics().awake
            self.notifier.status(f"{self._status_line()}; {rate:.0f} events/s; {awake} awake")

    async def _watchdog(self, interval: float) -> None:
        """WATCHDOG=1 while every running soul still answers its mail; a soul stuck
        in a turn stops the pings, and systemd restarts the daemon."""
        while True:
            await anyio.sleep(interval)
            if await self._souls_answer(within=interval):
                self.notifier.watchdog()
            else:
                _log.error("daemon.unhealthy", reason="a soul did not answer in time")

    async def _souls_answer(self, within: float) -> bool:
        for handle in self.registry.handles():
            if handle.state != "running":
                continue
            try:
                await handle.mailbox.ask(Ping(), timeout=within)
            except SoupdError:
                return False
        return True

    async def _watch_signals(self, scope: anyio.CancelScope) -> None:
        wanted = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)
        with anyio.open_signal_receiver(*wanted) as signals:
            async for signum in signals:
                if signum == signal.SIGHUP:
                    _log.info("daemon.reloading", signal="SIGHUP")
                    self.notifier.reloading()
                    await self._reload()
                    self.notifier.ready(self._status_line())
                    continue
                if scope.cancel_called:
                    _log.warning("daemon.forced_exit", signal=signal.Signals(signum).name)
                    os._exit(1)
                _log.info("daemon.stopping", signal=signal.Signals(signum).name)
                self.notifier.stopping()
                scope.cancel()

    async def _watch_config(
        self, *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED
    ) -> None:
        """Reload when soupd.toml or a soul file changes (``[reload] watch``); started
        once it holds the files as they are."""
        seen = await self._config_files()
        task_status.started()
        while True:
            await anyio.sleep(self.settings.daemon.reload.poll_seconds)
            now = await self._config_files()
            if now != seen:
                seen = now
                _log.info("daemon.reloading", reason="config files changed")
                await self._reload()

    async def _config_files(self) -> dict[str, tuple[int, int]]:
        files = [anyio.Path(self.settings.config_file)]
        souls = anyio.Path(self.settings.souls_dir)
        if await souls.is_dir():
            files += [path async for path in souls.glob("*.toml")]
        found = {}
        for path in files:
            try:
                info = await path.stat()
            except FileNotFoundError:
                continue
            found[str(path)] = (info.st_mtime_ns, info.st_size)
        return found

    async def _run_souls(self, task_status: anyio.abc.TaskStatus[None]) -> None:
        self.server.methods.souls = self  # soul.create and soul.delete, from now on
        async with anyio.create_task_group() as tg:
            await tg.start(self._souls.run)
            for name, config in sorted(self.settings.souls.items()):
                await self._start_soul(name, config)
            for error in self.settings.refused.values():
                self._refuse_soul_file(error)
            if (
                DEFAULT_SOUL not in self.settings.souls
                and await anyio.Path(soul_database(self.settings.soul_dir(DEFAULT_SOUL))).exists()
            ):
                self._default_gone(self.settings)
            task_status.started()

    def _default_gone(self, settings: Settings) -> None:
        """Say that the default soul does not run (any more): soul files exist, and none is
        its own. Its data stays where it was."""
        _log.warning(
            "soul.default_removed",
            reason=f"{settings.souls_dir} holds soul files and none is {DEFAULT_SOUL}.toml",
            kept=str(settings.soul_dir(DEFAULT_SOUL)),
            fix=f"add {settings.souls_dir / (DEFAULT_SOUL + '.toml')} (it may be empty), or "
            f"run `soupd soul create {DEFAULT_SOUL} --reopen`, to run it again",
        )

    def _refuse_soul_file(self, error: ConfigError) -> None:
        """A soul file that does not validate: logged, and its soul (when the file's name
        can be one) listed as failed with the problem, so that requests to it say why."""
        _log.error("soul.config_refused", file=error.path, key=error.key, problem=error.problem)
        name = self.settings.refused_soul(error.path)
        if name is None or name in self.settings.souls:
            return
        handle = SoulHandle(
            name=name,
            config=SoulConfig(),
            db_path=soul_database(self.settings.soul_dir(name)),
            brain_dir=self.settings.soul_dir(name),
            mailbox=Mailbox(name, 1),
            emit=functools.partial(self.outputs.publish, name),
        )
        self.registry.add(handle)
        handle.fail(f"its config file does not validate: {error}")

    async def _start_soul(
        self, name: str, config: SoulConfig, mail: Mailbox[Message] | None = None
    ) -> SoulHandle:
        """Start a soul (``mail``: the mailbox of the incarnation it replaces)."""
        mailbox = Mailbox[Message](name, config.mailbox.capacity)
        if mail is not None and mail.capacity == config.mailbox.capacity:
            mailbox = mail
        elif mail is not None:
            # A new capacity needs a new mailbox: the queued mail moves over, in order,
            # with nothing awaited in between, so none can slip into the old one.
            while moved := mail.receive_ready(1024):
                mailbox.redeliver(moved)
            mail.discard(SoulUnavailable(f"soul {name!r} restarted; retry"))
        handle = SoulHandle(
            name=name,
            config=config,
            db_path=soul_database(self.settings.soul_dir(name)),
            brain_dir=self.settings.brain_dir(name),
            mailbox=mailbox,
            emit=functools.partial(self.outputs.publish, name),
            shared=self._shared,
        )
        self.registry.add(handle)
        try:
            await self._souls.start_child(handle.child_spec(self.clock))
        except ChildStartError as exc:
            # One soul that cannot start (say, a corrupt database) must not keep the
            # others, or the daemon, from running.
            cause: BaseException = exc
            while isinstance(cause, ChildStartError) and cause.__cause__ is not None:
                cause = cause.__cause__  # the soul's own supervisor wraps it once more
            handle.fail(f"{type(cause).__name__}: {cause}")
            _log.error("soul.start_failed", soul=name, error=str(cause))
        return handle

    async def _stop_soul(self, name: str, *, hand_over: bool = False) -> Mailbox[Message] | None:
        """Stop a soul and forget it; one that failed is no longer a child to stop.

        ``hand_over``: it is to run again (a changed config). It finishes its turn and
        the mail queued then, as at any stop; what arrives meanwhile stays queued and is
        returned, for the next incarnation. Otherwise what is left is failed."""
        handle = self.registry.lookup_any(name)
        handle.handing_over = hand_over and handle.state != "failed"
        child = f"soul:{name}"
        if any(info.id == child for info in self._souls.which_children()):
            await self._souls.terminate_child(child)
        self.registry.remove(name)
        return handle.mailbox if handle.handing_over else None

    async def reload(self) -> bool:
        """Re-read every config file; apply it only if all of it validates.

        Souls whose file appeared are started, those whose file went away are stopped
        (their queued mail is finished first), changed ones are restarted with the new
        config; the schedule follows. Returns False when the new config was rejected
        (the last good one stays in force).
        """
        if self._locations is None:
            return False
        try:
            fresh = load_settings(self._locations, lenient=True)
            if fresh.souls_dir != self.settings.souls_dir:
                # A new souls_dir takes effect at the next start (logged below); until
                # then the souls are those of the folder in use.
                souls, refused = read_souls(self.settings.souls_dir)
                fresh = dataclasses.replace(fresh, souls=souls, refused=refused)
            # A soul file refused at start and left as it was does not block the others'
            # edits; a new fault anywhere rejects the whole reload, as it always did.
            for path, error in fresh.refused.items():
                known = self.settings.refused.get(path)
                if known is None or str(known) != str(error):
                    raise error
        except ConfigError as error:
            _log.error(
                "config.reload_rejected", file=error.path, key=error.key, problem=error.problem
            )
            return False
        old = self.settings
        for key in ("socket", "state_dir", "souls_dir"):
            if getattr(fresh, key) != getattr(old, key):
                _log.warning("config.needs_restart", key=key, value=str(getattr(fresh, key)))
        if fresh.daemon.http != old.daemon.http:
            _log.warning("config.needs_restart", key="http", value="the [http] table")
        fresh = dataclasses.replace(
            fresh, socket=old.socket, state_dir=old.state_dir, souls_dir=old.souls_dir
        )
        self.settings = fresh
        self.scheduler.update_settings(fresh)
        schedule_changed = fresh.daemon.schedule != old.daemon.schedule
        for path in set(old.refused) - set(fresh.refused):
            # A refused file mended (or gone): its failed stand-in makes way.
            name = old.refused_soul(path)
            if name is not None and name not in old.souls:
                self.registry.remove(name)
        if DEFAULT_SOUL in old.souls and DEFAULT_SOUL not in fresh.souls:
            self._default_gone(fresh)
        for name in sorted(set(old.souls) | set(fresh.souls)):
            before, after = old.souls.get(name), fresh.souls.get(name)
            if before == after:
                if schedule_changed and after is not None:
                    await self.scheduler.add_soul(self.registry.lookup_any(name))
                continue
            ran = before is not None and self.registry.lookup_any(name).state != "failed"
            mail = None
            if before is not None:
                self.scheduler.remove_soul(name)
                mail = await self._stop_soul(name, hand_over=after is not None)
            if after is not None:
                handle = await self._start_soul(name, after, mail)
                if handle.state == "failed" and ran and before is not None:
                    # Valid, yet the soul cannot run with it (say, a brain_dir it may not
                    # create): the edit is refused and the soul goes on as it was.
                    _log.error(
                        "soul.config_rejected",
                        soul=name,
                        file=str(fresh.souls_dir / f"{name}.toml"),
                        problem=f"the soul cannot start with it: {handle.last_error}",
                    )
                    self.registry.remove(name)
                    fresh = dataclasses.replace(fresh, souls={**fresh.souls, name: before})
                    self.settings = fresh  # _start_soul reads the brain_dir from here
                    self.scheduler.update_settings(fresh)
                    # (the failed start failed the mail it was handed, naming why)
                    handle = await self._start_soul(name, before)
                await self.scheduler.add_soul(handle)
            _log.info(
                "soul.reloaded",
                soul=name,
                change="added" if before is None else "removed" if after is None else "changed",
            )
        await self.channels.apply(fresh.daemon.channels)
        _log.info("config.reloaded", souls=len(fresh.souls))
        return True

    async def _reload(self) -> bool:
        async with self._changing:
            return await self.reload()

    async def create_soul(self, name: str, text: str, *, reopen: bool) -> dict[str, Any]:
        """Write ``souls/<name>.toml`` with ``text`` and start the soul (soul.create).

        Refused (InvalidParams, no file written) when the name cannot be a file's, the
        soul or its file exists, the text does not validate as a soul file does at
        load, or a soul of that name deleted without purge left its state folder and
        ``reopen`` is not given (with it, the soul opens that data: ``reopened`` names
        the folder). While the ``default`` soul runs only because no soul file exists,
        it gets a file of its own first, so creating a soul never removes it."""
        async with self._changing:
            settings = self.settings
            path = soul_path(settings.souls_dir, name)
            if name in {h.name for h in self.registry.handles()} or await _lexists(path):
                raise InvalidParams(
                    f"soul {name!r} exists already ({path}); edit its file, or delete it first"
                )
            state = settings.soul_dir(name)
            kept = await anyio.to_thread.run_sync(has_kept_data, state)
            if kept and not reopen:
                raise kept_refusal(name, state)
            try:
                config = soul_config(path, parse_text(path, text))
            except ConfigError as error:
                raise InvalidParams(f"soul.create: {error.message}") from None
            shared = shared_folders({**settings.souls, name: config}, settings.souls_dir,
                                    settings.state_dir)  # fmt: skip
            if name in shared:
                raise InvalidParams(f"soul.create: {shared[name].message}")
            default_file = settings.souls_dir / f"{DEFAULT_SOUL}.toml"
            keep_default = (
                DEFAULT_SOUL in settings.souls and not await anyio.Path(default_file).exists()
            )
            if keep_default:
                await anyio.to_thread.run_sync(write_soul_file, default_file, _DEFAULT_TEXT)
                _log.info("soul.default_kept", file=str(default_file))
            try:
                await anyio.to_thread.run_sync(write_soul_file, path, text)
            except FileExistsError:
                raise InvalidParams(f"soul {name!r} exists already ({path})") from None
            self.settings = dataclasses.replace(settings, souls={**settings.souls, name: config})
            self.scheduler.update_settings(self.settings)
            handle = await self._start_soul(name, config)
            if handle.state == "failed":
                # Valid, yet it cannot run (a brain_dir it may not create): as if never asked.
                self.registry.remove(name)
                self.settings = settings
                self.scheduler.update_settings(settings)
                await anyio.to_thread.run_sync(remove_soul_file, path)
                raise InvalidParams(
                    f"soul {name!r} cannot start with that config ({handle.last_error}); "
                    "nothing was written"
                )
            await self.scheduler.add_soul(handle)
            reopened = str(state) if kept else None
            _log.info("soul.created", soul=name, file=str(path), reopened=reopened)
            return {"soul": name, "file": str(path), "state": handle.state,
                    "default_kept": keep_default, "reopened": reopened}  # fmt: skip

    async def delete_soul(self, name: str, *, purge: bool) -> dict[str, Any]:
        """Stop the soul and remove its file (soul.delete); its state folder (database,
        brain) stays unless ``purge``, then it is removed once the soul has stopped. A
        brain_dir of its own outside the state folder is never removed. A name with no
        soul but the kept state folder of one deleted earlier: ``purge`` removes that
        folder; without it, :class:`KeptData` (unknown_soul) says so."""
        async with self._changing:
            settings = self.settings
            if name not in {h.name for h in self.registry.handles()}:
                return await self._purge_kept(name, purge=purge)
            handle = self.registry.lookup_any(name)
            path = settings.souls_dir / f"{name}.toml"
            others = [p for p in await self._soul_files() if p != str(path)]
            if not await _lexists(path) and not others:
                raise InvalidParams(
                    f"soul {name!r} runs because no soul file exists; it has no file to "
                    "delete (create another soul first)"
                )
            remaining = {k: v for k, v in settings.souls.items() if k != name}
            if (problem := channel_problem(settings.daemon.channels, remaining)) is not None:
                key, said = problem
                raise InvalidParams(f"soul.delete: {settings.config_file}: {key}: {said}")
            brain = settings.brain_dir(name) if name in settings.souls else None
            removed = await anyio.to_thread.run_sync(remove_soul_file, path)
            self.scheduler.remove_soul(name)
            await self._stop_soul(name)
            refused = {k: v for k, v in settings.refused.items() if k != str(path)}
            self.settings = dataclasses.replace(settings, souls=remaining, refused=refused)
            self.scheduler.update_settings(self.settings)
            state = settings.soul_dir(name)
            if purge:
                await anyio.to_thread.run_sync(purge_state, state)
                self.channels.conversations.forget_soul(name)
            _log.info("soul.deleted", soul=name, file=str(path), purged=purge,
                      was=handle.state)  # fmt: skip
            if not others and not remaining:
                # No soul file left: the default soul runs, as it would at the next start.
                self.settings = dataclasses.replace(
                    self.settings, souls={DEFAULT_SOUL: SoulConfig()}
                )
                self.scheduler.update_settings(self.settings)
                await self.scheduler.add_soul(await self._start_soul(DEFAULT_SOUL, SoulConfig()))
            kept = [str(p) for p in (state, brain) if p is not None and (not purge or p != state)]
            return {"soul": name, "file": str(path) if removed else None, "stopped": True,
                    "purged": purge, "kept": sorted(set(kept))}  # fmt: skip

    async def _purge_kept(self, name: str, *, purge: bool) -> dict[str, Any]:
        """soul.delete of a name no soul has: its kept state folder purged, if asked."""
        soul_path(self.settings.souls_dir, name)  # a safe name, or InvalidParams
        state = self.settings.soul_dir(name)
        if not await anyio.to_thread.run_sync(has_kept_data, state):
            raise UnknownSoul(name)
        if not purge:
            raise KeptData(name, state)
        await anyio.to_thread.run_sync(purge_state, state)
        self.channels.conversations.forget_soul(name)
        _log.info("soul.deleted", soul=name, file=None, purged=True, was="deleted")
        return {"soul": name, "file": None, "stopped": False, "purged": True, "kept": []}

    async def _soul_files(self) -> list[str]:
        folder = anyio.Path(self.settings.souls_dir)
        if not await folder.is_dir():
            return []
        return sorted([str(p) async for p in folder.glob("*.toml")])

    async def _run_scheduler(self, task_status: anyio.abc.TaskStatus[Scheduler]) -> None:
        await self.scheduler.run(task_status=task_status)

    async def _run_socket(self, task_status: anyio.abc.TaskStatus[None]) -> None:
        await self.server.run(task_status=task_status)

    def recent_logs(self, soul: str | None, limit: int) -> list[str]:
        return self._logs.recent(soul, limit) if self._logs is not None else []

    def status(self) -> dict[str, Any]:
        handles = self.registry.handles()
        stats = self.server.stats
        return {
            "version": VERSION,
            "pid": os.getpid(),
            "uptime_s": round(time.time() - self.started_at, 3),
            "socket": str(self.settings.socket),
            "config_file": str(self.settings.config_file),
            "state_dir": str(self.settings.state_dir),
            "souls": len(handles),
            "souls_failed": sum(1 for h in handles if h.state == "failed"),
            "souls_awake": sum(1 for h in handles if h.awake),
            "souls_hibernating": sum(1 for h in handles if h.state == "hibernating"),
            "souls_catching_up": self.scheduler.statistics().behind,
            "connections": stats.connections,
            "requests": stats.requests,
            "errors": stats.errors,
            "refused_peers": stats.refused_peers,
            # Bytes held for the socket's peers: replies and half-received frames, and
            # of those the half-received frames ([socket] max_buffered_total and
            # max_partial_total).
            "buffered_bytes": self.server.budget.used,
            "partial_bytes": self.server.partial.used,
            "subscribers": self.outputs.subscribers,
            "outputs": self.outputs.published,
            # Outputs of the souls other daemons of the shared store serve, published here.
            "outputs_relayed": self.outputs.relayed,
            "relay": self._relay.status() if self._relay is not None else None,
            "http": self.http.status() if self.http is not None else None,
            "channels": self.channels.status(),
            "answers": {"answered": self.responder.answered, "failed": self.responder.failed},
        }


async def _lexists(path: os.PathLike[str]) -> bool:
    """Whether anything has that name (a dangling link too)."""
    return await anyio.Path(path).is_symlink() or await anyio.Path(path).exists()
