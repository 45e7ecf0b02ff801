"""event.push, recall and context through the real socket (DESIGN §3.1-§3.5, §3.11)."""

from __future__ import annotations

from typing import Any

import pytest

from e2e.harness import Daemon, request_frame

NOISE = [
    "Lunch with Alice moved to Friday",
    "The quarterly report looks good",
    "Remember to water the plants",
]


def test_english_push_is_recalled_by_a_stemmed_query(soupd: Daemon) -> None:
    for text in NOISE:
        soupd.push("alpha", text)
    pushed = soupd.push("alpha", "Deploy failed: database migration timeout", ref="ops-42")
    assert pushed["status"] == "stored"
    assert isinstance(pushed["event_id"], int)

    items = soupd.recall("alpha", "deployment failures")

    assert [item["text"] for item in items] == ["Deploy failed: database migration timeout"]
    (item,) = items
    assert item["refs"] == ["ops-42"]
    assert item["kind"] == "observation"
    # Found through its stems, by BM25 over the memory or by the summary line that cites
    # it (the failure was news and reflected at once): which one depends on how much of
    # the whole query that line covers, which is recall's business, not this test's.
    assert item["via"] in ("bm25", "summary")
    assert isinstance(item["id"], int)
    assert item["score"] > 0


def test_chinese_push_is_recalled_by_a_bigram(soupd: Daemon) -> None:
    for text in NOISE:
        soupd.push("alpha", text)
    soupd.push("alpha", "今天天气很好")
    soupd.push("alpha", "数据库迁移超时", ref="zh-1")

    items = soupd.recall("alpha", "迁移")

    assert [(i["text"], i["refs"]) for i in items] == [("数据库迁移超时", ["zh-1"])]
    assert soupd.recall("alpha", "会议记录") == []


def test_recall_returns_at_most_k_items_best_first(soupd: Daemon) -> None:
    for n in range(15):
        soupd.push("alpha", f"kiwi note number {n}" + " kiwi" * (n % 3))

    assert len(soupd.recall("alpha", "kiwi", k=3)) == 3
    items = soupd.recall("alpha", "kiwi")
    assert len(items) == 10  # the soul's default k
    # Best first: non-increasing relevance, up to near-ties (within [recall] near_tie,
    # 15 %, of the run's first), which go to the more salient, then the more recent.
    relevance = [i["relevance"] for i in items]
    assert all(0 < r <= 1 for r in relevance)
    for n in range(1, len(relevance)):
        assert relevance[n] * 0.85 <= relevance[n - 1] + 1e-3
    assert len({i["id"] for i in items}) == 10
    assert soupd.recall("alpha", "kiwi") == items  # same input, same output


def test_souls_do_not_see_each_others_memories(soupd: Daemon) -> None:
    soupd.push("alpha", "the secret garden is behind the library")

    assert soupd.recall("beta", "garden library") == []
    assert len(soupd.recall("alpha", "garden library")) == 1


def test_same_ref_twice_is_a_duplicate_of_the_first_event(soupd: Daemon) -> None:
    first = soupd.push("alpha", "Invoice 7 was paid", ref="inv-7")
    again = soupd.push("alpha", "Invoice 7 was paid (retry)", ref="inv-7")

    assert first["status"] == "stored"
    assert again["status"] == "duplicate"
    assert again["event_id"] == first["event_id"]
    assert soupd.counts("alpha") == (1, 1)
    assert [i["text"] for i in soupd.recall("alpha", "invoice")] == ["Invoice 7 was paid"]
    # The ref is per soul: the same ref in another soul is a new event.
    assert soupd.push("beta", "Invoice 7 was paid", ref="inv-7")["status"] == "stored"


def test_same_ref_in_one_pipelined_batch_is_stored_once(soupd: Daemon) -> None:
    frames = b"".join(
        request_frame(n, "event.push", {"soul": "alpha", "text": f"copy {n}", "ref": "same"})
        for n in range(1, 6)
    )
    with soupd.connect() as conn:
        conn.send(frames)
        replies = {r["id"]: r["result"] for r in (conn.recv() for _ in range(5))}

    assert sorted(replies) == [1, 2, 3, 4, 5]
    statuses = sorted(r["status"] for r in replies.values())
    assert statuses == ["duplicate"] * 4 + ["stored"]
    assert len({r["event_id"] for r in replies.values()}) == 1
    assert soupd.counts("alpha") == (1, 1)


