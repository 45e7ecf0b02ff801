"""Channels, end to end: the real daemon with ``[[channels]]`` in soupd.toml.

A signed webhook is stored and a forged one refused; a Telegram conversation (a fake
Bot API on loopback, in a thread of this process, built from the standard library
only) reaches the soul, and the soul's wake-up goes back to that chat, also after a
restart with nobody speaking in between; reloads start, restart and stop only the
channel whose table changed; ``daemon.status`` shows each channel's state.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import hmac
import json
import signal
import sys
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from .harness import Daemon, Home, StartSoupd, wait_for

SECRET = "e2e webhook secret"
TOKEN = "123456:e2e-token"


def webhook_table(name: str, souls: str = '["ada"]') -> str:
    return (
        f'[[channels]]\nname = "{name}"\nkind = "webhook"\nsouls = {souls}\n'
        'port = 0\nsecret_env = "SOUPD_E2E_HOOK_SECRET"\n'
    )


def channels(daemon: Daemon) -> dict[str, dict[str, Any]]:
    return {c["name"]: c for c in daemon.result("daemon.status")["channels"]}


def up(daemon: Daemon, *names: str) -> dict[str, dict[str, Any]]:
    def ready() -> dict[str, dict[str, Any]] | None:
        found = channels(daemon)
        ok = set(found) == set(names) and all(c["state"] == "up" for c in found.values())
        return found if ok else None

    return wait_for(ready, f"channels {names} up")  # type: ignore[no-any-return]


def post(address: str, body: bytes, signature: str | None) -> tuple[int, dict[str, Any]]:
    headers = {"Content-Type": "application/json"}
    if signature is not None:
        headers["X-Hub-Signature-256"] = signature
    request = urllib.request.Request(f"http://{address}/", body, headers, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=15) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def sign(body: bytes, secret: str = SECRET) -> str:
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


@pytest.fixture
def home(soupd_home: Home) -> Home:
    soupd_home.extra_env["SOUPD_E2E_HOOK_SECRET"] = SECRET
    soupd_home.extra_env["SOUPD_E2E_TELEGRAM"] = TOKEN
    soupd_home.add_soul("ada")
    soupd_home.add_soul("bob")
    return soupd_home


def test_signed_webhooks_are_stored_and_forged_ones_refused(
    home: Home, start_soupd: StartSoupd
) -> None:
    home.write_config(webhook_table("hooks"))
    daemon = start_soupd()
    address = up(daemon, "hooks")["hooks"]["address"]

    body = json.dumps({"text": "deploy failed: migration timeout", "ref": "ci-9"}).encode()
    accepted = {"status": "accepted", "ref": "ci-9", "souls": {"ada": "stored"}}
    assert post(address, body, sign(body)) == (200, accepted)
    forged = json.dumps({"text": "wire the money", "ref": "evil"}).encode()
    status, answer = post(address, forged, sign(forged, "a guess"))
    assert status == 401
    assert answer["error"]["code"] == "bad_signature"
    assert "X-Hub-Signature-256" in answer["error"]["message"]
    assert post(address, forged, None)[0] == 401

    assert daemon.recall("ada", "migration")[0]["refs"] == ["ci-9"]
    assert not any("money" in i["text"] for i in daemon.recall("ada", "money"))
    assert daemon.counts("ada")[0] == 1
    hooks = channels(daemon)["hooks"]
    assert (hooks["stored"], hooks["unauthorized"], hooks["kind"]) == (1, 2, "webhook")
    status = home.cli("status")
    assert status.returncode == 0, status.stderr
    assert "channel hooks (webhook): up; 1 stored, 0 unacknowledged" in status.stdout


def test_an_unsigned_webhook_is_refused_unless_asked_for_and_then_warned(
    home: Home, start_soupd: StartSoupd
) -> None:
    """Any local user can reach a TCP port (the Unix socket would refuse them by uid)."""
    unsigned = '[[channels]]\nname = "hooks"\nkind = "webhook"\nsouls = ["ada"]\nport = 0\n'
    home.write_config(unsigned)
    refused = home.cli("start")
    assert refused.returncode == 2, refused
    assert "needs secret_env or secret_file" in refused.stderr
    assert "allow_unauthenticated = true" in refused.stderr

    home.write_config(unsigned + "allow_unauthenticated = true\n")
    daemon = start_soupd()
    address = up(daemon, "hooks")["hooks"]["address"]
    (listening,) = [e for e in daemon.log() if e.get("event") == "webhook.listening"]
    assert (listening["address"], listening["signed"]) == (address, False)
    (warned,) = [e for e in daemon.log() if e.get("event") == "webhook.unauthenticated"]
    assert warned["level"] == "warning"
    assert warned["address"] == address
    body = json.dumps({"text": "a note anyone could send", "ref": "u-1"}).encode()
    assert post(address, body, None)[0] == 200


def test_reload_touches_only_the_changed_channel(home: Home, start_soupd: StartSoupd) -> None:
    config = home.write_config(webhook_table("hooks"))
    daemon = start_soupd()
    address = up(daemon, "hooks")["hooks"]["address"]
    body = json.dumps({"text": "first", "ref": "r-1"}).encode()
    assert post(address, body, sign(body))[0] == 200

    config.write_text(webhook_table("hooks") + webhook_table("more"))
    daemon.send_signal(signal.SIGHUP)
    found = up(daemon, "hooks", "more")
    # Untouched: the same listener, its counters intact.
    assert (found["hooks"]["address"], found["hooks"]["stored"]) == (address, 1)

    config.write_text(webhook_table("hooks") + webhook_table("more", '["bob"]'))
    daemon.send_signal(signal.SIGHUP)
    wait_for(lambda: channels(daemon).get("more", {}).get("souls") == ["bob"], "more → bob")
    found = up(daemon, "hooks", "more")
    assert found["hooks"]["stored"] == 1

    config.write_text(webhook_table("more", '["bob"]'))
    daemon.send_signal(signal.SIGHUP)
    up(daemon, "more")
    wait_for(lambda: set(channels(daemon)) == {"more"}, "hooks stopped")
    with pytest.raises(urllib.error.URLError, match="refused"):
        post(address, body, sign(body))  # "hooks" is gone: nobody listens there

    # A literal secret is refused: the last good config stays in force.
    config.write_text(webhook_table("more", '["bob"]') + 'secret = "hunter2"\n')
    daemon.send_signal(signal.SIGHUP)
    wait_for(
        lambda: any(
            e.get("event") == "config.reload_rejected" and e.get("key") == "channels[0].secret"
            for e in daemon.log()
        ),
        "the rejection logged",
    )
    assert set(channels(daemon)) == {"more"}


class _BotAPI(BaseHTTPRequestHandler):
    """Telegram's Bot API, enough of it: getMe, getUpdates (long poll), sendMessage."""

    server: _FakeTelegram

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length", 0))
        params = json.loads(self.rfile.read(length) or b"{}")
        method = self.path.removeprefix(f"/bot{TOKEN}/")
        result: Any
        if method == "getMe":
            result = {"id": 4242, "is_bot": True, "first_name": "Ada", "username": "ada_bot"}
        elif method == "getUpdates":
            result = self.server.updates_after(params.get("offset"), params.get("timeout", 0))
        elif method == "sendMessage":
            self.server.sent.append(params)
            result = {"message_id": 1, "chat": {"id": params["chat_id"]}, "date": 0}
        else:
            self._answer(404, {"ok": False, "error_code": 404, "description": "Not Found"})
            return
        self._answer(200, {"ok": True, "result": result})

    def _answer(self, status: int, body: Any) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:
        pass


