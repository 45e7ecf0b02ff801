"""The Signal channel: a local ``signal-cli daemon --http``.

Incoming messages are the Server-Sent Events of ``GET /api/v1/events``; answers are
JSON-RPC ``send`` calls on ``POST /api/v1/rpc``. signal-cli keeps its last events and
replays those after the id a reconnecting client names in ``Last-Event-ID``; the
channel names the last event every soul acknowledged, so an event the souls did not
take comes again after the reconnect (its ref, ``signal:<sender>:<timestamp>``,
keeps that idempotent).

A message with ``groupInfo`` is a group message, ``mentioned`` when its ``mentions``
name the account; any other is a ``dm``.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import AsyncIterator
from typing import Any

import httpx

from channels.base import Channel, ChannelError, chat_event
from channels.config import SignalConfig
from souls.events import EventIn

__all__ = ["SignalChannel"]


class SignalChannel(Channel):
    kind = "signal"
    config: SignalConfig

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # The id of the last event the souls acknowledged; kept across reconnects.
        self.last_event_id: str | None = None
        self._ids = itertools.count(1)

    def details(self) -> dict[str, Any]:
        return {"last_event_id": self.last_event_id}

    async def serve(self) -> None:
        headers = {"accept": "text/event-stream"}
        if self.last_event_id is not None:
            headers["last-event-id"] = self.last_event_id
        timeout = httpx.Timeout(30, read=None)  # the stream may be quiet for days
        async with (
            httpx.AsyncClient(timeout=timeout) as client,
            client.stream("GET", f"{self.config.url}/api/v1/events", headers=headers) as response,
        ):
            if response.status_code != 200:
                raise ChannelError(
                    f"signal: GET /api/v1/events answered {response.status_code}; is "
                    f"signal-cli running as `daemon --http` at {self.config.url}?"
                )
            self.up()
            async for event_id, data in _server_sent_events(response.aiter_lines()):
                event = self._event(json.loads(data)) if data else None
                if event is None:
                    self.stats.skipped += 1
                else:
                    await self.deliver(event)  # raises: reconnect, replay from the last id
                if event_id is not None:
                    self.last_event_id = event_id
        raise ChannelError("signal: the event stream ended")

    def _event(self, data: Any) -> EventIn | None:
        envelope = data.get("envelope") if isinstance(data, dict) else None
        account = self.config.account
        if not isinstance(envelope, dict) or data.get("account", account) != account:
            return None
        message = envelope.get("dataMessage")
        if not isinstance(message, dict) or not message.get("message"):
            return None  # receipts, typing, reactions, sync messages
        source = envelope.get("sourceNumber") or envelope.get("source") or envelope["sourceUuid"]
        if account in (source, envelope.get("sourceUuid")):
            return None
        group = (message.get("groupInfo") or {}).get("groupId")
        mentions = message.get("mentions") or []
        timestamp = envelope.get("timestamp") or message["timestamp"]
        return chat_event(
            self.name,
            text=message["message"],
            conversation=f"group.{group}" if group else source,
            ref=f"signal:{source}:{timestamp}",
            sender=envelope.get("sourceName") or source,
            group=group,
            mentioned=any(account in (m.get("number"), m.get("uuid")) for m in mentions),
            ts=timestamp / 1000,
        )

    async def send(self, conversation: str, text: str) -> None:
        params: dict[str, Any] = {"account": self.config.account, "message": text}
        if conversation.startswith("group."):
            params["groupId"] = conversation.removeprefix("group.")
        else:
            params["recipient"] = [conversation]
        request = {"jsonrpc": "2.0", "id": next(self._ids), "method": "send", "params": params}
        try:
            async with httpx.AsyncClient(timeout=30) as client:
                response = await client.post(f"{self.config.url}/api/v1/rpc", json=request)
                answer = response.json()
        except (httpx.HTTPError, ValueError) as exc:
            raise ChannelError(f"signal send: {type(exc).__name__}: {exc}") from None
        if not isinstance(answer, dict) or "error" in answer:
            error = answer.get("error") if isinstance(answer, dict) else response.status_code
            raise ChannelError(f"signal send: {error}")


async def _server_sent_events(lines: AsyncIterator[str]) -> AsyncIterator[tuple[str | None, str]]:
    """``(id, data)`` per event of a text/event-stream (comments and retry ignored)."""
    event_id: str | None = None
    data: list[str] = []
    async for line in lines:
        if not line:
            if data:
                yield event_id, "\n".join(data)
            event_id, data = None, []
            continue
        field, _, value = line.partition(":")
        value = value.removeprefix(" ")
        if field == "data":
            data.append(value)
        elif field == "id":
            event_id = value
