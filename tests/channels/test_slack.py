"""The Slack channel against a fake Web API and Socket Mode WebSocket on loopback."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from channel_fakes import FakeSlack, slack_server
from running import events, recall, running_channels, running_souls, wait_until

from channels.config import SlackConfig
from supervisor.outputs import Outputs

APP, BOT = "xapp-1-A1-fake", "xoxb-fake"


@pytest.fixture(autouse=True)
def tokens(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("SLACK_APP_TOKEN", APP)
    (tmp_path / "bot").write_text(BOT)
    (tmp_path / "bot").chmod(0o600)


def config(url: str, tmp_path: Path, **changes: Any) -> SlackConfig:
    settings: dict[str, Any] = {
        "name": "work",
        "souls": ["ada"],
        "app_token_env": "SLACK_APP_TOKEN",
        "bot_token_file": str(tmp_path / "bot"),
        "api_url": url,
        "backoff_initial": 0.01,
        "backoff_max": 0.05,
    }
    settings.update(changes)
    return SlackConfig(**settings)


def message(text: str, ts: str, **extra: Any) -> dict[str, Any]:
    return {"type": "message", "user": "U123", "text": text, "ts": ts, **extra}


async def test_envelopes_are_acked_after_the_soul_stored_them(tmp_path: Path) -> None:
    slack = FakeSlack(APP, BOT)
    async with (
        slack_server(slack) as url,
        running_souls(tmp_path, "ada") as registry,
        running_channels([config(url, tmp_path)], registry) as channels,
    ):
        channel = channels.get("work")
        await wait_until(lambda: channel.state == "up", "hello received")
        dm = slack.event(message("are the backups ok?", "1.1", channel="D1", channel_type="im"))
        chatter = slack.event(message("lunch?", "1.2", channel="C1", channel_type="channel"))
        tagged = slack.event(message("<@UBOT> deploy stuck", "1.3", channel="C1"))
        mention = {"type": "app_mention", "user": "U123", "text": "<@UBOT> deploy stuck"}
        # The same message as app_mention: acknowledged, stored once (same ref).
        again = slack.event({**mention, "ts": "1.3", "channel": "C1"})
        edit = slack.event({**message("x", "1.4", channel="C1"), "subtype": "message_changed"})
        own = slack.event(message("I said this", "1.5", channel="C1", bot_id="B1"))
        wanted = [dm, chatter, tagged, again, edit, own]
        await wait_until(lambda: slack.acks == wanted, "every envelope acked in order")
        assert await events(registry, "ada") == 3
        assert (channel.stats.stored, channel.stats.duplicate, channel.stats.skipped) == (3, 1, 2)
        found = await recall(registry, "ada", "backups")
        assert found[0].refs == ["slack:D1:1.1"]


async def test_unacknowledged_envelope_is_not_acked(tmp_path: Path) -> None:
    slack = FakeSlack(APP, BOT)
    async with (
        slack_server(slack) as url,
        running_souls(tmp_path, "ada") as registry,
        running_channels([config(url, tmp_path)], registry) as channels,
    ):
        channel = channels.get("work")
        await wait_until(lambda: channel.state == "up", "hello received")
        registry.lookup("ada").state = "stopped"
        lost = slack.event(message("while away", "2.1", channel="D1", channel_type="im"))
        await wait_until(lambda: channel.stats.unacknowledged == 1, "refused")
        registry.lookup_any("ada").state = "running"
        # Slack retries an unacknowledged envelope (retry_attempt 1): now it is taken.
        retry = slack.event(message("while away", "2.1", channel="D1", channel_type="im"))
        await wait_until(lambda: slack.acks == [retry], "the retry acked")
        assert lost not in slack.acks
        assert await events(registry, "ada") == 1


async def test_disconnect_reconnects_with_a_fresh_url(tmp_path: Path) -> None:
    slack = FakeSlack(APP, BOT)
    async with (
        slack_server(slack) as url,
        running_souls(tmp_path, "ada") as registry,
        running_channels([config(url, tmp_path)], registry) as channels,
    ):
        channel = channels.get("work")
        await wait_until(lambda: channel.state == "up", "hello received")
        slack.disconnect()
        await wait_until(lambda: slack.connections == 2, "a second connection")
        after = slack.event(message("after the refresh", "3.1", channel="D1", channel_type="im"))
        await wait_until(lambda: slack.acks == [after], "acked on the new connection")
        assert channel.stats.reconnects == 0  # a requested refresh is no failure


async def test_replies_go_to_the_channel_and_thread(tmp_path: Path) -> None:
    slack = FakeSlack(APP, BOT)
    outputs = Outputs()
    async with (
        slack_server(slack) as url,
        running_souls(tmp_path, "ada") as registry,
        running_channels([config(url, tmp_path)], registry, outputs) as channels,
    ):
        channel = channels.get("work")
        await wait_until(lambda: channel.state == "up", "hello received")
        asked = slack.event({**message("<@UBOT> status?", "4.2", channel="C9"), "thread_ts": "4.1"})
        await wait_until(lambda: slack.acks == [asked], "taken")
        outputs.publish("ada", "wakeup", {"text": "standup in 5"})
        outputs.publish("ada", "reply", {"text": "in a DM", "session": "work:D1"})
        await wait_until(lambda: len(slack.posted) == 2, "posted")
        assert slack.posted == [
            {"channel": "C9", "text": "standup in 5", "thread_ts": "4.1"},
            {"channel": "D1", "text": "in a DM"},
        ]


async def test_bad_token_is_reported(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SLACK_APP_TOKEN", "xapp-wrong")
    slack = FakeSlack(APP, BOT)
    async with (
        slack_server(slack) as url,
        running_souls(tmp_path, "ada") as registry,
        running_channels([config(url, tmp_path)], registry) as channels,
    ):
        channel = channels.get("work")
        await wait_until(lambda: channel.stats.reconnects >= 2, "retries")
        error = channel.status()["last_error"]
        assert error == "slack apps.connections.open: invalid_auth; check the token"
