"""The OpenAI embeddings client against a fake model on loopback (:mod:`fake_embedder`),
and the ``[embedding]`` table's checks."""

from __future__ import annotations

import importlib.util
import math
import socket
from contextlib import aclosing

import msgspec
import pytest
from fake_embedder import Behaviour, fake_embedder

from souls.config import SoulConfig
from souls.embed.client import EmbedError, OpenAIEmbedder, embedder
from souls.embed.config import EmbeddingConfig
from souls.embed.vectors import VectorIndex, pack, unpack


def _unless_installed(package: str) -> pytest.MarkDecorator:
    """Skip a case that needs ``package`` missing (the bench extra installs some)."""
    return pytest.mark.skipif(
        importlib.util.find_spec(package) is not None, reason=f"{package} is installed here"
    )


def _config(url: str, **overrides: object) -> EmbeddingConfig:
    settings: dict[str, object] = {"provider": "openai", "base_url": url, "model": "fake"}
    return msgspec.convert(settings | overrides, EmbeddingConfig)


async def test_vectors_come_in_order_unit_length_with_the_key_from_the_environment() -> None:
    with fake_embedder() as (url, behaviour):
        config = _config(url, api_key_env="SOUPD_TEST_EMBED_KEY")
        client = OpenAIEmbedder(config, environ={"SOUPD_TEST_EMBED_KEY": "k-123"})
        async with aclosing(client):
            vectors = await client.embed(["my puppy Biscuit", "we moved to Leipzig"], seconds=5)
            (query,) = await client.embed(["what kind of dog do they have?"], seconds=5)
    assert behaviour.requests[0] == ["my puppy Biscuit", "we moved to Leipzig"]
    assert [len(v) for v in vectors] == [256, 256]
    assert all(math.isclose(sum(x * x for x in v), 1.0, rel_tol=1e-5) for v in vectors)
    index = VectorIndex("openai:fake", 256)
    index.put(1, vectors[0])
    index.put(2, vectors[1])
    nearest = index.nearest(query, 5)
    assert list(nearest) == [1, 2]  # the dog, by meaning: not one word in common
    assert nearest[1] > 0.3
    assert nearest[2] == pytest.approx(0.0)


@pytest.mark.parametrize(
    ("behaviour", "said"),
    [
        (Behaviour(dimensions=32), "of 32 dimensions, not 256"),
        (Behaviour(garbage=True), "malformed answer"),
        (Behaviour(status=500), "HTTP 500"),
    ],
)
async def test_a_bad_answer_is_one_clear_error(behaviour: Behaviour, said: str) -> None:
    with fake_embedder(behaviour) as (url, _):
        async with aclosing(OpenAIEmbedder(_config(url, dimensions=256))) as client:
            with pytest.raises(EmbedError, match=said) as caught:
                await client.embed(["hello there"], seconds=5)
    assert caught.value.code == "embedding_unavailable"


async def test_an_answer_past_max_answer_bytes_is_refused_unread_to_the_end() -> None:
    texts = [f"text number {i} about many different things" for i in range(64)]
    with fake_embedder() as (url, _):
        async with aclosing(OpenAIEmbedder(_config(url, max_answer_bytes=4096))) as client:
            with pytest.raises(EmbedError, match="over 4096 bytes"):
                await client.embed(texts, seconds=5)


async def test_the_first_answer_fixes_the_dimensions_when_unset() -> None:
    behaviour = Behaviour()
    with fake_embedder(behaviour) as (url, _):
        async with aclosing(OpenAIEmbedder(_config(url))) as client:
            await client.embed(["one"], seconds=5)
            behaviour.dimensions = 48
            with pytest.raises(EmbedError, match="48 dimensions, not 256"):
                await client.embed(["two"], seconds=5)


async def test_an_unreachable_endpoint_is_one_clear_error() -> None:
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        port = free.getsockname()[1]
    async with aclosing(OpenAIEmbedder(_config(f"http://127.0.0.1:{port}/v1"))) as client:
        with pytest.raises(EmbedError, match="unreachable"):
            await client.embed(["hello"], seconds=5)


def test_vectors_pack_as_float32_blobs() -> None:
    index_vector = unpack(pack(unpack(b"\x00\x00\x80\x3f" * 3)))
    assert list(index_vector) == [1.0, 1.0, 1.0]
    assert len(pack(index_vector)) == 12


@pytest.mark.parametrize(
    ("table", "said"),
    [
        ({"provider": "openai"}, "needs base_url"),
        ({"provider": "openai", "base_url": "http://x/v1"}, "needs model"),
        ({"provider": "openai", "base_url": "x", "model": "m"}, "http:// or https://"),
        (
            {"provider": "openai", "base_url": "http://x/v1", "model": "m", "api_key_env": "sk-1"},
            "NAME of an environment variable",
        ),
        pytest.param(
            {"provider": "fastembed", "model": "BAAI/bge-small-en-v1.5"},
            r"soupd\[semantic\]",
            marks=_unless_installed("fastembed"),
        ),
        pytest.param(
            {"provider": "sentence-transformers", "model": "m"},
            r"soupd\[semantic\]",
            marks=_unless_installed("sentence_transformers"),
        ),
        ({"provider": "vectors"}, "Invalid enum value"),
        ({"base_url": "http://x/v1"}, 'for provider = "openai" only'),
        ({"batch": 0}, "batch"),
        ({"dimensions": 0}, "dimensions"),
    ],
)
def test_the_table_refuses_what_cannot_run(table: dict[str, object], said: str) -> None:
    with pytest.raises(msgspec.ValidationError, match=said):
        msgspec.convert({"embedding": table}, SoulConfig)


def test_none_is_the_default_and_makes_no_embedder() -> None:
    assert SoulConfig().embedding.provider == "none"
    assert embedder(SoulConfig().embedding) is None
