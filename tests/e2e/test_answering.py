"""A soul that answers, end to end: a direct message reaches the real daemon, the
responder asks the soul for its context, a chat model on loopback calls tools (recall,
remind, remember_person), and the reply is stored as an assistant event and published
for the channels. And cross-channel identity: one person writing from two accounts."""

from __future__ import annotations

import http.server
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, ClassVar

from .harness import Daemon, Home, StartSoupd, request_frame, wait_for
from .test_channels import TOKEN, _FakeTelegram


class _Model(http.server.BaseHTTPRequestHandler):
    """A chat model that, per conversation, recalls, then sets a reminder and links a
    person, then answers with what the tools said."""

    requests: ClassVar[list[dict[str, Any]]] = []

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.requests.append(body)
        results = [m["content"] for m in body["messages"] if m["role"] == "tool"]
        if not results:
            calls = [("recall", {"query": "deploy"})]
        elif len(results) == 1:
            calls = [
                ("remind", {"text": "check the deploy", "at": "2030-01-01T09:00:00Z"}),
                ("remember_person", {"person": "Ann", "channel": "slack", "id": "U42"}),
            ]
        else:
            calls = []
        message: dict[str, Any] = {"role": "assistant", "content": None}
        if calls:
            message["tool_calls"] = [
                {
                    "id": f"c{i}",
                    "type": "function",
                    "function": {"name": n, "arguments": json.dumps(a)},
                }
                for i, (n, a) in enumerate(calls)
            ]
        else:
            message["content"] = "From memory: " + results[0].splitlines()[0]
        answer = json.dumps({"choices": [{"message": message}], "usage": {"total_tokens": 5}})
        data = answer.encode()
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


def assistant_events(daemon: Daemon) -> list[dict[str, Any]]:
    records = daemon.result("export", {"soul": "ada"})["records"]
    return [r for r in records if r["type"] == "event" and r["kind"] == "assistant"]


def test_a_direct_message_is_answered_with_tools(soupd_home: Home, start_soupd: StartSoupd) -> None:
    with model() as port:
        soupd_home.add_soul(
            "ada",
            f'[llm]\nbase_url = "http://127.0.0.1:{port}/v1"\nmodel = "m"\n'
            '[reflect]\nreflector = "extractive"\n[answer]\nenabled = true\n',
        )
        daemon = start_soupd()
        daemon.push("ada", "deploy failed: migration timeout", sender="ci")
        with daemon.connect() as conn:
            conn.send(request_frame(1, "subscribe", {"souls": ["ada"], "kinds": ["reply"]}))
            assert "result" in conn.recv()
            daemon.push(
                "ada",
                "did the deploy fail?",
                kind="dm",
                sender="4711",
                channel="telegram",
                session="tg:1",
            )
            reply = conn.recv()
        assert reply["output"]["kind"] == "reply"
        payload = reply["output"]["payload"]
        assert payload["session"] == "tg:1"
        assert payload["channel"] == "telegram"
        assert payload["text"].startswith("From memory: [observation")
        (stored,) = assistant_events(daemon)
        assert stored["text"] == payload["text"]
        assert stored["session"] == "tg:1"
        tasks = (soupd_home.soul_dir("ada") / "TASKS.md").read_text()
        assert "check the deploy @due(2030-01-01" in tasks
        persons = daemon.result("persons", {"soul": "ada"})["persons"]
        assert persons == [{"id": 1, "name": "Ann", "identities": ["slack:U42"]}]
        first = _Model.requests[-3]
        assert "did the deploy fail?" in first["messages"][1]["content"]
        # The soul's context for the message is the system prompt: it recalled the failure.
        assert "deploy failed: migration timeout" in first["messages"][0]["content"]
        status = daemon.result("daemon.status")
        assert status["answers"] == {"answered": 1, "failed": 0}


def test_one_person_from_two_accounts(soupd_home: Home, start_soupd: StartSoupd) -> None:
    soupd_home.add_soul("ada")
    daemon = start_soupd()
    daemon.push(
        "ada", "My cat is Tuanzi.", sender="4711", channel="telegram", ts="2026-01-01T09:00:00Z"
    )
    linked = daemon.result(
        "person.link", {"soul": "ada", "person": "Ann", "identity": "telegram:4711"}
    )
    assert (linked["events"], linked["claims"]) == (1, 2)  # pet_kind and pet_name
    cli = soupd_home.cli("person", "link", "ada", "Ann", "slack:U42")
    assert cli.returncode == 0, cli.stderr
    assert "slack:U42 is Ann" in cli.stdout
    daemon.push(
        "ada",
        "We renamed the cat Mochi, I hate that the vet failed us.",
        sender="U42",
        channel="slack",
        ts="2026-02-01T09:00:00Z",
    )
    claims = daemon.result("claims", {"soul": "ada", "all": True})["claims"]
    pets = {c["value"]: c for c in claims if c["slot"] == "pet_name"}
    assert pets["Mochi"]["subject"] == pets["Tuanzi"]["subject"] == "Ann"
    assert (pets["Mochi"]["state"], pets["Tuanzi"]["state"]) == ("active", "superseded")
    context = daemon.result("context", {"soul": "ada", "query": "how is ann"})
    feelings = next(s["text"] for s in context["sections"] if s["name"] == "gut_feelings")
    assert "- Ann: " in feelings  # the feeling follows the person, shown by name
    bad = daemon.call("person.link", {"soul": "ada", "person": "Ann", "identity": "slack"})
    assert "is not CHANNEL:ID" in bad["error"]["message"]
    listed = soupd_home.cli("persons", "ada")
    assert "Ann: slack:U42, telegram:4711" in listed.stdout


