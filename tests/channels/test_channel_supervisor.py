"""The channels supervisor: reloads touch only the channel that changed; a channel
never blocks the outputs hub; the shared pieces (backoff, routing) behave."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import anyio
from running import running_channels, running_souls, wait_until

from channels.base import Backoff, Channel
from channels.config import ChannelConfig, SignalConfig, WebhookConfig
from channels.conversations import Conversations
from supervisor.outputs import Output, Outputs
from supervisor.registry import Registry


def webhook(name: str, **changes: Any) -> WebhookConfig:
    settings = {"name": name, "souls": ["ada"], "port": 0, "allow_unauthenticated": True}
    return WebhookConfig(**{**settings, **changes})


async def test_reload_starts_restarts_and_stops_only_what_changed(tmp_path: Path) -> None:
    async with (
        running_souls(tmp_path, "ada", "bob") as registry,
        running_channels([webhook("a"), webhook("b"), webhook("c")], registry) as channels,
    ):
        await wait_until(lambda: all(s["state"] == "up" for s in channels.status()), "all up")
        a, b, c = channels.get("a"), channels.get("b"), channels.get("c")
        address_a = a.status()["address"]
        channels.conversations.note("bob", "b", "chat-1")
        channels.conversations.note("ada", "c", "chat-2")
        await channels.apply([webhook("a"), webhook("b", souls=["bob"]), webhook("d")])
        await wait_until(lambda: all(s["state"] == "up" for s in channels.status()), "all up")
        assert channels.get("a") is a  # untouched: same object, same listener
        assert a.status()["address"] == address_a
        assert channels.get("b") is not b  # changed: restarted with the new souls
        assert channels.get("b").config.souls == ["bob"]
        assert (b.state, c.state) == ("stopped", "stopped")
        assert [s["name"] for s in channels.status()] == ["a", "b", "d"]
        # A changed channel keeps its chats; a removed one's are forgotten.
        assert channels.conversations.latest("bob") == ("b", "chat-1")
        assert channels.conversations.latest("ada") is None


async def test_a_channel_whose_code_keeps_crashing_fails_alone(tmp_path: Path) -> None:
    class Broken(Channel):
        kind = "broken"

        async def run(self, task_status: Any) -> None:
            task_status.started()
            raise RuntimeError("a bug")

    def factory(config: ChannelConfig, *args: Any) -> Channel:
        if config.name == "bad":
            return Broken(config, *args)
        from channels.supervisor import make_channel

        return make_channel(config, *args)

    from channels.supervisor import Channels

    async with running_souls(tmp_path, "ada") as registry:
        channels = Channels([webhook("bad"), webhook("good")], registry, Outputs(), factory=factory)
        async with anyio.create_task_group() as tg:
            await tg.start(channels.run)
            bad, good = channels.get("bad"), channels.get("good")
            await wait_until(lambda: bad.state == "failed", "the broken one failed")
            assert "a bug" in (bad.last_error or "")
            await wait_until(lambda: good.state == "up", "the other runs on")
            tg.cancel_scope.cancel()


async def test_a_stuck_upstream_never_blocks_the_hub(tmp_path: Path) -> None:
    """Outputs to a channel whose sends hang pile up to the outbox bound, then are
    dropped and counted; publishing never waits."""
    stuck = anyio.Event()

    class Hanging(Channel):
        kind = "hanging"

        async def serve(self) -> None:
            self.up()
            await anyio.sleep_forever()

        async def send(self, conversation: str, text: str) -> None:
            await stuck.wait()

    config = SignalConfig(name="slow", souls=["ada"], account="+1", outbox=2)
    outputs = Outputs()
    from channels.supervisor import Channels

    async with running_souls(tmp_path, "ada") as registry:
        channels = Channels([config], registry, outputs, factory=Hanging)
        async with anyio.create_task_group() as tg:
            await tg.start(channels.run)
            channel = channels.get("slow")
            for i in range(50):
                outputs.publish("ada", "reply", {"text": f"n{i}", "session": "slow:+2"})
            await wait_until(lambda: channel.stats.outbox_overflow > 0, "overflow counted")
            status = channel.status()
            assert status["outbox_queued"] <= 2
            assert status["sent"] == 0
            # One in hand, two queued; the rest dropped (by the outbox or the
            # subscription buffer, each counted).
            await wait_until(
                lambda: channel.stats.outbox_overflow >= 50 - 3 - config.outbox, "all counted"
            )
            stuck.set()
            await wait_until(lambda: channel.stats.sent >= 1, "sends resume")
            tg.cancel_scope.cancel()


def test_backoff_doubles_with_jitter_up_to_the_cap() -> None:
    backoff = Backoff(1.0, 8.0, random.Random(1))
    delays = [backoff.next() for _ in range(7)]
    ceilings = [1, 2, 4, 8, 8, 8, 8]
    assert all(c / 2 <= d <= c for d, c in zip(delays, ceilings, strict=True))
    assert len(set(delays)) == len(delays)  # jittered
    backoff.reset()
    assert 0.5 <= backoff.next() <= 1.0


def test_outputs_find_their_conversation() -> None:
    conversations = Conversations()
    config = SignalConfig(name="phone", souls=["ada", "bob"], account="+1")
    channel = Channel(config, Registry(), Outputs(), conversations)

    def out(soul: str, **payload: Any) -> Output:
        return Output(soul, "reply", 0.0, payload)

    assert channel.route(out("ada", session="phone:+2")) == "+2"
    assert channel.route(out("ada", session="tg:7")) is None  # another channel's
    assert channel.route(out("ada")) is None  # nowhere known yet: counted
    assert channel.stats.unroutable == 1
    conversations.note("ada", "phone", "group.G")
    conversations.note("bob", "tg", "7")
    assert channel.route(out("ada")) == "group.G"
    assert channel.route(out("bob")) is None  # bob last spoke on Telegram
