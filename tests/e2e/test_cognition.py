"""The cognitive loop, end to end through the real daemon: surprise, reflect,
MEMORY.md, the stable prefix, Hebbian association, feelings, self-knowledge, outputs."""

from __future__ import annotations

import json
import subprocess
import threading

from .harness import SOUPD, Connection, Home, StartSoupd, request_frame, wait_for


def push_many(conn: Connection, soul: str, texts: list[str]) -> list[dict[str, object]]:
    """Pipeline pushes on one connection; the results in request order."""
    conn.send(
        b"".join(
            request_frame(i, "event.push", {"soul": soul, "text": t}) for i, t in enumerate(texts)
        )
    )
    replies = {}
    for _ in texts:
        reply = conn.recv()
        assert "result" in reply, reply
        replies[reply["id"]] = reply["result"]
    return [replies[i] for i in range(len(texts))]


def test_a_failure_after_a_thousand_routine_deploys(
    soupd_home: Home, start_soupd: StartSoupd
) -> None:
    """The scenario of the cognition issue, in plain words: a soul sees a thousand
    routine "deploy ok" events, then "deploy failed: database migration timeout". The
    failure scores high surprise, reflects at once, appears in MEMORY.md and in the next
    context, and a later recall about deploys brings it back."""
    soupd_home.add_soul("ops")
    daemon = start_soupd()
    with daemon.connect() as conn:
        first = conn.result("event.push", {"soul": "ops", "text": "deploy ok"})
        assert (first["surprise"], first["reflected"]) == (1.0, True)  # nothing known yet
        routine = push_many(conn, "ops", ["deploy ok"] * 999)
        assert all(r["status"] == "stored" for r in routine)
        # Routine: nothing in it is new to the summary the first one made.
        assert max(r["surprise"] for r in routine) == 0.0

        failure = conn.result(
            "event.push", {"soul": "ops", "text": "deploy failed: database migration timeout"}
        )
        assert failure["surprise"] > 0.65
        assert failure["reflected"] is True

        memory = (soupd_home.soul_dir("ops") / "MEMORY.md").read_text()
        assert "deploy failed: database migration timeout" in memory
        assert f"[m{failure['event_id']}]" in memory

        context = conn.result("context", {"soul": "ops"})
        assert "deploy failed: database migration timeout" in context["text"]

        recalled = conn.result("recall", {"soul": "ops", "query": "how did the deploys go?"})
        texts = [item["text"] for item in recalled["items"]]
        assert "deploy failed: database migration timeout" in texts
        stats = conn.result("soul.stats", {"soul": "ops"})
    assert stats["events"] == 1001
    assert stats["reflects"] >= 2
    assert stats["last_surprise"] == failure["surprise"]


def test_the_prompt_prefix_holds_between_reflects(
    soupd_home: Home, start_soupd: StartSoupd
) -> None:
    soupd_home.add_soul("ada", "[reflect]\nevery = 1000\n")
    (soupd_home.soul_dir("ada")).mkdir(parents=True, exist_ok=True)
    (soupd_home.soul_dir("ada") / "SOUL.md").write_text("You are Ada, who keeps the lights on.")
    daemon = start_soupd()
    with daemon.connect() as conn:
        first = conn.result("event.push", {"soul": "ada", "text": "the pager is quiet"})
        assert first["reflected"] is True
        before = conn.result("context", {"soul": "ada", "query": "pager"})
        prefixes = set()
        for n in range(100):
            reply = conn.result("event.push", {"soul": "ada", "text": "the pager is quiet"})
            assert reply["reflected"] is False, n
            context = conn.result("context", {"soul": "ada", "query": "pager"})
            prefixes.add(context["prefix_hash"])
            stable = "".join(
                s["text"] for s in context["sections"] if s["name"] in ("identity", "summary")
            )
            assert context["text"].startswith(stable)
        assert prefixes == {before["prefix_hash"]}

        conn.result("reflect", {"soul": "ada"})
        after = conn.result("context", {"soul": "ada", "query": "pager"})
    assert after["prefix_hash"] != before["prefix_hash"]
    assert after["text"].startswith("## IDENTITY\nYou are Ada")


def test_memories_recalled_together_wire_together(
    soupd_home: Home, start_soupd: StartSoupd
) -> None:
    soupd_home.add_soul("ada")
    daemon = start_soupd()
    with daemon.connect() as conn:
        for text in (
            "the boiler in the cellar",
            "the boiler pressure gauge",
            "garden hose in the shed",
        ):
            conn.result("event.push", {"soul": "ada", "text": text})
        for _ in range(3):
            found = conn.result("recall", {"soul": "ada", "query": "boiler", "k": 2})
            assert {i["text"] for i in found["items"] if i["via"] != "hebbian"} == {
                "the boiler in the cellar",
                "the boiler pressure gauge",
            }
        # Fired together three times: the edge is strong now, so recalling one of the
        # pair brings the other along as an associate.
        found = conn.result("recall", {"soul": "ada", "query": "cellar", "k": 1})
        stats = conn.result("soul.stats", {"soul": "ada"})
    assert [i["text"] for i in found["items"]] == [
        "the boiler in the cellar",
        "the boiler pressure gauge",
    ]
    # The first came by its words (through the summary that cites it, or BM25).
    assert found["items"][0]["via"] in ("summary", "bm25")
    assert found["items"][1]["via"] == "hebbian"
    assert stats["edges"] == 1


