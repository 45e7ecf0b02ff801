"""A channel's event for a soul another daemon owns (the shared PostgreSQL store, #21):
two real daemons on one real database, a signed webhook on the one that does not own
the soul. The event is forwarded to the owner as an ``event.push`` and acknowledged with
the owner's answer, stored once; the same ref again is a duplicate; the owner's hygiene
refusal is a final answer; an owner that does not answer leaves it unacknowledged (503,
the upstream sends it again); once the owner stops, the soul is taken over here."""

from __future__ import annotations

import hashlib
import hmac
import json
import signal
from pathlib import Path
from typing import Any

import httpx

from e2e.harness import Daemon, Home, running, wait_for
from e2e.shared import shared_home

SECRET = "forwarding webhook secret"
# Owned from the start and never given up while the daemon runs.
AWAKE = "[lifecycle]\nhibernate_after = 0\n"
ACK_TIMEOUT = 4.0


def _with_webhook(home: Home) -> Home:
    config = home.config_dir / "soupd.toml"
    config.write_text(
        config.read_text()
        + '[[channels]]\nname = "hooks"\nkind = "webhook"\nsouls = ["alpha"]\nport = 0\n'
        + f'secret_env = "SOUPD_E2E_HOOK_SECRET"\nack_timeout = {ACK_TIMEOUT}\n'
    )
    home.extra_env["SOUPD_E2E_HOOK_SECRET"] = SECRET
    return home


def _hooks(daemon: Daemon) -> dict[str, Any]:
    (hooks,) = [c for c in daemon.result("daemon.status")["channels"] if c["name"] == "hooks"]
    return hooks  # type: ignore[no-any-return]


def _post(address: str, event: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    body = json.dumps(event).encode()
    signature = "sha256=" + hmac.new(SECRET.encode(), body, hashlib.sha256).hexdigest()
    response = httpx.post(
        f"http://{address}/",
        content=body,
        headers={"content-type": "application/json", "x-hub-signature-256": signature},
        timeout=30,
    )
    return response.status_code, response.json()


def _taken(daemon: Daemon) -> bool:
    return any(e.get("event") == "soul.lease_taken" for e in daemon.log())


def test_a_webhook_event_for_a_soul_the_other_daemon_owns_is_stored_by_the_owner(
    tmp_path: Path, pg_dsn: str
) -> None:
    a = _with_webhook(shared_home(tmp_path, "a", pg_dsn, AWAKE, ("alpha",)))
    b = shared_home(tmp_path, "b", pg_dsn, AWAKE, ("alpha",))
    owner: Daemon | None = None
    try:
        with running(b) as owner, running(a) as first:
            assert _taken(owner)
            address = wait_for(
                lambda: _hooks(first)["address"] if _hooks(first)["state"] == "up" else None,
                "the webhook up",
            )
            deploy = {
                "text": "the deploy of monday failed on the migration",
                "ref": "ci-1",
                "sender": "ci-bot",
            }
            accepted = {"status": "accepted", "ref": "ci-1", "souls": {"alpha": "stored"}}
            assert _post(address, deploy) == (200, accepted)
            # Stored by the owner, once, with the event's fields as the webhook made them.
            (item,) = owner.recall("alpha", "deploy migration", kind="webhook", sender="ci-bot")
            assert item["refs"] == ["ci-1"]
            assert owner.counts("alpha")[0] == 1
            assert not _taken(first)  # served by the owner only

            # The upstream's redelivery of the same ref: a duplicate, not a second event.
            assert _post(address, deploy) == (200, {**accepted, "souls": {"alpha": "duplicate"}})
            # The owner's hygiene gate refusing it is a final answer too.
            leaked = {"text": "the key is " + "AKIA" + "ABCDEFGHIJ234567", "ref": "ci-2"}
            status, refused = _post(address, leaked)
            assert (status, refused["souls"]) == (200, {"alpha": "hygiene.credential"})
            assert owner.counts("alpha")[0] == 1
            hooks = _hooks(first)
            counted = ("received", "stored", "duplicate", "rejected", "forwarded", "unacknowledged")
            assert [hooks[k] for k in counted] == [3, 1, 1, 1, 3, 0]

            # The owner stopped (SIGSTOP: its lease held, its port silent): no answer
            # within ack_timeout, so the event is not acknowledged and comes again.
            late = {"text": "tuesday's deploy went fine", "ref": "ci-3"}
            owner.send_signal(signal.SIGSTOP)
            try:
                status, answer = _post(address, late)
            finally:
                owner.send_signal(signal.SIGCONT)
            assert status == 503, answer
            assert answer["error"]["code"] == "channel.unacknowledged"
            assert f"within {ACK_TIMEOUT:g} s" in answer["error"]["message"]
            assert _hooks(first)["unacknowledged"] == 1
            # Sent again: stored once, whether or not the owner carried out the first try.
            status, again = _post(address, late)
            assert status == 200, again
            assert again["souls"]["alpha"] in ("stored", "duplicate")
            assert owner.counts("alpha")[0] == 2

            # The owner gone, its lease goes with it: the next event is taken over here.
            assert owner.stop() == 0
            later = {"text": "wednesday's deploy was rolled back", "ref": "ci-4"}

            def delivered() -> dict[str, Any] | None:
                status, answer = _post(address, later)
                return answer if status == 200 else None

            taken = wait_for(delivered, "the event stored by the daemon taking alpha over", 30)
            assert taken["souls"] == {"alpha": "stored"}
            assert _taken(first)
            assert first.counts("alpha")[0] == 3
            (item,) = [i for i in first.recall("alpha", "monday deploy") if "monday" in i["text"]]
            assert item["refs"] == ["ci-1"]
            assert _hooks(first)["forwarded"] == 4  # the takeover's event was stored here
    finally:
        if owner is not None:
            owner.send_signal(signal.SIGCONT)
        a.cleanup()
        b.cleanup()
