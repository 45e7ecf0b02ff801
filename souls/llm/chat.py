"""An OpenAI-compatible chat client and the LLM reflector (DESIGN §3.4, §3.7).

``ChatClient.complete`` POSTs ``{base_url}/chat/completions`` (llama.cpp server, Ollama,
vLLM, hosted APIs) and returns ``choices[0].message.content``. Each attempt is bounded
by ``timeout`` as a whole, not only per read. A timeout, a connection error, a 5xx or a
429 is retried up to ``retries`` times after a backoff of ``backoff``, doubling each
time; any other 4xx or a malformed answer fails at once. Every failure is one
``LLMError`` (code ``llm_unavailable``) whose message names the URL, what went wrong and
what to check. Cancellation is never caught.

The API key lives in the environment variable that ``api_key_env`` names; it is read at
call time, sent as ``Authorization: Bearer <key>``, and never logged or put in an error.

``LLMReflector`` never raises an LLMError: on a failure or an empty answer it logs
``reflect.llm_failed`` and returns its fallback reflector's summary instead.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from typing import Any

import anyio
import httpx
import msgspec
import structlog

from souls.embed.bounded import post_bounded
from souls.mind.reflect import Observation, Reflector
from supervisor.errors import SoupdError

__all__ = ["ChatClient", "ChatTurn", "LLMConfig", "LLMError", "LLMReflector", "ToolCall"]

_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


class LLMConfig(msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    # Endpoint root ending in /v1, e.g. "http://127.0.0.1:8080/v1"; None means no LLM.
    base_url: str | None = None
    # Model name sent with every request; required when base_url is set.
    model: str = ""
    # NAME of the environment variable holding the API key (never the key); None = no key.
    api_key_env: str | None = None
    # Seconds one attempt may take from connect to the last byte of the answer.
    timeout: float = 30.0
    # Extra attempts after the first, on a timeout, connection error, 5xx or 429.
    retries: int = 2
    # Seconds to wait before the first retry; doubles before each further retry.
    backoff: float = 0.5
    # Model for a call made on a low-confidence signal: the answer's first call when the
    # soul is unsure of the message's topic (never a reflect or a judge); None = never.
    escalation_model: str | None = None
    # Upper bound on the answer's length, in tokens.
    max_tokens: int = 1024
    # Sampling temperature; low, because a summary should be stable.
    temperature: float = 0.2
    # The longest answer read, in bytes: a server sending more (a broken or hostile
    # endpoint) fails the call once that much has arrived, never filling memory.
    max_answer_bytes: int = 4 << 20

    def __post_init__(self) -> None:
        if self.base_url is not None:
            if not self.base_url.startswith(("http://", "https://")):
                raise ValueError("base_url must start with http:// or https://")
            if not self.model:
                raise ValueError("model is required when base_url is set")
        if self.api_key_env is not None and _ENV_NAME.fullmatch(self.api_key_env) is None:
            raise ValueError(
                "api_key_env must be the NAME of an environment variable (like "
                "OPENAI_API_KEY), never the key itself"
            )
        if self.timeout <= 0:
            raise ValueError("timeout must be positive")
        if self.retries < 0:
            raise ValueError("retries must be at least 0")
        if self.backoff < 0:
            raise ValueError("backoff must not be negative")
        if self.max_tokens < 1:
            raise ValueError("max_tokens must be at least 1")
        if not 0.0 <= self.temperature <= 2.0:
            raise ValueError("temperature must be between 0 and 2")
        if self.max_answer_bytes < 1024:
            raise ValueError("max_answer_bytes must be at least 1024")


class LLMError(SoupdError):
    """The LLM endpoint could not give an answer; the message says what to check."""

    code = "llm_unavailable"


class _Function(msgspec.Struct):
    name: str
    arguments: str = "{}"  # JSON text, as the API sends it


class _ToolCall(msgspec.Struct):
    id: str
    function: _Function


class _Message(msgspec.Struct):
    content: str | None = None
    tool_calls: list[_ToolCall] | None = None


class _Choice(msgspec.Struct):
    message: _Message


class _Usage(msgspec.Struct):
    total_tokens: int = 0


class _Completion(msgspec.Struct):
    choices: list[_Choice]
    usage: _Usage | None = None


class ToolCall(msgspec.Struct, frozen=True):
    """A function the model asks to call: its call id, name and JSON arguments."""

    id: str
    name: str
    arguments: str


class ChatTurn(msgspec.Struct, frozen=True):
    """One answer of the model: text and/or tool calls, and the tokens it cost."""

    content: str
    tool_calls: list[ToolCall]
    tokens: int


class _Retryable(Exception):
    """One failed attempt that another attempt may fix; ``args[0]`` says what failed."""


class ChatClient:
    """One HTTP connection pool to one endpoint; close it with ``aclose``."""

    def __init__(
        self,
        config: LLMConfig,
        *,
        transport: httpx.AsyncBaseTransport | None = None,
        environ: Mapping[str, str] = os.environ,
    ) -> None:
        if config.base_url is None:
            raise ValueError("LLMConfig.base_url is not set; there is no LLM to talk to")
        self._config = config
        self._url = config.base_url.rstrip("/") + "/chat/completions"
        self._environ = environ
        self._http = httpx.AsyncClient(timeout=config.timeout, transport=transport)
        self.last_model: str | None = None

    async def complete(self, messages: list[dict[str, str]], *, escalate: bool = False) -> str:
        """The answer's text (possibly empty); raises LLMError when there is none."""
        return (await self.chat(list(messages), escalate=escalate)).content

    async def chat(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None = None,
        *,
        escalate: bool = False,
    ) -> ChatTurn:
        """One chat completion, offering ``tools`` (OpenAI function-calling schema) when
        given; raises LLMError when there is no answer. ``escalate``: this call (and
        only this one, retries included) goes to ``escalation_model`` when one is
        configured. Escalation is an argument, never state of the client: a client is
        shared (a soul's reflector and judge use one), and a signal meant for one call
        must not reach whichever call happens to come next."""
        config = self._config
        model = config.model
        if escalate and config.escalation_model is not None:
            model = config.escalation_model
        self.last_model = model
        body = {
            "model": model,
            "messages": messages,
            "max_tokens": config.max_tokens,
            "temperature": config.temperature,
            "stream": False,
        }
        if tools:
            body["tools"] = tools
        attempts = config.retries + 1
        problem = ""
        for attempt in range(attempts):
            if attempt:
                await anyio.sleep(config.backoff * 2 ** (attempt - 1))
            try:
                return await self._attempt(body)
            except _Retryable as exc:
                problem = str(exc)
        raise LLMError(
            f"the LLM at {self._url} (model {model!r}) failed {attempts} time(s), last: "
            f"{problem}; check that the server is running and reachable, or raise "
            "llm.timeout / llm.retries"
        )

    async def _post(self, body: bytes, headers: dict[str, str]) -> tuple[int, bytes]:
        """POST ``body``; the status and at most ``max_answer_bytes`` of the answer."""
        most = self._config.max_answer_bytes
        answered = await post_bounded(self._http, self._url, body, headers, most)
        if answered is None:
            raise LLMError(
                f"the LLM at {self._url} sent an answer over {most} bytes; check the "
                "server, or raise llm.max_answer_bytes"
            )
        return answered

    async def _attempt(self, body: dict[str, object]) -> ChatTurn:
        headers = {"Content-Type": "application/json"}
        key = self._environ.get(self._config.api_key_env or "", "")
        if self._config.api_key_env and key:
            headers["Authorization"] = f"Bearer {key}"
        late = f"no answer within {self._config.timeout} s"
        answered: tuple[int, bytes] | None = None
        # httpx's timeout bounds each read, not the whole answer: a server trickling bytes
        # would never time out without this deadline.
        with anyio.move_on_after(self._config.timeout):
            try:
                answered = await self._post(msgspec.json.encode(body), headers)
            except httpx.TimeoutException:
                raise _Retryable(late) from None
            except httpx.TransportError as exc:
                raise _Retryable(f"connection error ({type(exc).__name__})") from None
        if answered is None:
            raise _Retryable(late)
        status, content = answered
        if status == 429 or status >= 500:
            raise _Retryable(f"HTTP {status}")
        if status >= 400:
            raise LLMError(f"the LLM at {self._url} refused the request: {_refusal(status)}")
        try:
            answer = msgspec.json.decode(content, type=_Completion)
        except msgspec.DecodeError as exc:
            raise LLMError(
                f"the LLM at {self._url} sent a malformed answer ({exc}); check that "
                "base_url points at an OpenAI-compatible API (usually ending in /v1)"
            ) from None
        if not answer.choices:
            raise LLMError(f"the LLM at {self._url} answered with no choices; check the model")
        message = answer.choices[0].message
        calls = [
            ToolCall(call.id, call.function.name, call.function.arguments)
            for call in message.tool_calls or []
        ]
        tokens = answer.usage.total_tokens if answer.usage is not None else 0
        return ChatTurn(message.content or "", calls, tokens)

    async def aclose(self) -> None:
        await self._http.aclose()


