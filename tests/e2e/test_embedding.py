"""Embeddings behind the ack, through the real daemon (#18.2): a soul with ``[embedding]
provider = "openai"`` and a fake embeddings server on loopback (:mod:`fake_embedder`)
acknowledges its pushes as a soul without one does, then gives every memory a vector in
its own SQLite file; a soul started over memories stored without vectors catches them
up; a failing provider costs a count and one log line, never a push; ``forget`` takes a
memory's vector with it."""

from __future__ import annotations

import sqlite3
from typing import Any

from fake_embedder import Behaviour, fake_embedder

from .harness import Daemon, Home, StartSoupd, wait_for

TEXTS = [
    "Maya said the train was late again this morning.",
    "We finally got a puppy, a little beagle called Biscuit!",
    "Lunch was a sandwich at the desk, nothing special.",
    "The printer on the third floor is jammed again.",
]


def _soul(url: str, **extra: str) -> str:
    lines = [f'provider = "openai"\nbase_url = "{url}"\nmodel = "fake"\ntimeout = 5\n']
    lines += [f"{key} = {value}\n" for key, value in extra.items()]
    return "[embedding]\n" + "".join(lines)


def _vectors(home: Home, soul: str) -> list[tuple[int, str, int]]:
    with sqlite3.connect(home.soul_dir(soul) / "soul.db") as db:
        rows = db.execute(
            "SELECT memory_id, model, length(vector) FROM memory_vectors ORDER BY memory_id"
        ).fetchall()
    return [(int(m), str(model), int(size)) for m, model, size in rows]


def _embedding(daemon: Daemon, soul: str) -> dict[str, Any]:
    figures: dict[str, Any] = daemon.result("soul.stats", {"soul": soul})["embedding"]
    return figures


def test_pushes_are_acked_then_every_memory_gets_a_vector(
    soupd_home: Home, start_soupd: StartSoupd
) -> None:
    with fake_embedder() as (url, behaviour):
        soupd_home.add_soul("ada", _soul(url))
        soupd_home.add_soul("plain")
        daemon = start_soupd()
        for text in TEXTS:
            assert daemon.push("ada", text, sender="ana")["status"] == "stored"
        figures = wait_for(
            lambda: (f := _embedding(daemon, "ada"))["embedded"] >= len(TEXTS) and f,
            "every memory to be embedded",
        )
        assert figures["state"] == "ok"
        assert figures["vectors"] == len(TEXTS)
        assert figures["backlog"] == 0
        assert figures["failures"] == 0
        assert figures["batches"] >= 1
        assert figures["ms_per_batch"] > 0
        assert figures["model"] == "openai:fake"
        # Each vector as a float32 BLOB of the model's dimensions, in the soul's file.
        assert _vectors(soupd_home, "ada") == [(m, "openai:fake", 4 * 256) for m in (1, 2, 3, 4)]
        embedded = sorted(t for request in behaviour.requests for t in request)
        assert embedded == sorted(f"ana: {t}" for t in TEXTS)  # as their sender said them
        assert "search" in figures
        # provider = "none": nothing of it shows, nothing is called.
        asked = len(behaviour.requests)
        assert daemon.push("plain", TEXTS[0])["status"] == "stored"
        assert daemon.recall("plain", "train")[0]["text"] == TEXTS[0]
        assert daemon.result("soul.stats", {"soul": "plain"})["embedding"] == {}
        assert len(behaviour.requests) == asked


def test_a_soul_catches_up_the_memories_stored_without_vectors(
    soupd_home: Home, start_soupd: StartSoupd
) -> None:
    soupd_home.add_soul("ada")
    daemon = start_soupd()
    for text in TEXTS:
        daemon.push("ada", text)
    daemon.stop()
    with fake_embedder() as (url, _):
        soupd_home.add_soul("ada", _soul(url, batch="3"))
        daemon = start_soupd()
        figures = wait_for(
            lambda: (f := _embedding(daemon, "ada"))["embedded"] >= len(TEXTS) and f,
            "the memories stored before to be embedded",
        )
    assert figures["batches"] == 2  # batch = 3
    assert [m for m, _, _ in _vectors(soupd_home, "ada")] == [1, 2, 3, 4]


