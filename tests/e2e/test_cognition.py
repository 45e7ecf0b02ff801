"""The cognitive loop, end to end through the real daemon: surprise, reflect,
MEMORY.md, the stable prefix, Hebbian association, feelings, self-knowledge, outputs."""

from __future__ import annotations

import json
import sqlite3
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
    # A future --now would hide memories for good: without --apply it is a dry run.
    future = soupd_home.cli("--json", "decay", "ada", "--now", "2030-01-01T00:00:00")
    decay = soupd_home.cli("--json", "decay", "ada", "--now", "2030-01-01T00:00:00", "--apply")
    stats = soupd_home.cli("stats", "ada")
    bad = soupd_home.cli("decay", "ada", "--now", "someday")
    assert future.returncode == 0, future.stderr
    assert json.loads(future.stdout) == {
        "hidden": 1,
        "purged": 0,
        "edges_pruned": 0,
        "markers_pruned": 0,
        "dry_run": True,
    }
    assert reflect.returncode == 0, reflect.stderr
    assert "reason: manual" in reflect.stdout
    assert confidence.returncode == 0
    assert confidence.stdout.split()[0] in ("confident", "uncertain", "low_confidence")
    assert decay.returncode == 0
    assert json.loads(decay.stdout) == {**json.loads(future.stdout), "dry_run": False}
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
    assert bad.returncode == 2  # a usage error: no time at all
    assert "not a time" in bad.stderr
    assert "someday" in bad.stderr


def test_the_deploy_that_fails_after_thirty_that_succeeded_reflects_at_once(
    soupd_home: Home, start_soupd: StartSoupd
) -> None:
    """DESIGN §3.3's own scenario as an ops channel writes it: thirty routine deploys,
    worded a little differently each time, then a failure. The failure's content words
    (not "the", "to" or the build number, which every routine line shares) are mostly
    new: it reflects at once, lands in MEMORY.md, and the reply says what was new."""
    soupd_home.add_soul("ops")
    daemon = start_soupd()
    routine = [
        "the deploy {n} to prod succeeded",
        "deploy {n} to prod succeeded, all green",
        "ok the deploy {n} to prod succeeded again",
        "deploy #{n} to prod succeeded \U0001f44d",
    ]
    with daemon.connect() as conn:
        for n in range(1, 31):
            text = routine[n % len(routine)].format(n=n)
            assert conn.result("event.push", {"soul": "ops", "text": text})["status"] == "stored"
        failure = conn.result(
            "event.push",
            {"soul": "ops", "text": "the deploy 31 to prod failed: database migration timeout"},
        )
    assert failure["surprise"] > 0.65
    assert failure["reflected"] is True
    assert failure["novel"] == ["fail", "databas", "migrat", "timeout"]
    memory = (soupd_home.soul_dir("ops") / "MEMORY.md").read_text()
    assert f"the deploy 31 to prod failed: database migration timeout [m{failure['event_id']}]" in (
        memory
    )


def test_every_surprise_of_a_conversation_reflects_at_once(
    soupd_home: Home, start_soupd: StartSoupd
) -> None:
    """No count-based cooldown: each turn whose novelty passes the threshold reflects,
    however soon after the last reflect it comes (at a human pace the storm guard never
    holds one back). The routine turns, which say nothing new, do not."""
    soupd_home.add_soul("ada")
    daemon = start_soupd()
    turns = [
        "morning! the staging cluster is up again after the weekend",
        "hmm the payments service keeps timing out on staging tho",
        "ok so it's the redis connection pool, it maxes out at 50",
        "wait no, sorry, it was the TLS cert on the load balancer that expired lol",
        "the staging cluster is up again",
        "renewed the cert, payments look fine now",
        "明天上午十点跟财务开会，讨论下个季度的预算",  # noqa: RUF001
        "the staging cluster is up again",
    ]
    replies = [daemon.push("ada", text, kind="dm", sender="kim") for text in turns]
    surprising = [r for r in replies if r["surprise"] > 0.65]
    assert len(surprising) >= 5
    assert all(r["reflected"] for r in surprising), replies
    assert all(r["novel"] for r in surprising)
    # Said before, nothing new: no reflect, nothing novel.
    assert [(r["surprise"], r["reflected"], r["novel"]) for r in (replies[4], replies[7])] == [
        (0.0, False, []),
        (0.0, False, []),
    ]
    stats = daemon.result("soul.stats", {"soul": "ada"})
    assert stats["reflects"] == len(surprising)


