"""The Telegram channel: Bot API long polling (``getUpdates``) and ``sendMessage``.

A private chat is a ``dm``; in a group, the bot is ``mentioned`` by its @username
or by a reply to one of its messages. The offset passed to ``getUpdates`` — which is
what confirms updates to Telegram — only moves past an update once every soul
acknowledged it: an update the souls did not take is fetched again (its ref,
``telegram:<chat>:<message>``, keeps that idempotent). A voice message is
transcribed by the configured transcriber (OpenAI-compatible) into a ``voice`` event.
"""

from __future__ import annotations

import re
from typing import Any

import httpx

from channels.base import Channel, ChannelError, chat_event
from channels.config import TelegramConfig, read_secret
from souls.events import EventIn

__all__ = ["TelegramChannel"]

# Telegram refuses longer messages.
_MAX_TEXT = 4096


class TelegramChannel(Channel):
    kind = "telegram"
    config: TelegramConfig

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # The next update to fetch; kept across reconnects so only unacknowledged
        # updates come again.
        self.offset: int | None = None
        self._me_id: int | None = None
        self._mention: re.Pattern[str] | None = None

    def details(self) -> dict[str, Any]:
        return {"offset": self.offset}

    async def serve(self) -> None:
        c = self.config
        token = await read_secret(c.name, "token", c.token_env, c.token_file)
        async with httpx.AsyncClient(timeout=c.poll_timeout + 15) as client:
            me = await self._call(client, token, "getMe", {})
            self._me_id = me["id"]
            self._mention = re.compile(rf"@{re.escape(me['username'])}\b", re.IGNORECASE)
            self.up()
            while True:
                params: dict[str, Any] = {"timeout": c.poll_timeout, "allowed_updates": ["message"]}
                if self.offset is not None:
                    params["offset"] = self.offset
                for update in await self._call(client, token, "getUpdates", params):
                    event = await self._event(client, token, update)
                    if event is None:
                        self.stats.skipped += 1
                    else:
                        await self.deliver(event)  # raises: the offset stays put
                    self.offset = update["update_id"] + 1

    async def send(self, conversation: str, text: str) -> None:
        c = self.config
        token = await read_secret(c.name, "token", c.token_env, c.token_file)
        async with httpx.AsyncClient(timeout=30) as client:
            params = {"chat_id": conversation, "text": text[:_MAX_TEXT]}
            await self._call(client, token, "sendMessage", params)

    async def _event(self, client: httpx.AsyncClient, token: str, update: Any) -> EventIn | None:
        message = update.get("message")
        if not isinstance(message, dict):
            return None
        sender = message.get("from") or {}
        if sender.get("id") == self._me_id:
            return None
        text = message.get("text") or message.get("caption")
        voice = text is None and isinstance(message.get("voice"), dict)
        if voice:
            text = await self._transcribe(client, token, message["voice"])
        if not text:
            return None
        chat = message["chat"]
        private = chat["type"] == "private"
        replied = (message.get("reply_to_message") or {}).get("from") or {}
        assert self._mention is not None
        return chat_event(
            self.name,
            text=text,
            conversation=str(chat["id"]),
            ref=f"telegram:{chat['id']}:{message['message_id']}",
            sender=sender.get("username") or sender.get("first_name") or str(sender.get("id")),
            group=None if private else str(chat["id"]),
            mentioned=bool(self._mention.search(text)) or replied.get("id") == self._me_id,
            ts=message.get("date"),
            voice=voice,
        )

    async def _transcribe(self, client: httpx.AsyncClient, token: str, voice: Any) -> str | None:
        """The voice message's text, or None (no transcriber, or it failed: logged)."""
        url = self.config.transcribe_url
        if url is None:
            return None
        try:
            found = await self._call(client, token, "getFile", {"file_id": voice["file_id"]})
            path = found["file_path"]
            audio = await client.get(f"{self.config.api_url}/file/bot{token}/{path}")
            audio.raise_for_status()
            files = {"file": (path.rsplit("/", 1)[-1], audio.content, voice.get("mime_type"))}
            data = {"model": self.config.transcribe_model}
            answer = await client.post(url, files=files, data=data)
            answer.raise_for_status()
            text = answer.json()["text"]
        except (httpx.HTTPError, ChannelError, KeyError, ValueError) as exc:
            error = str(exc).replace(token, "…")
            self.log.warning("telegram.transcribe_failed", error=f"{type(exc).__name__}: {error}")
            return None
        return str(text).strip() or None

    async def _call(
        self, client: httpx.AsyncClient, token: str, method: str, params: dict[str, Any]
    ) -> Any:
        """One Bot API call; ChannelError (token never shown) unless it answered ok."""
        try:
            response = await client.post(f"{self.config.api_url}/bot{token}/{method}", json=params)
            answer = response.json()
        except (httpx.HTTPError, ValueError) as exc:
            error = str(exc).replace(token, "…")
            raise ChannelError(f"telegram {method}: {type(exc).__name__}: {error}") from None
        if not isinstance(answer, dict) or not answer.get("ok"):
            code = answer.get("error_code") if isinstance(answer, dict) else response.status_code
            what = answer.get("description") if isinstance(answer, dict) else "not a Bot API reply"
            hint = "; check the bot token" if code == 401 else ""
            raise ChannelError(f"telegram {method}: {code} {what}{hint}")
        return answer["result"]
