"""Embedders: texts in, unit vectors out, one call per batch.

:class:`OpenAIEmbedder` POSTs ``{base_url}/embeddings`` with ``{"model", "input": [...]}``
and reads ``data[i].embedding`` (Ollama, llama.cpp, vLLM, TEI and hosted APIs speak it).
A call is bounded as a whole by its timeout and its answer by ``max_answer_bytes``
(streamed, refused past the cap). An answer is checked before any of it is used: one
vector per text, all of ``dimensions`` (or of the first answer's length), finite and not
zero. Every failure is one :class:`EmbedError` naming the provider, what went wrong and
what to check; cancellation is never caught. The API key lives in the environment
variable ``api_key_env`` names; it is read at call time and never logged.

:class:`LocalEmbedder` runs fastembed or sentence-transformers in a worker thread; the
package is imported on first use only, so a soul without it imports nothing, and the
model is loaded once per daemon, whatever the number of souls naming it.
"""

from __future__ import annotations

import importlib
import os
import threading
from array import array
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

import anyio
import anyio.to_thread
import httpx
import msgspec

from souls.embed.bounded import post_bounded
from souls.embed.config import EmbeddingConfig
from souls.embed.vectors import unit
from supervisor.errors import SoupdError

__all__ = ["EmbedError", "Embedder", "LocalEmbedder", "OpenAIEmbedder", "embedder"]


class EmbedError(SoupdError):
    """The embedding provider gave no usable vectors; the message says what to check.
    Never reaches a pusher or a recaller: the soul degrades to lexical recall."""

    code = "embedding_unavailable"


class Embedder(Protocol):
    """What the soul needs of a provider."""

    @property
    def name(self) -> str: ...

    async def embed(self, texts: Sequence[str], *, seconds: float) -> list[array[float]]:
        """One unit vector per text, in order, within ``seconds`` in all; raises
        EmbedError."""
        ...

    async def aclose(self) -> None: ...


class _Datum(msgspec.Struct):
    embedding: list[float]
    index: int | None = None


class _Answer(msgspec.Struct):
    data: list[_Datum]


class _Checked:
    """The length every vector of one embedder must have."""

    def __init__(self, name: str, dimensions: int | None) -> None:
        self.name = name
        self.dimensions = dimensions

    def vectors(self, rows: Sequence[Sequence[float]], wanted: int) -> list[array[float]]:
        if len(rows) != wanted:
            raise EmbedError(
                f"{self.name} answered {len(rows)} vector(s) for {wanted} text(s); check "
                "that the server speaks the OpenAI embeddings API"
            )
        out: list[array[float]] = []
        for row in rows:
            if self.dimensions is None:
                self.dimensions = len(row)
            if len(row) != self.dimensions:
                raise EmbedError(
                    f"{self.name} sent a vector of {len(row)} dimensions, not "
                    f"{self.dimensions}; set [embedding] dimensions to the model's, or check "
                    "the model name"
                )
            vector = unit(row)
            if vector is None:
                raise EmbedError(
                    f"{self.name} sent a vector that is all zeros or not finite; check the model"
                )
            out.append(vector)
        return out


