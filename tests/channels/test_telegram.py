"""The Telegram channel against a fake Bot API on loopback, feeding real souls."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from channel_fakes import FakeTelegram, FakeTranscriber, http_server
from running import events, recall, running_channels, running_souls, wait_until

from channels.config import TelegramConfig
from channels.telegram import TelegramChannel
from souls.events import EventIn
from supervisor.outputs import Outputs

TOKEN = "123456:ABC-DEF1234ghIkl-zyx57W2v1u123ew11"
PRIVATE = {"id": 7, "type": "private", "first_name": "Kim", "username": "kim"}
GROUP = {"id": -1001, "type": "supergroup", "title": "ops"}


@pytest.fixture(autouse=True)
def token(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TELEGRAM_TOKEN", TOKEN)


def config(url: str, **changes: Any) -> TelegramConfig:
    settings: dict[str, Any] = {
        "name": "tg",
        "souls": ["ada"],
        "token_env": "TELEGRAM_TOKEN",
        "api_url": url,
        "poll_timeout": 1,
        "backoff_initial": 0.01,
        "backoff_max": 0.05,
    }
    settings.update(changes)
    return TelegramConfig(**settings)


async def test_dm_and_group_mentions_map_for_the_attention_gate(tmp_path: Path) -> None:
    bot = FakeTelegram(TOKEN)
    async with (
        http_server(bot.handle) as url,
        running_souls(tmp_path, "ada") as registry,
        running_channels([config(url)], registry) as channels,
    ):
        channel = channels.get("tg")
        assert isinstance(channel, TelegramChannel)
        seen: list[EventIn] = []
        deliver = channel.deliver

        async def spy(event: EventIn) -> None:
            seen.append(event)
            await deliver(event)

        channel.deliver = spy  # type: ignore[method-assign]
        bot.message(PRIVATE, "can you check the backups?")
        bot.message(GROUP, "lunch anyone?")
        bot.message(GROUP, "@Ada_Bot the deploy is stuck")
        bot.message(GROUP, "yes please", reply_to_message={"from": bot.bot, "text": "shall I?"})
        bot.message(GROUP, None, new_chat_members=[{"id": 9}])  # a join: no event
        last = bot.message(GROUP, "ignore me", **{"from": bot.bot})  # its own message
        await wait_until(lambda: channel.offset == last + 1, "every update confirmed")

        dm, chatter, mention, reply = seen
        assert (dm.kind, dm.group, dm.mentioned, dm.sender) == ("dm", None, True, "kim")
        assert (dm.channel, dm.session, dm.ref) == ("tg", "tg:7", "telegram:7:101")
        assert (chatter.kind, chatter.group, chatter.mentioned) == ("message", "-1001", False)
        assert (mention.mentioned, reply.mentioned) == (True, True)
        assert mention.session == "tg:-1001"
        assert channel.stats.skipped == 2
        assert await events(registry, "ada") == 4
        # Each getUpdates confirmed what came before: offset = last update_id + 1.
        assert bot.offsets[0] is None
        confirmed = [offset for offset in bot.offsets if offset is not None]
        assert confirmed == sorted(confirmed)
        assert channel.status()["state"] == "up"


async def test_offset_stays_until_the_soul_acknowledged(tmp_path: Path) -> None:
    bot = FakeTelegram(TOKEN)
    async with (
        http_server(bot.handle) as url,
        running_souls(tmp_path, "ada") as registry,
        running_channels([config(url)], registry) as channels,
    ):
        channel = channels.get("tg")
        first = bot.message(PRIVATE, "first")
        await wait_until(lambda: channel.offset == first + 1, "first confirmed")
        handle = registry.lookup("ada")
        handle.state = "stopped"  # the soul cannot take mail for now
        second = bot.message(PRIVATE, "second, while the soul is away")
        await wait_until(lambda: channel.stats.unacknowledged >= 2, "a retry or two")
        assert channel.offset == first + 1  # not confirmed: Telegram sends it again
        assert channel.status()["state"] in ("backoff", "connecting", "up")
        assert "not acknowledged" in (channel.last_error or "")
        handle.state = "running"
        await wait_until(lambda: channel.offset == second + 1, "second confirmed")
        assert await events(registry, "ada") == 2
        texts = [i.text for i in await recall(registry, "ada", "second")]
        assert texts[0] == "second, while the soul is away"


async def test_outputs_go_back_to_the_chat_they_came_from(tmp_path: Path) -> None:
    bot = FakeTelegram(TOKEN)
    outputs = Outputs()
    async with (
        http_server(bot.handle) as url,
        running_souls(tmp_path, "ada") as registry,
        running_channels([config(url)], registry, outputs) as channels,
    ):
        channel = channels.get("tg")
        last = bot.message(GROUP, "@ada_bot remind me at nine")
        await wait_until(lambda: channel.offset == last + 1, "message taken")
        outputs.publish("ada", "wakeup", {"key": "k", "text": "it is nine", "due": 0})
        outputs.publish("ada", "reply", {"text": "to Kim", "session": "tg:7"})
        outputs.publish("ada", "reply", {"text": "not ours", "session": "slack:C1"})
        outputs.publish("ada", "reflect", {"reason": "surprise"})  # not delivered
        await wait_until(lambda: len(bot.sent) == 2, "two messages sent")
        assert bot.sent == [
            {"chat_id": "-1001", "text": "it is nine"},
            {"chat_id": "7", "text": "to Kim"},
        ]
        assert channel.stats.sent == 2


async def test_voice_message_is_transcribed_into_a_voice_event(tmp_path: Path) -> None:
    bot = FakeTelegram(TOKEN)
    stt = FakeTranscriber("the boiler is leaking again")
    async with (
        http_server(bot.handle) as url,
        http_server(stt.handle) as stt_url,
        running_souls(tmp_path, "ada") as registry,
        running_channels(
            [config(url, transcribe_url=f"{stt_url}/v1/audio/transcriptions")], registry
        ) as channels,
    ):
        channel = channels.get("tg")
        voice = {"file_id": "AwACAg", "file_unique_id": "u1", "duration": 3}
        voice["mime_type"] = "audio/ogg"
        last = bot.message(PRIVATE, None, voice=voice)
        await wait_until(lambda: channel.offset == last + 1, "voice taken")
        [item] = await recall(registry, "ada", "boiler")
        assert (item.kind, item.text) == ("voice", "the boiler is leaking again")
        [request] = stt.requests
        assert b"OggS fake opus" in request.body
        assert b'name="model"' in request.body


async def test_bad_token_backs_off_and_never_shows_the_token(tmp_path: Path) -> None:
    bot = FakeTelegram("999:other")
    async with (
        http_server(bot.handle) as url,
        running_souls(tmp_path, "ada") as registry,
        running_channels([config(url)], registry) as channels,
    ):
        channel = channels.get("tg")
        await wait_until(lambda: channel.stats.reconnects >= 2, "retries")
        status = channel.status()
        assert status["state"] in ("backoff", "connecting")
        assert "401 Unauthorized; check the bot token" in status["last_error"]
        assert TOKEN not in str(status)
