"""Real souls and real channels for channel tests, hosted as the daemon hosts them."""

from __future__ import annotations

import random
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio

from channels.base import Channel
from channels.config import ChannelConfig
from channels.supervisor import Channels, make_channel
from souls.actor.clock import FixedClock
from souls.actor.mailbox import Mailbox
from souls.config import SoulConfig
from souls.messages import Recall, Stats
from supervisor.errors import SoulUnavailable
from supervisor.outputs import Outputs
from supervisor.registry import Registry, SoulHandle
from supervisor.tree import Supervisor

T0 = 1_780_000_000.0


@asynccontextmanager
async def running_souls(root: Path, *names: str) -> AsyncIterator[Registry]:
    """Souls with every default, each under its own supervisor, in a registry."""
    registry = Registry()
    tree = Supervisor("souls", max_restarts=1_000_000, max_seconds=1.0)
    async with anyio.create_task_group() as tg:
        await tg.start(tree.run)
        for name in names:
            config = SoulConfig()
            handle = SoulHandle(
                name=name,
                config=config,
                db_path=root / name / "soul.db",
                brain_dir=root / name,
                mailbox=Mailbox(name, config.mailbox.capacity),
            )
            registry.add(handle)
            await tree.start_child(handle.child_spec(FixedClock(T0)))
        try:
            yield registry
        finally:
            tg.cancel_scope.cancel()
    for handle in registry.handles():
        handle.mailbox.discard(SoulUnavailable("the test is over"))


@asynccontextmanager
async def running_channels(
    configs: list[ChannelConfig], registry: Registry, outputs: Outputs | None = None
) -> AsyncIterator[Channels]:
    """The channels supervisor over ``configs`` (seeded jitter, so runs repeat)."""
    rng = random.Random(7)

    def factory(config: ChannelConfig, *args: Any) -> Channel:
        return make_channel(config, *args, rng=rng)

    channels = Channels(configs, registry, outputs or Outputs(), factory=factory)
    async with anyio.create_task_group() as tg:
        await tg.start(channels.run)
        yield channels
        tg.cancel_scope.cancel()


async def wait_until(predicate: Callable[[], Any], what: str, bound: float = 10) -> Any:
    """Poll ``predicate`` until truthy; fail after ``bound`` s (a bound, not a measure)."""
    with anyio.fail_after(bound):
        while not (value := predicate()):  # noqa: ASYNC110
            await anyio.sleep(0.01)
    return value


async def events(registry: Registry, soul: str) -> int:
    stats = await registry.lookup(soul).mailbox.ask(Stats(), timeout=10)
    return int(stats.events)


async def recall(registry: Registry, soul: str, query: str) -> list[Any]:
    result = await registry.lookup(soul).mailbox.ask(Recall(query), timeout=10)
    return list(result.items)