class _FakeTelegram(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _BotAPI)
        self.updates: list[dict[str, Any]] = []
        self.sent: list[dict[str, Any]] = []
        self.changed = threading.Condition()

    def add(self, update: dict[str, Any]) -> None:
        with self.changed:
            self.updates.append(update)
            self.changed.notify_all()

    def updates_after(self, offset: int | None, timeout: float) -> list[dict[str, Any]]:
        with self.changed:
            self.updates = [u for u in self.updates if u["update_id"] >= (offset or 0)]
            if not self.updates:
                self.changed.wait(min(timeout, 1.0))
            return list(self.updates)

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A daemon stopped in the middle of a long poll hung up: nothing to report.
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


@pytest.fixture
def telegram() -> Iterator[_FakeTelegram]:
    server = _FakeTelegram()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


def telegram_table(telegram: _FakeTelegram) -> str:
    port = telegram.server_address[1]
    return (
        "[schedule]\ntasks_poll_seconds = 0.1\n\n"
        '[[channels]]\nname = "tg"\nkind = "telegram"\nsouls = ["ada"]\n'
        f'token_env = "SOUPD_E2E_TELEGRAM"\napi_url = "http://127.0.0.1:{port}"\n'
        "poll_timeout = 1\n"
    )


def kim_says(telegram: _FakeTelegram, daemon: Daemon, text: str) -> None:
    """Kim writes to the bot in a private chat (77); returns once the update is confirmed."""
    chat = {"id": 77, "type": "private", "first_name": "Kim"}
    message = {"message_id": 5, "from": {"id": 7, "is_bot": False, "first_name": "Kim"}}
    message |= {"chat": chat, "date": 1_780_000_000, "text": text}
    telegram.add({"update_id": 500, "message": message})
    wait_for(lambda: channels(daemon)["tg"]["offset"] == 501, "the update confirmed")


