"""The chat client and the LLM reflector against a fake model (:mod:`fake_model`)."""

from __future__ import annotations

from contextlib import aclosing
from typing import Any

import anyio
import msgspec
import pytest
import structlog
from fake_model import ERROR, KEY, KEY_ENV, MESSAGES, SLOW, Reply, answer, client, fake_model

from souls.llm.chat import ChatClient, LLMConfig, LLMError, LLMReflector
from souls.mind.reflect import ExtractiveReflector, Observation, Reflector

OBSERVATIONS = [
    Observation(7, "deploy failed: database migration timeout", 0.8, 0.9, "message", "ci", 1.0),
    Observation(8, "when do we migrate the billing db?", 0.9, 0.5, "dm", "ann", 2.0),
    Observation(9, "deploy ok", 0.2, 0.1, "heartbeat", None, 3.0),
]
PREVIOUS = "## Notable\n- billing runs on Postgres 16 [m3]\n"
EXTRACTIVE = ExtractiveReflector()


async def test_answer_and_request() -> None:
    async with fake_model(answer("Hi there.")) as model, aclosing(client(model.url)) as chat:
        assert await chat.complete(MESSAGES) == "Hi there."
        assert chat.last_model == "small"
    (request,) = model.requests
    assert (request.method, request.path) == ("POST", "/v1/chat/completions")
    assert request.headers["authorization"] == f"Bearer {KEY}"
    assert request.headers["content-type"] == "application/json"
    assert request.body["model"] == "small"
    assert request.body["messages"] == MESSAGES
    assert request.body["max_tokens"] == 1024
    assert request.body["stream"] is False


async def test_slow_server_is_retried_then_fails() -> None:
    async with fake_model(SLOW) as model, aclosing(client(model.url, timeout=0.2)) as chat:
        with pytest.raises(LLMError) as failed:
            await chat.complete(MESSAGES)
    assert len(model.requests) == 3
    assert failed.value.code == "llm_unavailable"
    assert "no answer within 0.2 s" in failed.value.message
    assert model.url in failed.value.message
    assert "check" in failed.value.message


@pytest.mark.parametrize(
    "replies",
    [[SLOW], [ERROR, ERROR, Reply(body=b"{not json")], [ERROR]],
    ids=["slow", "500-then-garbage", "always-500"],
)
async def test_reflector_falls_back_to_extractive(replies: list[Reply]) -> None:
    async with fake_model(*replies) as model, aclosing(client(model.url, timeout=0.2)) as chat:
        reflector = LLMReflector(chat, EXTRACTIVE)
        with structlog.testing.capture_logs() as logs:
            summary = await reflector.reflect(PREVIOUS, OBSERVATIONS, 500)
    assert len(model.requests) == 3
    assert summary == EXTRACTIVE.summarise(PREVIOUS, OBSERVATIONS, 500)
    (log,) = logs
    assert log["event"] == "reflect.llm_failed"
    assert log["log_level"] == "warning"
    assert log["fallback"] == "extractive"
    assert model.url in log["error"]
    assert KEY not in repr(logs)


async def test_garbage_is_not_retried() -> None:
    async with fake_model(Reply(body=b"{not json")) as model, aclosing(client(model.url)) as chat:
        with pytest.raises(LLMError, match="malformed answer"):
            await chat.complete(MESSAGES)
    assert len(model.requests) == 1


async def test_an_answer_past_max_answer_bytes_fails_without_being_kept() -> None:
    huge = answer("x" * 300_000)  # a broken or hostile endpoint
    async with (
        fake_model(huge) as model,
        aclosing(client(model.url, max_answer_bytes=100_000)) as chat,
    ):
        with pytest.raises(LLMError, match="over 100000 bytes"):
            await chat.complete(MESSAGES)
    assert len(model.requests) == 1  # not retried: the same server would send it again
    async with fake_model(answer("y" * 50_000)) as model, aclosing(client(model.url)) as chat:
        assert await chat.complete(MESSAGES) == "y" * 50_000


@pytest.mark.parametrize(
    "body", [b'{"choices": []}', b'{"data": 1}', b'{"choices": [{"message": {"content": 3}}]}']
)
async def test_wrong_shape_is_an_error(body: bytes) -> None:
    async with fake_model(Reply(body=body)) as model, aclosing(client(model.url)) as chat:
        with pytest.raises(LLMError):
            await chat.complete(MESSAGES)