def test_a_failing_provider_never_fails_a_push(soupd_home: Home, start_soupd: StartSoupd) -> None:
    with fake_embedder(Behaviour(status=500)) as (url, behaviour):
        soupd_home.add_soul("ada", _soul(url, retry_after="0.2"))
        daemon = start_soupd()
        for text in TEXTS:
            assert daemon.push("ada", text)["status"] == "stored"
        figures = wait_for(
            lambda: (f := _embedding(daemon, "ada"))["failures"] >= 2 and f,
            "the embedder to have failed twice",
        )
        assert figures["state"] == "failing"
        assert figures["embedded"] == 0
        assert daemon.counts("ada") == (len(TEXTS), len(TEXTS))
        failed = [e for e in daemon.log() if e.get("event") == "embedding.failed"]
        assert len(failed) == 1, failed  # one line when it starts failing, not one a try
        assert "HTTP 500" in failed[0]["error"]
        assert failed[0]["soul"] == "ada"
        # Back: what waited is embedded, and the recovery logged.
        behaviour.status = 200
        wait_for(
            lambda: _embedding(daemon, "ada")["embedded"] >= len(TEXTS),
            "the embedder to catch up once the provider is back",
        )
        assert _embedding(daemon, "ada")["state"] == "ok"
        assert any(e.get("event") == "embedding.recovered" for e in daemon.log())


def test_forget_takes_the_vectors_with_the_memories(
    soupd_home: Home, start_soupd: StartSoupd
) -> None:
    with fake_embedder() as (url, _):
        soupd_home.add_soul("ada", _soul(url))
        daemon = start_soupd()
        for text in TEXTS:
            daemon.push("ada", text)
        wait_for(lambda: _embedding(daemon, "ada")["embedded"] >= len(TEXTS), "vectors")
        forgot = daemon.result("forget", {"soul": "ada", "match": "beagle"})
        assert forgot["memories"] == 1
        assert [m for m, _, _ in _vectors(soupd_home, "ada")] == [1, 3, 4]
        assert _embedding(daemon, "ada")["vectors"] == 3


ASSISTANT = [
    "good morning! what's the weather like today",
    "remind me to buy milk on the way home",
    "I'm allergic to nothing but I hate celery.",
    "Honestly I stopped eating meat last spring, feels good.",
    "ugh, the train was late again",
    "set a timer for 20 minutes",
    "my laptop is so slow today",
]
ASKED = "is she a vegetarian?"


def test_a_paraphrase_is_found_with_embeddings_and_explained(
    soupd_home: Home, start_soupd: StartSoupd
) -> None:
    """The same conversation to a soul without embeddings and to one with: only the
    second finds "stopped eating meat" for "is she a vegetarian?", and ``soupd recall
    --explain`` says it came on its embedding."""
    with fake_embedder() as (url, _):
        soupd_home.add_soul("ada", _soul(url))
        soupd_home.add_soul("plain")
        daemon = start_soupd()
        for text in ASSISTANT:
            for soul in ("ada", "plain"):
                assert daemon.push(soul, text, kind="dm", sender="maya")["status"] == "stored"
        wait_for(lambda: _embedding(daemon, "ada")["embedded"] >= len(ASSISTANT), "vectors")
        lexical = daemon.recall("plain", ASKED)
        found = daemon.recall("ada", ASKED)
        done = soupd_home.cli("recall", "ada", ASKED, "--explain")
        assert _embedding(daemon, "ada")["queries"] >= 2
    meat = ASSISTANT[3]
    assert meat not in [item["text"] for item in lexical]
    assert found[0]["text"] == meat
    assert found[0]["via"] == "dense"
    assert 0 < found[0]["relevance"] <= 1
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    (first,) = [n for n, line in enumerate(lines) if meat in line]
    assert "semantic" in lines[first + 1]
    assert "embedding cosine" in lines[first + 1]