class OpenAIEmbedder:
    """An OpenAI-compatible embeddings endpoint."""

    def __init__(
        self,
        config: EmbeddingConfig,
        *,
        environ: Mapping[str, str] = os.environ,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        if config.base_url is None:
            raise ValueError("EmbeddingConfig.base_url is not set")
        self._config = config
        self._url = config.base_url.rstrip("/") + "/embeddings"
        self.name = f"the embeddings endpoint {self._url} (model {config.model!r})"
        self._environ = environ
        self._checked = _Checked(self.name, config.dimensions)
        self._http = httpx.AsyncClient(timeout=config.timeout, transport=transport)

    async def embed(self, texts: Sequence[str], *, seconds: float) -> list[array[float]]:
        if not texts:
            return []
        headers = {"Content-Type": "application/json"}
        key_env = self._config.api_key_env
        key = self._environ.get(key_env, "") if key_env else ""
        if key:
            headers["Authorization"] = f"Bearer {key}"
        body = msgspec.json.encode({"model": self._config.model, "input": list(texts)})
        answered: tuple[int, bytes] | None = None
        # httpx's timeout bounds each read; this bounds the whole answer.
        with anyio.move_on_after(seconds):
            try:
                answered = await self._post(body, headers)
            except httpx.TimeoutException:
                answered = None
            except httpx.TransportError as exc:
                raise EmbedError(
                    f"{self.name} is unreachable ({type(exc).__name__}); check that the "
                    "server runs and base_url is right"
                ) from None
        if answered is None:
            raise EmbedError(
                f"{self.name} gave no answer within {seconds} s; check the server, or raise "
                "[embedding] timeout"
            )
        status, content = answered
        if status >= 400:
            raise EmbedError(
                f"{self.name} refused the request with HTTP {status}; check the model name"
                + (" and api_key_env" if status in (401, 403) else " and the server's log")
            )
        try:
            answer = msgspec.json.decode(content, type=_Answer)
        except msgspec.DecodeError as exc:
            raise EmbedError(
                f"{self.name} sent a malformed answer ({exc}); check that base_url points at "
                "an OpenAI-compatible API (usually ending in /v1)"
            ) from None
        data = answer.data
        if all(d.index is not None for d in data):
            data = sorted(data, key=lambda d: d.index or 0)
        return self._checked.vectors([d.embedding for d in data], len(texts))

    async def _post(self, body: bytes, headers: dict[str, str]) -> tuple[int, bytes]:
        most = self._config.max_answer_bytes
        answered = await post_bounded(self._http, self._url, body, headers, most)
        if answered is None:
            raise EmbedError(
                f"{self.name} sent an answer over {most} bytes; check the server, or "
                "raise [embedding] max_answer_bytes"
            )
        return answered

    async def aclose(self) -> None:
        await self._http.aclose()


class _Loaded:
    """One in-process model, shared by every soul of the daemon that names it; one
    inference at a time (the library spreads each over its own threads)."""

    def __init__(self, model: Any) -> None:
        self.model = model
        self.busy = threading.Lock()


_models: dict[tuple[str, str], _Loaded] = {}
_loading = threading.Lock()


def _loaded(provider: str, name: str) -> _Loaded:
    """The model, loaded on first use (in a worker thread) and kept for the daemon's
    life: a soul that restarts, or another soul of the same model, does not load it
    again."""
    with _loading:
        found = _models.get((provider, name))
        if found is None:
            module: Any
            if provider == "fastembed":
                module = importlib.import_module("fastembed")
                model = module.TextEmbedding(model_name=name)
            else:
                module = importlib.import_module("sentence_transformers")
                model = module.SentenceTransformer(name, device="cpu")
                # One thread of inference: the daemon's loop needs the other cores, and
                # torch's pool of spinning threads made each query ~30x slower on a
                # busy 2-core machine.
                importlib.import_module("torch").set_num_threads(1)
            found = _models[(provider, name)] = _Loaded(model)
        return found


class LocalEmbedder:
    """fastembed or sentence-transformers, in process: the model loads on first use, in a
    worker thread (it may read a local path or fetch the model where the machine can),
    once per daemon; each batch is encoded in a worker thread, never on the event loop,
    one batch of the model at a time, bounded by ``[embedding] batch``."""

    def __init__(self, config: EmbeddingConfig) -> None:
        self._config = config
        self.name = f"{config.provider} model {config.model!r}"
        self._checked = _Checked(self.name, config.dimensions)

    def _encode(self, texts: list[str]) -> list[list[float]]:
        loaded = _loaded(self._config.provider, self._config.model)
        with loaded.busy:
            if self._config.provider == "fastembed":
                return [list(map(float, v)) for v in loaded.model.embed(texts)]
            encoded = loaded.model.encode(
                texts, batch_size=len(texts), show_progress_bar=False, convert_to_numpy=True
            )
            return [list(map(float, v)) for v in encoded]

    async def embed(self, texts: Sequence[str], *, seconds: float) -> list[array[float]]:
        if not texts:
            return []
        rows: list[list[float]] | None = None
        with anyio.move_on_after(seconds):
            try:
                # abandon_on_cancel: past ``seconds`` the recall goes on lexically; the
                # thread finishes its batch and the model's lock is let go then.
                rows = await anyio.to_thread.run_sync(
                    self._encode, list(texts), abandon_on_cancel=True
                )
            except (ImportError, OSError, RuntimeError, ValueError) as exc:
                raise EmbedError(
                    f"{self.name} failed ({type(exc).__name__}: {exc}); check the model name "
                    "or path, and that soupd[semantic] is installed"
                ) from None
        if rows is None:
            raise EmbedError(f"{self.name} took over {seconds} s; raise [embedding] timeout")
        return self._checked.vectors(rows, len(texts))

    async def aclose(self) -> None:
        pass  # the model stays loaded for the daemon's other souls and restarts


def embedder(config: EmbeddingConfig) -> Embedder | None:
    """The soul's embedder; None with ``provider = "none"``."""
    if config.provider == "none":
        return None
    if config.provider == "openai":
        return OpenAIEmbedder(config)
    return LocalEmbedder(config)
