"""A memory id is taken as ``soupd memories`` prints it (``m7``) or as its number
(``7``), by every command and method that takes one: the CLI's ``memory get|update|
delete`` and ``forget --id``, the socket's and the HTTP API's ``memory.*`` methods
and ``forget``. Any other text is refused, naming the forms that are accepted. A
forget by id has a dry run, as every forget: the same counts, nothing changed."""

from __future__ import annotations

import contextlib
import json
import sqlite3
import subprocess

import httpx

from .harness import Daemon, Home, StartSoupd

USAGE, REFUSED = 2, 5


def ok(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 0, (result.returncode, result.stderr)
    assert result.stderr == ""
    return result.stdout


def seed(daemon: Daemon) -> None:
    for i, text in enumerate(
        ("the harbour crane is fixed", "we booked the train to Leipzig", "the rent goes up")
    ):
        daemon.push("ada", text, ref=f"r{i + 1}")


def test_the_cli_takes_the_id_memories_prints(soupd_home: Home, start_soupd: StartSoupd) -> None:
    soupd_home.add_soul("ada")
    daemon = start_soupd()
    seed(daemon)
    listed = ok(soupd_home.cli("memories", "ada"))
    assert "[m2] " in listed

    as_label = json.loads(ok(soupd_home.cli("--json", "memory", "get", "ada", "m2")))
    as_number = json.loads(ok(soupd_home.cli("--json", "memory", "get", "ada", "2")))

    assert as_label == as_number
    assert (as_label["id"], as_label["text"]) == (2, "we booked the train to Leipzig")
    assert ok(soupd_home.cli("memory", "get", "ada", "m2")).startswith("[m2] ")
    updated = ok(soupd_home.cli("memory", "update", "ada", "m2", "we booked the train to Dresden"))
    assert updated.startswith("memory m2 corrected: now m4")
    assert ok(soupd_home.cli("memory", "delete", "ada", "m4")).startswith("forgot 1 events")
    assert ok(soupd_home.cli("forget", "ada", "--id", "m1")).startswith("forgot 1 events")
    assert [m["text"] for m in daemon.result("memory.list", {"soul": "ada"})["items"]] == [
        "the rent goes up"
    ]


def test_the_cli_refuses_any_other_id_naming_the_forms(
    soupd_home: Home, start_soupd: StartSoupd
) -> None:
    soupd_home.add_soul("ada")
    daemon = start_soupd()
    seed(daemon)

    for args in (
        ("memory", "get", "ada", "x2"),
        ("memory", "delete", "ada", "m"),
        ("memory", "update", "ada", "m0", "text"),
        ("forget", "ada", "--id", "two"),
        ("forget", "ada", "--id", "-1"),
    ):
        refused = soupd_home.cli(*args)
        assert refused.returncode == USAGE, (args, refused.stderr)
        assert "give its number (7) or its label (m7)" in refused.stderr, (args, refused.stderr)
    assert daemon.counts("ada") == (3, 3)  # nothing was forgotten


def test_the_socket_and_http_take_a_label_or_a_number(
    soupd_home: Home, start_soupd: StartSoupd
) -> None:
    soupd_home.write_config("[http]\nport = 0\n")
    soupd_home.add_soul("ada")
    daemon = start_soupd()
    seed(daemon)
    by_number = daemon.result("memory.get", {"soul": "ada", "id": 3})

    assert daemon.result("memory.get", {"soul": "ada", "id": "m3"}) == by_number
    assert daemon.result("memory.get", {"soul": "ada", "id": "3"}) == by_number
    for bad in ("x3", "m", "", "m-3", "3.0", "m٣"):
        refused = daemon.call("memory.get", {"soul": "ada", "id": bad})["error"]
        assert refused["code"] == "invalid_params", bad
        assert "give its number (7) or its label (m7)" in refused["message"], refused
    http = daemon.result("daemon.status")["http"]
    token = (soupd_home.state_dir / "http.token").read_text().strip()
    with httpx.Client(
        base_url=f"http://{http['address']}",
        headers={"authorization": f"Bearer {token}"},
        timeout=15,
    ) as client:
        got = client.post("/v1/rpc/memory.get", json={"soul": "ada", "id": "m3"})
        bad = client.post("/v1/rpc/memory.get", json={"soul": "ada", "id": "third"})
        gone = client.post("/v1/rpc/memory.delete", json={"soul": "ada", "id": "m3"})
    assert got.status_code == 200, got.text
    assert got.json() == by_number
    assert bad.status_code == 400, bad.text
    assert bad.json()["error"]["code"] == "invalid_params"
    assert gone.json()["memories"] == 1
    assert daemon.counts("ada") == (2, 2)


def dump(home: Home, soul: str) -> list[str]:
    """The soul's database, every table as SQL, read through a read-only connection."""
    uri = f"file:{home.soul_dir(soul) / 'soul.db'}?mode=ro"
    with contextlib.closing(sqlite3.connect(uri, uri=True)) as db:
        return list(db.iterdump())


def test_forget_by_id_dry_run_counts_and_changes_nothing(
    soupd_home: Home, start_soupd: StartSoupd
) -> None:
    soupd_home.add_soul("ada")
    daemon = start_soupd()
    seed(daemon)
    assert len(daemon.recall("ada", "train Leipzig")) == 1
    ok(soupd_home.cli("decay", "ada", "--dry-run"))  # what the soul held pending, committed
    before = dump(soupd_home, "ada")

    said = ok(soupd_home.cli("forget", "ada", "--id", "m2", "--dry-run"))
    counted = json.loads(ok(soupd_home.cli("--json", "forget", "ada", "--id", "2", "--dry-run")))
    on_the_socket = daemon.result("forget", {"soul": "ada", "id": "m2", "dry_run": True})

    assert said.startswith("would forget 1 events, 1 memories, "), said
    assert (counted["events"], counted["memories"], counted["dry_run"]) == (1, 1, True)
    assert on_the_socket == counted
    assert dump(soupd_home, "ada") == before
    assert daemon.counts("ada") == (3, 3)
    forgot = json.loads(ok(soupd_home.cli("--json", "forget", "ada", "--id", "m2")))
    assert forgot == {**counted, "dry_run": False}  # what the dry run counted
    assert daemon.counts("ada") == (2, 2)
    assert daemon.recall("ada", "train Leipzig") == []
    # No such memory: not found (exit 6), as memory get says; one criterion only.
    missing = soupd_home.cli("forget", "ada", "--id", "m2", "--dry-run")
    assert (missing.returncode, missing.stderr.split(":")[1].strip()) == (6, "not_found")
    two = daemon.call("forget", {"soul": "ada", "id": 1, "ref": "r1", "dry_run": True})
    assert two["error"]["code"] == "invalid_params"
    assert "exactly one of ref, match, id, before or all" in two["error"]["message"]