def test_feelings_gaps_and_signals_reach_the_context(
    soupd_home: Home, start_soupd: StartSoupd
) -> None:
    soupd_home.add_soul("ada")
    daemon = start_soupd()
    watcher = subprocess.Popen(
        [str(SOUPD), "--json", "watch", "ada"],
        env=soupd_home.env,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        with daemon.connect() as conn:
            wait_for(lambda: daemon.result("daemon.status")["subscribers"] == 1, "the watcher")
            for text in ("the migration failed again", "migration broken, rollback failed"):
                conn.result("event.push", {"soul": "ada", "text": text})
            unsure = conn.result("confidence", {"soul": "ada", "topic": "kubernetes"})
            feeling = conn.result("homeostasis", {"soul": "ada"})
            context = conn.result("context", {"soul": "ada", "query": "the migration"})
            again = conn.result("context", {"soul": "ada", "query": "the migration"})
        # Outputs reach the watcher on their own schedule: read until both came (a timer
        # ends the watcher if they never do, and the asserts below say what is missing).
        kinds: list[str] = []
        timer = threading.Timer(15, watcher.kill)
        timer.start()
        assert watcher.stdout is not None
        for line in watcher.stdout:
            kinds.append(json.loads(line)["kind"])
            if {"reflect", "internal_signal"} <= set(kinds):
                break
        timer.cancel()
    finally:
        watcher.terminate()
        watcher.communicate(timeout=10)

    assert unsure["state"] == "low_confidence"
    assert unsure["gaps"] == []  # none recorded before this check...
    sections = {s["name"]: s["text"] for s in context["sections"]}
    assert "kubernetes" in sections["known_gaps"]  # ...one recorded by it
    assert "admit uncertainty or search before guessing" in sections["known_gaps"]
    assert "migrat" in sections["gut_feelings"]  # the stemmed topic
    assert "negative" in sections["gut_feelings"]
    assert feeling["signal"]
    assert sections["internal_signal"].strip().endswith(feeling["signal"])
    # The signal is shown once.
    assert "internal_signal" not in {s["name"] for s in again["sections"]}
    names = [s["name"] for s in context["sections"]]
    assert names == sorted(
        names,
        key=[
            "identity",
            "summary",
            "weekly",
            "gut_feelings",
            "known_gaps",
            "internal_signal",
            "recalled",
        ].index,
    )
    assert "reflect" in kinds
    assert "internal_signal" in kinds


def test_decay_hides_what_was_never_recalled(soupd_home: Home, start_soupd: StartSoupd) -> None:
    soupd_home.add_soul("ada")
    daemon = start_soupd()
    with daemon.connect() as conn:
        conn.result(
            "event.push",
            {"soul": "ada", "text": "lunch was soup", "kind": "cron", "mentioned": True},
        )
        conn.result("event.push", {"soul": "ada", "text": "the api key rotates monthly"})
        conn.result("event.push", {"soul": "ada", "text": "prod outage: disk full", "kind": "dm"})
        soon = conn.result("decay", {"soul": "ada", "now": "2100-01-01T00:00:00Z"})
        later = conn.result("decay", {"soul": "ada", "now": "2100-01-09T00:00:00Z"})
        stats = conn.result("soul.stats", {"soul": "ada"})
        left = conn.result("recall", {"soul": "ada", "query": "soup api outage", "k": 10})
    assert soon["hidden"] == 2  # salience 0.6 and 0.5: both long past their tiers
    assert later["purged"] == 2
    assert stats["events"] == 3  # events are the truth: never decayed
    assert [i["text"] for i in left["items"]] == ["prod outage: disk full"]


def test_operator_commands(soupd_home: Home, start_soupd: StartSoupd) -> None:
    soupd_home.add_soul("ada")
    daemon = start_soupd()
    daemon.result("event.push", {"soul": "ada", "text": "hello there"})
    reflect = soupd_home.cli("reflect", "ada")
    confidence = soupd_home.cli("confidence", "ada", "hello")
    decay = soupd_home.cli("--json", "decay", "ada", "--now", "2030-01-01T00:00:00")
    stats = soupd_home.cli("stats", "ada")
    bad = soupd_home.cli("decay", "ada", "--now", "someday")
    assert reflect.returncode == 0, reflect.stderr
    assert "reason: manual" in reflect.stdout
    assert confidence.returncode == 0
    assert confidence.stdout.split()[0] in ("confident", "uncertain", "low_confidence")
    assert decay.returncode == 0
    assert json.loads(decay.stdout)["hidden"] == 1
    for key in (
        "events",
        "memories",
        "hidden",
        "edges",
        "markers",
        "gaps",
        "reflects",
        "last_surprise",
        "counters",
    ):
        assert f"{key}:" in stats.stdout
    assert bad.returncode == 1
    assert "invalid_params" in bad.stderr
    assert "someday" in bad.stderr