async def test_4xx_is_not_retried_but_429_is() -> None:
    async with fake_model(Reply(401, b"{}")) as model, aclosing(client(model.url)) as chat:
        with pytest.raises(LLMError, match="api_key_env"):
            await chat.complete(MESSAGES)
    assert len(model.requests) == 1
    async with fake_model(Reply(429), answer("ok")) as model, aclosing(client(model.url)) as chat:
        assert await chat.complete(MESSAGES) == "ok"
    assert len(model.requests) == 2


async def test_500_then_200_succeeds_on_retry() -> None:
    async with (
        fake_model(ERROR, answer("second time")) as model,
        aclosing(client(model.url)) as chat,
    ):
        assert await chat.complete(MESSAGES) == "second time"
    assert len(model.requests) == 2


async def test_connection_refused_is_retried_then_fails() -> None:
    listener = await anyio.create_tcp_listener(local_host="127.0.0.1", local_port=0)
    port = listener.extra(anyio.abc.SocketAttribute.local_port)
    await listener.aclose()  # nothing listens on the port any more
    async with aclosing(client(f"http://127.0.0.1:{port}/v1")) as chat:
        with pytest.raises(LLMError, match=r"failed 3 time\(s\), last: connection error"):
            await chat.complete(MESSAGES)


async def test_escalation_applies_to_the_call_that_asks_for_it_only() -> None:
    async with (
        fake_model(answer("ok")) as model,
        aclosing(client(model.url, escalation_model="big")) as chat,
    ):
        await chat.complete(MESSAGES, escalate=True)
        assert chat.last_model == "big"
        await chat.complete(MESSAGES)
        assert chat.last_model == "small"
        await chat.chat(MESSAGES, escalate=True)
        await chat.chat(MESSAGES)
    assert [r.body["model"] for r in model.requests] == ["big", "small", "big", "small"]


async def test_escalation_without_an_escalation_model_is_a_no_op() -> None:
    async with fake_model(answer("ok")) as model, aclosing(client(model.url)) as chat:
        await chat.complete(MESSAGES, escalate=True)
    assert model.requests[0].body["model"] == "small"


async def test_escalated_call_keeps_its_model_across_retries() -> None:
    async with (
        fake_model(ERROR, answer("ok")) as model,
        aclosing(client(model.url, escalation_model="big")) as chat,
    ):
        await chat.complete(MESSAGES, escalate=True)
    assert [r.body["model"] for r in model.requests] == ["big", "big"]


async def test_an_escalated_call_does_not_reach_a_call_running_beside_it() -> None:
    """One client, two callers at once (the answer loop's escalated call while the
    soul reflects): only the call that asked goes to the escalation model."""
    slow_then_fast = [Reply(delay=0.3, body=answer("answer").body), answer("summary")]
    async with (
        fake_model(*slow_then_fast) as model,
        aclosing(client(model.url, escalation_model="big")) as chat,
        anyio.create_task_group() as tg,
    ):
        tg.start_soon(lambda: chat.complete(MESSAGES, escalate=True))
        await anyio.sleep(0.05)
        tg.start_soon(lambda: chat.complete(MESSAGES))
    assert [r.body["model"] for r in model.requests] == ["big", "small"]


@pytest.mark.parametrize(
    ("key_env", "environ"),
    [(KEY_ENV, {}), (KEY_ENV, {KEY_ENV: ""}), (None, {KEY_ENV: KEY})],
    ids=["unset", "empty", "no-key-env"],
)
async def test_no_key_no_authorization_header(key_env: str | None, environ: dict[str, str]) -> None:
    async with (
        fake_model(answer("ok")) as model,
        aclosing(client(model.url, environ, api_key_env=key_env)) as chat,
    ):
        await chat.complete(MESSAGES)
    assert "authorization" not in model.requests[0].headers


async def test_key_is_read_at_call_time() -> None:
    environ: dict[str, str] = {}
    async with fake_model(answer("ok")) as model, aclosing(client(model.url, environ)) as chat:
        await chat.complete(MESSAGES)
        environ[KEY_ENV] = "rotated-key"
        await chat.complete(MESSAGES)
    assert "authorization" not in model.requests[0].headers
    assert model.requests[1].headers["authorization"] == "Bearer rotated-key"


