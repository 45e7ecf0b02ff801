"""The HTTP API of a real daemon, spoken to with a real HTTP client (httpx) on loopback.

The token is read from the file the daemon made; the address from ``daemon.status``
(the tests ask for port 0, so each daemon gets a free one).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
import socket
import stat
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import jsonschema
import pytest

from .harness import Daemon, Home, StartSoupd, wait_for

CONFIG = "[http]\nport = 0\n[socket]\nmax_frame_bytes = 4096\n"


class Api:
    """The daemon's API: its base URL and token, and a client that sends the token."""

    def __init__(self, daemon: Daemon) -> None:
        self.daemon = daemon
        http = daemon.result("daemon.status")["http"]
        assert http["state"] == "up", http
        self.base = f"http://{http['address']}"
        self.token_file = daemon.home.state_dir / "http.token"
        assert http["token_file"] == str(self.token_file)
        self.token = self.token_file.read_text().strip()
        self.client = httpx.Client(
            base_url=self.base, headers={"authorization": f"Bearer {self.token}"}, timeout=15
        )

    def __enter__(self) -> Api:
        return self

    def __exit__(self, *exc: object) -> None:
        self.client.close()

    def post(self, path: str, body: Any = None, **kwargs: Any) -> httpx.Response:
        if body is not None:
            kwargs["json"] = body
        return self.client.post(path, **kwargs)

    def ok(self, path: str, body: Any = None) -> Any:
        response = self.post(path, body)
        assert response.status_code == 200, response.text
        assert response.headers["content-type"] == "application/json"
        return response.json()


@pytest.fixture
def api(soupd_home: Home, start_soupd: StartSoupd) -> Iterator[Api]:
    soupd_home.write_config(CONFIG)
    soupd_home.add_soul("ada")
    soupd_home.add_soul("bob")
    with Api(start_soupd()) as api:
        yield api


def test_push_then_recall_and_context_over_http(api: Api) -> None:
    pushed = api.ok("/v1/souls/ada/events", {"text": "the boiler pressure gauge reads 3 bar"})
    assert pushed["status"] == "stored"
    # The generic route takes the socket's params as they are.
    api.ok("/v1/rpc/event.push", {"soul": "ada", "text": "Kim fixed the boiler", "ref": "m-2"})
    items = api.ok("/v1/souls/ada/recall", {"query": "boiler"})["items"]
    assert {i["text"] for i in items} == {
        "the boiler pressure gauge reads 3 bar",
        "Kim fixed the boiler",
    }
    same = api.ok("/v1/rpc/recall", {"soul": "ada", "query": "boiler"})["items"]
    assert [i["text"] for i in same] == [i["text"] for i in items]
    context = api.ok("/v1/souls/ada/context", {"query": "boiler"})
    assert "boiler" in context["text"]
    # Souls are apart over HTTP as over the socket.
    assert api.ok("/v1/souls/bob/recall", {"query": "boiler"})["items"] == []
    # What HTTP stored is what the socket sees.
    assert api.daemon.counts("ada")[0] == 2
    assert api.ok("/v1/rpc/soul.list")["souls"][0]["name"] == "ada"
    status = api.daemon.home.cli("status")
    assert status.returncode == 0, status.stderr
    assert f"http API: up at {api.base}; token in {api.token_file}; " in status.stdout


