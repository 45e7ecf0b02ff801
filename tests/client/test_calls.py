"""Every method an app uses, through both clients, against the real daemon: typed
results decoded from the real replies."""

from __future__ import annotations

import time
from typing import Any

import pytest

import soupd


def test_push_recall_context_why(client: Any) -> None:
    first = client.push(
        "alpha", "deploy failed: database migration timeout", sender="ana", ref="ci-1"
    )
    assert isinstance(first, soupd.PushResult)
    assert (first.status, first.event_id) == ("stored", 1)
    again = client.push(
        "alpha", "deploy failed: database migration timeout", sender="ana", ref="ci-1"
    )
    assert (again.status, again.event_id) == ("duplicate", 1)
    client.push("alpha", "deploy of the billing service went fine", sender="bob", kind="dm")

    hits = client.recall("alpha", "deploy failed")
    assert all(isinstance(hit, soupd.RecallHit) for hit in hits)
    assert hits[0].text == "deploy failed: database migration timeout"
    assert hits[0].refs == ["ci-1"]
    assert 0 < hits[-1].relevance <= hits[0].relevance <= 1
    assert hits[0].explain is None

    only_bob = client.recall("alpha", "deploy", sender="bob", explain=True)
    assert [hit.text for hit in only_bob] == ["deploy of the billing service went fine"]
    assert only_bob[0].explain is not None
    assert only_bob[0].explain.reasons
    assert client.recall("alpha", "deploy", until=1_000_000_000.0) == []

    context = client.context("alpha", "deploy failures")
    assert isinstance(context, soupd.Context)
    assert "deploy failed: database migration timeout" in context.text
    assert "recalled" in [section.name for section in context.sections]
    why = client.why("alpha")
    assert isinstance(why, soupd.Why)
    assert why.hash == context.hash
    assert why.query == "deploy failures"
    assert any(item.id == f"m{hits[0].id}" for item in why.items)


def test_import_and_forget(client: Any) -> None:
    result = client.import_events(
        "alpha",
        [
            {"text": "the staging cluster ran out of disk", "ts": "2026-11-02T10:00:00Z"},
            {"text": ""},
            {"text": "rotated the staging certificates", "ref": "ops-2", "sender": "cy"},
        ],
    )
    assert isinstance(result, soupd.ImportResult)
    assert (result.stored, result.rejected) == (2, 1)
    assert [(r.index, r.code) for r in result.reasons] == [(1, "hygiene.empty")]

    assert len(client.recall("alpha", "staging")) == 2
    gone = client.forget("alpha", ref="ops-2")
    assert isinstance(gone, soupd.ForgetResult)
    assert (gone.events, gone.memories) == (1, 1)
    assert [hit.text for hit in client.recall("alpha", "staging")] == [
        "the staging cluster ran out of disk"
    ]


def test_a_large_import_is_cut_into_requests_and_summed(client: Any) -> None:
    """4500 events of about 300 bytes: over the daemon's 1 MiB frame cap in one request,
    so three requests of at most 2000; the rejections keep their place in the list."""
    events: list[dict[str, Any]] = [
        {"text": f"import line {n}: " + "lorem ipsum dolor " * 15, "ref": f"imp-{n}"}
        for n in range(4500)
    ]
    events[10] = {"text": ""}
    events[4321] = {"text": "   ", "ref": "blank"}
    events[2500] = {"text": "x" * 600_000}  # refused before sending: no request holds it
    result = client.import_events("alpha", events)
    assert (result.stored, result.rejected) == (4497, 3)
    assert [(r.index, r.code) for r in result.reasons] == [
        (10, "hygiene.empty"),
        (2500, "frame_too_large"),
        (4321, "hygiene.empty"),
    ]
    again = client.import_events("alpha", events[:100])
    assert (again.stored, again.duplicate, again.rejected) == (0, 99, 1)


