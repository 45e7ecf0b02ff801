"""Knowing from a messy conversation, end to end through the real daemon (#17): four
weeks of English and Chinese chat (tests/e2e/knowing_chat.py) give exactly the facts,
plans and commitments a careful reader holds at the end, in their states (renames, moves,
job and number changes supersede; a cancelled plan closes; a new pet is no rename), the
events told, and the goals with their source turns; nothing from questions, quotes,
daydreams or someone else's plans."""

from __future__ import annotations

import sqlite3
from typing import Any

from .harness import Home, StartSoupd
from .knowing_chat import FACTS, GOALS, NEVER, TOLD, TURNS, timestamp


def test_four_weeks_of_messy_chat_give_what_a_reader_would_hold(
    soupd_home: Home, start_soupd: StartSoupd
) -> None:
    soupd_home.add_soul("kim")
    daemon = start_soupd()
    for n, (day, hour, sender, kind, text) in enumerate(TURNS):
        fields: dict[str, Any] = {"kind": kind, "ts": timestamp(day, hour), "ref": f"t{n}"}
        if sender:
            fields["sender"] = sender
        pushed = daemon.push("kim", text, **fields)
        assert pushed["status"] == "stored", text  # phone numbers pass the gates

    claims = daemon.result("claims", {"soul": "kim", "all": True})["claims"]
    print("\n".join(f"{c['subject']:9} {c['slot']:12} [{c['state']:10}] {c['value']}"
                    for c in claims))  # fmt: skip
    facts = {
        (c["subject"], c["slot"], c["value"], c["state"]) for c in claims if c["slot"] != "event"
    }
    assert facts == FACTS
    told = [(c["subject"], c["value"]) for c in claims if c["slot"] == "event"]
    for subject, piece in TOLD:
        assert any(s == subject and piece in v for s, v in told), (subject, piece)
    assert len(told) == len(TOLD), told  # and no other
    # Every event told is a first-person statement of the speaker's: none from a question,
    # a quote, a daydream or someone else's words.
    for claim in claims:
        assert not any(bad in claim["value"] for bad in NEVER), claim
    assert all(c["state"] == "active" for c in claims if c["slot"] == "event")

    goals = daemon.result("goals", {"soul": "kim"})["goals"]
    print("\n".join(f"{g['speaker']:9} [{g['state']:9}] {g['statement']}" for g in goals))
    assert {(g["speaker"], g["statement"], g["state"]) for g in goals} == GOALS
    # Each goal names the turn it was first stated in.
    with sqlite3.connect(soupd_home.soul_dir("kim") / "soul.db") as db:
        refs = dict(
            db.execute("SELECT g.statement, e.ref FROM goals g JOIN events e ON e.id = g.event_id")
        )
    first = {text: f"t{n}" for n, (*_, text) in reversed(list(enumerate(TURNS)))}
    assert refs == {
        "run a half marathon (this year)": first["My goal this year is to run a half marathon"],
        "明年买房": first["我们打算明年买房"],
    }