def test_dropped_event_is_counted_but_not_stored(soupd: Daemon) -> None:
    soupd.push("alpha", "a kept event")
    before = soupd.result("soul.stats", {"soul": "alpha"})

    reply = soupd.push("alpha", "zebra heartbeat tick", kind="heartbeat", group="ops")

    assert reply == {
        "event_id": None,
        "salience": 0.05,
        "status": "dropped",
        "surprise": None,
        "reflected": False,
        "novel": [],
    }
    after = soupd.result("soul.stats", {"soul": "alpha"})
    assert (after["events"], after["memories"]) == (before["events"], before["memories"])
    assert sum(after["counters"].values()) == sum(before["counters"].values()) + 1
    assert soupd.recall("alpha", "zebra") == []
    # A dropped event leaves no ref behind: the same ref can be stored later.
    assert soupd.push("alpha", "zebra tick", kind="heartbeat", ref="z")["status"] == "dropped"
    assert soupd.push("alpha", "zebra matters now", kind="dm", ref="z")["status"] == "stored"


# (fields, salience, status) — DESIGN §3.2 with the default attention config.
SALIENCE: list[tuple[dict[str, Any], float, str]] = [
    ({"text": "plain note"}, 0.5, "stored"),
    ({"text": "hi there", "kind": "dm"}, 0.9, "stored"),
    ({"text": "hi there", "group": "team", "mentioned": True}, 0.9, "stored"),
    ({"text": "hi there", "group": "team"}, 0.35, "stored"),
    ({"text": "from a sibling", "kind": "soul"}, 0.7, "stored"),
    ({"text": "tick", "kind": "heartbeat"}, 0.2, "dropped"),
    ({"text": "nightly run", "kind": "cron"}, 0.2, "dropped"),
    ({"text": "nightly run failed", "kind": "cron"}, 0.5, "stored"),
    ({"text": "the build failed with an error"}, 0.8, "stored"),
    ({"text": "the build crashed", "kind": "dm"}, 1.0, "stored"),
    ({"text": "数据库迁移超时"}, 0.8, "stored"),
    ({"text": "what a terror"}, 0.5, "stored"),
]


def test_attention_gate_scores_and_drops(soupd: Daemon) -> None:
    with soupd.connect() as conn:
        got = [conn.result("event.push", {"soul": "alpha", **fields}) for fields, _, _ in SALIENCE]

    assert [(r["salience"], r["status"]) for r in got] == [(s, st) for _, s, st in SALIENCE]
    stored = sum(1 for _, _, status in SALIENCE if status == "stored")
    assert soupd.counts("alpha") == (stored, stored)


@pytest.mark.parametrize(
    "text",
    [
        "x" * 8000,  # exactly the limit
        "same line\nsame line\nother\nsame line",  # two in a row is fine
        "tabs\tand\nnewlines\tare fine",
        "ghp_short is not a token",
        "the password is in the vault",
    ],
    ids=["8000-chars", "two-repeats", "tab-newline", "not-a-token", "word-password"],
)
def test_hygiene_accepts_text_at_its_limits(soupd: Daemon, text: str) -> None:
    assert soupd.push("alpha", text)["status"] == "stored"
    assert soupd.counts("alpha") == (1, 1)