def test_no_or_a_wrong_token_is_401_and_the_token_file_is_private(api: Api) -> None:
    mode = stat.S_IMODE(api.token_file.stat().st_mode)
    assert mode == 0o600
    assert len(api.token) >= 40
    body = {"query": "boiler"}
    anonymous = httpx.post(f"{api.base}/v1/souls/ada/recall", json=body, timeout=15)
    wrong = httpx.post(
        f"{api.base}/v1/rpc/event.push",
        json={"soul": "ada", "text": "wire the money"},
        headers={"authorization": "Bearer " + api.token[:-1] + "x"},
        timeout=15,
    )
    basic = httpx.post(
        f"{api.base}/v1/souls/ada/events",
        json={"text": "wire the money"},
        headers={"authorization": f"Basic {api.token}"},
        timeout=15,
    )
    stream = httpx.get(f"{api.base}/v1/souls/ada/subscribe", timeout=15)
    for response in (anonymous, wrong, basic, stream):
        assert response.status_code == 401, response.text
        assert response.json()["error"]["code"] == "unauthorized"
        assert str(api.token_file) in response.json()["error"]["message"]
        assert response.headers["www-authenticate"].startswith("Bearer")
    assert api.daemon.counts("ada")[0] == 0
    assert api.daemon.result("daemon.status")["http"]["unauthorized"] == 4
    # One line per request, with its route and status; the token is in no line.
    refused = [e for e in api.daemon.log() if e.get("event") == "http.request"]
    assert {(e["route"], e["status"]) for e in refused} >= {
        ("/v1/souls/{soul}/{method}", 401),
        ("/v1/rpc/{method}", 401),
        ("/v1/souls/{soul}/events", 401),
        ("/v1/souls/{soul}/subscribe", 401),
    }
    assert all(isinstance(e["ms"], float) for e in refused)
    assert api.token not in api.daemon.log_path.read_text()
    (listening,) = [e for e in api.daemon.log() if e.get("event") == "http.listening"]
    assert f"http://{listening['address']}" == api.base


def test_openapi_lists_every_socket_method(api: Api) -> None:
    response = httpx.get(f"{api.base}/openapi.json", timeout=15)  # no token needed
    assert response.status_code == 200
    document = json.loads(response.content)
    assert document["openapi"].startswith("3.1")
    # The socket names every method it has when asked for one it has not.
    unknown = api.daemon.call("no.such.method")["error"]["message"]
    methods = unknown.split("known methods: ")[1].split(", ")
    assert {"event.push", "recall", "context", "forget", "subscribe"} <= set(methods)
    paths = document["paths"]
    schemas = document["components"]["schemas"]
    for method in methods:
        if method == "subscribe":
            assert "get" in paths["/v1/subscribe"]
            assert "get" in paths["/v1/souls/{soul}/subscribe"]
            continue
        operation = paths[f"/v1/rpc/{method}"]["post"]
        ref = operation["requestBody"]["content"]["application/json"]["schema"]["$ref"]
        assert ref.rsplit("/", 1)[1] in schemas, method
    recall = schemas[
        paths["/v1/rpc/recall"]["post"]["requestBody"]["content"]["application/json"]["schema"][
            "$ref"
        ].rsplit("/", 1)[1]
    ]
    assert {"soul", "query", "k", "since"} <= set(recall["properties"])
    assert recall["additionalProperties"] is False
    in_path = paths["/v1/souls/{soul}/recall"]["post"]
    assert in_path["parameters"][0]["name"] == "soul"
    body = in_path["requestBody"]["content"]["application/json"]["schema"]["$ref"]
    assert "soul" not in schemas[body.rsplit("/", 1)[1]]["properties"]
    assert "post" in paths["/v1/souls/{soul}/events"]
    assert document["components"]["securitySchemes"]["bearer"]["scheme"] == "bearer"
    # Identifiers a code generator takes, one per operation.
    ids = [op["operationId"] for path in paths.values() for op in path.values()]
    assert all(re.fullmatch(r"[A-Za-z0-9_]+", i) for i in ids), ids
    assert len(ids) == len(set(ids))
    # Every answer is described; a method with a result Struct by that Struct's schema.
    for path, item in paths.items():
        if path.startswith("/v1/rpc/") or path.startswith("/v1/souls/{soul}/"):
            for operation in item.values():
                ok = operation["responses"]["200"]
                if "application/json" in ok.get("content", {}):
                    assert ok["content"]["application/json"]["schema"], path


def answer_validator(document: Any, route: str) -> jsonschema.Draft202012Validator:
    ok = document["paths"][route]["post"]["responses"]["200"]
    schema = ok["content"]["application/json"]["schema"]
    assert "$ref" in schema, route  # a typed result
    return jsonschema.Draft202012Validator({**schema, "components": document["components"]})


