"""Facts and wants end to end, over the real socket: claims through the merge algebra (the
Chaos examples), unanswered questions, goals across vocabularies, emergence mode, the
assembly log and `soupd why`, budgets, the memory map and reading by id."""

from __future__ import annotations

import json
from typing import Any

from .harness import Daemon, Home, StartSoupd

DAY = 86_400


def claims(daemon: Daemon, soul: str = "ada", *, every: bool = True) -> list[dict[str, Any]]:
    return daemon.result("claims", {"soul": soul, "all": every})["claims"]  # type: ignore[no-any-return]


def recalled(context: dict[str, Any]) -> str:
    """The recalled section of a context ("" when there is none)."""
    return "".join(s["text"] for s in context["sections"] if s["name"] == "recalled")


def by_value(rows: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {row["value"]: row for row in rows}


def test_the_cat_is_renamed(soupd_home: Home, start_soupd: StartSoupd) -> None:
    soupd_home.add_soul("ada")
    daemon = start_soupd()
    daemon.push("ada", "My cat is Tuanzi.", sender="ann", ts="2026-01-05T10:00:00Z")
    daemon.push(
        "ada", "We renamed the cat Mochi last week.", sender="ann", ts="2026-03-01T10:00:00Z"
    )
    rows = by_value([c for c in claims(daemon) if c["slot"] == "pet_name"])
    assert rows["Mochi"]["state"] == "active"
    assert rows["Tuanzi"]["state"] == "superseded"
    assert rows["Tuanzi"]["valid_to"] == rows["Mochi"]["valid_from"]
    assert rows["Mochi"]["quote"] in "We renamed the cat Mochi last week."
    context = daemon.result("context", {"soul": "ada", "query": "what is the name of ann's pet"})
    assert f"[c{rows['Mochi']['id']}] ann pet name: Mochi" in recalled(context)
    assert f"[c{rows['Tuanzi']['id']}]" not in recalled(context)  # superseded: never injected


def test_the_same_sentence_from_two_paths_is_one_claim(
    soupd_home: Home, start_soupd: StartSoupd
) -> None:
    soupd_home.add_soul("ada")
    daemon = start_soupd()
    at = "2026-02-01T09:00:00Z"
    first = daemon.push("ada", "My dog's name is Rex.", sender="ann", channel="telegram", ts=at)
    echo = daemon.push("ada", "My dog's name is Rex.", sender="ann", channel="slack", ts=at)
    assert first["status"] == "stored"
    assert (echo["status"], echo["event_id"]) == ("duplicate", first["event_id"])
    later = daemon.push(
        "ada", "My dog's name is Rex.", sender="ann", channel="slack", ts="2026-02-03T09:00:00Z"
    )
    assert later["status"] == "stored"  # said again days later: a new event...
    assert [c["value"] for c in claims(daemon) if c["slot"] == "pet_name"] == [
        "Rex"
    ]  # ...no new claim


def test_update_retract_correct_and_credentials(soupd_home: Home, start_soupd: StartSoupd) -> None:
    soupd_home.add_soul("ada")
    daemon = start_soupd()
    rule = daemon.result(
        "claim.add", {"soul": "ada", "type": "rule", "value": "always tag releases"}
    )["claim"]
    shaky = daemon.result(
        "claim.add", {"soul": "ada", "value": "billing runs on Postgres 16", "confidence": "low"}
    )["claim"]
    context = daemon.result("context", {"soul": "ada", "query": "billing postgres"})
    assert f"[c{shaky['id']}] billing runs on Postgres 16 (needs verification)" in context["text"]

    updated = daemon.result(
        "claim.update", {"soul": "ada", "id": shaky["id"], "value": "billing runs on Postgres 17"}
    )
    assert updated["closed"] == [shaky["id"]]
    context = daemon.result("context", {"soul": "ada", "query": "billing postgres"})
    assert "Postgres 17" in context["text"]
    assert "Postgres 16" not in context["text"]  # superseded: never injected again

    retracted = daemon.result("claim.retract", {"soul": "ada", "id": rule["id"]})
    assert retracted["claim"]["state"] == "retracted"
    again = daemon.call("claim.retract", {"soul": "ada", "id": rule["id"]})
    assert again["error"]["code"] == "invalid_params"
    assert "already retracted" in again["error"]["message"]
    unknown = daemon.call("claim.update", {"soul": "ada", "id": 999, "value": "x"})
    assert "no entry c999" in unknown["error"]["message"]

    before = claims(daemon)
    secret = daemon.call(
        "claim.add", {"soul": "ada", "value": "the api key is sk-proj-4f9a8b7c6d5e4f3a2b1c0d9e8f7a"}
    )
    assert secret["error"]["code"] == "hygiene.credential"
    assert claims(daemon) == before  # nothing stored

    daemon.push("ada", "My name is Ann.", sender="ann")
    (name,) = [c for c in claims(daemon) if c["slot"] == "name"]
    fidelity = daemon.result("claims", {"soul": "ada"})["fidelity_ai"]
    corrected = daemon.result("claim.correct", {"soul": "ada", "id": name["id"], "value": "Anne"})
    assert corrected["claim"]["value"] == "Anne"
    assert corrected["fidelity_ai"] < fidelity  # the soul's own extraction was wrong


def test_a_tie_is_deferred_and_never_injected(soupd_home: Home, start_soupd: StartSoupd) -> None:
    soupd_home.add_soul("ada")
    daemon = start_soupd()
    at = "2026-02-01T09:00:00Z"
    daemon.push("ada", "I live in Lisbon.", sender="bo", ts=at, ref="a")
    daemon.push("ada", "I live in Porto.", sender="bo", ts=at, ref="b")
    rows = by_value([c for c in claims(daemon) if c["slot"] == "location"])
    assert {rows["Lisbon"]["state"], rows["Porto"]["state"]} == {"deferred"}
    context = daemon.result("context", {"soul": "ada", "query": "where does bo live"})
    assert "[c" not in context["text"]


def test_a_goal_comes_up_without_sharing_a_word(soupd_home: Home, start_soupd: StartSoupd) -> None:
    soupd_home.add_soul("ada")
    daemon = start_soupd()
    change = daemon.result(
        "goal.update",
        {
            "soul": "ada",
            "action": "new",
            "statement": "save for a house deposit",
            "domain": "money",
            "priority": 4,
            "triggers": ["landlord raises the rent"],
        },
    )
    goal = change["goal"]
    assert (change["outcome"], goal["state"]) == ("created", "active")
    daemon.push("ada", "the weather is nice today")
    context = daemon.result(
        "context", {"soul": "ada", "query": "my landlord raises the rent in March"}
    )
    # Goals have their own statement-only channel: every open goal, the activated first.
    (channel,) = [s for s in context["sections"] if s["name"] == "goals"]
    assert channel["text"] == f"## GOALS AND VALUES\n- [g{goal['id']}] save for a house deposit\n\n"
    recalled = daemon.result("recall", {"soul": "ada", "query": "the landlord raises the rent"})
    assert ("goal", goal["id"]) in [(i["kind"], i["id"]) for i in recalled["items"]]
    nothing = daemon.recall("ada", "the weather is nice")
    assert ("goal", goal["id"]) not in [(i["kind"], i["id"]) for i in nothing]

    done = daemon.result("goal.update", {"soul": "ada", "action": "achieve", "goal_id": goal["id"]})
    assert done["goal"]["state"] == "achieved"
    bad = daemon.call(
        "goal.update", {"soul": "ada", "action": "progress", "goal_id": goal["id"], "note": "x"}
    )
    assert bad["error"]["code"] == "invalid_params"
    assert "achieved" in bad["error"]["message"]
    listed = soupd_home.cli("goals", "ada")
    assert f"g{goal['id']} [achieved] p4 money: save for a house deposit" in listed.stdout


def test_an_empty_query_surfaces_the_old_unkept_promise_and_why_says_so(
    soupd_home: Home, start_soupd: StartSoupd
) -> None:
    soupd_home.add_soul("ada")
    daemon = start_soupd()
    daemon.push(
        "ada", "I promise to send you the audit report.", sender="ann", ts="2026-01-02T09:00:00Z"
    )
    for n in range(5):
        daemon.push("ada", f"routine note number {n} about lunch")
    daemon.push("ada", "when is the billing migration?", kind="dm", sender="bo", session="s1")
    daemon.push("ada", "Lunch is at noon.", kind="assistant", session="s1")

    context = daemon.result("context", {"soul": "ada"})
    text = context["text"]
    assert "(open commitment) ann commitment: send you the audit report" in text
    assert "(unanswered question, bo asked) when is the billing migration?" in text
    why = daemon.result("why", {"soul": "ada"})
    assert why["hash"] == context["hash"]
    assert why["mode"] == "emergence"
    reasons = {item["id"]: item["reason"] for item in why["items"]}
    assert any("open commitment" in reason for reason in reasons.values())
    # The next context keeps the stable prefix and the old promise (its pressure holds);
    # the memories it brings back are others (what one context showed gives way).
    again = daemon.result("context", {"soul": "ada"})
    assert again["prefix_hash"] == context["prefix_hash"]
    assert "(open commitment) ann commitment: send you the audit report" in again["text"]
    shown = [
        {i for s in c["sections"] if s["name"] == "recalled" for i in s["items"] if i[0] == "m"}
        for c in (context, again)
    ]
    assert shown[0], shown
    assert shown[1] != shown[0], shown

    cli = soupd_home.cli("why", "ada", context["hash"][:8])
    assert cli.returncode == 0, cli.stderr
    assert "emergence mode" in cli.stdout
    assert "open commitment" in cli.stdout
    missing = daemon.call("why", {"soul": "ada", "hash": "ffffffffffff"})
    assert missing["error"]["code"] == "invalid_params"


def test_the_session_budget_pauses_recall_and_says_so(
    soupd_home: Home, start_soupd: StartSoupd
) -> None:
    soupd_home.add_soul("ada", "[context]\nsession_chars = 200\n")
    daemon = start_soupd()
    for n in range(6):
        daemon.push("ada", f"the deploy of service {n} failed on the database migration")
    first = daemon.result("context", {"soul": "ada", "query": "deploy database", "session": "s1"})
    assert "[m" in recalled(first)
    second = daemon.result("context", {"soul": "ada", "query": "deploy database", "session": "s1"})
    assert "recalled items paused" in recalled(second)
    assert "[m" not in recalled(second)
    other = daemon.result("context", {"soul": "ada", "query": "deploy database", "session": "s2"})
    assert "[m" in recalled(other)  # another session has its own budget
    assert daemon.result("why", {"soul": "ada", "hash": second["hash"]})["paused"] is True


def test_the_map_and_reading_by_id(soupd_home: Home, start_soupd: StartSoupd) -> None:
    soupd_home.add_soul("ada")
    daemon = start_soupd()
    daemon.push("ada", "My cat is Tuanzi.", sender="ann", ts="2026-01-05T10:00:00Z")
    for n in range(4):
        daemon.push(
            "ada", f"the billing deploy failed again, attempt {n}", ts="2026-01-06T10:00:00Z"
        )
    daemon.result(
        "goal.update",
        {"soul": "ada", "action": "new", "statement": "ship billing v2", "triggers": ["release"]},
    )
    memory_map = daemon.result("map", {"soul": "ada"})["map"]
    assert len(memory_map) <= 2000
    for axis in ("SITUATIONS", "GOALS", "ARCHIVE", "EVIDENCE"):
        assert axis in memory_map
    assert "2026-01-06: 4 events" in memory_map
    assert "pet_name=Tuanzi" in memory_map
    small = daemon.result("map", {"soul": "ada", "budget": 300})["map"]
    assert len(small) <= 300

    goal = json.loads(soupd_home.cli("--json", "read", "ada", "g1").stdout)
    assert goal["goal"]["statement"] == "ship billing v2"
    event = daemon.result("memory.read", {"soul": "ada", "id": "e1"})
    assert event["text"] == "My cat is Tuanzi."
    memory = daemon.result("memory.read", {"soul": "ada", "id": "m2"})
    assert memory["text"] == "the billing deploy failed again, attempt 0"
    bad = daemon.call("memory.read", {"soul": "ada", "id": "x1"})
    assert "ids look like m12" in bad["error"]["message"]
    gone = daemon.call("memory.read", {"soul": "ada", "id": "m999"})
    assert "no m999" in gone["error"]["message"]


def test_claims_and_promises_are_filed_under_whoever_made_them(
    soupd_home: Home, start_soupd: StartSoupd
) -> None:
    """A conversation where the soul's replies (``assistant`` events, as the responder
    stores them: no sender) promise things and introduce themselves: those are the
    assistant's, and the user's own name and promise stay the user's."""
    soupd_home.add_soul("ada")
    daemon = start_soupd()
    turns = [
        ("dm", "hi!! my name's Kim btw, new here. ugh I keep forgetting stuff lately"),
        ("assistant", "Nice to meet you Kim! My name is Ada, I'll help you keep track."),
        ("dm", "ok so can you remind me to book the dentist?? maybe friday, or thursday idk"),
        ("assistant", "Sure! I'll remind you to book the dentist on Friday."),
        ("dm", "thanks :) oh and I promise I'll call mom tomorrow, she keeps asking lol"),
    ]
    for kind, text in turns:
        daemon.push("ada", text, kind=kind, ts="2026-03-02T09:00:00Z")
    rows = [c for c in claims(daemon) if c["slot"] in ("name", "commitment")]
    made = {(c["subject"], c["slot"], c["value"], c["state"]) for c in rows}
    assert ("user", "name", "Kim", "active") in made
    assert ("assistant", "name", "Ada", "active") in made
    assert ("assistant", "commitment", "remind you to book the dentist", "active") in made
    assert ("user", "commitment", "call mom", "active") in made
    assert not {c["value"] for c in rows if c["subject"] == "user"} & {"Ada", "remind you"}
    context = daemon.result(
        "context", {"soul": "ada", "query": "wait, who was going to remind who about the dentist?"}
    )
    assert "assistant commitment: remind you to book the dentist" in context["text"]
    assert "user commitment: remind you" not in context["text"]
