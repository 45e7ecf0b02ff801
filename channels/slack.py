"""The Slack channel: Socket Mode in, ``chat.postMessage`` out.

``apps.connections.open`` (app-level token) returns a single-use ``wss://`` URL; the
WebSocket then carries ``hello``, ``disconnect`` (connect again at once) and
``events_api`` envelopes. An envelope is acknowledged (``{"envelope_id": …}``) only
after every soul acknowledged its event; one left unacknowledged is sent again by
Slack, and its ref (``slack:<channel>:<ts>``) keeps that idempotent — also when the
same message arrives both as ``message`` and as ``app_mention``.

A DM is ``channel_type: im``; elsewhere the bot is ``mentioned`` by an
``app_mention`` event or a ``<@BOTID>`` in the text. An answer goes back to the
channel, in the thread when the message was in one.
"""

from __future__ import annotations

import json
from typing import Any

import httpx
from websockets.asyncio.client import connect

from channels.base import Channel, ChannelError, NotAcknowledged, chat_event
from channels.config import SlackConfig, read_secret
from souls.events import EventIn
from souls.intake.field_screen import shown

__all__ = ["SlackChannel"]


class SlackChannel(Channel):
    kind = "slack"
    config: SlackConfig

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._bot_user: str | None = None

    async def serve(self) -> None:
        c = self.config
        app_token = await read_secret(c.name, "app_token", c.app_token_env, c.app_token_file)
        bot_token = await read_secret(c.name, "bot_token", c.bot_token_env, c.bot_token_file)
        async with httpx.AsyncClient(timeout=30) as client:
            self._bot_user = (await self._call(client, bot_token, "auth.test", {}))["user_id"]
            while True:  # each disconnect message: a fresh URL, at once
                url = (await self._call(client, app_token, "apps.connections.open", {}))["url"]
                if not await self._session(url):
                    raise ChannelError("slack: the Socket Mode connection closed")

    async def _session(self, url: str) -> bool:
        """Relay one WebSocket; True when Slack asked to reconnect (``disconnect``)."""
        async with connect(url, open_timeout=30) as ws:
            async for raw in ws:
                message = json.loads(raw)
                kind = message.get("type")
                if kind == "hello":
                    self.up()
                elif kind == "disconnect":
                    self.log.info("slack.disconnect", reason=message.get("reason"))
                    return True
                elif "envelope_id" in message and await self._envelope(message):
                    await ws.send(json.dumps({"envelope_id": message["envelope_id"]}))
        return False

    async def _envelope(self, message: dict[str, Any]) -> bool:
        """Handle one envelope; whether to acknowledge it."""
        event = None
        if message.get("type") == "events_api":
            event = self._event(message["payload"]["event"])
        if event is None:
            self.stats.skipped += 1
            return True
        try:
            await self.deliver(event)
        except NotAcknowledged as exc:
            self.log.warning("slack.unacknowledged", ref=shown(event.ref), error=exc.message)
            return False
        return True

    def _event(self, event: dict[str, Any]) -> EventIn | None:
        kind = event.get("type")
        if kind not in ("message", "app_mention") or event.get("subtype") or event.get("bot_id"):
            return None  # edits, joins, bots (this one too) are no one speaking
        user, text = event.get("user"), event.get("text")
        if not text or user == self._bot_user:
            return None
        channel = event["channel"]
        private = event.get("channel_type") == "im"
        thread = event.get("thread_ts")
        return chat_event(
            self.name,
            text=text,
            conversation=f"{channel}/{thread}" if thread else channel,
            ref=f"slack:{channel}:{event['ts']}",
            sender=user,
            group=None if private else channel,
            mentioned=kind == "app_mention" or f"<@{self._bot_user}>" in text,
            ts=float(event["ts"]),
        )

    async def send(self, conversation: str, text: str) -> None:
        c = self.config
        token = await read_secret(c.name, "bot_token", c.bot_token_env, c.bot_token_file)
        channel, _, thread = conversation.partition("/")
        params = {"channel": channel, "text": text}
        if thread:
            params["thread_ts"] = thread
        async with httpx.AsyncClient(timeout=30) as client:
            await self._call(client, token, "chat.postMessage", params)

    async def _call(
        self, client: httpx.AsyncClient, token: str, method: str, params: dict[str, Any]
    ) -> Any:
        """One Web API call; ChannelError unless Slack answered ``ok``."""
        try:
            response = await client.post(
                f"{self.config.api_url}/{method}",
                json=params,
                headers={"authorization": f"Bearer {token}"},
            )
            answer = response.json()
        except (httpx.HTTPError, ValueError) as exc:
            raise ChannelError(f"slack {method}: {type(exc).__name__}: {exc}") from None
        if not isinstance(answer, dict) or not answer.get("ok"):
            error = answer.get("error") if isinstance(answer, dict) else response.status_code
            hint = "; check the token" if error in ("invalid_auth", "not_authed") else ""
            raise ChannelError(f"slack {method}: {error}{hint}")
        return answer