def test_context_has_identity_and_recalled_memory_ids(soupd: Daemon) -> None:
    identity = "# Alpha\n\nI am Alpha, the operations soul. I keep deploys honest."
    (soupd.home.soul_dir("alpha") / "SOUL.md").write_text(identity, encoding="utf-8")
    soupd.push("alpha", "Deploy failed: database migration timeout", ref="d1")
    soupd.push("alpha", "Rolled back the database migration", ref="d2")
    soupd.push("alpha", "Team lunch on Friday")
    recalled_ids = [i["id"] for i in soupd.recall("alpha", "database migration", k=8)]
    assert len(recalled_ids) == 2

    ctx = soupd.result("context", {"soul": "alpha", "query": "database migration"})

    names = [s["name"] for s in ctx["sections"]]
    assert names[0] == "identity"
    assert names[-1] == "recalled"
    identity_section, recalled_section = ctx["sections"][0], ctx["sections"][-1]
    assert identity in identity_section["text"]
    assert recalled_section["memory_ids"] == recalled_ids
    for memory_id in recalled_ids:
        assert f"m{memory_id}" in recalled_section["text"]
    # Recall leaves the lunch out (it is in the summary: every event was news).
    assert "Team lunch" not in recalled_section["text"]
    assert ctx["text"] == "".join(s["text"] for s in ctx["sections"])
    assert all(s["chars"] == len(s["text"]) for s in ctx["sections"])
    assert ctx["text"].startswith(identity_section["text"])
    assert isinstance(ctx["hash"], str)
    assert ctx["hash"]

    # Same input, same bytes, same hash.
    assert soupd.result("context", {"soul": "alpha", "query": "database migration"}) == ctx

    # The first event made the soul reflect: its summary is a stable section too. The
    # latest events ("failed") touch a marked topic, so gut feelings show without a query,
    # and with no query the context brings memories back by rarity.
    bare = soupd.result("context", {"soul": "alpha"})
    names = ["identity", "summary", "gut_feelings", "recalled"]
    assert [s["name"] for s in bare["sections"]] == names
    assert [s["memory_ids"] for s in bare["sections"][:3]] == [[], [], []]
    assert set(bare["sections"][3]["memory_ids"]) <= {1, 2, 3}
    assert bare["sections"][3]["memory_ids"]
    assert "Deploy failed: database migration timeout [m1]" in bare["sections"][1]["text"]
    stable = "".join(s["text"] for s in bare["sections"][:2])
    assert ctx["text"].startswith(stable)
    assert bare["prefix_hash"] == ctx["prefix_hash"]
    assert bare["hash"] != ctx["hash"]
    # The next one keeps the prefix (what it recalls rotates: tests/souls/recall).
    assert soupd.result("context", {"soul": "alpha"})["prefix_hash"] == bare["prefix_hash"]


def test_a_soul_without_soul_md_or_memories_gives_only_the_builtin_identity(
    soupd: Daemon,
) -> None:
    ctx = soupd.result("context", {"soul": "beta", "query": "anything"})

    assert [s["name"] for s in ctx["sections"]] == ["identity"]
    assert ctx["text"] == ctx["sections"][0]["text"]
    assert ctx["text"].startswith("## IDENTITY\n")
    assert ctx["sections"][0]["memory_ids"] == []
    assert ctx["hash"]
    # Byte-stable: another soul without SOUL.md opens with the same bytes.
    other = soupd.result("context", {"soul": "alpha", "query": "anything"})
    assert other["sections"][0]["name"] == "identity"
    assert other["sections"][0]["text"] == ctx["text"]


def test_import_method_counts_every_outcome_and_names_each_rejection(soupd: Daemon) -> None:
    soupd.push("alpha", "pushed earlier", ref="imp-0")
    events = [
        {"text": "first imported note", "ref": "imp-1"},  # 0 stored
        {"text": "second imported note", "ref": "imp-2", "kind": "dm"},  # 1 stored
        {"text": "first imported note again", "ref": "imp-1"},  # 2 duplicate (same batch)
        {"text": "tick", "kind": "heartbeat"},  # 3 dropped
        {"text": 5},  # 4 wrong type
        {"text": ""},  # 5 hygiene.empty
        {"text": "has an unknown key", "colour": "red"},  # 6 unknown key
        {"text": "pushed earlier", "ref": "imp-0"},  # 7 duplicate (stored earlier)
        {"text": "ts is nonsense", "ts": "the day after tomorrow"},  # 8 bad ts
        "not an object",  # 9 not an event
        {"text": "line\nline\nline"},  # 10 hygiene.repeated_lines
        {"text": "third imported note", "ts": "2026-01-02T03:04:05Z"},  # 11 stored
    ]
    before = soupd.counts("alpha")

    result = soupd.result("event.import", {"soul": "alpha", "events": events})

    assert (result["stored"], result["dropped"], result["duplicate"], result["rejected"]) == (
        3,
        1,
        2,
        6,
    )
    reasons = [(r["index"], r["code"]) for r in result["reasons"]]
    assert reasons == [
        (4, "invalid_params"),
        (5, "hygiene.empty"),
        (6, "invalid_params"),
        (8, "invalid_params"),
        (9, "invalid_params"),
        (10, "hygiene.repeated_lines"),
    ]
    assert all(r["message"] for r in result["reasons"])
    assert "colour" in result["reasons"][2]["message"]
    assert result["reasons_truncated"] is False
    assert soupd.counts("alpha") == (before[0] + 3, before[1] + 3)
    refs = {i["refs"][0] for i in soupd.recall("alpha", "imported") if i["refs"]}
    # The note with a time and no ref got a key derived from what it is (a replay of
    # the same import stores it once).
    (derived,) = refs - {"imp-1", "imp-2"}
    assert refs - {derived} == {"imp-1", "imp-2"}
    assert derived.startswith("import:")