def test_claims_goals_persons_reminders(client: Any) -> None:
    stated = client.add_claim("alpha", "prefers tea over coffee")
    assert isinstance(stated, soupd.ClaimChange)
    assert stated.claim is not None
    claim = stated.claim
    assert (claim.value, claim.state, claim.source) == ("prefers tea over coffee", "active", "user")
    corrected = client.correct_claim("alpha", claim.id, "prefers green tea")
    assert corrected.claim is not None
    assert corrected.claim.value == "prefers green tea"
    in_force = client.claims("alpha")
    assert isinstance(in_force, soupd.Claims)
    assert [c.value for c in in_force.claims] == ["prefers green tea"]
    client.retract_claim("alpha", corrected.claim.id)
    assert client.claims("alpha").claims == []

    made = client.add_goal("alpha", "learn to play the piano", priority=2)
    assert isinstance(made, soupd.GoalChange)
    assert (made.outcome, made.goal.state) == ("created", "active")
    client.update_goal("alpha", made.goal.id, "progress", note="first lesson booked")
    (goal,) = client.goals("alpha")
    assert isinstance(goal, soupd.Goal)
    assert goal.statement == "learn to play the piano"
    assert [note.text for note in goal.progress][-1] == "first lesson booked"

    linked = client.link_person("alpha", "Ana", "slack:U123")
    assert isinstance(linked, soupd.PersonLink)
    assert linked.person == "Ana"
    assert [(p.name, p.identities) for p in client.persons("alpha")] == [("Ana", ["slack:U123"])]

    due = float(int(time.time()) + 3600)  # TASKS.md holds whole seconds
    tasks = client.remind("alpha", "call the dentist", due)
    assert isinstance(tasks, soupd.Tasks)
    assert [(t.text, t.due) for t in tasks.pending] == [("call the dentist", due)]
    assert (tasks.existing, tasks.key) == (False, tasks.pending[0].key)
    assert client.tasks("alpha").pending == tasks.pending
    again = client.remind("alpha", "call the dentist", due)  # the same reminder: kept once
    assert (again.existing, again.key) == (True, tasks.key)
    assert again.pending == tasks.pending
    assert again.errors == []


def test_souls_are_listed(client: Any) -> None:
    client.push("alpha", "wake up")
    listed = client.souls()
    assert all(isinstance(soul, soupd.Soul) for soul in listed)
    states = {soul.name: soul.state for soul in listed}
    assert states.keys() == {"alpha", "beta"}
    assert states["alpha"] == "running"  # beta, never asked for anything, may hibernate


# A request the daemon refuses, the class it raises and the wire code it keeps.
REFUSED: list[tuple[Any, type[soupd.SoupdError], str]] = [
    (lambda c: c.recall("nobody", "x"), soupd.UnknownSoul, "unknown_soul"),
    (lambda c: c.recall("alpha", "x", since="not a date"), soupd.InvalidParams, "invalid_params"),
    (lambda c: c.recall("alpha", "x", k="three"), soupd.InvalidParams, "invalid_params"),
    (lambda c: c.push("alpha", "   "), soupd.EmptyText, "hygiene.empty"),
    (lambda c: c.push("alpha", "x" * 9000), soupd.TextTooLong, "hygiene.too_long"),
    (lambda c: c.push("alpha", "ghp_" + "a1B2" * 9), soupd.CredentialFound, "hygiene.credential"),
    (lambda c: c.push("alpha", "a\x00b"), soupd.InvalidCharacters, "hygiene.invalid_chars"),
    (lambda c: c.push("alpha", "same\n" * 5), soupd.RepeatedLines, "hygiene.repeated_lines"),
    (lambda c: c.retract_claim("alpha", 999), soupd.NotFound, "not_found"),
    (lambda c: c.forget("alpha"), soupd.InvalidParams, "invalid_params"),
]


def test_each_error_code_raises_its_class(client: Any) -> None:
    for call, kind, code in REFUSED:
        with pytest.raises(kind) as raised:
            call(client)
        assert type(raised.value) is kind
        assert raised.value.code == code
        assert raised.value.message  # the daemon's own words, saying what to do
    assert isinstance(raised.value, soupd.SoupdError)
    # The connection stayed usable after every error reply: one connection all along.
    assert client.souls()
    assert client.reconnects == 0