def test_the_answers_are_what_the_document_says(api: Api) -> None:
    document = httpx.get(f"{api.base}/openapi.json", timeout=15).json()
    calls: list[tuple[str, Any]] = [
        ("/v1/souls/ada/events", {"text": "the boiler pressure gauge reads 3 bar", "ref": "b1"}),
        ("/v1/rpc/event.import", {"soul": "ada", "events": [{"text": "Kim fixed it"}, {}]}),
        ("/v1/souls/ada/recall", {"query": "boiler", "explain": True}),
        ("/v1/souls/ada/context", {"query": "boiler"}),
        ("/v1/souls/ada/why", {}),
        ("/v1/souls/ada/memory.list", {"limit": 1}),
        ("/v1/souls/ada/memory.get", {"id": 1}),
        ("/v1/souls/ada/forget", {"ref": "b1", "dry_run": True}),
        ("/v1/souls/ada/decay", {"dry_run": True}),
        ("/v1/souls/ada/tasks", {}),
        ("/v1/souls/ada/soul.stats", {}),
        ("/v1/souls/ada/confidence", {"topic": "boiler"}),
        ("/v1/souls/ada/reflect", {}),
    ]
    for path, body in calls:
        route = path.replace("/souls/ada/", "/souls/{soul}/")
        answer = api.ok(path, body)
        errors = [e.message for e in answer_validator(document, route).iter_errors(answer)]
        assert not errors, (path, errors, answer)


def test_subscribe_streams_outputs_as_server_sent_events(api: Api) -> None:
    events: list[tuple[str, Any]] = []
    subscribed = threading.Event()
    done = threading.Event()

    def listen() -> None:
        with api.client.stream("GET", "/v1/souls/ada/subscribe?kinds=reflect") as response:
            assert response.status_code == 200
            assert response.headers["content-type"].startswith("text/event-stream")
            name = None
            for line in response.iter_lines():
                if line.startswith("event: "):
                    name = line.removeprefix("event: ")
                elif line.startswith("data: "):
                    events.append((name or "", json.loads(line.removeprefix("data: "))))
                    if name == "subscribed":
                        subscribed.set()
                    elif name == "output":
                        done.set()
                        return

    reader = threading.Thread(target=listen, daemon=True)
    reader.start()
    assert subscribed.wait(15), events
    assert api.daemon.result("daemon.status")["http"]["streams"] == 1
    # Alarm words make news: the soul reflects at once, and says so as an output.
    api.ok("/v1/souls/ada/events", {"text": "the migration failed again, rollback failed"})
    assert done.wait(15), events
    reader.join(15)
    (_, hello), (_, output) = events
    assert hello == {"subscribed": True, "souls": ["ada"], "kinds": ["reflect"]}
    assert (output["soul"], output["kind"]) == ("ada", "reflect")
    wait_for(
        lambda: api.daemon.result("daemon.status")["http"]["streams"] == 0, "the stream to end"
    )
    unknown = api.client.get("/v1/souls/nobody/subscribe")
    assert (unknown.status_code, unknown.json()["error"]["code"]) == (404, "unknown_soul")
    bad = api.client.get("/v1/subscribe?buffer=0")
    assert (bad.status_code, bad.json()["error"]["code"]) == (400, "invalid_params")
    typo = api.client.get("/v1/souls/ada/subscribe?kinds=reflect,wakeups")
    assert (typo.status_code, typo.json()["error"]["code"]) == (400, "invalid_params")
    assert "unknown output kind 'wakeups'; the kinds are card, direct," in typo.text
    assert api.daemon.result("daemon.status")["http"]["streams"] == 0