def test_a_telegram_dm_is_answered_in_its_chat(soupd_home: Home) -> None:
    """The whole way: Telegram → the soul → the responder and its model → Telegram."""
    fake = _FakeTelegram()
    thread = threading.Thread(target=fake.serve_forever, daemon=True)
    thread.start()
    try:
        with model() as port:
            soupd_home.extra_env["SOUPD_E2E_TELEGRAM"] = TOKEN
            soupd_home.add_soul(
                "ada",
                f'[llm]\nbase_url = "http://127.0.0.1:{port}/v1"\nmodel = "m"\n'
                '[reflect]\nreflector = "extractive"\n[answer]\nenabled = true\n',
            )
            soupd_home.write_config(
                '[[channels]]\nname = "tg"\nkind = "telegram"\nsouls = ["ada"]\n'
                'token_env = "SOUPD_E2E_TELEGRAM"\n'
                f'api_url = "http://127.0.0.1:{fake.server_address[1]}"\npoll_timeout = 1\n'
            )
            daemon = Daemon.start(soupd_home)
            try:
                daemon.push("ada", "deploy failed: migration timeout", sender="ci")
                chat = {"id": 77, "type": "private", "first_name": "Kim"}
                message = {"message_id": 5, "from": {"id": 7, "is_bot": False, "first_name": "Kim"}}
                message |= {"chat": chat, "date": 1_780_000_000, "text": "did the deploy fail?"}
                fake.add({"update_id": 500, "message": message})
                wait_for(lambda: fake.sent, "the answer sent to the chat", timeout=30)
                (sent,) = fake.sent
                assert sent["chat_id"] == "77"
                assert sent["text"].startswith("From memory: [observation")
                (stored,) = assistant_events(daemon)
                assert stored["text"] == sent["text"]
                assert stored["session"] == "tg:77"
            finally:
                daemon.stop()
    finally:
        fake.shutdown()
        fake.server_close()


class _Unsure(http.server.BaseHTTPRequestHandler):
    """A chat model that writes summaries for reflects, finds nothing when asked to
    extract claims and, as the answer loop, admits it does not know. Each request is
    recorded as (what it was for, the model asked)."""

    requests: ClassVar[list[tuple[str, str]]] = []

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        system = body["messages"][0]["content"]
        if "consolidated memory summary" in system:
            purpose, content = "reflect", "## Notable\n- asked about the cluster upgrade [m1]"
        elif system.startswith("Extract facts that the speaker states"):
            purpose, content = "extract", "[]"
        else:
            purpose, content = "answer", "Honestly I don't know which version we pinned."
        self.requests.append((purpose, body["model"]))
        reply = {"choices": [{"message": {"role": "assistant", "content": content}}]}
        data = json.dumps(reply).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: object) -> None:
        pass


def test_escalation_reaches_the_answer_it_was_meant_for_only(
    soupd_home: Home, start_soupd: StartSoupd
) -> None:
    """The soul knows nothing of the topic, so the answer's first call goes to the big
    model; the reflects after it (the soul's own client) stay on the small one."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Unsure)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        soupd_home.add_soul(
            "ada",
            f'[llm]\nbase_url = "http://127.0.0.1:{server.server_address[1]}/v1"\n'
            'model = "small"\nescalation_model = "large"\n[answer]\nenabled = true\n',
        )
        daemon = start_soupd()
        with daemon.connect() as conn:
            conn.send(request_frame(1, "subscribe", {"souls": ["ada"], "kinds": ["reply"]}))
            assert "result" in conn.recv()
            daemon.push(
                "ada",
                "hey quick q - which kubernetes version did we pin for the cluster upgrade?? "
                "1.29 or 1.30, i keep mixing them up",
                kind="dm",
                sender="4711",
                channel="telegram",
                session="tg:1",
            )
            reply = conn.recv()
        assert reply["output"]["payload"]["text"].startswith("Honestly I don't know")
        daemon.push("ada", "nvm, found it in the runbook: we pinned 1.29 after all")
        daemon.result("reflect", {"soul": "ada"})
    finally:
        server.shutdown()
        server.server_close()
    answers = [model for purpose, model in _Unsure.requests if purpose == "answer"]
    reflects = [model for purpose, model in _Unsure.requests if purpose == "reflect"]
    assert answers == ["large"]
    assert len(reflects) >= 2
    assert set(reflects) == {"small"}
    # Every stored event went to the extractor too, never to the big model.
    extracts = [model for purpose, model in _Unsure.requests if purpose == "extract"]
    assert extracts
    assert set(extracts) == {"small"}
