"""LLM extraction through the real daemon (#17.3): a soul with ``[llm]`` sends each
stored event to a chat model on loopback, behind the ack. What the model claims passes
the same gates as the rules' claims: a fact quoted from the text is stored; a forged
quote, a slot outside the whitelist and a secret are refused and counted; an inference
nobody said is kept apart as ``unspoken.<hash>`` and never injected; garbage and a
failing model cost nothing but a count. Pushes are acknowledged whatever the model does."""

from __future__ import annotations

import http.server
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import ClassVar

from .harness import Home, StartSoupd, wait_for

OCEAN = "Honestly, the ocean is what I love most these days. I never call my father."
GARBAGE = "We argued about the fence again, nothing new."
BROKEN = "The model breaks on this one: the lift is out again."


class _Model(http.server.BaseHTTPRequestHandler):
    """Answers extraction prompts by the event they quote: good and hostile candidates
    for OCEAN, prose for GARBAGE, an HTTP 500 for BROKEN; '[]' to everything else."""

    prompts: ClassVar[list[str]] = []

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        prompt = "\n".join(str(m.get("content") or "") for m in body["messages"])
        self.prompts.append(prompt)
        extracting = "Extract facts that the speaker states" in prompt
        if extracting and BROKEN in prompt:
            self.send_error(500)
            return
        if extracting and OCEAN in prompt:
            content = json.dumps(
                [
                    {
                        "slot": "likes",
                        "value": "the ocean",
                        "quote": "the ocean is what I love most",
                    },
                    {"slot": "job", "value": "astronaut", "quote": "I am an astronaut"},
                    {"slot": "password", "value": "the ocean", "quote": "the ocean"},
                    {"kind": "unspoken", "quote": "I never call my father"},
                ]
            )
        elif extracting and GARBAGE in prompt:
            content = "Sure! Here are the facts: {{{ not json"
        else:
            content = "[]"
        data = json.dumps(
            {"choices": [{"message": {"role": "assistant", "content": content}}], "usage": {}}
        ).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: object) -> None:
        pass


@contextmanager
def model() -> Iterator[int]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Model)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()


def test_llm_candidates_pass_the_gates_behind_the_ack(
    soupd_home: Home, start_soupd: StartSoupd
) -> None:
    with model() as port:
        soupd_home.add_soul(
            "ada",
            f'[llm]\nbase_url = "http://127.0.0.1:{port}/v1"\nmodel = "m"\ntimeout = 5\n'
            "retries = 0\n"
            '[reflect]\nreflector = "extractive"\n[gate]\njudge = "builtin"\n',
        )
        daemon = start_soupd()
        for text in (OCEAN, GARBAGE, BROKEN):
            pushed = daemon.push("ada", text, kind="dm", sender="ana")
            assert pushed["status"] == "stored", pushed

        def settled() -> dict[str, int] | None:
            figures: dict[str, int] = daemon.result("soul.stats", {"soul": "ada"})["extraction"]
            return figures if figures.get("answered", 0) + figures.get("failures", 0) >= 3 else None

        figures = wait_for(settled, "the extractor to have asked about every event")
        listing = daemon.result("claims", {"soul": "ada", "all": True})
        context = daemon.result("context", {"soul": "ada", "query": "what does ana love?"})

    values = {(c["slot"], c["value"]) for c in listing["claims"]}
    assert ("likes", "the ocean") in values
    assert not any(value == "astronaut" for _, value in values)  # a forged quote
    assert not any(slot == "password" for slot, _ in values)  # outside the whitelist
    # The inference is kept apart under its seed id, and the context never states it.
    (kept,) = listing["unspoken"]
    assert kept["id"].startswith("unspoken.")
    assert kept["sentence"] == "I never call my father."
    assert kept["unspoken"] is True
    recalled = next(s for s in context["sections"] if s["name"] == "recalled")
    assert all(not label.startswith("unspoken") for label in recalled["items"])
    assert "the ocean" in context["text"]
    # What was refused is counted by cause; the failing model is a failure, no more.
    assert figures["refused.quote"] == 1, figures
    assert figures["refused.slot"] == 1, figures
    assert figures["refused.garbage"] == 1, figures
    assert figures["failures"] == 1, figures
    assert figures["unspoken"] == 1, figures
    assert daemon.result("soul.stats", {"soul": "ada"})["soul"] == "ada"
    assert any(BROKEN in prompt for prompt in _Model.prompts)