def _refusal(status: int) -> str:
    if status in (401, 403):
        return f"HTTP {status}; check that api_key_env names a variable holding a valid key"
    if status == 404:
        return f"HTTP {status}; check base_url (usually ending in /v1) and the model name"
    return f"HTTP {status}; check the model name and the server's log"


# The observations shown to the model: each cut to _MAX_OBSERVATION characters, all of
# them to _MAX_PROMPT characters (the highest-scoring first, then shown in time order).
_MAX_OBSERVATION = 500
_MAX_PROMPT = 16_000
_THINK = re.compile(r"^\s*<think>.*?</think>", re.DOTALL)
_FENCE = re.compile(r"^\s*```[\w-]*\n(.*?)\n```\s*$", re.DOTALL)

_SYSTEM = """\
You maintain the consolidated memory summary of an AI agent. Merge the previous summary \
with the new observations into one updated summary: Markdown, at most {budget} characters.
Keep every failure or alarm and every open question unless an observation resolves it; \
then the most important and most novel other facts. Collapse repeats into one line with \
a count such as (\u00d73). Drop routine and stale details.
End each line with the ids of the memories it comes from, written [m<id>], e.g. [m12] or \
[m3, m9]; keep the ids of lines you carry over.
Use the headings "## Failures and alarms", "## Open questions" and "## Notable", and \
omit empty ones. Answer with the summary only."""