def test_import_with_many_rejections_keeps_counts_exact(soupd: Daemon) -> None:
    events: list[object] = [{"text": ""} for _ in range(150)]
    events += [{"text": 5} for _ in range(30)]
    events.append({"text": "the one good event"})

    result = soupd.result("event.import", {"soul": "alpha", "events": events})

    assert (result["stored"], result["rejected"]) == (1, 180)
    indexes = [r["index"] for r in result["reasons"]]
    assert indexes == sorted(set(indexes))
    assert all(0 <= i < 180 for i in indexes)
    # Either every rejection has its reason, or the list says it was cut.
    assert result["reasons_truncated"] is (len(indexes) < 180)
    assert soupd.counts("alpha") == (1, 1)


# One person's week with their assistant, as a chat bridge pushes it.
WEEK = [
    ("lin", "dm", "hey so um my cat is called Tuanzi and she's been throwing up since sunday"),
    ("ada", "assistant", "Oh no, poor Tuanzi. Has she been eating and drinking normally?"),
    ("lin", "dm", "drinking a LOT actually. the vet said maybe kidney stuff?? bloodwork friday"),
    ("lin", "dm", "I live in Shanghai, near the river. for now anyway lol"),
    ("lin", "dm", "I really like oolong tea, the roasted kind"),
    ("lin", "dm", "I promise I'll call grandma this weekend, she keeps asking"),
    ("lin", "dm", "ok so. big news. we moved to Hangzhou, the new flat is tiny but cute"),
    ("lin", "dm", "I work as a product designer at Lantern Labs"),
    ("lin", "dm", "I enjoy pottery on wednesdays, it's so messy haha"),
    ("lin", "dm", "I hate cilantro btw, never put it in a recipe for me"),
    ("lin", "dm", "also I love jazz, went to a tiny bar show yesterday"),
    ("lin", "dm", "my partner Sam is a nurse, works nights"),
    ("lin", "dm", "I enjoy hiking in the hills near the lake on weekends"),
    ("lin", "dm", "I dislike crowded trains, I take the bike when I can"),
    ("lin", "dm", "I adore dumplings from the place downstairs, the pork and chive ones"),
    ("lin", "dm", "today was long. Priya moved the deadline AGAIN"),
    ("lin", "dm", "I like reading sci-fi before bed"),
]


def test_contexts_rotate_and_the_mode_follows_the_whole_query(soupd: Daemon) -> None:
    for n, (sender, kind, text) in enumerate(WEEK):
        pushed = soupd.push("alpha", text, sender=sender, kind=kind, session=f"day-{n // 6}")
        assert pushed["status"] == "stored"

    shown = []
    for _ in range(5):
        context = soupd.result("context", {"soul": "alpha", "session": "evening"})
        recalled = [s for s in context["sections"] if s["name"] == "recalled"]
        shown.append(frozenset(recalled[0]["items"]) if recalled else frozenset())
    # Each context injects what has waited longest: five in a row are not one set.
    assert len(set(shown)) >= 3, [sorted(x) for x in shown]

    modes = {}
    for query in ("xylophone quantum zebra today", "Tuanzi vet kidney"):
        soupd.result("context", {"soul": "alpha", "query": query, "session": "evening"})
        modes[query] = soupd.result("why", {"soul": "alpha"})["mode"]
    # One memory says "today", none the other words: small talk, not a retrieval.
    assert modes == {"xylophone quantum zebra today": "emergence", "Tuanzi vet kidney": "retrieval"}