def test_bad_bodies_are_400_naming_the_problem_and_the_daemon_goes_on(api: Api) -> None:
    broken = api.post("/v1/rpc/recall", content=b'{"soul": "ada", "query": ')
    assert broken.status_code == 400
    assert broken.json()["error"]["code"] == "invalid_params"
    assert "truncated" in broken.json()["error"]["message"]
    typo = api.post("/v1/souls/ada/recall", {"qurey": "boiler"})
    assert typo.status_code == 400
    assert "qurey" in typo.json()["error"]["message"]
    not_json = api.post("/v1/souls/ada/events", content=b"text=hello")
    assert (not_json.status_code, not_json.json()["error"]["code"]) == (400, "bad_frame")
    a_list = api.post("/v1/souls/ada/events", ["hello"])
    assert a_list.status_code == 400
    other = api.post("/v1/souls/ada/events", {"soul": "bob", "text": "hello"})
    assert other.status_code == 400
    assert "leave soul out" in other.json()["error"]["message"]
    refused = api.post("/v1/souls/ada/events", {"text": "db password=hunter2-correct-horse"})
    assert (refused.status_code, refused.json()["error"]["code"]) == (422, "hygiene.credential")
    nobody = api.post("/v1/souls/nobody/recall", {"query": "x"})
    assert (nobody.status_code, nobody.json()["error"]["code"]) == (404, "unknown_soul")
    no_method = api.post("/v1/rpc/no.such", {})
    assert (no_method.status_code, no_method.json()["error"]["code"]) == (404, "unknown_method")
    no_route = api.client.get("/v1/nothing")
    assert (no_route.status_code, no_route.json()["error"]["code"]) == (404, "not_found")
    wrong_verb = api.client.get("/v1/rpc/recall")
    assert wrong_verb.status_code == 405
    # Nothing of that was stored, and the daemon serves on.
    assert api.ok("/v1/souls/ada/events", {"text": "still here"})["status"] == "stored"
    assert api.daemon.counts("ada")[0] == 1


def test_an_oversized_body_is_413(api: Api) -> None:
    big = {"text": "x" * 5000}
    declared = api.post("/v1/souls/ada/events", big)
    assert declared.status_code == 413
    assert declared.json()["error"]["code"] == "frame_too_large"
    assert "4096" in declared.json()["error"]["message"]

    def chunks() -> Iterator[bytes]:  # no Content-Length: counted as it comes
        yield b'{"text": "'
        for _ in range(10):
            yield b"y" * 1000
        yield b'"}'

    streamed = api.post("/v1/souls/ada/events", content=chunks())
    assert streamed.status_code == 413
    assert api.ok("/v1/souls/ada/events", {"text": "small enough"})["status"] == "stored"
    assert api.daemon.counts("ada")[0] == 1


def test_http_can_be_switched_off(soupd_home: Home, start_soupd: StartSoupd) -> None:
    soupd_home.write_config("[http]\nenabled = false\n")
    daemon = start_soupd()
    assert daemon.result("daemon.status")["http"] is None
    assert "http API: off" in soupd_home.cli("status").stdout
    assert not (soupd_home.state_dir / "http.token").exists()
    assert not [e for e in daemon.log() if e.get("event", "").startswith("http.")]


def test_a_taken_port_is_logged_and_the_daemon_runs_on(
    soupd_home: Home, start_soupd: StartSoupd
) -> None:
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        soupd_home.write_config(f"[http]\nport = {port}\n")
        daemon = start_soupd()
        http = daemon.result("daemon.status")["http"]
        assert (http["state"], http["address"]) == ("backoff", None)
        assert "in use" in http["last_error"]
        (failed,) = [e for e in daemon.log() if e.get("event") == "http.bind_failed"]
        assert (failed["port"], failed["level"]) == (port, "warning")
        assert daemon.push("default", "the socket serves on")["status"] == "stored"


