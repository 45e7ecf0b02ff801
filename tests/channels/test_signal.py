"""The Signal channel against a fake ``signal-cli daemon --http`` on loopback."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from channel_fakes import FakeSignal, http_server
from running import events, running_channels, running_souls, wait_until

from channels.config import SignalConfig
from channels.signal import SignalChannel
from souls.events import EventIn
from supervisor.outputs import Outputs

ME = "+4790000000"
KIM = "+4791111111"


def config(url: str, **changes: Any) -> SignalConfig:
    settings: dict[str, Any] = {
        "name": "phone",
        "souls": ["ada"],
        "url": url,
        "account": ME,
        "backoff_initial": 0.01,
        "backoff_max": 0.05,
    }
    settings.update(changes)
    return SignalConfig(**settings)


async def test_dm_group_and_mention(tmp_path: Path) -> None:
    signal = FakeSignal(ME)
    async with (
        http_server(signal.handle) as url,
        running_souls(tmp_path, "ada") as registry,
        running_channels([config(url)], registry) as channels,
    ):
        channel = channels.get("phone")
        assert isinstance(channel, SignalChannel)
        seen: list[EventIn] = []
        deliver = channel.deliver

        async def spy(event: EventIn) -> None:
            seen.append(event)
            await deliver(event)

        channel.deliver = spy  # type: ignore[method-assign]
        group = {"groupId": "R3JvdXA=", "type": "DELIVER"}
        signal.message(KIM, "water the plants")
        signal.message(KIM, "dinner at 8?", groupInfo=group)
        mention = {"name": ME, "number": ME, "uuid": "uuid-me", "start": 0, "length": 1}
        signal.message(KIM, "\ufffc can you book it", groupInfo=group, mentions=[mention])
        last = signal.message(KIM, "")  # a reaction or receipt: no text, no event
        await wait_until(lambda: channel.last_event_id == str(last), "all events taken")

        dm, chatter, tagged = seen
        assert (dm.kind, dm.group, dm.mentioned, dm.sender) == ("dm", None, True, "Kim")
        assert (dm.session, dm.ref) == (f"phone:{KIM}", f"signal:{KIM}:1780000000001")
        assert (chatter.kind, chatter.group, chatter.mentioned) == ("message", "R3JvdXA=", False)
        assert tagged.mentioned is True
        assert tagged.session == "phone:group.R3JvdXA="
        assert channel.stats.skipped == 1


async def test_reconnect_replays_from_the_last_acknowledged_event(tmp_path: Path) -> None:
    signal = FakeSignal(ME)
    async with (
        http_server(signal.handle) as url,
        running_souls(tmp_path, "ada") as registry,
        running_channels([config(url)], registry) as channels,
    ):
        channel = channels.get("phone")
        first = signal.message(KIM, "first")
        await wait_until(lambda: channel.last_event_id == str(first), "first taken")
        registry.lookup("ada").state = "stopped"
        signal.message(KIM, "second")
        await wait_until(lambda: channel.stats.unacknowledged >= 1, "refused")
        await wait_until(lambda: str(first) in signal.last_event_ids, "reconnected")
        assert channel.last_event_id == str(first)
        registry.lookup_any("ada").state = "running"
        signal.drop_streams()  # also survives the daemon dropping the stream
        third = signal.message(KIM, "third")
        await wait_until(lambda: channel.last_event_id == str(third), "caught up")
        assert await events(registry, "ada") == 3
        assert signal.last_event_ids[0] is None


async def test_replies_are_json_rpc_sends(tmp_path: Path) -> None:
    signal = FakeSignal(ME)
    outputs = Outputs()
    async with (
        http_server(signal.handle) as url,
        running_souls(tmp_path, "ada") as registry,
        running_channels([config(url)], registry, outputs) as channels,
    ):
        channel = channels.get("phone")
        last = signal.message(KIM, "ping", groupInfo={"groupId": "R3JvdXA="})
        await wait_until(lambda: channel.last_event_id == str(last), "taken")
        outputs.publish("ada", "wakeup", {"text": "to the group"})
        outputs.publish("ada", "reply", {"text": "to Kim", "session": f"phone:{KIM}"})
        await wait_until(lambda: len(signal.rpc) == 2, "two sends")
        first, second = signal.rpc
        assert (first["jsonrpc"], first["method"]) == ("2.0", "send")
        assert first["params"] == {"account": ME, "message": "to the group", "groupId": "R3JvdXA="}
        assert second["params"] == {"account": ME, "message": "to Kim", "recipient": [KIM]}


async def test_unreachable_daemon_is_backoff_in_status(tmp_path: Path) -> None:
    async with (
        http_server(FakeSignal(ME).handle) as url,
        running_souls(tmp_path, "ada") as registry,
    ):
        pass  # the server is gone now: its port refuses connections
    async with (
        running_souls(tmp_path, "ada") as registry,
        running_channels([config(url)], registry) as channels,
    ):
        channel = channels.get("phone")
        await wait_until(lambda: channel.stats.reconnects >= 3, "retries")
        status = channel.status()
        assert status["state"] in ("backoff", "connecting")
        assert status["last_error"].startswith("ConnectError")
        assert status["souls"] == ["ada"]