def test_feelings_are_about_content_words_and_a_stated_value_is_no_feeling(
    soupd_home: Home, start_soupd: StartSoupd
) -> None:
    """A messy bilingual chat through the daemon: the soul's markers (its database) are
    about content words, names and real Chinese words; fillers, stop words and numbers
    never, nor the objects of a value the speaker states."""
    soupd_home.add_soul("ada")
    daemon = start_soupd()
    chat = [
        ("kim", "ugh the deploy failed AGAIN, still the same migration timeout"),
        ("lee", "hmm much better now, thanks for the new runbook Kim!!"),
        ("kim", "we pushed 31 hotfixes this week lol, it's still broken"),
        ("lee", "I believe in respecting people's privacy, I refuse to spread rumors"),
        ("kim", "fair. HR refused my complaint anyway, so annoying"),
        ("lee", "今天排练又失败了，导演很失望"),  # noqa: RUF001
        ("kim", "天排练得不错嘛，谢谢大家"),  # noqa: RUF001
        ("lee", "第3次部署又出错了，数据库迁移超时"),  # noqa: RUF001
    ]
    for sender, text in chat:
        daemon.push("ada", text, sender=sender, ts="2026-05-04T10:00:00Z")
    context = daemon.result("context", {"soul": "ada", "query": "how did the deploy go?"})
    with sqlite3.connect(soupd_home.soul_dir("ada") / "soul.db") as db:
        rows = db.execute("SELECT topic, valence, coalesce(label, topic) FROM markers").fetchall()
    labels = {label.casefold() for _, _, label in rows}
    never = {"again", "still", "new", "much", "better", "thanks", "hmm", "ugh", "lol", "week"}
    assert labels.isdisjoint(never), labels & never
    assert not [label for label in labels if label[:1].isdigit()]
    assert {"deploy", "migration", "runbook", "hr", "排练", "导演", "数据"} <= labels
    assert labels.isdisjoint({"天排", "今天", "练得", "据库", "believe", "people", "respecting"})
    negative = {label for _, valence, label in rows if valence == "negative"}
    assert negative.isdisjoint({"privacy", "rumors"})
    assert "- deploy: uneasy" in context["text"]


def test_the_storm_guard_is_by_time_and_says_what_it_held_back(
    soupd_home: Home, start_soupd: StartSoupd
) -> None:
    """A flood of novel events (a bot pasting a log) within the guard's window: the
    first storm_reflects surprises reflect, the rest are held back (counted in stats;
    the next reflect folds them in), never because of a count of observations."""
    soupd_home.add_soul("ops", "[surprise]\nstorm_reflects = 3\nstorm_window = 600.0\n")
    daemon = start_soupd()
    flood = [
        "kernel: eth0 link down",
        "postgres: too many connections for role billing",
        "nginx upstream timed out while reading response header",
        "disk /var/lib almost full on worker-7",
        "cron job backup-s3 exited with status 2",
        "certificate for api.example.org expires tomorrow",
    ]
    replies = [daemon.push("ops", text, kind="webhook") for text in flood]
    assert all(r["surprise"] > 0.65 for r in replies)
    assert [r["reflected"] for r in replies] == [True, True, True, False, False, False]
    assert all(r["novel"] for r in replies)
    stats = daemon.result("soul.stats", {"soul": "ops"})
    assert stats["counters"]["surprise.held"] == 3
    assert stats["reflects"] == 3
    daemon.result("reflect", {"soul": "ops"})
    memory = (soupd_home.soul_dir("ops") / "MEMORY.md").read_text()
    assert "certificate for api.example.org expires tomorrow" in memory


def test_pipelined_surprises_each_say_they_reflected(
    soupd_home: Home, start_soupd: StartSoupd
) -> None:
    """The same ops channel, its messages pipelined on one connection: the soul drains
    them in batches and reflects once after each batch that surprised it, so every
    surprising event of such a batch is in that reflect, and its reply says so."""
    soupd_home.add_soul("ops")
    daemon = start_soupd()
    texts = [f"the deploy {n} to prod succeeded" for n in range(1, 31)]
    texts.append("the deploy 31 to prod failed: database migration timeout")
    with daemon.connect() as conn:
        replies = push_many(conn, "ops", texts)
    surprising = [r for r in replies if r["surprise"] > 0.65]
    assert replies[-1] in surprising
    assert all(r["reflected"] for r in surprising), [
        (r["event_id"], r["surprise"], r["reflected"]) for r in replies
    ]
    memory = (soupd_home.soul_dir("ops") / "MEMORY.md").read_text()
    assert "the deploy 31 to prod failed: database migration timeout" in memory