def test_the_readme_curl_example_works(soupd_home: Home, start_soupd: StartSoupd) -> None:
    """The README's HTTP example, run by a shell as written (only the port is the test
    daemon's, and the endless subscribe runs for a few seconds, in the background)."""
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    section = readme.split("\n## HTTP API\n", 1)[1].split("\n## ", 1)[0]
    script = section.split("```sh\n", 1)[1].split("```", 1)[0].replace("\\\n", " ")
    assert "http.token" in section
    soupd_home.write_config("[http]\nport = 0\n")
    daemon = start_soupd()
    address = daemon.result("daemon.status")["http"]["address"]
    lines = [line for line in script.splitlines() if "/subscribe" not in line]
    [subscribe] = [line for line in script.splitlines() if "/subscribe" in line]
    # The token is read first; the stream is open while the other requests are made.
    stream = soupd_home.root / "stream.sse"
    streaming = f"{subscribe.replace('curl ', 'curl --max-time 4 ', 1)} > {stream} &"
    wait = "wait || true"  # curl ends the stream at --max-time: exit 28
    commands = "\n".join([lines[0], streaming, "sleep 1", *lines[1:], wait])
    commands = commands.replace("127.0.0.1:7411", address)
    done = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", commands + "\n"],
        env=soupd_home.env,
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    # curl ends no answer with a newline: the two come as one line.
    decoder = json.JSONDecoder()
    pushed, end = decoder.raw_decode(done.stdout)
    recalled, _ = decoder.raw_decode(done.stdout, end)
    promised = next(line for line in lines if line.startswith("# {"))
    assert json.dumps(pushed, separators=(",", ":")).startswith(promised[2:].rstrip(".}"))
    assert recalled["items"][0]["refs"] == ["ci-4711"]
    # The example names its kinds: the stream opened, and no log line came down it.
    sse = stream.read_text(encoding="utf-8")
    assert "event: subscribed" in sse, sse
    assert '"kind":"log"' not in sse, sse


def test_a_webhook_channel_is_also_a_route_of_the_api(
    soupd_home: Home, start_soupd: StartSoupd
) -> None:
    secret = "an e2e webhook secret"
    soupd_home.extra_env["SOUPD_E2E_HOOK_SECRET"] = secret
    soupd_home.write_config(
        CONFIG + '[[channels]]\nname = "hooks"\nkind = "webhook"\nsouls = ["ada"]\n'
        'port = 0\nmax_body = 1024\nsecret_env = "SOUPD_E2E_HOOK_SECRET"\n'
        '[[channels]]\nname = "open"\nkind = "webhook"\nsouls = ["ada"]\n'
        "port = 0\nallow_unauthenticated = true\n"
    )
    soupd_home.add_soul("ada")
    with Api(start_soupd()) as api:
        webhook_deliveries(api, secret)
        webhook_errors(api, secret)


def webhook_deliveries(api: Api, secret: str) -> None:
    body = json.dumps({"text": "deploy failed: migration timeout", "ref": "ci-9"}).encode()
    signature = "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
    # No bearer token: the channel's signature is what lets a delivery in.
    signed = httpx.post(
        f"{api.base}/v1/webhooks/hooks",
        content=body,
        headers={"x-hub-signature-256": signature},
        timeout=15,
    )
    assert signed.status_code == 200, signed.text
    assert signed.json() == {"status": "accepted", "ref": "ci-9", "souls": {"ada": "stored"}}
    forged = api.post("/v1/webhooks/hooks", content=b'{"text": "wire the money"}')
    assert forged.status_code == 401
    assert "X-Hub-Signature-256" in forged.json()["error"]["message"]
    unknown = httpx.post(f"{api.base}/v1/webhooks/nope", content=body, timeout=15)
    assert unknown.status_code == 404
    # An unsigned webhook stays on its own port: any web page could post to the API's.
    unsigned = httpx.post(f"{api.base}/v1/webhooks/open", content=body, timeout=15)
    assert unsigned.status_code == 403
    assert "own port only" in unsigned.json()["error"]["message"]
    assert api.daemon.recall("ada", "migration")[0]["refs"] == ["ci-9"]
    assert api.daemon.counts("ada")[0] == 1
    hooks, _open = api.daemon.result("daemon.status")["channels"]
    assert (hooks["stored"], hooks["unauthorized"]) == (1, 1)
    document = httpx.get(f"{api.base}/openapi.json", timeout=15).json()
    assert document["paths"]["/v1/webhooks/{channel}"]["post"]["security"] == []


