"""Memories by id, end to end: memory.list pages with a cursor and recall's filters,
memory.get, memory.update (the corrected text supersedes the old one everywhere) and
memory.delete (forget by id: no byte of the text left in the soul's state)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from .harness import Daemon, Home, StartSoupd

CHAT = [
    # (ref, sender, session, kind, ts, text)
    ("r1", "mel", "s1", "message", "2026-03-01T10:00:00Z", "the harbour crane is fixed"),
    ("r2", "ada", "s1", "assistant", "2026-03-01T10:01:00Z", "glad the crane works again"),
    ("r3", "mel", "s2", "message", "2026-03-02T09:00:00Z", "we booked the train to Leipzig"),
    ("r4", "mel", "s2", "message", "2026-03-03T09:00:00Z", "my sister's kid Noor turns five"),
    ("r5", "bob", "s3", "message", "2026-03-04T09:00:00Z", "the rent goes up in march"),
]


def seed(daemon: Daemon) -> None:
    for ref, sender, session, kind, ts, text in CHAT:
        daemon.result(
            "event.push",
            {"soul": "ada", "text": text, "ref": ref, "sender": sender, "session": session,
             "kind": kind, "ts": ts},
        )  # fmt: skip


def listing(daemon: Daemon, **params: Any) -> list[dict[str, Any]]:
    """Every memory.list item under ``params``, page by page (limit 2)."""
    items: list[dict[str, Any]] = []
    cursor = None
    for _ in range(20):
        page = daemon.result("memory.list", {"soul": "ada", "limit": 2, **params, "cursor": cursor})
        assert len(page["items"]) <= 2
        items += page["items"]
        cursor = page["next_cursor"]
        if cursor is None:
            return items
    raise AssertionError("memory.list never reached its last page")


def test_list_pages_newest_first_with_each_filter(
    soupd_home: Home, start_soupd: StartSoupd
) -> None:
    soupd_home.add_soul("ada")
    daemon = start_soupd()
    seed(daemon)
    every = listing(daemon)
    assert [i["ref"] for i in every] == ["r5", "r4", "r3", "r2", "r1"]
    ids = [i["id"] for i in every]
    assert ids == sorted(ids, reverse=True)
    assert len(set(ids)) == 5
    first = every[-1]
    assert (first["text"], first["sender"], first["session"]) == (
        "the harbour crane is fixed",
        "mel",
        "s1",
    )
    assert first["kind"] == "observation"
    assert first["hidden_at"] is None
    # One page holds everything when the limit allows it, and says there is no more.
    whole = daemon.result("memory.list", {"soul": "ada", "limit": 5})
    assert (len(whole["items"]), whole["next_cursor"]) == (5, None)

    def refs(**params: Any) -> list[str]:
        return [i["ref"] for i in listing(daemon, **params)]

    assert refs(sender="mel") == ["r4", "r3", "r1"]
    assert refs(session="s2") == ["r4", "r3"]
    assert refs(kind="assistant") == ["r2"]
    assert refs(since="2026-03-02T00:00:00Z") == ["r5", "r4", "r3"]
    assert refs(until="2026-03-02T09:00:00Z") == ["r2", "r1"]  # until is exclusive
    assert refs(sender="mel", since="2026-03-02T00:00:00Z", until="2026-03-03T00:00:00Z") == ["r3"]
    assert refs(sender="nobody") == []


@pytest.mark.parametrize(
    ("params", "said"),
    [
        ({"cursor": "m12"}, "cursor"),
        ({"limit": 0}, "limit"),
        ({"limit": 100_000}, "limit"),
        ({"sender": " "}, "sender"),
        ({"since": "whenever"}, "since"),
        ({"since": "2026-03-02T00:00:00Z", "until": "2026-03-01T00:00:00Z"}, "until"),
        ({"colour": "red"}, "colour"),
    ],
)
def test_list_refuses_bad_params_clearly(
    soupd_home: Home, start_soupd: StartSoupd, params: dict[str, Any], said: str
) -> None:
    soupd_home.add_soul("ada")
    daemon = start_soupd()
    reply = daemon.call("memory.list", {"soul": "ada", **params})
    assert reply["error"]["code"] == "invalid_params"
    assert said in reply["error"]["message"]


def test_get_and_not_found(soupd_home: Home, start_soupd: StartSoupd) -> None:
    soupd_home.add_soul("ada")
    daemon = start_soupd()
    seed(daemon)
    newest = daemon.result("memory.list", {"soul": "ada", "limit": 1})["items"][0]
    got = daemon.result("memory.get", {"soul": "ada", "id": newest["id"]})
    assert got == newest
    assert got["text"] == "the rent goes up in march"
    missing = daemon.call("memory.get", {"soul": "ada", "id": newest["id"] + 100})
    assert missing["error"]["code"] == "not_found"
    assert "soupd memories" in missing["error"]["message"]
    bad = daemon.call("memory.get", {"soul": "ada", "id": "x3"})  # 3 and m3 are ids
    assert bad["error"]["code"] == "invalid_params"


def test_update_supersedes_the_old_text(soupd_home: Home, start_soupd: StartSoupd) -> None:
    soupd_home.add_soul("ada")
    daemon = start_soupd()
    seed(daemon)
    (old,) = [i for i in listing(daemon) if i["ref"] == "r3"]
    assert [i["text"] for i in daemon.recall("ada", "Leipzig train")][:1] == [old["text"]]
    corrected = "we booked the train to Dresden, not Leipzig"
    updated = daemon.result("memory.update", {"soul": "ada", "id": old["id"], "text": corrected})
    assert updated["replaced"] == old["id"]
    assert updated["id"] != old["id"]
    assert updated["forgot"]["events"] == 1
    new = daemon.result("memory.get", {"soul": "ada", "id": updated["id"]})
    # The same utterance said right: who, where and when stay; the text is the new one.
    keep = ("ref", "sender", "session", "channel", "ts")
    assert {k: new[k] for k in keep} == {k: old[k] for k in keep}
    assert new["text"] == corrected
    gone = daemon.call("memory.get", {"soul": "ada", "id": old["id"]})
    assert gone["error"]["code"] == "not_found"
    # Recall has the corrected text, never the old one.
    texts = [i["text"] for i in daemon.recall("ada", "booked train")]
    assert corrected in texts
    assert old["text"] not in texts
    assert all(i["text"] != old["text"] for i in listing(daemon))
    # The old message pushed again under its ref cannot bring the wrong text back.
    again = daemon.result("event.push", {"soul": "ada", "text": old["text"], "ref": "r3"})
    assert again["status"] == "duplicate"
    assert daemon.result("soul.stats", {"soul": "ada"})["events"] == len(CHAT)

    # Refused corrections change nothing.
    for text, code in [
        ("", "invalid_params"),
        (corrected, "invalid_params"),  # what it says already
        ("my token is ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8", "hygiene.credential"),
    ]:
        reply = daemon.call("memory.update", {"soul": "ada", "id": updated["id"], "text": text})
        assert reply["error"]["code"] == code, reply
    assert daemon.result("memory.get", {"soul": "ada", "id": updated["id"]})["text"] == corrected


def test_update_re_derives_claims(soupd_home: Home, start_soupd: StartSoupd) -> None:
    soupd_home.add_soul("ada")
    daemon = start_soupd()
    pushed = daemon.result("event.push", {"soul": "ada", "text": "I live in Lisbon"})
    (memory,) = daemon.result("memory.list", {"soul": "ada"})["items"]
    assert memory["event_id"] == pushed["event_id"]

    def values() -> list[str]:
        return [c["value"] for c in daemon.result("claims", {"soul": "ada"})["claims"]]

    assert any("Lisbon" in v for v in values()), values()
    daemon.result("memory.update", {"soul": "ada", "id": memory["id"], "text": "I live in Porto"})
    assert any("Porto" in v for v in values()), values()
    assert not any("Lisbon" in v for v in values()), values()


def test_delete_reaches_every_derived_table(soupd_home: Home, start_soupd: StartSoupd) -> None:
    soupd_home.add_soul("ada")
    daemon = start_soupd()
    seed(daemon)
    daemon.result("event.push", {"soul": "ada", "text": "the flamingo neighbour plays drums"})
    daemon.result("reflect", {"soul": "ada"})
    # Recall (Hebbian edges, recall counts) and a context (the assembly log) with it in;
    # their queries are the user's, not the memory's, and forget leaves them as they are.
    daemon.result("recall", {"soul": "ada", "query": "neighbour drums"})
    daemon.result("context", {"soul": "ada", "query": "who plays drums"})
    state = soupd_home.soul_dir("ada")

    def hits() -> list[str]:
        return sorted(
            str(p.relative_to(state))
            for p in state.rglob("*")
            if p.is_file() and b"flamingo" in p.read_bytes().lower()
        )

    assert hits()
    (flamingo,) = [i for i in listing(daemon) if "flamingo" in i["text"]]
    result = soupd_home.cli("--json", "forget", "ada", "--id", str(flamingo["id"]))
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["events"] == 1
    assert hits() == []
    assert daemon.recall("ada", "harbour crane")  # the rest is intact
    assert len(listing(daemon)) == len(CHAT)
    again = daemon.call("memory.delete", {"soul": "ada", "id": flamingo["id"]})
    assert again["error"]["code"] == "not_found"
    assert daemon.stop() == 0
    assert hits() == []


def test_cli_memories_and_memory(soupd_home: Home, start_soupd: StartSoupd) -> None:
    soupd_home.add_soul("ada")
    daemon = start_soupd()
    seed(daemon)
    page = soupd_home.cli("memories", "ada", "--sender", "mel", "--limit", "2")
    assert page.returncode == 0, page.stderr
    lines = page.stdout.splitlines()
    assert lines[0].endswith("mel: my sister's kid Noor turns five")
    assert "2026-03-03T09:00:00+00:00" in lines[0]
    assert lines[-1].startswith("(more: --cursor ")
    cursor = lines[-1].removeprefix("(more: --cursor ").rstrip(")")
    rest = soupd_home.cli("--json", "memories", "ada", "--sender", "mel", "--cursor", cursor)
    (last,) = json.loads(rest.stdout)["items"]
    assert (last["text"], last["ts"]) == ("the harbour crane is fixed", "2026-03-01T10:00:00+00:00")
    got = soupd_home.cli("memory", "get", "ada", str(last["id"]), "--json")
    assert json.loads(got.stdout)["ref"] == "r1"
    fixed = soupd_home.cli(
        "memory", "update", "ada", str(last["id"]), "the harbour crane is broken"
    )
    assert fixed.returncode == 0, fixed.stderr
    assert f"memory m{last['id']} corrected: now m" in fixed.stdout
    assert [i["text"] for i in daemon.recall("ada", "harbour crane broken")][:1] == [
        "the harbour crane is broken"
    ]
    gone = soupd_home.cli("memory", "get", "ada", str(last["id"]))
    assert gone.returncode == 6, gone.stderr  # not found
    assert "not_found" in gone.stderr
    usage = soupd_home.cli("memory", "update", "ada", str(last["id"]))
    assert usage.returncode == 2  # the text is missing: a usage error
    newest = json.loads(soupd_home.cli("--json", "memories", "ada", "--limit", "1").stdout)
    deleted = soupd_home.cli("memory", "delete", "ada", str(newest["items"][0]["id"]))
    assert deleted.returncode == 0, deleted.stderr
    assert deleted.stdout.startswith("forgot 1 events, 1 memories")
