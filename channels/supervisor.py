"""The channels supervisor: one supervised child per ``[[channels]]`` table.

A dynamic supervisor in the daemon's tree. Each channel runs under its own small
supervisor (as souls do): a channel whose code keeps crashing is stopped and shown
as ``failed`` while its siblings go on. Upstream trouble is no crash — a channel
rides it out with backoff (:mod:`channels.base`).

:meth:`Channels.apply` takes a new list of configs and touches only what changed:
a new name starts a channel, a name gone stops it, a table whose settings differ
restarts it; the others keep running and keep their connections.

Where each soul last heard from someone (:mod:`channels.conversations`) is shared by
the channels and kept in a file given to :class:`Channels`: loaded when it starts,
written in the background when it changes, and once more when every channel has
stopped, so a wake-up after a restart still reaches the conversation it belongs to.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
import anyio.abc
import structlog

from channels.base import Channel
from channels.config import (
    ChannelConfig,
    SignalConfig,
    SlackConfig,
    TelegramConfig,
    WebhookConfig,
)
from channels.conversations import Conversations
from supervisor.errors import ChildStartError, RestartIntensityExceeded
from supervisor.outputs import Outputs
from supervisor.registry import Registry
from supervisor.tree import ChildSpec, Supervisor

if TYPE_CHECKING:
    from channels.forwarding import Forwarder

__all__ = ["Channels", "make_channel"]

_log = structlog.get_logger("soupd.channels")

# A channel may spend this long stopping (closing its connection, answering the
# request in hand).
_SHUTDOWN = 5.0

# At shutdown the last write of the conversations file waits at most this long for a
# worker thread (busy threads must not hold up the stop); a write under way is let
# finish, as it is a few hundred bytes.
_LAST_WRITE = 2.0


def make_channel(
    config: ChannelConfig,
    registry: Registry,
    outputs: Outputs,
    conversations: Conversations,
    rng: random.Random | None = None,
) -> Channel:
    """The channel object for one config (imports each kind only when used)."""
    kind: type[Channel]
    if isinstance(config, WebhookConfig):
        from channels.webhook import WebhookChannel as kind
    elif isinstance(config, TelegramConfig):
        from channels.telegram import TelegramChannel as kind
    elif isinstance(config, SlackConfig):
        from channels.slack import SlackChannel as kind
    else:
        assert isinstance(config, SignalConfig)
        from channels.signal import SignalChannel as kind
    return kind(config, registry, outputs, conversations, rng=rng)


class Channels:
    """Runs the configured channels; :meth:`apply` follows config reloads."""

    def __init__(
        self,
        configs: Sequence[ChannelConfig],
        registry: Registry,
        outputs: Outputs,
        *,
        conversations: Path | None = None,
        factory: Callable[..., Channel] = make_channel,
    ) -> None:
        """``conversations`` is the file that keeps :attr:`conversations` across
        restarts; without one they live in memory only."""
        self._configs = list(configs)
        self._registry = registry
        self._outputs = outputs
        self._factory = factory
        self.conversations = Conversations(conversations)
        self._supervisor = Supervisor("channels", max_restarts=1_000_000, max_seconds=1.0)
        self._channels: dict[str, Channel] = {}
        self._lock = anyio.Lock()
        # On a shared store (set by the daemon before run): each channel forwards an
        # event for a soul another daemon owns to it (channels.base).
        self.forwarder: Forwarder | None = None

    async def run(self, task_status: anyio.abc.TaskStatus[Any]) -> None:
        """Start every configured channel, then supervise until cancelled."""
        try:
            async with anyio.create_task_group() as tg:
                await self.conversations.load()
                # A channel removed from the config while the daemon was down.
                for gone in self.conversations.channels() - {c.name for c in self._configs}:
                    self.conversations.forget_channel(gone)
                await tg.start(self.conversations.run)
                await tg.start(self._supervisor.run)
                async with self._lock:
                    self._channels.clear()
                    for config in self._configs:
                        await self._start(config)
                task_status.started()
        finally:
            # Here every channel has stopped, so nothing notes after this write.
            with anyio.CancelScope(shield=True, deadline=anyio.current_time() + _LAST_WRITE):
                await self.conversations.flush()

    async def apply(self, configs: Sequence[ChannelConfig]) -> None:
        """Start, restart or stop channels so that exactly ``configs`` run."""
        async with self._lock:
            old = {c.name: c for c in self._configs}
            new = {c.name: c for c in configs}
            self._configs = list(configs)
            if not self._supervisor.statistics().running:
                return  # restarting: run() starts from self._configs
            for name in [n for n in old if new.get(n) != old[n]]:
                await self._stop(name)
                if name not in new:
                    # Removed: its chats are no one's to route to. A changed channel
                    # keeps them: it is the same chats under new settings.
                    self.conversations.forget_channel(name)
            for name, config in new.items():
                if old.get(name) != config:
                    await self._start(config)
                    change = "added" if name not in old else "changed"
                    _log.info("channel.reloaded", channel=name, change=change)
            for name in old.keys() - new.keys():
                _log.info("channel.reloaded", channel=name, change="removed")

    def status(self) -> list[dict[str, Any]]:
        return [channel.status() for channel in self._channels.values()]

    def get(self, name: str) -> Channel:
        return self._channels[name]

    async def _start(self, config: ChannelConfig) -> None:
        channel = self._factory(config, self._registry, self._outputs, self.conversations)
        channel.forwarder = self.forwarder
        self._channels[config.name] = channel
        own = Supervisor(
            f"channel:{config.name}",
            [ChildSpec("channel", channel.run, restart="permanent", shutdown=_SHUTDOWN)],
        )

        async def host(task_status: anyio.abc.TaskStatus[Any]) -> None:
            try:
                await own.run(task_status=task_status)
            except RestartIntensityExceeded as exc:
                channel.state = "failed"
                channel.last_error = str(exc.__cause__ or exc)
                _log.error("channel.failed", channel=config.name, error=channel.last_error)

        spec = ChildSpec(f"channel:{config.name}", host, restart="temporary", shutdown=_SHUTDOWN)
        try:
            await self._supervisor.start_child(spec)
        except ChildStartError as exc:
            channel.state = "failed"
            channel.last_error = str(exc.__cause__ or exc)
            _log.error("channel.start_failed", channel=config.name, error=channel.last_error)

    async def _stop(self, name: str) -> None:
        # Listed until it has stopped: status never shows a channel gone that still runs.
        if name not in self._channels:
            return
        if any(c.id == f"channel:{name}" for c in self._supervisor.which_children()):
            await self._supervisor.terminate_child(f"channel:{name}")
        del self._channels[name]
