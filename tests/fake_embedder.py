"""A fake embedding model for tests: a real HTTP server on loopback speaking the OpenAI
embeddings API (``POST /v1/embeddings``, ``{"model", "input": [...]}`` →
``data[i].embedding``), deterministic and small.

A text's vector is a hashed bag of its words' *concepts* in ``DIMENSIONS`` buckets: a
word's concept is its entry in ``CONCEPTS``, one bucket each (so "puppy", "beagle" and
"dog" land in one, as a real model would place them near), else its first five
letters, hashed into the other buckets; function words count for nothing. Texts
sharing a concept have a positive cosine; texts sharing none, zero. Runs in a thread,
so both in-process tests and a daemon started as a child process can reach it.
"""

from __future__ import annotations

import hashlib
import http.server
import json
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import ClassVar

DIMENSIONS = 256
CONCEPTS = {
    word: concept
    for concept, words in {
        "canine": "dog dogs puppy puppies beagle hound pet pets",
        "residence": "live lives living moved relocated relocate city town apartment",
        "nutrition": "eat eats eating meat vegetarian vegan food diet",
        "work": "job profession work works career nurse engineer",
    }.items()
    for word in words.split()
}
_BUCKETS = {concept: i for i, concept in enumerate(sorted(set(CONCEPTS.values())))}
_STOP = frozenset(
    "a an the i i'm im we she he they it is are was were do does did have has any of to"
    " in on at and or what which who her his my our their with for about called".split()
)
_WORD = re.compile(r"[a-z']+")


def vector(text: str, dimensions: int = DIMENSIONS) -> list[float]:
    values = [0.0] * dimensions
    for word in _WORD.findall(text.lower()):
        if word in _STOP:
            continue
        concept = CONCEPTS.get(word)
        if concept is not None:  # each concept its own bucket: they never collide
            values[_BUCKETS[concept]] += 1.0
            continue
        bucket = int.from_bytes(hashlib.sha256(word[:5].encode()).digest()[:4], "big")
        values[len(_BUCKETS) + bucket % (dimensions - len(_BUCKETS))] += 1.0
    if not any(values):
        values[0] = 1e-3  # a text of function words only: some direction, near nothing
    return values


@dataclass
class Behaviour:
    """What the server answers: vectors of ``dimensions``, or ``status`` with a body,
    or ``garbage`` instead of JSON; ``requests`` records each request's inputs."""

    dimensions: int = DIMENSIONS
    status: int = 200
    garbage: bool = False
    requests: list[list[str]] = field(default_factory=list)


class _Handler(http.server.BaseHTTPRequestHandler):
    behaviour: ClassVar[Behaviour]

    def do_POST(self) -> None:
        behaviour = self.behaviour
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
        behaviour.requests.append(list(texts))
        if self.path != "/v1/embeddings":
            data = b'{"error": "not found"}'
            status = 404
        elif behaviour.status != 200:
            data, status = b'{"error": "overloaded"}', behaviour.status
        elif behaviour.garbage:
            data, status = b"Sure! Here are your vectors: [[[", 200
        else:
            rows = [
                {"object": "embedding", "index": i, "embedding": vector(t, behaviour.dimensions)}
                for i, t in enumerate(texts)
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
def fake_embedder(behaviour: Behaviour | None = None) -> Iterator[tuple[str, Behaviour]]:
    """The server's base URL (ending in /v1) and its behaviour, which a test may change."""
    shown = behaviour or Behaviour()
    handler = type("Handler", (_Handler,), {"behaviour": shown})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1", shown
    finally:
        server.shutdown()
        server.server_close()
