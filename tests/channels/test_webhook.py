"""The webhook channel, over real HTTP on loopback, feeding real souls."""

from __future__ import annotations

import hashlib
import hmac
import json
from pathlib import Path
from typing import Any

import httpx
import pytest
from running import events, recall, running_channels, running_souls, wait_until

from channels.config import WebhookConfig
from channels.webhook import WebhookChannel
from souls.messages import Context

SECRET = "It's a Secret to Everybody"


def sign(body: bytes, secret: str = SECRET) -> str:
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def config(**changes: Any) -> WebhookConfig:
    settings: dict[str, Any] = {"name": "hooks", "souls": ["ada"], "port": 0}
    if "secret_env" not in changes and "secret_file" not in changes:
        settings["allow_unauthenticated"] = True  # the unsigned mode, asked for
    settings.update(changes)
    return WebhookConfig(**settings)


async def post(
    channel: WebhookChannel, body: bytes, headers: dict[str, str] | None = None
) -> httpx.Response:
    url = f"http://{channel.address}/"
    async with httpx.AsyncClient() as client:
        return await client.post(url, content=body, headers=headers or {})


async def started(channels: Any) -> WebhookChannel:
    channel = channels.get("hooks")
    assert isinstance(channel, WebhookChannel)
    await wait_until(lambda: channel.state == "up", "the webhook listens")
    return channel


def github_headers(event: str, body: bytes, delivery: str = "72d3162e-cc78-11e3") -> dict[str, str]:
    return {
        "X-GitHub-Event": event,
        "X-GitHub-Delivery": delivery,
        "X-Hub-Signature-256": sign(body),
        "Content-Type": "application/json",
    }


REPO = {"full_name": "octo/api", "name": "api"}
SENDER = {"login": "kim"}


