"""``soupd import`` of an export restores what the user set, end to end: goals, person
links (before the events, which come back attributed to the person) and stated claims;
a record the daemon or the importer refuses is a counted rejection with its line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .harness import Daemon, Home, StartSoupd


def seed(daemon: Daemon) -> None:
    def call(method: str, **params: Any) -> Any:
        return daemon.result(method, {"soul": "ada", **params})

    call("event.push", text="my name is Ann", channel="telegram", sender="4711", ref="a")
    call("person.link", person="Ann", identity="telegram:4711")
    call("person.link", person="Ann", identity="slack:U1")
    call("event.push", text="I live in Berlin", channel="telegram", sender="4711", ref="b")
    call("event.push", text="my dog is called Rex", channel="slack", sender="U1", ref="c")
    call("event.push", text="unlinked chatter", channel="slack", sender="U2", ref="d")
    call("event.push", text="I work as a teacher", channel="telegram", sender="4711", ref="e")
    call("event.push", text="I work as a nurse", channel="slack", sender="U1", ref="f")
    house = {"statement": "save for a house", "domain": "money", "priority": 4}
    call("goal.update", action="new", triggers=["rent goes up"], **house)
    call("goal.update", action="progress", goal_id=1, note="saved 500")
    call("goal.update", action="progress", goal_id=1, note="saved 900")
    call("goal.update", action="pause", goal_id=1)
    marathon = {"statement": "run a marathon", "speaker": "Ann"}
    call("goal.update", action="new", triggers=["running shoes", "race day"], **marathon)
    call("goal.update", action="achieve", goal_id=2, speaker="Ann", note="finished in 4h")
    call("goal.update", action="new", statement="learn Spanish", triggers=["travel plans"])
    call("claim.add", value="always answer in French", type="rule")
    call("claim.add", value="Tokyo", slot="location", subject="Ann")  # outranks Berlin
    gone = call("claim.add", value="owns a boat")
    call("claim.retract", id=gone["claim"]["id"])


def goals(daemon: Daemon, soul: str) -> list[dict[str, Any]]:
    keep = ("speaker", "statement", "domain", "priority", "triggers", "state")
    return [
        {**{k: g[k] for k in keep}, "notes": [n["text"] for n in g["progress"]]}
        for g in daemon.result("goals", {"soul": soul})["goals"]
    ]


def persons(daemon: Daemon, soul: str) -> list[tuple[str, list[str]]]:
    found = daemon.result("persons", {"soul": soul})["persons"]
    return [(p["name"], p["identities"]) for p in found]


def claims(daemon: Daemon, soul: str) -> list[tuple[Any, ...]]:
    keep = ("type", "subject", "slot", "value", "source", "state")
    found = daemon.result("claims", {"soul": soul})["claims"]
    return [tuple(c[k] for k in keep) for c in found]


def attributed(home: Home, soul: str) -> dict[str, str | None]:
    result = home.cli("export", soul)
    assert result.returncode == 0, result.stderr
    records = [json.loads(line) for line in result.stdout.splitlines()]
    return {r["ref"]: r["person"] for r in records if r["type"] == "event" and "text" in r}


def test_an_exported_soul_imports_with_its_goals_links_and_stated_claims(
    soupd_home: Home, start_soupd: StartSoupd, tmp_path: Path
) -> None:
    for soul in ("ada", "copy", "other"):
        soupd_home.add_soul(soul)
    daemon = start_soupd()
    seed(daemon)
    exported = tmp_path / "ada.jsonl"
    assert soupd_home.cli("export", "ada", exported).returncode == 0

    back = soupd_home.cli("--json", "import", "copy", exported)

    assert back.returncode == 0, back.stderr
    counts = json.loads(back.stdout)
    restored = ("stored", "rejected", "goals", "persons", "links", "claims")
    assert {k: counts[k] for k in restored} == {
        "stored": 6,
        "rejected": 0,
        "goals": 3,
        "persons": 1,
        "links": 2,
        "claims": 2,  # the retracted one is history
    }, counts["reasons"]
    assert goals(daemon, "copy") == goals(daemon, "ada")
    assert goals(daemon, "copy")[0]["notes"] == ["saved 500", "saved 900"]
    assert [g["state"] for g in goals(daemon, "copy")] == ["paused", "achieved", "active"]
    assert persons(daemon, "ada") == [("Ann", ["slack:U1", "telegram:4711"])]
    assert persons(daemon, "copy") == persons(daemon, "ada")
    # The links came first: the events are the person's as they arrive, and so are the
    # claims extracted from them: one person's job, which the later account's message
    # updates (linked afterwards, each account would keep its own job in force).
    by_ref = {"a": "Ann", "b": "Ann", "c": "Ann", "d": None, "e": "Ann", "f": "Ann"}
    assert attributed(soupd_home, "ada") == by_ref
    assert attributed(soupd_home, "copy") == by_ref
    assert claims(daemon, "copy") == claims(daemon, "ada")
    assert [c[3] for c in claims(daemon, "copy") if c[2] == "job"] == ["nurse"]
    assert ("fact", "Ann", "location", "Tokyo", "user", "active") in claims(daemon, "copy")
    assert ("rule", "user", None, "always answer in French", "user", "active") in claims(
        daemon, "copy"
    )

    again = json.loads(soupd_home.cli("--json", "import", "copy", exported).stdout)
    assert {k: again[k] for k in ("stored", "goals", "claims", "duplicate")} == {
        "stored": 0,
        "goals": 0,
        "claims": 0,
        "duplicate": 6 + 3 + 2,  # events, goals, claims: nothing restored twice
    }
    assert goals(daemon, "copy") == goals(daemon, "ada")
    assert claims(daemon, "copy") == claims(daemon, "ada")

    human = soupd_home.cli("import", "other", exported)
    assert human.returncode == 0, human.stderr
    assert human.stdout.splitlines()[1] == (
        "restored 3 goals, 1 persons with 2 linked accounts, 2 stated claims"
    )


def test_user_records_the_import_cannot_restore_are_rejected_by_line(
    soupd: Daemon, tmp_path: Path
) -> None:
    goal = {"type": "goal", "speaker": "user", "domain": "", "priority": 3, "state": "active"}
    lines = [
        {"type": "event", "text": "hello from the app", "channel": "app", "sender": "7"},  # 1
        {"type": "identity", "channel": "app", "external": "7", "person": 1},  # 2 linked first
        {"type": "person", "id": 1, "name": "Bo"},  # 3
        {"type": "person", "id": 2, "name": "Nobody"},  # 4 no account: skipped
        {"type": "identity", "channel": "app", "external": "8", "person": 9},  # 5 no person 9
        {**goal, "statement": "fix the roof", "triggers": "[\"roof leaks\"]"},  # 6 restored
        {**goal, "statement": "learn to sail", "triggers": []},  # 7 daemon: needs a trigger
        {**goal, "statement": "paint the shed", "triggers": ["paint"], "state": "done"},  # 8
        {"type": "fact", "subject": "user", "slot": None, "source": "user", "event_id": None,
         "value": "token " + "ghp" + "_" + "a1B2c3D4e5F6g7H8i9J0" + "K" * 16},  # 9 secret
        {"type": "telemetry", "value": 1},  # 10 unknown: skipped
        {"type": "claim", "kind": "rule", "subject": "user", "source": "user",
         "value": "keep answers short"},  # 11 a claim record typed as such: restored
    ]  # fmt: skip
    path = tmp_path / "hand.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")

    result = soupd.home.cli("--json", "import", "alpha", path)

    assert result.returncode == 5, result.stderr  # some lines were refused
    counts = json.loads(result.stdout)
    assert [(r["line"], r["code"]) for r in counts["reasons"]] == [
        (5, "bad_record"),
        (7, "invalid_params"),
        (8, "bad_record"),
        (9, "hygiene.credential"),
    ]
    assert all(r["message"] for r in counts["reasons"])
    restored = ("stored", "goals", "claims", "persons", "links", "skipped")
    assert {k: counts[k] for k in restored} == {
        "stored": 1,
        "goals": 1,
        "claims": 1,
        "persons": 1,
        "links": 1,
        "skipped": 2,
    }
    assert [g["statement"] for g in soupd.result("goals", {"soul": "alpha"})["goals"]] == [
        "fix the roof"
    ]
    assert attributed(soupd.home, "alpha") == {None: "Bo"}  # the event had no ref
    stated = soupd.result("claims", {"soul": "alpha"})["claims"]
    assert [(c["type"], c["value"]) for c in stated] == [("rule", "keep answers short")]


def test_replaying_a_file_without_refs_stores_each_event_once(
    soupd_home: Home, start_soupd: StartSoupd, tmp_path: Path
) -> None:
    """Chat exported without ids: a re-run after a crash, or a second import, must not
    double the soul. Events with a time get a key derived from what they are."""
    soupd_home.add_soul("ada")
    soupd_home.add_soul("copy")
    daemon = start_soupd()
    lines = [
        {
            "text": "morning! coffee?",
            "sender": "mel",
            "ts": "2026-03-02T08:00:00Z",
            "session": "d1",
        },
        {"text": "ok", "sender": "ana", "ts": "2026-03-02T08:00:30Z", "session": "d1"},
        {"text": "ok", "sender": "ana", "ts": "2026-03-02T08:05:00Z", "session": "d1"},
        {"text": "ok", "sender": "mel", "ts": "2026-03-02T08:05:00Z", "session": "d1"},
        {"text": "我们下周去成都吧", "sender": "mel", "ts": "2026-03-03T19:00:00+08:00"},
        {"text": "deploy failed: migration timeout", "kind": "webhook", "ts": 1772000000},
    ]
    path = tmp_path / "chat.jsonl"
    path.write_text("".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines))
    first = json.loads(soupd_home.cli("--json", "import", "ada", path).stdout)
    assert (first["stored"], first["duplicate"]) == (6, 0), first
    again = json.loads(soupd_home.cli("--json", "import", "ada", path).stdout)
    assert (again["stored"], again["duplicate"]) == (0, 6), again
    assert daemon.result("soul.stats", {"soul": "ada"})["events"] == 6
    # An export of it imports elsewhere, twice, as the same six.
    exported = tmp_path / "ada.jsonl"
    assert soupd_home.cli("export", "ada", exported).returncode == 0
    for _ in range(2):
        assert soupd_home.cli("--json", "import", "copy", exported).returncode == 0
    assert daemon.result("soul.stats", {"soul": "copy"})["events"] == 6
    # Without a time an event is stamped on arrival: each push is new, as before.
    for _ in range(2):
        daemon.result("event.import", {"soul": "copy", "events": [{"text": "no time given"}]})
    assert daemon.result("soul.stats", {"soul": "copy"})["events"] == 8