def webhook_errors(api: Api, secret: str) -> None:
    """Every webhook error, on the API's route and on the channel's own port, is the
    API's error object, {"error": {"code", "message"}}, with the documented status."""

    def signed(body: bytes, **headers: str) -> dict[str, str]:
        digest = hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
        return {"x-hub-signature-256": f"sha256={digest}", **headers}

    def error(response: httpx.Response) -> tuple[int, str, str]:
        assert response.headers["content-type"] == "application/json", response.text
        answer = response.json()
        assert set(answer) == {"error"}, answer
        assert set(answer["error"]) == {"code", "message"}, answer
        return response.status_code, answer["error"]["code"], answer["error"]["message"]

    route = f"{api.base}/v1/webhooks"
    event = json.dumps({"text": "the build is green again"}).encode()
    bodies = {
        "nochan": (event, {}),
        "open": (event, {}),
        "hooks": (b'{"text": "wire the money"}', {"x-hub-signature-256": "sha256=00"}),
    }
    refused = [
        error(httpx.post(f"{route}/{name}", content=body, headers=headers, timeout=15))
        for name, (body, headers) in bodies.items()
    ]
    assert [answer[:2] for answer in refused] == [
        (404, "unknown_channel"),
        (403, "unsigned_webhook"),
        (401, "bad_signature"),
    ]
    assert "no webhook channel 'nochan'; see [[channels]]" in refused[0][2]
    malformed = [
        (b"{not json", {}),
        (b'{"txt": "a typo"}', {}),
        (b'{"action": "opened"}', {"x-github-event": "issues"}),
        (b'{"text": "' + b"x" * 2048 + b'"}', {}),
    ]
    answers = [
        error(httpx.post(f"{route}/hooks", content=body, headers=signed(body, **more), timeout=15))
        for body, more in malformed
    ]
    assert [answer[:2] for answer in answers] == [
        (400, "bad_frame"),
        (400, "invalid_params"),
        (400, "invalid_params"),
        (413, "frame_too_large"),
    ]
    assert "txt" in answers[1][2]
    assert "1024 bytes" in answers[3][2]
    # The channel's own port answers the same way, a wrong method too.
    hooks = next(c for c in api.daemon.result("daemon.status")["channels"] if c["name"] == "hooks")
    own = f"http://{hooks['address']}/"
    assert error(httpx.get(own, timeout=15))[:2] == (405, "method_not_allowed")
    forged = httpx.post(own, content=event, timeout=15)
    assert error(forged)[:2] == (401, "bad_signature")
    assert "www-authenticate" not in forged.headers  # no bearer token is asked for
    assert api.daemon.counts("ada")[0] == 1  # none of them stored anything


def test_a_stream_ends_cleanly_when_the_daemon_stops(api: Api) -> None:
    ended: list[str] = []
    subscribed = threading.Event()

    def listen() -> None:
        try:
            with api.client.stream("GET", "/v1/subscribe") as response:
                for line in response.iter_lines():
                    if line == "event: subscribed":
                        subscribed.set()
            ended.append("ended")  # the last chunk came: no cut connection
        except httpx.HTTPError as exc:
            ended.append(f"{type(exc).__name__}: {exc}")

    reader = threading.Thread(target=listen, daemon=True)
    reader.start()
    assert subscribed.wait(15)
    assert api.daemon.stop() == 0
    reader.join(15)
    assert ended == ["ended"]


