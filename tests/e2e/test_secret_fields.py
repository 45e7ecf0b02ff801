"""A secret is refused in every field a request carries, not only in an event's text.

Each case sends one real-format secret (assembled at run time) in one field of one
method — a push's sender or session, a goal's trigger, a card's tag, a task, a context
query, a webhook's ref — through the real daemon. Each must be refused with
``hygiene.credential``, the message naming the field and never quoting the secret.
Afterwards no byte of any secret is anywhere: not in the soul's state directory (its
database, WAL, MEMORY.md, TASKS.md, cards/), not in the daemon's logs.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from e2e.harness import Daemon, Home, running, wait_for

A = "a1B2c3D4e5F6g7H8i9J0"
HOOK_SECRET = "e2e webhook secret"

# One of each family, built here so no literal secret sits in the repository. The tail
# of each is what must never appear on disk.
SECRETS = [
    "ghp_" + A + A[:16],
    "https://hooks.slack.com/services/T0" + "1ABCDEF/B0" + "2GHIJKL/" + A + "wxyz",
    "AKIA" + "QWERTYUIOP234567",
    "password: Hunt3r2" + A[:6],
    "sk_live_" + A + "qz",
    "我的密码是 Qwe" + A[:8],
]
TAILS = [secret[-10:] for secret in SECRETS]

RACE = ["race day"]

# (method, params without the secret, the field that gets it, as the error names it).
# A field given as "tags[1]" puts the secret second in that list.
CASES: list[tuple[str, dict[str, Any], str]] = [
    ("event.push", {"text": "lunch with the team"}, "sender"),
    ("event.push", {"text": "lunch with the team"}, "ref"),
    ("event.push", {"text": "lunch with the team"}, "session"),
    ("event.push", {"text": "lunch with the team"}, "group"),
    ("event.push", {"text": "lunch with the team"}, "channel"),
    ("event.push", {"text": "lunch with the team"}, "kind"),
    ("claim.add", {"value": "likes green tea"}, "subject"),
    ("claim.add", {"type": "fact"}, "value"),
    ("goal.update", {"action": "new", "statement": "run a marathon", "triggers": RACE}, "domain"),
    ("goal.update", {"action": "new", "triggers": RACE}, "statement"),
    ("goal.update", {"action": "new", "statement": "save for a flat"}, "triggers[1]"),
    ("goal.update", {"action": "progress", "goal_id": 1}, "note"),
    ("person.link", {"identity": "telegram:4242"}, "person"),
    ("card.add", {"conclusions": ["tea beats coffee"]}, "title"),
    ("card.add", {}, "conclusions[0]"),
    ("card.add", {"conclusions": ["tea beats coffee"]}, "tags[1]"),
    ("card.add", {"conclusions": ["tea beats coffee"]}, "questions[0]"),
    ("card.note", {"number": 1}, "text"),
    ("task.add", {"at": "2030-01-01T09:00:00Z"}, "text"),
    ("context", {}, "query"),
    ("recall", {}, "query"),
    ("confidence", {}, "topic"),
    ("lightning", {}, "topic"),
]


def params_with(params: dict[str, Any], field: str, secret: str) -> dict[str, Any]:
    out = {"soul": "alpha", **params}
    if field.endswith("]"):
        name = field[: field.index("[")]
        out[name] = ["ordinary", secret] if field.endswith("[1]") else [secret]
    elif field == "identity":
        out[field] = f"telegram:{secret}"
    else:
        out[field] = secret
    return out


def post(address: str, payload: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    body = json.dumps(payload).encode()
    signature = "sha256=" + hmac.new(HOOK_SECRET.encode(), body, hashlib.sha256).hexdigest()
    headers = {"Content-Type": "application/json", "X-Hub-Signature-256": signature}
    request = urllib.request.Request(f"http://{address}/", body, headers, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=15) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def hits(root: Path) -> list[str]:
    """Every file under ``root`` holding a secret's tail, byte-wise."""
    found = []
    for path in root.rglob("*"):
        if path.is_file() and not path.is_symlink():
            data = path.read_bytes()
            found += [f"{path}: {tail}" for tail in TAILS if tail.encode() in data]
    return found


def setup_soul(daemon: Daemon) -> None:
    """What the cases need to exist: a card to note on, a goal to progress."""
    daemon.push("alpha", "we met for green tea and talked about the half marathon")
    assert daemon.result("card.add", {"soul": "alpha", "conclusions": ["tea helps"]})
    goal = daemon.result(
        "goal.update",
        {"soul": "alpha", "action": "new", "statement": "run a half marathon", "triggers": RACE},
    )
    assert goal


def test_a_secret_in_any_field_is_refused_naming_the_field_and_leaves_no_trace(
    tmp_path: Path,
) -> None:
    home = Home(tmp_path)
    home.extra_env["SOUPD_E2E_HOOK_SECRET"] = HOOK_SECRET
    home.write_config(
        '[[channels]]\nname = "hooks"\nkind = "webhook"\nsouls = ["alpha"]\n'
        'port = 0\nsecret_env = "SOUPD_E2E_HOOK_SECRET"\n'
    )
    home.add_soul("alpha")
    try:
        with running(home) as daemon:
            setup_soul(daemon)
            before = daemon.counts("alpha")
            wrong = []
            for number, (method, params, field) in enumerate(CASES):
                secret = SECRETS[number % len(SECRETS)]
                reply = daemon.call(method, params_with(params, field, secret))
                error = reply.get("error") or {}
                message = str(error.get("message", ""))
                if error.get("code") != "hygiene.credential" or field not in message:
                    wrong.append(f"{method} {field}: {reply}")
                elif any(tail in message for tail in TAILS):
                    wrong.append(f"{method} {field}: the message quotes the secret")
            assert not wrong, "\n".join(wrong)

            # An import refuses only the line with the secret, naming its field.
            events = [
                {"text": "first line of the import"},
                {"text": "second line", "sender": SECRETS[0]},
                {"text": "third line", "ref": SECRETS[1]},
            ]
            imported = daemon.result("event.import", {"soul": "alpha", "events": events})
            assert (imported["stored"], imported["rejected"]) == (1, 2)
            assert [(r["index"], r["code"]) for r in imported["reasons"]] == [
                (1, "hygiene.credential"),
                (2, "hygiene.credential"),
            ]

            # A webhook event with a secret as its sender or ref: refused by the soul.
            (hooks,) = wait_for(
                lambda: [
                    c for c in daemon.result("daemon.status")["channels"] if c["state"] == "up"
                ],
                "webhook up",
            )
            for field, secret in (("sender", SECRETS[2]), ("ref", SECRETS[3])):
                status, answer = post(hooks["address"], {"text": "build ok", field: secret})
                assert answer["souls"] == {"alpha": "hygiene.credential"}, (status, answer)
            # A TASKS.md line written by hand with a secret is reported, never scheduled.
            tasks = home.soul_dir("alpha") / "TASKS.md"
            tasks.write_text(f"- [ ] rotate {SECRETS[4]} @due(2030-01-01 09:00)\n")
            synced = daemon.result("tasks", {"soul": "alpha"})
            assert synced["pending"] == []
            assert "credential" in json.dumps(synced["errors"])
            tasks.write_text("")
            daemon.result("tasks", {"soul": "alpha"})

            counts = daemon.counts("alpha")
            assert counts[0] == before[0] + 1, (before, counts)  # the one clean import line
        assert not hits(home.root), hits(home.root)
        assert not hits(home.runtime)
        assert os.listdir(home.soul_dir("alpha"))
    finally:
        home.cleanup()
