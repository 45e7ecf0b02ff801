"""``[embedding]``: which provider turns a soul's memories into vectors, if any.

``provider = "none"`` (the default) is today's lexical recall: nothing is imported,
nothing is called. Every other provider is checked when the config loads, so a soul
never starts with an embedder it cannot run.
"""

from __future__ import annotations

import importlib.util
import re
from typing import Literal

import msgspec

__all__ = ["EmbeddingConfig", "Provider"]

Provider = Literal["none", "openai", "fastembed", "sentence-transformers"]

_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# The package each in-process provider needs (the ``semantic`` extra of pyproject).
_PACKAGES = {"fastembed": "fastembed", "sentence-transformers": "sentence_transformers"}


class EmbeddingConfig(msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    # "none": lexical recall only. "openai": any OpenAI-compatible embeddings endpoint
    # (Ollama, llama.cpp, vLLM, TEI, hosted APIs). "fastembed" / "sentence-transformers":
    # a model in process (pip install 'soupd[semantic]').
    provider: Provider = "none"
    # The model's name (openai, fastembed) or a local path (sentence-transformers).
    model: str = ""
    # Endpoint root ending in /v1, e.g. "http://127.0.0.1:8080/v1" (openai only).
    base_url: str | None = None
    # NAME of the environment variable holding the API key (never the key); None = no key.
    api_key_env: str | None = None
    # The vectors' length; an answer of another length is refused. None: the first
    # answer's length, then every answer must match it.
    dimensions: int | None = None
    # Texts per call to the provider.
    batch: int = 32
    # Seconds one batch may take, from connect to the answer's last byte.
    timeout: float = 30.0
    # Seconds a recall waits for its query's vector; past it, the recall is lexical.
    query_timeout: float = 2.0
    # Seconds the worker waits after a failed batch before it tries again.
    retry_after: float = 30.0
    # Memories waiting for their vectors, at most, by count and by bytes of text; what
    # finds the backlog full waits in the database, and is caught up later.
    backlog: int = 4096
    backlog_bytes: int = 4 << 20
    # The longest answer read, in bytes: more fails the call once it has arrived.
    max_answer_bytes: int = 16 << 20

    def __post_init__(self) -> None:
        if self.provider == "openai":
            if self.base_url is None or not self.base_url.startswith(("http://", "https://")):
                raise ValueError(
                    'provider = "openai" needs base_url, starting with http:// or https://'
                )
            if not self.model:
                raise ValueError('provider = "openai" needs model (the embedding model name)')
        elif self.base_url is not None:
            raise ValueError('base_url is for provider = "openai" only')
        package = _PACKAGES.get(self.provider)
        if package is not None:
            if not self.model:
                raise ValueError(f'provider = "{self.provider}" needs model')
            if importlib.util.find_spec(package) is None:
                raise ValueError(
                    f'provider = "{self.provider}" needs the {package} package, which is not '
                    "installed: install soupd[semantic] (pip install 'soupd[semantic]'), or "
                    'use provider = "openai" with an embeddings server'
                )
        if self.api_key_env is not None and _ENV_NAME.fullmatch(self.api_key_env) is None:
            raise ValueError(
                "api_key_env must be the NAME of an environment variable (like "
                "OPENAI_API_KEY), never the key itself"
            )
        if self.dimensions is not None and not 1 <= self.dimensions <= 16384:
            raise ValueError("dimensions must be between 1 and 16384")
        if not 1 <= self.batch <= 2048:
            raise ValueError("batch must be between 1 and 2048")
        if min(self.timeout, self.query_timeout) <= 0 or self.retry_after < 0:
            raise ValueError("timeout and query_timeout must be positive, retry_after >= 0")
        if self.backlog < 1 or self.backlog_bytes < 1024:
            raise ValueError("backlog must be at least 1 and backlog_bytes at least 1024")
        if self.max_answer_bytes < 1024:
            raise ValueError("max_answer_bytes must be at least 1024")

    @property
    def enabled(self) -> bool:
        return self.provider != "none"