def test_a_body_that_does_not_arrive_is_408(soupd_home: Home, start_soupd: StartSoupd) -> None:
    soupd_home.write_config("[http]\nport = 0\nbody_timeout = 0.5\n")
    daemon = start_soupd()
    with Api(daemon) as api:
        host, port = api.base.removeprefix("http://").rsplit(":", 1)
        with socket.create_connection((host, int(port)), timeout=15) as conn:
            head = (
                "POST /v1/souls/default/events HTTP/1.1\r\nHost: soupd\r\n"
                f"Authorization: Bearer {api.token}\r\nContent-Length: 100\r\n\r\n"
            )
            conn.sendall(head.encode() + b'{"text": "and then noth')
            answer = b""
            while b"\r\n\r\n" not in answer:
                chunk = conn.recv(65536)
                assert chunk, answer
                answer += chunk
        assert answer.startswith(b"HTTP/1.1 408 "), answer
        # The daemon serves on, and nothing was stored.
        assert api.ok("/v1/souls/default/events", {"text": "in one piece"})["status"] == "stored"
        assert daemon.counts("default")[0] == 1


def test_a_connection_that_sends_no_request_is_closed(
    soupd_home: Home, start_soupd: StartSoupd
) -> None:
    soupd_home.write_config("[http]\nport = 0\nbody_timeout = 0.5\n")
    daemon = start_soupd()
    with Api(daemon) as api:
        host, port = api.base.removeprefix("http://").rsplit(":", 1)
        with socket.create_connection((host, int(port)), timeout=15) as silent:
            silent.sendall(b"POST /v1/souls/default/events HTTP/1.1\r\nHost: so")
            assert silent.recv(65536) == b""  # closed by the daemon, not by the timeout
        assert api.ok("/v1/souls/default/events", {"text": "served on"})["status"] == "stored"


def test_a_token_file_others_may_read_keeps_the_api_off(
    soupd_home: Home, start_soupd: StartSoupd
) -> None:
    soupd_home.write_config("[http]\nport = 0\n")
    daemon = start_soupd()
    token_file = soupd_home.state_dir / "http.token"
    assert daemon.stop() == 0
    token_file.chmod(0o644)
    daemon = start_soupd()
    http = daemon.result("daemon.status")["http"]
    assert (http["state"], http["address"]) == ("failed", None)
    assert f"chmod 600 {token_file}" in http["last_error"]
    (refused,) = [e for e in daemon.log() if e.get("event") == "http.token_refused"]
    assert refused["level"] == "error"
    assert daemon.push("default", "the socket serves on")["status"] == "stored"


def test_past_max_connections_the_answer_is_the_json_error_with_retry_after(
    soupd_home: Home, start_soupd: StartSoupd
) -> None:
    soupd_home.write_config("[http]\nport = 0\nmax_connections = 2\n")
    daemon = start_soupd()
    with Api(daemon) as api:
        host, port = api.base.removeprefix("http://").rsplit(":", 1)
        held = [socket.create_connection((host, int(port)), timeout=15) for _ in range(2)]
        answers: list[httpx.Response] = []

        def refused_once() -> bool:
            # A read: the probes until the held connections are accepted store nothing.
            answers.append(api.post("/v1/souls/default/recall", {"query": "x"}))
            return answers[-1].status_code != 200

        try:
            # Both slots are taken (the connections wait, their head timer far off).
            wait_for(refused_once, "a request past max_connections")
        finally:
            for conn in held:
                conn.close()
        refused = answers[-1]
        assert refused.status_code == 503, refused.text
        assert refused.headers["content-type"] == "application/json"
        assert refused.headers["retry-after"] == "1"
        assert refused.headers["connection"] == "close"
        error = refused.json()["error"]
        assert error["code"] == "too_many_connections"
        assert "at most 2 connections" in error["message"]
        assert "[http] max_connections" in error["message"]
        # The slots freed, the API serves, and nothing of the refused request was stored.
        ok = wait_for(
            lambda: api.post("/v1/souls/default/events", {"text": "in time"}).status_code == 200,
            "a slot to free",
        )
        assert ok
        assert daemon.counts("default")[0] == 1
        assert daemon.result("daemon.status")["http"]["refused"] >= 1
        lines = [e for e in daemon.log() if e.get("event") == "http.request"]
        assert {(e["route"], e["status"]) for e in lines} >= {("*", 503)}