async def test_cancellation_is_not_swallowed() -> None:
    async with fake_model(SLOW) as model, aclosing(client(model.url)) as chat:
        reflector = LLMReflector(chat, EXTRACTIVE)
        with anyio.move_on_after(0.1) as scope:
            await reflector.reflect(PREVIOUS, OBSERVATIONS, 500)
        assert scope.cancelled_caught
    assert len(model.requests) == 1


async def test_reflector_uses_the_answer() -> None:
    text = "## Failures and alarms\n- migration timed out [m7]\n## Notable\n- " + "x" * 600
    async with fake_model(answer(text)) as model, aclosing(client(model.url)) as chat:
        reflector: Reflector = LLMReflector(chat, EXTRACTIVE)
        assert reflector.name == "llm"
        with structlog.testing.capture_logs() as logs:
            summary = await reflector.reflect(PREVIOUS, OBSERVATIONS, 300)
    assert logs == []
    # Cut at a line end to fit the budget.
    assert summary == "## Failures and alarms\n- migration timed out [m7]\n## Notable\n"
    system, user = model.requests[0].body["messages"]
    assert system["role"] == "system"
    assert "at most 300 characters" in system["content"]
    assert "[m<id>]" in system["content"]
    assert user["role"] == "user"
    assert PREVIOUS.strip() in user["content"]
    assert "[m7] (0.80, 0.90) ci: deploy failed: database migration timeout" in user["content"]
    assert user["content"].index("[m7]") < user["content"].index("[m8]")  # in time order


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("<think>\nlet me see\n</think>\n\n- kept [m1]", "- kept [m1]\n"),
        ("```markdown\n- kept [m1]\n```", "- kept [m1]\n"),
    ],
)
async def test_reasoning_and_fences_are_unwrapped(content: str, expected: str) -> None:
    async with fake_model(answer(content)) as model, aclosing(client(model.url)) as chat:
        assert await LLMReflector(chat, EXTRACTIVE).reflect("", OBSERVATIONS, 500) == expected


@pytest.mark.parametrize("content", ["", "  \n ", "<think>hmm</think>"])
async def test_empty_answer_falls_back(content: str) -> None:
    async with fake_model(answer(content)) as model, aclosing(client(model.url)) as chat:
        with structlog.testing.capture_logs() as logs:
            summary = await LLMReflector(chat, EXTRACTIVE).reflect(PREVIOUS, OBSERVATIONS, 500)
    assert summary == EXTRACTIVE.summarise(PREVIOUS, OBSERVATIONS, 500)
    assert [log["event"] for log in logs] == ["reflect.llm_failed"]


async def test_no_observations_no_request() -> None:
    async with fake_model(answer("unused")) as model, aclosing(client(model.url)) as chat:
        reflector = LLMReflector(chat, EXTRACTIVE)
        assert await reflector.reflect(PREVIOUS, [], 500) == PREVIOUS
        assert await reflector.reflect("", [], 500) == ""
    assert model.requests == []


def test_config_defaults_mean_no_llm() -> None:
    assert LLMConfig().base_url is None
    with pytest.raises(ValueError, match="base_url is not set"):
        ChatClient(LLMConfig())


@pytest.mark.parametrize(
    ("settings", "problem"),
    [
        ({"base_url": "http://127.0.0.1:8080/v1"}, "model is required"),
        ({"base_url": "127.0.0.1:8080/v1", "model": "m"}, "http:// or https://"),
        ({"api_key_env": "sk-live-abc123"}, "NAME of an environment variable"),
        ({"timeout": 0}, "timeout"),
        ({"retries": -1}, "retries"),
        ({"max_tokens": 0}, "max_tokens"),
        ({"temperature": 3.0}, "temperature"),
    ],
)
def test_config_validation(settings: dict[str, Any], problem: str) -> None:
    with pytest.raises(ValueError, match=problem):
        LLMConfig(**settings)
    with pytest.raises(msgspec.ValidationError, match=problem):
        msgspec.convert(settings, LLMConfig)


def test_config_rejects_unknown_fields() -> None:
    with pytest.raises(msgspec.ValidationError, match="api_key"):
        msgspec.convert({"api_key": "secret"}, LLMConfig)