async def test_signed_event_is_stored_and_answered_200(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOOK_SECRET", SECRET)
    async with (
        running_souls(tmp_path, "ada") as registry,
        running_channels([config(secret_env="HOOK_SECRET")], registry) as channels,
    ):
        channel = await started(channels)
        body = json.dumps({"text": "deploy failed: migration timeout", "ref": "ci-1"}).encode()
        response = await post(channel, body, {"X-Hub-Signature-256": sign(body)})
        assert response.status_code == 200, response.text
        assert response.json() == {"status": "accepted", "ref": "ci-1", "souls": {"ada": "stored"}}
        items = await recall(registry, "ada", "migration")
        assert [i.refs for i in items] == [["ci-1"]]
        # The same delivery again is acknowledged, and stored once.
        again = await post(channel, body, {"X-Hub-Signature-256": sign(body)})
        assert (again.status_code, again.json()["souls"]) == (200, {"ada": "duplicate"})
        secret = json.dumps({"text": "db password=hunter2-correct-horse", "ref": "ci-2"}).encode()
        refused = await post(channel, secret, {"X-Hub-Signature-256": sign(secret)})
        assert refused.json()["souls"] == {"ada": "hygiene.credential"}
        assert await events(registry, "ada") == 1
        assert (channel.stats.stored, channel.stats.duplicate) == (1, 1)


async def test_bad_or_missing_signature_is_401_and_nothing_is_stored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    secret_file = tmp_path / "secret"
    secret_file.write_text(SECRET + "\n")
    secret_file.chmod(0o600)
    async with (
        running_souls(tmp_path, "ada") as registry,
        running_channels([config(secret_file=str(secret_file))], registry) as channels,
    ):
        channel = await started(channels)
        body = json.dumps({"text": "transfer all the money"}).encode()
        wrong = await post(channel, body, {"X-Hub-Signature-256": sign(body, "guess")})
        missing = await post(channel, body)
        tampered = await post(channel, body + b" ", {"X-Hub-Signature-256": sign(body)})
        assert [r.status_code for r in (wrong, missing, tampered)] == [401, 401, 401]
        assert "X-Hub-Signature-256" in wrong.json()["error"]["message"]
        assert await events(registry, "ada") == 0
        assert channel.stats.received == 0
        assert channel.status()["unauthorized"] == 3


async def test_oversized_body_is_413_and_malformed_400(tmp_path: Path) -> None:
    async with (
        running_souls(tmp_path, "ada") as registry,
        running_channels([config(max_body=2048)], registry) as channels,
    ):
        channel = await started(channels)
        big = json.dumps({"text": "x" * 4096}).encode()
        assert (await post(channel, big)).status_code == 413
        assert (await post(channel, b"{not json")).status_code == 400
        assert (await post(channel, b'{"txt": "typo"}')).status_code == 400
        async with httpx.AsyncClient() as client:
            assert (await client.get(f"http://{channel.address}/")).status_code == 405
        assert await events(registry, "ada") == 0


async def test_github_mapping(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOOK_SECRET", SECRET)
    async with (
        running_souls(tmp_path, "ada") as registry,
        running_channels([config(secret_env="HOOK_SECRET")], registry) as channels,
    ):
        channel = await started(channels)

        async def deliver(event: str, payload: dict[str, Any], delivery: str) -> httpx.Response:
            body = json.dumps(payload).encode()
            return await post(channel, body, github_headers(event, body, delivery))

        ping = await deliver("ping", {"zen": "Design for failure.", "hook_id": 1}, "d-0")
        assert ping.json() == {"pong": True}
        issue = {
            "action": "opened",
            "issue": {
                "number": 7,
                "title": "Login page crashes on Safari",
                "body": "Steps:\n1. open",
                "updated_at": "2026-11-29T10:00:00Z",
            },
            "repository": REPO,
            "sender": SENDER,
        }
        assert (await deliver("issues", issue, "d-1")).status_code == 200
        run = {
            "action": "completed",
            "workflow_run": {
                "name": "CI",
                "conclusion": "failure",
                "head_branch": "main",
                "head_sha": "0123456789abcdef",
                "html_url": "https://github.com/octo/api/actions/runs/1",
                "updated_at": "2026-11-29T10:05:00Z",
            },
            "repository": REPO,
            "sender": SENDER,
        }
        assert (await deliver("workflow_run", run, "d-2")).status_code == 200
        green = {**run, "workflow_run": {**run["workflow_run"], "conclusion": "success"}}
        ignored = await deliver("workflow_run", green, "d-3")
        assert (ignored.status_code, ignored.json()["status"]) == (202, "ignored")
        push = {
            "ref": "refs/heads/main",
            "commits": [{"message": "Fix login\n\nlong text"}, {"message": "Bump deps"}],
            "head_commit": {"timestamp": "2026-11-29T10:06:00+01:00"},
            "pusher": {"name": "kim"},
            "repository": REPO,
            "sender": SENDER,
        }
        assert (await deliver("push", push, "d-4")).status_code == 200
        # A redelivery (same GUID) is stored once.
        assert (await deliver("issues", issue, "d-1")).status_code == 200

        texts = {i.refs[0]: i.text for i in await recall(registry, "ada", "octo api")}
        assert texts["github:d-1"] == (
            "octo/api: issue #7 opened by kim: Login page crashes on Safari\nSteps: 1. open"
        )
        assert texts["github:d-2"].startswith("octo/api: workflow 'CI' failed on main at 0123456")
        assert texts["github:d-4"] == "octo/api: kim pushed 2 commits to main: Fix login; Bump deps"
        assert await events(registry, "ada") == 3
        assert channel.stats.skipped == 1


async def test_unacknowledged_event_is_503(tmp_path: Path) -> None:
    async with (
        running_souls(tmp_path, "ada") as registry,
        running_channels([config()], registry) as channels,
    ):
        channel = await started(channels)
        registry.lookup("ada").state = "stopped"  # as while it is being replaced
        body = json.dumps({"text": "hello", "ref": "h-1"}).encode()
        response = await post(channel, body)
        assert response.status_code == 503
        assert response.json()["error"]["code"] == "channel.unacknowledged"
        assert response.headers["retry-after"] == "30"
        assert channel.stats.unacknowledged == 1
        registry.lookup_any("ada").state = "running"
        assert (await post(channel, body)).status_code == 200
        assert await events(registry, "ada") == 1


async def test_transcribed_speech_is_a_voice_event(tmp_path: Path) -> None:
    async with (
        running_souls(tmp_path, "ada") as registry,
        running_channels([config()], registry) as channels,
    ):
        channel = await started(channels)
        body = {"text": "remind me about the dentist", "transcribed": True, "ref": "v-1"}
        assert (await post(channel, json.dumps(body).encode())).status_code == 200
        [item] = await recall(registry, "ada", "dentist")
        assert item.kind == "voice"
        # The context tells the model these words came through speech-to-text.
        context = await registry.lookup("ada").mailbox.ask(Context("dentist"), timeout=10)
        # Recalled or in the summary (it was news: it reflected at once), it keeps its caveat.
        heard = "(heard, via speech-to-text: words may be misheard) remind me about the dentist"
        assert heard in context.text
