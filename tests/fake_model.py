"""A fake chat model for tests: a real HTTP/1.1 server on loopback that answers from a
script, one reply per request (the last one repeats), and a client configured for it."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import anyio
import anyio.abc
from anyio.streams.buffered import BufferedByteReceiveStream

from souls.llm.chat import ChatClient, LLMConfig

KEY_ENV = "SOUPD_TEST_LLM_KEY"
KEY = "test-key-0123456789abcdef"
MESSAGES = [{"role": "user", "content": "hello"}]


@dataclass(frozen=True)
class Reply:
    status: int = 200
    body: bytes = b""
    delay: float = 0.0


def answer(content: str) -> Reply:
    choice = {"index": 0, "message": {"role": "assistant", "content": content}}
    return Reply(body=json.dumps({"id": "x", "choices": [choice]}).encode())


SLOW = Reply(delay=60.0, body=answer("too late").body)  # cancelled when the test ends
ERROR = Reply(500, b'{"error": "overloaded"}')


@dataclass(frozen=True)
class Request:
    method: str
    path: str
    headers: dict[str, str]  # lowercase names
    body: dict[str, Any]


@dataclass
class FakeModel:
    replies: list[Reply]
    url: str = ""
    requests: list[Request] = field(default_factory=list)

    async def handle(self, stream: anyio.abc.SocketStream) -> None:
        async with stream:
            received = BufferedByteReceiveStream(stream)
            try:
                head = (await received.receive_until(b"\r\n\r\n", 65536)).decode()
                start, *lines = head.split("\r\n")
                headers = {}
                for line in lines:
                    name, _, value = line.partition(":")
                    headers[name.strip().lower()] = value.strip()
                body = await received.receive_exactly(int(headers.get("content-length", "0")))
            except (anyio.EndOfStream, anyio.IncompleteRead, anyio.BrokenResourceError):
                return
            method, path, _ = start.split(" ")
            reply = self.replies[min(len(self.requests), len(self.replies) - 1)]
            self.requests.append(Request(method, path, headers, json.loads(body)))
            await anyio.sleep(reply.delay)
            head = (
                f"HTTP/1.1 {reply.status} Whatever\r\nContent-Type: application/json\r\n"
                f"Content-Length: {len(reply.body)}\r\nConnection: close\r\n\r\n"
            )
            try:
                await stream.send(head.encode() + reply.body)
            except (anyio.BrokenResourceError, anyio.ClosedResourceError):
                return


@asynccontextmanager
async def fake_model(*replies: Reply) -> AsyncIterator[FakeModel]:
    model = FakeModel(list(replies))
    listener = await anyio.create_tcp_listener(local_host="127.0.0.1", local_port=0)
    model.url = f"http://127.0.0.1:{listener.extra(anyio.abc.SocketAttribute.local_port)}/v1"
    async with listener, anyio.create_task_group() as tg:
        tg.start_soon(listener.serve, model.handle)
        try:
            yield model
        finally:
            tg.cancel_scope.cancel()


def config(url: str, **overrides: Any) -> LLMConfig:
    settings: dict[str, Any] = {
        "base_url": url,
        "model": "small",
        "api_key_env": KEY_ENV,
        "timeout": 5.0,
        "retries": 2,
        "backoff": 0.01,
    }
    return LLMConfig(**(settings | overrides))


def client(url: str, environ: dict[str, str] | None = None, **overrides: Any) -> ChatClient:
    env = {KEY_ENV: KEY} if environ is None else environ
    return ChatClient(config(url, **overrides), environ=env)