class LLMReflector:
    """Reflects through a chat model; degrades to ``fallback`` and never raises LLMError."""

    name: str = "llm"

    def __init__(self, client: ChatClient, fallback: Reflector) -> None:
        self._client = client
        self._fallback = fallback

    async def reflect(self, previous: str, observations: Sequence[Observation], budget: int) -> str:
        if not observations:
            return _trim(previous, budget)
        try:
            answer = await self._client.complete(_prompt(previous, observations, budget))
        except LLMError as exc:
            error = exc.message
        else:
            summary = _trim(_unwrap(answer), budget)
            if summary:
                return summary
            error = "the model answered with an empty summary"
        structlog.get_logger("soupd.reflect").warning(
            "reflect.llm_failed", error=error, fallback=self._fallback.name
        )
        return await self._fallback.reflect(previous, observations, budget)


def _prompt(
    previous: str, observations: Sequence[Observation], budget: int
) -> list[dict[str, str]]:
    """The chat messages for one reflect; deterministic, bounded by _MAX_PROMPT."""
    ranked = sorted(observations, key=lambda o: (-(0.6 * o.salience + 0.4 * o.surprise), o.id))
    lines: list[tuple[float, int, str]] = []
    seen: set[str] = set()
    size = 0
    for obs in ranked:
        text = " ".join(obs.text.split())
        if len(text) > _MAX_OBSERVATION:
            text = text[: _MAX_OBSERVATION - 1] + "\u2026"
        if obs.sender:
            text = f"{obs.sender}: {text}"
        if text.casefold() in seen:
            continue
        line = f"[m{obs.id}] ({obs.salience:.2f}, {obs.surprise:.2f}) {text}"
        if size + len(line) + 1 > _MAX_PROMPT:
            break
        seen.add(text.casefold())
        size += len(line) + 1
        lines.append((obs.ts, obs.id, line))
    shown = "\n".join(line for _, _, line in sorted(lines))
    omitted = len(observations) - len(lines)
    if omitted:
        shown += f"\n({omitted} less important or repeated observations omitted)"
    user = (
        f"Previous summary:\n{_trim(previous, 2 * budget) or '(none)'}\n\n"
        f"New observations, as [m<id>] (salience, surprise) text:\n{shown}"
    )
    return [
        {"role": "system", "content": _SYSTEM.format(budget=budget)},
        {"role": "user", "content": user},
    ]


def _unwrap(answer: str) -> str:
    """The summary inside a reasoning model's <think> preamble or a code fence."""
    answer = _THINK.sub("", answer, count=1).strip()
    fenced = _FENCE.match(answer)
    return fenced.group(1) if fenced else answer


def _trim(text: str, budget: int) -> str:
    """``text`` cut at a line end to at most ``budget`` characters, ending in a newline."""
    text = text.strip()
    if not text or budget <= 0:
        return ""
    if len(text) + 1 <= budget:
        return text + "\n"
    cut = text.rfind("\n", 0, budget)
    head = (text[:cut] if cut > 0 else text[: budget - 1]).rstrip()
    return head + "\n" if head else ""
