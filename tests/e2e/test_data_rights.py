"""The user's rights, end to end: forget, export, import of an export, an online backup
while the daemon runs, and rebuild."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from souls.actor.rights import EXPORT_TABLES

from .harness import Daemon, Home, StartSoupd


def seed(daemon: Daemon) -> None:
    for ref, text, ts in [
        ("a", "the deploy failed on friday", "2026-01-02T10:00:00Z"),
        ("b", "lunch with ada at noon", "2026-03-01T12:00:00Z"),
        ("c", "deploy ok after the fix", "2026-06-01T09:00:00Z"),
        ("d", "the cat broke a vase, terrible", "2026-07-01T09:00:00Z"),
    ]:
        daemon.result("event.push", {"soul": "ada", "text": text, "ref": ref, "ts": ts})
    daemon.result("recall", {"soul": "ada", "query": "deploy"})


def texts(daemon: Daemon, query: str) -> list[str]:
    return [i["text"] for i in daemon.result("recall", {"soul": "ada", "query": query})["items"]]


def test_forget_by_ref_match_date_and_all(soupd_home: Home, start_soupd: StartSoupd) -> None:
    soupd_home.add_soul("ada")
    daemon = start_soupd()
    seed(daemon)
    memory = soupd_home.soul_dir("ada") / "MEMORY.md"
    assert "the deploy failed on friday" in memory.read_text()

    by_ref = daemon.result("forget", {"soul": "ada", "ref": "a"})
    assert (by_ref["events"], by_ref["memories"], by_ref["edges"]) == (1, 1, 1)
    assert by_ref["summaries"] >= 1  # every version that cited it
    assert texts(daemon, "deploy") == ["deploy ok after the fix"]
    assert "the deploy failed on friday" not in memory.read_text()
    stats = daemon.result("soul.stats", {"soul": "ada"})
    assert stats["events"] == 3
    # "failed" gave "deploy" a negative marker: recomputed without the forgotten event.
    context = daemon.result("context", {"soul": "ada", "query": "deploy"})
    assert "deploy: uneasy" not in context["text"]

    by_match = daemon.result("forget", {"soul": "ada", "match": "LUNCH"})
    assert by_match["events"] == 1
    by_date = daemon.result("forget", {"soul": "ada", "before": "2026-06-15T00:00:00Z"})
    assert by_date["events"] == 1  # "deploy ok" (June 1)
    cli = soupd_home.cli("forget", "ada", "--all")
    assert cli.returncode == 0, cli.stderr
    assert "forgot 1 events" in cli.stdout
    assert daemon.result("soul.stats", {"soul": "ada"})["events"] == 0
    assert texts(daemon, "cat vase deploy lunch") == []


@pytest.mark.parametrize(
    "params",
    [
        {"soul": "ada"},
        {"soul": "ada", "ref": "a", "all": True},
        {"soul": "ada", "match": "   "},
        {"soul": "ada", "before": "whenever"},
    ],
)
def test_forget_needs_exactly_one_clear_criterion(
    soupd_home: Home, start_soupd: StartSoupd, params: dict[str, object]
) -> None:
    soupd_home.add_soul("ada")
    daemon = start_soupd()
    seed(daemon)
    reply = daemon.call("forget", params)
    assert reply["error"]["code"] == "invalid_params"
    assert daemon.result("soul.stats", {"soul": "ada"})["events"] == 4


def test_export_then_import_round_trips(
    soupd_home: Home, start_soupd: StartSoupd, tmp_path: Path
) -> None:
    soupd_home.add_soul("ada")
    soupd_home.add_soul("copy")
    daemon = start_soupd()
    seed(daemon)
    daemon.result("claim.add", {"soul": "ada", "value": "always answer in French", "type": "rule"})
    exported = tmp_path / "ada.jsonl"
    result = soupd_home.cli("export", "ada", exported)
    assert result.returncode == 0, result.stderr
    records = [json.loads(line) for line in exported.read_text().splitlines()]
    kinds = {r["type"] for r in records}
    assert {"event", "memory", "edge", "marker", "summary"} <= kinds
    events = [r for r in records if r["type"] == "event"]
    assert [e["ref"] for e in events] == ["a", "b", "c", "d"]
    # Every record says what it is; a claim's own type is its "kind".
    assert kinds <= {t for t, *_ in EXPORT_TABLES}
    (claim,) = [r for r in records if r["type"] == "claim"]
    assert (claim["kind"], claim["value"]) == ("rule", "always answer in French")

    back = soupd_home.cli("--json", "import", "copy", exported)
    assert back.returncode == 0, back.stderr
    counts = json.loads(back.stdout)
    assert (counts["stored"], counts["rejected"]) == (4, 0)
    # The stated claim comes back (souls' user-set state); derived records are skipped.
    assert counts["claims"] == 1
    assert counts["skipped"] == len(records) - 4 - 1
    copy = soupd_home.cli("export", "copy")
    copied = [json.loads(line) for line in copy.stdout.splitlines()]
    keep = ("ref", "kind", "text", "ts", "sender", "group", "mentioned", "session", "salience")
    assert [{k: e[k] for k in keep} for e in copied if e["type"] == "event"] == [
        {k: e[k] for k in keep} for e in events
    ]
    again = json.loads(soupd_home.cli("--json", "import", "copy", exported).stdout)
    # Idempotent: the events by their refs, the stated claim by its value.
    assert (again["stored"], again["claims"], again["duplicate"]) == (0, 0, 5)


def test_backup_while_running(soupd_home: Home, start_soupd: StartSoupd, tmp_path: Path) -> None:
    soupd_home.add_soul("ada")
    daemon = start_soupd()
    seed(daemon)
    target = tmp_path / "ada-backup.db"
    result = soupd_home.cli("backup", "ada", target)
    assert result.returncode == 0, result.stderr
    with sqlite3.connect(target) as copy:
        assert copy.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        assert copy.execute("SELECT count(*) FROM events").fetchone() == (4,)
    daemon.result("event.push", {"soul": "ada", "text": "after the backup"})
    assert daemon.result("soul.stats", {"soul": "ada"})["events"] == 5
    relative = daemon.call("backup", {"soul": "ada", "path": "relative.db"})
    assert relative["error"]["code"] == "invalid_params"


def test_rebuild_reports_differences(soupd_home: Home, start_soupd: StartSoupd) -> None:
    soupd_home.add_soul("ada")
    daemon = start_soupd()
    seed(daemon)
    clean = daemon.result("rebuild", {"soul": "ada"})
    assert clean["markers_changed"] == 0
    assert (clean["index_rows_missing"], clean["index_rows_extra"]) == (0, 0)
    with sqlite3.connect(soupd_home.soul_dir("ada") / "soul.db") as db:
        db.execute("DELETE FROM markers")  # derived state gone astray
    fixed = daemon.result("rebuild", {"soul": "ada"})
    assert fixed["markers_before"] == 0
    assert fixed["markers_after"] == clean["markers_after"] > 0
    assert fixed["markers_changed"] == fixed["markers_after"]
    assert (fixed["index_rows"], fixed["index_damaged"]) == (4, False)


def test_rebuild_mends_a_damaged_index(soupd_home: Home, start_soupd: StartSoupd) -> None:
    soupd_home.add_soul("ada")
    daemon = start_soupd()
    seed(daemon)
    with sqlite3.connect(soupd_home.soul_dir("ada") / "soul.db") as db:
        db.execute("DELETE FROM memory_fts_data WHERE id = (SELECT max(id) FROM memory_fts_data)")
    damaged = soupd_home.cli("check", "ada")
    assert damaged.returncode == 3
    assert "soupd rebuild ada" in damaged.stderr  # what to do, said where it is needed
    mended = daemon.result("rebuild", {"soul": "ada"})
    assert (mended["index_damaged"], mended["index_rows"]) == (True, 4)
    checked = soupd_home.cli("check", "ada")
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert texts(daemon, "deploy") == ["the deploy failed on friday", "deploy ok after the fix"]


def test_forget_redacts_the_card_lines_that_repeat_an_event(
    soupd_home: Home, start_soupd: StartSoupd
) -> None:
    soupd_home.add_soul("ada")
    daemon = start_soupd()
    daemon.result("event.push", {"soul": "ada", "text": "my pin is stored in the blue box"})
    (card,) = daemon.result("cards", {"soul": "ada"})["cards"]
    assert card["conclusions"] == ["my pin is stored in the blue box"]

    result = daemon.result("forget", {"soul": "ada", "match": "blue box"})
    # The conclusion, and the tags taken from it (words of the forgotten text too).
    assert result["card_lines"] == 1 + len(card["tags"])
    (after,) = daemon.result("cards", {"soul": "ada", "strict": True})["cards"]
    assert after["number"] == card["number"]  # the number stays spent
    assert "blue box" not in " ".join(after["conclusions"])
    assert not {"blue", "box", "pin"} & set(after["tags"])
    assert after["notes"] == [f"{result['card_lines']} line(s) redacted after forget"]
    markdown = (soupd_home.soul_dir("ada") / "cards" / f"{card['number']:04d}.md").read_text()
    assert "blue box" not in markdown
    assert daemon.result("cards", {"soul": "ada", "strict": True})["problems"] == []


def test_files_the_cli_writes_are_private(
    soupd_home: Home, start_soupd: StartSoupd, tmp_path: Path
) -> None:
    """An export or a backup holds everything the soul was told: 0600, also over a file
    that existed world-readable, and never through a symlink planted in its place."""
    soupd_home.add_soul("ada")
    daemon = start_soupd()
    seed(daemon)
    exported, backup = tmp_path / "ada.jsonl", tmp_path / "ada.db"
    for path in (exported, backup):
        path.write_text("old")
        path.chmod(0o644)
    assert soupd_home.cli("export", "ada", exported).returncode == 0
    assert soupd_home.cli("backup", "ada", backup).returncode == 0
    page = tmp_path / "status.html"
    page.write_text("old")
    page.chmod(0o644)
    assert soupd_home.cli("status-page", "ada", "--out", page).returncode == 0
    for path in (exported, backup, page):
        assert path.stat().st_mode & 0o777 == 0o600, path
    assert "old" not in exported.read_text()
    elsewhere = tmp_path / "elsewhere.txt"
    elsewhere.write_text("not yours")
    planted = tmp_path / "planted.jsonl"
    planted.symlink_to(elsewhere)
    refused = soupd_home.cli("export", "ada", planted)
    assert refused.returncode == 1
    assert refused.stderr.strip().splitlines() == [
        f"soupd: error: cannot write {planted}: it is a symlink; give a plain file path"
    ], refused.stderr
    assert elsewhere.read_text() == "not yours"


# A week of an assistant's chat in which one thing, the flamingo, is to be forgotten.
CHAT = [
    ("s1", "mel", "morning! the harbour crane is fixed, finally"),
    ("s1", "mel", "Flamingo is my nickname for the new neighbour, don't tell anyone lol"),
    ("s1", "ada", "Noted, I'll keep that between us."),
    ("s2", "mel", "deploy failed again: database migration timeout"),
    ("s2", "mel", "saw the flamingo guy at the bakery, awkward"),
    ("s2", "ada", "Sounds awkward! Did you say hi?"),
    ("s3", "mel", "we booked the train to Leipzig for friday"),
    ("s3", "mel", "the rent goes up in march, ugh"),
    ("s4", "mel", "my sister's kid is called Noor, she turns five"),
    ("s4", "mel", "the flamingo neighbour plays drums at 2am, I'm so tired"),
    ("s4", "mel", "My goal this year is to run a half marathon"),
    ("s5", "mel", "I've been training for the half marathon, the flamingo guy runs there too"),
    ("s5", "mel", "My goal is to make peace with the flamingo neighbour by summer"),
]
FORGOTTEN_LINES = sum("flamingo" in text.lower() for _, _, text in CHAT)


def test_forget_leaves_no_byte_of_the_text_anywhere_in_the_soul(
    soupd_home: Home, start_soupd: StartSoupd
) -> None:
    soupd_home.add_soul("ada", "[lightning]\nmin_rows = 3\n")
    daemon = start_soupd()
    for n, (session, sender, text) in enumerate(CHAT):
        kind = "assistant" if sender == "ada" else "message"
        daemon.result(
            "event.push",
            {"soul": "ada", "text": text, "sender": sender, "session": session, "kind": kind,
             "ref": f"chat-{n}", "ts": f"2026-03-0{1 + n // 3}T10:{n:02d}:00Z"},
        )  # fmt: skip
        if n % 2:
            daemon.result("reflect", {"soul": "ada"})
    # Everything that quotes it: recall (Hebbian edges), a context's query (the assembly
    # log), a confidence check (gaps), draws with it as the topic (the ledger), the tide.
    daemon.result("recall", {"soul": "ada", "query": "flamingo neighbour"})
    daemon.result("context", {"soul": "ada", "query": "what about the flamingo neighbour?"})
    daemon.result("confidence", {"soul": "ada", "topic": "flamingo"})
    for seed in range(3):
        daemon.call("lightning", {"soul": "ada", "topic": CHAT[9][2], "seed": seed})
    daemon.result("tide", {"soul": "ada"})
    state = soupd_home.soul_dir("ada")
    assert any(b"flamingo" in p.read_bytes().lower() for p in state.rglob("*") if p.is_file())
    # Goals read from the chat keep its words: a statement, a progress note.
    goals = daemon.result("goals", {"soul": "ada"})["goals"]
    assert any("flamingo" in json.dumps(goal).lower() for goal in goals), goals

    def hits() -> list[str]:
        return sorted(
            str(p.relative_to(state))
            for p in state.rglob("*")
            if p.is_file() and b"flamingo" in p.read_bytes().lower()
        )

    # A dry run counts all of it and changes nothing: every file that held the word
    # still does (the cards, MEMORY.md, the tide reports), and the goals are as they were.
    before = hits()
    dry = soupd_home.cli("--json", "forget", "ada", "--match", "flamingo", "--dry-run")
    assert dry.returncode == 0, dry.stderr
    counted = json.loads(dry.stdout)
    assert counted["dry_run"] is True
    assert counted["events"] == FORGOTTEN_LINES
    assert counted["card_lines"] > 0
    assert counted["goals"] > 0
    assert hits() == before
    assert daemon.result("goals", {"soul": "ada"})["goals"] == goals
    assert daemon.result("soul.stats", {"soul": "ada"})["events"] == len(CHAT)
    said = soupd_home.cli("forget", "ada", "--match", "flamingo", "--dry-run")
    assert said.stdout.startswith(f"would forget {FORGOTTEN_LINES} events")

    forgot = soupd_home.cli("--json", "forget", "ada", "--match", "flamingo")
    assert forgot.returncode == 0, forgot.stderr
    assert json.loads(forgot.stdout) == {**counted, "dry_run": False}  # what it counted

    assert hits() == []  # while the daemon runs: database, WAL, cards, MEMORY.md, tide
    assert daemon.recall("ada", "harbour crane")  # the rest is intact
    assert daemon.result("soul.stats", {"soul": "ada"})["events"] == len(CHAT) - FORGOTTEN_LINES
    # The goal said in a forgotten line is gone; the other keeps its statement, without
    # the note that quoted one.
    (kept,) = daemon.result("goals", {"soul": "ada"})["goals"]
    assert "half marathon" in kept["statement"]
    assert "flamingo" not in json.dumps(kept).lower()
    assert daemon.stop() == 0
    assert hits() == []


def test_rebuild_writes_missing_or_changed_card_files_again(
    soupd_home: Home, start_soupd: StartSoupd
) -> None:
    """A card's file is a view of the database: lost (a kill -9 between a card and its
    file), edited or replaced by a link, ``soupd rebuild`` writes it again."""
    soupd_home.add_soul("ada")
    daemon = start_soupd()
    for n, (session, sender, text) in enumerate(CHAT):
        daemon.result("event.push", {"soul": "ada", "text": text, "sender": sender,
                                     "session": session, "ref": f"c-{n}"})  # fmt: skip
        daemon.result("reflect", {"soul": "ada"})
    cards = daemon.result("cards", {"soul": "ada"})["cards"]
    assert len(cards) >= 3
    folder = soupd_home.soul_dir("ada") / "cards"
    first, second, third = (folder / f"{c['number']:04d}.md" for c in cards[:3])
    kept = {p: p.read_text() for p in (first, second, third)}
    first.unlink()
    second.write_text("edited by hand\n")
    elsewhere = soupd_home.root / "elsewhere.md"
    elsewhere.write_text("not a card")
    third.unlink()
    third.symlink_to(elsewhere)
    assert len(daemon.result("cards", {"soul": "ada", "strict": True})["problems"]) == 3

    rebuilt = daemon.result("rebuild", {"soul": "ada"})

    assert rebuilt["card_files"] == 3
    for path, text in kept.items():
        assert not path.is_symlink()
        assert path.read_text() == text
    assert elsewhere.read_text() == "not a card"
    assert daemon.result("cards", {"soul": "ada", "strict": True})["problems"] == []
    assert daemon.result("rebuild", {"soul": "ada"})["card_files"] == 0