def remind_soon(home: Home, soul: str, text: str) -> None:
    """A ``TASKS.md`` line due in a second, added through the CLI."""
    due = (dt.datetime.now(dt.UTC) + dt.timedelta(seconds=1)).strftime("%Y-%m-%dT%H:%M:%SZ")
    assert home.cli("remind", soul, text, "--at", due).returncode == 0


def test_a_telegram_chat_reaches_the_soul_and_its_wakeup_goes_back(
    home: Home, start_soupd: StartSoupd, telegram: _FakeTelegram
) -> None:
    home.write_config(telegram_table(telegram))
    daemon = start_soupd()
    up(daemon, "tg")
    kim_says(telegram, daemon, "remind me to water the plants")

    assert daemon.recall("ada", "plants")[0]["refs"] == ["telegram:77:5"]
    context = daemon.result("context", {"soul": "ada", "query": "plants"})["text"]
    assert "water the plants" in context

    remind_soon(home, "ada", "water the plants")
    wait_for(lambda: telegram.sent, "the wake-up sent to the chat", timeout=20)
    assert telegram.sent == [{"chat_id": "77", "text": "water the plants"}]
    assert channels(daemon)["tg"]["sent"] == 1


def test_a_wakeup_after_a_restart_still_finds_the_chat(
    home: Home, start_soupd: StartSoupd, telegram: _FakeTelegram
) -> None:
    """Where the soul last heard from someone is kept in the state directory, so a
    wake-up after a restart reaches the chat though nobody spoke since."""
    home.write_config(telegram_table(telegram))
    first = start_soupd()
    up(first, "tg")
    kim_says(telegram, first, "remind me to call the plumber")
    # Confirmed upstream: the restarted daemon is not sent the message again.
    wait_for(lambda: not telegram.updates, "the update gone from the fake Bot API")
    assert first.stop() == 0
    kept = home.state_dir / "channels" / "conversations.json"
    assert json.loads(kept.read_text()) == {
        "version": 1,
        "souls": {"ada": {"channel": "tg", "conversation": "77"}},
    }
    assert kept.stat().st_mode & 0o777 == 0o600

    second = start_soupd()
    up(second, "tg")
    remind_soon(home, "ada", "call the plumber")
    wait_for(lambda: telegram.sent, "the wake-up sent to the chat", timeout=20)
    assert telegram.sent == [{"chat_id": "77", "text": "call the plumber"}]
    tg = channels(second)["tg"]
    assert (tg["received"], tg["sent"], tg["unroutable"]) == (0, 1, 0)  # nobody spoke since
